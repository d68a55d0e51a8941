import { describe, expect, it } from "vitest";

import { bm25Idf, bm25TermScore } from "../src/native/bm25.js";
import { makeSnippet } from "../src/native/snippet.js";
import { parseQuery, stem, tokenizeForIndex } from "../src/native/tokenize.js";

describe("native tokenizer", () => {
  it("lower-cases, drops stop words and short tokens", () => {
    expect(tokenizeForIndex("The Parser IS broken, and I fixed it")).toEqual(["parser", "broken", "fix"]);
  });

  it("splits identifiers and keeps their compounds", () => {
    expect(tokenizeForIndex("useEffect")).toEqual(["use", "effect", "useeffect"]);
    expect(tokenizeForIndex("snake_case")).toEqual(["snak", "case", "snake_case"]);
    expect(tokenizeForIndex("HTMLParser")).toEqual(["html", "parser", "htmlparser"]);
    expect(tokenizeForIndex("orders.user_id")).toEqual(["order", "user", "id", "user_id"]);
    expect(tokenizeForIndex("React.useEffect")).toEqual(["react", "use", "effect", "useeffect"]);
    expect(tokenizeForIndex("cma-es on node.js")).toEqual(["cma", "es", "cma-es", "node", "js"]);
    expect(tokenizeForIndex("c++ and C#")).toEqual(["c++", "c#"]);
  });

  it("drops ids, long digit runs and blobs but keeps short numbers", () => {
    expect(tokenizeForIndex("HTTP 401 at 1735689600000")).toEqual(["http", "401"]);
    expect(tokenizeForIndex("sha 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")).toEqual(["sha"]);
  });

  it("reads words of any script", () => {
    expect(tokenizeForIndex("Fehlerbehandlung für Übersetzungen")).toEqual(["fehlerbehandlung", "für", "übersetzungen"]);
  });

  it("stems lightly and consistently", () => {
    expect(["fixes", "fixed", "fixing", "fix"].map(stem)).toEqual(["fix", "fix", "fix", "fix"]);
    expect(["queries", "query"].map(stem)).toEqual(["query", "query"]);
    expect(["running", "tests", "tested", "caching", "cached", "cache"].map(stem)).toEqual(["run", "test", "test", "cach", "cach", "cach"]);
    expect(["status", "class", "analysis", "bus"].map(stem)).toEqual(["status", "class", "analysis", "bus"]);
  });
});

describe("native query parser", () => {
  it("reads buildCassQuery output as a disjunction of keywords", () => {
    const q = parseQuery("auth OR login OR useEffect");
    expect(q.terms).toEqual([
      { token: "auth", weight: 1, match: "exact" },
      { token: "login", weight: 1, match: "exact" },
      { token: "use", weight: 0.5, match: "exact" },
      { token: "effect", weight: 0.5, match: "exact" },
      { token: "useeffect", weight: 1, match: "exact" },
    ]);
    expect(q.excluded).toEqual([]);
  });

  it("handles exclusions, wildcards, quotes and stop words", () => {
    const q = parseQuery('"retry logic" -flaky NOT mocks http* *cache* the AND');
    expect(q.terms).toEqual([
      { token: "retry", weight: 1, match: "exact" },
      { token: "logic", weight: 1, match: "exact" },
      { token: "http", weight: 1, match: "prefix" },
      { token: "cache", weight: 1, match: "substring" },
    ]);
    expect(q.excluded).toEqual(["flaky", "mock"]);
    expect(parseQuery("the OR and").terms).toEqual([]);
    expect(parseQuery("").terms).toEqual([]);
  });
});

describe("BM25", () => {
  it("weights rare terms higher, saturates term frequency and normalises length", () => {
    expect(bm25Idf(100, 1)).toBeGreaterThan(bm25Idf(100, 50));
    expect(bm25Idf(100, 100)).toBeGreaterThan(0);
    const idf = bm25Idf(100, 5);
    const one = bm25TermScore(idf, 1, 10, 10);
    const ten = bm25TermScore(idf, 10, 10, 10);
    expect(ten).toBeGreaterThan(one);
    expect(ten).toBeLessThan(idf * 2.2);
    expect(bm25TermScore(idf, 1, 5, 10)).toBeGreaterThan(bm25TermScore(idf, 1, 50, 10));
    expect(one).toBeCloseTo(idf, 10); // tf 1 at average length: exactly idf
  });
});

describe("snippets", () => {
  const weights = new Map([
    ["deadlock", 1],
    ["mutex", 1],
  ]);

  it("returns short text whole", () => {
    expect(makeSnippet("  a mutex deadlock\nhere  ", weights)).toBe("a mutex deadlock\nhere");
  });

  it("picks the window holding the most distinct matches", () => {
    const pad = (n: number): string => "word ".repeat(n);
    const text = `${pad(100)}deadlock ${pad(100)}the mutex\ncaused a deadlock ${pad(100)}`;
    const snippet = makeSnippet(text, weights, 120);
    expect(snippet).toContain("the mutex\ncaused a deadlock");
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
    expect(snippet.length).toBeLessThanOrEqual(122);
    expect(snippet.slice(1, -1)).toMatch(/^\S.*\S$/s);
  });

  it("falls back to the start when nothing matches", () => {
    const snippet = makeSnippet(`start here ${"x ".repeat(400)}`, weights, 50);
    expect(snippet.startsWith("start here")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
  });
});
