import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { markOperation } from "../src/operations/mark.js";
import { similarOperation } from "../src/operations/similar.js";
import { staleOperation } from "../src/operations/stale.js";
import { statsOperation } from "../src/operations/stats.js";
import { topOperation } from "../src/operations/top.js";
import { whyOperation } from "../src/operations/why.js";
import {
  describeSimilarityMode,
  findMergeCandidates,
  findSimilar,
  keywordSimilarityScorer,
} from "../src/domain/similarity.js";
import { defaultConfig } from "../src/schemas/config.js";
import type { Bullet, FeedbackEvent } from "../src/schemas/playbook.js";
import type { Layer } from "../src/ports.js";
import { createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const NOW = "2026-06-01T00:00:00.000Z";
const DAY = 86_400_000;

function setup(options: { repo?: boolean } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? false, now: () => NOW });
  const deps = createTestDeps(store);
  deps.clock.set(NOW);
  return deps;
}

type Deps = ReturnType<typeof setup>;

async function seed(deps: Deps, bullets: Bullet[], layer: Layer = "global"): Promise<void> {
  await deps.store.mutatePlaybook(layer, (pb) => {
    pb.bullets.push(...bullets);
  });
}

/** An ISO timestamp `days` days before NOW (negative: after NOW). */
function ago(days: number): string {
  return new Date(Date.parse(NOW) - days * DAY).toISOString();
}

function events(type: "helpful" | "harmful", n: number, daysAgo = 0): FeedbackEvent[] {
  return Array.from({ length: n }, () => ({ type, timestamp: ago(daysAgo) }));
}

function bullet(id: string, content: string, extra: Partial<Bullet> = {}): Bullet {
  const helpful = extra.feedbackEvents?.filter((e) => e.type === "helpful").length ?? 0;
  const harmful = extra.feedbackEvents?.filter((e) => e.type === "harmful").length ?? 0;
  return createTestBullet({ id, content, createdAt: ago(10), updatedAt: ago(10), helpfulCount: helpful, harmfulCount: harmful, ...extra });
}


describe("stats", () => {
  it("reports an empty playbook with zero counts and empty lists", async () => {
    const stats = await runOperation(statsOperation, setup(), {});
    expect(stats).toEqual({
      total: 0,
      byScope: {},
      byState: {},
      byKind: {},
      scoreDistribution: { excellent: 0, good: 0, neutral: 0, atRisk: 0 },
      topPerformers: [],
      mostHelpful: [],
      atRiskCount: 0,
      staleCount: 0,
      staleThresholdDays: 90,
      expiredCount: 0,
      notYetValidCount: 0,
      mergeCandidates: [],
      semanticMergeCandidates: [],
    });
  });

  it("counts all bullets in total but only active ones in the health metrics", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-proven", "Run database migrations inside a transaction", { maturity: "proven", state: "active", feedbackEvents: events("helpful", 12) }),
      bullet("b-good", "Pin CI container images by digest", { maturity: "established", kind: "project_convention", feedbackEvents: events("helpful", 6) }),
      bullet("b-risk", "Cache auth tokens in a global variable", { maturity: "established", feedbackEvents: events("harmful", 1) }),
      bullet("b-old", "Prefer tabs for indentation", { createdAt: ago(200) }),
      bullet("b-gone", "Deprecated rule", { deprecated: true, maturity: "deprecated", state: "retired", scope: "workspace" }),
      bullet("b-expired", "Use the legacy deploy script", { validTo: ago(1), feedbackEvents: events("helpful", 20), maturity: "proven" }),
      bullet("b-future", "Use the new deploy script", { validFrom: ago(-3) }),
    ]);
    const stats = await runOperation(statsOperation, deps, {});
    expect(stats.total).toBe(7);
    expect(stats.byScope).toEqual({ global: 6, workspace: 1 });
    expect(stats.byState).toEqual({ active: 1, draft: 5, retired: 1 });
    expect(stats.byKind).toEqual({ workflow_rule: 6, project_convention: 1 });
    // proven 12×1.5 = 18 and expired proven 20×1.5 = 30 → excellent; 6 → good; −4 → at risk.
    expect(stats.scoreDistribution).toEqual({ excellent: 2, good: 1, neutral: 2, atRisk: 1 });
    expect(stats.atRiskCount).toBe(1);
    expect(stats.staleCount).toBe(1);
    expect(stats.expiredCount).toBe(1);
    expect(stats.notYetValidCount).toBe(1);
    // Rules outside their validity window (expired, not yet valid) are not top performers.
    expect(stats.topPerformers.map((t) => t.id)).toEqual(["b-proven", "b-good", "b-old", "b-risk"]);
    expect(stats.topPerformers[0]).toMatchObject({ score: 18, helpfulCount: 12 });
    expect(stats.mostHelpful.map((t) => t.id).slice(0, 2)).toEqual(["b-proven", "b-good"]);
    expect(stats.mostHelpful.some((t) => t.id === "b-expired")).toBe(false);
  });

  it("finds near-duplicate active bullets, newest first, capped at 10 pairs", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-a", "always run the unit tests before pushing to main", { createdAt: ago(30) }),
      bullet("b-b", "always run the unit tests before pushing to main branch", { createdAt: ago(20) }),
      bullet("b-c", "something entirely different about logging", { createdAt: ago(5) }),
      bullet("b-d", "always run the unit tests before pushing to main", { deprecated: true, maturity: "deprecated" }),
    ]);
    const stats = await runOperation(statsOperation, deps, {});
    expect(stats.mergeCandidates).toEqual([{ a: "b-b", b: "b-a", similarity: 0.9 }]);

    const many = Array.from({ length: 30 }, (_, i) => ({ id: `b-${i}`, content: "identical rule text here" }));
    expect(findMergeCandidates(many)).toHaveLength(10);
    // Only the first `maxScan` bullets are compared.
    expect(findMergeCandidates([{ id: "x", content: "a rule" }, { id: "y", content: "other" }, { id: "z", content: "a rule" }], { maxScan: 2 })).toEqual([]);
    expect(findMergeCandidates([{ id: "x", content: "!!" }, { id: "y", content: "??" }])).toEqual([]);
  });
});

describe("top", () => {
  it("ranks active, in-force bullets by effective score with the original's fields", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-low", "Low rule", { category: "Testing" }),
      bullet("b-high", "High rule", { category: "testing", maturity: "established", feedbackEvents: events("helpful", 3, 0), scope: "workspace" }),
      bullet("b-mid", "Mid rule", { category: "docs", feedbackEvents: events("helpful", 1, 45) }),
      bullet("b-dep", "Deprecated", { deprecated: true, maturity: "deprecated", feedbackEvents: events("helpful", 50) }),
      bullet("b-exp", "Expired", { validTo: ago(2), maturity: "proven", feedbackEvents: events("helpful", 50) }),
    ]);
    const top = await runOperation(topOperation, deps, {});
    expect(top.count).toBe(3);
    expect(top.filters).toEqual({ scope: "all", category: null });
    expect(top.bullets.map((b) => [b.rank, b.id])).toEqual([[1, "b-high"], [2, "b-mid"], [3, "b-low"]]);
    expect(top.bullets[0]).toEqual({
      rank: 1, id: "b-high", score: 3, content: "High rule", category: "testing", scope: "workspace", maturity: "established",
      feedback: { helpful: 3, harmful: 0 }, lastUsed: "just now",
    });
    expect(top.bullets[1]!.score).toBe(0.35); // 0.5 × 0.707… rounded to 2 decimals
    expect(top.bullets[2]!.lastUsed).toBe("Never");

    const two = await runOperation(topOperation, deps, { count: 2 });
    expect(two.bullets.map((b) => b.id)).toEqual(["b-high", "b-mid"]);
    const testing = await runOperation(topOperation, deps, { category: " TESTING " });
    expect(testing.filters.category).toBe("TESTING");
    expect(testing.bullets.map((b) => b.id)).toEqual(["b-high", "b-low"]);
    const ws = await runOperation(topOperation, deps, { scope: "Workspace" });
    expect(ws.filters.scope).toBe("workspace");
    expect(ws.bullets.map((b) => b.id)).toEqual(["b-high"]);
  });

  it("validates count, scope and category with the original's messages", async () => {
    const deps = setup();
    expect((await expectAppError(runOperation(topOperation, deps, { count: 0 }), "INVALID_INPUT")).message).toBe("count must be >= 1.");
    const frac = await expectAppError(runOperation(topOperation, deps, { count: 1.5 }), "INVALID_INPUT");
    expect(frac.message).toBe("count must be an integer.");
    expect(frac.hint).toMatch(/^Usage: cm top \[count\]/);
    const scope = await expectAppError(runOperation(topOperation, deps, { scope: "repo" }), "INVALID_INPUT");
    expect(scope.message).toBe("scope must be one of: global, workspace, all.");
    expect(scope.details).toMatchObject({ received: "repo", allowed: ["global", "workspace", "all"] });
    const cat = await expectAppError(runOperation(topOperation, deps, { category: "  " }), "INVALID_INPUT");
    expect(cat.message).toBe("category must be a non-empty string.");
  });
});

describe("stale", () => {
  it("lists active bullets without feedback for N days, most stale first, with recommendations", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-fresh", "Fresh", { feedbackEvents: events("helpful", 1, 3) }),
      bullet("b-100", "No feedback for 100 days", { createdAt: ago(100) }),
      bullet("b-200", "Old candidate", { createdAt: ago(300), feedbackEvents: [{ type: "helpful", timestamp: ago(250) }, { type: "harmful", timestamp: ago(200) }] }),
      bullet("b-130", "Low score", { createdAt: ago(130), maturity: "established" }),
      bullet("b-bad", "Harmful", { createdAt: ago(95), maturity: "established", feedbackEvents: events("harmful", 2, 91) }),
      bullet("b-good", "Good but stale", { maturity: "proven", feedbackEvents: events("helpful", 10, 92) }),
      bullet("b-dep", "Deprecated", { createdAt: ago(400), deprecated: true, maturity: "deprecated" }),
      bullet("b-ws", "Workspace stale", { createdAt: ago(99), scope: "workspace" }),
    ]);
    const stale = await runOperation(staleOperation, deps, {});
    expect(stale).toMatchObject({ threshold: 90, totalActive: 7, filters: { scope: "all" } });
    expect(stale.expiring).toBeUndefined();
    expect(stale.bullets.map((b) => [b.id, b.daysSinceLastFeedback])).toEqual([
      ["b-200", 200], ["b-130", 130], ["b-100", 100], ["b-ws", 99], ["b-good", 92], ["b-bad", 91],
    ]);
    expect(stale.count).toBe(6);
    const byId = Object.fromEntries(stale.bullets.map((b) => [b.id, b]));
    expect(byId["b-200"]!.lastFeedback).toEqual({ action: "harmful", timestamp: ago(200) });
    expect(byId["b-100"]!.lastFeedback).toEqual({ action: null, timestamp: null });
    expect(byId["b-200"]!.recommendation).toBe('Very stale candidate - consider deprecating if no longer relevant (cm playbook remove b-200 --reason "<why>")');
    expect(byId["b-130"]!.recommendation).toBe("Stale with low score - review for relevance (cm playbook get b-130)");
    expect(byId["b-bad"]!.recommendation).toBe('Consider: cm forget b-bad --reason "<why>" (negative score suggests harm)');
    expect(byId["b-good"]!.recommendation).toBe("Good score despite being stale - may still be valid, review periodically");
    expect(byId["b-100"]!.recommendation).toBe("Review for current relevance (cm playbook get b-100)");

    const all = await runOperation(staleOperation, deps, { days: 0 });
    expect(all.count).toBe(7);
    const ws = await runOperation(staleOperation, deps, { days: 0, scope: "workspace" });
    expect(ws).toMatchObject({ count: 1, totalActive: 1, filters: { scope: "workspace" } });
  });

  it("lists bullets expiring within N days with --expiring, and flags expired ones", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-soon", "Expires in 5 days", { validTo: ago(-5.5) }),
      bullet("b-today", "Expires in 3 hours", { validTo: new Date(Date.parse(NOW) + 3 * 3_600_000).toISOString(), validFrom: ago(30) }),
      bullet("b-later", "Expires in 40 days", { validTo: ago(-40) }),
      bullet("b-past", "Expired 100 days ago", { createdAt: ago(200), validTo: ago(100) }),
      bullet("b-none", "No window"),
      bullet("b-dep", "Deprecated", { validTo: ago(-1), deprecated: true, maturity: "deprecated" }),
    ]);
    const result = await runOperation(staleOperation, deps, { expiring: 30 });
    expect(result.expiring).toMatchObject({ withinDays: 30, count: 2 });
    expect(result.expiring!.bullets.map((b) => [b.id, b.expiresInDays])).toEqual([["b-today", 0], ["b-soon", 5]]);
    expect(result.expiring!.bullets[0]).toMatchObject({ validFrom: ago(30), scope: "global", maturity: "candidate", score: 0 });
    expect(result.expiring!.bullets[1]!.validFrom).toBeNull();
    // The normal listing still runs; the expired rule is in it with an expiry recommendation.
    expect(result.bullets.map((b) => b.id)).toEqual(["b-past"]);
    expect(result.bullets[0]!.recommendation).toBe(`Expired on ${ago(100).slice(0, 10)} - remove it or extend validTo (cm playbook remove b-past --reason "expired")`);

    const zero = await runOperation(staleOperation, deps, { expiring: 0 });
    expect(zero.expiring!.bullets.map((b) => b.id)).toEqual(["b-today"]);
    const err = await expectAppError(runOperation(staleOperation, deps, { expiring: -1 }), "INVALID_INPUT");
    expect(err.message).toBe("expiring must be >= 0.");
  });

  it("rejects negative days and unknown scopes", async () => {
    const deps = setup();
    const days = await expectAppError(runOperation(staleOperation, deps, { days: -5 }), "INVALID_INPUT");
    expect(days.message).toBe("days must be >= 0.");
    const scope = await expectAppError(runOperation(staleOperation, deps, { scope: "nope" }), "INVALID_INPUT");
    expect(scope.message).toContain("scope");
  });
});

describe("why", () => {
  it("explains a bullet: reasoning, quoted evidence, provenance, feedback and journal", async () => {
    const deps = setup();
    const sessions = Array.from({ length: 12 }, (_, i) => `/sessions/s${i}.jsonl`);
    await seed(deps, [
      bullet("b-why-1", "Check JWT expiry before debugging 401s", {
        createdAt: ago(40),
        reasoning: 'The agent saw "token expired" and later "clock skew" in the logs.',
        sourceSessions: sessions,
        evidence: [{ type: "session", uri: "/sessions/s1.jsonl", note: "first seen" }, { type: "code", uri: "src/auth.ts" }],
        verification: { type: "regex", pattern: "jwt\\.verify", path: "src/auth.ts", mode: "exists" },
        validFrom: ago(40),
        validTo: ago(-60),
      }),
    ]);
    for (let i = 0; i < 10; i++) {
      deps.clock.set(ago(9 - i));
      await runOperation(markOperation, deps, { bulletId: "b-why-1", helpful: i !== 4, harmful: i === 4, reason: i === 4 ? "wasted_time" : `ok ${i}`, session: `/s/${i}` });
    }
    deps.clock.set(NOW);

    const why = await runOperation(whyOperation, deps, { bulletId: "b-why-1" });
    expect(why.bullet).toMatchObject({ id: "b-why-1", category: "general", daysAgo: 40, createdAt: ago(40) });
    expect(why.reasoning).toContain("token expired");
    expect(why.evidence).toEqual(["token expired", "clock skew"]);
    expect(why.sourceSessions).toHaveLength(5);
    expect(why.sourceSessions[0]).toEqual({ path: "/sessions/s0.jsonl", date: null, snippet: null });
    expect(why.diaryEntries).toEqual([]);
    expect(why.feedbackHistory).toHaveLength(8);
    expect(why.feedbackHistory[0]).toEqual({ type: "helpful", timestamp: ago(0), sessionPath: "/s/9", context: "ok 9" });
    expect(why.feedbackHistory.find((f) => f.type === "harmful")).toMatchObject({ reason: "wasted_time", timestamp: ago(5) });
    expect(why.currentStatus).toMatchObject({ helpfulCount: 9, harmfulCount: 1 });
    expect(why.provenance).toEqual({
      evidence: [{ type: "session", uri: "/sessions/s1.jsonl", note: "first seen" }, { type: "code", uri: "src/auth.ts" }],
      verification: { type: "regex", pattern: "jwt\\.verify", path: "src/auth.ts", mode: "exists" },
      validFrom: ago(40),
      validTo: ago(-60),
      validity: "current",
    });
    expect(why.journal).toHaveLength(8);
    expect(why.journal[0]).toMatchObject({ timestamp: ago(0), operation: "feedback", change: "feedback", actor: "cm", layer: "global", source: "/s/9" });
    expect(why.journal.map((j) => j.timestamp)).toEqual([...why.journal.map((j) => j.timestamp)].sort().reverse());

    const verbose = await runOperation(whyOperation, deps, { bulletId: "b-why-1", verbose: true });
    expect(verbose.sourceSessions).toHaveLength(10);
    expect(verbose.feedbackHistory).toHaveLength(10);
    expect(verbose.journal).toHaveLength(10);
  });

  it("reports empty provenance, expired validity and the effectiveness label", async () => {
    const deps = setup();
    await seed(deps, [
      bullet("b-plain", "Plain rule"),
      bullet("b-expired", "Old rule", { validTo: ago(1), maturity: "established", feedbackEvents: events("helpful", 5) }),
      bullet("b-neg", "Bad rule", { maturity: "established", feedbackEvents: events("harmful", 1) }),
    ]);
    const plain = await runOperation(whyOperation, deps, { bulletId: "b-plain" });
    expect(plain).toMatchObject({ reasoning: null, evidence: [], sourceSessions: [], feedbackHistory: [], journal: [] });
    expect(plain.provenance).toEqual({ evidence: [], verification: null, validFrom: null, validTo: null, validity: "current" });
    expect(plain.currentStatus.effectiveness).toBe("Low");
    const expired = await runOperation(whyOperation, deps, { bulletId: "b-expired" });
    expect(expired.provenance.validity).toBe("expired");
    expect(expired.currentStatus.effectiveness).toBe("High");
    expect((await runOperation(whyOperation, deps, { bulletId: "b-neg" })).currentStatus.effectiveness).toBe("Negative");
  });

  it("resolves ids fuzzily, and reports ambiguous, missing and empty ids", async () => {
    const deps = setup({ repo: true });
    await seed(deps, [bullet("b-alpha-1", "A1"), bullet("b-alpha-2", "A2"), bullet("b-beta", "B")]);
    await seed(deps, [bullet("b-repo-only", "R")], "repo");
    await runOperation(markOperation, deps, { bulletId: "b-repo-only", helpful: true });
    expect((await runOperation(whyOperation, deps, { bulletId: "B-BETA" })).bullet.id).toBe("b-beta");
    expect((await runOperation(whyOperation, deps, { bulletId: "b-bet" })).bullet.id).toBe("b-beta");
    const repo = await runOperation(whyOperation, deps, { bulletId: "repo-only" });
    expect(repo.bullet.id).toBe("b-repo-only");
    expect(repo.journal.map((j) => j.layer)).toEqual(["repo"]);

    const ambiguous = await expectAppError(runOperation(whyOperation, deps, { bulletId: "alpha" }), "INVALID_INPUT");
    expect(ambiguous.message).toBe("Ambiguous bullet id: alpha");
    expect(ambiguous.hint).toBe("Matches: b-alpha-1, b-alpha-2");
    expect(ambiguous.details).toEqual({ bulletId: "alpha", matchCount: 2, matches: ["b-alpha-1", "b-alpha-2"] });
    const missing = await expectAppError(runOperation(whyOperation, deps, { bulletId: "zzz" }), "BULLET_NOT_FOUND");
    expect(missing.message).toBe("Bullet not found: zzz");
    expect(missing.exitCode).toBe(2);
    const empty = await expectAppError(runOperation(whyOperation, deps, { bulletId: "  " }), "MISSING_REQUIRED");
    expect(empty.message).toBe("Bullet ID is required");
    expect(empty.details).toEqual({ missing: "bulletId", usage: "cm why <bulletId>" });
  });
});

describe("similar", () => {
  it("finds active, in-force bullets by token Jaccard, best first", async () => {
    const deps = setup();
    const long = `run the unit tests before pushing ${"and keep going ".repeat(12)}`;
    await seed(deps, [
      bullet("b-exact", "run the unit tests before pushing"),
      bullet("b-close", "always run the unit tests before pushing", { scope: "workspace" }),
      bullet("b-far", "document the public API"),
      bullet("b-dep", "run the unit tests before pushing", { deprecated: true, maturity: "deprecated" }),
      bullet("b-exp", "run the unit tests before pushing", { validTo: ago(1) }),
      bullet("b-long", long),
    ]);
    const result = await runOperation(similarOperation, deps, { query: "  Run the unit tests before pushing ", threshold: 0.3 });
    expect(result.query).toBe("Run the unit tests before pushing");
    expect(result.mode).toBe("keyword");
    expect(result.results.map((r) => r.id)).toEqual(["b-exact", "b-close", "b-long"]);
    expect(result.results[0]).toMatchObject({ similarity: 1, category: "general", scope: "global", effectiveScore: 0, preview: "run the unit tests before pushing" });
    expect(result.results[1]!.similarity).toBeCloseTo(6 / 7, 10);
    const longPreview = result.results[2]!.preview;
    expect(longPreview.length).toBe(120);
    expect(longPreview.endsWith("...")).toBe(true);

    const defaults = await runOperation(similarOperation, deps, { query: "run the unit tests before pushing" });
    expect(defaults.results.map((r) => r.id)).toEqual(["b-exact", "b-close"]);
    const limited = await runOperation(similarOperation, deps, { query: "run the unit tests before pushing", limit: 1 });
    expect(limited.results.map((r) => r.id)).toEqual(["b-exact"]);
    const scoped = await runOperation(similarOperation, deps, { query: "run the unit tests before pushing", scope: "WORKSPACE" });
    expect(scoped.results.map((r) => r.id)).toEqual(["b-close"]);
  });

  it("validates its input with the original's messages and the query in details", async () => {
    const deps = setup();
    const cases: Array<[Parameters<typeof similarOperation.run>[1], string]> = [
      [{ query: "  " }, "Query is required"],
      [{ query: "x", limit: 0 }, "--limit must be an integer >= 1"],
      [{ query: "x", limit: 2.5 }, "--limit must be an integer >= 1"],
      [{ query: "x", threshold: 1.5 }, "--threshold must be between 0 and 1"],
      [{ query: "x", threshold: -0.1 }, "--threshold must be between 0 and 1"],
      [{ query: "x", scope: "repo" }, 'Invalid --scope "repo" (expected: global|workspace|all)'],
    ];
    for (const [input, message] of cases) {
      const error = await expectAppError(runOperation(similarOperation, deps, input), "INVALID_INPUT");
      expect(error.message).toBe(message);
      expect(error.details).toEqual({ query: input.query });
    }
  });

  it("keeps scoring behind a scorer interface, and describes the mode from the configuration", async () => {
    const scores = await keywordSimilarityScorer.score("node.js tests", [{ id: "a", content: "Node.js tests" }, { id: "b", content: "python" }]);
    expect([...scores]).toEqual([["a", 1], ["b", 0]]);
    const fixed = { mode: "keyword" as const, score: async () => new Map([["a", 0.5], ["b", 0.9], ["c", Number.NaN]]) };
    const found = await findSimilar("q", [{ id: "a", content: "" }, { id: "b", content: "" }, { id: "c", content: "" }], fixed, { threshold: 0.5, limit: 5 });
    expect(found.map((m) => [m.bullet.id, m.similarity])).toEqual([["b", 0.9], ["a", 0.5]]);

    const config = defaultConfig();
    expect(describeSimilarityMode("keyword", config)).toBe("Using keyword search. Set semanticSearchEnabled: true in ~/.cass-memory/config.json");
    expect(describeSimilarityMode("keyword", { ...config, semanticSearchEnabled: true, embeddingModel: "none" })).toBe(
      "Using keyword search. Remove embeddingModel: none from config or set a valid model",
    );
    expect(describeSimilarityMode("keyword", { ...config, semanticSearchEnabled: true })).toContain("Xenova/all-MiniLM-L6-v2 is configured but not available");
  });
});
