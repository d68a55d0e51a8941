// Public API of @cass-memory/llm. Explicit named exports only.

export {
  API_KEY_ENV,
  DEFAULT_OLLAMA_BASE_URL,
  DEFAULT_PER_CALL_TIMEOUT_MS,
  DEFAULT_TOTAL_TIMEOUT_MS,
  UNUSED_API_KEY,
  budgetOf,
  isLlmDisabled,
  isLocalUrl,
  ollamaOpenAiBase,
  resolveLlmSettings,
  resolveOllamaRoot,
  resolveTimeouts,
  settingsForInjectedModel,
} from "./settings.js";
export type {
  Env,
  LlmBudget,
  LlmProviderName,
  LlmSettings,
  LlmSettingsResult,
  LlmTimeouts,
  LlmUnavailable,
  LlmUnavailableCode,
} from "./settings.js";
export { createLanguageModel } from "./model.js";
export type { CreateModelOptions } from "./model.js";
export { FREE_PRICE, MODEL_PRICES, UNKNOWN_MODEL_PRICE, costOf, priceOf } from "./pricing.js";
export type { ModelPrice } from "./pricing.js";
export { assertWithinBudget, recordUsage } from "./budget.js";
export type { TokenUsage } from "./budget.js";
export { isRetryableLlmError, isStructuredOutputUnsupported, toLlmAppError } from "./errors.js";
export type { LlmErrorContext } from "./errors.js";
export { describeIssues, extractJson, parseStructured, schemaAsText } from "./json.js";
export type { ParseOutcome } from "./json.js";
export {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_MAX_RETRIES,
  MAX_BACKOFF_MS,
  backoffDelay,
  generateStructured,
  realSleep,
} from "./generate.js";
export type { GenerateStructuredOptions, GenerateStructuredResult, ModelCapabilities, Sleep } from "./generate.js";
export {
  AuditReplySchema,
  DeltaReplySchema,
  DiaryReplySchema,
  ReflectorReplySchema,
  ValidatorReplySchema,
} from "./schemas.js";
export type { AuditReply, DeltaReply, DiaryReply, ReflectorReply, ValidatorReply } from "./schemas.js";
export {
  AUDIT_BUDGET_CHARS,
  AUDIT_MIN_SESSION_CHARS,
  DIARY_TRANSCRIPT_MAX_CHARS,
  REFLECTOR_HISTORY_MAX_CHARS,
  REFLECTOR_MAX_DELTAS,
  REFLECTOR_PLAYBOOK_MAX_CHARS,
  VALIDATOR_EVIDENCE_MAX_CHARS,
  formatPlaybook,
  truncateMiddle,
} from "./prompts.js";
export { LlmAuditor, LlmDiaryWriter, LlmReflector, LlmValidator } from "./components.js";
export type { LlmComponentDeps } from "./components.js";
export { createLlmLearning } from "./learning.js";
export type { CreateLlmLearningOptions, LlmLearning, LlmLearningComponents } from "./learning.js";
export {
  DEFAULT_EMBEDDING_BATCH_SIZE,
  DEFAULT_EMBEDDING_MODELS,
  DEFAULT_EMBEDDING_TIMEOUT_MS,
  EMBEDDING_API_KEY_ENV,
  EMBEDDING_MODEL_DIR_ENV,
  OPENAI_DEFAULT_BASE_URL,
  XENOVA_DEFAULT_MODEL,
  createEmbedder,
  createHttpEmbedder,
  resolveEmbeddingSettings,
  toEmbeddingError,
} from "./embed.js";
export type { CreateEmbedderOptions, EmbeddingBackend, EmbeddingSettings, HttpEmbeddingSettings, LocalEmbeddingSettings } from "./embed.js";
export {
  TRANSFORMERS_INSTALL_HINT,
  TRANSFORMERS_MODULE_ENV,
  TRANSFORMERS_PACKAGE,
  createTransformersEmbedder,
  defaultTransformersLoader,
} from "./embed-transformers.js";
export type { FeatureExtractor, FeatureOutput, TransformersLoader, TransformersModule } from "./embed-transformers.js";
