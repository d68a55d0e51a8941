import { mkdtemp, rm } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as core from "@cass-memory/core";
import { createMemoryLogger } from "@cass-memory/core/testing";
// @ts-expect-error: plain JavaScript module of the benchmarks (no types)
import { generateBullets } from "../../../bench/scale/generate.mjs";
import { closeStores, makeStore } from "./helpers.js";

/**
 * The PostgreSQL candidate search follows the SQLite store's policy (common terms set aside, the
 * rest scored BM25-like, length-damped, active rules only): on the same generated playbook and the
 * relevance set's tasks, the candidate sets of the two stores must mostly agree. They cannot be
 * identical: the stores' stemmers differ (FTS5 porter vs PostgreSQL's english snowball, which also
 * drops stop words), so scores differ slightly near the cut.
 */

const RULES = 6_000;
const LIMIT = 200;
const TASK_COUNT = 24;

let root = "";
let tasks: string[] = [];
type Sqlite = core.Store & { candidates?: core.BulletCandidateIndex; close(): void };
let sqlite: Sqlite | null = null;
/** The built SQLite store (with its own better-sqlite3), for comparing candidate sets; not a dependency of this package. */
const SQLITE_STORE = new URL("../../store-sqlite/dist/index.js", import.meta.url).href;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cm-pg-vs-sqlite-"));
  const all = JSON.parse(readFileSync(new URL("../../../bench/relevance/tasks.json", import.meta.url), "utf8")) as Array<{ task: string }>;
  tasks = all.filter((_, i) => i % Math.max(1, Math.floor(all.length / TASK_COUNT)) === 0).slice(0, TASK_COUNT).map((t) => t.task);
}, 120_000);
afterAll(async () => {
  sqlite?.close();
  await closeStores();
  await rm(root, { recursive: true, force: true });
});

describe("candidate search, PostgreSQL next to SQLite", () => {
  it("chooses mostly the same candidates as the SQLite store on the same playbook", async () => {
    const bullets = generateBullets(core, RULES) as core.Bullet[];
    // A few rules that are inactive, to check both stores leave them out.
    const playbook = { ...core.createEmptyPlaybook("2026-11-23T00:00:00.000Z", "global"), bullets };
    const pgStore = makeStore({ globalDir: join(root, "pg", ".cass-memory"), repoDir: null });
    const { createSqliteStore } = (await import(SQLITE_STORE)) as { createSqliteStore(options: Record<string, unknown>): Sqlite };
    sqlite = createSqliteStore({ globalDir: join(root, "sqlite", ".cass-memory"), repoDir: null, logger: createMemoryLogger() });
    for (const store of [pgStore, sqlite]) await store.transfer?.writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook });

    const inactive = new Set(bullets.filter((b) => b.state === "retired" || b.maturity === "deprecated" || b.deprecated).map((b) => b.id));
    let shared = 0;
    let total = 0;
    const perTask: number[] = [];
    for (const task of tasks) {
      const query = { ...core.candidateQuery(task), limit: LIMIT };
      const fromPg = (await pgStore.candidates.readCandidates("global", query))?.bullets.map((b) => b.id) ?? [];
      const fromSqlite = (await sqlite.candidates?.readCandidates("global", query))?.bullets.map((b) => b.id) ?? [];
      expect(fromPg.length).toBeLessThanOrEqual(LIMIT);
      expect(fromPg.filter((id) => inactive.has(id))).toEqual([]);
      const inSqlite = new Set(fromSqlite);
      const both = fromPg.filter((id) => inSqlite.has(id)).length;
      shared += both;
      total += Math.max(fromSqlite.length, 1);
      perTask.push(both / Math.max(fromSqlite.length, 1));
    }
    const overall = shared / total;
    console.error(`[candidates-vs-sqlite] overlap ${(overall * 100).toFixed(1)}%, worst task ${(Math.min(...perTask) * 100).toFixed(1)}%`);
    expect(overall).toBeGreaterThanOrEqual(0.85);
    expect(Math.min(...perTask)).toBeGreaterThanOrEqual(0.4);
  }, 600_000);
});
