import { join } from "node:path";
import { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource, type Config, type OperationDeps } from "@cass-memory/core";
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
}

/**
 * The Node composition root: resolves the directories, loads the configuration cascade and wires
 * the adapters (YAML store, episodic source, clock, ids, stderr logger) into `OperationDeps`.
 * Throws AppError `CONFIG_INVALID` when the configuration is invalid.
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const globalDir = resolveGlobalDir(env);
  const repoRoot = findGitRoot(cwd);
  const repoDir = repoRoot !== null ? join(repoRoot, ".cass") : null;

  const write = options.stderr;
  const { config, warnings } = loadConfig({ globalDir, repoRoot, env });
  const logger = createStderrLogger({ verbose: Boolean(options.verbose) || config.verbose, ...(write ? { write } : {}) });
  for (const warning of warnings) logger.warn(warning);

  const store = createYamlStore({ globalDir, globalPlaybookPath: config.playbookPath, repoDir, logger });
  const deps: OperationDeps = {
    store,
    episodic: createNullEpisodicSource(CASS_NOT_FOUND_DEGRADED),
    clock: systemClock,
    ids: createIdGenerator(),
    logger,
    config,
    cliName: options.cliName ?? "cm",
    files: createNodeWorkspaceFiles(),
  };
  logger.debug(`globalDir=${globalDir} repoRoot=${repoRoot ?? "(none)"} playbook=${config.playbookPath}`);
  return {
    deps,
    paths: { globalDir, globalPlaybook: config.playbookPath, configPath: join(globalDir, "config.json"), repoRoot, repoDir },
    config,
    warnings,
  };
}
