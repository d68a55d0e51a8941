import { cp, readFile, readdir } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CostEntry, DiaryEntry, JournalEvent, LogName, Store, StoreSection, StoreTransfer } from "@cass-memory/core";
import { createMemoryLogger, createTestBullet } from "@cass-memory/core/testing";
import { createSqliteStore, type SqliteStore } from "@cass-memory/store-sqlite";
import { createYamlStore } from "@cass-memory/store-yaml";
import { tempDir } from "./helpers.js";

/**
 * The migration's promise, across backends: the original cm's real `~/.cass-memory` (plus a
 * generated 1,000-rule playbook with feedback, diaries, logs, processed logs, costs and onboarding
 * state) copied YAML → SQLite → YAML section by section reads back the same in every section.
 */

const FIXTURE = fileURLToPath(new URL("../../../fixtures/original-home", import.meta.url));
const LOGS: readonly LogName[] = ["outcomes", "context-log", "traumas", "usage", "privacy-audit", "reflection-runs"];
const BULLETS = 1000;
const DIARIES = 150;

let root = "";
let cleanup: () => void = () => undefined;
let clock = new Date("2026-01-20T10:00:00.000Z");
const sqliteStores: SqliteStore[] = [];

beforeEach(() => {
  ({ path: root, cleanup } = tempDir("cm-transfer-roundtrip-"));
});
afterEach(() => {
  for (const store of sqliteStores.splice(0)) store.close();
  cleanup();
});

interface Dirs {
  globalDir: string;
  repoDir: string;
}
const dirsOf = (name: string): Dirs => ({ globalDir: join(root, name, "home", ".cass-memory"), repoDir: join(root, name, "repo", ".cass") });

function yamlStore(dirs: Dirs): Store {
  return createYamlStore({ ...dirs, logger: createMemoryLogger(), now: () => clock });
}

function sqliteStore(dirs: Dirs): SqliteStore {
  const store = createSqliteStore({ ...dirs, logger: createMemoryLogger(), now: () => clock, synchronous: "normal" });
  sqliteStores.push(store);
  return store;
}

function transferOf(store: Store): StoreTransfer {
  if (store.transfer === undefined) throw new Error("the store has no transfer");
  return store.transfer;
}

async function copyAll(from: Store, to: Store): Promise<string[]> {
  const keys = await transferOf(from).listSections();
  for (const key of keys) await transferOf(to).writeSection(await transferOf(from).readSection(key));
  return keys;
}

async function readAll(store: Store, keys: readonly string[]): Promise<StoreSection[]> {
  const sections: StoreSection[] = [];
  for (const key of keys) sections.push(await transferOf(store).readSection(key));
  return sections;
}

/** Every file below `dir` with its content (lock directories and the parse cache left out). */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(path: string): Promise<void> {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        if (!entry.name.endsWith(".lock.d") && entry.name !== ".cache") await walk(full);
      } else {
        out[relative(dir, full)] = await readFile(full, "utf8");
      }
    }
  }
  await walk(dir);
  return out;
}

function generatedDiary(n: number): DiaryEntry {
  return {
    id: `diary-${n.toString(16).padStart(16, "0")}`,
    sessionPath: `/home/dev/.claude/projects/app/gen-${n}.jsonl`,
    timestamp: new Date(Date.UTC(2026, 0, 1 + (n % 28), n % 24, (n * 13) % 60)).toISOString(),
    agent: ["claude", "codex", "gemini"][n % 3] as string,
    ...(n % 4 === 0 ? { workspace: "/home/dev/app" } : {}),
    duration: n % 5 === 0 ? null : n * 7,
    status: (["success", "failure", "mixed"] as const)[n % 3] as DiaryEntry["status"],
    accomplishments: [`Shipped change ${n} — “quoted” ✓`],
    decisions: n % 2 === 0 ? ["Keep retries idempotent"] : [],
    challenges: [],
    preferences: [],
    keyLearnings: [`learning ${n}: check the 🚀 path`],
    relatedSessions: n % 10 === 0 ? [{ sessionPath: "/home/dev/.codex/s.jsonl", agent: "codex", relevanceScore: 0.25, snippet: "retry" }] : [],
    tags: [`tag-${n % 7}`],
    searchAnchors: [],
  };
}

async function fill(store: Store): Promise<void> {
  await store.mutatePlaybook("global", (pb, tx) => {
    const events: JournalEvent[] = [];
    for (let i = 0; i < BULLETS; i += 1) {
      const id = `b-gen-${i.toString(36).padStart(4, "0")}`;
      pb.bullets.push(
        createTestBullet({
          id,
          category: ["testing", "debugging", "performance", "workflow"][i % 4],
          content: `Generated rule ${i}: prefer quokka${i} checks before deploy — ü ✓`,
          tags: [`t${i % 13}`, "generated"],
          helpfulCount: i % 5,
          harmfulCount: i % 3 === 0 ? 1 : 0,
          feedbackEvents: [
            ...Array.from({ length: i % 5 }, (_, k) => ({ type: "helpful" as const, timestamp: new Date(Date.UTC(2026, 0, 1, 0, k)).toISOString(), sessionPath: `/s/${i}-${k}.jsonl` })),
            ...(i % 3 === 0 ? [{ type: "harmful" as const, timestamp: "2026-01-05T00:00:00.000Z", reason: "caused_bug", decayedValue: 0.5 }] : []),
          ],
          ...(i % 50 === 0 ? { futureField: { kept: [i, null, "x"] } } : {}),
        }),
      );
      if (i % 10 === 0) {
        events.push({ id: `ev-${i}`, timestamp: "2026-01-05T00:00:00.000Z", operation: "add", change: "created", bulletId: id, layer: "global", actor: "generator", hashBefore: null, hashAfter: "0123456789abcdef" });
      }
    }
    tx.journal(events);
  });
  await store.mutatePlaybook("repo", (pb) => void pb.bullets.push(createTestBullet({ id: "b-repo-gen", content: "Repo rule: run the linter", category: "workflow" })));
  for (let n = 0; n < DIARIES; n += 1) await store.writeDiary(generatedDiary(n));
  for (const layer of ["global", "repo"] as const) {
    for (const log of LOGS) {
      await store.appendLog(layer, log, Array.from({ length: 40 }, (_, i) => ({ log, i, at: new Date(Date.UTC(2026, 0, 2, 0, i)).toISOString(), note: `entry ${i} é 🚀` })));
    }
    await store.appendBlocked(layer, [{ id: `b-blocked-${layer}`, content: "Never commit secrets", reason: "policy", forgottenAt: "2026-01-03T00:00:00.000Z" }]);
  }
  await store.appendProcessedSessions("global", [{ sessionPath: "/home/dev/.claude/projects/app/gen-1.jsonl", processedAt: "2026-01-06T00:00:00.000Z", diaryId: generatedDiary(1).id, deltasGenerated: 2 }]);
  await store.appendProcessedSessions("ws-1a2b3c4d", [{ sessionPath: "/ws/gen-2.jsonl", processedAt: "2026-01-07T00:00:00.000Z", deltasGenerated: 0 }]);
  await store.mutateOnboardingState((state) => {
    state.processedSessions.push({ path: "/home/dev/.claude/projects/app/gen-3.jsonl", processedAt: "2026-01-08T00:00:00.000Z", rulesExtracted: 4 });
  });
  const entry = (n: number): CostEntry => ({ provider: "anthropic", model: "claude-test", tokensIn: 1000 * n, tokensOut: 100 * n, cost: n / 32, timestamp: clock.toISOString() });
  clock = new Date("2026-01-20T10:00:00.000Z");
  for (let n = 1; n <= 5; n += 1) await store.costs.record(entry(n));
  clock = new Date("2026-02-03T10:00:00.000Z");
  for (let n = 6; n <= 8; n += 1) await store.costs.record(entry(n));
}

describe("storage transfer round trip: YAML → SQLite → YAML", () => {
  it("carries the original's directory plus a 1,000-rule playbook losslessly", async () => {
    const a = dirsOf("a");
    await cp(join(FIXTURE, "home"), join(root, "a", "home"), { recursive: true });
    await cp(join(FIXTURE, "repo"), join(root, "a", "repo"), { recursive: true });
    const source = yamlStore(a);
    const originalBullets = (await source.readPlaybook("global"))?.bullets.length ?? 0;
    expect(originalBullets).toBeGreaterThan(0);
    await fill(source);

    const keys = await transferOf(source).listSections();
    expect(keys).toEqual([
      "global/playbook",
      "global/journal",
      "global/blocked",
      ...LOGS.map((log) => `global/log/${log}`),
      "repo/playbook",
      "repo/blocked",
      ...LOGS.map((log) => `repo/log/${log}`),
      "diaries",
      "processed/global",
      "processed/ws-1a2b3c4d",
      "onboarding",
      "costs",
    ]);
    const sections = await readAll(source, keys);
    for (const section of sections) expect("skipped" in section ? section.skipped : 0, section.key).toBe(0);
    const before = { global: await snapshot(a.globalDir), repo: await snapshot(a.repoDir) };

    // YAML → SQLite
    const sqlite = sqliteStore(dirsOf("b"));
    expect(await copyAll(source, sqlite)).toEqual(keys);
    expect(await transferOf(sqlite).listSections()).toEqual(keys);
    expect(await readAll(sqlite, keys)).toEqual(sections);
    expect(await sqlite.readPlaybook("global")).toEqual(await source.readPlaybook("global"));
    expect(await sqlite.listDiaries()).toEqual(await source.listDiaries());
    expect((await sqlite.searchBulletCandidates("global", "quokka737", 5)).map((c) => c.bullet.id)).toEqual([`b-gen-${(737).toString(36).padStart(4, "0")}`]);

    // SQLite → YAML, twice (a rerun ends the same)
    const c = dirsOf("c");
    for (let round = 0; round < 2; round += 1) {
      const target = yamlStore(c);
      expect(await copyAll(sqlite, target)).toEqual(keys);
      expect(await transferOf(target).listSections()).toEqual(keys);
      expect(await readAll(target, keys)).toEqual(sections);
    }

    // The final YAML files read as the first ones, through every port method.
    const final = yamlStore(c);
    for (const layer of ["global", "repo"] as const) {
      expect(await final.readPlaybook(layer)).toEqual(await source.readPlaybook(layer));
      expect(await final.readJournal(layer)).toEqual(await source.readJournal(layer));
      expect(await final.readBlocked(layer)).toEqual(await source.readBlocked(layer));
      for (const log of LOGS) expect(await final.readLog(layer, log)).toEqual(await source.readLog(layer, log));
    }
    expect((await final.readPlaybook("global"))?.bullets).toHaveLength(originalBullets + BULLETS);
    expect(await final.listDiaries()).toEqual(await source.listDiaries());
    expect(await final.listDiaries()).toHaveLength(DIARIES);
    for (const log of ["global", "ws-1a2b3c4d"]) expect(await final.readProcessedSessions(log)).toEqual(await source.readProcessedSessions(log));
    expect(await final.readOnboardingState()).toEqual(await source.readOnboardingState());
    expect(await final.costs.totals()).toEqual(await source.costs.totals());
    // The original's own bullet, feedback events included, survived both hops.
    const original = (await final.readPlaybook("global"))?.bullets.find((b) => b.id === "b-mwrs7w7k-ujy1rs");
    expect(original?.feedbackEvents[4]).toMatchObject({ decayedValue: 1.3, context: "success, sentiment+" });

    // Reading for a migration changed nothing in the source.
    expect({ global: await snapshot(a.globalDir), repo: await snapshot(a.repoDir) }).toEqual(before);
  }, 120_000);
});
