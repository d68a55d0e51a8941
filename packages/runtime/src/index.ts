// Public API of @cass-memory/runtime: the Node composition root.
export { createRuntime, visibleLlmCredentials } from "./runtime.js";
export type { Runtime, RuntimeOptions, RuntimePaths, RuntimeStorage } from "./runtime.js";
// Storage backends: choosing the store, `cm storage status` and `cm storage migrate`.
export { closeAllStores, openStore, resolveSqlitePath, storageFromEnv, SQLITE_DATABASE_FILE } from "./storage/backend.js";
export type { LoadSqliteModule, OpenedStore, SqliteModule, StoreDirs } from "./storage/backend.js";
export { MIGRATION_LOCK, migrateStorage, readProgress, stagingDirs } from "./storage/migrate.js";
export type { MigrateProgressEvent, MigrateStorageOptions, MigrateStorageResult, MigrationProgress, MigrationRecord } from "./storage/migrate.js";
export { storageStatus } from "./storage/status.js";
export type { BackendLayerStatus, LayerStorageStatus, StorageStatus } from "./storage/status.js";
export {
  DEFAULT_DIARY_DIR,
  DEFAULT_PLAYBOOK_PATH,
  LLM_DEPRECATION_WARNING,
  REPO_CONFIG_FILES,
  jsonErrorLine,
  loadConfig,
} from "./config.js";
export type { LoadConfigOptions, LoadedConfig, UnreadableConfig } from "./config.js";
export { expandHome, findGitRoot, homeDir, resolveGlobalDir } from "./paths.js";
export { createIdGenerator, createStderrLogger, systemClock } from "./node-ports.js";
export { createLearning, parseReflectorStubs, resolveLlmStatus } from "./learning.js";
export type { LearningWiring, LlmModule } from "./learning.js";
export { createEpisodicSource, defaultCassCandidates, locateExecutable } from "./episodic.js";
// Semantic search: the embedding cache file and the lazy embedder loader.
export {
  EMBEDDING_CACHE_VERSION,
  asEmbeddingModule,
  createEmbedderLoader,
  createEmbeddingCache,
  embeddingCachePath,
  embeddingLoaderOf,
} from "./embeddings.js";
export type { EmbedderWiring, EmbeddingCacheOptions, EmbeddingModule } from "./embeddings.js";
export { INDEX_FILES, createLexicalCache, lexicalCachePath, lexicalIndexPath } from "./lexical-cache.js";
export type { LexicalCacheOptions } from "./lexical-cache.js";
export type { EpisodicWiring } from "./episodic.js";
export type { StderrLoggerOptions } from "./node-ports.js";
// `cm setup <client>`: MCP client configuration (planning functions are pure; setupClient does the I/O).
export { agentsMdPath, setupClient } from "./setup/setup.js";
export type { AgentsMdResult, SetupOptions, SetupResult } from "./setup/setup.js";
export {
  DEFAULT_MCP_COMMAND,
  MCP_SERVER_NAME,
  SETUP_CLIENTS,
  SETUP_SCOPES,
  clientConfigPath,
  clientSpec,
  isSetupClient,
  resolveScope,
  resolveTransport,
} from "./setup/clients.js";
export type { ClientSpec, McpTransport, ServerEntry, SetupClient, SetupScope } from "./setup/clients.js";
export { mergeServerEntry, planJsonConfig, scanJson } from "./setup/json-config.js";
export type { ConfigPlan, PlanAction } from "./setup/json-config.js";
export { planTomlConfig, scanToml, tomlString } from "./setup/toml-config.js";
export type { TomlStatement } from "./setup/toml-config.js";
export { AGENTS_MD_BEGIN, AGENTS_MD_END, agentsMdBlock, planAgentsMd } from "./setup/agents-md.js";
export type { AgentsMdPlan } from "./setup/agents-md.js";
// `cm hook` / `cm setup --hooks`: lifecycle hooks of agent clients (protocol and planning are pure).
export { CLIENTS_WITHOUT_HOOKS, HOOK_CLIENTS, findHookEvent, hookClientSpec, hookConfigPath, isHookClient } from "./hooks/clients.js";
export type { HookAction, HookClient, HookClientSpec, HookEventSpec } from "./hooks/clients.js";
export { isCmHookCommand, planHookConfig } from "./hooks/config.js";
export type { HookConfigPlan, HookEntryReport } from "./hooks/config.js";
export {
  CHARS_PER_TOKEN,
  DEFAULT_HOOK_MAX_TOKENS,
  DEFAULT_HOOK_TIMEOUT_MS,
  HOOK_PROMPT_MAX_CHARS,
  HOOK_STDIN_MAX_BYTES,
  contextAnswer,
  denyAnswer,
  hotStoveReason,
  parseHookRequest,
  renderHookContext,
} from "./hooks/protocol.js";
export type { HookAnswer, HookRequest, HookRule, RenderedContext } from "./hooks/protocol.js";
export { appendHookLog, checkTranscriptPath, hooksDir, spawnReflect, spawnWarmup } from "./hooks/background.js";
export type { SpawnReflectResult } from "./hooks/background.js";
export { currentCmScript, hookCommand, runnableWarnings, setupHooks, shellQuote } from "./hooks/install.js";
export type { HookSetupOptions, HookSetupResult } from "./hooks/install.js";
// `cm guard`: the HOT STOVE guard scripts for Claude Code and git pre-commit.
export {
  CLAUDE_GUARD_COMMAND,
  addGuardToPreCommit,
  claudeGuardHealth,
  installClaudeGuard,
  installGitGuard,
  preCommitHasGuard,
  pythonParses,
  settingsHaveGuard,
} from "./guard/install.js";
export type { ClaudeGuardResult, GitGuardResult, GuardOptions } from "./guard/install.js";
export { CLAUDE_GUARD_SCRIPT, GIT_GUARD_SCRIPT, GUARD_SCRIPT_VERSION } from "./guard/scripts.js";
// Serialisation and lock helpers of the YAML store, re-exported for the apps (they depend on runtime only).
export { atomicWriteFile, fromYaml, releaseAllLocks, toYaml } from "@cass-memory/store-yaml";
