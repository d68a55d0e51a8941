import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, assertBuilt, cm, cmAsync, gitInit, tempHome, type RunOptions, type RunResult } from "./helpers.js";

let home: string;
let repo: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  repo = join(home, "project");
  mkdirSync(repo, { recursive: true });
  gitInit(repo);
});
afterEach(() => cleanup());

/** Runs cm in the repository, with the storage variables of the test's environment cleared. */
function run(args: string[], env: RunOptions["env"] = {}): RunResult {
  return cm(args, { home, cwd: repo, env: { CASS_MEMORY_STORAGE: undefined, CASS_MEMORY_STORAGE_PATH: undefined, CASS_MEMORY_TEST_MIGRATE_KILL_AFTER: undefined, ...env } });
}

function ok(args: string[], env: RunOptions["env"] = {}): any {
  const r = run([...args, "--json"], env);
  if (r.code !== 0) throw new Error(`cm ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.json().data;
}

/** For large outputs (spawnSync caps stdout at 1 MiB). */
async function okAsync(args: string[], env: RunOptions["env"] = {}): Promise<any> {
  const r = await cmAsync([...args, "--json"], { home, cwd: repo, env: { CASS_MEMORY_STORAGE: undefined, CASS_MEMORY_STORAGE_PATH: undefined, ...env } });
  if (r.code !== 0) throw new Error(`cm ${args.join(" ")} exited ${r.code}:\n${r.stderr}`);
  return r.json().data;
}

const globalDir = (): string => join(home, ".cass-memory");
const configText = (): string => readFileSync(join(globalDir(), "config.json"), "utf8");

// ------------------------------------------------------------------------------------ a playbook

const CATEGORIES = ["testing", "database", "deployment", "security", "tooling", "performance", "git", "api"];
const WORDS = [
  "tests", "database", "migration", "deploy", "cache", "auth", "login", "api", "typescript", "lint", "docker", "branch", "review",
  "logging", "retry", "timeout", "config", "schema", "index", "build", "release", "secrets", "queue", "latency", "rollback",
];

/** A deterministic pseudo-random playbook of `n` varied bullets (feedback, anti-patterns, deprecated ones, tags). */
function generateBullets(n: number, prefix: string): Array<Record<string, unknown>> {
  let seed = prefix.length * 7919 + n;
  const next = (k: number): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % k;
  };
  const day = 86_400_000;
  const now = Date.now();
  const bullets: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    const words = [WORDS[next(WORDS.length)], WORDS[next(WORDS.length)], WORDS[next(WORDS.length)]];
    const negative = next(10) === 0;
    const helpful = next(6);
    const harmful = next(12) === 0 ? 1 : 0;
    const created = new Date(now - (30 + next(300)) * day).toISOString();
    const events = [
      ...Array.from({ length: helpful }, (_, k) => ({ type: "helpful", timestamp: new Date(now - (1 + next(200) + k) * day).toISOString() })),
      ...Array.from({ length: harmful }, () => ({ type: "harmful", timestamp: new Date(now - (1 + next(100)) * day).toISOString(), reason: "outdated" })),
    ];
    bullets.push({
      id: `${prefix}-${String(i).padStart(4, "0")}`,
      category: CATEGORIES[next(CATEGORIES.length)],
      content: negative
        ? `Never skip the ${words[0]} check when touching ${words[1]} and ${words[2]} (rule ${i})`
        : `Always verify ${words[0]} before changing ${words[1]}; watch the ${words[2]} (rule ${i})`,
      type: negative ? "anti-pattern" : "rule",
      isNegative: negative,
      kind: next(2) === 0 ? "workflow_rule" : "stack_pattern",
      state: helpful >= 3 ? "active" : "draft",
      maturity: helpful >= 4 ? "established" : "candidate",
      helpfulCount: helpful,
      harmfulCount: harmful,
      feedbackEvents: events,
      tags: [words[0] as string, `t${next(5)}`],
      deprecated: next(25) === 0,
      pinned: next(50) === 0,
      createdAt: created,
      updatedAt: created,
    });
  }
  return bullets;
}

function importBullets(bullets: Array<Record<string, unknown>>, repoLayer = false): void {
  const file = join(home, `import-${repoLayer ? "repo" : "global"}.json`);
  writeFileSync(file, JSON.stringify({ bullets }));
  const data = ok(["playbook", "import", file, ...(repoLayer ? ["--repo"] : [])]);
  expect(data.added).toBe(bullets.length);
}

const TASKS = [
  "fix the failing database migration tests",
  "speed up the docker build cache",
  "debug the login timeout in the auth api",
  "review the branch before the release deploy",
];

/**
 * The context data, less what depends on the clock: relative ages and the exact decayed scores
 * (compared with a tolerance instead, see expectSameContext).
 */
function contextData(env: RunOptions["env"] = {}): unknown[] {
  return TASKS.map((task) => {
    const data = ok(["context", task], env);
    expect(data.relevantBullets.length).toBeGreaterThan(0);
    return data;
  });
}

/** Deep equality where numbers may differ by a relative 1e-4 (scores decay between two runs). */
function expectClose(actual: unknown, expected: unknown, path = "data"): void {
  if (typeof expected === "number" && typeof actual === "number") {
    const scale = Math.max(1e-9, Math.abs(expected), Math.abs(actual));
    if (Math.abs(actual - expected) / scale > 1e-4) throw new Error(`${path}: ${actual} ≠ ${expected}`);
    return;
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    if (actual.length !== expected.length) throw new Error(`${path}: length ${actual.length} ≠ ${expected.length}`);
    expected.forEach((item, i) => expectClose(actual[i], item, `${path}[${i}]`));
    return;
  }
  if (expected !== null && typeof expected === "object" && actual !== null && typeof actual === "object") {
    const keys = new Set([...Object.keys(expected), ...Object.keys(actual)]);
    for (const key of keys) expectClose((actual as Record<string, unknown>)[key], (expected as Record<string, unknown>)[key], `${path}.${key}`);
    return;
  }
  if (actual !== expected) throw new Error(`${path}: ${JSON.stringify(actual)} ≠ ${JSON.stringify(expected)}`);
}

/** Every file below `dir` (content and mtime), without caches, locks, backups and staging. */
function snapshot(dir: string, skip: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if ([".cache", "backups", ".migrate-yaml", ".migrate-sqlite", ...skip].includes(entry.name) || entry.name.endsWith(".lock.d")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = `${statSync(path).mtimeMs}:${readFileSync(path).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

describe("cm storage migrate (1,000-bullet playbook)", () => {
  it("gives the same cm context data after switching to sqlite, and after migrating back to yaml", { timeout: 240_000 }, async () => {
    ok(["init"]);
    importBullets(generateBullets(1000, "b-global"));
    importBullets(generateBullets(40, "b-repo"), true);
    const before = contextData();
    const exported = await okAsync(["playbook", "export", "--all"]);
    expect(exported.bullets).toHaveLength(1040);

    // Switch storage.backend first, then migrate (the data is not visible until it is moved).
    const config = JSON.parse(configText()) as Record<string, unknown>;
    writeFileSync(join(globalDir(), "config.json"), JSON.stringify({ ...config, storage: { backend: "sqlite" } }, null, 2));
    const notYet = run(["context", TASKS[0] as string, "--json"]);
    expect(notYet.json().data.relevantBullets).toEqual([]);
    expect(notYet.stderr).toMatch(/storage migrate --to sqlite/);

    const migrating = run(["storage", "migrate", "--to", "sqlite", "--json"]);
    expect(migrating.code).toBe(0);
    expect(migrating.stderr).not.toMatch(/WARNING/); // the storage commands report this themselves
    const migrated = migrating.json().data;
    expect(migrated).toMatchObject({ status: "migrated", from: "yaml", to: "sqlite", layers: ["global", "repo"] });
    expect(migrated.sections.records).toBeGreaterThanOrEqual(1040);
    expect(migrated.verified.sections).toBeGreaterThanOrEqual(migrated.sections.total);
    expect(existsSync(join(globalDir(), "cass-memory.sqlite"))).toBe(true);
    expect(existsSync(join(repo, ".cass", "cass-memory.sqlite"))).toBe(true);
    const counts = ok(["storage", "status"]).layers.map((l: { sqlite: { bullets: number } }) => l.sqlite.bullets);
    expect(counts).toEqual([1000, 40]);

    const onSqlite = contextData();
    expectClose(onSqlite, before);

    const back = ok(["storage", "migrate", "--to", "yaml"]);
    expect(back).toMatchObject({ status: "migrated", from: "sqlite", to: "yaml", config: { updated: true } });
    expect(back.backups.map((b: { layer: string }) => b.layer)).toEqual(["global", "repo"]);
    expect(JSON.parse(configText()).storage).toEqual({ backend: "yaml" });
    expectClose(contextData(), before);
    // The yaml → sqlite → yaml round trip gives the same playbook; the earlier YAML files were moved aside.
    const withoutTime = (e: { metadata: Record<string, unknown> }) => ({ ...e, metadata: { ...e.metadata, exportedAt: "(time)" } });
    expect(withoutTime(await okAsync(["playbook", "export", "--all"]))).toEqual(withoutTime(exported));
    expect(existsSync(join(back.backups[0].dir as string, "playbook.yaml"))).toBe(true);
    expect(existsSync(join(back.backups[1].dir as string, "playbook.yaml"))).toBe(true);
  });
});

describe("cm storage migrate", () => {
  it("resumes after the process was killed mid-way (SIGKILL), with the same data", { timeout: 240_000 }, () => {
    ok(["init"]);
    importBullets(generateBullets(120, "b-g"));
    importBullets(generateBullets(10, "b-r"), true);
    ok(["mark", "b-g-0001", "--helpful"]);
    ok(["outcome", "success", "b-g-0001", "--session", "s1"]);
    const before = contextData();
    const yamlBefore = snapshot(globalDir(), ["config.json"]);

    const killed = run(["storage", "migrate", "--to", "sqlite", "--json"], { CASS_MEMORY_TEST_MIGRATE_KILL_AFTER: "2" });
    expect(killed.code).toBeNull();
    expect(killed.stdout).toBe("");
    expect(JSON.parse(configText()).storage).toEqual({ backend: "yaml" });
    expect(existsSync(join(globalDir(), "cass-memory.sqlite"))).toBe(false);
    const status = ok(["storage", "status"]);
    expect(status.migration.unfinished).toMatchObject([{ to: "sqlite", from: "yaml", completed: 2 }]);

    const resumed = ok(["storage", "migrate", "--to", "sqlite"]);
    expect(resumed).toMatchObject({ status: "migrated", resumed: true, sections: { alreadyCompleted: 2 } });
    expect(resumed.sections.copied).toBe(resumed.sections.total - 2);
    expect(snapshot(globalDir(), ["config.json", "cass-memory.sqlite", "cass-memory.sqlite-wal", "cass-memory.sqlite-shm"])).toEqual(yamlBefore);
    expectClose(contextData(), before);
    expect(ok(["storage", "status"]).migration.unfinished).toEqual([]);
  });

  it("leaves config, source and target untouched when installing fails, and finishes on the next run", () => {
    ok(["init"]);
    importBullets(generateBullets(50, "b-g"));
    writeFileSync(join(home, "not-a-dir"), "x");
    const before = { config: configText(), global: snapshot(globalDir()), repo: snapshot(join(repo, ".cass")) };

    const failed = run(["storage", "migrate", "--to", "sqlite", "--json"], { CASS_MEMORY_STORAGE_PATH: join(home, "not-a-dir", "memory.sqlite") });
    expect(failed.code).toBe(4);
    expect(failed.json().error).toMatchObject({ code: "FILE_WRITE_FAILED", message: expect.stringContaining("config.json are unchanged") });
    expect(configText()).toBe(before.config);
    expect(snapshot(globalDir())).toEqual(before.global);
    expect(snapshot(join(repo, ".cass"))).toEqual(before.repo);
    expect(ok(["playbook", "list"]).bullets.length).toBeGreaterThan(40);

    const retried = ok(["storage", "migrate", "--to", "sqlite"]);
    expect(retried).toMatchObject({ status: "migrated", resumed: true, sections: { copied: 0 } });
    expect(ok(["playbook", "list"]).bullets.length).toBeGreaterThan(40);
  });

  it("plans on --dry-run without writing anything", () => {
    ok(["init"]);
    importBullets(generateBullets(30, "b-g"));
    const before = { config: configText(), global: snapshot(globalDir()) };
    const plan = ok(["storage", "migrate", "--to", "sqlite", "--dry-run"]);
    expect(plan).toMatchObject({ status: "planned", dryRun: true, from: "yaml", to: "sqlite" });
    expect(plan.plan.find((s: { key: string }) => s.key === "global/playbook")).toMatchObject({ records: 30 });
    expect(configText()).toBe(before.config);
    expect(snapshot(globalDir())).toEqual(before.global);
    expect(existsSync(join(globalDir(), ".migrate-sqlite"))).toBe(false);
    const human = run(["storage", "migrate", "--to", "sqlite", "--dry-run"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Dry run: yaml → sqlite[\s\S]*Nothing was changed/);
  });

  it("answers --to the backend in use with a no-op, and rejects an unknown backend", () => {
    ok(["init"]);
    importBullets(generateBullets(5, "b-g"));
    const noop = ok(["storage", "migrate", "--to", "yaml"]);
    expect(noop).toMatchObject({ status: "unchanged", from: "yaml", to: "yaml", layers: [] });
    expect(run(["storage", "migrate", "--to", "yaml"]).stdout).toMatch(/Already using yaml; nothing to migrate/);
    const bad = run(["storage", "migrate", "--to", "mongodb", "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "INVALID_INPUT" });
    const missing = run(["storage", "migrate", "--json"]);
    expect(missing.code).toBe(2);
    expect(missing.json().error).toMatchObject({ code: "MISSING_REQUIRED", hint: expect.stringContaining("--to sqlite") });
  });
});

describe("choosing the backend", () => {
  it("follows CASS_MEMORY_STORAGE, reports why in status, and rejects an unknown value", () => {
    ok(["init"]);
    ok(["add", "Prefer small pull requests", "--category", "git"]);
    let status = ok(["storage", "status"]);
    expect(status).toMatchObject({ backend: "yaml", source: "config", configPath: join(globalDir(), "config.json"), sqlitePath: join(globalDir(), "cass-memory.sqlite") });
    expect(status.layers.map((l: { layer: string }) => l.layer)).toEqual(["global", "repo"]);
    expect(status.layers[0].yaml).toMatchObject({ present: true, bullets: 1 });

    const sqliteEnv = { CASS_MEMORY_STORAGE: "sqlite" };
    ok(["add", "Rebase before merging", "--category", "git"], sqliteEnv);
    // The process closed the database at exit: its WAL was checkpointed and removed.
    expect(existsSync(join(globalDir(), "cass-memory.sqlite"))).toBe(true);
    expect(existsSync(join(globalDir(), "cass-memory.sqlite-wal"))).toBe(false);
    status = ok(["storage", "status"], sqliteEnv);
    expect(status).toMatchObject({ backend: "sqlite", source: "env", reason: "CASS_MEMORY_STORAGE=sqlite" });
    expect(status.layers[0].sqlite).toMatchObject({ present: true, bullets: 1, schemaVersion: expect.any(Number) });
    expect(status.layers[0].otherBackendData).toBe(true);
    expect(ok(["playbook", "list"], sqliteEnv).bullets.map((b: { content: string }) => b.content)).toEqual(["Rebase before merging"]);
    expect(ok(["playbook", "list"]).bullets.map((b: { content: string }) => b.content)).toEqual(["Prefer small pull requests"]);

    const bad = run(["context", "anything", "--json"], { CASS_MEMORY_STORAGE: "mongo" });
    expect(bad.code).toBe(3);
    expect(bad.json().error).toMatchObject({ code: "CONFIG_INVALID", hint: expect.stringContaining("CASS_MEMORY_STORAGE=sqlite") });
    const human = run(["storage", "status"], sqliteEnv);
    expect(human.stdout).toMatch(/Backend: sqlite \(CASS_MEMORY_STORAGE=sqlite\)/);
  });

  it("does not load better-sqlite3 unless the backend is sqlite", () => {
    ok(["init"]);
    const hook = join(home, "hook.cjs");
    const marker = join(home, "loaded.txt");
    writeFileSync(
      hook,
      `const M = require("module"); const load = M._load;\nM._load = function (request, ...rest) { if (request === "better-sqlite3") require("fs").appendFileSync(${JSON.stringify(marker)}, "x"); return load.call(this, request, ...rest); };\n`,
    );
    const env = { NODE_OPTIONS: `--require ${hook}` };
    ok(["context", "write tests"], env);
    ok(["add", "Keep functions small", "--category", "style"], env);
    expect(existsSync(marker)).toBe(false);
    ok(["context", "write tests"], { ...env, CASS_MEMORY_STORAGE: "sqlite" });
    expect(existsSync(marker)).toBe(true);
  });
});

describe("cm playbook export|import on sqlite", () => {
  it("exports from one backend and imports into a sqlite store, both ways", () => {
    const sqliteEnv = { CASS_MEMORY_STORAGE: "sqlite" };
    ok(["init"], sqliteEnv);
    expect(existsSync(join(globalDir(), "cass-memory.sqlite"))).toBe(true);
    expect(existsSync(join(globalDir(), "playbook.yaml"))).toBe(false);
    // Rules in the YAML store (no override: config.json says yaml), exported as JSON…
    importBullets(generateBullets(25, "b-x"));
    const yamlExport = ok(["playbook", "export", "--all"]);
    expect(yamlExport.bullets).toHaveLength(25);

    // …imported into the SQLite store, which exports them unchanged.
    const file = join(home, "export.json");
    writeFileSync(file, JSON.stringify(yamlExport));
    const imported = ok(["playbook", "import", file], sqliteEnv);
    expect(imported).toMatchObject({ added: 25, target: "global", targetPath: join(globalDir(), "cass-memory.sqlite") });
    const sqliteExport = ok(["playbook", "export", "--all"], sqliteEnv);
    expect(sqliteExport.bullets).toEqual(yamlExport.bullets);

    // YAML export text from sqlite, imported into the repo layer (a database too), then listed.
    const yamlText = run(["playbook", "export", "--all"], sqliteEnv);
    expect(yamlText.code).toBe(0);
    writeFileSync(join(home, "export.yaml"), yamlText.stdout);
    const repoImport = ok(["playbook", "import", join(home, "export.yaml"), "--repo"], sqliteEnv);
    expect(repoImport).toMatchObject({ added: 25, target: "repo" });
    expect(existsSync(join(repo, ".cass", "cass-memory.sqlite"))).toBe(true);
    const again = ok(["playbook", "import", file, "--replace"], sqliteEnv);
    expect(again).toMatchObject({ added: 0, updated: 25 });
  });
});

describe("cm serve on sqlite", () => {
  it("answers like cm context --json, writes to the database, and closes it when the server exits", async () => {
    const sqliteEnv = { CASS_MEMORY_STORAGE: "sqlite" };
    ok(["init"], sqliteEnv);
    importBullets(generateBullets(30, "b-s"));
    // Move the rules into sqlite and make it the configured backend.
    expect(ok(["storage", "migrate", "--to", "sqlite"])).toMatchObject({ status: "migrated" });
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("CASS_") && !k.startsWith("MCP_")) env[k] = v;
    const client = new Client({ name: "test", version: "1.0.0" });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", "--stdio"], cwd: repo, env: { ...env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" }, stderr: "pipe" });
    await client.connect(transport);
    const task = TASKS[0] as string;
    // full: true is the shape of `cm context --json` (the tool's default is the compact view).
    const viaMcp = await client.callTool({ name: "cm_context", arguments: { task, full: true, maxTokens: 1_000_000 } });
    expect(viaMcp.isError).toBeFalsy();
    const viaCli = ok(["context", task, "--max-tokens", "1000000"], { CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" });
    expectClose(viaMcp.structuredContent, viaCli);
    const bulletId = (viaCli.relevantBullets[0] as { id: string }).id;
    const feedback = await client.callTool({ name: "cm_feedback", arguments: { bulletId, helpful: true } });
    expect(feedback.isError).toBeFalsy();
    const wal = join(globalDir(), "cass-memory.sqlite-wal");
    expect(existsSync(wal)).toBe(true);
    const pid = transport.pid;
    await client.close();
    // The server exits once its stdin ends; at exit the store is closed (WAL checkpointed and removed).
    for (let i = 0; i < 200 && pid !== null && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 50));
    expect(pid !== null && isAlive(pid)).toBe(false);
    expect(existsSync(wal)).toBe(false);
    const after = ok(["playbook", "get", bulletId]);
    expect(after.bullet.helpfulCount).toBe((viaCli.relevantBullets[0] as { helpfulCount: number }).helpfulCount + 1);
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
