import type { Config } from "../schemas/config.js";
import type { Bullet } from "../schemas/playbook.js";
import { jaccardOfSets, tokenSet } from "./text.js";

/**
 * Similarity between a query and playbook bullets, and between bullets (reference §1.5.3, §1.5.6).
 *
 * `cm similar` asks a {@link SimilarityScorer} for one number per bullet: the keyword scorer
 * (Jaccard index of token sets, §5.1) or, when semantic search is enabled, the semantic one
 * (cosine of embeddings, `domain/semantic.ts`). `mode` reports which one produced the results.
 */

export type SimilarityMode = "keyword" | "semantic";

export interface SimilarityScorer {
  /** The mode results produced by this scorer are reported as. */
  readonly mode: SimilarityMode;
  /** Similarity in [0, 1] of `query` to each bullet, keyed by bullet id. */
  score(query: string, bullets: ReadonlyArray<Pick<Bullet, "id" | "content">>): Promise<Map<string, number>>;
}

/** Jaccard index between the query's token set and each bullet content's token set. */
export const keywordSimilarityScorer: SimilarityScorer = {
  mode: "keyword",
  async score(query, bullets) {
    const queryTokens = tokenSet(query);
    const scores = new Map<string, number>();
    for (const bullet of bullets) scores.set(bullet.id, jaccardOfSets(queryTokens, tokenSet(bullet.content)));
    return scores;
  },
};

export interface SimilarMatch<B> {
  bullet: B;
  similarity: number;
}

/**
 * Scores `bullets` against `query`, keeps those with similarity ≥ `threshold`, best first (ties
 * keep the input order), at most `limit`.
 */
export async function findSimilar<B extends Pick<Bullet, "id" | "content">>(
  query: string,
  bullets: readonly B[],
  scorer: SimilarityScorer,
  options: { threshold: number; limit: number },
): Promise<Array<SimilarMatch<B>>> {
  const scores = await scorer.score(query, bullets);
  const matches: Array<SimilarMatch<B>> = [];
  for (const bullet of bullets) {
    const similarity = scores.get(bullet.id);
    if (similarity !== undefined && Number.isFinite(similarity) && similarity >= options.threshold) {
      matches.push({ bullet, similarity });
    }
  }
  matches.sort((a, b) => b.similarity - a.similarity);
  return matches.slice(0, Math.max(0, options.limit));
}

/** Merge-candidate scan limits of `cm stats` (reference §1.5.6, §9.4). */
export const MERGE_CANDIDATE_THRESHOLD = 0.8;
export const MERGE_CANDIDATE_MAX_PAIRS = 10;
export const MERGE_CANDIDATE_MAX_SCAN = 2000;

export interface MergeCandidate {
  a: string;
  b: string;
  /** Jaccard index rounded to two decimals. */
  similarity: number;
}

/**
 * Pairs of bullets whose contents are near-duplicates (token Jaccard ≥ `threshold`). Bullets are
 * scanned in the order given (callers pass newest first), only the first `maxScan` of them, and
 * the scan stops at `maxPairs` pairs, so the quadratic work is bounded by `maxScan²/2`. Bullets
 * without any token are skipped.
 */
export function findMergeCandidates(
  bullets: ReadonlyArray<Pick<Bullet, "id" | "content">>,
  options: { threshold?: number; maxPairs?: number; maxScan?: number } = {},
): MergeCandidate[] {
  const threshold = options.threshold ?? MERGE_CANDIDATE_THRESHOLD;
  const maxPairs = options.maxPairs ?? MERGE_CANDIDATE_MAX_PAIRS;
  const maxScan = options.maxScan ?? MERGE_CANDIDATE_MAX_SCAN;
  const scanned = bullets.slice(0, Math.max(0, maxScan)).map((b) => ({ id: b.id, tokens: tokenSet(b.content) }));
  const pairs: MergeCandidate[] = [];
  if (maxPairs <= 0) return pairs;
  for (let i = 0; i < scanned.length; i++) {
    const left = scanned[i]!;
    if (left.tokens.size === 0) continue;
    for (let j = i + 1; j < scanned.length; j++) {
      const right = scanned[j]!;
      if (right.tokens.size === 0) continue;
      const similarity = jaccardOfSets(left.tokens, right.tokens);
      if (similarity >= threshold) {
        pairs.push({ a: left.id, b: right.id, similarity: Math.round(similarity * 100) / 100 });
        if (pairs.length >= maxPairs) return pairs;
      }
    }
  }
  return pairs;
}

export interface SemanticSearchStatus {
  /** Semantic search is switched on in the configuration (and the model is not "none"). */
  configured: boolean;
  model: string;
}

/** Whether the configuration asks for semantic search (`semanticSearchEnabled`, `embeddingModel`). */
export function semanticSearchStatus(config: Pick<Config, "semanticSearchEnabled" | "embeddingModel">): SemanticSearchStatus {
  const raw = typeof config.embeddingModel === "string" ? config.embeddingModel.trim() : "";
  const model = raw === "" ? "Xenova/all-MiniLM-L6-v2" : raw;
  return { configured: config.semanticSearchEnabled === true && model !== "none", model };
}

/**
 * The one-line mode indicator of human output: which mode ran and, for keyword mode, why and what
 * would change it. `configPath` is how the global configuration file is shown.
 */
export function describeSimilarityMode(
  mode: SimilarityMode,
  config: Pick<Config, "semanticSearchEnabled" | "embeddingModel">,
  configPath = "~/.cass-memory/config.json",
): string {
  const status = semanticSearchStatus(config);
  if (mode === "semantic") return `Using semantic search (${status.model})`;
  if (status.configured) {
    return `Using keyword search (semantic search with ${status.model} is configured but not available right now; see the warning above).`;
  }
  if (config.semanticSearchEnabled === true) {
    return "Using keyword search. Remove embeddingModel: none from config or set a valid model";
  }
  return `Using keyword search. Set semanticSearchEnabled: true in ${configPath}`;
}
