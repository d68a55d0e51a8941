// @cass-memory/core/schemas: the zod schemas of the data model (playbook, bullet, config, records), their codecs and tolerant readers.
// A subpath entry point: importing from here loads only these modules (see docs/benchmarks.md, "Bundle size").

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
export { checkConfig } from "./schemas/config-check.js";
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
export { checkJournalEventsForWrite, decodeBlockedEntries, parseJournalEventForWrite, parseJsonLines, validateBlockedEntries, validatePlaybookForWrite } from "./schemas/codec.js";
export { camelizeDeep, camelizeKnownKeys, isPlainObject, snakeToCamel } from "./schemas/tolerant.js";
export { BULLET_OPTIONAL_CHECKS, BULLET_REQUIRED_CHECKS, isCanonicalBullet } from "./schemas/bullet-check.js";
// Deferred construction of schemas and other module-level values (for adapters and npm users alike).
export { lazySchema, lazyValue } from "./schemas/lazy.js";
