// Public API of @cass-memory/runtime: the Node composition root.
export { createRuntime, visibleLlmCredentials } from "./runtime.js";
export type { Runtime, RuntimeOptions, RuntimePaths } from "./runtime.js";
export {
  DEFAULT_DIARY_DIR,
  DEFAULT_PLAYBOOK_PATH,
  LLM_DEPRECATION_WARNING,
  REPO_CONFIG_FILES,
  loadConfig,
} from "./config.js";
export type { LoadConfigOptions, LoadedConfig } from "./config.js";
export { expandHome, findGitRoot, homeDir, resolveGlobalDir } from "./paths.js";
export { createIdGenerator, createStderrLogger, systemClock } from "./node-ports.js";
export { createLearning, parseReflectorStubs, resolveLlmStatus } from "./learning.js";
export type { LearningWiring, LlmModule } from "./learning.js";
export { createEpisodicSource, defaultCassCandidates, locateExecutable } from "./episodic.js";
export type { EpisodicWiring } from "./episodic.js";
export type { StderrLoggerOptions } from "./node-ports.js";
// Serialisation and lock helpers of the YAML store, re-exported for the apps (they depend on runtime only).
export { atomicWriteFile, fromYaml, releaseAllLocks, toYaml } from "@cass-memory/store-yaml";
