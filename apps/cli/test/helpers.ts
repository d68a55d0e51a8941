import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const CLI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BIN = join(CLI_DIR, "dist", "cm.js");

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run 'pnpm --filter cass-memory build' (after core, store-yaml, runtime) first.`);
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (throws when it is anything else). */
  json: () => any;
}

export interface RunOptions {
  home: string;
  cwd?: string;
  input?: string;
  env?: Record<string, string | undefined>;
}

function childEnv(options: RunOptions): NodeJS.ProcessEnv {
  // The user's own settings must not leak into tests; a test may still set any of them.
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: options.home, NO_COLOR: "1" };
  for (const key of ["CASS_MEMORY_HOME", "XDG_DATA_HOME", "CASS_MEMORY_VERBOSE", "CASS_CONTEXT_LOG", "CASS_PATH", "CASS_MEMORY_EPISODIC", "CASS_MEMORY_LLM", "CM_REFLECTOR_STUBS", "OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GOOGLE_GENERATIVE_AI_API_KEY", "OLLAMA_BASE_URL", "OLLAMA_HOST", "CM_LLM_TIMEOUT_MS", "CM_LLM_TOTAL_TIMEOUT_MS", "MCP_HTTP_TOKEN", "MCP_HTTP_UNSAFE_NO_TOKEN", "MCP_HTTP_HOST", "MCP_HTTP_PORT", "CASS_MEMORY_STORAGE", "CASS_MEMORY_STORAGE_PATH", "CM_EMBEDDING_API_KEY", "CM_EMBEDDING_MODEL_DIR", "CASS_MEMORY_DAEMON"]) delete env[key];
  Object.assign(env, options.env);
  for (const [k, v] of Object.entries(options.env ?? {})) if (v === undefined) delete env[k];
  return env;
}

function result(code: number | null, stdout: string, stderr: string): RunResult {
  return {
    code,
    stdout,
    stderr,
    json: () => {
      try {
        return JSON.parse(stdout);
      } catch {
        throw new Error(`stdout is not one JSON document:\n${stdout}\n--- stderr:\n${stderr}`);
      }
    },
  };
}

export function cm(args: string[], options: RunOptions): RunResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? options.home,
    env: childEnv(options),
    input: options.input ?? "",
    encoding: "utf8",
    timeout: 30_000,
  });
  return result(r.status, r.stdout, r.stderr);
}

export function cmAsync(args: string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? options.home, env: childEnv(options) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolvePromise(result(code, stdout, stderr)));
    child.stdin.end(options.input ?? "");
  });
}

export function tempHome(): { home: string; cleanup: () => void } {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "cm-cli-")));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export function gitInit(dir: string): void {
  const r = spawnSync("git", ["init", "-q", dir], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git init failed: ${r.stderr}`);
}
