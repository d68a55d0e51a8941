import { describe, expect, it } from "vitest";
import { noteTextSource, sourcedTexts, warmLexicalIndex } from "../src/domain/lexical-cache.js";
import { decodeDocuments, documentKey, hashText, lexicalFingerprint } from "../src/domain/lexical/persist.js";
import { hasLexicalIndex, rankBulletsForTask } from "../src/domain/ranking.js";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import type { LexicalCache, LexicalCachePart } from "../src/ports.js";
import { defaultConfig } from "../src/schemas/config.js";
import type { Bullet } from "../src/schemas/playbook.js";
import { createMemoryLogger, createMemoryStore, createTestBullet, createTestDeps } from "../src/testing.js";

const NOW = "2026-06-01T00:00:00.000Z";
const logger = createMemoryLogger();

/** A LexicalCache in memory that records what was asked of it. */
function memoryCache(initial: Partial<Record<LexicalCachePart, { fingerprint: string; value: unknown }>> = {}) {
  const saved = new Map(Object.entries(initial) as Array<[LexicalCachePart, { fingerprint: string; value: unknown }]>);
  const reads: LexicalCachePart[] = [];
  const writes: LexicalCachePart[] = [];
  const cache: LexicalCache = {
    async read(part, fingerprint) {
      reads.push(part);
      const entry = saved.get(part);
      return entry?.fingerprint === fingerprint ? entry.value : null;
    },
    async write(part, fingerprint, value) {
      writes.push(part);
      saved.set(part, { fingerprint, value: JSON.parse(JSON.stringify(value)) });
    },
  };
  return { cache, saved, reads, writes };
}

const rule = (id: string, content: string, extra: Partial<Bullet> = {}): Bullet =>
  createTestBullet({ id, content, category: "general", createdAt: NOW, updatedAt: NOW, ...extra });

const RULES = [
  rule("secret", "Rotate the session signing secret only together with a grace period for old cookies.", { tags: ["auth"] }),
  rule("esm", "Under NodeNext, relative imports need the .js suffix (ERR_MODULE_NOT_FOUND otherwise)."),
  rule("lockfile", "Update pnpm-lock.yaml in the same PR as a dependency bump; CI installs with --frozen-lockfile."),
  rule("bucket", "Rate-limit per API key with a token bucket; keep the bucket in Redis so replicas share it."),
];

describe("warmLexicalIndex", () => {
  it("analyses every rule once, saves the analyses, and a later index of the same rules reuses them", async () => {
    const { cache, saved } = memoryCache();
    expect(await warmLexicalIndex(RULES, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
    const documents = decodeDocuments(saved.get("documents")!.value);
    expect([...documents.keys()]).toEqual(RULES.map(documentKey));
    expect(saved.get("documents")!.fingerprint).toBe(lexicalFingerprint());

    // Same texts in new objects: this process's index is reused, the cache is not even read.
    const copies = RULES.map((b) => ({ ...b }));
    expect(hasLexicalIndex(copies)).toBe(true);
    expect(await warmLexicalIndex(copies, cache, logger)).toBeNull();

    // One rule edited and one added: only those two are analysed.
    const edited = [...RULES.slice(0, 3), rule("bucket", "Rate-limit per API key with a sliding window."), rule("new", "Pin GitHub Actions to a commit SHA.")];
    expect(hasLexicalIndex(edited)).toBe(false);
    expect(await warmLexicalIndex(edited, cache, logger)).toEqual({ loaded: false, reused: 3, analysed: 2 });
    const after = decodeDocuments(saved.get("documents")!.value);
    // In use first, then the old analysis of the edited rule (kept within the budget).
    expect([...after.keys()]).toEqual([...edited.map(documentKey), documentKey(RULES[3]!)]);
  });

  it("ranks with saved analyses exactly as without them", async () => {
    const { cache } = memoryCache();
    const opts = { now: new Date(NOW), config: defaultConfig(), limit: 10, minRelevance: 0 };
    const tasks = ["users get logged out after every deploy", "Cannot find module ./routes/users", "ERR_PNPM_OUTDATED_LOCKFILE in CI", "throttle each api key"];
    const plain = RULES.map((b) => ({ ...b, content: `${b.content} ` }));
    // Analysed here (and saved), then ranked: the expected answers come from an analysed index.
    expect(await warmLexicalIndex(plain, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
    const expected = tasks.map((t) => rankBulletsForTask(plain, t, opts).ranked.map((r) => [r.id, r.relevanceScore]));
    // Another playbook in between, so this process no longer holds an index of those texts.
    rankBulletsForTask([rule("other", "Something else entirely.")], "anything", opts);
    const fresh = plain.map((b) => ({ ...b }));
    expect(hasLexicalIndex(fresh)).toBe(false);
    expect(await warmLexicalIndex(fresh, cache, logger)).toEqual({ loaded: false, reused: 4, analysed: 0 });
    expect(tasks.map((t) => rankBulletsForTask(fresh, t, opts).ranked.map((r) => [r.id, r.relevanceScore]))).toEqual(expected);
    expect(expected.some((r) => r.length > 0)).toBe(true);
  });

  it("ignores a damaged or foreign cache and replaces it", async () => {
    for (const value of [{ not: "documents" }, ["only-a-key"], [documentKey(RULES[0]!), "not|valid"]]) {
      const distinct = RULES.map((b) => rule(b.id, `${b.content} (${JSON.stringify(value).length})`));
      const { cache, saved } = memoryCache({ documents: { fingerprint: lexicalFingerprint(), value } });
      expect(await warmLexicalIndex(distinct, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
      expect([...decodeDocuments(saved.get("documents")!.value).keys()].slice(0, 4)).toEqual(distinct.map(documentKey));
    }
    const other = RULES.map((b) => rule(b.id, `${b.content} (other analyser)`));
    const { cache } = memoryCache({ documents: { fingerprint: "lexical-0-0000000000000000", value: other.flatMap((b) => [documentKey(b), "x||||"]) } });
    expect(await warmLexicalIndex(other, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
  });

  it("a cache whose reads fail only costs the analysis", async () => {
    const failing: LexicalCache = {
      read: async () => {
        throw new Error("disk on fire");
      },
      write: async () => undefined,
    };
    const distinct = RULES.map((b) => rule(b.id, `${b.content} (failing cache)`));
    expect(await warmLexicalIndex(distinct, failing, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
  });
});

/** memoryCache plus the optional saved index. */
function indexingCache() {
  const base = memoryCache();
  const index: { fingerprint?: string; bytes?: Uint8Array; writes: number } = { writes: 0 };
  base.cache.readIndex = async (fingerprint) => (index.fingerprint === fingerprint && index.bytes !== undefined ? index.bytes.slice() : null);
  base.cache.writeIndex = async (fingerprint, bytes) => {
    index.writes++;
    index.fingerprint = fingerprint;
    index.bytes = bytes.slice();
  };
  return { ...base, index };
}

describe("warmLexicalIndex with a saved index", () => {
  const opts = { now: new Date(NOW), config: defaultConfig(), limit: 10, minRelevance: 0 };
  const tasks = ["users get logged out after every deploy", "relative imports need the suffix", "token bucket per key"];
  const forgetIndex = () => rankBulletsForTask([rule("other", "Something else entirely.")], "anything", opts);

  for (const withDigest of [false, true]) it(`loads the index of the same texts instead of rebuilding it, and ranks exactly the same${withDigest ? " (keyed by the host's digest)" : ""}`, async () => {
    const { cache, index, writes } = indexingCache();
    const digested: string[] = [];
    if (withDigest) {
      cache.digest = (text) => {
        digested.push(text);
        return hashText(text);
      };
    }
    const rules = RULES.map((b) => ({ ...b, content: `${b.content} (saved index${withDigest ? ", digest" : ""})` }));
    expect(await warmLexicalIndex(rules, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
    expect(index.writes).toBe(1);
    const expected = tasks.map((t) => rankBulletsForTask(rules, t, opts).ranked.map((r) => [r.id, r.relevanceScore]));
    expect(expected.some((r) => r.length > 0)).toBe(true);

    forgetIndex();
    // Same texts, other objects and other feedback: the texts decide.
    const fresh = rules.map((b, i) => ({ ...b, helpfulCount: i }));
    expect(await warmLexicalIndex(fresh, cache, logger)).toEqual({ loaded: true, reused: 4, analysed: 0 });
    expect(writes).toEqual(["documents"]);
    expect(index.writes).toBe(1);
    // (Ranking `fresh`: `rules` may still map to the index built from them.)
    expect(tasks.map((t) => rankBulletsForTask(fresh, t, opts).ranked.map((r) => [r.id, r.relevanceScore]))).toEqual(expected);

    // One text edited: the saved index no longer applies; the other analyses are reused, and the
    // new index is saved in place of the old one.
    forgetIndex();
    const edited = [...rules.slice(0, 3), { ...rules[3]!, content: "Rate-limit with a sliding window." }];
    expect(await warmLexicalIndex(edited, cache, logger)).toEqual({ loaded: false, reused: 3, analysed: 1 });
    expect(index.writes).toBe(2);
    forgetIndex();
    expect(await warmLexicalIndex(edited.map((b) => ({ ...b })), cache, logger)).toEqual({ loaded: true, reused: 4, analysed: 0 });
    // With a digest, every warm-up digested all the texts once (and only then).
    expect(digested.length).toBe(withDigest ? 4 : 0);
    if (withDigest) expect(digested[3]).toContain("Rate-limit with a sliding window.");
  });

  it("rebuilds when the saved bytes are damaged or unreadable", async () => {
    const { cache, index } = indexingCache();
    const rules = RULES.map((b) => ({ ...b, content: `${b.content} (damaged index)` }));
    await warmLexicalIndex(rules, cache, logger);
    index.bytes = index.bytes!.subarray(0, 40);
    forgetIndex();
    expect(await warmLexicalIndex(rules.map((b) => ({ ...b })), cache, logger)).toEqual({ loaded: false, reused: 4, analysed: 0 });
    forgetIndex();
    cache.readIndex = async () => {
      throw new Error("disk on fire");
    };
    expect(await warmLexicalIndex(rules.map((b) => ({ ...b })), cache, logger)).toEqual({ loaded: false, reused: 4, analysed: 0 });
  });
});

describe("warmLexicalIndex with texts a store vouched for", () => {
  const opts = { now: new Date(NOW), config: defaultConfig(), limit: 10, minRelevance: 0 };
  const tasks = ["users get logged out after every deploy", "relative imports need the suffix", "token bucket per key"];
  const forgetIndex = () => rankBulletsForTask([rule("other", "Something else entirely.")], "anything", opts);
  const rankAll = (bullets: Bullet[]) => tasks.map((t) => rankBulletsForTask(bullets, t, opts).ranked.map((r) => [r.id, r.relevanceScore]));
  const read = (source: string, suffix: string) => {
    const bullets = RULES.map((b) => ({ ...b, content: `${b.content} (${suffix})`, tags: [...(b.tags ?? [])] }));
    noteTextSource(bullets, source);
    return bullets;
  };

  it("keys the saved index by the source instead of the texts, and ranks exactly the same", async () => {
    const { cache, index } = indexingCache();
    const digested: string[] = [];
    cache.digest = (text) => {
      digested.push(text);
      return hashText(text);
    };
    const first = read("file-1", "vouched");
    expect(sourcedTexts(first)).toEqual([{ source: "file-1", from: 0, to: 3 }]);
    expect(await warmLexicalIndex(first, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });
    expect(index.writes).toBe(1);
    // The digest saw the source and positions, never a rule's text.
    expect(digested).toHaveLength(1);
    for (const b of first) expect(digested[0]).not.toContain(b.content);
    const expected = rankAll(first);
    expect(expected.some((r) => r.length > 0)).toBe(true);

    // The next read of the same file (new objects, a merged copy of the list): loaded as saved.
    forgetIndex();
    const again = [...read("file-1", "vouched")];
    expect(await warmLexicalIndex(again, cache, logger)).toEqual({ loaded: true, reused: 4, analysed: 0 });
    expect(index.writes).toBe(1);
    expect(rankAll(again)).toEqual(expected);

    // Another source for the same texts is another key: rebuilt from the saved analyses.
    forgetIndex();
    const other = read("file-2", "vouched");
    expect(await warmLexicalIndex(other, cache, logger)).toEqual({ loaded: false, reused: 4, analysed: 0 });
    expect(index.writes).toBe(2);
    expect(rankAll(other)).toEqual(expected);
  });

  it("keys bullets whose texts changed after the read, or that the store did not return, by their texts", async () => {
    const { cache, index } = indexingCache();
    const base = read("file-3", "changed later");
    expect(await warmLexicalIndex(base, cache, logger)).toEqual({ loaded: false, reused: 0, analysed: 4 });

    const cases: Array<[string, (bullets: Bullet[]) => Bullet[]]> = [
      ["content edited in place", (bs) => ((bs[1]!.content = "Rate-limit with a sliding window."), bs)],
      ["category edited in place", (bs) => ((bs[2]!.category = "ci"), bs)],
      ["a tag added in place", (bs) => (bs[0]!.tags.push("cookies"), bs)],
      ["a tag changed in place", (bs) => ((bs[0]!.tags[0] = "cookies"), bs)],
      ["tags replaced", (bs) => ((bs[0]!.tags = ["session"]), bs)],
      ["a bullet replaced by a copy with other text", (bs) => [bs[0]!, { ...bs[1]!, content: "Pin GitHub Actions to a commit SHA." }, bs[2]!, bs[3]!]],
      ["order changed", (bs) => [bs[1]!, bs[0]!, bs[2]!, bs[3]!]],
      ["a bullet dropped", (bs) => bs.slice(1)],
    ];
    for (const [what, change] of cases) {
      forgetIndex();
      const bullets = change(read("file-3", "changed later"));
      const writes = index.writes;
      const result = await warmLexicalIndex(bullets, cache, logger);
      expect(result?.loaded, what).toBe(false);
      expect(index.writes, what).toBe(writes + 1);
      // The index built for the changed texts ranks as one built without any cache.
      const ranked = rankAll(bullets);
      forgetIndex();
      const plain = bullets.map((b) => ({ ...b, tags: [...b.tags] }));
      expect(await warmLexicalIndex(plain, undefined, logger)).toBeNull();
      expect(rankAll(plain), what).toEqual(ranked);
    }

    // A copy with the same texts (as the blocked-log filter makes) is keyed by its texts, and the
    // key is stable: the second time the index is loaded.
    const withCopy = (bs: Bullet[]) => [bs[0]!, { ...bs[1]!, deprecated: true }, bs[2]!, bs[3]!];
    forgetIndex();
    const firstCopy = withCopy(read("file-3", "changed later"));
    expect(sourcedTexts(firstCopy)).toEqual([{ source: "file-3", from: 0, to: 0 }, { doc: firstCopy[1] }, { source: "file-3", from: 2, to: 3 }]);
    expect((await warmLexicalIndex(firstCopy, cache, logger))?.loaded).toBe(false);
    forgetIndex();
    expect((await warmLexicalIndex(withCopy(read("file-3", "changed later")), cache, logger))?.loaded).toBe(true);
  });

  it("ignores sources that could be confused with its own separators", () => {
    const bullets = RULES.map((b) => ({ ...b, content: `${b.content} (bad source)` }));
    noteTextSource(bullets, "two\nlines");
    noteTextSource(bullets, "\u0003x");
    noteTextSource(bullets, "");
    expect(sourcedTexts(bullets)).toBeNull();
  });
});

describe("context with a lexical cache", () => {
  it("saves the analyses of the whole playbook and answers the same with and without the cache", async () => {
    const store = createMemoryStore({ repo: false, now: () => NOW });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(...RULES.map((b) => ({ ...b, content: `${b.content} Seen in context.` })));
    });
    const { cache, saved } = memoryCache();
    const input = { task: "everyone is signed out after we deploy", noHistory: true };
    const withCache = await runOperation(contextOperation, createTestDeps(store, { lexicalCache: cache }), input);
    const without = await runOperation(contextOperation, createTestDeps(store), input);
    expect(withCache.relevantBullets.map((b) => b.id)).toEqual(without.relevantBullets.map((b) => b.id));
    expect(withCache.relevantBullets.length).toBeGreaterThan(0);
    expect(decodeDocuments(saved.get("documents")?.value).size).toBe(RULES.length);
  });
});
