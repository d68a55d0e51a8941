// Public API of @cass-memory/core. Explicit named exports only (see ARCHITECTURE.md §7): listed here,
// or in a subpath entry (schemas, scoring, ranking, curator, operations) re-exported below.

export {
  AppError,
  CATEGORY_EXIT_CODES,
  ERROR_CODES,
  TROUBLESHOOTING_DOCS,
  categoryOf,
  defaultRecovery,
  describeCause,
  docsFor,
  exitCodeOf,
  isAppError,
  toAppError,
} from "./errors.js";
export type { AppErrorOptions, ErrorCategory, ErrorCode } from "./errors.js";

export type {
  AuditFinding,
  BulletCandidateIndex,
  CandidateSearch,
  Auditor,
  Clock,
  CostEntry,
  CostLedger,
  CostTotals,
  DiaryDraft,
  DiaryWriter,
  EvidenceGateResult,
  EvidenceItem,
  LearningComponents,
  LearningKind,
  LlmStatus,
  ReflectionInput,
  Reflector,
  SessionTranscript,
  ValidationInput,
  ValidationVerdict,
  Validator,
  ValidatorJudgement,
  DegradedInfo,
  DegradedReason,
  Embedder,
  EmbeddingCache,
  EmbeddingCacheEntry,
  LexicalCache,
  LexicalCachePart,
  EpisodicHealth,
  EpisodicSearchOptions,
  EpisodicSearchResult,
  EpisodicSource,
  FixResult,
  FixableIssue,
  HealthCheck,
  HealthStatus,
  HistoryHit,
  IdGenerator,
  InitializeOptions,
  InitializeResult,
  Layer,
  LayerStatus,
  Logger,
  LogName,
  LogReadResult,
  LogRecordUpdate,
  LogUpdateResult,
  MutationScope,
  MutationTx,
  OperationDeps,
  SessionSummary,
  SessionInfo,
  UnreadableSessions,
  StarterFile,
  Store,
  RuntimeReport,
  StoreDiagnosis,
  StoreLocations,
  WorkspaceFiles,
} from "./ports.js";
export type { StoreSection, StoreSectionKind, StoreTransfer } from "./storage/transfer.js";
export {
  TRANSFER_LOG_NAMES,
  checkSection,
  costTotalsOfText,
  distinctDiaries,
  emptySection,
  isCostMonth,
  layerSectionKeys,
  parseSectionKey,
  sectionHoldsData,
  sectionKeyOf,
  sectionLayer,
  sortSectionKeys,
} from "./storage/sections.js";
export type { SectionAddress } from "./storage/sections.js";
export { DIARY_ID, decodeDiaryText, diaryEntryForWrite } from "./storage/diary-records.js";
export { POSITION_STEP, keptRows, longestIncreasing, spreadPositions } from "./storage/row-positions.js";
export { updateLogLine, updateLogText } from "./storage/log-update.js";
export type { LogLineUpdate } from "./storage/log-update.js";
export { jsonDifference, jsonPreview, migrateSections, summarizeSection, verifySections } from "./storage/migrate.js";
export { redactingTransfer } from "./storage/redact-transfer.js";
export type { RedactingTransfer } from "./storage/redact-transfer.js";
export type {
  JsonDifference,
  MigrateSectionsOptions,
  MigrateSectionsResult,
  SectionDifference,
  SectionProgress,
  SectionSummary,
  VerifySectionsOptions,
  VerifySectionsResult,
} from "./storage/migrate.js";

export {
  COST_DIR,
  COST_TOTAL_FILE,
  addCost,
  decodeCostTotals,
  emptyCostTotals,
  localDayKey,
  monthlyCostFile,
  utcMonthKey,
} from "./domain/costs.js";

// The subpath entry points (each an explicit list of named exports), re-exported whole so that the
// root and the subpaths cannot drift apart.
export * from "./schemas.js";
export * from "./scoring.js";
export * from "./ranking.js";
export * from "./curator.js";
export * from "./operations.js";

// Episodic sources
export { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource } from "./episodic/null-source.js";

// Operations
export { DEFAULT_INPUT_LIMITS, inputLimitsOf, overLimitMessage, requireWithinLimit, utf8Bytes } from "./domain/input-limits.js";
export type { InputLimits } from "./domain/input-limits.js";
export { createDeterministicComponents, resolveLearning } from "./learning/fallback.js";
export type { DeterministicComponents, FallbackRecord, ResolvedLearning } from "./learning/fallback.js";
export { MAX_TRANSCRIPT_CHARS, MIN_TRANSCRIPT_CHARS, diaryEntryFromDraft, diaryIdFor, loadTranscript, truncateMiddle, writeDiaryEntry } from "./learning/session.js";
export {
  SEMANTIC_DUPLICATE_THRESHOLD,
  SEMANTIC_MERGE_MAX_PAIRS,
  SEMANTIC_MERGE_MAX_SCAN,
  checkEmbeddings,
  cosineSimilarity,
  describeSemanticError,
  embedWithCache,
  findSemanticMergeCandidates,
  loadSemanticEmbedder,
  semanticDedupVectors,
  semanticMergeCandidatesFor,
  semanticScoresForTask,
  semanticSimilarityScorer,
} from "./domain/semantic.js";
export type { EmbeddedContents, EmbeddingSession, SemanticRankInput, TaskSemantics } from "./domain/semantic.js";
export { BUILTIN_STARTERS } from "./starters/builtin.js";
export {
  StarterBulletSpecSchema,
  StarterFileSchema,
  parseStarterFile,
  planStarter,
  starterBullet,
  starterBulletId,
  starterNameFromPath,
} from "./starters/starter.js";
export type {
  ResolvedStarter,
  StarterBulletSpec,
  StarterDocument,
  StarterPlan,
  StarterSkipReason,
  StarterSource,
} from "./starters/starter.js";
export {
  CATEGORY_KEYWORDS,
  CATEGORY_STATUSES,
  MAX_GAP_QUERIES,
  PlaybookGapAnalysisSchema,
  RULE_CATEGORIES,
  analyzePlaybookGaps,
  categoryStatus,
  detectCategories,
  gapSearchQueries,
  gapSuggestions,
  scoreSessionForGaps,
} from "./domain/gap-analysis.js";
export type { CategoryAnalysis, CategoryStatus, PlaybookGapAnalysis, RuleCategory, SessionGapScore } from "./domain/gap-analysis.js";
// Deterministic (no-LLM) learning components and the evidence gate
export {
  CAUTION_MAX_CONFIDENCE,
  CAUTION_MIN_CONFIDENCE,
  EVIDENCE_SEARCH_LIMIT,
  FAILURE_PATTERNS,
  GATE_AMBIGUOUS_REASON,
  GATE_NO_EVIDENCE_REASON,
  GATE_NO_KEYWORDS_REASON,
  LESSON_DUPLICATE_SIMILARITY,
  MAX_LESSON_LINE_CHARS,
  MAX_LESSONS_PER_SESSION,
  MIN_LESSON_CHARS,
  MIN_VALIDATED_CONTENT_CHARS,
  REJECT_MAX_CONFIDENCE,
  REJECT_MIN_CONFIDENCE,
  STRONG_FAILURE_SESSIONS,
  STRONG_SUCCESS_SESSIONS,
  SUCCESS_PATTERNS,
  classifySnippetOutcome,
  createDeterministicDiaryWriter,
  createDeterministicReflector,
  createDeterministicValidator,
  draftDiary,
  findLessons,
  guessCategory,
  judgeByCounts,
  parseTranscript,
  reflectDeterministically,
  runEvidenceGate,
  validateDelta,
} from "./learning/index.js";
export type { DeltaValidation, EvidenceGateDeps, EvidenceGateOptions, Lesson, TranscriptLine, TranscriptMessage, TranscriptRole } from "./learning/index.js";
export {
  applyImplicitFeedback,
  AUTO_GRADED_HARM_RULE_LIMIT,
  classifySessionOutcome,
  countTranscriptErrors,
  detectSentiment,
  extractRuleIdsFromTranscript,
  FAST_OUTCOME_SECONDS,
  HARM_MARGIN,
  hasFeedbackEvent,
  implicitFeedbackEvent,
  MAX_IMPLICIT_WEIGHT,
  MIN_IMPLICIT_WEIGHT,
  scoreImplicitFeedback,
  SENTIMENTS,
  sentimentTail,
  SLOW_OUTCOME_SECONDS,
  TRANSCRIPT_RULE_ID_PATTERN,
  transcriptHasRetries,
} from "./learning/outcomes.js";
export type { ImplicitFeedback, ImplicitFeedbackEvent, OutcomeInput, OutcomeStatus, Sentiment, SessionOutcomeInput } from "./learning/outcomes.js";

// Domain algorithms (pure)
export { sha256Bytes, sha256Hex } from "./domain/sha256.js";
export {
  STOP_WORDS,
  extractKeywords,
  formatBulletId,
  hashContent,
  isNoiseToken,
  jaccardOfSets,
  jaccardSimilarity,
  normalizeForHash,
  randomBase36,
  tokenSet,
  tokenize,
} from "./domain/text.js";
export {
  BLOCKED_CONTENT_REASON,
  BLOCKED_SIMILARITY_THRESHOLD,
  MERGED_PLAYBOOK_NAME,
  applyBlockFilter,
  mergePlaybooks,
} from "./domain/merge.js";
export {
  EXTRA_PATTERN_REPLACEMENT,
  MAX_EXTRA_PATTERN_LENGTH,
  SECRET_PATTERNS,
  compileSanitizer,
  sanitize,
  userRegexProblem,
} from "./domain/sanitize.js";
export type { Sanitizer, SanitizerOptions, SecretPattern } from "./domain/sanitize.js";
export {
  ENTROPY_THRESHOLD,
  MAX_SCAN_CHARS,
  SECRET_KINDS,
  SECRET_KIND_LABELS,
  compileSecretScanner,
  describeSecretKinds,
  detectSecrets,
  redactDeep,
  redactSecrets,
  shannonEntropy,
} from "./domain/secrets.js";
export type { RedactionResult, SecretFinding, SecretKind, SecretScanner, SecretScannerOptions } from "./domain/secrets.js";
export { MAX_JSON_DEPTH, jsonNestedDeeperThan } from "./domain/json-depth.js";
export { parseInlineFeedback } from "./domain/inline-feedback.js";
export type { InlineFeedback } from "./domain/inline-feedback.js";
export type { OmitKnown } from "./domain/types.js";
export { JOURNAL_TRACKED_FIELDS, diffForJournal, rewriteJournalText, snapshotBullets } from "./domain/journal.js";
export { RECONSTRUCTED_REASON, findJournalGaps, reconstructGapEvents } from "./domain/journal-gaps.js";
export type { JournalGap, JournalGapKind } from "./domain/journal-gaps.js";
export type { BulletSnapshot, JournalMeta } from "./domain/journal.js";
export {
  MAX_VERIFY_BYTES,
  parseEvidenceSpec,
  parseValidityDate,
  runVerification,
  validateVerification,
  verificationFromFlags,
} from "./domain/verification.js";
export type { VerificationFlags, VerificationOutcome } from "./domain/verification.js";
export {
  DOOM_CONTEXT_CHARS,
  DOOM_PATTERNS,
  DOOM_SCAN_MAX_CHARS,
  MAX_TRAUMA_PATTERN_LENGTH,
  TRAUMA_MATCH_MAX_CHARS,
  TRAUMA_PATTERN_HINT,
  assertTraumaPattern,
  checkTraumaPattern,
  compileTraumaRegex,
  extractShellCommands,
  findTraumaMatch,
  scanForDoomPatterns,
  splitShellCommand,
} from "./domain/trauma.js";
export type { DoomCategory, DoomMatch, DoomPattern, TraumaMatch, TraumaPatternCheck } from "./domain/trauma.js";
