import { AppError, isAppError } from "../errors.js";
import type { Embedder, EmbeddingCache, Logger, OperationDeps } from "../ports.js";
import { isActiveBullet } from "./bullet-state.js";
import type { Bullet } from "../schemas/playbook.js";
import { semanticSearchStatus, type MergeCandidate, type SimilarityScorer } from "./similarity.js";
import { hashContent } from "./text.js";

/**
 * Optional semantic search (reference §5.12 item 3, §1.5.3, §1.5.6, §4.10): texts become vectors
 * through the {@link Embedder} port, bullet vectors are reused from an {@link EmbeddingCache} while
 * the bullet's content hash is unchanged, and cosine similarity compares them. Everything here is
 * pure apart from the two ports; hosts decide which embedder exists (an embeddings endpoint, a
 * local model, or the deterministic test embedder).
 *
 * Semantic search is an addition to keyword matching, never a requirement: every caller falls
 * back to keywords when the embedder cannot be loaded or fails, and says so.
 */

/** Cosine at or above which two bullets count as the same rule (dedup, `stats` semantic merge candidates). */
export const SEMANTIC_DUPLICATE_THRESHOLD = 0.85;
/** `stats` lists at most this many semantic merge candidates (reference §1.5.6). */
export const SEMANTIC_MERGE_MAX_PAIRS = 5;
/** Bullets compared by the `stats` semantic scan (newest first), bounding its quadratic work. */
export const SEMANTIC_MERGE_MAX_SCAN = 2000;

/**
 * Cosine similarity in [-1, 1]. Vectors of different lengths, empty vectors and zero vectors have
 * no direction to compare: 0.
 */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length === 0 || a.length !== b.length) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    normA += x * x;
    normB += y * y;
  }
  if (!(normA > 0) || !(normB > 0)) return 0;
  const cosine = dot / Math.sqrt(normA * normB);
  if (!Number.isFinite(cosine)) return 0;
  return Math.max(-1, Math.min(1, cosine));
}

/**
 * `hashContent` remembered per content text: hashing is pure-JS SHA-256 (about 20 µs per rule), and
 * semantic search needs every active rule's hash on every call. Bounded; cleared when full.
 */
const HASH_MEMO_MAX = 50_000;
const hashMemo = new Map<string, string>();

function contentHashOf(content: string): string {
  let hash = hashMemo.get(content);
  if (hash === undefined) {
    hash = hashContent(content);
    if (hashMemo.size >= HASH_MEMO_MAX) hashMemo.clear();
    hashMemo.set(content, hash);
  }
  return hash;
}

function unavailable(message: string, hint: string, cause?: unknown): AppError {
  return new AppError("SEMANTIC_SEARCH_UNAVAILABLE", message, { hint, ...(cause !== undefined ? { cause } : {}) });
}

/**
 * Checks what an embedder returned: `count` vectors of finite numbers, all of one non-zero length.
 * Throws SEMANTIC_SEARCH_UNAVAILABLE otherwise (a broken server must not poison the cache).
 */
export function checkEmbeddings(vectors: unknown, count: number, model: string): number[][] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    const got = Array.isArray(vectors) ? `${vectors.length} vectors` : typeof vectors;
    throw unavailable(`Embedding model ${model} returned ${got} for ${count} texts`, "Check that embeddingModel names an embedding model.");
  }
  let dimensions = -1;
  for (const vector of vectors) {
    if (!Array.isArray(vector) || vector.length === 0 || !vector.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw unavailable(`Embedding model ${model} returned a vector that is not a list of numbers`, "Check that embeddingModel names an embedding model.");
    }
    if (dimensions === -1) dimensions = vector.length;
    else if (vector.length !== dimensions) {
      throw unavailable(`Embedding model ${model} returned vectors of different lengths (${dimensions} and ${vector.length})`, "Check that embeddingModel names an embedding model.");
    }
  }
  return vectors as number[][];
}

/**
 * The `semanticError` text for a failure: the error's message and, when it has one, its hint, so
 * that an agent reading the JSON knows what to change.
 */
export function describeSemanticError(error: unknown): string {
  if (isAppError(error)) {
    // isAppError, not instanceof: the error may come from another bundle's copy of core (cm-llm.cjs).
    const hint = error.hint?.trim();
    return hint ? `${error.message} (${hint})` : error.message;
  }
  const message = error instanceof Error ? error.message : String(error);
  return `${message} (check embeddingBackend and embeddingModel in config.json, or set semanticSearchEnabled: false)`;
}

/**
 * The embedder, when the configuration asks for semantic search (`semanticSearchEnabled` and an
 * `embeddingModel` other than "none"); null when it does not. Throws SEMANTIC_SEARCH_UNAVAILABLE
 * (or the host's error) when it asks for one that cannot be loaded.
 */
export async function loadSemanticEmbedder(deps: Pick<OperationDeps, "config" | "embedder">): Promise<Embedder | null> {
  if (!semanticSearchStatus(deps.config).configured) return null;
  if (deps.embedder === undefined) {
    throw unavailable(
      "Semantic search is enabled but no embedder is available in this program",
      "Set semanticSearchEnabled: false, or pass an embedder in OperationDeps.",
    );
  }
  return deps.embedder();
}

export interface EmbeddingSession {
  embedder: Embedder;
  cache?: EmbeddingCache | undefined;
  logger: Logger;
  /** Applied to every text before it is sent to the embedder (secret redaction). */
  sanitize?: ((text: string) => string) | undefined;
}

export interface EmbeddedContents {
  /** Vector per content hash (`hashContent`) of every item with non-empty content. */
  byHash: Map<string, number[]>;
  /** Vectors of the extra texts, in order. */
  extra: number[][];
  /** How many item vectors came from the cache. */
  cached: number;
  /** How many item vectors were computed now. */
  computed: number;
}

/**
 * Vectors for the items' contents, keyed by content hash: cached vectors of unchanged contents are
 * reused, the rest are embedded together with `extra` texts (the query) in one call and stored.
 * Items whose content is empty get no vector. A cache that cannot be read or written only costs
 * time (logged); an embedder failure rejects.
 */
export async function embedWithCache(
  session: EmbeddingSession,
  items: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  extra: readonly string[] = [],
): Promise<EmbeddedContents> {
  const { embedder, cache, logger } = session;
  const sanitize = session.sanitize ?? ((text: string) => text);
  const firstByHash = new Map<string, Pick<Bullet, "id" | "content">>();
  for (const item of items) {
    const hash = contentHashOf(item.content);
    if (hash !== "" && !firstByHash.has(hash)) firstByHash.set(hash, item);
  }
  const byHash = new Map<string, number[]>();
  if (cache !== undefined && firstByHash.size > 0) {
    try {
      const stored = await cache.get(embedder.model, [...firstByHash.keys()]);
      for (const [hash, vector] of stored) if (firstByHash.has(hash)) byHash.set(hash, vector);
    } catch (error) {
      logger.warn(`Embedding cache could not be read; recomputing: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const missing = [...firstByHash.entries()].filter(([hash]) => !byHash.has(hash));
  const embed = async (batch: string[]): Promise<number[][]> =>
    batch.length === 0 ? [] : checkEmbeddings(await embedder.embed(batch), batch.length, embedder.model);
  const vectors = await embed([...missing.map(([, item]) => sanitize(item.content)), ...extra.map(sanitize)]);
  const fresh = new Map<string, number[]>();
  missing.forEach(([hash], i) => {
    byHash.set(hash, vectors[i]!);
    fresh.set(hash, vectors[i]!);
  });

  // Cached vectors of another length than the model returns now (the server's model changed under
  // the same name) cannot be compared with fresh ones: recompute them.
  const dimensions = vectors[0]?.length;
  if (dimensions !== undefined) {
    const stale = [...byHash.entries()].filter(([hash, v]) => v.length !== dimensions && !fresh.has(hash)).map(([hash]) => hash);
    if (stale.length > 0) {
      logger.debug(`Embedding cache holds ${stale.length} vectors of another length than ${embedder.model} returns; recomputing them`);
      const again = await embed(stale.map((hash) => sanitize(firstByHash.get(hash)!.content)));
      if (again[0]!.length !== dimensions) {
        throw unavailable(`Embedding model ${embedder.model} returned vectors of different lengths between calls`, "Check that the embedding server serves one model under this name.");
      }
      stale.forEach((hash, i) => {
        byHash.set(hash, again[i]!);
        fresh.set(hash, again[i]!);
      });
    }
  }
  if (fresh.size > 0) await storeVectors(session, items, fresh);
  return { byHash, extra: vectors.slice(missing.length), cached: byHash.size - fresh.size, computed: fresh.size };
}

/** Writes vectors to the cache under every bullet id whose content hashes to them; failures are logged only. */
async function storeVectors(
  session: EmbeddingSession,
  items: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  vectors: ReadonlyMap<string, number[]>,
): Promise<void> {
  if (session.cache === undefined || vectors.size === 0) return;
  const entries = [];
  for (const item of items) {
    const contentHash = contentHashOf(item.content);
    const embedding = vectors.get(contentHash);
    if (embedding !== undefined) entries.push({ id: item.id, contentHash, embedding });
  }
  try {
    await session.cache.put(session.embedder.model, entries);
  } catch (error) {
    session.logger.warn(`Embedding cache could not be written: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The semantic part of a context ranking (the ranker's `RankOptions.semantic`). */
export interface SemanticRankInput {
  /** Cosine in [-1, 1] of the task to each bullet that has a vector. */
  scores: ReadonlyMap<Bullet, number>;
  /** How much of the fused relevance comes from the cosine (config `semanticWeight`). */
  weight: number;
}

export interface TaskSemantics {
  mode: "semantic" | "keyword";
  /** Why semantic search was requested but not used (the context result's `semanticError`). */
  error?: string;
  /** Present in semantic mode. */
  rank?: SemanticRankInput;
}

/**
 * Semantic scores of the active bullets for a task, when the configuration enables semantic search
 * and an embedder answers. Never throws: any failure gives keyword mode, a logged warning and the
 * `error` text. With no active bullet there is nothing to compare and no embedder is loaded.
 */
export async function semanticScoresForTask(
  deps: Pick<OperationDeps, "config" | "embedder" | "embeddingCache" | "logger">,
  task: string,
  bullets: readonly Bullet[],
  sanitize?: (text: string) => string,
): Promise<TaskSemantics> {
  if (!semanticSearchStatus(deps.config).configured) return { mode: "keyword" };
  const active = bullets.filter((b) => isActiveBullet(b) && contentHashOf(b.content) !== "");
  if (active.length === 0) return { mode: "keyword" };
  try {
    const embedder = await loadSemanticEmbedder(deps);
    if (embedder === null) return { mode: "keyword" };
    const embedded = await embedWithCache({ embedder, cache: deps.embeddingCache, logger: deps.logger, sanitize }, active, [task]);
    const query = embedded.extra[0]!;
    const scores = new Map<Bullet, number>();
    for (const bullet of active) {
      const vector = embedded.byHash.get(contentHashOf(bullet.content));
      if (vector !== undefined) scores.set(bullet, cosineSimilarity(query, vector));
    }
    deps.logger.debug(`Semantic search with ${embedder.model}: ${embedded.cached} cached, ${embedded.computed} computed`);
    const weight = Number.isFinite(deps.config.semanticWeight) ? Math.max(0, Math.min(1, deps.config.semanticWeight)) : 0.6;
    return { mode: "semantic", rank: { scores, weight } };
  } catch (error) {
    const message = describeSemanticError(error);
    deps.logger.warn(`Semantic search unavailable, using keyword matching: ${message}`);
    return { mode: "keyword", error: message };
  }
}

/**
 * A `similar` scorer: cosine of the query's vector to each bullet's (negative cosines count as 0,
 * so similarities stay in [0, 1] like the keyword scorer's). Rejects when the embedder fails.
 */
export function semanticSimilarityScorer(session: EmbeddingSession): SimilarityScorer {
  return {
    mode: "semantic",
    async score(query, bullets) {
      const embedded = await embedWithCache(session, bullets, [query]);
      const queryVector = embedded.extra[0]!;
      const scores = new Map<string, number>();
      for (const bullet of bullets) {
        const vector = embedded.byHash.get(contentHashOf(bullet.content));
        scores.set(bullet.id, vector === undefined ? 0 : Math.max(0, cosineSimilarity(queryVector, vector)));
      }
      return scores;
    },
  };
}

/**
 * Pairs of bullets whose vectors are near-identical in direction (cosine ≥ `threshold`), scanned in
 * the given order (callers pass newest first) over at most `maxScan` bullets, stopping at
 * `maxPairs`. Similarities are rounded to two decimals. Bullets without a vector are skipped.
 */
export function findSemanticMergeCandidates(
  bullets: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  vectorsByHash: ReadonlyMap<string, readonly number[]>,
  options: { threshold?: number; maxPairs?: number; maxScan?: number } = {},
): MergeCandidate[] {
  const threshold = options.threshold ?? SEMANTIC_DUPLICATE_THRESHOLD;
  const maxPairs = options.maxPairs ?? SEMANTIC_MERGE_MAX_PAIRS;
  const maxScan = options.maxScan ?? SEMANTIC_MERGE_MAX_SCAN;
  const pairs: MergeCandidate[] = [];
  if (maxPairs <= 0) return pairs;
  const scanned: Array<{ id: string; vector: readonly number[] }> = [];
  for (const bullet of bullets.slice(0, Math.max(0, maxScan))) {
    const vector = vectorsByHash.get(contentHashOf(bullet.content));
    if (vector !== undefined) scanned.push({ id: bullet.id, vector });
  }
  for (let i = 0; i < scanned.length; i++) {
    for (let j = i + 1; j < scanned.length; j++) {
      const similarity = cosineSimilarity(scanned[i]!.vector, scanned[j]!.vector);
      if (similarity >= threshold) {
        pairs.push({ a: scanned[i]!.id, b: scanned[j]!.id, similarity: Math.round(similarity * 100) / 100 });
        if (pairs.length >= maxPairs) return pairs;
      }
    }
  }
  return pairs;
}

/**
 * `stats` semantic merge candidates (reference §1.5.6): only when semantic search is enabled;
 * empty (with a logged warning) when the embedder cannot answer. `bullets` newest first.
 */
export async function semanticMergeCandidatesFor(
  deps: Pick<OperationDeps, "config" | "embedder" | "embeddingCache" | "logger">,
  bullets: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  sanitize?: (text: string) => string,
): Promise<MergeCandidate[]> {
  if (!semanticSearchStatus(deps.config).configured) return [];
  const scanned = bullets.slice(0, SEMANTIC_MERGE_MAX_SCAN);
  if (scanned.length < 2) return [];
  try {
    const embedder = await loadSemanticEmbedder(deps);
    if (embedder === null) return [];
    const embedded = await embedWithCache({ embedder, cache: deps.embeddingCache, logger: deps.logger, sanitize }, scanned);
    return findSemanticMergeCandidates(scanned, embedded.byHash);
  } catch (error) {
    deps.logger.warn(`Semantic merge candidates skipped: ${describeSemanticError(error)}`);
    return [];
  }
}

/**
 * Vectors for semantic de-duplication during curation (`CurateContext.semantic`): the reference
 * bullets' (cached) and the new contents', by content hash. Undefined when semantic search is off,
 * there is nothing new, or the embedder cannot answer (then only a debug line is logged, like the
 * original's similarity check, which was skipped silently without embeddings).
 */
export async function semanticDedupVectors(
  deps: Pick<OperationDeps, "config" | "embedder" | "embeddingCache" | "logger">,
  reference: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  newContents: readonly string[],
  sanitize?: (text: string) => string,
): Promise<{ vectors: Map<string, number[]>; threshold: number } | undefined> {
  if (!semanticSearchStatus(deps.config).configured) return undefined;
  const fresh = [...new Set(newContents.filter((c) => contentHashOf(c) !== ""))];
  if (fresh.length === 0 || reference.length === 0) return undefined;
  try {
    const embedder = await loadSemanticEmbedder(deps);
    if (embedder === null) return undefined;
    const embedded = await embedWithCache({ embedder, cache: deps.embeddingCache, logger: deps.logger, sanitize }, reference, fresh);
    const vectors = new Map(embedded.byHash);
    fresh.forEach((content, i) => vectors.set(contentHashOf(content), embedded.extra[i]!));
    return { vectors, threshold: SEMANTIC_DUPLICATE_THRESHOLD };
  } catch (error) {
    deps.logger.debug(`Semantic de-duplication skipped: ${describeSemanticError(error)}`);
    return undefined;
  }
}
