import { join } from "node:path";
import { type Config, type LearningComponents, type LlmStatus, type OperationDeps, type RuntimeReport } from "@cass-memory/core";
import { createEpisodicSource } from "./episodic.js";
import { createLearning, resolveLlmStatus, type LearningWiring } from "./learning.js";
import { createYamlStore } from "@cass-memory/store-yaml";
import { loadConfig } from "./config.js";
import { createIdGenerator, createNodeWorkspaceFiles, createStderrLogger, systemClock } from "./node-ports.js";
import { findGitRoot, resolveGlobalDir } from "./paths.js";

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
  /** The program's version, reported by `cm doctor`. */
  version?: string;
  /** Loads the LLM layer for `learning()` (default: a dynamic import of `@cass-memory/llm`). */
  loadLlm?: LearningWiring["loadLlm"];
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
 * the adapters (YAML store, episodic source, clock, ids, stderr logger) into `OperationDeps`.
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
  const { config, warnings, problems } = loadConfig({ globalDir, repoRoot, env, tolerateInvalid: Boolean(options.tolerateInvalidConfig) });
  const logger = createStderrLogger({ verbose: Boolean(options.verbose) || config.verbose, ...(write ? { write } : {}) });
  for (const warning of warnings) logger.warn(warning);

  const store = createYamlStore({
    globalDir,
    globalPlaybookPath: config.playbookPath,
    diaryDir: config.diaryDir,
    repoDir,
    logger,
    ...(options.parseCache === false ? { parseCache: false as const } : {}),
    ...(options.memoizeReads ? { memoizeReads: true } : {}),
  });
  let llmStatus: Promise<LlmStatus> | null = null;
  const runtimeReport: RuntimeReport = {
    ...(options.version !== undefined ? { version: options.version } : {}),
    configProblems: [...problems],
    recheckConfig: async () => loadConfig({ globalDir, repoRoot, env, tolerateInvalid: true }).problems,
    llmCredentials: visibleLlmCredentials(env),
    llmDisabled: env.CASS_MEMORY_LLM?.trim().toLowerCase() === "none",
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
  };
  logger.debug(`globalDir=${globalDir} repoRoot=${repoRoot ?? "(none)"} playbook=${config.playbookPath}`);
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
    paths: { globalDir, globalPlaybook: config.playbookPath, configPath: join(globalDir, "config.json"), repoRoot, repoDir },
    config,
    warnings,
    configProblems: problems,
  };
}
