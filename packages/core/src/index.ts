// Public API of @cass-memory/core. Explicit named exports only (see ARCHITECTURE.md §7).

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
export { updateLogLine, updateLogText } from "./storage/log-update.js";
export type { LogLineUpdate } from "./storage/log-update.js";
export { migrateSections, summarizeSection, verifySections } from "./storage/migrate.js";
export { redactingTransfer } from "./storage/redact-transfer.js";
export type { RedactingTransfer } from "./storage/redact-transfer.js";
export { redactCounting, redactFor, refuseSecrets, secretKindsIn, secretScannerFor, tallyTotal } from "./operations/secret-guard.js";
export type { SecretTally } from "./operations/secret-guard.js";
export type {
  MigrateSectionsOptions,
  MigrateSectionsResult,
  SectionDifference,
  SectionProgress,
  SectionSummary,
  VerifySectionsOptions,
  VerifySectionsResult,
} from "./storage/migrate.js";

export { defineOperation, formatZodIssues, runOperation } from "./operation.js";
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
export type { Operation } from "./operation.js";

// Schemas of the data model
export {
  BULLET_KEYS,
  BULLET_KINDS,
  BULLET_SCOPES,
  BULLET_SOURCES,
  BULLET_STATES,
  BULLET_TYPES,
  BlockedEntrySchema,
  BulletSchema,
  DEFAULT_PLAYBOOK_DESCRIPTION,
  DeprecatedPatternSchema,
  EVIDENCE_TYPES,
  EvidenceSchema,
  FEEDBACK_TYPES,
  FeedbackEventSchema,
  HARMFUL_REASONS,
  MATURITIES,
  PLAYBOOK_SCHEMA_VERSION,
  PlaybookMetadataSchema,
  PlaybookSchema,
  REPO_PLAYBOOK_DESCRIPTION,
  REPO_PLAYBOOK_NAME,
  createEmptyPlaybook,
  VERIFICATION_MODES,
  VERIFICATION_TYPES,
  VerificationSchema,
  isActiveBullet,
  isAntiPattern,
  isOutsideValidity,
} from "./schemas/playbook.js";
export type {
  BlockedEntry,
  Bullet,
  BulletInput,
  BulletKind,
  BulletScope,
  BulletSource,
  BulletState,
  BulletType,
  DeprecatedPattern,
  Evidence,
  EvidenceType,
  FeedbackEvent,
  FeedbackType,
  HarmfulReason,
  Maturity,
  Playbook,
  PlaybookMetadata,
  Verification,
  VerificationMode,
  VerificationType,
} from "./schemas/playbook.js";
export {
  ConfigSchema,
  DEFAULT_SESSION_EXCLUDE_PATTERNS,
  LLM_PROVIDERS,
  REPO_FORBIDDEN_CONFIG_KEYS,
  STORAGE_BACKENDS,
  ScoringConfigSchema,
  defaultConfig,
} from "./schemas/config.js";
export type { Config, ConfigInput, LlmProvider, ScoringConfig, StorageBackend } from "./schemas/config.js";
export {
  ContextLogEntrySchema,
  DeltaSchema,
  DiaryEntrySchema,
  JOURNAL_CHANGES,
  JOURNAL_OPERATIONS,
  JournalEventSchema,
  OUTCOME_STATUSES,
  OnboardingStateSchema,
  OutcomeRecordSchema,
  ProcessedSessionSchema,
  ReflectionRevertSchema,
  ReflectionRunSchema,
  TraumaEntrySchema,
} from "./schemas/records.js";
export type {
  ContextLogEntry,
  Delta,
  DiaryEntry,
  JournalChange,
  JournalEvent,
  JournalOperation,
  OnboardingState,
  OutcomeRecord,
  ProcessedSession,
  ReflectionRevert,
  ReflectionRun,
  TraumaEntry,
} from "./schemas/records.js";
export { decodeBlockedEntries, parseJsonLines, validateBlockedEntries, validatePlaybookForWrite } from "./schemas/codec.js";
export { camelizeDeep, camelizeKnownKeys, isPlainObject, snakeToCamel } from "./schemas/tolerant.js";

// Episodic sources
export { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource } from "./episodic/null-source.js";

// Operations
export { operations } from "./operations/index.js";
export { contextOperation, ContextInputSchema, ContextResultSchema } from "./operations/context.js";
export { CANDIDATE_LIMIT, CANDIDATE_RETRIEVAL_MIN_BULLETS, loadContextPlaybook } from "./operations/context-playbook.js";
export type { ContextPlaybook } from "./operations/context-playbook.js";
export type { ContextInput, ContextResult, HistorySnippet } from "./operations/context.js";
export { lookupContext } from "./operations/context.js";
export type { ContextLookupOptions } from "./operations/context.js";
export {
  compactContext,
  compactRule,
  contextViewSchema,
  CompactContextSchema,
  CompactRuleSchema,
  estimateTokens,
  fitContextToBudget,
  measureJson,
  TrimmedSchema,
} from "./operations/context-view.js";
export type { CompactContext, CompactOptions, CompactRule, CompactSnippet, Trimmed, TrimmedIds } from "./operations/context-view.js";
export { DEFAULT_INPUT_LIMITS, inputLimitsOf, overLimitMessage, requireWithinLimit, utf8Bytes } from "./domain/input-limits.js";
export type { InputLimits } from "./domain/input-limits.js";
export { FORGET_SOURCE_SESSION, forgetOperation } from "./operations/forget.js";
export type { ForgetResult } from "./operations/forget.js";
export { historyOperation } from "./operations/history.js";
export type { HistoryResult } from "./operations/history.js";
export { DEFAULT_RECALL_LIMIT, recallOperation } from "./operations/recall.js";
export type { RecallResult } from "./operations/recall.js";
export {
  MEMORY_SEARCH_DEFAULT_LIMIT,
  MEMORY_SEARCH_MAX_LIMIT,
  MEMORY_SEARCH_SCOPES,
  MemorySearchInputSchema,
  MemorySearchResultSchema,
  memorySearchOperation,
} from "./operations/memory-search.js";
export type { MemorySearchInput, MemorySearchResult, MemorySearchScope } from "./operations/memory-search.js";
export { undoOperation } from "./operations/undo.js";
export { undoRunOperation } from "./operations/undo-run.js";
export { DEFAULT_MAX_SESSIONS, MAX_DELTAS_PER_SESSION, deltaKey, reflectOperation } from "./operations/reflect.js";
export type { CurationSummary, ReflectInput, ReflectResult } from "./operations/reflect.js";
export { diaryOperation } from "./operations/diary.js";
export type { DiaryResult } from "./operations/diary.js";
export { AUDIT_CONCURRENCY, DEFAULT_AUDIT_SESSIONS, auditOperation } from "./operations/audit.js";
export type { AuditResult } from "./operations/audit.js";
export {
  MAX_TRAUMA_IMPORT_CHARS,
  MAX_TRAUMA_IMPORT_LINES,
  MAX_TRAUMA_MESSAGE_LENGTH,
  TRAUMA_LOG_FILE,
  TRAUMA_SCAN_QUERY,
  TRAUMA_SCAN_SEARCH_LIMIT,
  loadTraumas,
  traumaAddOperation,
  traumaHealOperation,
  traumaImportOperation,
  traumaListOperation,
  traumaRemoveOperation,
  traumaScanOperation,
} from "./operations/trauma.js";
export type { TraumaAddResult, TraumaHealResult, TraumaImportResult, TraumaListResult, TraumaRemoveResult, TraumaScanResult } from "./operations/trauma.js";
export { createDeterministicComponents, resolveLearning } from "./learning/fallback.js";
export type { DeterministicComponents, FallbackRecord, ResolvedLearning } from "./learning/fallback.js";
export { MAX_TRANSCRIPT_CHARS, MIN_TRANSCRIPT_CHARS, diaryEntryFromDraft, diaryIdFor, loadTranscript, truncateMiddle, writeDiaryEntry } from "./learning/session.js";
export type { UndoRunResult } from "./operations/undo-run.js";
export type { UndoResult } from "./operations/undo.js";
export { initOperation } from "./operations/init.js";
export type { GlobalInitResult, RepoInitResult } from "./operations/init.js";
export { markOperation } from "./operations/mark.js";
export type { MarkResult } from "./operations/mark.js";
export { playbookAddOperation, rememberOperation } from "./operations/playbook-add.js";
export type { PlaybookAddBatchResult, PlaybookAddInput, PlaybookAddSingleResult } from "./operations/playbook-add.js";
export { playbookExportOperation } from "./operations/playbook-export.js";
export type { PlaybookExport } from "./operations/playbook-export.js";
export { playbookGetOperation } from "./operations/playbook-get.js";
export type { PlaybookGetResult } from "./operations/playbook-get.js";
export { playbookImportOperation } from "./operations/playbook-import.js";
export type { PlaybookImportResult } from "./operations/playbook-import.js";
export { playbookListOperation } from "./operations/playbook-list.js";
export { playbookRemoveOperation } from "./operations/playbook-remove.js";
export type { PlaybookRemoveResult } from "./operations/playbook-remove.js";
export { statsOperation, StatsResultSchema } from "./operations/stats.js";
export type { StatsResult } from "./operations/stats.js";
export { SCOPE_FILTERS, filterByScope, parseScopeFilter, topOperation, TopResultSchema } from "./operations/top.js";
export type { ScopeFilter, TopInput, TopResult } from "./operations/top.js";
export { STALE_DEFAULT_DAYS, staleOperation, staleRecommendation, StaleResultSchema } from "./operations/stale.js";
export type { ExpiringBullet, StaleBullet, StaleInput, StaleResult } from "./operations/stale.js";
export { effectivenessLabel, resolveBulletId, whyOperation, WhyResultSchema } from "./operations/why.js";
export type { WhyInput, WhyResult } from "./operations/why.js";
export {
  SIMILAR_DEFAULT_LIMIT,
  SIMILAR_DEFAULT_THRESHOLD,
  similarOperation,
  similarityScorerFor,
  SimilarResultSchema,
} from "./operations/similar.js";
export type { SimilarInput, SimilarResult } from "./operations/similar.js";
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
export {
  PROJECT_FORMATS,
  PROJECT_FORMAT_NAMES,
  parseProjectFormat,
  projectOperation,
  renderAgentsMd,
  renderClaudeMd,
} from "./operations/project.js";
export type { ProjectFormat, ProjectInput, ProjectRenderOptions, ProjectResult } from "./operations/project.js";
export { quickstartData, quickstartOperation } from "./operations/quickstart.js";
export type { QuickstartResult } from "./operations/quickstart.js";
export {
  applyStarter,
  findStarter,
  loadStarters,
  playbookBootstrapOperation,
  startersOperation,
} from "./operations/starters.js";
export type { PlaybookBootstrapResult, StarterApplication, StartersResult } from "./operations/starters.js";
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
  DOCTOR_CATEGORIES,
  DoctorInputSchema,
  DoctorResultSchema,
  LLM_CREDENTIAL_SOURCES,
  SANITIZER_BENIGN_SAMPLES,
  doctorOperation,
  overallStatusOf,
} from "./operations/doctor.js";
export type {
  DoctorCheck,
  DoctorFixableIssue,
  DoctorInput,
  DoctorResult,
  FixPlan,
  OverallStatus,
  RecommendedAction,
} from "./operations/doctor.js";
export {
  CrossAgentSchema,
  DEFAULT_CROSS_AGENT_AGENTS,
  PRIVACY_STATUS_DEFAULT_DAYS,
  PrivacyMutationSchema,
  PrivacyStatusSchema,
  privacyAllowOperation,
  privacyDenyOperation,
  privacyDisableOperation,
  privacyEnableOperation,
  privacyStatusOperation,
} from "./operations/privacy.js";
export type { CrossAgentSettings, PrivacyMutationResult, PrivacyStatus } from "./operations/privacy.js";
export {
  DEFAULT_SAMPLE_QUERIES,
  ONBOARDING_RULE_TARGET,
  OnboardOverviewSchema,
  OnboardProgressSchema,
  OnboardReadResultSchema,
  OnboardReadTemplateSchema,
  OnboardSampleResultSchema,
  OnboardStatusSchema,
  SAMPLE_DEFAULT_DAYS,
  SAMPLE_DEFAULT_LIMIT,
  onboardGapsOperation,
  onboardGuidedOperation,
  onboardMarkDoneOperation,
  onboardPromptOperation,
  onboardReadOperation,
  onboardReadTemplateOperation,
  onboardResetOperation,
  onboardSampleOperation,
  onboardStatusOperation,
  progressOf,
  recordSessionRules,
  relatedRulesFor,
  suggestedFocus,
} from "./operations/onboard.js";
export type {
  OnboardGuidedResult,
  OnboardMarkDoneResult,
  OnboardOverview,
  OnboardProgress,
  OnboardPromptResult,
  OnboardReadResult,
  OnboardReadTemplate,
  OnboardSampleInput,
  OnboardSampleResult,
  OnboardStatus,
  SessionSample,
} from "./operations/onboard.js";
export { EXAMPLE_RULES, extractionPrompt } from "./operations/onboard-prompt.js";
export type { ExampleRule } from "./operations/onboard-prompt.js";
export {
  GLOBAL_PROCESSED_LOG,
  ONBOARDING_STATE_FILE,
  ONBOARDING_STATE_VERSION,
  PROCESSED_LOG_DIR,
  PROCESSED_LOG_HEADER,
  createOnboardingState,
  decodeOnboardingState,
  decodeProcessedLog,
  encodeOnboardingState,
  encodeProcessedSessions,
  finalizeOnboardingState,
  isProcessedLogName,
  normalizeSessionPath,
  processedLogFileName,
  processedLogNameFor,
} from "./operations/onboard-records.js";
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
export { loadMergedPlaybook, locateBullet, mutatePlaybookJournaled } from "./operations/shared.js";
export type { MutationMeta } from "./operations/shared.js";
export { STALE_PENALTY } from "./operations/context.js";
export {
  NO_EVIDENCE_CONFIDENCE,
  REFINE_CONFIDENCE_FACTOR,
  STRONG_FAILURE_CONFIDENCE,
  STRONG_SUCCESS_CONFIDENCE,
  VALIDATE_VERDICTS,
  ValidateInputSchema,
  ValidateResultSchema,
  validateOperation,
} from "./operations/validate.js";
export type { ValidateInput, ValidateResult } from "./operations/validate.js";
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
  applyOutcomeFeedback,
  backfillRulesFromContextLog,
  DEFAULT_OUTCOME_APPLY_LIMIT,
  MANUAL_OUTCOME_SESSION,
  noOutcomesReason,
  OUTCOME_NO_SIGNAL_REASON,
  outcomeApplyOperation,
  OutcomeApplyResultSchema,
  outcomeLogLayer,
  outcomeLogPath,
  outcomeOperation,
  OutcomeResultSchema,
  parseRuleList,
  readOutcomeLog,
  recordOutcomes,
} from "./operations/outcome.js";
export type {
  OutcomeApplyInput,
  OutcomeApplyResult,
  OutcomeCommandInput,
  OutcomeFeedbackOptions,
  OutcomeFeedbackPerRecord,
  OutcomeFeedbackResult,
  OutcomeResult,
  RecordOutcomesResult,
} from "./operations/outcome.js";
export { budgetBlocks, budgetLimitState, usageOperation, UsageResultSchema } from "./operations/usage.js";
export type { UsageResult } from "./operations/usage.js";
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
  DAY_MS,
  MATURITY_MULTIPLIER,
  calculateMaturityState,
  checkForDemotion,
  checkForPromotion,
  eventWeight,
  formatLastHelpful,
  getDecayedCounts,
  getEffectiveScore,
  getHalfLifeDays,
  getHarmfulMultiplier,
  isStale,
  scoreBucket,
} from "./domain/scoring.js";
export type { ScoreBucket } from "./domain/scoring.js";
export { AUTO_DEPRECATION_REASON, applyFeedback, normalizeHarmfulReason } from "./domain/feedback.js";
export type { ApplyFeedbackInput } from "./domain/feedback.js";
export {
  BLOCKED_CONTENT_REASON,
  BLOCKED_SIMILARITY_THRESHOLD,
  MERGED_PLAYBOOK_NAME,
  applyBlockFilter,
  mergePlaybooks,
} from "./domain/merge.js";
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
export { primeConcepts, warmLexicalIndex } from "./domain/lexical-cache.js";
export type { WarmResult } from "./domain/lexical-cache.js";
export { ANALYZER_VERSION, lexicalFingerprint } from "./domain/lexical/persist.js";
export { CONCEPT_GROUPS } from "./domain/lexical/concepts.js";
export type { ConceptGroup } from "./domain/lexical/concepts.js";
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
