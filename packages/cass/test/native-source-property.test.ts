// Property: whatever sequence of additions, changes and deletions the index went through, a search
// returns exactly the messages a brute-force BM25 over the current files scores above zero, with
// the same scores, in descending order.
import { rmSync } from "node:fs";
import { join } from "node:path";

import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";

import { bm25Idf, bm25TermScore } from "../src/native/bm25.js";
import { createNativeSource } from "../src/native/native-source.js";
import { parseQuery, tokenizeForIndex } from "../src/native/tokenize.js";
import { discoveryEnv, fakeDiscover, fakeReader, removeDir, tempDir, writeSession, type FakeSession } from "./native-source-helpers.js";

const WORDS = ["cache", "caching", "cached", "deploy", "useEffect", "user_id", "token", "tokens", "error", "the", "and", "retry", "mutex", "DeadLock", "kafka"];
const NOW = Date.parse("2026-03-01T12:00:00Z");

const message = fc.record({
  role: fc.constantFrom("user", "assistant"),
  content: fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 12 }).map((ws) => ws.join(" ")),
  ts: fc.integer({ min: 0, max: 1_000_000 }).map((n) => NOW - n * 1000),
});
const session = fc.record({ messages: fc.array(message, { minLength: 1, maxLength: 6 }) });
const op = fc.oneof(
  fc.record({ kind: fc.constant("write" as const), file: fc.integer({ min: 0, max: 3 }), session }),
  fc.record({ kind: fc.constant("delete" as const), file: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("search" as const), query: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((ws) => ws.join(" OR ")) }),
);

interface Expected {
  key: string;
  score: number;
}

function bruteForce(files: Map<string, FakeSession>, query: string): Expected[] {
  const docs: Array<{ key: string; tokens: string[] }> = [];
  for (const [path, s] of files) {
    s.messages.forEach((m, i) => {
      const tokens = tokenizeForIndex(m.content);
      if (m.content.trim() !== "" && tokens.length > 0) docs.push({ key: `${path}:${i + 2}`, tokens });
    });
  }
  const n = docs.length;
  if (n === 0) return [];
  const avg = docs.reduce((a, d) => a + d.tokens.length, 0) / n;
  const weights = new Map<string, number>();
  for (const t of parseQuery(query).terms) weights.set(t.token, Math.max(weights.get(t.token) ?? 0, t.weight));
  const scores = new Map<string, number>();
  for (const [token, weight] of weights) {
    const df = docs.filter((d) => d.tokens.includes(token)).length;
    const idf = bm25Idf(n, df) * weight;
    for (const d of docs) {
      const tf = d.tokens.filter((t) => t === token).length;
      if (tf > 0) scores.set(d.key, (scores.get(d.key) ?? 0) + bm25TermScore(idf, tf, d.tokens.length, avg));
    }
  }
  return [...scores.entries()].filter(([, s]) => s > 0).map(([key, score]) => ({ key, score }));
}

const dirs: string[] = [];
afterAll(() => dirs.forEach(removeDir));

describe("native source index (property)", () => {
  it("matches a brute-force BM25 after any sequence of updates", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 20 }), async (ops) => {
        const home = tempDir("cm-native-prop-");
        dirs.push(home);
        const root = join(home, "sessions");
        const src = createNativeSource({
          readers: [fakeReader("claude_code", root)],
          discover: fakeDiscover,
          discoveryEnv: discoveryEnv(home),
          indexDir: join(home, "index"),
          clock: { now: () => new Date(NOW) },
        });
        const files = new Map<string, FakeSession>();
        let tick = 0;
        const check = async (query: string): Promise<void> => {
          const { hits } = await src.search(query, { limit: 1000 });
          const expected = bruteForce(files, query);
          const got = new Map(hits.map((h) => [`${h.source_path}:${h.line_number}`, h.score ?? 0]));
          expect(hits).toHaveLength(expected.length);
          expect([...got.keys()].sort()).toEqual(expected.map((e) => e.key).sort());
          for (const e of expected) expect(got.get(e.key)).toBeCloseTo(e.score, 5);
          for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score!).toBeGreaterThanOrEqual(hits[i]!.score!);
        };
        for (const o of ops) {
          const path = join(root, `s${"file" in o ? o.file : 0}.jsonl`);
          if (o.kind === "write") {
            writeSession(path, o.session, NOW - 1_000_000 + ++tick * 1000);
            files.set(path, o.session);
          } else if (o.kind === "delete") {
            rmSync(path, { force: true });
            files.delete(path);
          } else {
            await check(o.query);
          }
        }
        await check("cache OR deploy OR useeffect OR user_id OR deadlock");
      }),
      { numRuns: 40 },
    );
  });
});
