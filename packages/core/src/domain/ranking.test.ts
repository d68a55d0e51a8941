import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultConfig } from "../schemas/config.js";
import { getEffectiveScore } from "./scoring.js";
import {
  FEEDBACK_SPAN,
  buildCassQuery,
  bulletReasoning,
  deprecatedPatternWarnings,
  feedbackMultiplier,
  lexicalIndexFor,
  rankBulletsForTask,
  scoreBulletRelevance,
  suggestCassQueries,
} from "./ranking.js";
import { T0, events, makeBullet } from "./test-support.js";

const config = defaultConfig();

const opts = { now: T0, config, limit: 50, minRelevance: 0.1 };
const ids = (r: { ranked: Array<{ id: string }> }) => r.ranked.map((b) => b.id);

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

describe("scoreBulletRelevance", () => {
  const b = makeBullet({ content: "Rotate JWT signing keys through the secret manager", tags: ["auth", "jwt"] });
  it("is 0 without a shared term and grows with shared terms", () => {
    expect(scoreBulletRelevance(b, [])).toBe(0);
    expect(scoreBulletRelevance(b, ["pagination"])).toBe(0);
    const one = scoreBulletRelevance(b, ["rotate"]);
    const two = scoreBulletRelevance(b, ["rotate", "manager"]);
    expect(one).toBeGreaterThan(0);
    expect(two).toBeGreaterThan(one);
  });
  it("matches inflections and identifier parts, counts tags more, and concepts less", () => {
    expect(scoreBulletRelevance(b, ["rotated"])).toBeCloseTo(scoreBulletRelevance(b, ["rotate"]), 10);
    expect(scoreBulletRelevance(makeBullet({ content: "Clean up in useEffect" }), ["effect"])).toBeGreaterThan(0);
    expect(scoreBulletRelevance(b, ["jwt"])).toBeGreaterThan(scoreBulletRelevance(b, ["signing"]));
    // "revoked" shares no word with the rule, only the secret-rotation concept.
    const concept = scoreBulletRelevance(b, ["revoked"]);
    expect(concept).toBeGreaterThan(0);
    expect(concept).toBeLessThan(scoreBulletRelevance(b, ["rotate"]));
  });
  it("ignores case and duplicate keywords", () => {
    expect(scoreBulletRelevance(b, ["JWT", "jwt"])).toBeCloseTo(scoreBulletRelevance(b, ["jwt"]), 10);
  });
});

describe("rankBulletsForTask", () => {
  const bullets = [
    makeBullet({ id: "r1", content: "Use pnpm for installs in the monorepo", feedbackEvents: events("helpful", 3), maturity: "established" }),
    makeBullet({ id: "r2", content: "Run pnpm install with frozen lockfile in CI", embedding: [1, 2, 3] }),
    makeBullet({ id: "ap", content: "AVOID: npm install in the monorepo", kind: "anti_pattern", isNegative: true }),
    makeBullet({ id: "dead", content: "pnpm install monorepo", deprecated: true }),
    makeBullet({ id: "ws", content: "pnpm install in this workspace", scope: "workspace", workspace: "/repo/a" }),
    makeBullet({ id: "none", content: "Write docs in English" }),
  ];

  it("keeps relevant active bullets, splits anti-patterns, strips embeddings", () => {
    const r = rankBulletsForTask(bullets, "pnpm install for the monorepo", opts);
    expect(r.keywords).toEqual(["pnpm", "install", "monorepo"]);
    expect(r.rules.map((b) => b.id).sort()).toEqual(["r1", "r2"]);
    expect(r.antiPatterns.map((b) => b.id)).toEqual(["ap"]);
    expect(ids(r)).not.toContain("dead");
    expect(ids(r)).not.toContain("none");
    const r2 = r.rules.find((b) => b.id === "r2")!;
    expect("embedding" in r2).toBe(false);
    expect(r2).toMatchObject({ effectiveScore: 0, lastHelpful: "Never" });
    const r1 = r.rules.find((b) => b.id === "r1")!;
    expect(r1.effectiveScore).toBeCloseTo(3);
    expect(r1.lastHelpful).toBe("just now");
    expect(bullets[1]!.embedding).toEqual([1, 2, 3]);
  });

  it("scores relevance relative to the best match: 1 for the best, (0, 1] for the others", () => {
    const r = rankBulletsForTask(bullets, "pnpm install for the monorepo", opts);
    const relevances = r.ranked.map((b) => b.relevanceScore);
    expect(Math.max(...relevances)).toBe(1);
    for (const x of relevances) expect(x > 0 && x <= 1).toBe(true);
    for (const b of r.ranked) expect(b.finalScore).toBeCloseTo(b.relevanceScore * feedbackMultiplier(b.effectiveScore), 12);
  });

  it("drops rules below minRelevance on that scale", () => {
    const set = [
      makeBullet({ id: "strong", content: "Pin GitHub Actions to a commit SHA" }),
      makeBullet({ id: "weak", content: "Write commit messages that explain why" }),
    ];
    const all = rankBulletsForTask(set, "pin github actions to commit sha", { ...opts, minRelevance: 0 });
    expect(ids(all)).toEqual(["strong", "weak"]);
    const weak = all.ranked[1]!.relevanceScore;
    expect(ids(rankBulletsForTask(set, "pin github actions to commit sha", { ...opts, minRelevance: weak + 0.01 }))).toEqual(["strong"]);
    // Thresholds on the original's point scale (e.g. 3) keep the best match instead of nothing.
    expect(ids(rankBulletsForTask(set, "pin github actions to commit sha", { ...opts, minRelevance: 3 }))).toEqual(["strong"]);
  });

  it("includes workspace bullets only for the exact workspace", () => {
    expect(ids(rankBulletsForTask(bullets, "pnpm install", opts))).not.toContain("ws");
    expect(ids(rankBulletsForTask(bullets, "pnpm install", { ...opts, workspace: "/repo/a" }))).toContain("ws");
    expect(ids(rankBulletsForTask(bullets, "pnpm install", { ...opts, workspace: "/repo/a/" }))).not.toContain("ws");
  });

  it("skips bullets outside their validity window", () => {
    const set = [
      makeBullet({ id: "old", content: "pnpm install quirk", validTo: "2025-01-01T00:00:00Z" }),
      makeBullet({ id: "future", content: "pnpm install quirk", validFrom: "2027-01-01T00:00:00Z" }),
      makeBullet({ id: "now", content: "pnpm install quirk" }),
    ];
    expect(ids(rankBulletsForTask(set, "pnpm install", opts))).toEqual(["now"]);
  });

  it("applies the limit before splitting", () => {
    const same = [
      makeBullet({ id: "s1", content: "alpha beta" }),
      makeBullet({ id: "s2", content: "alpha beta gamma" }),
      makeBullet({ id: "s3", content: "alpha" }),
      makeBullet({ id: "s4", content: "alpha beta", kind: "anti_pattern" }),
    ];
    const r = rankBulletsForTask(same, "alpha beta gamma", { ...opts, limit: 3 });
    expect(r.ranked).toHaveLength(3);
    expect(ids(r)[0]).toBe("s2");
    expect([...r.rules, ...r.antiPatterns].map((b) => b.id).sort()).toEqual([...ids(r)].sort());
    expect(rankBulletsForTask(same, "alpha", { ...opts, limit: 0 }).ranked).toEqual([]);
  });

  it("returns nothing for a task without keywords", () => {
    const r = rankBulletsForTask(bullets, "the a of", opts);
    expect(r).toEqual({ rules: [], antiPatterns: [], ranked: [], keywords: [] });
  });

  it("needs a match in the content or tags: the category alone does not make a rule relevant", () => {
    const set = [
      makeBullet({ id: "content", category: "database", content: "Run database migrations inside a transaction" }),
      makeBullet({ id: "category-only", category: "database", content: "Name files YYYYMMDDHHMM_description.sql" }),
      makeBullet({ id: "tagged", category: "ops", content: "Review the plan first", tags: ["database"] }),
    ];
    const r = rankBulletsForTask(set, "write a database migration", { ...opts, minRelevance: 0 });
    expect(ids(r)).toEqual(["content", "tagged"]);
  });

  it("finds a rule phrased differently from the task", () => {
    const set = [
      makeBullet({ id: "secret", content: "Keep the cookie-signing secret stable across releases; load it from the secret manager" }),
      makeBullet({ id: "css", content: "Scope component styles with CSS modules" }),
      makeBullet({ id: "index", content: "Index every foreign key column you join on" }),
    ];
    expect(ids(rankBulletsForTask(set, "everyone gets logged out after every deploy", opts))[0]).toBe("secret");
  });
});

describe("rankBulletsForTask: feedback only reorders comparable rules", () => {
  const relevant = makeBullet({ id: "relevant", content: "Add a PgBouncer pool in front of Postgres when replicas open too many connections" });
  const popular = makeBullet({
    id: "popular",
    content: "Close Postgres connections in tests",
    maturity: "proven",
    feedbackEvents: events("helpful", 30),
  });

  it("never lets a popular, less relevant rule pass the relevant one", () => {
    const r = rankBulletsForTask([popular, relevant], "too many postgres connections from all replicas, add pgbouncer", opts);
    expect(ids(r)).toEqual(["relevant", "popular"]);
    expect(r.ranked[1]!.effectiveScore).toBeGreaterThan(40);
  });

  it("orders rules of equal relevance by feedback, harmful last", () => {
    const text = "Use keyset pagination for deep pages";
    const set = [
      makeBullet({ id: "plain", content: text }),
      makeBullet({ id: "harmful", content: text, feedbackEvents: events("harmful", 2) }),
      makeBullet({ id: "helpful", content: text, maturity: "established", feedbackEvents: events("helpful", 4) }),
    ];
    expect(ids(rankBulletsForTask(set, "keyset pagination", opts))).toEqual(["helpful", "plain", "harmful"]);
  });

  it("keeps the feedback factor within (0.85, 1.15)", () => {
    for (const e of [-1e9, -40, -4, -0.5, 0, 0.5, 4, 40, 1e9, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const m = feedbackMultiplier(e);
      expect(m).toBeGreaterThanOrEqual(1 - FEEDBACK_SPAN);
      expect(m).toBeLessThanOrEqual(1 + FEEDBACK_SPAN);
    }
    expect(feedbackMultiplier(0)).toBe(1);
    expect(feedbackMultiplier(Number.NaN)).toBe(1);
    expect(feedbackMultiplier(3)).toBeGreaterThan(feedbackMultiplier(1));
  });
});

describe("rankBulletsForTask: matches a brute-force reference", () => {
  // Reference: relevance from scoring every bullet, feedback factor for all, full sort, no pruning.
  const words = ["alpha", "beta", "gamma", "delta", "kafka", "redis", "deploy", "rollback", "cache", "token"];
  const bulletArb = fc.record({
    words: fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 6 }),
    helpful: fc.nat({ max: 12 }),
    harmful: fc.nat({ max: 3 }),
    ageDays: fc.nat({ max: 400 }),
    maturity: fc.constantFrom("candidate", "established", "proven"),
    anti: fc.boolean(),
  });
  it("property: same ranking as scoring and sorting everything", () => {
    fc.assert(
      fc.property(
        fc.array(bulletArb, { minLength: 1, maxLength: 40 }),
        fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 12 }),
        fc.boolean(),
        (specs, taskWords, limit, freeze) => {
          const set = specs.map((sp, i) => {
            const b = makeBullet({
              id: `b${i}`,
              content: sp.words.join(" "),
              maturity: sp.maturity,
              kind: sp.anti ? "anti_pattern" : "workflow_rule",
              feedbackEvents: [...events("helpful", sp.helpful, T0, sp.ageDays), ...events("harmful", sp.harmful, T0, sp.ageDays)],
            });
            return freeze ? deepFreeze(b) : b;
          });
          const task = taskWords.join(" ");
          const all = rankBulletsForTask(set, task, { ...opts, limit: set.length, minRelevance: 0 });
          const reference = all.ranked
            .map((b) => ({ id: b.id, relevance: b.relevanceScore, final: b.relevanceScore * feedbackMultiplier(getEffectiveScore(set.find((x) => x.id === b.id)!, T0, config)), order: Number(b.id.slice(1)) }))
            .filter((x) => x.relevance >= 0.1)
            .sort((a, b) => b.final - a.final || b.relevance - a.relevance || a.order - b.order)
            .slice(0, limit)
            .map((x) => x.id);
          const got = rankBulletsForTask(set, task, { ...opts, limit });
          expect(ids(got)).toEqual(reference);
          for (const b of got.ranked) expect(b.effectiveScore).toBeCloseTo(getEffectiveScore(set.find((x) => x.id === b.id)!, T0, config), 9);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("rankBulletsForTask: index cache", () => {
  it("re-indexes when the array or a bullet's text changes in place", () => {
    const set = [makeBullet({ id: "a", content: "kafka consumer offsets" })];
    expect(ids(rankBulletsForTask(set, "redis lock", opts))).toEqual([]);
    set.push(makeBullet({ id: "b", content: "redis lock with fencing tokens" }));
    expect(ids(rankBulletsForTask(set, "redis lock", opts))).toEqual(["b"]);
    (set[0] as { content: string }).content = "redis lock expiry";
    expect(ids(rankBulletsForTask(set, "redis lock", opts)).sort()).toEqual(["a", "b"]);
  });

  it("reuses the index for the same frozen bullets, even in a new array", () => {
    const set = deepFreeze([makeBullet({ id: "a", content: "kafka consumer offsets" }), makeBullet({ id: "b", content: "redis lock" })]);
    const index = lexicalIndexFor(set);
    expect(lexicalIndexFor(set)).toBe(index);
    expect(lexicalIndexFor([...set])).toBe(index);
    expect(lexicalIndexFor([set[1]!, set[0]!])).not.toBe(index);
    expect(lexicalIndexFor([...set, deepFreeze(makeBullet({ id: "c", content: "more" }))])).not.toBe(index);
  });

  it("keeps the text index for re-read bullets with the same texts, with their new state and feedback", () => {
    const original = deepFreeze([makeBullet({ id: "a", content: "kafka consumer offsets" }), makeBullet({ id: "b", content: "kafka partition keys" })]);
    const index = lexicalIndexFor(original);
    expect(ids(rankBulletsForTask(original, "kafka", opts))).toEqual(["a", "b"]);
    // What a store hands out after a mutation: new objects, same texts; one now deprecated, one marked helpful.
    const reread = deepFreeze([
      makeBullet({ id: "a", content: "kafka consumer offsets", deprecated: true }),
      makeBullet({ id: "b", content: "kafka partition keys", maturity: "established", feedbackEvents: events("helpful", 2) }),
    ]);
    expect(lexicalIndexFor(reread)).toBe(index);
    const r = rankBulletsForTask(reread, "kafka", opts);
    expect(ids(r)).toEqual(["b"]);
    expect(r.ranked[0]!.effectiveScore).toBeCloseTo(2);
  });

  it("sees state changes of unfrozen bullets without re-indexing", () => {
    const set = [makeBullet({ id: "a", content: "kafka consumer offsets" })];
    expect(ids(rankBulletsForTask(set, "kafka", opts))).toEqual(["a"]);
    (set[0] as { deprecated: boolean }).deprecated = true;
    expect(ids(rankBulletsForTask(set, "kafka", opts))).toEqual([]);
  });
});

describe("rankBulletsForTask: semantic scores", () => {
  const lexical = makeBullet({ id: "lexical", content: "Rotate the JWT signing key" });
  const semanticOnly = makeBullet({ id: "semantic", content: "Keep the cookie secret stable across releases" });
  const weak = makeBullet({ id: "weak", content: "Paginate with keyset cursors" });
  const set = [lexical, semanticOnly, weak];
  const task = "jwt signing key";

  it("adds rules with cosine ≥ 0.3 as candidates and fuses (1 − w)·lexical + w·max(0, cosine)", () => {
    const scores = new Map([
      [lexical, 0.2],
      [semanticOnly, 0.9],
      [weak, 0.29],
    ]);
    const r = rankBulletsForTask(set, task, { ...opts, semantic: { scores, weight: 0.6 } });
    expect(ids(r)).toEqual(["semantic", "lexical"]);
    const byId = new Map(r.ranked.map((b) => [b.id, b.relevanceScore]));
    expect(byId.get("lexical")).toBeCloseTo(0.4 * 1 + 0.6 * 0.2, 12);
    expect(byId.get("semantic")).toBeCloseTo(0.6 * 0.9, 12);
  });

  it("treats missing and negative similarities as 0 and clamps the weight", () => {
    const r = rankBulletsForTask(set, task, { ...opts, semantic: { scores: new Map([[weak, -0.8]]), weight: 0.5 } });
    expect(r.ranked.map((b) => [b.id, b.relevanceScore])).toEqual([["lexical", 0.5]]);
    const none = rankBulletsForTask(set, task, { ...opts, semantic: { scores: new Map([[semanticOnly, 0.9]]), weight: 0 } });
    expect(ids(none)).toEqual(["lexical"]);
    const all = rankBulletsForTask(set, task, { ...opts, semantic: { scores: new Map([[semanticOnly, 0.9]]), weight: 7 } });
    expect(all.ranked.map((b) => [b.id, b.relevanceScore])).toEqual([["semantic", 0.9]]);
  });

  it("finds rules by semantics alone when no word matches, and respects eligibility", () => {
    const retired = makeBullet({ id: "retired", content: "Old advice", state: "retired" });
    const r = rankBulletsForTask([semanticOnly, retired], "users are asked to sign in twice", {
      ...opts,
      semantic: {
        scores: new Map([
          [semanticOnly, 0.5],
          [retired, 0.99],
        ]),
        weight: 0.6,
      },
    });
    expect(ids(r)).toEqual(["semantic"]);
    expect(r.ranked[0]!.relevanceScore).toBeCloseTo(0.3, 12);
  });
});

describe("bulletReasoning", () => {
  it("prefers the reasoning field, truncated to 200 chars", () => {
    expect(bulletReasoning(makeBullet({ reasoning: "  JWT expiry broke auth  " }))).toBe("JWT expiry broke auth");
    const long = `First sentence here. ${"x".repeat(300)}`;
    expect(bulletReasoning(makeBullet({ reasoning: long }))).toBe("First sentence here.");
    const words = Array.from({ length: 60 }, () => "word").join(" ");
    const cut = bulletReasoning(makeBullet({ reasoning: words }));
    expect(cut.endsWith("...")).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(203);
    expect(bulletReasoning(makeBullet({ reasoning: "y".repeat(250) }))).toBe(`${"y".repeat(197)}...`);
  });
  it("falls back to agent and UTC creation date", () => {
    expect(bulletReasoning(makeBullet({ sourceAgents: ["claude"], createdAt: "2025-11-15T23:30:00Z" }))).toBe("From claude session on 11/15/2025");
    expect(bulletReasoning(makeBullet({ createdAt: "2025-01-02T00:00:00Z" }))).toBe("From unknown session on 1/2/2025");
    expect(bulletReasoning({ sourceAgents: [], createdAt: "" })).toBe("No reasoning available");
  });
});

describe("cass queries", () => {
  it("builds the history query from safe keywords", () => {
    expect(buildCassQuery(["auth"])).toBe("auth");
    expect(buildCassQuery(["auth", "x", "2024", "bd-12.3", "node.js", "src/a", "login"])).toBe("auth OR login");
    expect(buildCassQuery([])).toBe("");
    expect(buildCassQuery(Array.from({ length: 10 }, (_, i) => `k${i}x`)).split(" OR ")).toHaveLength(8);
  });
  it("suggests up to five quoted searches", () => {
    expect(suggestCassQueries("fix the login bug", ["login", "bug", "session"])).toEqual([
      "cass search 'login bug session' --days 30",
      "cass search 'login fix' --days 60",
      "cass search 'login' --days 90",
      "cass search 'login bug' --days 60",
      "cass search 'session' --days 90",
    ]);
    expect(suggestCassQueries("add caching", ["caching"])).toEqual(["cass search 'caching error' --days 60", "cass search 'caching' --days 90"]);
    expect(suggestCassQueries("x", [])).toEqual([]);
    expect(suggestCassQueries("it's", ["it's"])[1]).toBe(`cass search 'it'\\''s' --days 90`);
  });
  it("warns about deprecated patterns matching the task", () => {
    const patterns = [
      { pattern: "moment\\.js", replacement: "date-fns or dayjs", reason: "moment.js is in maintenance mode" },
      { pattern: "Grunt" },
      { pattern: "/^legacy-api/" },
      { pattern: "(a+)+" },
      { pattern: "webpack", reason: "slow" },
    ];
    expect(deprecatedPatternWarnings("add moment.js and grunt tasks", patterns)).toEqual([
      'Task matches deprecated pattern "moment\\.js" - use date-fns or dayjs instead (Reason: moment.js is in maintenance mode)',
      'Task matches deprecated pattern "Grunt"',
    ]);
    expect(deprecatedPatternWarnings("legacy-api cleanup", patterns)).toEqual(['Task matches deprecated pattern "/^legacy-api/"']);
    expect(deprecatedPatternWarnings("aaaa", patterns)).toEqual([]);
  });
});
