import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm as run, gitInit, tempHome, type RunOptions } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

/** The user's own client locations must not leak in: CODEX_HOME and XDG_CONFIG_HOME are unset. */
const cm = (args: string[], options: RunOptions) => run(args, { ...options, env: { CODEX_HOME: undefined, XDG_CONFIG_HOME: undefined, ...options.env } });

const pythonToml = spawnSync("python3", ["-c", "import tomllib"]).status === 0;

function makeRepo(): string {
  const repo = join(home, "work", "proj");
  mkdirSync(repo, { recursive: true });
  gitInit(repo);
  return repo;
}

describe("cm setup", () => {
  it("codex --dry-run prints a valid config.toml table on stdout and writes nothing", () => {
    const r = cm(["setup", "codex", "--dry-run"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('[mcp_servers.cass-memory]\ncommand = "cm-mcp"\nargs = []\n');
    expect(r.stderr).toContain("would create ~/.codex/config.toml");
    expect(existsSync(join(home, ".codex"))).toBe(false);
    if (pythonToml) {
      const parsed = spawnSync("python3", ["-c", "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))"], { input: r.stdout, encoding: "utf8" });
      expect(parsed.status).toBe(0);
      expect(JSON.parse(parsed.stdout)).toEqual({ mcp_servers: { "cass-memory": { command: "cm-mcp", args: [] } } });
    }
  });

  it("every JSON client's --dry-run prints a valid config with the server entry", () => {
    const repo = makeRepo();
    const cases: Array<[string, string, object]> = [
      ["claude-code", "mcpServers", { type: "stdio", command: "cm-mcp", args: [] }],
      ["cursor", "mcpServers", { command: "cm-mcp", args: [] }],
      ["vscode", "servers", { type: "stdio", command: "cm-mcp", args: [] }],
      ["gemini", "mcpServers", { command: "cm-mcp", args: [] }],
      ["windsurf", "mcpServers", { command: "cm-mcp", args: [] }],
    ];
    for (const [client, key, entry] of cases) {
      const r = cm(["setup", client, "--dry-run"], { home, cwd: repo });
      expect(r.code, `${client}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout), client).toEqual({ [key]: { "cass-memory": entry } });
    }
    for (const written of [".claude.json", ".cursor", ".config", ".gemini", ".codeium"]) expect(existsSync(join(home, written)), written).toBe(false);
    expect(readdirSync(repo)).toEqual([".git"]);
  });

  it("--dry-run --json returns the plan with the content", () => {
    const r = cm(["setup", "gemini", "--dry-run", "--json", "--http", "http://127.0.0.1:8765/mcp"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.success).toBe(true);
    expect(env.command).toBe("setup");
    expect(env.data).toMatchObject({ client: "gemini", scope: "user", path: join(home, ".gemini", "settings.json"), action: "created", dryRun: true, config: { httpUrl: "http://127.0.0.1:8765/mcp" } });
    expect(JSON.parse(env.data.content)).toEqual({ mcpServers: { "cass-memory": { httpUrl: "http://127.0.0.1:8765/mcp" } } });
    expect(existsSync(join(home, ".gemini"))).toBe(false);
  });

  it("claude-code writes ~/.claude.json, keeps every other key, backs it up, and is idempotent", () => {
    const original = { numStartups: 12, userID: "abc", projects: { "/x": { allowedTools: [], mcpServers: {} } }, mcpServers: { github: { type: "http", url: "https://api.example/mcp" } } };
    const text = `${JSON.stringify(original, null, 2)}\n`;
    writeFileSync(join(home, ".claude.json"), text);
    const r = cm(["setup", "claude-code", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data).toMatchObject({ client: "claude-code", scope: "user", path: join(home, ".claude.json"), action: "updated", dryRun: false, config: { type: "stdio", command: "cm-mcp", args: [] } });
    expect(readFileSync(data.backup, "utf8")).toBe(text);
    const after = JSON.parse(readFileSync(join(home, ".claude.json"), "utf8"));
    expect(after).toEqual({ ...original, mcpServers: { ...original.mcpServers, "cass-memory": { type: "stdio", command: "cm-mcp", args: [] } } });

    const again = cm(["setup", "claude-code"], { home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("nothing changed");
    expect(readdirSync(home).filter((f) => f.startsWith(".claude.json.backup."))).toHaveLength(1);
  });

  it("--command and --scope project write the repository's file", () => {
    const repo = makeRepo();
    const r = cm(["setup", "cursor", "--scope", "project", "--command", "/opt/cm/bin/cm-mcp"], { home, cwd: repo });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("created ~/work/proj/.cursor/mcp.json (project scope)");
    expect(JSON.parse(readFileSync(join(repo, ".cursor", "mcp.json"), "utf8"))).toEqual({ mcpServers: { "cass-memory": { command: "/opt/cm/bin/cm-mcp", args: [] } } });
  });

  it("--agents-md adds the pointer block to AGENTS.md at the repository root, once", () => {
    const repo = makeRepo();
    writeFileSync(join(repo, "AGENTS.md"), "# Agents\n\nRun the tests.\n");
    mkdirSync(join(repo, "src"));
    const r = cm(["setup", "codex", "--agents-md", "--json"], { home, cwd: join(repo, "src") });
    expect(r.code).toBe(0);
    expect(r.json().data.agentsMd).toEqual({ path: join(repo, "AGENTS.md"), action: "updated" });
    const text = readFileSync(join(repo, "AGENTS.md"), "utf8");
    expect(text.startsWith("# Agents\n\nRun the tests.\n\n<!-- cass-memory:begin")).toBe(true);
    expect(text).toContain('cm context "<task>" --json');
    expect(text.trimEnd().endsWith("<!-- cass-memory:end -->")).toBe(true);
    const again = cm(["setup", "codex", "--agents-md", "--json"], { home, cwd: repo });
    expect(again.json().data.agentsMd.action).toBe("unchanged");
    expect(readFileSync(join(repo, "AGENTS.md"), "utf8")).toBe(text);
  });

  it("--agents-md outside a repository is CONFIG_INVALID (exit 3) and writes nothing", () => {
    const r = cm(["setup", "cursor", "--agents-md", "--json"], { home });
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe("CONFIG_INVALID");
    expect(existsSync(join(home, ".cursor"))).toBe(false);
  });

  it("an unknown client exits 2 with INVALID_INPUT listing the valid clients", () => {
    const r = cm(["setup", "emacs", "--json"], { home });
    expect(r.code).toBe(2);
    const error = r.json().error;
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.details.allowed).toEqual(["claude-code", "codex", "cursor", "vscode", "gemini", "windsurf"]);
    const human = cm(["setup", "emacs"], { home });
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("Valid clients: claude-code, codex, cursor, vscode, gemini, windsurf");
  });

  it("a config file that is not valid JSON is refused with CONFIG_INVALID (exit 3) and left alone", () => {
    mkdirSync(join(home, ".cursor"));
    writeFileSync(join(home, ".cursor", "mcp.json"), "{ not json");
    const r = cm(["setup", "cursor", "--json"], { home });
    expect(r.code).toBe(3);
    const error = r.json().error;
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(join(home, ".cursor", "mcp.json"));
    expect(readFileSync(join(home, ".cursor", "mcp.json"), "utf8")).toBe("{ not json");
  });

  it("bad flags are INVALID_INPUT (exit 2)", () => {
    for (const args of [["--scope", "project"], ["--http", "ftp://x"], ["--http", "http://h", "--command", "x"]]) {
      const r = cm(["setup", "windsurf", ...args, "--json"], { home });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json().error.code).toBe("INVALID_INPUT");
    }
  });

  it("help lists the files and examples", () => {
    const r = cm(["setup", "--help"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Examples:");
    expect(r.stdout).toContain("~/.codex/config.toml, [mcp_servers.cass-memory]");
    expect(r.stdout).toContain("-j, --json");
    expect(cm(["--help"], { home }).stdout).toContain("setup <client>");
  });
});
