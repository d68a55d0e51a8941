import { join } from "node:path";
import { redactFor, type Config, type LearningComponents, type StorageBackend, type LlmStatus, type OperationDeps, type RuntimeReport } from "@cass-memory/core";
import { createLexicalCache } from "./lexical-cache.js";
import { createEmbedderLoader, createEmbeddingCache, embeddingLoaderOf, type EmbeddingModule } from "./embeddings.js";
import { createEpisodicSource, llmCommandReport } from "./episodic.js";
import { createLearning, resolveLlmStatus, type LearningWiring } from "./learning.js";
import { loadConfig } from "./config.js";
import { createIdGenerator, createNodeWorkspaceFiles, createStderrLogger, systemClock } from "./node-ports.js";
import { findGitRoot, homeDir, resolveGlobalDir } from "./paths.js";
import { hostHealthChecks } from "./guard/health.js";
import { backupStoreFiles } from "./storage/backup.js";
import { backendFromData, refuseWrites, unreadableConfigError } from "./storage/unreadable-config.js";
import { openStore, storageFromEnv, storeDirsOf, unmigratedDataWarning, type LoadSqliteModule, type PostgresModule, type StoreDirs } from "./storage/backend.js";

export interface RuntimeOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Program name used in hints (`cm`). */
  cliName?: string;
  /** Force debug diagnostics on (the CLI's --verbose); config `verbose` also turns them on. */
  verbose?: boolean;
  /** Receives each diagnostic line (no newline); default process.stderr. */
  stderr?: (line: string) => void;
  /**
   * Use defaults for invalid settings instead of throwing CONFIG_INVALID; the problems are in
   * `configProblems` and `deps.runtimeReport` (for `cm doctor`).
   */
  tolerateInvalidConfig?: boolean;
  /** Set false to never write the playbook parse cache (read-only runs such as `cm doctor`). */
  parseCache?: boolean;
  /** Keep parsed playbooks in memory while their files are unchanged (long-running servers). */
  memoizeReads?: boolean;
  /**
   * A process that runs many commands with a runtime each (`cm daemon`): YAML playbooks stay in
   * memory while their files are unchanged, shared by those runtimes. The SQLite and PostgreSQL
   * stores are opened as for a one-shot command (the caller closes each runtime when done).
   */
  resident?: boolean;
  /** The program's version, reported by `cm doctor` (and part of the lexical cache's fingerprint). */
  version?: string;
  /** Keep the ranker's analysed rule texts in `<globalDir>/.cache/` between processes (default true). */
  lexicalCache?: boolean;
  /** Loads the LLM layer for `learning()` (default: a dynamic import of `@cass-memory/llm`). */
  loadLlm?: LearningWiring["loadLlm"];
  /**
   * Loads the embedder factory for semantic search (default: `loadLlm` when given, else a dynamic
   * import of `@cass-memory/llm`). Called only when semantic search is enabled and used.
   */
  loadEmbeddings?: () => Promise<EmbeddingModule>;
  /**
   * Loads `@cass-memory/store-sqlite` when `storage.backend` is `sqlite` (default: a dynamic
   * import). Never called for the YAML store, so better-sqlite3 stays unloaded.
   */
  loadSqliteStore?: LoadSqliteModule;
  /**
   * Loads `@cass-memory/store-postgres` when `storage.backend` is `postgres` (default: a dynamic
   * import). A bundle that must not contain the store (the CLI's `cm serve`) passes its host's loader.
   */
  loadPostgresStore?: () => Promise<PostgresModule>;
  /** Do not warn about data left in the other storage backend (`cm storage`, which reports it itself). */
  quietStorageWarning?: boolean;
}

/** The store in use and where each backend keeps its data. */
export interface RuntimeStorage {
  backend: StorageBackend;
  /** Directories and files of both backends (the global database is `dirs.sqlitePath`). */
  dirs: StoreDirs;
  /** Loads the SQLite store module (the runtime's loader). */
  loadSqlite?: LoadSqliteModule;
  /** Loads the PostgreSQL store module (the runtime's loader). */
  loadPostgres?: () => Promise<PostgresModule>;
  /** The backend CASS_MEMORY_STORAGE selects (it overrides config.json), or null when unset. */
  envBackend: StorageBackend | null;
}

export interface RuntimePaths {
  globalDir: string;
  globalPlaybook: string;
  configPath: string;
  repoRoot: string | null;
  repoDir: string | null;
}

export interface Runtime {
  deps: OperationDeps;
  paths: RuntimePaths;
  config: Config;
  /** Configuration warnings (already written to the logger). */
  warnings: string[];
  /** Configuration problems for which defaults were used (see RuntimeOptions.tolerateInvalidConfig). */
  configProblems: string[];
  /**
   * The learning components (LLM-backed or deterministic), built on first use: only reflect,
   * diary, validate and audit pay for loading the LLM layer.
   */
  learning(): Promise<LearningComponents>;
  storage: RuntimeStorage;
  /** Closes the store's connections (SQLite; also done at process exit). Idempotent. */
  close(): void;
}

/** Environment variables whose presence makes an LLM provider usable (names only are reported). */
const LLM_CREDENTIAL_ENV = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "AWS_PROFILE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "CASS_CLI_COMMAND",
] as const;

/** Names of the LLM credential variables that are set (never their values). */
export function visibleLlmCredentials(env: NodeJS.ProcessEnv): string[] {
  const set = (name: string): boolean => (env[name]?.trim() ?? "") !== "";
  const names: string[] = LLM_CREDENTIAL_ENV.filter(set);
  if (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY")) names.push("AWS_ACCESS_KEY_ID");
  return names;
}

/**
 * The Node composition root: resolves the directories, loads the configuration cascade and wires
 * the adapters (the store of `storage.backend`, episodic source, clock, ids, stderr logger) into `OperationDeps`.
 * Throws AppError `CONFIG_INVALID` when the configuration is invalid (unless
 * `tolerateInvalidConfig`, which uses defaults for the invalid settings and reports them).
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const globalDir = resolveGlobalDir(env);
  const repoRoot = findGitRoot(cwd);
  const repoDir = repoRoot !== null ? join(repoRoot, ".cass") : null;

  const write = options.stderr;
  const { config, warnings, problems, unreadable } = loadConfig({ globalDir, repoRoot, env, tolerateInvalid: Boolean(options.tolerateInvalidConfig) });
  // An unreadable config.json: the backend comes from the data present (unless the environment
  // names one), and writes are refused below.
  if (unreadable !== null && storageFromEnv(env).storage === null) {
    const detected = backendFromData(storeDirsOf(config, globalDir, repoDir, env));
    if (detected !== config.storage.backend) warnings.push(`Using the ${detected} store found in ${globalDir} while ${unreadable.path} cannot be read.`);
    config.storage.backend = detected;
  }
  const logger = createStderrLogger({ verbose: Boolean(options.verbose) || config.verbose, ...(write ? { write } : {}), redact: (text) => redactFor(config, text) });
  for (const warning of warnings) logger.warn(warning);

  // The store of `storage.backend` (YAML by default); the SQLite module is loaded only for sqlite.
  const storeDirs = storeDirsOf(config, globalDir, repoDir, env);
  const opened = await openStore(config.storage.backend, storeDirs, {
    logger,
    ...(options.loadSqliteStore !== undefined ? { loadSqlite: options.loadSqliteStore } : {}),
    ...(options.loadPostgresStore !== undefined ? { loadPostgres: options.loadPostgresStore } : {}),
    ...(options.parseCache === false ? { parseCache: false as const } : {}),
    ...(options.memoizeReads ? { memoizeReads: true } : {}),
    ...(options.resident ? { resident: true } : {}),
  });
  // Doctor (tolerateInvalidConfig) must still be able to repair things; every other writer stops.
  const store = unreadable !== null && !options.tolerateInvalidConfig ? refuseWrites(opened.store, unreadableConfigError(unreadable, config.storage.backend, options.cliName ?? "cm")) : opened.store;
  const unmigrated = unmigratedDataWarning(config.storage.backend, storeDirs, options.cliName ?? "cm");
  if (unmigrated !== null && !options.quietStorageWarning) logger.warn(unmigrated);
  let llmStatus: Promise<LlmStatus> | null = null;
  const runtimeReport: RuntimeReport = {
    ...(options.version !== undefined ? { version: options.version } : {}),
    configProblems: [...problems],
    recheckConfig: async () => loadConfig({ globalDir, repoRoot, env, tolerateInvalid: true }).problems,
    hostChecks: () => hostHealthChecks(cwd),
    backupStore: (reason) => backupStoreFiles(config.storage.backend, storeDirs, reason, systemClock.now()),
    llmCredentials: visibleLlmCredentials(env),
    llmDisabled: env.CASS_MEMORY_LLM?.trim().toLowerCase() === "none",
    ...(() => {
      const llmCommand = llmCommandReport(config.cliCommand, env, homeDir(env));
      return llmCommand !== undefined ? { llmCommand } : {};
    })(),
    llmStatus: () => (llmStatus ??= resolveLlmStatus({ config, env, ...(options.loadLlm !== undefined ? { loadLlm: options.loadLlm } : {}) })),
  };
  const deps: OperationDeps = {
    store,
    episodic: createEpisodicSource({ config, env, globalDir, logger, clock: systemClock }),
    clock: systemClock,
    ids: createIdGenerator(),
    logger,
    config,
    cliName: options.cliName ?? "cm",
    files: createNodeWorkspaceFiles(),
    runtimeReport,
    // Semantic search: nothing is loaded unless an operation finds it enabled in the config.
    embedder: createEmbedderLoader({ config, env, logger, ...embeddingLoaderOf(options) }),
    embeddingCache: createEmbeddingCache({ globalDir, clock: systemClock, logger }),
    ...(options.lexicalCache === false ? {} : { lexicalCache: createLexicalCache({ globalDir, logger, salt: options.version ?? "dev" }) }),
  };
  logger.debug(`globalDir=${globalDir} repoRoot=${repoRoot ?? "(none)"} storage=${config.storage.backend} playbook=${store.locations.globalPlaybook}`);
  let learning: Promise<LearningComponents> | null = null;
  return {
    deps,
    learning() {
      learning ??= createLearning({
        config,
        env,
        ledger: store.costs,
        clock: systemClock,
        logger,
        ...(options.loadLlm !== undefined ? { loadLlm: options.loadLlm } : {}),
      });
      return learning;
    },
    storage: {
      backend: config.storage.backend,
      dirs: storeDirs,
      envBackend: (storageFromEnv(env).storage?.backend as StorageBackend | undefined) ?? null,
      ...(options.loadSqliteStore !== undefined ? { loadSqlite: options.loadSqliteStore } : {}),
      ...(options.loadPostgresStore !== undefined ? { loadPostgres: options.loadPostgresStore } : {}),
    },
    close: opened.close,
    // The global playbook as the store keeps it (SQLite: the database).
    paths: { globalDir, globalPlaybook: store.locations.globalPlaybook, configPath: join(globalDir, "config.json"), repoRoot, repoDir },
    config,
    warnings,
    configProblems: problems,
  };
}
