// @cass-memory/core/testing: in-memory fakes of every port, for tests of core, adapters and apps.

export {
  MEMORY_GLOBAL_DIR,
  MEMORY_REPO_DIR,
  createMemoryStore,
  createMemoryStoreBacking,
} from "./testing/memory-store.js";
export type { MemoryLogTarget, MemoryStore, MemoryStoreBacking, MemoryStoreOptions } from "./testing/memory-store.js";
export {
  createFakeClock,
  createFakeEpisodicSource,
  createMemoryFiles,
  createMemoryLogger,
  createSequentialIds,
  createTestBullet,
  createTestDeps,
  TEST_BULLET_TIME,
} from "./testing/fakes.js";
export type { FakeClock, FakeEpisodicOptions, MemoryFiles, MemoryLogger } from "./testing/fakes.js";
export { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource } from "./episodic/null-source.js";
export { createMemoryEmbeddingCache, createTestEmbedder, trigramVector } from "./testing/embedder.js";
export type { MemoryEmbeddingCache, TestEmbedder, TestEmbedderOptions } from "./testing/embedder.js";
