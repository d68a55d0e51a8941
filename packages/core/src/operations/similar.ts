import * as z from "zod";
import { AppError } from "../errors.js";
import { getEffectiveScore } from "../domain/scoring.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { describeSemanticError, loadSemanticEmbedder, semanticSimilarityScorer } from "../domain/semantic.js";
import { findSimilar, keywordSimilarityScorer, semanticSearchStatus, type SimilarityScorer } from "../domain/similarity.js";
import { defineOperation } from "../operation.js";
import type { OperationDeps } from "../ports.js";
import { isActiveBullet, isOutsideValidity } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";
import { SCOPE_FILTERS, filterByScope, type ScopeFilter } from "./top.js";
import { lazySchema } from "../schemas/lazy.js";

export const SIMILAR_DEFAULT_LIMIT = 5;
export const SIMILAR_DEFAULT_THRESHOLD = 0.7;
export const SIMILAR_PREVIEW_CHARS = 120;

export const SimilarInputSchema = lazySchema(() => z.object({
  query: z.string(),
  /** Maximum number of results (default 5, integer ≥ 1). */
  limit: z.number().optional(),
  /** Minimum similarity in [0, 1] (default 0.7). */
  threshold: z.number().optional(),
  /** global | workspace | all (default all). */
  scope: z.string().optional(),
}));
export type SimilarInput = z.input<typeof SimilarInputSchema>;

export const SimilarResultSchema = lazySchema(() => z.object({
  query: z.string(),
  mode: z.enum(["keyword", "semantic"]),
  results: z.array(
    z.object({
      id: z.string(),
      similarity: z.number(),
      content: z.string(),
      category: z.string(),
      scope: z.string(),
      effectiveScore: z.number(),
      preview: z.string(),
    }),
  ),
}));
export type SimilarResult = z.output<typeof SimilarResultSchema>;

function invalid(message: string, query: string): AppError {
  return new AppError("INVALID_INPUT", message, { details: { query } });
}

/** The content on one line, cut to at most 120 characters ("..." included). */
function previewOf(content: string): string {
  const flat = content.trim().replace(/\s+/g, " ");
  return flat.length > SIMILAR_PREVIEW_CHARS ? `${flat.slice(0, SIMILAR_PREVIEW_CHARS - 3)}...` : flat;
}

/**
 * The scorer `similar` uses: the semantic one (cosine of embeddings, vectors cached by content
 * hash) when the configuration enables semantic search (`semanticSearchEnabled` with an
 * `embeddingModel` other than "none") and the host provides an embedder, else the keyword one.
 * The semantic scorer loads the embedder on first use and rejects when it cannot; `similar` then
 * falls back to keywords. Results are never labelled semantic unless a semantic scorer ran.
 */
export function similarityScorerFor(deps: OperationDeps): SimilarityScorer {
  if (!semanticSearchStatus(deps.config).configured || deps.embedder === undefined) return keywordSimilarityScorer;
  const sanitize = compileSanitizer(deps.config.sanitization).sanitize;
  return {
    mode: "semantic",
    async score(query, bullets) {
      const embedder = await loadSemanticEmbedder(deps);
      if (embedder === null) return keywordSimilarityScorer.score(query, bullets);
      return semanticSimilarityScorer({ embedder, cache: deps.embeddingCache, logger: deps.logger, sanitize }).score(query, bullets);
    },
  };
}

/**
 * `cm similar "<query>"`: active rules whose content resembles the query (reference §1.5.3),
 * best first. Rules outside their validFrom/validTo window are left out.
 */
export const similarOperation = defineOperation({
  name: "similar",
  command: "similar",
  description: "Find playbook rules similar to a text (keyword similarity, or embeddings when semantic search is enabled).",
  input: SimilarInputSchema,
  output: SimilarResultSchema,
  async run(deps, input): Promise<SimilarResult> {
    const rawQuery = input.query;
    const query = rawQuery.trim();
    if (query === "") throw invalid("Query is required", rawQuery);

    const limit = input.limit ?? SIMILAR_DEFAULT_LIMIT;
    if (!Number.isInteger(limit) || limit < 1) throw invalid("--limit must be an integer >= 1", rawQuery);
    const threshold = input.threshold ?? SIMILAR_DEFAULT_THRESHOLD;
    if (!Number.isFinite(threshold) || threshold < 0 || threshold > 1) throw invalid("--threshold must be between 0 and 1", rawQuery);

    const scopeRaw = input.scope?.trim() ?? "";
    const scopeValue = scopeRaw === "" ? "all" : scopeRaw.toLowerCase();
    const scope = SCOPE_FILTERS.find((s) => s === scopeValue) as ScopeFilter | undefined;
    if (scope === undefined) {
      throw invalid(`Invalid --scope "${String(input.scope)}" (expected: global|workspace|all)`, rawQuery);
    }

    const now = deps.clock.now();
    const playbook = await loadMergedPlaybook(deps);
    const candidates = filterByScope(
      playbook.bullets.filter((b) => isActiveBullet(b) && !isOutsideValidity(b, now)),
      scope,
    );
    let scorer = similarityScorerFor(deps);
    let matches;
    try {
      matches = await findSimilar(query, candidates, scorer, { threshold, limit });
    } catch (error) {
      if (scorer.mode !== "semantic") throw error;
      deps.logger.warn(`Semantic search unavailable, using keyword similarity: ${describeSemanticError(error)}`);
      scorer = keywordSimilarityScorer;
      matches = await findSimilar(query, candidates, scorer, { threshold, limit });
    }

    return {
      query,
      mode: scorer.mode,
      results: matches.map(({ bullet, similarity }) => ({
        id: bullet.id,
        similarity,
        content: bullet.content,
        category: bullet.category,
        scope: bullet.scope,
        effectiveScore: getEffectiveScore(bullet, now, deps.config),
        preview: previewOf(bullet.content),
      })),
    };
  },
});
