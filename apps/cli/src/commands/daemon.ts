import { readdirSync, readFileSync, writeSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import { emit, type CliContext } from "../cli-context.js";
import { encodeFrame, frameReader, JSON_FRAME, parseFrame, type ClientFrame, type DaemonFrame } from "../daemon/frames.js";
import { runDaemon } from "../daemon/server.js";
import { daemonLocation, daemonLogPath, startDaemonInBackground, unsafeDirectory, type DaemonLocation } from "../daemon/socket.js";
import { bundleFor } from "../dispatch.js";
import { dim, green, tildify } from "../human.js";
import { intOption } from "../options.js";
import { createRootProgram } from "../root-program.js";
import { VERSION } from "../version.js";
import { registerContext } from "./context.js";
import { registerHook } from "./hook.js";
import { registerMark } from "./mark.js";

/** Default time without a command after which the daemon exits (seconds). */
const DEFAULT_IDLE_SECONDS = 1800;
/** How long `cm daemon start` waits for the new daemon to answer. */
const START_TIMEOUT_MS = 10_000;

type Pong = Extract<DaemonFrame, { t: "pong" }>;

export interface DaemonStatus {
  running: boolean;
  socket: string;
  pid?: number;
  version?: string;
  startedAt?: string;
  commands?: number;
  idleSeconds?: number;
}

/**
 * `cm daemon start|stop|status|run`: the resident process that answers `cm context`, `cm mark` and
 * `cm hook` without starting Node and loading the CLI for each (see daemon/server.ts). Off unless
 * started; one per user and build, listening on a socket only its user can reach.
 */
export function registerDaemon(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const daemon = program
    .command("daemon")
    .description("Keep a resident process that answers context, mark and hook faster (start, stop, status)")
    .addHelpText(
      "after",
      [
        "",
        `While it runs, ${cli} context, ${cli} mark and ${cli} hook are answered by it (same`,
        "output, exit codes and files). It exits after 30 minutes without a command; a command",
        "runs in its own process whenever the daemon is busy or gone. CASS_MEMORY_DAEMON=auto",
        "starts it on first use; CASS_MEMORY_DAEMON=0 bypasses it.",
        "",
        "Examples:",
        `  ${cli} daemon start`,
        `  ${cli} daemon status --json`,
        `  ${cli} daemon stop`,
        "",
      ].join("\n"),
    );

  daemon
    .command("start")
    .description("Start the daemon in the background (no-op when it is running)")
    .option("--idle <seconds>", `exit after this many seconds without a command (default ${DEFAULT_IDLE_SECONDS})`)
    .option("-j, --json", "output a JSON envelope")
    .action(async (flags: { idle?: string; json?: boolean }) => {
      ctx.begin("daemon:start", Boolean(flags.json));
      const idle = idleSeconds(flags.idle, cli);
      const location = requireLocation(cli);
      const before = await ping(location);
      if (before !== null) {
        emit(ctx, { ...statusOf(location, before), started: false }, () => `Daemon already running (pid ${before.pid}) on ${tildify(location.socket)}`, { effect: false, reason: "already running" });
        return;
      }
      const pong = await startDaemon(location, idle, cli);
      emit(ctx, { ...statusOf(location, pong), started: true }, () => `${green("Daemon started")} (pid ${pong.pid}) on ${tildify(location.socket)}`);
    });

  daemon
    .command("stop")
    .description("Stop the daemon (and those of other installed versions)")
    .option("-j, --json", "output a JSON envelope")
    .action(async (flags: { json?: boolean }) => {
      ctx.begin("daemon:stop", Boolean(flags.json));
      const location = requireLocation(cli);
      const stopped: { pid: number; socket: string }[] = [];
      for (const socket of daemonSockets(location)) {
        const answer = await exchange(location.dir, socket, { t: "stop" });
        if (answer?.t !== "stopping") continue;
        await waitUntil(async () => (await exchange(location.dir, socket, { t: "ping" })) === null, START_TIMEOUT_MS);
        stopped.push({ pid: answer.pid, socket });
      }
      if (stopped.length === 0) {
        emit(ctx, { running: false, stopped: [], socket: location.socket }, () => dim("No daemon is running."), { effect: false, reason: "not running" });
        return;
      }
      emit(ctx, { running: false, stopped, socket: location.socket }, () => stopped.map((d) => `Daemon stopped (pid ${d.pid})`));
    });

  daemon
    .command("status")
    .description("Show whether the daemon is running")
    .option("-j, --json", "output a JSON envelope")
    .action(async (flags: { json?: boolean }) => {
      ctx.begin("daemon:status", Boolean(flags.json));
      const location = requireLocation(cli);
      const pong = await ping(location);
      const status = statusOf(location, pong);
      emit(ctx, status, () =>
        pong === null
          ? `Daemon: not running (start it with ${cli} daemon start)`
          : [`Daemon: running (pid ${pong.pid}, version ${pong.version})`, `  socket:   ${tildify(location.socket)}`, `  since:    ${pong.startedAt}`, `  commands: ${pong.commands}`, `  idle exit after ${pong.idleSeconds} s`],
      );
    });

  daemon
    .command("run")
    .description("Run the daemon in the foreground (what start runs; logs to stderr)")
    .option("--idle <seconds>", `exit after this many seconds without a command (default ${DEFAULT_IDLE_SECONDS})`)
    .action(async (flags: { idle?: string }) => {
      ctx.begin("daemon:run", false);
      const idle = idleSeconds(flags.idle, cli);
      const location = requireLocation(cli);
      // Straight to the file descriptor: while a command runs, process.stderr is the caller's.
      const log = (line: string): void => {
        try {
          writeSync(2, `[cm daemon] ${new Date().toISOString()} ${line}\n`);
        } catch {
          // no stderr any more (the terminal that ran it closed): the daemon goes on
        }
      };
      await runDaemon({ location, idleMs: idle * 1000, programFor, log, codeFile: join(__dirname, "cm-main.cjs") });
    });
}

/** The per-command program the loader would run for these arguments, or null (the daemon runs only context, mark and hook). */
function programFor(args: readonly string[]): ((ctx: CliContext) => Command) | null {
  const bundle = bundleFor(args);
  if (bundle === "cm-context") return (ctx) => registered(ctx, registerContext);
  if (bundle === "cm-mark") return (ctx) => registered(ctx, registerMark);
  if (bundle === "cm-hook") return (ctx) => registered(ctx, registerHook);
  return null;
}

function registered(ctx: CliContext, register: (program: Command, ctx: CliContext) => void): Command {
  const program = createRootProgram(ctx);
  register(program, ctx);
  return program;
}

function idleSeconds(raw: string | undefined, cli: string): number {
  const value = intOption("idle", raw) ?? DEFAULT_IDLE_SECONDS;
  if (value > 7 * 24 * 3600) throw new AppError("INVALID_INPUT", "idle must be at most 604800 seconds (a week).", { hint: `${cli} daemon start --idle 3600`, details: { field: "idle", received: value } });
  return value;
}

function requireLocation(cli: string): DaemonLocation {
  const location = daemonLocation(__dirname, VERSION);
  if (location !== null) return location;
  const reason =
    process.platform === "win32"
      ? "the daemon needs Unix sockets, which this platform does not offer"
      : process.env.CASS_MEMORY_DAEMON === "0"
        ? "CASS_MEMORY_DAEMON=0 turns it off"
        : "its socket path would be too long (set XDG_CACHE_HOME to a shorter directory)";
  throw new AppError("INVALID_INPUT", `The daemon is not available: ${reason}.`, { hint: `${cli} context, ${cli} mark and ${cli} hook work the same without it.` });
}

function statusOf(location: DaemonLocation, pong: Pong | null): DaemonStatus {
  if (pong === null) return { running: false, socket: location.socket };
  return { running: true, socket: location.socket, pid: pong.pid, version: pong.version, startedAt: pong.startedAt, commands: pong.commands, idleSeconds: pong.idleSeconds };
}

/** Sends one frame to the socket and returns the first answer, or null when no daemon answers. */
function exchange(dir: string, socket: string, frame: ClientFrame): Promise<DaemonFrame | null> {
  if (unsafeDirectory(dir) !== null) return Promise.resolve(null);
  return new Promise((resolve) => {
    const conn = createConnection(socket);
    const timer = setTimeout(() => done(null), 2000);
    const done = (answer: DaemonFrame | null): void => {
      clearTimeout(timer);
      conn.destroy();
      resolve(answer);
    };
    conn.once("error", () => done(null));
    conn.once("close", () => done(null));
    conn.once("connect", () => conn.write(encodeFrame(frame)));
    conn.on("data", frameReader((kind, payload) => done(kind === JSON_FRAME ? (parseFrame(payload) as DaemonFrame | null) : null), 64 * 1024, () => done(null)));
  });
}

/** This build's socket first, then any other build's in the same directory. */
function daemonSockets(location: DaemonLocation): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(location.dir).filter((name) => /^daemon-[A-Za-z0-9._-]+\.sock$/.test(name));
  } catch {
    // no directory: no daemon
  }
  const others = names.map((name) => join(location.dir, name)).filter((path) => path !== location.socket);
  return [location.socket, ...others];
}

async function ping(location: DaemonLocation): Promise<Pong | null> {
  const answer = await exchange(location.dir, location.socket, { t: "ping" });
  return answer?.t === "pong" ? answer : null;
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

/** Starts `cm daemon run` in the background (stderr in daemon.log next to the socket) and waits for it to answer. */
async function startDaemon(location: DaemonLocation, idle: number, cli: string): Promise<Pong> {
  const unsafe = unsafeDirectory(location.dir);
  if (unsafe !== null && !unsafe.endsWith("ENOENT")) {
    throw new AppError("INVALID_INPUT", `The daemon cannot listen here: ${unsafe}.`, { hint: `Make the directory private (chmod 700 ${location.dir}) or set XDG_CACHE_HOME to a private directory.` });
  }
  // null: another start is under way; its daemon is waited for all the same.
  const child = startDaemonInBackground(location, join(__dirname, "cm.cjs"), ["--idle", String(idle)]);
  let exited: number | null = null;
  child?.once("exit", (code) => (exited = code ?? 1));
  let pong: Pong | null = null;
  await waitUntil(async () => exited !== null || (pong = await ping(location)) !== null, START_TIMEOUT_MS);
  if (pong !== null) return pong;
  const logPath = daemonLogPath(location);
  const log = readTail(logPath);
  throw new AppError("INTERNAL_ERROR", exited !== null ? `The daemon exited at start (code ${exited}).` : "The daemon did not answer within 10 s.", {
    hint: `See ${logPath}${log !== "" ? `: ${log}` : ""}; ${cli} context, ${cli} mark and ${cli} hook work the same without it.`,
    details: { log: logPath },
  });
}

function readTail(path: string): string {
  try {
    return readFileSync(path, "utf8").trim().split("\n").slice(-3).join(" | ").slice(-500);
  } catch {
    return "";
  }
}
