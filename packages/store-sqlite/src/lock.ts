import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AppError } from "@cass-memory/core";
import type { Logger } from "@cass-memory/core";

/**
 * Directory locks for what lives outside the database: `config.json` and the named `exclusive`
 * locks (`<globalDir>/reflections/<name>.lock.d`). The format is the original cm's (reference
 * §4.11: an atomic `mkdir <file>.lock.d` holding the files `pid` and `owner`), so this store, the
 * YAML store and the original exclude each other — in particular a reflection run, which locks
 * `<log>.processed.log.orchestrator`, never overlaps one started by another implementation.
 */

export interface DirLockOptions {
  /** Give up after this long with LOCK_ACQUISITION_FAILED (default 10 000 ms). */
  timeoutMs?: number;
  /** A lock older than this whose holder is not alive is taken over (default 30 000 ms). */
  staleMs?: number;
  /** Interval of the heartbeat that touches the lock directory (default 10 000 ms). */
  heartbeatMs?: number;
  logger?: Logger;
}

export interface DirLock {
  readonly lockDir: string;
  release(): Promise<void>;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
export const DEFAULT_LOCK_STALE_MS = 30_000;
const HEARTBEAT_MS = 10_000;

/** Owner tokens of the locks this process holds or is acquiring. */
const ownTokens = new Set<string>();
/** Per lock directory, the tail of this process's queue of acquirers (they wait here, not on the disk). */
const queues = new Map<string, Promise<void>>();

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** True when the process exists (EPERM: it exists but belongs to another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) !== "ESRCH";
  }
}

async function readTrimmed(path: string): Promise<string | null> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    return null;
  }
}

function pidOf(text: string | null): number | null {
  const pid = text === null ? NaN : Number.parseInt(text, 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** The identity of this lock directory instance (a re-created directory has another). */
async function identity(lockDir: string): Promise<{ key: string; mtimeMs: number } | "gone" | null> {
  try {
    const info = await stat(lockDir, { bigint: true });
    return { key: `${info.dev}:${info.ino}:${info.ctimeNs}`, mtimeMs: Number(info.mtimeMs) };
  } catch (error) {
    return errnoOf(error) === "ENOENT" ? "gone" : null;
  }
}

interface Holder {
  owner: string | null;
  pid: number | null;
}

/**
 * Whether the existing lock may be taken over: its holder's pid is dead (or is our own pid with a
 * token we do not know: a previous process with the same pid), or it is older than `staleMs`
 * without a live holder. The files are read between two looks at the directory's identity, so the
 * pid and the owner cannot come from two different holders.
 */
async function takeable(lockDir: string, staleMs: number): Promise<Holder | "gone" | null> {
  const before = await identity(lockDir);
  if (before === "gone" || before === null) return before;
  const pidText = await readTrimmed(join(lockDir, "pid"));
  const owner = await readTrimmed(join(lockDir, "owner"));
  const after = await identity(lockDir);
  if (after === "gone" || after === null) return after;
  if (after.key !== before.key) return "gone";
  const pid = pidOf(pidText);
  if (pid !== null) {
    if (pid === process.pid) {
      if (owner !== null && !ownTokens.has(owner)) return { owner, pid };
      return null;
    }
    if (!processAlive(pid)) return { owner, pid };
    return null;
  }
  return Date.now() - after.mtimeMs > staleMs ? { owner, pid } : null;
}

/** Removes a lock judged takeable: renamed aside first, deleted only if it is still the one judged. */
async function takeOver(lockDir: string, holder: Holder, logger: Logger | undefined): Promise<void> {
  const aside = `${lockDir}.stale.${randomBytes(6).toString("hex")}`;
  try {
    await rename(lockDir, aside);
  } catch {
    return;
  }
  const owner = await readTrimmed(join(aside, "owner"));
  const pid = pidOf(await readTrimmed(join(aside, "pid")));
  if (owner === holder.owner && pid === holder.pid) {
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
    logger?.debug(`Took over abandoned lock ${lockDir}${pid !== null ? ` (pid ${pid})` : ""}`);
    return;
  }
  // A fresh lock was moved by mistake: put it back (or drop the copy if another one appeared).
  await rename(aside, lockDir).catch(async () => {
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  });
}

function lockError(path: string, error: unknown): AppError {
  const errno = errnoOf(error);
  const denied = errno === "EACCES" || errno === "EPERM" || errno === "EROFS";
  return new AppError(denied ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED", `Could not create lock for ${path}: ${error instanceof Error ? error.message : String(error)}`, {
    hint: `Check that ${dirname(path)} is writable.`,
    details: { path, ...(errno !== undefined ? { errno } : {}) },
    cause: error,
  });
}

async function writeAside(path: string, text: string): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, text);
  await rename(temp, path);
}

/** Joins this process's queue for `lockDir`; resolves when the previous acquirer is done (or at the deadline). */
async function joinQueue(lockDir: string, deadline: number): Promise<() => void> {
  const previous = queues.get(lockDir) ?? Promise.resolve();
  let leave!: () => void;
  const done = new Promise<void>((resolve) => (leave = resolve));
  const tail = previous.then(() => done);
  queues.set(lockDir, tail);
  void tail.then(() => {
    if (queues.get(lockDir) === tail) queues.delete(lockDir);
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([previous, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  return leave;
}

/**
 * Takes the lock `<path>.lock.d`, retrying with jittered backoff (10 → 200 ms) until `timeoutMs`;
 * throws LOCK_ACQUISITION_FAILED (retryable, `details.path`, `details.lockDir`).
 */
export async function acquireDirLock(path: string, options: DirLockOptions = {}): Promise<DirLock> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const lockDir = `${path}.lock.d`;
  const started = Date.now();
  const deadline = started + timeoutMs;
  const owner = randomBytes(16).toString("hex");
  const leaveQueue = await joinQueue(lockDir, deadline);
  ownTokens.add(owner);
  try {
    for (let attempt = 0; ; ) {
      try {
        await mkdir(lockDir);
      } catch (error) {
        const errno = errnoOf(error);
        if (errno === "ENOENT") {
          await mkdir(dirname(lockDir), { recursive: true }).catch((e: unknown) => {
            throw lockError(path, e);
          });
          continue;
        }
        if (errno !== "EEXIST") throw lockError(path, error);
        const verdict = await takeable(lockDir, staleMs);
        if (verdict === "gone") continue;
        if (verdict !== null) {
          await takeOver(lockDir, verdict, options.logger);
          continue;
        }
        const now = Date.now();
        if (now >= deadline) {
          const holderPid = pidOf(await readTrimmed(join(lockDir, "pid")));
          throw new AppError("LOCK_ACQUISITION_FAILED", `Could not acquire lock for ${path} after ${now - started} ms`, {
            hint: `Another cm process${holderPid !== null ? ` (pid ${holderPid})` : ""} holds ${lockDir}: wait and retry. If no cm is running, remove that directory.`,
            details: { path, lockDir, elapsedMs: now - started, ...(holderPid !== null ? { holderPid } : {}) },
            retryable: true,
          });
        }
        const ceiling = Math.min(200, 10 * 1.5 ** attempt);
        attempt += 1;
        await sleep(Math.min(ceiling / 2 + Math.random() * (ceiling / 2), Math.max(1, deadline - now)));
        continue;
      }
      try {
        // owner first, then pid, each appearing whole: a reader that sees a pid also sees its owner.
        await writeAside(join(lockDir, "owner"), owner);
        await writeAside(join(lockDir, "pid"), String(process.pid));
        break;
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue; // taken away by a stale check in between
        await rm(lockDir, { recursive: true, force: true }).catch(() => undefined);
        throw lockError(path, error);
      }
    }
  } catch (error) {
    ownTokens.delete(owner);
    leaveQueue();
    throw error;
  }
  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockDir, now, now).catch(() => undefined);
  }, options.heartbeatMs ?? HEARTBEAT_MS);
  heartbeat.unref();
  let released = false;
  return {
    lockDir,
    async release() {
      if (released) return;
      released = true;
      clearInterval(heartbeat);
      try {
        if ((await readTrimmed(join(lockDir, "owner"))) === owner) await rm(lockDir, { recursive: true, force: true });
        else options.logger?.warn(`Lock ${lockDir} was no longer ours at release; left in place.`);
      } catch (error) {
        options.logger?.warn(`Could not release lock ${lockDir}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        ownTokens.delete(owner);
        leaveQueue();
      }
    },
  };
}

export async function withDirLock<T>(path: string, fn: () => T | Promise<T>, options: DirLockOptions = {}): Promise<T> {
  const lock = await acquireDirLock(path, options);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
