import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const DAY = 86_400_000;
const ago = (days: number) => new Date(Date.now() - days * DAY).toISOString();

function bullet(id: string, content: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id, category: "general", content, scope: "global", kind: "workflow_rule", state: "draft", maturity: "candidate",
    helpfulCount: 0, harmfulCount: 0, feedbackEvents: [], createdAt: ago(10), updatedAt: ago(10), sourceSessions: [], sourceAgents: [],
    tags: [], ...extra,
  };
}

/** Writes the global playbook (JSON is valid YAML). */
function writePlaybook(bullets: Array<Record<string, unknown>>): void {
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  const playbook = { schema_version: 2, name: "playbook", description: "test", metadata: { createdAt: ago(400) }, deprecatedPatterns: [], bullets };
  writeFileSync(join(home, ".cass-memory", "playbook.yaml"), JSON.stringify(playbook, null, 2));
}

const helpful = (n: number, daysAgo = 0) => Array.from({ length: n }, () => ({ type: "helpful", timestamp: ago(daysAgo) }));

function seedStandard(): void {
  writePlaybook([
    bullet("b-tests", "Always run the unit tests before pushing to main", { category: "testing", maturity: "established", helpfulCount: 6, feedbackEvents: helpful(6) }),
    bullet("b-tests-2", "Always run the unit tests before pushing to main branch", { category: "testing", createdAt: ago(5) }),
    bullet("b-old", "Prefer tabs for indentation", { category: "style", createdAt: ago(200), scope: "workspace" }),
    bullet("b-expiring", "Use the legacy deploy script until the migration ends", { category: "ops", validTo: ago(-7.5) }),
    bullet("b-expired", "Use the v1 API", { category: "ops", validTo: ago(3), maturity: "proven", helpfulCount: 20, feedbackEvents: helpful(20) }),
    bullet("b-gone", "Deprecated rule", { deprecated: true, maturity: "deprecated", state: "retired" }),
  ]);
}

describe("cm stats", () => {
  it("reports playbook health in the original's shape, plus validity counts", () => {
    seedStandard();
    const r = cm(["stats", "--json"], { home });
    expect(r.code).toBe(0);
    const { command, data } = r.json();
    expect(command).toBe("stats");
    expect(data).toMatchObject({
      total: 6,
      byScope: { global: 5, workspace: 1 },
      byState: { draft: 5, retired: 1 },
      scoreDistribution: { excellent: 1, good: 1, neutral: 3, atRisk: 0 },
      atRiskCount: 0,
      staleCount: 1,
      staleThresholdDays: 90,
      expiredCount: 1,
      notYetValidCount: 0,
      mergeCandidates: [{ a: "b-tests-2", b: "b-tests", similarity: 0.9 }],
      semanticMergeCandidates: [],
    });
    expect(data.topPerformers[0]).toMatchObject({ id: "b-tests", helpfulCount: 6 });
    expect(data.topPerformers[0].score).toBeCloseTo(6, 3);
    expect(data.topPerformers.map((t: { id: string }) => t.id)).not.toContain("b-expired");

    const human = cm(["stats", "--no-emoji"], { home });
    expect(human.stdout).toContain("Playbook Health Dashboard");
    expect(human.stdout).toContain("Total Bullets: 6");
    expect(human.stdout).toContain("Stale (90d+): 1");
    expect(human.stdout).toContain("Outside validity: 1 expired, 0 not yet valid");
    expect(human.stdout).toContain("b-tests-2 <-> b-tests (sim 0.9)");
  });

  it("prints TOON natively (the same envelope), reports token stats and rejects unknown formats", () => {
    const toon = cm(["stats", "--format", "toon", "--stats"], { home });
    expect(toon.code).toBe(0);
    expect(toon.stdout).toMatch(/^success: true\ncommand: stats\n/);
    expect(toon.stdout).toContain("\n  total: 0\n");
    expect(toon.stderr).not.toContain("tru binary");
    const stats = /\[stats\] JSON: (\d+) tokens, TOON: (\d+) tokens \((-?\d+)% savings\)/.exec(toon.stderr);
    expect(stats).not.toBeNull();
    expect(Number(stats![2])).toBeLessThan(Number(stats![1]));
    const bad = cm(["stats", "--format", "xml"], { home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("format must be one of: json, toon.");
  });
});

describe("cm top", () => {
  it("ranks in-force active rules and applies scope and category filters", () => {
    seedStandard();
    const r = cm(["top", "3", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data.count).toBe(3);
    expect(data.filters).toEqual({ scope: "all", category: null });
    expect(data.bullets[0]).toMatchObject({ rank: 1, id: "b-tests", score: 6, maturity: "established", feedback: { helpful: 6, harmful: 0 }, lastUsed: "just now" });
    expect(data.bullets.map((b: { id: string }) => b.id)).not.toContain("b-expired");

    const testing = cm(["top", "--category", "TESTING", "--json"], { home }).json().data;
    expect(testing.bullets.map((b: { id: string }) => b.id)).toEqual(["b-tests", "b-tests-2"]);
    const ws = cm(["top", "--scope", "workspace", "--json"], { home }).json().data;
    expect(ws.bullets.map((b: { id: string }) => b.id)).toEqual(["b-old"]);

    const human = cm(["top", "1"], { home });
    expect(human.stdout).toMatch(/^TOP\n/);
    expect(human.stdout).toContain("1. [b-tests] • score 6.0 • established • testing/global");
    expect(human.stdout).toContain("Feedback: 6× helpful, 0× harmful • Last used: just now");
    expect(cm(["top", "--category", "nothing"], { home }).stdout).toContain("No bullets found matching the criteria.");
  });

  it("rejects a bad count or scope with INVALID_INPUT (exit 2)", () => {
    for (const [args, message] of [
      [["top", "0", "--json"], "count must be >= 1."],
      [["top", "abc", "--json"], "count must be an integer."],
      [["top", "--scope", "repo", "--json"], "scope must be one of: global, workspace, all."],
    ] as const) {
      const r = cm([...args], { home });
      expect(r.code).toBe(2);
      expect(r.json().command).toBe("top");
      expect(r.json().error).toMatchObject({ code: "INVALID_INPUT", message });
    }
  });
});

describe("cm stale", () => {
  it("lists stale rules, and expiring ones with --expiring", () => {
    seedStandard();
    const r = cm(["stale", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data).toMatchObject({ threshold: 90, count: 1, totalActive: 5, filters: { scope: "all" } });
    expect(data.bullets[0]).toMatchObject({
      id: "b-old", daysSinceLastFeedback: 200, scope: "workspace", lastFeedback: { action: null, timestamp: null },
      recommendation: 'Very stale candidate - consider deprecating if no longer relevant (cm playbook remove b-old --reason "<why>")',
    });
    expect(data).not.toHaveProperty("expiring");

    const exp = cm(["stale", "--expiring", "30", "--json"], { home }).json().data;
    expect(exp.expiring).toMatchObject({ withinDays: 30, count: 1 });
    expect(exp.expiring.bullets[0]).toMatchObject({ id: "b-expiring", expiresInDays: 7, validFrom: null });
    expect(cm(["stale", "--expiring", "5", "--json"], { home }).json().data.expiring.count).toBe(0);

    const all = cm(["stale", "--days", "0", "--json"], { home }).json().data;
    expect(all.count).toBe(5);
    const expired = all.bullets.find((b: { id: string }) => b.id === "b-expired");
    expect(expired.recommendation).toMatch(/^Expired on \d{4}-\d{2}-\d{2} - remove it or extend validTo/);

    const human = cm(["stale", "--expiring", "30"], { home });
    expect(human.stdout).toContain("EXPIRING (within 30 days)");
    expect(human.stdout).toContain("in 7d [b-expiring]");
    expect(human.stdout).toContain("STALE");
    expect(human.stdout).toContain("Threshold: 90+ days • Found: 1/5");
    expect(human.stdout).toContain("Next actions");
    const none = cm(["stale", "--scope", "global"], { home });
    expect(none.stdout).toContain("No stale bullets found.");
  });

  it("rejects negative days, a bad scope and a bad --expiring (exit 2)", () => {
    const days = cm(["stale", "--days", "-5", "--json"], { home });
    expect(days.code).toBe(2);
    expect(days.json().error).toMatchObject({ code: "INVALID_INPUT", message: "days must be >= 0." });
    const scope = cm(["stale", "--scope", "team", "--json"], { home });
    expect(scope.code).toBe(2);
    expect(scope.json().error.message).toContain("scope");
    const expiring = cm(["stale", "--expiring", "soon", "--json"], { home });
    expect(expiring.code).toBe(2);
    expect(expiring.json().error.message).toBe("expiring must be an integer.");
  });
});

describe("cm why", () => {
  it("explains a rule with provenance and its change history", () => {
    writePlaybook([
      bullet("b-jwt-1", "Check JWT expiry before debugging 401s", {
        reasoning: 'Seen "token expired" twice.',
        sourceSessions: Array.from({ length: 12 }, (_, i) => `/home/dev/.claude/projects/p/s${i}.jsonl`),
        evidence: [{ type: "code", uri: "src/auth.ts", note: "verify call" }],
        verification: { type: "regex", pattern: "jwt\\.verify", path: "src/auth.ts", mode: "exists" },
        validTo: ago(-30),
      }),
      bullet("b-other-1", "Other"),
      bullet("b-other-2", "Other too"),
    ]);
    expect(cm(["mark", "b-jwt-1", "--harmful", "--reason", "outdated"], { home }).code).toBe(0);

    const r = cm(["why", "jwt", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(r.json().command).toBe("why");
    expect(data.bullet).toMatchObject({ id: "b-jwt-1", daysAgo: 10 });
    expect(data.evidence).toEqual(["token expired"]);
    expect(data.sourceSessions).toHaveLength(5);
    expect(data.sourceSessions[0]).toEqual({ path: "/home/dev/.claude/projects/p/s0.jsonl", date: null, snippet: null });
    expect(data.diaryEntries).toEqual([]);
    expect(data.feedbackHistory).toEqual([expect.objectContaining({ type: "harmful", reason: "outdated" })]);
    expect(data.provenance).toMatchObject({
      evidence: [{ type: "code", uri: "src/auth.ts", note: "verify call" }],
      verification: { type: "regex", pattern: "jwt\\.verify", path: "src/auth.ts", mode: "exists" },
      validFrom: null,
      validity: "current",
    });
    expect(data.journal).toEqual([expect.objectContaining({ operation: "feedback", change: "feedback", layer: "global", reason: "outdated" })]);

    expect(cm(["why", "b-jwt-1", "--verbose", "--json"], { home }).json().data.sourceSessions).toHaveLength(10);

    const human = cm(["why", "b-jwt-1", "--no-emoji"], { home });
    expect(human.stdout).toMatch(/^WHY\n/);
    for (const part of ["Summary", "Rule", "Reasoning", "Sources (5)", "Evidence", "Provenance", "[code] src/auth.ts (verify call)",
      "Verification: regex jwt\\.verify in src/auth.ts (expect exists)", "Feedback history (0 helpful, 1 harmful)", "Change history (1)"]) {
      expect(human.stdout).toContain(part);
    }
  });

  it("reports ambiguous and unknown ids", () => {
    writePlaybook([bullet("b-other-1", "Other"), bullet("b-other-2", "Other too")]);
    const ambiguous = cm(["why", "other", "--json"], { home });
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.json().error).toMatchObject({
      code: "INVALID_INPUT", message: "Ambiguous bullet id: other", details: { matchCount: 2, matches: ["b-other-1", "b-other-2"] },
    });
    const missing = cm(["why", "b-nope", "--json"], { home });
    expect(missing.code).toBe(2);
    expect(missing.json().error).toMatchObject({ code: "BULLET_NOT_FOUND", message: "Bullet not found: b-nope", details: { bulletId: "b-nope" } });
    const human = cm(["why", "b-nope"], { home });
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("Bullet not found: b-nope");
  });
});

describe("cm similar", () => {
  it("finds similar rules by keyword and reports the mode", () => {
    seedStandard();
    const r = cm(["similar", "run the unit tests before pushing", "--threshold", "0.5", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(r.json().command).toBe("similar");
    expect(data.mode).toBe("keyword");
    expect(data.query).toBe("run the unit tests before pushing");
    expect(data.results.map((m: { id: string }) => m.id)).toEqual(["b-tests", "b-tests-2"]);
    expect(data.results[0]).toMatchObject({ category: "testing", scope: "global", preview: "Always run the unit tests before pushing to main" });
    expect(data.results[0].effectiveScore).toBeCloseTo(6, 3);
    expect(data.results[0].similarity).toBeCloseTo(6 / 9, 10);
    expect(cm(["similar", "run the unit tests before pushing", "--threshold", ".5", "--limit", "1", "--json"], { home }).json().data.results).toHaveLength(1);
    // The expired rule is out of force: not offered even when identical.
    expect(cm(["similar", "Use the v1 API", "--json"], { home }).json().data.results).toEqual([]);

    const human = cm(["similar", "run the unit tests before pushing", "--threshold", "0.5"], { home });
    expect(human.stdout).toMatch(/^SIMILAR\n/);
    expect(human.stdout).toContain("Using keyword search. Set semanticSearchEnabled: true in ~/.cass-memory/config.json");
    expect(human.stdout).toContain("1. [b-tests] • sim 0.67 • score 6.0 • testing/global");
    const none = cm(["similar", "kubernetes helm charts"], { home });
    expect(none.stdout).toContain("No matches found.");
    expect(none.stdout).toContain('similar "<query>" --threshold 0.5');
  });

  it("rejects bad input with the original's messages and the query in details (exit 2)", () => {
    for (const [args, message] of [
      [["similar", "   "], "Query is required"],
      [["similar", "x", "--limit", "0"], "--limit must be an integer >= 1"],
      [["similar", "x", "--limit", "two"], "--limit must be an integer >= 1"],
      [["similar", "x", "--threshold", "1.5"], "--threshold must be between 0 and 1"],
      [["similar", "x", "--threshold", "high"], "--threshold must be between 0 and 1"],
      [["similar", "x", "--scope", "team"], 'Invalid --scope "team" (expected: global|workspace|all)'],
    ] as const) {
      const r = cm([...args, "--json"], { home });
      expect(r.code).toBe(2);
      expect(r.json().error).toMatchObject({ code: "INVALID_INPUT", message, details: { query: args[1] } });
    }
  });
});

describe("help", () => {
  it("lists the insight commands and gives each an Examples block", () => {
    expect(cm(["--help"], { home }).stdout).toContain("Insight:   stats, top, stale, why, similar");
    for (const command of ["stats", "top", "stale", "why", "similar"]) {
      const r = cm([command, "--help"], { home });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Examples:");
    }
  });
});
