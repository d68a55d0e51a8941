import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { markOperation } from "../src/operations/mark.js";
import { playbookCategoryOperation, playbookPinOperation } from "../src/operations/playbook-pin.js";
import {
  computeContextLog,
  computeDuplicates,
  computeOverview,
  computeRisk,
  computeRules,
  computeRuns,
  computeScoreSeries,
  dashboardRule,
  paginate,
  SCORE_SERIES_MAX_POINTS,
} from "../src/dashboard/read-model.js";
import { defaultConfig } from "../src/schemas/config.js";
import type { Bullet, Playbook } from "../src/schemas/playbook.js";
import { createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const NOW = new Date("2026-06-01T00:00:00.000Z");
const DAY = 86_400_000;
const config = defaultConfig();
const daysAgo = (n: number) => new Date(NOW.getTime() - n * DAY).toISOString();

function events(spec: Array<["helpful" | "harmful", number]>): Bullet["feedbackEvents"] {
  return spec.map(([type, ago]) => ({ type, timestamp: daysAgo(ago) }));
}

function playbookOf(bullets: Bullet[]): Playbook {
  return { schema_version: 2, bullets } as unknown as Playbook;
}

/** Effective score computed here independently: Σ 0.5^(age/90) helpful − 4 × Σ harmful, × maturity multiplier. */
function expectedScore(b: Bullet, at = NOW): number {
  let h = 0;
  let x = 0;
  for (const e of b.feedbackEvents) {
    const age = (at.getTime() - Date.parse(e.timestamp)) / DAY;
    const w = Math.pow(0.5, age / 90);
    if (e.type === "helpful") h += w;
    else x += w;
  }
  const mult = { candidate: 0.5, established: 1, proven: 1.5, deprecated: 0 }[b.maturity];
  return (h - 4 * x) * mult;
}

function seeded(): Bullet[] {
  return [
    createTestBullet({ id: "r-good", content: "Run the unit tests before every commit", category: "testing", maturity: "proven", state: "active", feedbackEvents: events([["helpful", 1], ["helpful", 3], ["helpful", 40]]), helpfulCount: 3, createdAt: daysAgo(100) }),
    createTestBullet({ id: "r-bad", content: "Always force push to main after rebasing", category: "git", maturity: "established", state: "active", feedbackEvents: events([["harmful", 2], ["helpful", 10]]), helpfulCount: 1, harmfulCount: 1, createdAt: daysAgo(50) }),
    createTestBullet({ id: "r-stale", content: "Prefer tabs in makefiles", category: "build", feedbackEvents: events([["helpful", 200]]), helpfulCount: 1, createdAt: daysAgo(300) }),
    createTestBullet({ id: "r-dup1", content: "Use pnpm for installing workspace packages quickly", category: "tooling", createdAt: daysAgo(5) }),
    createTestBullet({ id: "r-dup2", content: "Use pnpm for installing workspace packages quickly always", category: "tooling", createdAt: daysAgo(4) }),
    createTestBullet({ id: "r-exp", content: "The staging database moves next month", category: "ops", validTo: new Date(NOW.getTime() + 10.5 * DAY).toISOString(), createdAt: daysAgo(3) }),
    createTestBullet({ id: "r-old", content: "Deprecated rule about yarn", category: "tooling", maturity: "deprecated", deprecated: true, createdAt: daysAgo(20), tags: ["legacy"] }),
  ];
}

describe("dashboard read model", () => {
  it("overview counts and the score histogram match independently computed values", () => {
    const bullets = seeded();
    const o = computeOverview(playbookOf(bullets), NOW, config);
    expect(o.counts.total).toBe(7);
    expect(o.counts.active).toBe(6);
    expect(o.counts.byMaturity).toEqual({ proven: 1, established: 1, candidate: 4, deprecated: 1 });
    expect(o.counts.byCategory).toEqual({ testing: 1, git: 1, build: 1, tooling: 3, ops: 1 });
    const active = bullets.filter((b) => !b.deprecated);
    expect(o.scoreHistogram.reduce((s, b) => s + b.count, 0)).toBe(active.length);
    for (const b of active) {
      const s = expectedScore(b);
      const bin = o.scoreHistogram.find((x) => (x.from === null || s >= x.from) && (x.to === null || s < x.to))!;
      expect(bin.count).toBeGreaterThan(0);
    }
    // r-bad: helpful 10 days ago, harmful 2 days ago → negative → bin [-5,-2)
    expect(expectedScore(bullets[1]!)).toBeLessThan(-2);
    expect(o.scoreHistogram.find((x) => x.from === -5)!.count).toBe(1);
    expect(o.feedback).toEqual({ helpful: 5, harmful: 1, last7Days: { helpful: 2, harmful: 1 } });
  });

  it("rules: search, filters, sort and pagination", () => {
    const pb = playbookOf(seeded());
    const all = computeRules(pb, NOW, config, { limit: 500 });
    expect(all.total).toBe(7);
    const scores = all.items.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
    expect(all.items[0]!.id).toBe("r-good");
    expect(all.items[0]!.score).toBe(Number(expectedScore(seeded()[0]!).toFixed(2)));
    expect(computeRules(pb, NOW, config, { q: "PNPM" }).items.map((r) => r.id).sort()).toEqual(["r-dup1", "r-dup2"]);
    expect(computeRules(pb, NOW, config, { q: "legacy" }).items.map((r) => r.id)).toEqual(["r-old"]);
    expect(computeRules(pb, NOW, config, { state: "deprecated" }).items.map((r) => r.id)).toEqual(["r-old"]);
    expect(computeRules(pb, NOW, config, { category: "tooling", sort: "created", order: "asc" }).items.map((r) => r.id)).toEqual(["r-old", "r-dup1", "r-dup2"]);
    const page = computeRules(pb, NOW, config, { offset: 2, limit: 2, sort: "harmful" });
    expect(page).toMatchObject({ total: 7, offset: 2, limit: 2 });
    expect(page.items).toHaveLength(2);
    expect(() => paginate([], { limit: 501 })).toThrow(/limit/);
    expect(() => computeRules(pb, NOW, config, { sort: "nope" as never })).toThrow(/sort/);
  });

  it("risk lists use the stats/stale definitions", () => {
    const r = computeRisk(playbookOf(seeded()), NOW, config);
    expect(r.atRisk.map((x) => x.id)).toEqual(["r-bad"]);
    expect(r.stale.map((x) => x.id)).toEqual(["r-stale"]);
    expect(r.stale[0]!.daysSinceFeedback).toBe(200);
    expect(r.expiring.map((x) => [x.id, x.expiresInDays])).toEqual([["r-exp", 10]]);
    expect(r.totals).toEqual({ atRisk: 1, stale: 1, expiring: 1 });
    const many = playbookOf(Array.from({ length: 12 }, (_, i) => createTestBullet({ id: `s-${String(i).padStart(2, "0")}`, createdAt: daysAgo(100 + i) })));
    const capped = computeRisk(many, NOW, config, "cm", 5);
    expect(capped.stale.map((x) => x.id)).toEqual(["s-11", "s-10", "s-09", "s-08", "s-07"]);
    expect(capped.totals.stale).toBe(12);
    expect(() => computeRisk(many, NOW, config, "cm", 0)).toThrow(/limit/);
  });

  it("duplicates and conflicts", () => {
    const d = computeDuplicates(playbookOf(seeded()), NOW, config);
    expect(d.pairs.map((p) => [p.a.id, p.b.id].sort())).toEqual([["r-dup1", "r-dup2"]]);
    expect(d.pairs[0]!.similarity).toBeGreaterThanOrEqual(0.8);
    const c = computeDuplicates(
      playbookOf([
        createTestBullet({ id: "c1", content: "Always run database migrations in the deploy script" }),
        createTestBullet({ id: "c2", content: "Never run database migrations in the deploy script" }),
        createTestBullet({ id: "c3", content: "Write release notes by hand" }),
      ]),
      NOW,
      config,
    );
    expect(c.conflicts.map((x) => [x.a.id, x.b.id].sort())).toEqual([["c1", "c2"]]);
  });

  it("score series: sampled at events and evenly up to now, decayed, ≤ 200 points", () => {
    const b = seeded()[0]!;
    const series = computeScoreSeries(b, NOW, config);
    expect(series.length).toBeLessThanOrEqual(SCORE_SERIES_MAX_POINTS);
    expect(series.at(-1)).toEqual({ at: NOW.toISOString(), score: Number(expectedScore(b).toFixed(2)) });
    for (const e of b.feedbackEvents) expect(series.some((p) => p.at === e.timestamp)).toBe(true);
    const at40 = series.find((p) => p.at === daysAgo(40))!;
    expect(at40.score).toBe(1.5); // only the event of that instant, undecayed, × proven 1.5
  });

  it("runs and context log", () => {
    const runs = computeRuns(
      [
        { type: "run", runId: "run-1", startedAt: daysAgo(3), finishedAt: daysAgo(3), mode: "deterministic", sessions: ["s1"] },
        { type: "run", runId: "run-2", startedAt: daysAgo(1), finishedAt: daysAgo(1), mode: "llm", sessions: [] },
        { type: "revert", runId: "run-1", revertedAt: daysAgo(2) },
      ],
      [
        { id: "e1", timestamp: daysAgo(3), operation: "curate", change: "created", bulletId: "a", layer: "global", actor: "cm", runId: "run-1", hashBefore: null, hashAfter: "x" },
        { id: "e2", timestamp: daysAgo(3), operation: "curate", change: "feedback", bulletId: "b", layer: "global", actor: "cm", runId: "run-1", hashBefore: "y", hashAfter: "y" },
        { id: "e3", timestamp: daysAgo(1), operation: "curate", change: "deprecated", bulletId: "c", layer: "global", actor: "cm", runId: "run-2", hashBefore: "z", hashAfter: "z" },
      ],
    );
    expect(runs.map((r) => [r.runId, r.added, r.updated, r.removed, r.reverted])).toEqual([
      ["run-2", [], [], ["c"], false],
      ["run-1", ["a"], ["b"], [], true],
    ]);
    const log = computeContextLog(
      [
        { task: "first", ruleIds: ["r-good"], antiPatternIds: [], timestamp: daysAgo(5) },
        { task: "second", ruleIds: ["r-good", "r-bad", "gone"], antiPatternIds: [], timestamp: daysAgo(2.5) },
        "not a record",
      ],
      playbookOf(seeded()),
    );
    expect(log.total).toBe(2);
    expect(log.items.map((e) => e.task)).toEqual(["second", "first"]);
    expect(log.items[0]!.returned.find((r) => r.id === "gone")!.content).toBeNull();
    expect(log.items[0]!.markedAfter).toEqual([{ id: "r-bad", type: "harmful", at: daysAgo(2) }, { id: "r-good", type: "helpful", at: daysAgo(1) }]);
    expect(log.items[1]!.markedAfter).toEqual([{ id: "r-good", type: "helpful", at: daysAgo(3) }]);
  });

  it("dashboardRule reads the journal and 404s an unknown id", async () => {
    const store = createMemoryStore({ repo: false });
    const deps = createTestDeps(store);
    await store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "r-1", content: "Rule one" })));
    await runOperation(markOperation, deps, { bulletId: "r-1", helpful: true });
    const detail = await dashboardRule(deps, "r-1");
    expect(detail.events).toHaveLength(1);
    expect(detail.journal.map((j) => j.op)).toEqual(["feedback"]);
    await expectAppError(dashboardRule(deps, "nope"), "BULLET_NOT_FOUND");
  });
});

describe("playbook pin / category operations", () => {
  async function setup() {
    const store = createMemoryStore({ repo: false });
    const deps = createTestDeps(store);
    await store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "r-1", content: "Rule one", category: "general" })));
    return { store, deps };
  }

  it("pins with a reason, unpins, and journals both as updates", async () => {
    const { store, deps } = await setup();
    expect(await runOperation(playbookPinOperation, deps, { bulletId: "r-1", pinned: true, reason: "core team rule" })).toEqual({
      bulletId: "r-1",
      pinned: true,
      pinnedReason: "core team rule",
      changed: true,
    });
    let bullet = (await store.readPlaybook("global"))!.bullets[0]!;
    expect([bullet.pinned, bullet.pinnedReason]).toEqual([true, "core team rule"]);
    expect((await runOperation(playbookPinOperation, deps, { bulletId: "r-1", pinned: true })).changed).toBe(false);
    expect(await runOperation(playbookPinOperation, deps, { bulletId: "r-1", pinned: false })).toEqual({ bulletId: "r-1", pinned: false, changed: true });
    bullet = (await store.readPlaybook("global"))!.bullets[0]!;
    expect(bullet.pinned).toBe(false);
    expect(bullet.pinnedReason).toBeUndefined();
    const journal = await store.readJournal("global");
    expect(journal.map((e) => [e.operation, e.change, e.after])).toEqual([
      ["update", "updated", { pinned: true, pinnedReason: "core team rule" }],
      ["update", "updated", { pinned: false, pinnedReason: null }],
    ]);
    await expectAppError(runOperation(playbookPinOperation, deps, { bulletId: "zzz", pinned: true }), "BULLET_NOT_FOUND");
    await expectAppError(runOperation(playbookPinOperation, deps, { bulletId: "r-1", pinned: false, reason: "x" }), "INVALID_INPUT");
  });

  it("changes the category and refuses empty or oversized ones", async () => {
    const { store, deps } = await setup();
    expect(await runOperation(playbookCategoryOperation, deps, { bulletId: "r-1", category: " testing " })).toEqual({
      bulletId: "r-1",
      previousCategory: "general",
      category: "testing",
      changed: true,
    });
    expect((await store.readPlaybook("global"))!.bullets[0]!.category).toBe("testing");
    const journal = await store.readJournal("global");
    expect(journal.at(-1)).toMatchObject({ operation: "update", before: { category: "general" }, after: { category: "testing" } });
    await expectAppError(runOperation(playbookCategoryOperation, deps, { bulletId: "r-1", category: "  " }), "INVALID_INPUT");
    await expectAppError(runOperation(playbookCategoryOperation, deps, { bulletId: "r-1", category: "x".repeat(200) }), "INVALID_INPUT");
  });
});
