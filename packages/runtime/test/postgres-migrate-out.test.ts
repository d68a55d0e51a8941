import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { isAppError, type AppError, type StoreSection, type StoreTransfer } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { createRuntime, type Runtime } from "../src/runtime.js";
import { closeAllStores } from "../src/storage/backend.js";
import { migrateStorage, type MigrateProgressEvent } from "../src/storage/migrate.js";
import { storageStatus } from "../src/storage/status.js";
import { startTestServer, type TestServer } from "./postgres-server.js";
import { tempDir } from "./helpers.js";

/**
 * `cm storage migrate --to yaml|sqlite` out of PostgreSQL, through the runtime against a real
 * server: the original cm's directory (plus diaries, costs and processed logs) goes YAML →
 * PostgreSQL → YAML and, on a second machine, PostgreSQL → SQLite, reading back the same in every
 * section; the database keeps its rows; a write to the database during the copy stops the switch.
 * Each test uses its own schema of one server.
 */

const FIXTURE = fileURLToPath(new URL("../../../fixtures/original-home", import.meta.url));

let server: TestServer;
let root: string;
let cleanup: () => void;
let schemaCount = 0;
const runtimes: Runtime[] = [];

beforeAll(async () => {
  server = await startTestServer({ database: "cm_migrate_out_test" });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => {
  const t = tempDir("cm-pg-out-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.close();
  closeAllStores();
  cleanup();
});

interface Machine {
  home: string;
  globalDir: string;
  repo: string;
}

/** A "machine": its own home, a clone of one repository (same origin remote), storage settings in config.json. */
function machine(name: string, storage: Record<string, unknown>): Machine {
  const home = join(root, name);
  const globalDir = join(home, ".cass-memory");
  const repo = join(home, "work", "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(repo, ".git", "config"), '[remote "origin"]\n\turl = git@github.com:acme/app.git\n');
  mkdirSync(globalDir, { recursive: true });
  writeFileSync(join(globalDir, "config.json"), JSON.stringify({ storage }, null, 2));
  return { home, globalDir, repo };
}

async function runtime(m: Machine, env: Record<string, string> = {}): Promise<Runtime> {
  const rt = await createRuntime({ env: { HOME: m.home, CASS_MEMORY_LLM: "none", CASS_MEMORY_DATABASE_URL: server.url, ...env }, cwd: m.repo, stderr: () => {} });
  runtimes.push(rt);
  return rt;
}

function transferOf(rt: Runtime): StoreTransfer {
  const transfer = rt.deps.store.transfer;
  if (transfer === undefined) throw new Error("no transfer");
  return transfer;
}

async function readAll(rt: Runtime): Promise<StoreSection[]> {
  const transfer = transferOf(rt);
  const sections: StoreSection[] = [];
  for (const key of await transferOf(rt).listSections()) sections.push(await transfer.readSection(key));
  return sections;
}

async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

/** The original cm's directory and repository layer, plus data of every other section kind. */
async function seed(m: Machine): Promise<void> {
  for (const name of readdirSync(join(FIXTURE, "home", ".cass-memory"))) {
    if (name !== "config.json") cpSync(join(FIXTURE, "home", ".cass-memory", name), join(m.globalDir, name), { recursive: true });
  }
  cpSync(join(FIXTURE, "repo", ".cass"), join(m.repo, ".cass"), { recursive: true });
  const rt = await runtime(m);
  expect(rt.storage.backend).toBe("yaml");
  const store = rt.deps.store;
  await store.mutatePlaybook("repo", (pb, tx) => {
    for (let i = 0; i < 20; i++) pb.bullets.push(createTestBullet({ id: `b-out-${i}`, content: `Repo rule ${i}: run the integration tests — ü ✓`, helpfulCount: i % 4 }));
    tx.journal([{ id: "e-out-1", timestamp: "2026-01-05T00:00:00.000Z", operation: "add", change: "created", bulletId: "b-out-0", layer: "repo", actor: "test", hashBefore: null, hashAfter: null }]);
  });
  for (let n = 0; n < 3; n++) {
    await store.writeDiary({
      id: `diary-${n.toString(16).padStart(16, "0")}`,
      sessionPath: `/home/dev/.claude/projects/app/s-${n}.jsonl`,
      timestamp: new Date(Date.UTC(2026, 0, 2 + n)).toISOString(),
      agent: "claude",
      duration: 60 * n,
      status: "success",
      accomplishments: [`Shipped change ${n}`],
      decisions: [],
      challenges: [],
      preferences: [],
      keyLearnings: [`learning ${n}`],
      relatedSessions: [],
      tags: ["t"],
      searchAnchors: [],
    });
  }
  await store.costs.record({ provider: "anthropic", model: "claude-test", tokensIn: 1000, tokensOut: 100, cost: 0.5, timestamp: "2026-01-20T10:00:00.000Z" });
  await store.appendProcessedSessions("ws-1a2b3c4d", [{ sessionPath: "/ws/s-2.jsonl", processedAt: "2026-01-07T00:00:00.000Z", deltasGenerated: 0 }]);
}

describe("storage migrate out of PostgreSQL", () => {
  it("yaml → postgres → yaml, and postgres → sqlite on a second machine: every section reads back the same; the database keeps its rows", async () => {
    const storage = { postgres: { schema: `out_${++schemaCount}` } };
    const a = machine("machine-a", storage);
    await seed(a);
    const original = await readAll(await runtime(a));
    const keys = original.map((s) => s.key);
    expect(keys).toEqual(expect.arrayContaining(["global/playbook", "global/blocked", "repo/playbook", "repo/journal", "diaries", "costs", "onboarding", "processed/global", "processed/ws-1a2b3c4d"]));

    const into = await migrateStorage(await runtime(a), { to: "postgres" });
    expect(into.status).toBe("migrated");

    // Back out to YAML: planned first (nothing written), then staged, verified and switched.
    const pg = await runtime(a);
    expect(pg.storage.backend).toBe("postgres");
    const planned = await migrateStorage(pg, { to: "yaml", dryRun: true });
    expect(planned).toMatchObject({ status: "planned", from: "postgres", to: "yaml", layers: ["global", "repo"] });
    expect(planned.sections.total).toBe(keys.length);
    expect(existsSync(join(a.globalDir, ".migrate-yaml"))).toBe(false);
    const events: MigrateProgressEvent[] = [];
    const out = await migrateStorage(await runtime(a), { to: "yaml", onProgress: (e) => void events.push(e) });
    expect(out).toMatchObject({ status: "migrated", from: "postgres", to: "yaml", backendBefore: "postgres", layers: ["global", "repo"], resumed: false });
    expect(out.verified?.sections).toBe(keys.length);
    expect(out.message).toMatch(/database .* was left as it was/);
    expect(out.message).not.toContain(decodeURIComponent(new URL(server.url).password));
    expect(events.filter((e) => e.phase === "copy")).toHaveLength(keys.length);
    expect(events.filter((e) => e.phase === "verify")).toHaveLength(keys.length);
    // The YAML files left from before the move into PostgreSQL were moved aside, not overwritten.
    expect(out.backups.map((b) => b.layer).sort()).toEqual(["global", "repo"]);
    expect(JSON.parse(readFileSync(join(a.globalDir, "config.json"), "utf8")).storage).toMatchObject({ backend: "yaml", postgres: storage.postgres });
    expect(existsSync(join(a.globalDir, ".migrate-yaml"))).toBe(false);
    expect(existsSync(join(a.repo, ".cass", ".migrate-yaml"))).toBe(false);

    const yaml = await runtime(a);
    expect(yaml.storage.backend).toBe("yaml");
    expect(await readAll(yaml)).toEqual(original);
    const status = await storageStatus(yaml);
    expect(status.migration.last).toMatchObject({ from: "postgres", to: "yaml", sourceChangedSince: false });
    expect(status.migration.unfinished).toEqual([]);

    // The database was not touched: a machine still on postgres reads the same memory.
    const b = machine("machine-b", { backend: "postgres", ...storage });
    const pgB = await runtime(b);
    expect(await readAll(pgB)).toEqual(original);

    // Machine B leaves for SQLite.
    const toSqlite = await migrateStorage(pgB, { to: "sqlite" });
    expect(toSqlite).toMatchObject({ status: "migrated", from: "postgres", to: "sqlite", layers: ["global", "repo"] });
    expect(toSqlite.backups).toEqual([]);
    const sqlite = await runtime(b);
    expect(sqlite.storage.backend).toBe("sqlite");
    expect(await readAll(sqlite)).toEqual(original);
    expect(existsSync(join(b.globalDir, "cass-memory.sqlite"))).toBe(true);
    expect(existsSync(join(b.repo, ".cass", "cass-memory.sqlite"))).toBe(true);
  }, 240_000);

  it("a write to the database while sections are copied: nothing is switched, and the next run starts over and includes it", async () => {
    const storage = { backend: "postgres", postgres: { schema: `out_${++schemaCount}` } };
    const a = machine("writer-race", storage);
    const team = await runtime(a);
    await team.deps.store.mutatePlaybook("global", (pb) => {
      for (let i = 0; i < 5; i++) pb.bullets.push(createTestBullet({ id: `b-race-${i}` }));
    });
    await team.deps.store.appendLog("global", "outcomes", [{ sessionId: "s1", outcome: "success" }]);
    const other = await runtime(machine("other-machine", storage));
    let wrote = false;
    const error = await appErrorOf(
      migrateStorage(await runtime(a), {
        to: "sqlite",
        onProgress: async (e) => {
          if (e.phase === "copy" && !wrote) {
            wrote = true;
            await other.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-race-late" })));
          }
        },
      }),
    );
    expect(error.code).toBe("LOCK_ACQUISITION_FAILED");
    expect(error.hint).toMatch(/starts over/);
    expect(JSON.parse(readFileSync(join(a.globalDir, "config.json"), "utf8")).storage.backend).toBe("postgres");
    expect(existsSync(join(a.globalDir, "cass-memory.sqlite"))).toBe(false);
    // The staging and its progress stay; the rerun sees the changed counter and starts over.
    expect(existsSync(join(a.globalDir, ".migrate-sqlite", "progress.json"))).toBe(true);
    const rerun = await migrateStorage(await runtime(a), { to: "sqlite" });
    expect(rerun).toMatchObject({ status: "migrated", resumed: false, restarted: expect.stringMatching(/database changed/) });
    const sqlite = await runtime(a);
    expect((await sqlite.deps.store.readPlaybook("global"))?.bullets.map((b) => b.id)).toContain("b-race-late");
    rmSync(join(a.globalDir, "backups"), { recursive: true, force: true });
  }, 120_000);
});
