import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, open, readFile, realpath, rename, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AppError } from "@cass-memory/core";
import { findGitRoot } from "../paths.js";
import { planAgentsMd } from "./agents-md.js";
import {
  clientConfigPath,
  clientSpec,
  MCP_SERVER_NAME,
  resolveScope,
  resolveTransport,
  type ClientSpec,
  type McpTransport,
  type ServerEntry,
  type SetupClient,
  type SetupScope,
} from "./clients.js";
import { planJsonConfig, type ConfigPlan, type PlanAction } from "./json-config.js";
import { planTomlConfig } from "./toml-config.js";

/**
 * `cm setup <client>`: writes the client's MCP server entry for cass-memory into its real
 * configuration file, merging with what is there. A file that exists and changes is backed up
 * first (`<file>.backup.<epoch-ms>`, same mode); writes are atomic (temp file + rename) and keep
 * the file's mode (new user-level files get 0600). Symlinked config files are written through to
 * their target. Everything is planned (and validated) before anything is written.
 */

type Env = Record<string, string | undefined>;

export interface SetupOptions {
  client: string;
  scope?: string | undefined;
  /** stdio server executable (default `cm-mcp`). */
  command?: string | undefined;
  /** Configure the Streamable HTTP transport at this URL instead of stdio. */
  http?: string | undefined;
  dryRun?: boolean | undefined;
  /** Also add the pointer block to the repository's AGENTS.md (CLAUDE.md for Claude Code when it exists). */
  agentsMd?: boolean | undefined;
  cwd?: string | undefined;
  env?: Env | undefined;
  platform?: NodeJS.Platform | undefined;
  /** Clock for backup names (epoch ms). */
  now?: (() => number) | undefined;
  /** Program name used in the AGENTS.md block. */
  cliName?: string | undefined;
}

export interface AgentsMdResult {
  path: string;
  action: PlanAction;
  /** Dry run only: the content that would be written. */
  content?: string;
}

export interface SetupResult {
  client: SetupClient;
  scope: SetupScope;
  path: string;
  action: PlanAction;
  /** The backup of the previous file, when one was made. */
  backup?: string;
  dryRun: boolean;
  transport: "stdio" | "http";
  /** The server entry cm manages under the client's server map, named `server`. */
  server: string;
  config: ServerEntry;
  /** Dry run only: the file content that would be written. */
  content?: string;
  agentsMd?: AgentsMdResult;
  notes: string[];
}

interface FileState {
  /** The path to write: the symlink's target when the config path is a symlink. */
  target: string;
  text: string | null;
  bytes: Buffer | null;
  mode: number | null;
}

function fsError(path: string, error: unknown, doing: string): AppError {
  const errno = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  const code = errno === "EACCES" || errno === "EPERM" || errno === "EROFS" ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED";
  return new AppError(code, `Failed to ${doing} ${path}: ${reason}`, {
    hint: `Check that ${dirname(path)} exists and that you may read and write it.`,
    details: { path, ...(typeof errno === "string" ? { errno } : {}) },
    cause: error,
  });
}

async function readState(path: string): Promise<FileState> {
  let target = path;
  try {
    target = await realpath(path);
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw fsError(path, error, "resolve");
    return { target: path, text: null, bytes: null, mode: null };
  }
  try {
    const st = await stat(target);
    if (!st.isFile()) {
      throw new AppError("CONFIG_INVALID", `${path} is not a regular file; cm will not overwrite it.`, { details: { path } });
    }
    const bytes = await readFile(target);
    const text = bytes.toString("utf8");
    if (!Buffer.from(text, "utf8").equals(bytes)) {
      throw new AppError("CONFIG_INVALID", `${path} is not valid UTF-8 text; cm will not overwrite it.`, {
        hint: "Fix or move the file, then re-run.",
        details: { path },
      });
    }
    return { target, text, bytes, mode: st.mode & 0o7777 };
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw fsError(path, error, "read");
  }
}

/** Writes `data` to a new file created exclusively (fails if it exists) with exactly `mode`. */
async function writeNew(path: string, data: string | Buffer, mode: number): Promise<void> {
  const handle = await open(path, "wx", mode);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(path, mode);
}

/** `<file>.backup.<epoch-ms>` (bumped by a millisecond while taken), a byte copy with the same mode. */
async function backupFile(state: FileState, now: () => number): Promise<string> {
  let stamp = now();
  for (let attempt = 0; attempt < 1000; attempt++, stamp++) {
    const path = `${state.target}.backup.${stamp}`;
    try {
      await writeNew(path, state.bytes!, state.mode!);
      return path;
    } catch (error) {
      if ((error as { code?: unknown }).code === "EEXIST") continue;
      throw fsError(path, error, "back up to");
    }
  }
  throw new AppError("FILE_WRITE_FAILED", `Could not find a free backup name for ${state.target}.`, { details: { path: state.target } });
}

class ChangedMeanwhile extends Error {}

/**
 * Atomic replace: temp file in the same directory, then rename. Right before the rename the file
 * is read again; if another program (Claude Code rewrites ~/.claude.json often) changed it since
 * it was planned on, nothing is written and ChangedMeanwhile is thrown so the caller re-plans.
 */
async function atomicReplace(state: FileState, content: string, newFileMode: number): Promise<void> {
  const target = state.target;
  const mode = state.mode ?? newFileMode;
  const tmp = `${target}.tmp.${randomBytes(8).toString("hex")}`;
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeNew(tmp, content, mode);
    const current = await readFile(target).catch((error: { code?: unknown }) => {
      if (error.code === "ENOENT") return null;
      throw error;
    });
    const unchanged = state.bytes === null ? current === null : current !== null && current.equals(state.bytes);
    if (!unchanged) throw new ChangedMeanwhile();
    await rename(tmp, target);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    if (error instanceof ChangedMeanwhile) throw error;
    throw fsError(target, error, "write");
  }
}

function planConfig(spec: ClientSpec, transport: McpTransport, text: string | null, path: string): ConfigPlan {
  return spec.format === "toml" ? planTomlConfig(spec, transport, text, path) : planJsonConfig(spec, transport, text, path);
}

/** The instruction file for `--agents-md`: CLAUDE.md for Claude Code when the repo has one, else AGENTS.md. */
export function agentsMdPath(client: SetupClient, repoRoot: string): string {
  if (client === "claude-code" && existsSync(join(repoRoot, "CLAUDE.md"))) return join(repoRoot, "CLAUDE.md");
  return join(repoRoot, "AGENTS.md");
}

const MAX_ATTEMPTS = 3;

export interface Applied {
  action: PlanAction;
  backup?: string;
}

/**
 * Reads, plans and writes one file, re-planning when the file changed between the read and the
 * rename (up to MAX_ATTEMPTS times).
 */
export async function applyFile(path: string, plan: (text: string | null) => { action: PlanAction; content: string }, options: { newFileMode: number; backup: boolean; now: () => number }): Promise<Applied> {
  for (let attempt = 1; ; attempt++) {
    const state = await readState(path);
    const planned = plan(state.text);
    if (planned.action === "unchanged") return { action: "unchanged" };
    const applied: Applied = { action: planned.action };
    try {
      if (options.backup && state.text !== null) applied.backup = await backupFile(state, options.now);
      await atomicReplace(state, planned.content, options.newFileMode);
      return applied;
    } catch (error) {
      if (!(error instanceof ChangedMeanwhile)) throw error;
      if (applied.backup !== undefined) await unlink(applied.backup).catch(() => undefined);
      if (attempt >= MAX_ATTEMPTS) {
        throw new AppError("FILE_WRITE_FAILED", `${path} kept changing while cm was updating it; it was left as it is.`, {
          hint: "Close the program that is rewriting the file (or wait a moment) and re-run.",
          details: { path },
          retryable: true,
        });
      }
    }
  }
}

export async function setupClient(options: SetupOptions): Promise<SetupResult> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const platform = options.platform ?? process.platform;
  const now = options.now ?? Date.now;
  const cliName = options.cliName ?? "cm";
  const dryRun = Boolean(options.dryRun);
  const spec = clientSpec(options.client);
  const scope = resolveScope(spec, options.scope);
  const transport = resolveTransport({ command: options.command, http: options.http, cwd, platform });
  const projectRoot = findGitRoot(cwd);
  const path = clientConfigPath(spec.client, scope, { env, platform, projectRoot });
  let agentsPath: string | null = null;
  if (options.agentsMd) {
    if (projectRoot === null) {
      throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
        hint: "--agents-md edits AGENTS.md at the repository root: cd into the repository, or drop --agents-md",
        details: { client: spec.client },
      });
    }
    agentsPath = agentsMdPath(spec.client, projectRoot);
  }

  // Plan everything first, so that a file cm must refuse stops the run before anything is written.
  const configPlan = (text: string | null) => planConfig(spec, transport, text, path);
  const agentsPlan = (text: string | null) => planAgentsMd(text, agentsPath!, cliName);
  const plan = configPlan((await readState(path)).text);
  const agents = agentsPath === null ? null : agentsPlan((await readState(agentsPath)).text);

  const result: SetupResult = {
    client: spec.client,
    scope,
    path,
    action: plan.action,
    dryRun,
    transport: transport.kind,
    server: MCP_SERVER_NAME,
    config: plan.entry,
    notes: spec.notes(scope, transport),
  };
  if (dryRun) {
    result.content = plan.content;
    if (agentsPath !== null && agents !== null) result.agentsMd = { path: agentsPath, action: agents.action, content: agents.content };
    return result;
  }
  const applied = await applyFile(path, configPlan, { newFileMode: scope === "user" ? 0o600 : 0o644, backup: true, now });
  result.action = applied.action;
  if (applied.backup !== undefined) result.backup = applied.backup;
  if (agentsPath !== null) {
    const agentsApplied = await applyFile(agentsPath, agentsPlan, { newFileMode: 0o644, backup: false, now });
    result.agentsMd = { path: agentsPath, action: agentsApplied.action };
  }
  return result;
}
