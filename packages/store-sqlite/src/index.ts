export { createSqliteStore, DATABASE_FILE, GLOBAL_LAYER_FILES, REPO_LAYER_FILES, LOG_FILES } from "./sqlite-store.js";
export type { CandidateSearchOptions, SqliteStore, SqliteStoreOptions } from "./sqlite-store.js";
export type { BulletCandidate } from "./playbook-rows.js";
export { ftsQueryOf } from "./playbook-rows.js";
export type { SynchronousMode } from "./database.js";
export type { YamlParser } from "./files.js";
export { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
export type { Migration } from "./schema.js";
export { DIAGNOSTIC_CATEGORIES } from "./diagnostics.js";
