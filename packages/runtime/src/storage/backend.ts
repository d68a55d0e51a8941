import { existsSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { AppError, STORAGE_BACKENDS, type Config, type Logger, type Store, type StorageBackend } from "@cass-memory/core";
import { createYamlStore, fromYaml } from "@cass-memory/store-yaml";
import { expandHome } from "../paths.js";
import { missingDatabaseUrl, postgresSettings, type PostgresSettings } from "./postgres.js";

/**
 * Choosing the store: `storage.backend` (config, or CASS_MEMORY_STORAGE) picks the YAML store or
 * the SQLite store. The SQLite store is loaded only when it is used — better-sqlite3 is a native
 * module, and hosts that bundle the runtime (the cm CLI) pass their own loader.
 */

/** `@cass-memory/store-sqlite`, as far as the runtime uses it. */
export type SqliteModule = Pick<typeof import("@cass-memory/store-sqlite"), "createSqliteStore" | "DATABASE_FILE" | "SCHEMA_VERSION"> &
  Partial<Pick<typeof import("@cass-memory/store-sqlite"), "probeNativeModule">>;
export type SqliteStoreHandle = ReturnType<SqliteModule["createSqliteStore"]>;
export type LoadSqliteModule = () => Promise<SqliteModule>;

/** File name of a layer's database (`DATABASE_FILE` of store-sqlite, known here without loading it). */
export const SQLITE_DATABASE_FILE = "cass-memory.sqlite";

export const defaultLoadSqlite: LoadSqliteModule = () => import("@cass-memory/store-sqlite");

export function isStorageBackend(value: unknown): value is StorageBackend {
  return typeof value === "string" && (STORAGE_BACKENDS as readonly string[]).includes(value);
}

/**
 * The storage settings of the environment: CASS_MEMORY_STORAGE (`yaml` | `sqlite`, any case) and
 * CASS_MEMORY_STORAGE_PATH. An invalid backend is a CONFIG_INVALID error, returned (not thrown) so
 * that a tolerant load (`cm doctor`) can report it and go on.
 */
export function storageFromEnv(env: Record<string, string | undefined>): { storage: Record<string, unknown> | null; error: AppError | null } {
  const storage: Record<string, unknown> = {};
  const raw = env.CASS_MEMORY_STORAGE;
  if (raw !== undefined && raw.trim() !== "") {
    const value = raw.trim().toLowerCase();
    if (!isStorageBackend(value)) {
      return {
        storage: null,
        error: new AppError("CONFIG_INVALID", `CASS_MEMORY_STORAGE=${JSON.stringify(raw)} is not a storage backend (expected ${STORAGE_BACKENDS.join(", ")}).`, {
          hint: "Set CASS_MEMORY_STORAGE=yaml, CASS_MEMORY_STORAGE=sqlite or CASS_MEMORY_STORAGE=postgres, or unset it to use storage.backend of config.json.",
          details: { variable: "CASS_MEMORY_STORAGE", received: raw, expected: [...STORAGE_BACKENDS] },
        }),
      };
    }
    storage.backend = value;
  }
  const path = env.CASS_MEMORY_STORAGE_PATH;
  if (path !== undefined && path.trim() !== "") storage.path = path.trim();
  return { storage: Object.keys(storage).length > 0 ? storage : null, error: null };
}

/** The global database's path: `storage.path` with `~` expanded (relative to the global directory), else the default. */
export function resolveSqlitePath(path: string | undefined, globalDir: string, env: Record<string, string | undefined>): string {
  if (path === undefined || path.trim() === "") return join(globalDir, SQLITE_DATABASE_FILE);
  const expanded = expandHome(path.trim(), env);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(globalDir, expanded);
}

/** Where one store's data lives. */
export interface StoreDirs {
  globalDir: string;
  repoDir: string | null;
  /** YAML: the global playbook (config `playbookPath`). */
  playbookPath: string;
  /** YAML: the diary directory (config `diaryDir`). */
  diaryDir: string;
  /** SQLite: the global database (config `storage.path`). */
  sqlitePath: string;
  /** PostgreSQL: the URL (never shown), schema and the repository's key. */
  postgres?: PostgresSettings;
}

/** `@cass-memory/store-postgres`, as far as the runtime uses it (loaded only for `postgres`). */
export type PostgresModule = Pick<typeof import("@cass-memory/store-postgres"), "createPostgresStore" | "SCHEMA_VERSION">;
export type PostgresStoreHandle = ReturnType<PostgresModule["createPostgresStore"]>;
export const defaultLoadPostgres = (): Promise<PostgresModule> => import("@cass-memory/store-postgres");

export interface OpenStoreOptions {
  logger: Logger;
  loadPostgres?: () => Promise<PostgresModule>;
  cliName?: string;
  loadSqlite?: LoadSqliteModule;
  parseCache?: false;
  memoizeReads?: boolean;
  /** Memoize YAML reads only (RuntimeOptions.resident). */
  resident?: boolean;
}

/** A store and how to let go of it (closes SQLite's connections; nothing for YAML). Idempotent. */
export interface OpenedStore {
  store: Store;
  backend: StorageBackend;
  close(): void;
}

/** Stores to close when the process exits (SQLite: checkpoints the WAL and removes its files). */
const openStores = new Set<OpenedStore>();
let exitHooked = false;

function closeAtExit(opened: OpenedStore): void {
  openStores.add(opened);
  if (exitHooked) return;
  exitHooked = true;
  process.once("exit", () => {
    for (const store of [...openStores]) store.close();
  });
}

/** First line of an error's message, bounded (a native loader's message can list dozens of paths). */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const line = text.split("\n", 1)[0] ?? "";
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/**
 * The error for a SQLite backend that cannot be loaded (exit 3): better-sqlite3 (an optional, native
 * dependency) is not installed, or its compiled binding is missing or built for another Node.
 */
export function sqliteUnavailable(error: unknown): AppError {
  if (error instanceof AppError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  const reason = firstLine(error);
  const yaml = 'Or keep the YAML store: remove storage.backend "sqlite" from config.json, or set CASS_MEMORY_STORAGE=yaml.';
  const notInstalled = (code === "MODULE_NOT_FOUND" || code === "ERR_MODULE_NOT_FOUND") && /better-sqlite3|store-sqlite/.test(reason);
  if (notInstalled) {
    return new AppError("CONFIG_INVALID", 'The SQLite backend (storage.backend "sqlite") needs better-sqlite3, which is not installed.', {
      hint: `Install it where cass-memory is installed: \`npm install -g better-sqlite3\` for a global cm (or \`npm install better-sqlite3\` in a project that depends on cass-memory). ${yaml}`,
      // No `cause`: the loader's message (a require stack, a list of tried paths) is what users
      // should not have to read; its first line is in details.reason.
      details: { backend: "sqlite", missing: "better-sqlite3", reason },
    });
  }
  return new AppError("CONFIG_INVALID", `The SQLite backend (storage.backend "sqlite") could not load better-sqlite3's native binding: ${reason}`, {
    hint: `Rebuild it for this Node (${process.version}): \`npm rebuild better-sqlite3\` where it is installed (\`npm install -g better-sqlite3\` again for a global cm); building needs a C++ compiler, make and python3 when no prebuilt binary fits. ${yaml}`,
    details: { backend: "sqlite", package: "better-sqlite3", reason },
  });
}

/** Opens the store of `backend` over `dirs`. The SQLite module is loaded here, only for `sqlite`. */
export async function openStore(backend: StorageBackend, dirs: StoreDirs, options: OpenStoreOptions): Promise<OpenedStore> {
  if (backend === "postgres") return openPostgresStore(dirs, options);
  if (backend === "yaml") {
    const store = createYamlStore({
      globalDir: dirs.globalDir,
      globalPlaybookPath: dirs.playbookPath,
      diaryDir: dirs.diaryDir,
      repoDir: dirs.repoDir,
      logger: options.logger,
      ...(options.parseCache === false ? { parseCache: false as const } : {}),
      ...(options.memoizeReads || options.resident ? { memoizeReads: true } : {}),
    });
    return { store, backend, close: () => undefined };
  }
  let sqlite: SqliteModule;
  try {
    sqlite = await (options.loadSqlite ?? defaultLoadSqlite)();
    // The native binding is otherwise loaded by the first query: fail here, with the fix, instead.
    sqlite.probeNativeModule?.();
  } catch (error) {
    throw sqliteUnavailable(error);
  }
  const store = sqlite.createSqliteStore({
    globalDir: dirs.globalDir,
    repoDir: dirs.repoDir,
    path: dirs.sqlitePath,
    logger: options.logger,
    parseYaml: fromYaml,
    ...(options.memoizeReads ? { memoizeReads: true } : {}),
  });
  let closed = false;
  const opened: OpenedStore = {
    store,
    backend,
    close() {
      openStores.delete(opened);
      if (closed) return;
      closed = true;
      try {
        store.close();
      } catch {
        // closing at exit: nothing more to do
      }
    },
  };
  closeAtExit(opened);
  return opened;
}

/** Opens the PostgreSQL store of `dirs.postgres` (CONFIG_INVALID without a URL). Nothing connects until the first call. */
async function openPostgresStore(dirs: StoreDirs, options: OpenStoreOptions): Promise<OpenedStore> {
  const settings = dirs.postgres;
  if (settings === undefined || settings.url === null) throw missingDatabaseUrl(options.cliName ?? "cm");
  let postgres: PostgresModule;
  try {
    postgres = await (options.loadPostgres ?? defaultLoadPostgres)();
  } catch (error) {
    throw new AppError("CONFIG_INVALID", `The PostgreSQL store (storage.backend "postgres") could not be loaded: ${error instanceof Error ? error.message.split("\n", 1)[0] : String(error)}`, {
      hint: "Install @cass-memory/store-postgres next to cass-memory, or switch back with storage.backend \"yaml\".",
    });
  }
  const store = postgres.createPostgresStore({
    url: settings.url,
    globalDir: dirs.globalDir,
    repoDir: dirs.repoDir,
    ...(settings.repoSpace !== null ? { repoSpace: settings.repoSpace } : {}),
    ...(settings.schema !== undefined ? { schema: settings.schema } : {}),
    logger: options.logger,
    parseYaml: fromYaml,
    ...(options.memoizeReads ? { memoizeReads: true } : {}),
  });
  let closed = false;
  const opened: OpenedStore = {
    store,
    backend: "postgres",
    close() {
      openStores.delete(opened);
      if (closed) return;
      closed = true;
      void store.close().catch(() => undefined);
    },
  };
  closeAtExit(opened);
  return opened;
}

/**
 * A warning when the backend in use has no data for a layer while the other backend has some (for
 * example after `storage.backend` was changed without `cm storage migrate`): the data is not lost,
 * but this store does not see it. Null when there is nothing to say.
 */
export function unmigratedDataWarning(backend: StorageBackend, dirs: StoreDirs, cliName: string): string | null {
  // The shared database cannot be compared with this machine's files without connecting: `storage status` does.
  if (backend === "postgres") return null;
  const layers: string[] = [];
  const check = (layer: string, yamlPlaybook: string, database: string): void => {
    const yaml = existsSync(yamlPlaybook);
    const sqlite = existsSync(database);
    if (backend === "sqlite" ? yaml && !sqlite : sqlite && !yaml) layers.push(layer);
  };
  check("global", dirs.playbookPath, dirs.sqlitePath);
  if (dirs.repoDir !== null) check("repo", join(dirs.repoDir, "playbook.yaml"), join(dirs.repoDir, SQLITE_DATABASE_FILE));
  if (layers.length === 0) return null;
  const other = backend === "sqlite" ? "yaml" : "sqlite";
  return `The storage backend is ${backend}, but the ${layers.join(" and ")} layer's data ${layers.length === 1 ? "is" : "are"} only in ${other}: it is not used until moved. Run '${cliName} storage migrate --to ${backend}' (see '${cliName} storage status').`;
}

/** Closes every store opened by this process (tests; the exit hook does the same). */
export function closeAllStores(): void {
  for (const store of [...openStores]) store.close();
}

export function sqliteLayerPath(dirs: Pick<StoreDirs, "sqlitePath" | "repoDir">, layer: "global" | "repo"): string | null {
  if (layer === "global") return dirs.sqlitePath;
  return dirs.repoDir === null ? null : join(dirs.repoDir, SQLITE_DATABASE_FILE);
}

/** The directories of the runtime's store, from the loaded configuration. */
export function storeDirsOf(config: Config, globalDir: string, repoDir: string | null, env: Record<string, string | undefined> = process.env): StoreDirs {
  return {
    postgres: postgresSettings(config, env, repoDir),
    globalDir,
    repoDir,
    playbookPath: config.playbookPath,
    diaryDir: config.diaryDir,
    sqlitePath: config.storage.path ?? join(globalDir, SQLITE_DATABASE_FILE),
  };
}
