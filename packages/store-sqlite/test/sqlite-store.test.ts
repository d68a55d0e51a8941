import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAppError, type AppError, type Layer } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { LayerDatabase } from "../src/database.js";
import { APPLICATION_ID, DATABASE_FILE, MIGRATIONS, SCHEMA_VERSION, ftsQueryOf } from "../src/index.js";
import { closeStores, makeStore, runWorker, tempDir, testLogger, withDb } from "./helpers.js";

const NOW = "2026-01-02T03:04:05.678Z";
const bullet = (id: string, extra: Record<string, unknown> = {}) => createTestBullet({ id, category: "general", content: `Rule ${id}`, createdAt: NOW, updatedAt: NOW, ...extra });

async function appError(promise: Promise<unknown>): Promise<AppError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(isAppError(caught), String(caught)).toBe(true);
  return caught as AppError;
}

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let repoDir = "";
const store = (extra: Record<string, unknown> = {}) => makeStore({ globalDir, repoDir, ...extra });
const dbPath = (layer: Layer = "global") => join(layer === "global" ? globalDir : repoDir, DATABASE_FILE);

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  globalDir = join(dir, "home", ".cass-memory");
  repoDir = join(dir, "repo", ".cass");
});
afterEach(async () => {
  closeStores();
  await cleanup();
});

describe("database setup", () => {
  it("creates each layer's database in WAL mode with the schema recorded", async () => {
    const s = store();
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-1")));
    await s.mutatePlaybook("repo", (pb) => void pb.bullets.push(bullet("b-2")));
    expect(s.databases).toEqual({ global: dbPath("global"), repo: dbPath("repo") });
    expect(s.locations.globalPlaybook).toBe(dbPath("global"));
    for (const layer of ["global", "repo"] as const) {
      expect(await s.schemaVersion(layer)).toBe(SCHEMA_VERSION);
      expect((await stat(dbPath(layer))).mode & 0o777).toBe(0o600);
      const raw = new Database(dbPath(layer), { readonly: true });
      try {
        expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
        expect(raw.pragma("application_id", { simple: true })).toBe(APPLICATION_ID);
        expect(raw.pragma("user_version", { simple: true })).toBe(SCHEMA_VERSION);
        expect(raw.prepare("SELECT version, name FROM schema_migrations ORDER BY version").all()).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name })));
        expect(raw.prepare("SELECT value FROM meta WHERE key = 'layer'").pluck().get()).toBe(layer);
      } finally {
        raw.close();
      }
    }
  });

  it("uses synchronous FULL by default and NORMAL when asked, with foreign keys on", () => {
    for (const [mode, expected] of [["full", 2], ["normal", 1]] as const) {
      const ldb = new LayerDatabase({ path: join(dir, `${mode}.sqlite`), layer: "global", logger: testLogger(), busyTimeoutMs: 1000, lockTimeoutMs: 1000, synchronous: mode });
      ldb.connection(true);
      expect(ldb.read((db) => db.pragma("synchronous", { simple: true }), null)).toBe(expected);
      expect(ldb.read((db) => db.pragma("foreign_keys", { simple: true }), null)).toBe(1);
      ldb.close();
    }
  });

  it("applies migrations once: reopening and concurrent first opens keep one record per migration", async () => {
    await Promise.all(Array.from({ length: 4 }, (_, p) => runWorker(["mutate", globalDir, JSON.stringify({ index: p, perProcess: 1 })], `open ${p}`)));
    for (let i = 0; i < 3; i += 1) {
      const s = store();
      expect((await s.readPlaybook("global"))?.bullets).toHaveLength(4);
      s.close();
    }
    const rows = withDb(dbPath(), "global", (db) => db.prepare("SELECT version FROM schema_migrations").pluck().all());
    expect(rows).toEqual(MIGRATIONS.map((m) => m.version));
  });

  it("processes opening a new database at the same moment all see one cass-memory database (8 processes, 5 rounds)", async () => {
    // Regression: a process that read the header before another one's schema creation committed, and
    // the table count after it, took the new database for a foreign one (PLAYBOOK_CORRUPT).
    for (let round = 0; round < 5; round += 1) {
      const roundDir = join(dir, `round-${round}`);
      await Promise.all(Array.from({ length: 8 }, (_, p) => runWorker(["mutate", roundDir, JSON.stringify({ index: p, perProcess: 1 })], `round ${round} open ${p}`)));
      const ids = withDb(join(roundDir, DATABASE_FILE), "global", (db) => db.prepare("SELECT id FROM bullets ORDER BY id").pluck().all());
      expect(ids).toEqual(Array.from({ length: 8 }, (_, p) => `proc-${p}-0`));
    }
  });

  it("opening waits while another process holds the new database locked, up to the lock timeout", async () => {
    await mkdir(globalDir, { recursive: true });
    const holdFor = async (ms: number, during: () => void): Promise<void> => {
      const readyFile = join(dir, `ready-${ms}`);
      const holder = runWorker(["hold", dbPath(), JSON.stringify({ ms, readyFile })], "holder");
      while (!existsSync(readyFile)) await new Promise((resolve) => setTimeout(resolve, 10));
      during();
      await holder;
    };
    // A busy timeout far shorter than the hold: only the open-time retries bridge it.
    const open = (lockTimeoutMs: number) => new LayerDatabase({ path: dbPath(), layer: "global", logger: testLogger(), busyTimeoutMs: 5, lockTimeoutMs, synchronous: "full" });
    await holdFor(400, () => {
      const short = open(50);
      let caught: unknown;
      try {
        short.connection(true);
      } catch (error) {
        caught = error;
      }
      expect(isAppError(caught) && caught.code, String(caught)).toBe("LOCK_ACQUISITION_FAILED");
      short.close();
    });
    const userVersion = () => {
      const raw = new Database(dbPath(), { readonly: true });
      try {
        return raw.pragma("user_version", { simple: true });
      } finally {
        raw.close();
      }
    };
    expect(userVersion()).toBe(0);
    await holdFor(300, () => {
      const patient = open(10_000);
      expect(patient.connection(true)).not.toBeNull();
      patient.close();
    });
    expect(userVersion()).toBe(SCHEMA_VERSION);
  });

  it("reads of a missing database create nothing (not even the repo's .cass/)", async () => {
    const s = store();
    expect(await s.readPlaybook("repo")).toBeNull();
    expect(await s.readLog("repo", "outcomes")).toEqual({ records: [], malformed: 0 });
    expect(await s.readBlocked("repo")).toEqual([]);
    expect(await s.removeBlocked("repo", ["b-1"])).toBe(0);
    expect((await s.layerStatus("repo")).present).toEqual([]);
    expect(await s.readJournal("global")).toEqual([]);
    expect(await s.listDiaries()).toEqual([]);
    expect(await s.schemaVersion("global")).toBeNull();
    expect(await s.searchBulletCandidates("global", "anything", 5)).toEqual([]);
    expect(existsSync(repoDir)).toBe(false);
    expect(existsSync(dbPath())).toBe(false);
  });

  it("refuses a database of a newer schema with CONFIG_INVALID and leaves it untouched", async () => {
    const first = store();
    await first.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-1")));
    first.close();
    withDb(dbPath(), "global", (db) => db.pragma(`user_version = ${SCHEMA_VERSION + 1}`));
    const before = await readFile(dbPath());
    const s = store();
    const error = await appError(s.readPlaybook("global"));
    expect(error.code).toBe("CONFIG_INVALID");
    expect(error.message).toContain(`schema version ${SCHEMA_VERSION + 1}`);
    expect(error.hint).toMatch(/upgrade cm/);
    let called = false;
    expect((await appError(s.mutatePlaybook("global", () => void (called = true)))).code).toBe("CONFIG_INVALID");
    expect(called).toBe(false);
    expect(await readFile(dbPath())).toEqual(before);
  });

  it("refuses a file that is not a database with PLAYBOOK_CORRUPT, and never changes it", async () => {
    await mkdir(globalDir, { recursive: true });
    const garbage = "this is not a database\n".repeat(300);
    await writeFile(dbPath(), garbage);
    const s = store();
    for (const attempt of [
      () => s.readPlaybook("global"),
      () => s.mutatePlaybook("global", () => undefined),
      () => s.appendLog("global", "outcomes", [{ a: 1 }]),
      () => s.appendBlocked("global", [{ id: "b", content: "x" }]),
      () => s.initialize("global", { overwrite: false, nowIso: NOW }),
      () => s.initialize("global", { overwrite: true, nowIso: NOW }),
      () => s.costs.record({ provider: "p", model: "m", tokensIn: 1, tokensOut: 1, cost: 1, timestamp: NOW }),
    ]) {
      const error = await appError(attempt());
      expect(error.code).toBe("PLAYBOOK_CORRUPT");
      expect(error.message).toMatch(new RegExp(`^Playbook at ${dbPath().replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is invalid: not a readable SQLite database`));
      expect(error.hint).toContain("left untouched");
      expect(error.details?.path).toBe(dbPath());
    }
    expect(await readFile(dbPath(), "utf8")).toBe(garbage);
    expect((await readdir(globalDir)).sort()).toEqual([DATABASE_FILE]);
    // The repo layer has a database of its own and is unaffected.
    await s.mutatePlaybook("repo", (pb) => void pb.bullets.push(bullet("b-repo")));
    expect((await s.readPlaybook("repo"))?.bullets.map((b) => b.id)).toEqual(["b-repo"]);
  });

  it("refuses a SQLite database that is not cass-memory's", async () => {
    await mkdir(globalDir, { recursive: true });
    const other = new Database(dbPath());
    other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL); INSERT INTO invoices VALUES (1, 9.5);");
    other.close();
    const before = await readFile(dbPath());
    const error = await appError(store().mutatePlaybook("global", () => undefined));
    expect(error.code).toBe("PLAYBOOK_CORRUPT");
    expect(error.message).toContain("not one of cass-memory");
    expect(await readFile(dbPath())).toEqual(before);
  });

  it("opens a new database when the file was removed behind its back, instead of writing to the removed one", async () => {
    const s = store();
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-old")));
    for (const suffix of ["", "-wal", "-shm"]) await rm(dbPath() + suffix, { force: true });
    expect(await s.readPlaybook("global")).toBeNull();
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-new")));
    expect((await store().readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-new"]);
  });
});

describe("writes", () => {
  it("rewrites only the bullet rows that changed, keeping the others' rows", async () => {
    const s = store();
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(...["a", "b", "c", "d"].map((id) => bullet(id))));
    const rowsOf = () =>
      withDb(dbPath(), "global", (db) => Object.fromEntries((db.prepare("SELECT id, row, body FROM bullets").all() as Array<{ id: string; row: number; body: string }>).map((r) => [r.id, r])));
    const before = rowsOf();
    await s.mutatePlaybook("global", (pb) => {
      const c = pb.bullets.find((b) => b.id === "c");
      if (c) c.helpfulCount = 5;
      pb.bullets = pb.bullets.filter((b) => b.id !== "b");
      pb.bullets.splice(1, 0, bullet("new"));
    });
    const after = rowsOf();
    expect((await s.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["a", "new", "c", "d"]);
    expect(after.a).toEqual(before.a);
    expect(after.d).toEqual(before.d);
    expect(after.c?.row).toBe(before.c?.row);
    expect(after.c?.body).not.toBe(before.c?.body);
    expect(after.b).toBeUndefined();
  });

  it("keeps any order through inserts, moves, removals and repeated ids", async () => {
    const s = store();
    let expected: string[] = [];
    let seed = 7;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 40; round += 1) {
      const next = [...expected];
      for (let op = 0; op < 5; op += 1) {
        const kind = random(5);
        if (kind <= 1 || next.length === 0) next.splice(random(next.length + 1), 0, `r${round}-${op}`);
        else if (kind === 2) next.splice(random(next.length), 1);
        else if (kind === 3) {
          const [moved] = next.splice(random(next.length), 1);
          next.splice(random(next.length + 1), 0, moved as string);
        } else next.splice(random(next.length + 1), 0, next[random(next.length)] as string);
      }
      await s.mutatePlaybook("global", (pb) => {
        const pool = new Map<string, typeof pb.bullets>();
        for (const b of pb.bullets) pool.set(b.id, [...(pool.get(b.id) ?? []), b]);
        pb.bullets = next.map((id) => pool.get(id)?.shift() ?? bullet(id));
      });
      expected = next;
      expect((await store().readPlaybook("global"))?.bullets.map((b) => b.id), `round ${round}`).toEqual(expected);
    }
    const distinctPositions = () => withDb(dbPath(), "global", (db) => db.prepare("SELECT count(DISTINCT pos) = count(*) FROM bullets").pluck().get());
    // Many inserts at the same spot exhaust the gap between two positions and renumber.
    for (let i = 0; i < 15; i += 1) {
      await s.mutatePlaybook("global", (pb) => void pb.bullets.splice(1, 0, bullet(`squeeze-${i}`)));
      expected.splice(1, 0, `squeeze-${i}`);
      // The order is carried by the positions alone, never by ties.
      expect(distinctPositions(), `squeeze ${i}`).toBe(1);
    }
    expect((await s.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(expected);
  });

  it("a write made from inside a mutation joins its transaction, and is undone with it", async () => {
    const s = store();
    await s.mutatePlaybook("global", async (pb) => {
      await s.appendLog("global", "outcomes", [{ n: 1 }]);
      pb.bullets.push(bullet("b-1"));
    });
    await expect(
      s.mutatePlaybook("global", async (pb) => {
        await s.appendLog("global", "outcomes", [{ n: 2 }]);
        pb.bullets.push(bullet("b-2"));
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect((await s.readLog("global", "outcomes")).records).toEqual([{ n: 1 }]);
    expect((await s.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-1"]);
  });

  it("waits for the write lock without blocking the event loop, then fails with LOCK_ACQUISITION_FAILED", async () => {
    const s = store({ lock: { timeoutMs: 300 } });
    await s.mutatePlaybook("global", () => undefined);
    const holder = new Database(dbPath());
    holder.exec("BEGIN IMMEDIATE");
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 10);
    try {
      const error = await appError(s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-late"))));
      expect(error.code).toBe("LOCK_ACQUISITION_FAILED");
      expect(error.retryable).toBe(true);
      expect(error.details?.path).toBe(dbPath());
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(timer);
      holder.exec("ROLLBACK");
      holder.close();
    }
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-now")));
    expect((await s.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-now"]);
  });

  it("initialize --force backs the database up as a complete copy before resetting", async () => {
    const s = store();
    await s.initialize("repo", { overwrite: false, nowIso: NOW });
    await s.mutatePlaybook("repo", (pb) => void pb.bullets.push(bullet("b-keep-in-backup")));
    await s.appendBlocked("repo", [{ id: "b-x", content: "blocked" }]);
    await s.appendLog("repo", "outcomes", [{ kept: true }]);
    const result = await s.initialize("repo", { overwrite: true, nowIso: NOW });
    expect(result.overwritten).toEqual(["playbook.yaml", "blocked.log"]);
    const backup = result.backups[0]?.backup as string;
    expect(result.backups).toEqual([
      { file: dbPath("repo"), backup },
      { file: dbPath("repo"), backup },
    ]);
    const copy = makeStore({ globalDir: join(dir, "other"), repoDir: null, path: backup });
    expect((await copy.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-keep-in-backup"]);
    expect((await copy.readBlocked("global")).map((e) => e.id)).toEqual(["b-x"]);
    // Logs are not part of a reset.
    expect((await s.readLog("repo", "outcomes")).records).toEqual([{ kept: true }]);
  });

  it("memoized reads return the same frozen playbook until a mutation changes it", async () => {
    const s = store({ memoizeReads: true });
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-1")));
    const first = await s.readPlaybook("global");
    expect(Object.isFrozen(first?.bullets[0])).toBe(true);
    expect(await s.readPlaybook("global")).toBe(first);
    await store().mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-2")));
    const second = await s.readPlaybook("global");
    expect(second).not.toBe(first);
    expect(second?.bullets.map((b) => b.id)).toEqual(["b-1", "b-2"]);
  });
});

describe("full-text candidates", () => {
  async function seed() {
    const s = store();
    await s.mutatePlaybook("global", (pb) => {
      pb.bullets.push(
        bullet("b-cache", { content: "Invalidate the caching layer after deploys", tags: ["redis"] }),
        bullet("b-auth", { content: "Refresh JWT tokens before they expire", category: "security", tags: ["auth", "jwt"] }),
        bullet("b-tests", { content: "Run the unit tests before pushing", category: "testing" }),
        bullet("b-old", { content: "Cache everything forever", deprecated: true, state: "retired", maturity: "deprecated" }),
      );
    });
    return s;
  }
  const ids = (found: Array<{ bullet: { id: string } }>) => found.map((c) => c.bullet.id);

  it("finds bullets by content (with stemming), tags and category, best match first", async () => {
    const s = await seed();
    expect(ids(await s.searchBulletCandidates("global", "cached responses", 10)).sort()).toEqual(["b-cache", "b-old"]);
    expect(ids(await s.searchBulletCandidates("global", "redis", 10))).toEqual(["b-cache"]);
    expect(ids(await s.searchBulletCandidates("global", "jwt", 10))).toEqual(["b-auth"]);
    expect(ids(await s.searchBulletCandidates("global", "security review", 10))).toEqual(["b-auth"]);
    const ranked = await s.searchBulletCandidates("global", "run unit tests before deploys", 10);
    expect(ranked[0]?.bullet.id).toBe("b-tests");
    expect(ranked.every((c, i) => i === 0 || (ranked[i - 1]?.score ?? 0) >= c.score)).toBe(true);
    expect(ranked[0]?.bullet).toEqual((await s.readPlaybook("global"))?.bullets.find((b) => b.id === "b-tests"));
  });

  it("filters inactive bullets on request, honours the limit, and survives FTS syntax in the query", async () => {
    const s = await seed();
    expect(ids(await s.searchBulletCandidates("global", "cache", 10, { activeOnly: true }))).toEqual(["b-cache"]);
    expect(await s.searchBulletCandidates("global", "the before", 1)).toHaveLength(1);
    expect(await s.searchBulletCandidates("global", "", 10)).toEqual([]);
    expect(await s.searchBulletCandidates("global", "tests", 0)).toEqual([]);
    for (const query of ['"unbalanced tests', "tests AND OR NOT", "NEAR(tests", "col:tests", "tests*", "-tests ^x"]) {
      expect(ids(await s.searchBulletCandidates("global", query, 10)), query).toContain("b-tests");
    }
    expect(ftsQueryOf('a "b" c-d')).toBe('"a" OR "b" OR "c" OR "d"');
  });

  it("stays in step with mutations and removals, per layer", async () => {
    const s = await seed();
    await s.mutatePlaybook("global", (pb) => {
      const auth = pb.bullets.find((b) => b.id === "b-auth");
      if (auth) {
        auth.content = "Rotate signing keys monthly";
        auth.tags = ["crypto"];
      }
      pb.bullets = pb.bullets.filter((b) => b.id !== "b-tests");
    });
    expect(await s.searchBulletCandidates("global", "jwt tokens", 10)).toEqual([]);
    expect(ids(await s.searchBulletCandidates("global", "rotating keys", 10))).toEqual(["b-auth"]);
    expect(ids(await s.searchBulletCandidates("global", "crypto", 10))).toEqual(["b-auth"]);
    // Feedback changes the record but not the indexed text.
    await s.mutatePlaybook("global", (pb) => {
      const auth = pb.bullets.find((b) => b.id === "b-auth");
      if (auth) auth.helpfulCount = 4;
    });
    expect((await s.searchBulletCandidates("global", "crypto", 10))[0]?.bullet.helpfulCount).toBe(4);
    expect(await s.searchBulletCandidates("global", "unit tests pushing", 10)).toEqual([]);
    expect(await s.searchBulletCandidates("repo", "rotate", 10)).toEqual([]);
    await s.mutatePlaybook("repo", (pb) => void pb.bullets.push(bullet("b-repo", { content: "Rotate the repo's deploy keys" })));
    expect(ids(await s.searchBulletCandidates("repo", "rotate", 10))).toEqual(["b-repo"]);
    await s.initialize("repo", { overwrite: true, nowIso: NOW });
    expect(await s.searchBulletCandidates("repo", "rotate", 10)).toEqual([]);
    // The index agrees with the table after all of this.
    withDb(dbPath(), "global", (db) => db.exec("INSERT INTO bullets_fts (bullets_fts, rank) VALUES ('integrity-check', 1)"));
  });
});

describe("files that stay files", () => {
  it("reads JSON starters, and YAML ones with the parser the host gives", async () => {
    await mkdir(join(globalDir, "starters", "custom"), { recursive: true });
    await writeFile(join(globalDir, "starters", "team.json"), JSON.stringify({ name: "team", bullets: [] }));
    await writeFile(join(globalDir, "starters", "custom", "mine.yaml"), "name: mine\n");
    await writeFile(join(globalDir, "starters", "broken.json"), "{ nope");
    await writeFile(join(globalDir, "starters", "notes.txt"), "ignored");
    const without = await store().readStarterFiles();
    expect(without.map((f) => [f.path.slice(globalDir.length + 1), f.data !== undefined])).toEqual([
      ["starters/broken.json", false],
      ["starters/team.json", true],
      ["starters/custom/mine.yaml", false],
    ]);
    expect(without[2]?.error).toContain("parseYaml");
    const parsed = await store({ parseYaml: (text: string) => ({ parsedFrom: text.trim() }) }).readStarterFiles();
    expect(parsed[2]?.data).toEqual({ parsedFrom: "name: mine" });
    expect(parsed[1]?.data).toEqual({ name: "team", bullets: [] });
  });

  it("exclusive uses the original's lock directory, so a lock held by another implementation excludes it", async () => {
    const lockDir = join(globalDir, "reflections", "global.processed.log.orchestrator.lock.d");
    await mkdir(lockDir, { recursive: true });
    await writeFile(join(lockDir, "owner"), "someone-else");
    await writeFile(join(lockDir, "pid"), String(process.ppid));
    const error = await appError(store().exclusive("global.processed.log.orchestrator", async () => "never", { waitMs: 50 }));
    expect(error.code).toBe("LOCK_ACQUISITION_FAILED");
    expect(error.details?.lock).toBe("global.processed.log.orchestrator");
    // A lock left by a dead process is taken over.
    await writeFile(join(lockDir, "pid"), "999999999");
    expect(await store().exclusive("global.processed.log.orchestrator", async () => "ran", { waitMs: 1000 })).toBe("ran");
    expect(existsSync(lockDir)).toBe(false);
  });
});

describe("diagnose", () => {
  const statusOf = (checks: Array<{ item: string; status: string }>, item: string) => checks.find((c) => c.item === item)?.status;

  it("reports a healthy store, and fixes a missing config and database", async () => {
    const s = store();
    await mkdir(globalDir, { recursive: true });
    const before = await s.diagnose();
    expect(before.fixableIssues.map((i) => i.id).sort()).toEqual(["missing-config", "missing-global-database"]);
    for (const issue of before.fixableIssues) expect((await s.applyFix(issue.id)).success).toBe(true);
    const after = await s.diagnose();
    expect(after.fixableIssues).toEqual([]);
    expect(after.checks.filter((c) => c.status !== "pass").map((c) => c.item)).toEqual([]);
    expect(statusOf(after.checks, "Global database")).toBe("pass");
    expect(after.checks.find((c) => c.item === "Global database")?.message).toContain(`Schema version ${SCHEMA_VERSION}, WAL, integrity ok`);
    expect((await s.layerStatus("global")).present.sort()).toEqual(["blocked.log", "config.json", "playbook.yaml", "usage.jsonl"]);
  });

  it("reports a damaged playbook row and an unreadable database without touching them", async () => {
    const s = store();
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-1")));
    await s.mutatePlaybook("repo", (pb) => void pb.bullets.push(bullet("b-2")));
    withDb(dbPath(), "global", (db) => db.prepare("UPDATE bullets SET body = '{' WHERE id = 'b-1'").run());
    s.close();
    await writeFile(dbPath("repo"), "garbage ".repeat(1000));
    for (const suffix of ["-wal", "-shm"]) await rm(dbPath("repo") + suffix, { force: true });
    const report = await store().diagnose();
    expect(statusOf(report.checks, "Global playbook")).toBe("fail");
    expect(statusOf(report.checks, "Repo database")).toBe("fail");
    expect(report.fixableIssues.filter((i) => i.safety === "manual").map((i) => i.id).sort()).toEqual(["corrupt-global-playbook", "unreadable-repo-database"]);
    expect(await readFile(dbPath("repo"), "utf8")).toBe("garbage ".repeat(1000));
  });
});
