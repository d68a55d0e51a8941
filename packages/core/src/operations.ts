// @cass-memory/core/operations: the operations (use cases) shared by the CLI and the MCP server, `defineOperation` and `runOperation`.
// A subpath entry point: importing from here loads only these modules (see docs/benchmarks.md, "Bundle size").

export { redactCounting, redactFor, refuseSecrets, secretKindsIn, secretScannerFor, tallyTotal } from "./operations/secret-guard.js";
export type { SecretTally } from "./operations/secret-guard.js";
export { defineOperation, formatZodIssues, runOperation } from "./operation.js";
export type { Operation } from "./operation.js";
export type { FlatFields, FlatKind } from "./schemas/flat-object.js";
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
  playbookCategoryOperation,
  PlaybookCategoryInputSchema,
  PlaybookCategoryResultSchema,
  playbookPinOperation,
  PlaybookPinInputSchema,
  PlaybookPinResultSchema,
} from "./operations/playbook-pin.js";
export type { PlaybookCategoryResult, PlaybookPinResult } from "./operations/playbook-pin.js";
export {
  computeContextLog,
  computeDuplicates,
  computeOverview,
  computeRisk,
  computeRuleDetail,
  computeRules,
  computeRuns,
  computeScoreSeries,
  CONFLICT_SCAN_MAX,
  DASHBOARD_DEFAULT_LIMIT,
  DASHBOARD_MAX_LIMIT,
  DASHBOARD_MAX_QUERY_CHARS,
  dashboardContextLog,
  dashboardDuplicates,
  dashboardOverview,
  dashboardRisk,
  dashboardRule,
  dashboardRules,
  dashboardRuns,
  dashboardTraumas,
  DUPLICATE_MAX_PAIRS,
  DUPLICATE_SCAN_MAX,
  EXPIRING_WITHIN_DAYS,
  loadDashboardPlaybook,
  paginate,
  RISK_DEFAULT_LIMIT,
  RULE_SORTS,
  ruleSummary,
  SCORE_BIN_EDGES,
  SCORE_SERIES_MAX_POINTS,
  scoreBinIndex,
} from "./dashboard/read-model.js";
export type {
  DashboardContextEntry,
  DashboardDuplicates,
  DashboardOverview,
  DashboardRisk,
  DashboardRun,
  Page,
  PageRequest,
  RuleDetail,
  RuleJournalEntry,
  RuleQuery,
  RuleSort,
  RuleSummary,
  ScorePoint,
} from "./dashboard/read-model.js";
