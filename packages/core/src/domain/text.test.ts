import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  STOP_WORDS,
  extractKeywords,
  formatBulletId,
  hashContent,
  isNoiseToken,
  jaccardOfSets,
  jaccardSimilarity,
  randomBase36,
  tokenize,
} from "./text.js";

describe("tokenize", () => {
  it("keeps compound tech tokens and lower-cases", () => {
    expect(tokenize("Use Node.js with user_id in C++ and C#")).toEqual(["use", "node.js", "with", "user_id", "in", "c++", "and", "c#"]);
  });
  it("drops single-character tokens and punctuation", () => {
    expect(tokenize("a b cd, e! fg?")).toEqual(["cd", "fg"]);
    expect(tokenize("")).toEqual([]);
    expect(tokenize("!!! ---")).toEqual([]);
  });
  it("joins hyphenated words", () => {
    expect(tokenize("foo-bar baz--qux x+y")).toEqual(["foo-bar", "baz--qux", "x+y"]);
  });
});

describe("hashContent", () => {
  it("is 16 hex of sha256 of the normalised text", () => {
    // sha256("use pnpm for installs") = db02343eb6de9131…
    expect(hashContent("use pnpm for installs")).toBe("db02343eb6de9131");
    expect(hashContent("  Use   PNPM\n\tfor installs ")).toBe("db02343eb6de9131");
  });
  it("hashes the empty string to the empty string", () => {
    expect(hashContent("")).toBe("");
    expect(hashContent("   \n")).toBe("");
  });
  it("differs for different content", () => {
    expect(hashContent("use npm")).not.toBe(hashContent("use pnpm"));
  });
});

describe("jaccard", () => {
  it("handles empty sets", () => {
    expect(jaccardOfSets(new Set(), new Set())).toBe(1);
    expect(jaccardOfSets(new Set(["ab"]), new Set())).toBe(0);
    expect(jaccardSimilarity("", "")).toBe(1);
    expect(jaccardSimilarity("hello world", "")).toBe(0);
  });
  it("computes intersection over union of token sets", () => {
    expect(jaccardSimilarity("alpha beta gamma", "beta gamma delta")).toBeCloseTo(2 / 4);
    expect(jaccardSimilarity("Alpha alpha BETA", "beta alpha")).toBe(1);
  });
  it("is symmetric and within [0, 1]", () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const x = jaccardSimilarity(a, b);
        expect(x).toBe(jaccardSimilarity(b, a));
        expect(x).toBeGreaterThanOrEqual(0);
        expect(x).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe("extractKeywords", () => {
  it("drops stop words and orders by frequency, ties by first appearance", () => {
    expect(extractKeywords("fix the login bug: the login form throws when the token expires")).toEqual([
      "login",
      "fix",
      "bug",
      "form",
      "throws",
      "token",
      "expires",
    ]);
  });
  it("keeps at most 10 (or max) keywords", () => {
    const text = "one two three four five six seven eight nine ten eleven twelve";
    expect(extractKeywords(text)).toHaveLength(10);
    expect(extractKeywords(text, 3)).toEqual(["one", "two", "three"]);
  });
  it("drops noise from pasted logs: timestamps, ids, hex, versions, short and long numbers", () => {
    const text = "2025-11-20 09:12:03.114 pod ingest-api-7c9f6d8b5-x2lqk at 0x5e1c6c0 commit a91c2e0 v1.25.3 took 21604312 ms after 12 tries, exit 137 on 5432";
    expect(extractKeywords(text, 50)).toEqual(["pod", "commit", "v1.25.3", "took", "ms", "tries", "exit", "137", "5432"]);
    for (const noise of ["2025-11-20", "09", "03.114", "0x5e1c6c0", "a91c2e0", "7c9f6d8b5-x2lqk", "21604312", "12", "1.25.3"]) expect(isNoiseToken(noise), noise).toBe(true);
    for (const kept of ["137", "5432", "401", "node.js", "user_id", "c++", "utf-8", "k8s", "oauth2", "v1.25.3"]) expect(isNoiseToken(kept), kept).toBe(false);
  });
  it("drops code stop words", () => {
    expect(STOP_WORDS.has("async")).toBe(true);
    expect(extractKeywords("const async await return foo")).toEqual(["foo"]);
  });
});

describe("bullet ids", () => {
  it("formats b-<base36 ms>-<random>", () => {
    expect(formatBulletId(1_700_000_000_000, "abc123")).toBe(`b-${(1_700_000_000_000).toString(36)}-abc123`);
    expect(formatBulletId(0, "zzzzzz")).toBe("b-0-zzzzzz");
  });
  it("draws base36 characters from the injected random source", () => {
    const values = [0, 0.5, 0.999, 0.1, 0.2, 0.3];
    let i = 0;
    expect(randomBase36(6, () => values[i++]!)).toBe("0iz37a");
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 6, maxLength: 6 }), (xs) => {
        let j = 0;
        expect(randomBase36(6, () => xs[j++]!)).toMatch(/^[0-9a-z]{6}$/);
      }),
    );
  });
});
