import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const globalDir = () => join(home, ".cass-memory");
const ids = (args: string[] = []) =>
  cm(["playbook", "list", "--json", ...args], { home }).json().data.bullets.map((b: { id: string }) => b.id) as string[];

// -------------------------------------------------------------------------------------- starters

describe("cm starters", () => {
  it("lists the built-in starters sorted by name, and custom files next to them", () => {
    const empty = cm(["starters", "--json"], { home });
    expect(empty.code).toBe(0);
    const env = empty.json();
    expect(env.command).toBe("starters");
    expect(env.data.starters.map((s: { name: string }) => s.name)).toEqual(["general", "go", "node", "python", "react", "rust", "typescript"]);
    for (const s of env.data.starters) {
      expect(Object.keys(s)).toEqual(["name", "description", "bulletCount", "source"]);
      expect(s.source).toBe("builtin");
      expect(s.bulletCount).toBeGreaterThanOrEqual(6);
    }

    mkdirSync(join(globalDir(), "starters", "custom"), { recursive: true });
    writeFileSync(
      join(globalDir(), "starters", "team.yaml"),
      "name: team\ndescription: Our conventions\nbullets:\n  - content: Squash-merge feature branches\n    category: git\n  - content: 'AVOID: committing generated files'\n    is_negative: true\n",
    );
    writeFileSync(join(globalDir(), "starters", "custom", "go.json"), JSON.stringify({ description: "Our Go", bullets: [{ content: "Use slog for logging", category: "logging" }] }));
    writeFileSync(join(globalDir(), "starters", "bad.yaml"), "bullets: [unclosed\n");
    const r = cm(["starters", "--json"], { home });
    expect(r.code).toBe(0);
    const starters = r.json().data.starters as Array<{ name: string; source: string; bulletCount: number; path?: string; shadowed?: boolean }>;
    expect(starters.map((s) => `${s.name}:${s.source}`)).toEqual([
      "general:builtin",
      "go:custom",
      "go:builtin",
      "node:builtin",
      "python:builtin",
      "react:builtin",
      "rust:builtin",
      "team:custom",
      "typescript:builtin",
    ]);
    expect(starters.find((s) => s.name === "team")).toMatchObject({ bulletCount: 2, path: join(globalDir(), "starters", "team.yaml") });
    expect(starters.find((s) => s.name === "go" && s.source === "builtin")!.shadowed).toBe(true);
    expect(r.stderr).toContain("bad.yaml");

    const human = cm(["starters"], { home });
    expect(human.stdout).toContain("Built-in starters:");
    expect(human.stdout).toMatch(/• typescript - .+ \(\d+ rules\)/);
    expect(human.stdout).toContain("Custom starters:");
    expect(human.stdout).toContain("• team - Our conventions (2 rules)");
    expect(human.stdout).toContain("Seed a playbook with: cm init --starter=<name>");
  });
});

// ------------------------------------------------------------------------------------ init --starter

describe("cm init --starter", () => {
  it("seeds a fresh home, then adds only missing rules on an initialised one", () => {
    const first = cm(["init", "--starter", "python", "--json"], { home });
    expect(first.code).toBe(0);
    const data = first.json().data;
    expect(data.created).toEqual(["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"]);
    expect(data.starter).toEqual({ added: expect.any(Number), skipped: 0, name: "python" });
    expect(data.starter.added).toBeGreaterThanOrEqual(6);
    expect(ids()).toHaveLength(data.starter.added);
    expect(ids().every((id) => id.startsWith("starter-python-"))).toBe(true);

    // Without --starter a second init is refused; with one it is allowed.
    expect(cm(["init", "--json"], { home }).json().error.code).toBe("ALREADY_EXISTS");
    const again = cm(["init", "--starter", "python", "--json"], { home });
    expect(again.code).toBe(0);
    expect(again.json().data).toMatchObject({ created: [], starter: { added: 0, skipped: data.starter.added, name: "python" } });
    const more = cm(["init", "--starter", "general"], { home });
    expect(more.code).toBe(0);
    expect(more.stdout).toMatch(/Applied starter "general" \(\d+ added, 0 skipped\)/);
  });

  it("an unknown starter is VALIDATION_FAILED (exit 2) and creates nothing", () => {
    const r = cm(["init", "--starter", "cobol", "--json"], { home });
    expect(r.code).toBe(2);
    const error = r.json().error;
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(error.message).toBe('Starter "cobol" not found. Run "cm starters" to list available names.');
    expect(error.details).toEqual({ starter: "cobol" });
    expect(existsSync(globalDir())).toBe(false);
  });

  it("init --repo --starter seeds the repository playbook", () => {
    const repo = join(home, "proj");
    gitInit(repo);
    cm(["init"], { home });
    const r = cm(["init", "--repo", "--starter", "react", "--json"], { home, cwd: repo });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("init:repo");
    expect(env.data.starter.name).toBe("react");
    const text = readFileSync(join(repo, ".cass", "playbook.yaml"), "utf8");
    expect(text).toContain("starter-react-rules-of-hooks");
    expect(readFileSync(join(globalDir(), "playbook.yaml"), "utf8")).not.toContain("starter-react");
  });
});

// ------------------------------------------------------------------------------- playbook bootstrap

describe("cm playbook bootstrap", () => {
  it("dry run lists, apply adds and journals, a second apply adds nothing", () => {
    cm(["init"], { home });
    const dry = cm(["playbook", "bootstrap", "go", "--dry-run", "--json"], { home });
    expect(dry.code).toBe(0);
    const plan = dry.json();
    expect(plan.command).toBe("playbook:bootstrap");
    expect(plan.data).toMatchObject({ name: "go", source: "builtin", target: "global", dryRun: true, skipped: 0 });
    expect(plan.data.addedBullets.length).toBe(plan.data.added);
    expect(ids()).toEqual([]);

    const applied = cm(["playbook", "bootstrap", "go"], { home });
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`Applied starter "go" to the global playbook`);
    expect(ids()).toEqual(plan.data.addedBullets.map((b: { id: string }) => b.id));
    const history = cm(["history", plan.data.addedBullets[0].id, "--json"], { home });
    expect(history.code).toBe(0);
    expect(history.json().data.events[0]).toMatchObject({ operation: "bootstrap", source: "starter:go", change: "created" });

    const again = cm(["playbook", "bootstrap", "go", "--json"], { home }).json().data;
    expect(again.added).toBe(0);
    expect(again.skipped).toBe(plan.data.added);
  });

  it("errors: unknown starter (2), --repo outside a repository (3)", () => {
    const unknown = cm(["playbook", "bootstrap", "fortran", "--json"], { home });
    expect(unknown.code).toBe(2);
    expect(unknown.json().error.code).toBe("VALIDATION_FAILED");
    const dir = join(home, "plain");
    mkdirSync(dir);
    const noRepo = cm(["playbook", "bootstrap", "go", "--repo", "--json"], { home, cwd: dir });
    expect(noRepo.code).toBe(3);
    expect(noRepo.json().error.code).toBe("CONFIG_INVALID");
  });
});

// ------------------------------------------------------------------------------------------ project

describe("cm project", () => {
  function seedRules() {
    cm(["init", "--starter", "typescript"], { home });
    const id = cm(["playbook", "add", "Run pnpm typecheck before pushing", "--category", "tooling", "--json"], { home }).json().data.bullet.id;
    cm(["mark", id, "--helpful"], { home });
    const gone = cm(["playbook", "add", "An outdated rule about webpack 4", "--category", "tooling", "--json"], { home }).json().data.bullet.id;
    cm(["playbook", "remove", gone], { home });
    return id as string;
  }

  it("prints AGENTS.md on stdout by default, without deprecated rules", () => {
    seedRules();
    const r = cm(["project"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("# AGENTS.md\n\n> Auto-generated playbook for AI coding assistants.\n> Last updated: ")).toBe(true);
    expect(r.stdout).toContain("## Summary");
    expect(r.stdout).toContain("### tooling");
    expect(r.stdout).toContain("- Run pnpm typecheck before pushing [1+/0-] _(score: ");
    expect(r.stdout).toContain("## Anti-Patterns (AVOID)");
    expect(r.stdout).not.toContain("webpack 4");
    const noCounts = cm(["project", "--no-show-counts"], { home });
    expect(noCounts.stdout).toContain("- Run pnpm typecheck before pushing _(score: ");
  });

  it("--json gives {format, content}; claude.md, raw and yaml formats", () => {
    seedRules();
    const claude = cm(["project", "--format", "CLAUDE", "--json"], { home });
    expect(claude.code).toBe(0);
    const env = claude.json();
    expect(env.command).toBe("project");
    expect(Object.keys(env.data)).toEqual(["format", "content"]);
    expect(env.data.format).toBe("claude.md");
    expect(env.data.content).toMatch(/^<project_rules>\n[\s\S]*## IMPORTANT: Avoid These Patterns\n\n- DO NOT: [\s\S]*<\/project_rules>\n$/);

    const raw = cm(["project", "--format", "raw"], { home });
    const doc = JSON.parse(raw.stdout);
    expect(doc.bullets.some((b: { content: string }) => b.content.includes("webpack 4"))).toBe(true);

    const yaml = cm(["project", "--format", "yaml", "--json"], { home }).json().data;
    expect(yaml.format).toBe("yaml");
    expect(yaml.content).toMatch(/^schema_version: 2\n/);
    expect(yaml.content).toContain("starter-typescript-keep-strict");
  });

  it("--per-category limits rules; --top is a deprecated alias with warnings", () => {
    seedRules();
    const countTooling = (text: string) => text.split("### tooling")[1]!.split("###")[0]!.split("\n").filter((l) => l.startsWith("- ")).length;
    expect(countTooling(cm(["project"], { home }).stdout)).toBe(2);
    const limited = cm(["project", "--per-category", "1"], { home });
    expect(countTooling(limited.stdout)).toBe(1);
    // The rule with helpful feedback ranks first.
    expect(limited.stdout).toContain("Run pnpm typecheck before pushing");

    const top = cm(["project", "--top", "1"], { home });
    expect(top.code).toBe(0);
    expect(top.stderr).toContain("[project] --top is deprecated; use --per-category.");
    expect(countTooling(top.stdout)).toBe(1);
    const both = cm(["project", "--top", "1", "--per-category", "2"], { home });
    expect(both.stderr).toContain("Ignoring deprecated --top because --per-category was also provided.");
    expect(countTooling(both.stdout)).toBe(2);
  });

  it("writes --output atomically, refuses to overwrite without --force", () => {
    seedRules();
    const out = join(home, "AGENTS.md");
    const first = cm(["project", "--output", out, "--json"], { home });
    expect(first.code).toBe(0);
    const data = first.json().data;
    const written = readFileSync(out, "utf8");
    expect(data).toEqual({ outputPath: out, format: "agents.md", bytesWritten: Buffer.byteLength(written) });
    expect(written.startsWith("# AGENTS.md")).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o644);

    writeFileSync(out, "hand-written\n");
    chmodSync(out, 0o640);
    const refused = cm(["project", "--output", out, "--json"], { home });
    expect(refused.code).toBe(2);
    const error = refused.json().error;
    expect(error.code).toBe("ALREADY_EXISTS");
    expect(error.message).toBe(`Refusing to overwrite existing file: ${out}`);
    expect(error.hint).toBe(`Re-run with: cm project --output "${out}" --force`);
    expect(readFileSync(out, "utf8")).toBe("hand-written\n");

    const forced = cm(["project", "--output", "AGENTS.md", "--force", "--format", "claude.md"], { home });
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("Exported to ~/AGENTS.md");
    expect(readFileSync(out, "utf8").startsWith("<project_rules>")).toBe(true);
    expect(statSync(out).mode & 0o777).toBe(0o640);
  });

  it("rejects bad input with INVALID_INPUT (exit 2)", () => {
    for (const [args, message] of [
      [["--format", "html"], "format must be one of: agents.md, agents, claude.md, claude, raw, json, yaml."],
      [["--per-category", "0"], "per-category must be >= 1."],
      [["--per-category", "two"], "per-category must be an integer."],
      [["--top", "x"], "top must be an integer."],
      [["--output", " "], "output must be a non-empty string."],
    ] as const) {
      const r = cm(["project", ...args, "--json"], { home });
      expect(r.code).toBe(2);
      expect(r.json().error).toMatchObject({ code: "INVALID_INPUT", message });
    }
  });
});

// --------------------------------------------------------------------------------------- quickstart

describe("cm quickstart", () => {
  it("returns the protocol as data and as a Markdown page", () => {
    const r = cm(["quickstart", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("quickstart");
    expect(Object.keys(env.data)).toEqual([
      "summary",
      "oneCommand",
      "expectations",
      "whatItReturns",
      "doNotDo",
      "operatorNote",
      "soloUser",
      "inlineFeedbackFormat",
      "protocol",
      "examples",
    ]);
    expect(env.data.oneCommand).toBe('cm context "<task>" --json');

    const human = cm(["quickstart"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout.startsWith("# cass-memory Quick Start (for Agents)\n")).toBe(true);
    for (const heading of ["The One Command You Need", "What You Should Expect", "Inline Feedback", "Protocol", "Solo Users", "Examples"]) {
      expect(human.stdout).toContain(`## ${heading}`);
    }
    for (const command of ["cm context \"<task>\" --json", "cm mark <id> --helpful", "cm remember", "cm recall", "cm history <id>", "cm doctor", "// [cass: helpful <id>]"]) {
      expect(human.stdout).toContain(command);
    }
  });

  it("uses the program name from CASS_MEMORY_CLI_NAME", () => {
    const r = cm(["quickstart", "--json"], { home, env: { CASS_MEMORY_CLI_NAME: "cass-memory" } });
    expect(r.json().data.oneCommand).toBe('cass-memory context "<task>" --json');
  });
});

// ------------------------------------------------------------------------------- --info, --examples

describe("cm --info and --examples", () => {
  it("--info anywhere in argv prints system info; --json gives the info envelope", () => {
    const human = cm(["--info"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^cass-memory \(cm\) \d+\.\d+\.\d+/);
    expect(human.stdout).toContain("Global dir:  ~/.cass-memory");
    expect(human.stdout).toContain("not created yet");

    const repo = join(home, "proj");
    gitInit(repo);
    cm(["init", "--starter", "general"], { home });
    cm(["init", "--repo", "--starter", "go"], { home, cwd: repo });
    // Intercepted before commander: even after a subcommand, and an unknown one.
    const r = cm(["playbook", "list", "--info", "-j"], { home, cwd: repo });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("info");
    expect(env.data).toMatchObject({
      globalDir: globalDir(),
      configPath: join(globalDir(), "config.json"),
      configExists: true,
      repoRoot: repo,
      repoDir: join(repo, ".cass"),
      node: process.version,
      platform: process.platform,
      episodic: { source: expect.any(String) },
    });
    expect(env.data.playbooks.global).toMatchObject({ path: join(globalDir(), "playbook.yaml"), exists: true, bullets: expect.any(Number) });
    expect(env.data.playbooks.global.bullets).toBeGreaterThan(0);
    expect(env.data.playbooks.repo).toMatchObject({ path: join(repo, ".cass", "playbook.yaml"), exists: true });
    expect(env.data.playbooks.repo.bullets).toBeGreaterThan(0);
    expect(cm(["nosuchcommand", "--info"], { home }).code).toBe(0);
  });

  it("--info reports a broken configuration instead of failing", () => {
    mkdirSync(globalDir(), { recursive: true });
    writeFileSync(join(globalDir(), "config.json"), JSON.stringify({ scoring: 5 }));
    const r = cm(["--info", "--json"], { home });
    expect(r.code).toBe(0);
    expect(r.json().data.configError).toContain("Configuration validation failed");
  });

  it("--examples lists workflows; JSON commands have their comments stripped", () => {
    const r = cm(["--examples", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("examples");
    expect(Object.keys(env.data)).toEqual(["workflows", "tip"]);
    expect(env.data.workflows.length).toBeGreaterThanOrEqual(5);
    for (const w of env.data.workflows) {
      expect(Object.keys(w)).toEqual(["title", "description", "commands"]);
      for (const c of w.commands) {
        expect(c).toMatch(/^cm /);
        expect(c).not.toMatch(/\s#\s/);
      }
    }
    const human = cm(["--examples"], { home });
    expect(human.stdout).toContain("Agent Workflow");
    expect(human.stdout).toMatch(/cm init --starter general +# create/);
  });

  it("every command used in the examples exists", () => {
    const commands = new Set<string>();
    for (const w of cm(["--examples", "--json"], { home }).json().data.workflows) {
      for (const c of w.commands as string[]) {
        const words = c.split(/\s+/).slice(1);
        if (words[0]!.startsWith("-")) continue; // a global flag such as --info
        commands.add(words[0] === "playbook" || words[0] === "privacy" ? `${words[0]} ${words[1]}` : words[0]!);
      }
    }
    for (const command of commands) {
      const r = cm([...command.split(" "), "--help"], { home });
      expect(r.code, `${command} --help: ${r.stderr}`).toBe(0);
      // An unknown command would print the root help instead.
      const usage = r.stdout.split("\n")[0]!;
      expect(usage.startsWith(`Usage: cm ${command} `) || usage.startsWith(`Usage: cm ${command}|`), `${command}: ${usage}`).toBe(true);
    }
  });
});
