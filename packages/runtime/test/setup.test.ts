import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, lstatSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "@cass-memory/core";
import { agentsMdBlock, planAgentsMd } from "../src/setup/agents-md.js";
import { clientConfigPath, clientSpec, resolveTransport, SETUP_CLIENTS, type SetupClient } from "../src/setup/clients.js";
import { planJsonConfig, scanJson } from "../src/setup/json-config.js";
import { setupClient, type SetupOptions } from "../src/setup/setup.js";
import { planTomlConfig, scanToml, tomlString } from "../src/setup/toml-config.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let home: string;
let repo: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir("cm-setup-");
  root = t.path;
  cleanup = t.cleanup;
  home = join(root, "home");
  repo = join(root, "repo");
  mkdirSync(home, { recursive: true });
  mkdirSync(join(repo, ".git"), { recursive: true });
});
afterEach(() => cleanup());

const NOW = 1_700_000_000_000;

function run(options: Partial<SetupOptions> & { client: string }) {
  return setupClient({ env: { HOME: home }, cwd: repo, platform: "linux", now: () => NOW, ...options });
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return error as AppError;
  }
  throw new Error("expected a rejection");
}

function backupsOf(path: string): string[] {
  if (!existsSync(dirname(path))) return [];
  return readdirSync(dirname(path)).filter((f) => f.startsWith(`${basename(path)}.backup.`));
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

const pythonToml = spawnSync("python3", ["-c", "import tomllib"]).status === 0;
/** Parses TOML with Python's tomllib (an independent parser) and returns it as JSON. */
function parseToml(text: string): any {
  const r = spawnSync("python3", ["-c", "import json,sys,tomllib; print(json.dumps(tomllib.loads(sys.stdin.read())))"], { input: text, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`invalid TOML: ${r.stderr}\n${text}`);
  return JSON.parse(r.stdout);
}

/** Where each client's default-scope file lands in the temp home/repo, and its server map key. */
const DEFAULTS: Record<SetupClient, { path: () => string; key: string; stdio: object; http: object }> = {
  "claude-code": { path: () => join(home, ".claude.json"), key: "mcpServers", stdio: { type: "stdio", command: "cm-mcp", args: [] }, http: { type: "http", url: "http://127.0.0.1:8765/mcp" } },
  codex: { path: () => join(home, ".codex", "config.toml"), key: "mcp_servers", stdio: { command: "cm-mcp", args: [] }, http: { url: "http://127.0.0.1:8765/mcp" } },
  cursor: { path: () => join(home, ".cursor", "mcp.json"), key: "mcpServers", stdio: { command: "cm-mcp", args: [] }, http: { url: "http://127.0.0.1:8765/mcp" } },
  vscode: { path: () => join(repo, ".vscode", "mcp.json"), key: "servers", stdio: { type: "stdio", command: "cm-mcp", args: [] }, http: { type: "http", url: "http://127.0.0.1:8765/mcp" } },
  gemini: { path: () => join(home, ".gemini", "settings.json"), key: "mcpServers", stdio: { command: "cm-mcp", args: [] }, http: { httpUrl: "http://127.0.0.1:8765/mcp" } },
  windsurf: { path: () => join(home, ".codeium", "windsurf", "mcp_config.json"), key: "mcpServers", stdio: { command: "cm-mcp", args: [] }, http: { serverUrl: "http://127.0.0.1:8765/mcp" } },
};

const JSON_CLIENTS = SETUP_CLIENTS.filter((c) => c !== "codex");

describe.each(JSON_CLIENTS)("setup %s (JSON)", (client) => {
  const d = DEFAULTS[client];

  it("creates the file with the server entry at the client's location", async () => {
    const r = await run({ client });
    expect(r.path).toBe(d.path());
    expect(r.action).toBe("created");
    expect(r.backup).toBeUndefined();
    expect(r.config).toEqual(d.stdio);
    expect(readJson(d.path())).toEqual({ [d.key]: { "cass-memory": d.stdio } });
    expect(readFileSync(d.path(), "utf8").endsWith("}\n")).toBe(true);
    expect(statSync(d.path()).mode & 0o777).toBe(r.scope === "user" ? 0o600 : 0o644);
  });

  it("merges with other servers and keys, backs up the old file, keeps its mode and indentation", async () => {
    const original: Record<string, any> = {
      theme: "dark",
      nested: { keep: [1, 2, { deep: true }] },
      [d.key]: {
        other: { command: "other-server", args: ["--x"], env: { TOKEN: "t" } },
        "cass-memory": { command: "old-cm-mcp", args: ["--old"], disabled: false, autoApprove: ["cm_context"] },
      },
      zlast: null,
    };
    const text = JSON.stringify(original, null, 4) + "\n";
    writeFile(d.path(), text);
    chmodSync(d.path(), 0o640);
    const r = await run({ client });
    expect(r.action).toBe("updated");
    expect(r.backup).toBe(`${d.path()}.backup.${NOW}`);
    expect(readFileSync(r.backup!, "utf8")).toBe(text);
    expect(statSync(r.backup!).mode & 0o777).toBe(0o640);
    expect(statSync(d.path()).mode & 0o777).toBe(0o640);
    const after = readJson(d.path());
    expect(after.theme).toBe("dark");
    expect(after.nested).toEqual(original.nested);
    expect(after.zlast).toBeNull();
    expect(Object.keys(after)).toEqual(["theme", "nested", d.key, "zlast"]);
    expect(after[d.key].other).toEqual(original[d.key].other);
    expect(after[d.key]["cass-memory"]).toEqual({ ...d.stdio, disabled: false, autoApprove: ["cm_context"] });
    expect(readFileSync(d.path(), "utf8")).toContain('\n    "theme": "dark"');
  });

  it("is idempotent: a second run changes nothing and makes no backup", async () => {
    writeFile(d.path(), JSON.stringify({ [d.key]: { other: { command: "x" } } }, null, 2));
    const first = await run({ client });
    expect(first.action).toBe("updated");
    const bytes = readFileSync(d.path(), "utf8");
    const second = await run({ client, now: () => NOW + 5 });
    expect(second.action).toBe("unchanged");
    expect(second.backup).toBeUndefined();
    expect(readFileSync(d.path(), "utf8")).toBe(bytes);
    expect(backupsOf(d.path())).toHaveLength(1);
  });

  it("configures the HTTP transport in the client's schema", async () => {
    const r = await run({ client, http: "http://127.0.0.1:8765/mcp" });
    expect(r.transport).toBe("http");
    expect(readJson(d.path())[d.key]["cass-memory"]).toEqual(d.http);
  });

  it("refuses a file that is not valid JSON and leaves it alone", async () => {
    writeFile(d.path(), '{"mcpServers": {"x": ');
    const error = await rejection(run({ client }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(d.path());
    expect(error.hint).toContain('"cass-memory"');
    expect(readFileSync(d.path(), "utf8")).toBe('{"mcpServers": {"x": ');
    expect(backupsOf(d.path())).toEqual([]);
  });

  it("writes nothing on a dry run and returns the content", async () => {
    const r = await run({ client, dryRun: true });
    expect(r.dryRun).toBe(true);
    expect(r.action).toBe("created");
    expect(JSON.parse(r.content!)).toEqual({ [d.key]: { "cass-memory": d.stdio } });
    expect(existsSync(d.path())).toBe(false);
  });
});

describe("JSON configuration edge cases", () => {
  it("refuses JSON with comments (VS Code's JSONC) instead of dropping them", async () => {
    const path = join(repo, ".vscode", "mcp.json");
    const text = '{\n  // my servers\n  "servers": {\n    "x": { "type": "stdio", "command": "x" },\n  }\n}\n';
    writeFile(path, text);
    const error = await rejection(run({ client: "vscode" }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("comments and trailing commas");
    expect(error.hint).toContain('"servers":{"cass-memory":{"type":"stdio","command":"cm-mcp","args":[]}}');
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("refuses a file whose integers would not survive a rewrite", async () => {
    writeFile(join(home, ".claude.json"), '{"userId": 12345678901234567890}');
    const error = await rejection(run({ client: "claude-code" }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("12345678901234567890");
  });

  it("refuses a server map or entry that is not an object", async () => {
    writeFile(join(home, ".cursor", "mcp.json"), '{"mcpServers": []}');
    expect((await rejection(run({ client: "cursor" }))).code).toBe("CONFIG_INVALID");
    writeFile(join(home, ".cursor", "mcp.json"), '{"mcpServers": {"cass-memory": "cm-mcp"}}');
    expect((await rejection(run({ client: "cursor" }))).code).toBe("CONFIG_INVALID");
    writeFile(join(home, ".cursor", "mcp.json"), "[]");
    expect((await rejection(run({ client: "cursor" }))).code).toBe("CONFIG_INVALID");
  });

  it("treats an empty file as an empty object (and backs it up)", async () => {
    writeFile(join(home, ".gemini", "settings.json"), "");
    const r = await run({ client: "gemini" });
    expect(r.action).toBe("updated");
    expect(r.backup).toBeDefined();
    expect(readJson(r.path)).toEqual({ mcpServers: { "cass-memory": { command: "cm-mcp", args: [] } } });
  });

  it("keeps CRLF line endings, a tab indent and a missing final newline", () => {
    const spec = clientSpec("cursor");
    const text = '{\r\n\t"mcpServers": {}\r\n}';
    const plan = planJsonConfig(spec, { kind: "stdio", command: "cm-mcp", args: [] }, text, "/x/mcp.json");
    expect(plan.content).toBe('{\r\n\t"mcpServers": {\r\n\t\t"cass-memory": {\r\n\t\t\t"command": "cm-mcp",\r\n\t\t\t"args": []\r\n\t\t}\r\n\t}\r\n}');
  });

  it("counts an entry with the same keys in another order as unchanged", () => {
    const spec = clientSpec("claude-code");
    const text = '{"mcpServers": {"cass-memory": {"args": [], "command": "cm-mcp", "type": "stdio", "timeout": 5}}}';
    const plan = planJsonConfig(spec, { kind: "stdio", command: "cm-mcp", args: [] }, text, "/x");
    expect(plan.action).toBe("unchanged");
    expect(plan.content).toBe(text);
  });

  it("drops the other transport's keys when switching stdio → HTTP, keeps unknown ones", async () => {
    writeFile(join(home, ".claude.json"), JSON.stringify({ mcpServers: { "cass-memory": { type: "stdio", command: "cm-mcp", args: [], env: { A: "1" }, alwaysAllow: ["x"] } } }));
    await run({ client: "claude-code", http: "https://mem.example/mcp" });
    expect(readJson(join(home, ".claude.json")).mcpServers["cass-memory"]).toEqual({ type: "http", url: "https://mem.example/mcp", alwaysAllow: ["x"] });
    await run({ client: "claude-code" });
    expect(readJson(join(home, ".claude.json")).mcpServers["cass-memory"]).toEqual({ type: "stdio", command: "cm-mcp", args: [], alwaysAllow: ["x"] });
  });

  it("writes through a symlinked config file, keeping the link", async () => {
    const real = join(root, "dotfiles", "claude.json");
    writeFile(real, '{"a": 1}');
    symlinkSync(real, join(home, ".claude.json"));
    const r = await run({ client: "claude-code" });
    expect(lstatSync(join(home, ".claude.json")).isSymbolicLink()).toBe(true);
    expect(readJson(real)).toEqual({ a: 1, mcpServers: { "cass-memory": { type: "stdio", command: "cm-mcp", args: [] } } });
    expect(r.backup).toBe(`${real}.backup.${NOW}`);
  });

  it("scanJson strips comments and trailing commas but not look-alikes inside strings", () => {
    const scan = scanJson('{"u": "http://x/*y*/", // c\n "a": [1, 2,], /* b */ "n": -3.5e2,}');
    expect(scan.comments).toBe(2);
    expect(scan.trailingCommas).toBe(2);
    expect(JSON.parse(scan.stripped)).toEqual({ u: "http://x/*y*/", a: [1, 2], n: -350 });
    expect(scanJson('{"a": "unterminated}').unterminated).toBe("string");
  });
});

describe("setup codex (TOML)", () => {
  const path = () => join(home, ".codex", "config.toml");

  it("creates config.toml with the [mcp_servers.cass-memory] table", async () => {
    const r = await run({ client: "codex" });
    expect(r.action).toBe("created");
    expect(readFileSync(path(), "utf8")).toBe('[mcp_servers.cass-memory]\ncommand = "cm-mcp"\nargs = []\n');
    expect(statSync(path()).mode & 0o777).toBe(0o600);
  });

  it("honours CODEX_HOME", async () => {
    const r = await run({ client: "codex", env: { HOME: home, CODEX_HOME: join(root, "codex-home") } });
    expect(r.path).toBe(join(root, "codex-home", "config.toml"));
    expect(existsSync(r.path)).toBe(true);
  });

  it("appends to a file with other tables and comments, keeping every byte of it", async () => {
    const text = [
      "# Codex settings",
      'model = "gpt-5"  # default model',
      "",
      "[mcp_servers.context7]",
      'command = "npx"',
      'args = ["-y", "@upstash/context7-mcp"]',
      "",
      "[profiles.fast]",
      'model = "o4-mini"',
    ].join("\n");
    writeFile(path(), text);
    const r = await run({ client: "codex" });
    expect(r.action).toBe("updated");
    const after = readFileSync(path(), "utf8");
    expect(after).toBe(`${text}\n\n[mcp_servers.cass-memory]\ncommand = "cm-mcp"\nargs = []\n`);
    expect(readFileSync(r.backup!, "utf8")).toBe(text);
    if (pythonToml) {
      const parsed = parseToml(after);
      expect(parsed.mcp_servers["cass-memory"]).toEqual({ command: "cm-mcp", args: [] });
      expect(parsed.mcp_servers.context7.args).toEqual(["-y", "@upstash/context7-mcp"]);
      expect(parsed.profiles.fast.model).toBe("o4-mini");
    }
  });

  it("replaces a previous cass-memory table in place, keeping its unknown keys and the next table's comment", async () => {
    const text = [
      "[mcp_servers.before]",
      'command = "b"',
      "",
      "[mcp_servers.cass-memory] # cm",
      'command = "/old/cm-mcp"',
      "args = [",
      '  "--legacy",   # multi-line array with a [bracket] comment',
      '  "[not a header]",',
      "]",
      "startup_timeout_sec = 20",
      'url = "http://old"',
      "",
      "# the next server",
      "[mcp_servers.after]",
      'command = "a"',
      "",
    ].join("\n");
    writeFile(path(), text);
    await run({ client: "codex", command: "/opt/cm/bin/cm-mcp" });
    const after = readFileSync(path(), "utf8");
    expect(after).toBe(
      [
        "[mcp_servers.before]",
        'command = "b"',
        "",
        "[mcp_servers.cass-memory] # cm",
        'command = "/opt/cm/bin/cm-mcp"',
        "args = []",
        "startup_timeout_sec = 20",
        "",
        "# the next server",
        "[mcp_servers.after]",
        'command = "a"',
        "",
      ].join("\n"),
    );
    const second = await run({ client: "codex", command: "/opt/cm/bin/cm-mcp" });
    expect(second.action).toBe("unchanged");
    expect(readFileSync(path(), "utf8")).toBe(after);
    expect(backupsOf(path())).toHaveLength(1);
    if (pythonToml) expect(parseToml(after).mcp_servers["cass-memory"]).toEqual({ command: "/opt/cm/bin/cm-mcp", args: [], startup_timeout_sec: 20 });
  });

  it("recognises a quoted table name and keeps an env sub-table for stdio but drops it for HTTP", async () => {
    const text = ['[mcp_servers."cass-memory"]', 'command = "cm-mcp"', "", "[mcp_servers.cass-memory.env]", 'CASS_MEMORY_HOME = "/data/mem"', "", "[other]", "x = 1", ""].join("\n");
    writeFile(path(), text);
    const stdio = await run({ client: "codex" });
    const afterStdio = readFileSync(path(), "utf8");
    expect(stdio.action).toBe("updated");
    expect(afterStdio).toBe(text.replace('command = "cm-mcp"\n', 'command = "cm-mcp"\nargs = []\n'));
    await run({ client: "codex", http: "http://127.0.0.1:8765/mcp" });
    const afterHttp = readFileSync(path(), "utf8");
    expect(afterHttp).toBe(['[mcp_servers."cass-memory"]', 'url = "http://127.0.0.1:8765/mcp"', "", "", "[other]", "x = 1", ""].join("\n"));
    if (pythonToml) {
      expect(parseToml(afterStdio).mcp_servers["cass-memory"].env).toEqual({ CASS_MEMORY_HOME: "/data/mem" });
      expect(parseToml(afterHttp)).toEqual({ mcp_servers: { "cass-memory": { url: "http://127.0.0.1:8765/mcp" } }, other: { x: 1 } });
    }
  });

  it("is not fooled by headers inside multi-line strings and keeps CRLF and a missing final newline", () => {
    const spec = clientSpec("codex");
    const text = 'notes = """\r\n[mcp_servers.cass-memory]\r\ncommand = "fake"\r\n"""\r\n[x]\r\ny = \'\'\'\r\n[z]\'\'\'';
    const plan = planTomlConfig(spec, { kind: "stdio", command: "cm-mcp", args: [] }, text, "/c.toml");
    expect(plan.content).toBe(`${text}\r\n\r\n[mcp_servers.cass-memory]\r\ncommand = "cm-mcp"\r\nargs = []\r\n`);
    if (pythonToml) expect(parseToml(plan.content).mcp_servers["cass-memory"].command).toBe("cm-mcp");
    const again = planTomlConfig(spec, { kind: "stdio", command: "cm-mcp", args: [] }, plan.content, "/c.toml");
    expect(again.action).toBe("unchanged");
  });

  it("quotes strings properly", async () => {
    expect(tomlString('C:\\Tools\\cm "mcp"\n\u0001é')).toBe('"C:\\\\Tools\\\\cm \\"mcp\\"\\n\\u0001é"');
    const r = await run({ client: "codex", command: '/opt/my "odd" dir\\/cm-mcp' });
    const text = readFileSync(r.path, "utf8");
    expect(text).toContain('command = "/opt/my \\"odd\\" dir\\\\/cm-mcp"');
    if (pythonToml) expect(parseToml(text).mcp_servers["cass-memory"].command).toBe('/opt/my "odd" dir\\/cm-mcp');
  });

  it("refuses cass-memory defined inline or with dotted keys, and mcp_servers as an inline table", async () => {
    for (const text of [
      '[mcp_servers]\ncass-memory = { command = "x" }\n',
      '[mcp_servers]\n"cass-memory".command = "x"\n',
      'mcp_servers.cass-memory.command = "x"\n',
      'mcp_servers = { other = { command = "x" } }\n',
      '[mcp_servers.cass-memory]\ncommand = "a"\n[mcp_servers.cass-memory]\ncommand = "b"\n',
    ]) {
      writeFile(path(), text);
      const error = await rejection(run({ client: "codex" }));
      expect(error.code, text).toBe("CONFIG_INVALID");
      expect(readFileSync(path(), "utf8")).toBe(text);
    }
    expect(backupsOf(path())).toEqual([]);
  });

  it("refuses a file it cannot lex, naming the line", async () => {
    const text = '[ok]\na = 1\nb = "unterminated\n';
    writeFile(path(), text);
    const error = await rejection(run({ client: "codex" }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain("line 3");
    expect(error.hint).toContain("[mcp_servers.cass-memory]");
    expect(readFileSync(path(), "utf8")).toBe(text);
  });

  it("dry run prints a valid table and writes nothing", async () => {
    const r = await run({ client: "codex", dryRun: true, http: "http://127.0.0.1:8765/mcp" });
    expect(r.content).toBe('[mcp_servers.cass-memory]\nurl = "http://127.0.0.1:8765/mcp"\n');
    expect(existsSync(path())).toBe(false);
    expect(existsSync(dirname(path()))).toBe(false);
  });

  it("scanToml splits statements and key paths", () => {
    const text = "a.b = 1\n[ t . 'q.k' ]\n# c\n\nx = [\n 1,\n]\n[[arr]]\n";
    const st = scanToml(text);
    expect(st.map((s) => [s.kind, s.path, s.line])).toEqual([
      ["keyvalue", ["a", "b"], 1],
      ["header", ["t", "q.k"], 2],
      ["comment", [], 3],
      ["blank", [], 4],
      ["keyvalue", ["x"], 5],
      ["header", ["arr"], 8],
    ]);
    expect(st[5]!.arrayTable).toBe(true);
    expect(st.map((s) => text.slice(s.start, s.end)).join("")).toBe(text);
  });
});

describe("scopes, paths and transports", () => {
  it("uses the project files for --scope project", async () => {
    const expected: Partial<Record<SetupClient, string>> = {
      "claude-code": join(repo, ".mcp.json"),
      codex: join(repo, ".codex", "config.toml"),
      cursor: join(repo, ".cursor", "mcp.json"),
      vscode: join(repo, ".vscode", "mcp.json"),
      gemini: join(repo, ".gemini", "settings.json"),
    };
    mkdirSync(join(repo, "sub", "dir"), { recursive: true });
    for (const [client, path] of Object.entries(expected)) {
      const r = await run({ client, scope: "project", cwd: join(repo, "sub", "dir") });
      expect(r.path).toBe(path);
      expect(existsSync(path!)).toBe(true);
      expect(statSync(path!).mode & 0o777).toBe(0o644);
    }
    expect(readJson(join(repo, ".mcp.json"))).toEqual({ mcpServers: { "cass-memory": { type: "stdio", command: "cm-mcp", args: [] } } });
  });

  it("project scope outside a git repository is refused", async () => {
    const error = await rejection(run({ client: "cursor", scope: "project", cwd: home }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.hint).toContain("--scope user");
  });

  it("windsurf has no project scope; bad scopes are refused", async () => {
    expect((await rejection(run({ client: "windsurf", scope: "project" }))).code).toBe("INVALID_INPUT");
    expect((await rejection(run({ client: "cursor", scope: "global" }))).code).toBe("INVALID_INPUT");
  });

  it("an unknown client is INVALID_INPUT listing the valid ones", async () => {
    const error = await rejection(run({ client: "emacs" }));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.message).toContain("claude-code, codex, cursor, vscode, gemini, windsurf");
    expect(error.details?.allowed).toEqual([...SETUP_CLIENTS]);
  });

  it("accepts client names case-insensitively", async () => {
    expect((await run({ client: "Gemini", dryRun: true })).client).toBe("gemini");
  });

  it("VS Code's user mcp.json follows the platform", () => {
    const ctx = (platform: NodeJS.Platform, env: Record<string, string>) => clientConfigPath("vscode", "user", { env: { HOME: "/h", ...env }, platform, projectRoot: null });
    expect(ctx("linux", {})).toBe("/h/.config/Code/User/mcp.json");
    expect(ctx("linux", { XDG_CONFIG_HOME: "/xdg" })).toBe("/xdg/Code/User/mcp.json");
    expect(ctx("darwin", {})).toBe("/h/Library/Application Support/Code/User/mcp.json");
    expect(ctx("win32", { APPDATA: "/appdata" })).toBe(join("/appdata", "Code", "User", "mcp.json"));
  });

  it("resolves the command: bare names stay, relative paths become absolute, Windows goes through cmd /c", () => {
    expect(resolveTransport({ cwd: "/w", platform: "linux" })).toEqual({ kind: "stdio", command: "cm-mcp", args: [] });
    expect(resolveTransport({ command: "./bin/cm-mcp", cwd: "/w", platform: "linux" })).toEqual({ kind: "stdio", command: "/w/bin/cm-mcp", args: [] });
    expect(resolveTransport({ command: "/abs/cm-mcp", cwd: "/w", platform: "linux" })).toEqual({ kind: "stdio", command: "/abs/cm-mcp", args: [] });
    expect(resolveTransport({ cwd: "/w", platform: "win32" })).toEqual({ kind: "stdio", command: "cmd", args: ["/c", "cm-mcp"] });
    expect(resolveTransport({ http: " https://h/mcp ", cwd: "/w", platform: "linux" })).toEqual({ kind: "http", url: "https://h/mcp" });
  });

  it("rejects a bad --http URL, an empty --command, and both together", () => {
    for (const options of [{ http: "ftp://x" }, { http: "not a url" }, { command: " " }, { command: "x", http: "http://h" }]) {
      expect(() => resolveTransport({ ...options, cwd: "/w", platform: "linux" })).toThrow(AppError);
    }
  });
});

describe("--agents-md", () => {
  it("creates AGENTS.md at the repository root, then leaves it unchanged", async () => {
    mkdirSync(join(repo, "pkg"), { recursive: true });
    const r = await run({ client: "codex", agentsMd: true, cwd: join(repo, "pkg") });
    expect(r.agentsMd).toEqual({ path: join(repo, "AGENTS.md"), action: "created" });
    const text = readFileSync(join(repo, "AGENTS.md"), "utf8");
    expect(text).toBe(`${agentsMdBlock()}\n`);
    expect(text).toContain('cm context "<task>" --json');
    expect(text).toContain("[cass: helpful <id>]");
    expect(text.split("\n").length).toBeLessThan(12);
    const again = await run({ client: "codex", agentsMd: true });
    expect(again.agentsMd?.action).toBe("unchanged");
    expect(readFileSync(join(repo, "AGENTS.md"), "utf8")).toBe(text);
  });

  it("appends to an existing AGENTS.md and replaces an older block instead of duplicating it", async () => {
    writeFile(join(repo, "AGENTS.md"), "# Project rules\n\nUse pnpm.");
    await run({ client: "cursor", agentsMd: true });
    const first = readFileSync(join(repo, "AGENTS.md"), "utf8");
    expect(first).toBe(`# Project rules\n\nUse pnpm.\n\n${agentsMdBlock()}\n`);
    writeFile(join(repo, "AGENTS.md"), first.replace("## Procedural memory (cass-memory)", "old text") + "\n## Tail\n");
    const r = await run({ client: "cursor", agentsMd: true });
    expect(r.agentsMd?.action).toBe("updated");
    const second = readFileSync(join(repo, "AGENTS.md"), "utf8");
    expect(second).toBe(`${first}\n## Tail\n`);
    expect(second.match(/cass-memory:begin/g)).toHaveLength(1);
  });

  it("uses CLAUDE.md for claude-code when the repository has one", async () => {
    writeFile(join(repo, "CLAUDE.md"), "# Claude\n");
    const r = await run({ client: "claude-code", agentsMd: true });
    expect(r.agentsMd?.path).toBe(join(repo, "CLAUDE.md"));
    expect(readFileSync(join(repo, "CLAUDE.md"), "utf8")).toContain("cass-memory:end");
    expect(existsSync(join(repo, "AGENTS.md"))).toBe(false);
  });

  it("refuses unbalanced markers before writing anything", async () => {
    writeFile(join(repo, "AGENTS.md"), "x\n<!-- cass-memory:begin -->\nno end\n");
    const error = await rejection(run({ client: "gemini", agentsMd: true }));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(existsSync(join(home, ".gemini", "settings.json"))).toBe(false);
  });

  it("is refused outside a git repository", async () => {
    const error = await rejection(run({ client: "gemini", agentsMd: true, cwd: home }));
    expect(error.code).toBe("CONFIG_INVALID");
  });

  it("dry run returns the AGENTS.md content without writing it", async () => {
    const r = await run({ client: "windsurf", agentsMd: true, dryRun: true });
    expect(r.agentsMd?.action).toBe("created");
    expect(r.agentsMd?.content).toContain(agentsMdBlock());
    expect(existsSync(join(repo, "AGENTS.md"))).toBe(false);
  });

  it("planAgentsMd keeps CRLF and uses the program name", () => {
    const plan = planAgentsMd("# A\r\n", "/AGENTS.md", "cass-memory");
    expect(plan.content).toBe(`# A\r\n\r\n${agentsMdBlock("cass-memory", "\r\n")}\r\n`);
    expect(plan.content).toContain('cass-memory context "<task>" --json');
  });
});
