import { describe, expect, it } from "vitest";
import { DEFAULT_BM25F, LexicalIndex, type IndexedDocument } from "./lexical-index.js";
import { analyzeQuery } from "./query.js";

function scores(index: LexicalIndex, task: string): Map<number, number> {
  const r = index.search(analyzeQuery(task, undefined, undefined, index).query);
  const out = new Map<number, number>();
  for (let i = 0; i < r.count; i++) out.set(r.docs[i]!, r.scores[r.docs[i]!]!);
  return out;
}

const filler = (n: number): IndexedDocument[] => Array.from({ length: n }, (_, i) => ({ content: `Routine note number ${100 + i} about shared tooling and common practice` }));

describe("LexicalIndex", () => {
  it("scores only documents that share a term with the query", () => {
    const index = new LexicalIndex([{ content: "Rotate the signing key" }, { content: "Paginate with keyset cursors" }, { content: "Nothing relevant here" }]);
    const s = scores(index, "signing key rotation");
    expect([...s.keys()]).toEqual([0]);
    expect(s.get(0)).toBeGreaterThan(0);
    expect(scores(index, "zebra quokka").size).toBe(0);
  });

  it("weighs rare terms above common ones (idf)", () => {
    const docs = [...filler(20), { content: "Common practice for kafka consumers" }, { content: "Common practice for tooling" }];
    const s = scores(new LexicalIndex(docs), "kafka tooling");
    expect(s.get(20)!).toBeGreaterThan(s.get(21)!);
  });

  it("counts a word in the tags more than the same word in the content", () => {
    // Same content length everywhere, so only the field differs.
    const docs = [
      { content: "alpha beta gamma delta" },
      { content: "beta gamma delta epsilon", tags: ["alpha"] },
      ...["zeta", "eta", "theta"].map((w) => ({ content: `${w} beta gamma delta`, tags: [w] })),
    ];
    const s = scores(new LexicalIndex(docs), "alpha");
    expect(s.get(1)!).toBeGreaterThan(s.get(0)!);
  });

  it("normalises by length: the shorter rule with the same match scores higher", () => {
    const docs = [
      { content: "Use pgbouncer" },
      { content: "Use pgbouncer in transaction mode when many replicas each open their own pool of connections to the database server" },
      ...filler(5),
    ];
    const s = scores(new LexicalIndex(docs), "pgbouncer");
    expect(s.get(0)!).toBeGreaterThan(s.get(1)!);
  });

  it("adds a proximity bonus when adjacent task words are near each other in the rule", () => {
    const docs = [
      { content: "Keyset pagination is faster than offset for deep lists of items" },
      { content: "Pagination of lists of items: prefer a keyset over offset when deep" },
      ...filler(5),
    ];
    const withPairs = new LexicalIndex(docs);
    const without = new LexicalIndex(docs, { ...DEFAULT_BM25F, pairWeight: 0 });
    const a = scores(withPairs, "keyset pagination");
    const b = scores(without, "keyset pagination");
    expect(a.get(0)! - b.get(0)!).toBeGreaterThan(0);
    expect(a.get(1)!).toBeCloseTo(b.get(1)!, 10);
  });

  it("matches different phrasings of one problem through the concept map", () => {
    const docs = [{ content: "Find memory leaks by comparing heap snapshots" }, { content: "Cache parsed configuration" }, ...filler(5)];
    const s = scores(new LexicalIndex(docs), "the pod was OOMKilled again");
    expect([...s.keys()]).toEqual([0]);
  });

  it("tells matches in the content or tags from matches in the category only", () => {
    const index = new LexicalIndex([
      { content: "alpha beta", category: "gamma" },
      { content: "delta", category: "gamma" },
      { content: "epsilon", tags: ["gamma"] },
    ]);
    const r = index.search(analyzeQuery("gamma alpha").query);
    expect(r.count).toBe(3);
    expect([r.textHits[0], r.textHits[1], r.textHits[2]]).toEqual([1, 0, 1]);
  });

  it("keeps searches independent (scratch space is reset between queries)", () => {
    const index = new LexicalIndex([{ content: "alpha" }, { content: "beta" }, { content: "alpha beta" }]);
    const first = scores(index, "alpha");
    scores(index, "beta");
    expect(scores(index, "alpha")).toEqual(first);
  });

  it("reports vocabulary and idf", () => {
    const index = new LexicalIndex([{ content: "alpha beta" }, { content: "alpha" }]);
    expect(index.has("alpha")).toBe(true);
    expect(index.has("zulu")).toBe(false);
    expect(index.idfOf("beta")).toBeGreaterThan(index.idfOf("alpha"));
    expect(index.idfOf("zulu")).toBe(0);
    expect(index.size).toBe(2);
  });
});
