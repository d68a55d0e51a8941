/**
 * Where the resident process (`cm daemon`) listens, and whether a socket there may be trusted.
 * Used by the `cm` loader (bin.ts) on every `cm context`, `cm mark` and `cm hook`, so it stays small and
 * touches the disk only with two or three stat calls.
 *
 * The socket is `<cache>/cass-memory/daemon-<key>.sock`, where `<cache>` is XDG_CACHE_HOME or
 * ~/.cache (as for the code cache) and `<key>` names the exact build: the version and the size and
 * time of cm-main.cjs. A `cm` of another build never talks to this daemon; an old daemon is left
 * to exit when idle.
 */
const { closeSync, lstatSync, mkdirSync, openSync, statSync, utimesSync } = process.getBuiltinModule("node:fs");
const { homedir } = process.getBuiltinModule("node:os");
const { join } = process.getBuiltinModule("node:path");

/** Unix socket paths longer than this (sun_path is 108 bytes on Linux, 104 on macOS) are not used. */
const MAX_SOCKET_PATH = 100;

export interface DaemonLocation {
  dir: string;
  socket: string;
  key: string;
}

/** The daemon's socket for the build in `distDir`, or null where there is none (Windows, no build, path too long, disabled). */
export function daemonLocation(distDir: string, version: string, env: NodeJS.ProcessEnv = process.env): DaemonLocation | null {
  if (process.platform === "win32" || env.CASS_MEMORY_DAEMON === "0") return null;
  let key: string;
  try {
    const stat = statSync(join(distDir, "cm-main.cjs"));
    key = `${version}-${stat.size}-${Math.trunc(stat.mtimeMs)}`.replace(/[^A-Za-z0-9.-]/g, "_");
  } catch {
    return null;
  }
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  const dir = join(base, "cass-memory");
  const socket = join(dir, `daemon-${key}.sock`);
  return socket.length <= MAX_SOCKET_PATH ? { dir, socket, key } : null;
}

/**
 * Why the directory cannot hold this user's daemon socket, or null when it can: it must be a real
 * directory (not a link) owned by this user that no one else may write to, or another user could
 * put a socket of theirs in its place.
 */
export function unsafeDirectory(dir: string): string | null {
  try {
    const info = lstatSync(dir);
    if (!info.isDirectory()) return `${dir} is not a directory`;
    if (typeof process.getuid === "function" && info.uid !== process.getuid()) return `${dir} belongs to another user`;
    if ((info.mode & 0o022) !== 0) return `${dir} is writable by other users (mode ${(info.mode & 0o777).toString(8)})`;
    return null;
  } catch (error) {
    return `${dir}: ${(error as { code?: string }).code ?? String(error)}`;
  }
}

/** True when `socket` is a socket owned by this user in a directory only this user can change. */
export function trustedSocket(location: DaemonLocation): boolean {
  try {
    const info = lstatSync(location.socket);
    if (!info.isSocket()) return false;
    if (typeof process.getuid === "function" && info.uid !== process.getuid()) return false;
  } catch {
    return false;
  }
  return unsafeDirectory(location.dir) === null;
}

/** The marker a starting daemon leaves while it comes up (removed once it listens). */
export function startingMarker(location: DaemonLocation): string {
  return `${location.socket}.starting`;
}

/** A start younger than this is left to finish instead of starting another daemon. */
const STARTING_GRACE_MS = 10_000;

/**
 * Starts `cm daemon run` (with `args`) detached, unless a start is already under way or the
 * directory is not private; returns the child, or null when none was started. Its stderr goes to
 * daemon.log next to the socket. Never throws: without a daemon every command still runs, in its
 * own process.
 */
export function startDaemonInBackground(location: DaemonLocation, cmScript: string, args: readonly string[] = []): import("node:child_process").ChildProcess | null {
  try {
    mkdirSync(location.dir, { recursive: true, mode: 0o700 });
    if (unsafeDirectory(location.dir) !== null) return null;
    const marker = startingMarker(location);
    try {
      closeSync(openSync(marker, "wx", 0o600));
    } catch {
      if (Date.now() - statSync(marker).mtimeMs < STARTING_GRACE_MS) return null;
      const now = new Date();
      utimesSync(marker, now, now);
    }
    const log = openSync(daemonLogPath(location), "w", 0o600);
    try {
      const { spawn } = process.getBuiltinModule("node:child_process");
      const child = spawn(process.execPath, [cmScript, "daemon", "run", ...args], { detached: true, stdio: ["ignore", "ignore", log], cwd: "/" });
      child.unref();
      return child;
    } finally {
      closeSync(log);
    }
  } catch {
    // Starting the daemon is only an optimisation.
    return null;
  }
}

/** The daemon's log (its stderr), next to the socket. */
export function daemonLogPath(location: DaemonLocation): string {
  return join(location.dir, "daemon.log");
}
