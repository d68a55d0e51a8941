import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultConfig } from "../schemas/config.js";
import { tokenize } from "./text.js";
import {
  buildCassQuery,
  bulletReasoning,
  deprecatedPatternWarnings,
  rankBulletsForTask,
  scoreBulletRelevance,
  suggestCassQueries,
} from "./ranking.js";
import { T0, events, makeBullet } from "./test-support.js";

const config = defaultConfig();
const opts = { now: T0, config, limit: 50, minRelevance: 0.1 };

describe("scoreBulletRelevance", () => {
  it("scores +3 token, +1 substring, +5 tag, per distinct keyword", () => {
    const b = makeBullet({ content: "Authenticate users with JWT tokens", tags: ["Auth", "jwt"] });
    expect(scoreBulletRelevance(b, ["jwt"])).toBe(3 + 5);
    expect(scoreBulletRelevance(b, ["auth"])).toBe(1 + 5);
    expect(scoreBulletRelevance(b, ["token"])).toBe(1);
    expect(scoreBulletRelevance(b, ["JWT", "jwt", "users", "nothing"])).toBe(3 + 5 + 3);
    expect(scoreBulletRelevance(b, [])).toBe(0);
  });
});

describe("scoreBulletRelevance matches the plain definition", () => {
  // Reference implementation: tokenise everything, no shortcuts.
  const naive = (content: string, tags: string[], keywords: string[]): number => {
    if (content === "") return 0; // as in the original: empty content scores 0 even with tags
    const lower = content.toLowerCase();
    const tokens = new Set(tokenize(lower));
    let score = 0;
    for (const k of new Set(keywords.map((x) => x.toLowerCase()))) {
      if (tokens.has(k)) score += 3;
      else if (lower.includes(k)) score += 1;
      if (tags.map((t) => t.toLowerCase()).includes(k)) score += 5;
    }
    return score;
  };
  it("property: same score as tokenising every bullet", () => {
    const alphabet = fc.constantFrom(..."ab1.-_+# ,c".split(""));
    const text = fc.array(alphabet, { maxLength: 30 }).map((cs) => cs.join(""));
    fc.assert(
      fc.property(text, text, fc.array(fc.constantFrom("ab", "a", "b1", "c++", "c#", "a.b", "ab-c", "1"), { maxLength: 3 }), (content, task, tags) => {
        const keywords = tokenize(task);
        expect(scoreBulletRelevance(makeBullet({ content, tags }), keywords)).toBe(naive(content, tags, keywords));
      }),
      { numRuns: 2000 },
    );
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
    expect(r.rules.map((b) => b.id)).toEqual(["r1", "r2"]);
    expect(r.antiPatterns.map((b) => b.id)).toEqual(["ap"]);
    const r2 = r.rules[1]!;
    expect("embedding" in r2).toBe(false);
    expect(r2).toMatchObject({ relevanceScore: 6, effectiveScore: 0, finalScore: 6 * 0.1, lastHelpful: "Never" });
    const r1 = r.rules[0]!;
    expect(r1.relevanceScore).toBe(3 + 1 + 3); // pnpm token, "install" ⊂ "installs", monorepo token
    expect(r1.effectiveScore).toBeCloseTo(3);
    expect(r1.finalScore).toBeCloseTo(21);
    expect(r1.lastHelpful).toBe("just now");
    expect(bullets[1]!.embedding).toEqual([1, 2, 3]);
  });
  it("includes workspace bullets only for the exact workspace", () => {
    expect(rankBulletsForTask(bullets, "pnpm install", opts).rules.map((b) => b.id)).not.toContain("ws");
    expect(rankBulletsForTask(bullets, "pnpm install", { ...opts, workspace: "/repo/a" }).rules.map((b) => b.id)).toContain("ws");
    expect(rankBulletsForTask(bullets, "pnpm install", { ...opts, workspace: "/repo/a/" }).rules.map((b) => b.id)).not.toContain("ws");
  });
  it("sorts by finalScore then relevance (stable) and applies the limit before splitting", () => {
    const same = [
      makeBullet({ id: "s1", content: "alpha beta" }),
      makeBullet({ id: "s2", content: "alpha beta gamma" }),
      makeBullet({ id: "s3", content: "alpha" }),
      makeBullet({ id: "s4", content: "alpha beta", kind: "anti_pattern" }),
    ];
    const r = rankBulletsForTask(same, "alpha beta gamma", { ...opts, limit: 3 });
    expect([...r.rules, ...r.antiPatterns].map((b) => b.id)).toEqual(["s2", "s1", "s4"]);
    expect(r.antiPatterns.map((b) => b.id)).toEqual(["s4"]);
    expect(rankBulletsForTask(same, "alpha", { ...opts, limit: 0 }).rules).toEqual([]);
  });
  it("returns nothing for a task without keywords", () => {
    const r = rankBulletsForTask(bullets, "the a of", opts);
    expect(r).toEqual({ rules: [], antiPatterns: [], ranked: [], keywords: [] });
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
