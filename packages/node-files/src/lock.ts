import { randomBytes } from "node:crypto";
import { readFileSync, rmSync } from "node:fs";
import { mkdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AppError } from "@cass-memory/core";
import type { Logger } from "@cass-memory/core";

/**
 * Cross-process lock compatible with the original `cm` (reference §4.11): the lock is the directory
 * `<file>.lock.d`, created with an atomic `mkdir`, holding the files `pid` and `owner`. The original
 * and this implementation therefore exclude each other.
 */

export interface LockOptions {
  /** How long to keep trying before failing with LOCK_ACQUISITION_FAILED (default 10 000 ms). */
  timeoutMs?: number;
  /** A lock whose mtime is older than this and whose holder is not alive is removed (default 30 000 ms). */
  staleMs?: number;
  /** Interval of the heartbeat that touches the lock's mtime (default 10 000 ms). */
  heartbeatMs?: number;
  logger?: Logger;
}

export interface LockHandle {
  /** The guarded file. */
  readonly path: string;
  /** `<file>.lock.d`. */
  readonly lockDir: string;
  /** Random hex written to `<lockDir>/owner`. */
  readonly owner: string;
  /** Removes the lock directory if it is still ours. Idempotent. */
  release(): Promise<void>;
}

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
export const DEFAULT_LOCK_STALE_MS = 30_000;
export const LOCK_HEARTBEAT_MS = 10_000;
/**
 * A lock directory still without a pid this long after it was made was left by a process killed
 * between `mkdir` and writing its pid (which takes milliseconds): abandoned, not stale-after-30 s.
 */
export const UNCLAIMED_LOCK_GRACE_MS = 3_000;
const BACKOFF_START_MS = 10;
const BACKOFF_CAP_MS = 200;

export function lockDirFor(path: string): string {
  return `${path}.lock.d`;
}

/** Owners of locks held (or being acquired) by this process. */
const localOwners = new Set<string>();
/** Locks held by this process, for {@link releaseAllLocks}. */
const heldLocks = new Map<string, { lockDir: string; stop: () => void }>();
/**
 * In-process queue per lock directory: acquirers in the same process wait for each other here
 * instead of polling the directory. Only an optimisation; the `mkdir` is what excludes.
 */
const localTails = new Map<string, Promise<void>>();

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether a process exists (EPERM means it exists but belongs to someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errnoOf(error) !== "ESRCH";
  }
}

function parsePid(text: string | null): number | null {
  if (text === null) return null;
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

async function readText(path: string): Promise<string | null> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    return null;
  }
}

interface Verdict {
  kind: "abandoned" | "stale";
  owner: string | null;
  pid: number | null;
}

/** Identity of one lock directory instance: a directory removed and re-created gets a new one. */
async function dirIdentity(lockDir: string): Promise<{ id: string; mtimeMs: number } | "gone" | null> {
  try {
    const st = await stat(lockDir, { bigint: true });
    return { id: `${st.dev}:${st.ino}:${st.ctimeNs}`, mtimeMs: Number(st.mtimeMs) };
  } catch (error) {
    return errnoOf(error) === "ENOENT" ? "gone" : null;
  }
}

/**
 * Decides whether an existing lock directory may be removed. Its `pid` and `owner` are read
 * between two looks at the directory's identity (device, inode, ctime): when a holder released
 * the lock and another process created a new one meanwhile, the files could otherwise come from
 * two different locks — a dead pid from the old one, a live owner from the new one — and a live
 * lock would be judged abandoned. Then the answer is "gone" (look again).
 */
async function judge(lockDir: string, staleMs: number): Promise<Verdict | "gone" | null> {
  const before = await dirIdentity(lockDir);
  if (before === "gone" || before === null) return before;
  const pidText = await readText(join(lockDir, "pid"));
  const owner = await readText(join(lockDir, "owner"));
  const after = await dirIdentity(lockDir);
  if (after === "gone" || after === null) return after;
  if (after.id !== before.id) return "gone";
  const pid = parsePid(pidText);
  let alive = false;
  if (pid !== null) {
    if (pid === process.pid) {
      // Our pid but not one of our owners: left behind by an earlier process that had this pid.
      if (owner !== null && !localOwners.has(owner)) return { kind: "abandoned", owner, pid };
      alive = true;
    } else {
      alive = isProcessAlive(pid);
      if (!alive) return { kind: "abandoned", owner, pid };
    }
  }
  const age = Date.now() - after.mtimeMs;
  if (pidText === null && age > Math.min(staleMs, UNCLAIMED_LOCK_GRACE_MS)) return { kind: "abandoned", owner, pid };
  if (!alive && age > staleMs) return { kind: "stale", owner, pid };
  return null;
}

/**
 * Removes an abandoned/stale lock safely: the directory is first renamed to a unique name, then its
 * owner and pid are compared with the ones judged; only then is it deleted. If they differ, a fresh lock
 * was renamed by mistake and is put back.
 */
async function removeJudged(lockDir: string, verdict: Verdict, logger: Logger | undefined): Promise<void> {
  const aside = `${lockDir}.stale.${randomBytes(6).toString("hex")}`;
  try {
    await rename(lockDir, aside);
  } catch {
    return; // someone else removed or replaced it; just retry
  }
  const ownerNow = await readText(join(aside, "owner"));
  const pidNow = parsePid(await readText(join(aside, "pid")));
  if (ownerNow === verdict.owner && pidNow === verdict.pid) {
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
    logger?.debug(`Removed ${verdict.kind} lock ${lockDir}${verdict.pid !== null ? ` (pid ${verdict.pid})` : ""}`);
    return;
  }
  try {
    await rename(aside, lockDir);
  } catch {
    logger?.warn(`Could not restore lock ${lockDir} after a stale check; removing the displaced copy.`);
    await rm(aside, { recursive: true, force: true }).catch(() => undefined);
  }
}

function timeoutError(path: string, lockDir: string, elapsed: number, holderPid: number | null): AppError {
  return new AppError("LOCK_ACQUISITION_FAILED", `Could not acquire lock for ${path} after ${elapsed} ms`, {
    hint:
      `Another cm process${holderPid !== null ? ` (pid ${holderPid})` : ""} holds ${lockDir}: wait and retry. ` +
      `If no cm is running, remove that directory.`,
    details: { path, lockDir, elapsedMs: elapsed, ...(holderPid !== null ? { holderPid } : {}) },
    retryable: true,
  });
}

function fsError(path: string, error: unknown): AppError {
  const errno = errnoOf(error);
  const permission = errno === "EACCES" || errno === "EPERM" || errno === "EROFS";
  return new AppError(permission ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED", `Could not create lock for ${path}: ${error instanceof Error ? error.message : String(error)}`, {
    hint: `Check that ${dirname(path)} is writable.`,
    details: { path, ...(errno ? { errno } : {}) },
    cause: error,
  });
}

async function writeWhole(path: string, text: string): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  await writeFile(temp, text);
  await rename(temp, path);
}

/** Waits for earlier acquirers of the same lock in this process; returns the function that lets the next one go. */
async function enterLocalQueue(lockDir: string, deadline: number): Promise<() => void> {
  const previous = localTails.get(lockDir) ?? Promise.resolve();
  let leave!: () => void;
  const mine = new Promise<void>((resolve) => {
    leave = resolve;
  });
  const tail = previous.then(() => mine);
  localTails.set(lockDir, tail);
  void tail.then(() => {
    if (localTails.get(lockDir) === tail) localTails.delete(lockDir);
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    previous,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    }),
  ]);
  clearTimeout(timer);
  return leave;
}

/**
 * Acquires the cross-process lock of `path`. Retries with jittered exponential backoff (10 ms …
 * 200 ms) until `timeoutMs`, removing abandoned locks (holder pid dead) and stale ones (mtime older
 * than `staleMs` and holder not alive or unknown) on the way. Throws LOCK_ACQUISITION_FAILED.
 */
export async function acquireLock(path: string, options: LockOptions = {}): Promise<LockHandle> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const staleMs = options.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const heartbeatMs = options.heartbeatMs ?? LOCK_HEARTBEAT_MS;
  const logger = options.logger;
  const lockDir = lockDirFor(path);
  const started = Date.now();
  const deadline = started + timeoutMs;
  const owner = randomBytes(16).toString("hex");
  const leaveLocal = await enterLocalQueue(lockDir, deadline);
  localOwners.add(owner);
  let attempt = 0;
  try {
    for (;;) {
      try {
        await mkdir(lockDir);
      } catch (error) {
        const errno = errnoOf(error);
        if (errno === "ENOENT") {
          await mkdir(dirname(lockDir), { recursive: true }).catch((e: unknown) => {
            throw fsError(path, e);
          });
          continue;
        }
        if (errno !== "EEXIST") throw fsError(path, error);
        const verdict = await judge(lockDir, staleMs);
        if (verdict === "gone") continue;
        if (verdict !== null) {
          await removeJudged(lockDir, verdict, logger);
          continue;
        }
        const now = Date.now();
        if (now >= deadline) {
          throw timeoutError(path, lockDir, now - started, parsePid(await readText(join(lockDir, "pid"))));
        }
        const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_START_MS * 1.5 ** attempt);
        attempt += 1;
        const delay = ceiling / 2 + Math.random() * (ceiling / 2);
        await sleep(Math.min(delay, Math.max(1, deadline - now)));
        continue;
      }
      try {
        // Each file appears whole (written aside, then renamed), owner before pid: a reader that
        // sees a pid never sees a truncated one, nor a pid without its owner.
        await writeWhole(join(lockDir, "owner"), owner);
        await writeWhole(join(lockDir, "pid"), String(process.pid));
        break;
      } catch (error) {
        // The directory was taken away between mkdir and the writes (stale removal): try again.
        if (errnoOf(error) === "ENOENT") continue;
        await rm(lockDir, { recursive: true, force: true }).catch(() => undefined);
        throw fsError(path, error);
      }
    }
  } catch (error) {
    localOwners.delete(owner);
    leaveLocal();
    throw error;
  }

  const heartbeat = setInterval(() => {
    const now = new Date();
    utimes(lockDir, now, now).catch(() => undefined);
  }, heartbeatMs);
  heartbeat.unref();
  let released = false;
  const stop = (): void => {
    clearInterval(heartbeat);
    localOwners.delete(owner);
    heldLocks.delete(owner);
  };
  heldLocks.set(owner, { lockDir, stop });

  return {
    path,
    lockDir,
    owner,
    async release(): Promise<void> {
      if (released) return;
      released = true;
      try {
        const current = await readText(join(lockDir, "owner"));
        if (current === owner) {
          await rm(lockDir, { recursive: true, force: true });
        } else {
          logger?.warn(`Lock ${lockDir} was no longer ours at release (owner ${current ?? "missing"}); left in place.`);
        }
      } catch (error) {
        logger?.warn(`Could not release lock ${lockDir}: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        stop();
        leaveLocal();
      }
    },
  };
}

/** Runs `fn` while holding the lock of `path`; the lock is released whatever happens. */
export async function withLock<T>(path: string, fn: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const handle = await acquireLock(path, options);
  try {
    return await fn();
  } finally {
    await handle.release();
  }
}

/**
 * Synchronously releases every lock this process holds (for SIGINT/SIGTERM/exit handlers). Only
 * directories whose `owner` is still ours are removed. Returns the number released.
 */
export function releaseAllLocks(): number {
  let count = 0;
  for (const [owner, { lockDir, stop }] of [...heldLocks]) {
    try {
      if (readFileSync(join(lockDir, "owner"), "utf8").trim() === owner) {
        rmSync(lockDir, { recursive: true, force: true });
        count += 1;
      }
    } catch {
      // already gone
    }
    stop();
  }
  return count;
}

/** Names a named lock may have: a file name, no path separators. */
const LOCK_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Runs `fn` holding the named lock `<dir>/<name>.lock.d` (e.g. one reflection per processed log:
 * `reflections/<log>.processed.log.orchestrator`, the name the original cm uses too). `waitMs`
 * overrides the wait; a failure to take the lock is LOCK_ACQUISITION_FAILED naming the lock in
 * `details.lock`; errors of `fn` pass through untouched.
 */
export async function withNamedLock<T>(dir: string, name: string, fn: () => Promise<T>, options: LockOptions & { waitMs?: number } = {}): Promise<T> {
  if (!LOCK_NAME.test(name)) throw new AppError("INTERNAL_ERROR", `Invalid lock name: ${name}`);
  const { waitMs, ...lockOptions } = options;
  let handle: LockHandle;
  try {
    handle = await acquireLock(join(dir, name), { ...lockOptions, ...(waitMs !== undefined ? { timeoutMs: Math.max(0, waitMs) } : {}) });
  } catch (error) {
    if (error instanceof AppError && error.code === "LOCK_ACQUISITION_FAILED") {
      throw new AppError("LOCK_ACQUISITION_FAILED", `Another cm process holds the "${name}" lock: ${error.message}`, {
        ...(error.hint !== undefined ? { hint: error.hint } : {}),
        details: { ...(error.details as Record<string, unknown> | undefined), lock: name },
        retryable: true,
        cause: error,
      });
    }
    throw error;
  }
  try {
    return await fn();
  } finally {
    await handle.release();
  }
}
