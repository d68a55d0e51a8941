// @cass-memory/core/curator: the deterministic curator: deltas applied to a playbook, dedup, conflicts, feedback and anti-pattern inversion.
// A subpath entry point: importing from here loads only these modules (see docs/benchmarks.md, "Bundle size").

export {
  MERGE_CANDIDATE_MAX_PAIRS,
  MERGE_CANDIDATE_MAX_SCAN,
  MERGE_CANDIDATE_THRESHOLD,
  describeSimilarityMode,
  findMergeCandidates,
  findSimilar,
  keywordSimilarityScorer,
  semanticSearchStatus,
} from "./domain/similarity.js";
export type {
  MergeCandidate,
  SemanticSearchStatus,
  SimilarMatch,
  SimilarityMode,
  SimilarityScorer,
} from "./domain/similarity.js";
export { AUTO_DEPRECATION_REASON, applyFeedback, normalizeHarmfulReason } from "./domain/feedback.js";
export type { ApplyFeedbackInput } from "./domain/feedback.js";
export {
  CONFLICT_REASONS,
  EXCEPTION_MARKERS,
  NEGATIVE_MARKERS,
  POSITIVE_MARKERS,
  buildConflictIndex,
  conflictMetaOf,
  detectConflicts,
  detectConflictsIndexed,
} from "./domain/conflicts.js";
export type { Conflict, ConflictMeta } from "./domain/conflicts.js";
export {
  AUTO_DEPRECATE_REASON,
  MERGED_SOURCE_SESSION,
  NEGATIVE_RULE_HARMFUL_REASON,
  REINFORCED_EXACT,
  REINFORCED_SIMILAR,
  agentFromSessionPath,
  curatePlaybook,
  deprecateBullet,
  invertToAntiPattern,
  newBullet,
} from "./domain/curator.js";
export type {
  CurateContext,
  CurationConflict,
  CurationDecision,
  CurationResult,
  NewBulletContext,
  NewBulletFields,
} from "./domain/curator.js";
