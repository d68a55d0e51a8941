// Public API of @cass-memory/cass. Explicit named exports only (see ARCHITECTURE.md §7).

export { AGENT_SLUGS } from "./model.js";
export { createAutoSource } from "./auto-source.js";
export type { AutoSourceOptions } from "./auto-source.js";
export { createSessionReaders, discoverSessions, normalizeAgentKey } from "./native/discovery.js";
export type {
  AgentSlug,
  DiscoveryEnv,
  NormalizedConversation,
  NormalizedMessage,
  SessionFileRef,
  SessionReader,
} from "./model.js";

// cass CLI adapter
export { createCassCliSource, SUPPORTED_CASS_API_VERSION } from "./cass-cli/source.js";
export type { CassCliSource, CassCliSourceOptions, CassCliTimeouts, CassDetection } from "./cass-cli/source.js";

// native source: in-process BM25 search over session files, with a persistent index
export { createNativeSource, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from "./native/native-source.js";
export type {
  DiscoverSessionsFn,
  NativeEpisodicSource,
  NativeHealth,
  NativeSourceOptions,
  ReindexResult,
} from "./native/native-source.js";
export type { FoundSession } from "./native/index-store.js";
