import { describe, expect, it } from "vitest";
import { migrateSections, summarizeSection, verifySections } from "../src/storage/migrate.js";
import type { StoreSection, StoreTransfer } from "../src/storage/transfer.js";
import type { Layer, Store } from "../src/ports.js";
import { createMemoryStore, createTestBullet, type MemoryStore } from "../src/testing.js";

const T0 = "2025-03-01T10:00:00.000Z";

function journalEvent(id: string, bulletId: string, layer: Layer) {
  return { id, timestamp: T0, operation: "playbook:add", change: "add", bulletId, layer, actor: "test", hashBefore: null, hashAfter: "0123456789abcdef" };
}

/** A memory store holding something in every kind of section, in both layers. */
async function populated(): Promise<MemoryStore> {
  const store = createMemoryStore({ now: () => T0 });
  for (const layer of ["global", "repo"] as const) {
    await store.mutatePlaybook(layer, (playbook, tx) => {
      for (let i = 0; i < 3; i++) {
        playbook.bullets.push(createTestBullet({ id: `b-${layer}-${i}`, content: `${layer} rule number ${i}`, helpfulCount: i, tags: ["t", layer] }));
      }
      tx.journal([journalEvent(`e-${layer}`, `b-${layer}-0`, layer)]);
    });
    await store.appendBlocked(layer, [{ id: `blocked-${layer}`, content: "never do this", reason: "harmful", forgottenAt: T0 } as never]);
    await store.appendLog(layer, "outcomes", [{ sessionId: `s-${layer}`, outcome: "success", recordedAt: T0 }]);
    await store.appendLog(layer, "context-log", [{ task: "a task", ruleIds: [`b-${layer}-1`], timestamp: T0 }]);
  }
  await store.writeDiary({
    id: "diary-0001",
    sessionPath: "/sessions/a.jsonl",
    timestamp: T0,
    agent: "claude",
    status: "success",
    accomplishments: ["did it"],
    decisions: [],
    challenges: [],
    preferences: [],
    keyLearnings: ["learned"],
    tags: [],
    searchAnchors: [],
    relatedSessions: [],
  } as never);
  await store.appendProcessedSessions("global", [{ sessionPath: "/sessions/a.jsonl", processedAt: T0, diaryId: "diary-0001", deltasGenerated: 2 }]);
  await store.appendProcessedSessions("ws-0a1b2c3d", [{ sessionPath: "/sessions/b.jsonl", processedAt: T0, deltasGenerated: 0 }]);
  // A fresh onboarding state is created and stored.
  await store.mutateOnboardingState(() => undefined, { nowIso: T0 });
  await store.costs.record({ provider: "anthropic", model: "m", tokensIn: 10, tokensOut: 5, cost: 0.01, timestamp: T0 });
  return store;
}

function transferOf(store: Store): StoreTransfer {
  if (store.transfer === undefined) throw new Error("the store has no transfer");
  return store.transfer;
}

describe("migrateSections + verifySections", () => {
  it("copies every section of a populated store and the copy verifies equal", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    const keys = await transferOf(source).listSections();
    expect(keys).toEqual(expect.arrayContaining(["global/playbook", "repo/playbook", "global/journal", "repo/blocked", "repo/log/outcomes", "diaries", "processed/global", "processed/ws-0a1b2c3d", "onboarding", "costs"]));

    const seen: Array<{ key: string; index: number; total: number; records: number }> = [];
    const result = await migrateSections(transferOf(source), transferOf(target), {
      completed: new Set(),
      onSection: (p) => void seen.push({ key: p.key, index: p.index, total: p.total, records: p.records }),
    });
    expect(result.keys).toEqual(keys);
    expect(result.copied.map((s) => s.key)).toEqual(keys);
    expect(result.alreadyCompleted).toEqual([]);
    expect(seen.map((s) => s.index)).toEqual(keys.map((_, i) => i + 1));
    expect(seen.every((s) => s.total === keys.length)).toBe(true);
    expect(seen.find((s) => s.key === "global/playbook")?.records).toBe(3);

    const verified = await verifySections(transferOf(source), transferOf(target));
    expect(verified.differences).toEqual([]);
    expect(verified.keys).toEqual(keys);

    // The copy is real: the target answers the port's reads like the source.
    expect((await target.readPlaybook("repo"))?.bullets.map((b) => b.id)).toEqual(["b-repo-0", "b-repo-1", "b-repo-2"]);
    expect(await target.readLog("global", "outcomes")).toEqual(await source.readLog("global", "outcomes"));
    expect(await target.readJournal("global")).toEqual(await source.readJournal("global"));
    expect((await target.listDiaries()).map((d) => d.id)).toEqual(["diary-0001"]);
    expect(await target.readProcessedSessions("ws-0a1b2c3d")).toEqual(await source.readProcessedSessions("ws-0a1b2c3d"));
    expect((await target.costs.totals()).allTime).toBeCloseTo(0.01);
  });

  it("skips completed sections, and verification then names them as different", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    const keys = await transferOf(source).listSections();
    const done = new Set([keys[0] as string, "diaries"]);
    const seen: string[] = [];
    const result = await migrateSections(transferOf(source), transferOf(target), { completed: done, onSection: (p) => void seen.push(p.key) });
    expect(result.alreadyCompleted).toEqual([keys[0], "diaries"]);
    expect(seen).toEqual(keys.filter((k) => !done.has(k)));
    expect(await target.readPlaybook("global")).toBeNull();

    const verified = await verifySections(transferOf(source), transferOf(target));
    expect(verified.differences.map((d) => d.key).sort()).toEqual(["diaries", "global/playbook"]);
    const playbook = verified.differences.find((d) => d.key === "global/playbook");
    expect(playbook).toMatchObject({ path: "playbook", target: "null", sourceRecords: 3, targetRecords: 0 });
  });

  it("reports where a section's data differ", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    await migrateSections(transferOf(source), transferOf(target), { completed: new Set() });
    await target.mutatePlaybook("global", (playbook) => {
      (playbook.bullets[1] as { helpfulCount: number }).helpfulCount = 42;
    });
    await target.appendLog("repo", "outcomes", [{ sessionId: "extra" }]);
    const verified = await verifySections(transferOf(source), transferOf(target));
    expect(verified.differences.map((d) => d.key)).toEqual(["global/playbook", "repo/log/outcomes"]);
    expect(verified.differences[0]).toMatchObject({ path: "playbook.bullets[1].helpfulCount", source: "1", target: "42" });
    expect(verified.differences[1]).toMatchObject({ path: "records[1]", source: "(missing)", sourceRecords: 1, targetRecords: 2 });
  });

  it("copies only the given keys and compares only the included ones", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    const repoKeys = (await transferOf(source).listSections()).filter((k) => k.startsWith("repo/"));
    const result = await migrateSections(transferOf(source), transferOf(target), { completed: new Set(), keys: repoKeys });
    expect(result.copied.map((s) => s.key)).toEqual(repoKeys);
    expect(await target.readPlaybook("global")).toBeNull();
    expect((await target.readPlaybook("repo"))?.bullets).toHaveLength(3);
    const repoOnly = await verifySections(transferOf(source), transferOf(target), { include: (k) => k.startsWith("repo/") });
    expect(repoOnly.differences).toEqual([]);
    const all = await verifySections(transferOf(source), transferOf(target));
    expect(all.differences.length).toBeGreaterThan(0);
  });

  it("does not carry unreadable lines over, and reports them instead of a difference", async () => {
    const source = await populated();
    source.appendRawLogLine("global", "outcomes", "{ this is not json\n");
    const target = createMemoryStore({ now: () => T0 });
    const result = await migrateSections(transferOf(source), transferOf(target), { completed: new Set() });
    expect(result.copied.find((s) => s.key === "global/log/outcomes")).toMatchObject({ records: 1, skipped: 1 });
    const verified = await verifySections(transferOf(source), transferOf(target));
    expect(verified.differences).toEqual([]);
    expect(verified.skipped).toEqual({ "global/log/outcomes": 1 });
  });

  it("waits for onSection before reading the next section (progress saved there is exact)", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    const events: string[] = [];
    const inner = transferOf(source);
    const watched: StoreTransfer = {
      listSections: () => inner.listSections(),
      readSection: async (key) => {
        events.push(`read ${key}`);
        return inner.readSection(key);
      },
      writeSection: (section) => transferOf(target).writeSection(section),
    };
    const keys = (await inner.listSections()).slice(0, 3);
    await migrateSections(watched, transferOf(target), {
      completed: new Set(),
      keys,
      onSection: async (p) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`saved ${p.key}`);
      },
    });
    expect(events).toEqual(keys.flatMap((k) => [`read ${k}`, `saved ${k}`]));
  });

  it("stops at a failing write, leaving the sections before it reported", async () => {
    const source = await populated();
    const target = createMemoryStore({ now: () => T0 });
    const keys = await transferOf(source).listSections();
    const failing: StoreTransfer = {
      ...transferOf(target),
      writeSection: async (section: StoreSection) => {
        if (section.key === keys[2]) throw new Error("disk full");
        return transferOf(target).writeSection(section);
      },
    };
    const saved: string[] = [];
    await expect(migrateSections(transferOf(source), failing, { completed: new Set(), onSection: (p) => void saved.push(p.key) })).rejects.toThrow("disk full");
    expect(saved).toEqual(keys.slice(0, 2));
    // Resuming with what was saved copies the rest and ends equal.
    await migrateSections(transferOf(source), transferOf(target), { completed: new Set(saved) });
    expect((await verifySections(transferOf(source), transferOf(target))).differences).toEqual([]);
  });

  it("summarizes what a section holds", () => {
    expect(summarizeSection({ key: "costs", kind: "costs", months: { "2025-01": [{}, {}] as never, "2025-02": [{}] as never }, totals: null, skipped: 2 })).toEqual({
      key: "costs",
      kind: "costs",
      records: 3,
      skipped: 2,
    });
    expect(summarizeSection({ key: "onboarding", kind: "onboarding", state: null })).toMatchObject({ records: 0 });
    expect(summarizeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: null })).toMatchObject({ records: 0 });
  });
});
