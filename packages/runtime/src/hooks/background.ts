import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { appendFileSync, closeSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { extname, isAbsolute, join, sep } from "node:path";
import { homeDir, resolveGlobalDir } from "../paths.js";

/**
 * The I/O side of the session-end hook: check the transcript path a client sent, start
 * `cm reflect --session <path> --json` detached (own process group, output to files, unref'd) so
 * the client is never delayed, keep one reflection per transcript at a time, and log what happened.
 *
 * Files, all under `<global dir>/hooks/`:
 * - `hook-log.jsonl`: one line per thing a hook did or refused (rotated to `.1` at 1 MiB);
 * - `reflect/<stamp>-<hash>.json`: the reflect envelope of one run (its stderr in `.stderr.log`),
 *   the newest KEEP_RUNS runs kept;
 * - `reflect/<hash>.pid`: the pid of the reflection running for a transcript.
 */

type Env = Record<string, string | undefined>;

export const HOOK_LOG_MAX_BYTES = 1024 * 1024;
export const KEEP_RUNS = 40;
/** Transcripts larger than this are not reflected on by a hook (reflect itself reads sessions bounded). */
export const TRANSCRIPT_MAX_BYTES = 256 * 1024 * 1024;
const TRANSCRIPT_EXTENSIONS = new Set([".jsonl", ".json"]);

export function hooksDir(env: Env = process.env): string {
  return join(resolveGlobalDir(env), "hooks");
}

/** Appends one JSON line to the hook log; never throws (a hook must not fail on its log). */
export function appendHookLog(entry: Record<string, unknown>, env: Env = process.env): void {
  try {
    const dir = hooksDir(env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, "hook-log.jsonl");
    try {
      if (statSync(file).size > HOOK_LOG_MAX_BYTES) renameSync(file, `${file}.1`);
    } catch {
      // no log yet
    }
    appendFileSync(file, `${JSON.stringify({ ts: new Date().toISOString(), ...entry })}\n`, { mode: 0o600 });
  } catch {
    // best effort
  }
}

export type TranscriptCheck = { ok: true; path: string } | { ok: false; reason: string };

function isUnder(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

/**
 * A transcript path from a hook payload is only followed when it is absolute, resolves (symlinks
 * included) to a regular `.jsonl`/`.json` file inside the user's home directory, and is at most
 * TRANSCRIPT_MAX_BYTES. Clients keep their transcripts there (~/.claude/projects, ~/.gemini/tmp);
 * anything else in a payload is not read.
 */
export function checkTranscriptPath(raw: string, env: Env = process.env): TranscriptCheck {
  if (!isAbsolute(raw)) return { ok: false, reason: "transcript_path is not absolute" };
  if (!TRANSCRIPT_EXTENSIONS.has(extname(raw).toLowerCase())) return { ok: false, reason: "transcript_path is not a .jsonl or .json file" };
  let real: string;
  let home: string;
  try {
    real = realpathSync(raw);
  } catch {
    return { ok: false, reason: "transcript_path does not exist" };
  }
  try {
    home = realpathSync(homeDir(env));
  } catch {
    return { ok: false, reason: "the home directory cannot be resolved" };
  }
  if (!isUnder(real, home)) return { ok: false, reason: "transcript_path is outside the home directory" };
  const st = statSync(real);
  if (!st.isFile()) return { ok: false, reason: "transcript_path is not a regular file" };
  if (st.size > TRANSCRIPT_MAX_BYTES) return { ok: false, reason: `transcript is larger than ${TRANSCRIPT_MAX_BYTES} bytes` };
  return { ok: true, path: real };
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/** Deletes the oldest run files beyond KEEP_RUNS (by name: they start with a sortable stamp). */
function pruneRuns(dir: string): void {
  try {
    const runs = readdirSync(dir)
      .filter((f) => f.endsWith(".json"))
      .sort();
    for (const file of runs.slice(0, Math.max(0, runs.length - KEEP_RUNS))) {
      for (const f of [file, file.replace(/\.json$/, ".stderr.log")]) {
        try {
          unlinkSync(join(dir, f));
        } catch {
          // already gone
        }
      }
    }
  } catch {
    // nothing to prune
  }
}

export interface SpawnReflectOptions {
  /** The node executable and the cm script to run (`process.execPath`, the CLI's own path). */
  node: string;
  cmScript: string;
  transcript: string;
  client: string;
  cwd?: string | undefined;
  env?: Env;
}

export type SpawnReflectResult =
  | { started: true; pid: number; output: string; stderr: string }
  | { started: false; reason: string; pid?: number };

/**
 * Starts `cm reflect --session <transcript> --json` in the background and returns at once. A
 * reflection already running for the same transcript (its pid file names a live process) is not
 * started twice.
 */
export function spawnReflect(options: SpawnReflectOptions): SpawnReflectResult {
  const env = options.env ?? process.env;
  const dir = join(hooksDir(env), "reflect");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hash = createHash("sha256").update(options.transcript).digest("hex").slice(0, 16);
  const pidFile = join(dir, `${hash}.pid`);
  try {
    const pid = Number.parseInt(readFileSync(pidFile, "utf8").trim(), 10);
    if (pidAlive(pid)) return { started: false, reason: "a reflection of this transcript is already running", pid };
  } catch {
    // no pid file: nothing running
  }
  pruneRuns(dir);
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const output = join(dir, `${stamp}-${hash}.json`);
  const stderr = join(dir, `${stamp}-${hash}.stderr.log`);
  const out = openSync(output, "a", 0o600);
  const err = openSync(stderr, "a", 0o600);
  try {
    const child = spawn(options.node, [options.cmScript, "reflect", "--session", options.transcript, "--json"], {
      cwd: options.cwd,
      env: { ...env, CASS_MEMORY_HOOK_CHILD: "1" } as NodeJS.ProcessEnv,
      detached: true,
      stdio: ["ignore", out, err],
      windowsHide: true,
    });
    const pid = child.pid;
    if (pid === undefined) return { started: false, reason: "the reflect process could not be started" };
    // A spawn error (ENOENT) arrives asynchronously; it only means this run produced no output.
    child.on("error", () => undefined);
    child.unref();
    writeFileSync(pidFile, String(pid), { mode: 0o600 });
    return { started: true, pid, output, stderr };
  } finally {
    closeSync(out);
    closeSync(err);
  }
}

/**
 * After a prompt hook ran out of time: start `cm context "warm up" --no-history --json` detached
 * (output discarded) so the caches a cold ranking builds — the playbook parse cache, the rules'
 * analyses and the saved index, which do not depend on the task — exist for the next prompt. A
 * killed hook might otherwise never get far enough to write them. One warm-up at a time (pid
 * file); returns the pid, or null when one is running or it could not start.
 */
export function spawnWarmup(options: { node: string; cmScript: string; cwd?: string | undefined; env?: Env }): number | null {
  const env = options.env ?? process.env;
  try {
    const dir = hooksDir(env);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const pidFile = join(dir, "warmup.pid");
    try {
      const pid = Number.parseInt(readFileSync(pidFile, "utf8").trim(), 10);
      if (pidAlive(pid)) return null;
    } catch {
      // none running
    }
    const child = spawn(options.node, [options.cmScript, "context", "warm up", "--no-history", "--json"], {
      cwd: options.cwd,
      env: { ...env, CASS_MEMORY_HOOK_CHILD: "1" } as NodeJS.ProcessEnv,
      detached: true,
      stdio: "ignore",
      windowsHide: true,
    });
    child.on("error", () => undefined);
    child.unref();
    if (child.pid === undefined) return null;
    writeFileSync(pidFile, String(child.pid), { mode: 0o600 });
    return child.pid;
  } catch {
    return null;
  }
}
