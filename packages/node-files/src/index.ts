// Public API of @cass-memory/node-files: the file primitives every file-backed store shares — the
// cross-process directory lock compatible with the original cm, atomic writes, JSONL append/read.
export {
  acquireLock,
  withLock,
  withNamedLock,
  releaseAllLocks,
  isProcessAlive,
  lockDirFor,
  DEFAULT_LOCK_TIMEOUT_MS,
  DEFAULT_LOCK_STALE_MS,
  LOCK_HEARTBEAT_MS,
} from "./lock.js";
export type { LockOptions, LockHandle } from "./lock.js";
export { atomicWriteFile, FILE_MODE, tempPathFor } from "./atomic-write.js";
export { appendJsonl, listDir, readError, readJsonl } from "./jsonl.js";
export type { JsonlLines } from "./jsonl.js";
export { crashPoint, CRASH_POINT_ENV } from "./crash-point.js";
export { backupFile, mutateConfigJson, readFailure, readStarterDir, readTextIfExists } from "./hand-edited-files.js";
export type { YamlParser } from "./hand-edited-files.js";
