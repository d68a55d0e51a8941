export { createPostgresStore, CHANGE_CHANNEL, DEFAULT_SCHEMA, GLOBAL_LAYER_FILES, GLOBAL_SPACE, LOG_FILES, REPO_LAYER_FILES } from "./postgres-store.js";
export type { PostgresStore, PostgresStoreOptions } from "./postgres-store.js";
export { redactUrl, scrubSecrets } from "./database.js";
export { LISTENER_APPLICATION_NAME } from "./listener.js";
export { tsQueryOf } from "./candidate-search.js";
export { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";
export type { Migration } from "./schema.js";
export type { YamlParser } from "@cass-memory/node-files";
