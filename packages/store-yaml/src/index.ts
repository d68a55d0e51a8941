export { createYamlStore, GLOBAL_LAYER_FILES, REPO_LAYER_FILES, GLOBAL_SUBDIRS } from "./yaml-store.js";
export type { YamlStoreOptions } from "./yaml-store.js";
export { toYaml, fromYaml, decodePlaybook, encodePlaybook, leadingComments, REPO_PLAYBOOK_HEADER } from "./yaml-codec.js";
export {
  acquireLock,
  withLock,
  releaseAllLocks,
  isProcessAlive,
  lockDirFor,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_LOCK_STALE_MS,
  LOCK_HEARTBEAT_MS,
} from "@cass-memory/node-files";
export type { LockOptions, LockHandle } from "@cass-memory/node-files";
export { atomicWriteFile, FILE_MODE } from "@cass-memory/node-files";
export { ParseCache, PARSE_CACHE_FORMAT } from "./parse-cache.js";
export { openPlaybookStream, PlaybookStreamUnsupported } from "./playbook-stream.js";
export type { PlaybookStream } from "./playbook-stream.js";
