import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "@cass-memory/core";
import type { FixableIssue, HealthCheck, Store, StoreDiagnosis } from "@cass-memory/core";
import { acquireLock, createYamlStore } from "../src/index.js";
import { REPO_GITIGNORE } from "../src/diagnostics.js";
import { FIXTURE_HOME, tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let repoDir = "";
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-diagnostics-"));
  globalDir = join(dir, "home", ".cass-memory");
  repoDir = join(dir, "repo", ".cass");
});
afterEach(async () => {
  await cleanup();
});

const NOW = "2026-11-22T11:57:08.685Z";

function store(opts: { repo?: boolean; staleMs?: number } = {}): Required<Pick<Store, "diagnose" | "applyFix">> & Store {
  const s = createYamlStore({
    globalDir,
    repoDir: opts.repo === false ? null : repoDir,
    logger: testLogger(),
    ...(opts.staleMs !== undefined ? { lock: { staleMs: opts.staleMs } } : {}),
  });
  if (!s.diagnose || !s.applyFix) throw new Error("the YAML store must implement diagnose/applyFix");
  return s as Required<Pick<Store, "diagnose" | "applyFix">> & Store;
}

function check(d: StoreDiagnosis, category: string, item: string): HealthCheck {
  const found = d.checks.find((c) => c.category.startsWith(category) && c.item === item);
  if (!found) throw new Error(`no check ${category} / ${item} in ${JSON.stringify(d.checks.map((c) => [c.category, c.item]))}`);
  return found;
}

const ids = (issues: FixableIssue[]) => issues.map((i) => i.id);

/** Every file and directory below `root`, relative, sorted (for "nothing was written" checks). */
async function tree(root: string): Promise<string[]> {
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true });
  return entries.map(String).sort();
}

async function initialized(opts: { repo?: boolean } = {}) {
  const s = store(opts);
  await s.initialize("global", { overwrite: false, nowIso: NOW });
  if (opts.repo !== false) await s.initialize("repo", { overwrite: false, nowIso: NOW });
  return s;
}

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["-e", ""]);
  if (typeof r.pid !== "number") throw new Error("could not spawn");
  return r.pid;
}

async function age(path: string, ms: number): Promise<void> {
  const when = new Date(Date.now() - ms);
  await utimes(path, when, when);
}

describe("YamlStore.diagnose", () => {
  it("reports a freshly initialized installation as healthy, with nothing to fix", async () => {
    const s = await initialized();
    const d = await s.diagnose();
    expect(d.fixableIssues).toEqual([]);
    expect(d.checks.filter((c) => c.status !== "pass")).toEqual([]);
    expect(check(d, "Global Storage", "Structure").message).toBe("All files and directories present");
    expect(check(d, "Global Storage", "Permissions").message).toBe("Directory writable; files private (0600)");
    expect(check(d, "Configuration", "config.json").message).toBe("Global config.json is valid JSON");
    expect(check(d, "Playbook", "Global playbook.yaml").message).toBe("Schema version 2 (0 rules)");
    expect(check(d, "Repo .cass/ Structure", "Structure").message).toBe("Complete (.cass/playbook.yaml and .cass/blocked.log present)");
    expect(check(d, "Locks", "Lock debris").message).toBe("No stale locks or orphan temp files");
  });

  it("never writes: a missing global directory stays missing", async () => {
    const s = store();
    const d = await s.diagnose();
    expect(existsSync(globalDir)).toBe(false);
    expect(existsSync(repoDir)).toBe(false);
    const structure = check(d, "Global Storage", "Structure");
    expect(structure.status).toBe("fail");
    expect(structure.message).toBe(`Global directory does not exist: ${globalDir}`);
    expect(ids(d.fixableIssues)).toEqual(["missing-global-dir", "missing-config", "missing-playbook", "missing-blocked-log", "missing-diary-dir", "missing-repo-cass-dir"]);
    expect(d.fixableIssues.every((i) => i.safety === "safe")).toBe(true);
    expect(d.fixableIssues[0]!.severity).toBe("fail");
  });

  it("outside a repository reports repo memory as unavailable", async () => {
    const d = await (await initialized({ repo: false })).diagnose();
    expect(check(d, "Repo .cass/ Structure", "Availability")).toMatchObject({
      status: "warn",
      message: "Not in a git repository. Repo-level memory not available.",
    });
    expect(d.fixableIssues).toEqual([]);
  });

  it("loads the original's files as healthy apart from the empty dirs git cannot store", async () => {
    const s = createYamlStore({ globalDir: join(FIXTURE_HOME, "home/.cass-memory"), repoDir: join(FIXTURE_HOME, "repo/.cass"), logger: testLogger() });
    const d = await s.diagnose!();
    expect(check(d, "Playbook", "Global playbook.yaml")).toMatchObject({ status: "pass" });
    expect(check(d, "Playbook", "Repo .cass/playbook.yaml")).toMatchObject({ status: "pass" });
    expect(check(d, "Configuration", "config.json").status).toBe("pass");
    expect(check(d, "Global Storage", "Structure").message).toBe("Missing: diary/");
  });
});

describe("YamlStore.applyFix", () => {
  it("creates a missing installation and is idempotent", async () => {
    const s = store();
    const first = await s.diagnose();
    for (const issue of first.fixableIssues) {
      const result = await s.applyFix(issue.id);
      expect(result, issue.id).toMatchObject({ id: issue.id, success: true });
    }
    expect((await stat(globalDir)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(join(globalDir, "config.json"), "utf8"))).toEqual(defaultConfig());
    expect((await stat(join(globalDir, "config.json"))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(repoDir, ".gitignore"), "utf8")).toBe(REPO_GITIGNORE);
    expect(await readFile(join(repoDir, "playbook.yaml"), "utf8")).toMatch(/^# Project-specific playbook rules\n/);
    const after = await s.diagnose();
    expect(after.fixableIssues).toEqual([]);
    expect(after.checks.filter((c) => c.status !== "pass")).toEqual([]);

    const snapshot = await tree(dir);
    for (const issue of first.fixableIssues) expect((await s.applyFix(issue.id)).success).toBe(true);
    expect(await tree(dir)).toEqual(snapshot);
  });

  it("reset-config (cautious) backs up an invalid config.json before writing the defaults", async () => {
    const s = await initialized();
    const broken = '{ "provider": "anthropic", oops';
    await writeFile(join(globalDir, "config.json"), broken);
    const d = await s.diagnose();
    const cfg = check(d, "Configuration", "config.json");
    expect(cfg.status).toBe("fail");
    expect(cfg.message).toMatch(/^Global config.json is invalid: not valid JSON/);
    expect(d.fixableIssues).toEqual([expect.objectContaining({ id: "reset-config", severity: "fail", safety: "cautious" })]);

    const result = await s.applyFix("reset-config");
    expect(result.success).toBe(true);
    expect(result.backups).toHaveLength(1);
    const backup = result.backups![0]!;
    expect(backup).toMatch(new RegExp(`^${globalDir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/config\\.json\\.backup\\.\\d+$`));
    expect(await readFile(backup, "utf8")).toBe(broken);
    expect(JSON.parse(await readFile(join(globalDir, "config.json"), "utf8"))).toEqual(defaultConfig());

    const again = await s.applyFix("reset-config");
    expect(again).toEqual({ id: "reset-config", success: true, message: `${join(globalDir, "config.json")} is valid; nothing to reset` });
    expect((await readdir(globalDir)).filter((n) => n.includes(".backup."))).toHaveLength(1);
  });

  it("reports a config.json that fails the schema", async () => {
    const s = await initialized();
    await writeFile(join(globalDir, "config.json"), JSON.stringify({ provider: "invalid-provider" }));
    const d = await s.diagnose();
    expect(check(d, "Configuration", "config.json").message).toMatch(/^Global config.json is invalid: schema validation failed: provider: /);
    expect(ids(d.fixableIssues)).toEqual(["reset-config"]);
  });

  it("migrates an old playbook schema with a byte-exact backup, keeping rules and unknown fields", async () => {
    const s = await initialized();
    const old = [
      "# my notes",
      "schema_version: 1",
      "name: playbook",
      "description: old",
      "metadata:",
      `  createdAt: ${NOW}`,
      "bullets:",
      "  - id: b-old1",
      "    category: testing",
      "    content: Run the tests",
      `    createdAt: ${NOW}`,
      `    updatedAt: ${NOW}`,
      "    futureField: keep me",
      "",
    ].join("\n");
    const path = join(repoDir, "playbook.yaml");
    await writeFile(path, old);
    const d = await s.diagnose();
    expect(check(d, "Playbook", "Repo .cass/playbook.yaml")).toMatchObject({ status: "warn", message: "Schema version 1 is outdated (current: 2)" });
    expect(ids(d.fixableIssues)).toEqual(["migrate-playbook-schema-repo"]);

    const result = await s.applyFix("migrate-playbook-schema-repo");
    expect(result.success).toBe(true);
    expect(await readFile(result.backups![0]!, "utf8")).toBe(old);
    const text = await readFile(path, "utf8");
    expect(text.startsWith("# my notes\n")).toBe(true);
    const migrated = await s.readPlaybook("repo");
    expect(migrated?.schema_version).toBe(2);
    expect(migrated?.bullets.map((b) => [b.id, b.content, (b as Record<string, unknown>).futureField])).toEqual([["b-old1", "Run the tests", "keep me"]]);

    expect((await s.applyFix("migrate-playbook-schema-repo")).message).toMatch(/already has schema_version 2/);
    expect((await readdir(repoDir)).filter((n) => n.includes(".backup."))).toHaveLength(1);
    expect((await s.diagnose()).fixableIssues).toEqual([]);
  });

  it("reports a corrupt playbook with its line, offers only a manual fix and never touches it", async () => {
    const s = await initialized();
    const path = join(globalDir, "playbook.yaml");
    const broken = "schema_version: 2\nbullets:\n  - id: b-1\n    content: [unclosed\n";
    await writeFile(path, broken);
    const d = await s.diagnose();
    const pb = check(d, "Playbook", "Global playbook.yaml");
    expect(pb.status).toBe("fail");
    expect(pb.message).toContain(path);
    expect((pb.details as { line?: number }).line).toBeGreaterThan(0);
    const issue = d.fixableIssues.find((i) => i.id === "repair-playbook-global");
    expect(issue).toMatchObject({ severity: "fail", safety: "manual" });
    expect(issue?.howToFix?.[0]).toContain(path);
    expect(await s.applyFix("repair-playbook-global")).toMatchObject({ success: false });
    expect(await readFile(path, "utf8")).toBe(broken);
  });

  it("creates a partial repo .cass/ structure without overwriting an existing .gitignore", async () => {
    const s = await initialized();
    await writeFile(join(repoDir, ".gitignore"), "mine\n");
    await writeFile(join(repoDir, "blocked.log"), '{"id":"b-x","content":"keep"}\n');
    const { rm } = await import("node:fs/promises");
    await rm(join(repoDir, "playbook.yaml"));
    const d = await s.diagnose();
    expect(check(d, "Repo .cass/ Structure", "Structure").message).toBe("Partial setup. Missing: playbook.yaml");
    expect(await s.applyFix("missing-repo-cass-dir")).toMatchObject({ success: true, message: `Created ${join(repoDir, "playbook.yaml")}` });
    expect(await readFile(join(repoDir, ".gitignore"), "utf8")).toBe("mine\n");
    expect(await readFile(join(repoDir, "blocked.log"), "utf8")).toBe('{"id":"b-x","content":"keep"}\n');
  });

  it("warns about private files readable by others and restricts them without changing contents", async () => {
    const s = await initialized();
    const cfg = join(globalDir, "config.json");
    const before = await readFile(cfg, "utf8");
    await chmod(cfg, 0o644);
    const d = await s.diagnose();
    expect(check(d, "Global Storage", "Permissions")).toMatchObject({ status: "warn", message: "Readable by other users: config.json (0644); expected 0600" });
    expect(ids(d.fixableIssues)).toEqual(["fix-file-permissions"]);
    expect(await s.applyFix("fix-file-permissions")).toMatchObject({ success: true, message: "Restricted config.json (0644 → 0600)" });
    expect((await stat(cfg)).mode & 0o777).toBe(0o600);
    expect(await readFile(cfg, "utf8")).toBe(before);
    expect((await s.applyFix("fix-file-permissions")).message).toBe("File permissions already private");
  });
});

describe("lock debris", () => {
  it("removes only locks and temp files whose writer is gone, and keeps unfinished writes", async () => {
    const s = await initialized();
    const playbook = join(globalDir, "playbook.yaml");
    const blocked = join(globalDir, "blocked.log");
    const config = join(globalDir, "config.json");
    // abandoned: holder pid is dead
    const dead = `${playbook}.lock.d`;
    await mkdir(dead);
    await writeFile(join(dead, "pid"), String(deadPid()));
    await writeFile(join(dead, "owner"), "gone");
    // stale: no pid recorded and older than the threshold
    const stale = join(repoDir, "blocked.log.lock.d");
    await mkdir(stale);
    await age(stale, 120_000);
    // held right now by this process: in use, must stay
    const held = await acquireLock(config);
    // orphan temp identical to its file → deleted
    const sameTemp = `${blocked}.tmp.0123456789abcdef`;
    await writeFile(sameTemp, await readFile(blocked));
    await age(sameTemp, 120_000);
    // orphan temp with an unfinished write → kept as <file>.recovered.<ms>
    const diffTemp = `${playbook}.tmp.fedcba9876543210`;
    await writeFile(diffTemp, "schema_version: 2\nbullets: []\n# newer\n");
    await age(diffTemp, 120_000);
    // recent temp: a write may be in progress
    const freshTemp = join(repoDir, "playbook.yaml.tmp.00000000000000aa");
    await writeFile(freshTemp, "partial");

    try {
      const d = await s.diagnose();
      const debris = check(d, "Locks", "Lock debris");
      expect(debris.status).toBe("warn");
      expect(debris.message).toBe(
        "Found 2 abandoned locks, 2 orphan temp files: blocked.log.tmp.0123456789abcdef, playbook.yaml.lock.d, playbook.yaml.tmp.fedcba9876543210, blocked.log.lock.d",
      );
      expect(ids(d.fixableIssues)).toEqual(["remove-lock-debris"]);

      const result = await s.applyFix("remove-lock-debris");
      expect(result.success).toBe(true);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(sameTemp)).toBe(false);
      expect(existsSync(diffTemp)).toBe(false);
      const recovered = (await readdir(globalDir)).filter((n) => n.startsWith("playbook.yaml.recovered."));
      expect(recovered).toHaveLength(1);
      expect(await readFile(join(globalDir, recovered[0]!), "utf8")).toContain("# newer");
      expect(result.message).toContain(`kept unfinished writes as ${diffTemp} → ${join(globalDir, recovered[0]!)}`);
      // untouched: the lock in use and the recent temp file
      expect(existsSync(held.lockDir)).toBe(true);
      expect(existsSync(freshTemp)).toBe(true);

      const after = await s.diagnose();
      expect(check(after, "Locks", "Lock debris")).toMatchObject({ status: "pass", message: "No debris (2 lock/temp files in use)" });
      expect(after.fixableIssues).toEqual([]);
      expect(await s.applyFix("remove-lock-debris")).toEqual({ id: "remove-lock-debris", success: true, message: "No lock debris left" });
    } finally {
      await held.release();
    }
  });

  it("does not remove an old temp file while its file's lock is held by a live process", async () => {
    const s = await initialized();
    const playbook = join(globalDir, "playbook.yaml");
    const held = await acquireLock(playbook);
    const temp = `${playbook}.tmp.1111111111111111`;
    await writeFile(temp, "x");
    await age(temp, 120_000);
    try {
      const d = await s.diagnose();
      expect(check(d, "Locks", "Lock debris").status).toBe("pass");
      expect(d.fixableIssues).toEqual([]);
      await s.applyFix("remove-lock-debris");
      expect(existsSync(temp)).toBe(true);
    } finally {
      await held.release();
    }
  });
});

describe("audit journal", () => {
  it("passes a well-formed journal and warns about malformed or torn lines", async () => {
    const s = await initialized();
    await s.mutatePlaybook("global", (pb, tx) => {
      pb.bullets.push({ id: "b-j1", category: "c", content: "journaled", createdAt: NOW, updatedAt: NOW } as never);
      tx.journal([{ id: "e-1", timestamp: NOW, operation: "add", change: "created", bulletId: "b-j1", layer: "global", actor: "test", hashBefore: null, hashAfter: "abc" }]);
    });
    const journal = join(globalDir, "events.jsonl");
    expect(check(await s.diagnose(), "Audit Journal", "Global events.jsonl")).toMatchObject({ status: "pass", message: "1 event, all well-formed" });

    await writeFile(journal, (await readFile(journal, "utf8")) + '{"id":"e-2"}\nnot json\n{"id":"e-3","timest');
    const d = await s.diagnose();
    const c = check(d, "Audit Journal", "Global events.jsonl");
    expect(c.status).toBe("warn");
    expect(c.message).toBe("3 malformed lines (lines 2, 3, 4); the last line is torn; they are skipped when reading");
    expect(c.details).toMatchObject({ events: 1, malformedLines: [2, 3, 4] });
  });
});
