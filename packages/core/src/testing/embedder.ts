import type { Embedder, EmbeddingCache, EmbeddingCacheEntry } from "../ports.js";

/**
 * Test doubles of the semantic-search ports.
 *
 * The test embedder is NOT a semantic model: it hashes the character trigrams of each word into a
 * fixed number of buckets and normalises the counts, so texts that share spelling get similar
 * vectors and texts that share meaning but not spelling do not. It is deterministic, fast and
 * needs no download, which is what tests of the plumbing (fusion, fallback, caching) need. To
 * simulate a paraphrase, map words onto each other with `synonyms` before hashing.
 */

export interface TestEmbedderOptions {
  /** Model name reported to caches (default `test-trigram-256`). */
  model?: string;
  /** Vector length (default 256). */
  dimensions?: number;
  /** Word → replacement applied before hashing (lower-case), e.g. `{ signing: "logout" }`. */
  synonyms?: Readonly<Record<string, string>>;
  /** Makes `embed` reject with this error (or the error returned for a batch). */
  fail?: Error | ((texts: readonly string[]) => Error | undefined);
}

export interface TestEmbedder extends Embedder {
  /** The texts of every `embed` call, in call order. */
  readonly calls: string[][];
  /** Switches failing on or off after creation. */
  setFailure(fail: TestEmbedderOptions["fail"]): void;
}

/** FNV-1a, 32 bit. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The trigram vector of a text (see the module comment), L2-normalised; all zeros for a text without letters or digits. */
export function trigramVector(text: string, dimensions = 256, synonyms: Readonly<Record<string, string>> = {}): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  for (const raw of words) {
    const word = ` ${synonyms[raw] ?? raw} `;
    for (let i = 0; i + 3 <= word.length; i++) vector[fnv1a(word.slice(i, i + 3)) % dimensions]! += 1;
  }
  let norm = 0;
  for (const x of vector) norm += x * x;
  if (norm === 0) return vector;
  const scale = 1 / Math.sqrt(norm);
  return vector.map((x) => x * scale);
}

/** A deterministic embedder over character trigrams (not a semantic model; see the module comment). */
export function createTestEmbedder(options: TestEmbedderOptions = {}): TestEmbedder {
  const dimensions = options.dimensions ?? 256;
  const model = options.model ?? `test-trigram-${dimensions}`;
  const synonyms = options.synonyms ?? {};
  let fail = options.fail;
  const calls: string[][] = [];
  return {
    model,
    calls,
    setFailure(next) {
      fail = next;
    },
    async embed(texts) {
      calls.push([...texts]);
      const error = typeof fail === "function" ? fail(texts) : fail;
      if (error !== undefined) throw error;
      return texts.map((text) => trigramVector(text, dimensions, synonyms));
    },
  };
}

export interface MemoryEmbeddingCache extends EmbeddingCache {
  /** What the cache holds, in the layout of `embeddings/bullets.json` (reference §4.10). */
  readonly data: { version: "1.0"; model: string; bullets: Record<string, { contentHash: string; embedding: number[]; computedAt: string }> } | null;
  /** Number of get / put calls. */
  readonly stats: { gets: number; puts: number; hits: number };
}

/**
 * An in-memory embedding cache with the file cache's rules: one model at a time (vectors of another
 * model are discarded on write), entries per bullet id, looked up by content hash.
 */
export function createMemoryEmbeddingCache(options: { now?: () => string } = {}): MemoryEmbeddingCache {
  const now = options.now ?? (() => "2026-01-01T00:00:00.000Z");
  const stats = { gets: 0, puts: 0, hits: 0 };
  let data: MemoryEmbeddingCache["data"] = null;
  return {
    get data() {
      return data;
    },
    stats,
    async get(model, hashes) {
      stats.gets++;
      const found = new Map<string, number[]>();
      if (data === null || data.model !== model) return found;
      const wanted = new Set(hashes);
      for (const entry of Object.values(data.bullets)) {
        if (wanted.has(entry.contentHash) && !found.has(entry.contentHash)) found.set(entry.contentHash, [...entry.embedding]);
      }
      stats.hits += found.size;
      return found;
    },
    async put(model, entries: readonly EmbeddingCacheEntry[]) {
      stats.puts++;
      if (data === null || data.model !== model) data = { version: "1.0", model, bullets: {} };
      for (const entry of entries) {
        data.bullets[entry.id] = { contentHash: entry.contentHash, embedding: [...entry.embedding], computedAt: now() };
      }
    },
  };
}
