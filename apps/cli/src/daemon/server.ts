/**
 * The resident process (`cm daemon run`): listens on a user-only Unix socket and runs the `cm
 * context`, `cm mark` and `cm hook` command lines that `cm` hands it, in this process, one at a
 * time, with the caller's arguments, environment, umask, working directory, terminal and stdin, so
 * that a command costs what the work costs instead of Node's start-up plus loading the CLI. Playbooks stay parsed
 * in memory while their files are unchanged (RuntimeOptions.resident); everything else — the
 * configuration, the store, the runtime — is built afresh for each command, as in its own process.
 *
 * A second command arriving while one runs is refused (`busy`) and runs in its caller's process: a
 * slow command never holds up another. A `cm hook` past its time limit lets its caller go
 * (CommandIo.release) and finishes in the background, the daemon staying busy with it. The daemon
 * exits after `idleMs` without a command, on `cm daemon stop`, when its socket or its code is
 * removed or replaced, and on SIGTERM/SIGINT (at once).
 */
import { chmodSync, lstatSync, mkdirSync, statSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { WriteStream } from "node:tty";
import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import type { CliContext } from "../cli-context.js";
import { setCommandIo, setOutputRedactor } from "../output.js";
import { runCli } from "../run-cli.js";
import { VERSION } from "../version.js";
import { encodeFrame, encodeOutput, frameReader, JSON_FRAME, parseFrame, type DaemonFrame, type RunRequest } from "./frames.js";
import { startingMarker, unsafeDirectory, type DaemonLocation } from "./socket.js";

/** The largest request frame (its environment and arguments) accepted. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

export interface DaemonOptions {
  location: DaemonLocation;
  idleMs: number;
  /** The program for a command line (`cm context`, `cm mark` or `cm hook` alone, as the loader runs them); null for any other. */
  programFor(args: readonly string[]): ((ctx: CliContext) => Command) | null;
  /** Diagnostics (the daemon's log). */
  log(line: string): void;
  /** The bundle this daemon runs: when it is removed or replaced (reinstalled), the daemon exits. */
  codeFile: string;
}

/** Listens and serves until stopped; resolves when the daemon has shut down. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const { location, log } = options;
  mkdirSync(location.dir, { recursive: true, mode: 0o700 });
  const unsafe = unsafeDirectory(location.dir);
  if (unsafe !== null) {
    throw new AppError("INVALID_INPUT", `The daemon cannot listen here: ${unsafe}.`, {
      hint: `Make the directory private (chmod 700 ${location.dir}) or set XDG_CACHE_HOME to a private directory.`,
      details: { path: location.dir },
    });
  }
  // Never keep a user's working directory busy (or deleted under us).
  process.chdir("/");

  const startedAt = new Date();
  let commands = 0;
  let busy = false;
  let stopping = false;
  let idleTimer: NodeJS.Timeout | undefined;
  let socketId: string | null = null;

  const server = createServer((conn) => serve(conn));
  // The socket is this user's only from the moment it exists.
  const umask = process.umask(0o077);
  try {
    await listen(server, location.socket, log);
  } finally {
    process.umask(umask);
  }
  chmodSync(location.socket, 0o600);
  socketId = identity(location.socket);
  try {
    unlinkSync(startingMarker(location));
  } catch {
    // started by `cm daemon run` itself, or already removed
  }
  log(`cm daemon ${VERSION} (pid ${process.pid}) listening on ${location.socket}`);

  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const shutdown = (why: string): void => {
    if (stopping) return;
    stopping = true;
    clearTimeout(idleTimer);
    clearInterval(watch);
    log(`Stopping: ${why}`);
    removeSocket();
    server.close(() => resolveDone());
  };
  function removeSocket(): void {
    // Only while it is still ours (a newer daemon may have replaced it).
    if (socketId === null || identity(location.socket) !== socketId) return;
    try {
      unlinkSync(location.socket);
    } catch {
      // already gone
    }
  }
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => {
      if (!busy) shutdown(`idle for ${Math.round(options.idleMs / 1000)} s`);
    }, options.idleMs);
  };
  // A socket removed or replaced (e.g. the cache directory cleared): no client can reach us. The
  // installed code removed or replaced: what this process would still load lazily is gone.
  const codeId = codeIdentity(options.codeFile);
  const watch = setInterval(() => {
    if (busy) return;
    if (identity(location.socket) !== socketId) shutdown("the socket was removed or replaced");
    else if (codeIdentity(options.codeFile) !== codeId) shutdown(`${options.codeFile} was removed or replaced`);
  }, 5000);
  watch.unref();
  // However the process ends (a signal ends it at once, as for any cm command), the socket goes.
  process.once("exit", removeSocket);
  armIdle();

  function serve(conn: Socket): void {
    let handled = false;
    const send = (frame: DaemonFrame): void => {
      if (!conn.destroyed) conn.write(encodeFrame(frame));
    };
    // Where the next `go` or `stdin` frame of this connection goes.
    let waiter: ((frame: Record<string, unknown>) => void) | null = null;
    conn.on("error", () => conn.destroy());
    conn.on(
      "data",
      frameReader(
        (kind, payload) => {
          const frame = kind === JSON_FRAME ? parseFrame(payload) : null;
          if (frame === null) return void conn.destroy();
          if ((frame.t === "stdin" || frame.t === "go") && waiter !== null) return waiter(frame);
          if (handled) return;
          handled = true;
          if (frame.t === "ping") {
            send({ t: "pong", pid: process.pid, version: VERSION, key: location.key, startedAt: startedAt.toISOString(), commands, idleSeconds: Math.round(options.idleMs / 1000) });
            conn.end();
          } else if (frame.t === "stop") {
            send({ t: "stopping", pid: process.pid });
            conn.end();
            // A command still running finishes first (the server closes once it has answered).
            shutdown("cm daemon stop");
          } else if (frame.t === "run") {
            void runRequest(frame, conn, send, (next) => (waiter = next));
          } else conn.destroy();
        },
        MAX_REQUEST_BYTES,
        () => conn.destroy(),
      ),
    );
  }

  async function runRequest(raw: Record<string, unknown>, conn: Socket, send: (frame: DaemonFrame) => void, await_: (waiter: ((frame: Record<string, unknown>) => void) | null) => void): Promise<void> {
    const request = checkRequest(raw);
    const build = request !== null ? options.programFor(request.argv.slice(2)) : null;
    if (request === null || build === null) return refuse(send, conn, "not a command the daemon runs");
    if (busy || stopping) return refuse(send, conn, busy ? "another command is running" : "stopping");
    busy = true;
    clearTimeout(idleTimer);
    let open = true;
    // Set once the caller has its exit code (at the end, or earlier by CommandIo.release).
    let released = false;
    conn.once("close", () => {
      open = false;
      await_(null);
    });
    const nextFrame = (): Promise<Record<string, unknown> | null> =>
      new Promise((resolve) => {
        if (!open) return resolve(null);
        await_((frame) => {
          await_(null);
          resolve(frame);
        });
        conn.once("close", () => resolve(null));
      });
    const write = (fd: 1 | 2, text: string): void => {
      if (open && !released && !conn.destroyed) conn.write(encodeOutput(fd, text));
    };
    const release = (code: number): void => {
      if (released) return;
      released = true;
      send({ t: "exit", code });
      conn.end();
    };
    const scope = enterRequest(request, write);
    if (scope === null) {
      busy = false;
      armIdle();
      return refuse(send, conn, `cannot enter ${request.cwd}`);
    }
    send({ t: "accept" });
    if ((await nextFrame())?.t !== "go") {
      // The caller gave up waiting and runs the command itself.
      scope.leave();
      busy = false;
      conn.destroy();
      if (!stopping) armIdle();
      return;
    }
    commands++;
    setCommandIo({
      write,
      release,
      readStdin: async (maxBytes) => {
        send({ t: "stdin", maxBytes });
        const frame = await nextFrame();
        if (typeof frame?.text === "string") return { text: frame.text };
        if (typeof frame?.overBytes === "number") return { overBytes: frame.overBytes };
        const why = frame === null ? "the caller went away before sending it" : typeof frame.error === "string" ? frame.error.slice(0, 300) : "the caller sent something unreadable";
        throw new AppError("INVALID_INPUT", `Could not read stdin: ${why}.`, { hint: "Pass the input as an argument, or run the command with CASS_MEMORY_DAEMON=0." });
      },
    });
    let code = 1;
    try {
      code = await runCli(request.argv, build, { resident: true });
    } catch (error) {
      write(2, `cm: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    } finally {
      setCommandIo(null);
      setOutputRedactor(null);
      scope.leave();
      busy = false;
    }
    release(code);
    if (!stopping) armIdle();
  }

  await done;
}

function refuse(send: (frame: DaemonFrame) => void, conn: Socket, reason: string): void {
  send({ t: "busy", reason });
  conn.end();
}

/** The request when it is well formed (string arrays and maps, an absolute directory), else null. */
function checkRequest(raw: Record<string, unknown>): RunRequest | null {
  const { argv, env, cwd, tty, umask } = raw as Partial<RunRequest>;
  if (!Array.isArray(argv) || argv.length < 2 || !argv.every((a) => typeof a === "string")) return null;
  if (typeof env !== "object" || env === null || Array.isArray(env) || !Object.values(env).every((v) => typeof v === "string")) return null;
  if (typeof cwd !== "string" || !cwd.startsWith("/")) return null;
  if (typeof tty !== "object" || tty === null) return null;
  if (typeof umask !== "number" || !Number.isInteger(umask) || umask < 0 || umask > 0o777) return null;
  const columns = typeof tty.columns === "number" && Number.isInteger(tty.columns) && tty.columns > 0 ? tty.columns : null;
  return { t: "run", argv, env, cwd, umask, tty: { stdin: tty.stdin === true, stdout: tty.stdout === true, stderr: tty.stderr === true, columns } };
}

/**
 * Makes this process look, to the command, like the caller's: its environment, working
 * directory, terminal properties and stdout/stderr streams (anything written to them goes to the
 * caller). Returns how to put everything back, or null when the directory cannot be entered.
 */
function enterRequest(request: RunRequest, write: (fd: 1 | 2, text: string) => void): { leave(): void } | null {
  try {
    process.chdir(request.cwd);
  } catch {
    return null;
  }
  const savedEnv = { ...process.env };
  replaceEnv(request.env);
  const savedUmask = process.umask(request.umask);
  const restoreTty = [
    override(process.stdin, "isTTY", request.tty.stdin),
    override(process.stdout, "isTTY", request.tty.stdout),
    override(process.stdout, "columns", request.tty.columns ?? undefined),
    override(process.stderr, "isTTY", request.tty.stderr),
    // A terminal's colour support follows from the (caller's) environment, as Node decides it.
    ...[process.stdout, process.stderr].flatMap((stream, i) => {
      const tty = i === 0 ? request.tty.stdout : request.tty.stderr;
      return [
        override(stream, "getColorDepth", (env?: NodeJS.ProcessEnv) => (tty ? WriteStream.prototype.getColorDepth.call(stream, env) : 1)),
        override(stream, "hasColors", (count?: number | NodeJS.ProcessEnv, env?: NodeJS.ProcessEnv) => tty && WriteStream.prototype.hasColors.call(stream, count as number, env)),
      ];
    }),
  ];
  const io = (fd: 1 | 2) => (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString("utf8") : String(chunk);
    write(fd, text);
    const done = typeof encoding === "function" ? encoding : callback;
    if (typeof done === "function") process.nextTick(done as () => void);
    return true;
  };
  const restoreWrites = [override(process.stdout, "write", io(1)), override(process.stderr, "write", io(2))];
  return {
    leave() {
      for (const restore of [...restoreWrites, ...restoreTty]) restore();
      replaceEnv(savedEnv);
      process.umask(savedUmask);
      process.chdir("/");
    },
  };
}

function replaceEnv(next: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(process.env)) delete process.env[name];
  for (const [name, value] of Object.entries(next)) if (value !== undefined) process.env[name] = value;
}

/** Sets an own property for the duration of a command; returns how to put the old one back. */
function override(target: object, name: string, value: unknown): () => void {
  const before = Object.getOwnPropertyDescriptor(target, name);
  Object.defineProperty(target, name, { value, configurable: true, writable: true, enumerable: true });
  return () => {
    if (before !== undefined) Object.defineProperty(target, name, before);
    else delete (target as Record<string, unknown>)[name];
  };
}

/** The socket file's device and inode ("" when absent): tells ours from a replacement. */
function identity(path: string): string {
  try {
    const info = lstatSync(path);
    return `${info.dev}:${info.ino}`;
  } catch {
    return "";
  }
}

/** A file's size and modification time ("" when absent). */
function codeIdentity(path: string): string {
  try {
    const info = statSync(path);
    return `${info.size}:${info.mtimeMs}`;
  } catch {
    return "";
  }
}

/** Listens on `path`, replacing a stale socket (no one answering) but never a live daemon's. */
async function listen(server: Server, path: string, log: (line: string) => void): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(path, () => {
          server.off("error", reject);
          resolve();
        });
      });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EADDRINUSE" || attempt > 0) throw error;
      if (await answers(path)) throw new AppError("INVALID_INPUT", `A daemon of this version is already running on ${path}.`, { hint: "cm daemon status shows it; cm daemon stop stops it." });
      log(`Replacing the stale socket ${path}`);
      unlinkSync(path);
    }
  }
}

/** True when something accepts connections on the socket. */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
}
