// @cass-memory/core/ranking: context ranking (BM25F lexical index, query analysis, concept map, semantic blending); no zod.
// A subpath entry point: importing from here loads only these modules (see docs/benchmarks.md, "Bundle size").

export {
  MAX_CASS_QUERY_TERMS,
  bulletReasoning,
  buildCassQuery,
  deprecatedPatternMatcher,
  deprecatedPatternWarnings,
  DEFAULT_LEXICAL,
  FEEDBACK_SPAN,
  SEMANTIC_CANDIDATE_MIN,
  feedbackMultiplier,
  lexicalIndexFor,
  rankBulletsForTask,
  scoreBulletRelevance,
  suggestCassQueries,
  taskKeywords,
} from "./domain/ranking.js";
export type { LexicalParams, RankOptions, RankResult, ScoredBullet, SemanticScores } from "./domain/ranking.js";
export { candidateQuery, candidateQueryTerms } from "./domain/lexical/query.js";
export type { CandidateQuery } from "./domain/lexical/query.js";
export { hasLexicalIndex } from "./domain/ranking.js";
export { noteTextSource, warmLexicalIndex } from "./domain/lexical-cache.js";
export type { WarmResult } from "./domain/lexical-cache.js";
export { ANALYZER_VERSION, lexicalFingerprint } from "./domain/lexical/persist.js";
export { CONCEPT_GROUPS } from "./domain/lexical/concepts.js";
export type { ConceptGroup } from "./domain/lexical/concepts.js";
