/**
 * The `cm` loader's side of the resident process (`cm daemon`): hands a `cm context`, `cm mark` or
 * `cm hook` command line to a running daemon and relays its output, stdin and exit code. Whenever
 * the daemon cannot take the command — none running, a stale or untrusted socket, busy with another
 * command, no answer within half a second — it says so (--verbose) and the loader runs the command
 * itself, as without one.
 */
import { encodeFrame, frameReader, JSON_FRAME, parseFrame, type RunRequest } from "./frames.js";
import type { DaemonLocation } from "./socket.js";
import { readAllStdin, writeAllToFd } from "../raw-io.js";

/** How long to wait for the daemon to accept or refuse before running the command here. */
const ACCEPT_TIMEOUT_MS = 500;
/** The longest frame accepted from the daemon (a command's output comes in many frames). */
const MAX_FRAME_BYTES = 256 * 1024 * 1024;

/**
 * Runs the command line through the daemon at `location` (a trustedSocket). Resolves false, having
 * done nothing, when the daemon does not take it; otherwise the process exits with the command's
 * exit code.
 */
export function runThroughDaemon(location: DaemonLocation, debug: (line: string) => void): Promise<boolean> {
  const { createConnection } = process.getBuiltinModule("node:net");
  return new Promise((resolve) => {
    let settled = false;
    let accepted = false;
    const openFds = { 1: true, 2: true };
    const fallBack = (why: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      debug(`Running the command here: ${why}`);
      resolve(false);
    };
    const socket = createConnection(location.socket);
    const timer = setTimeout(() => fallBack("the daemon did not answer"), ACCEPT_TIMEOUT_MS);
    socket.on("error", (error: NodeJS.ErrnoException) => {
      if (!accepted) fallBack(`no daemon (${error.code ?? error.message})`);
      else finish(1, `cm: lost the daemon during the command (${error.code ?? error.message})\n`);
    });
    socket.on("close", () => {
      if (!accepted) fallBack("the daemon closed the connection");
      else finish(1, "cm: the daemon ended during the command\n");
    });
    const finish = (code: number, message?: string): void => {
      if (settled) return;
      settled = true;
      if (message !== undefined && openFds[2]) writeAllToFd(2, Buffer.from(message));
      process.exit(code);
    };
    socket.on(
      "data",
      frameReader(
        (kind, payload) => {
          if (accepted && (kind === 1 || kind === 2)) {
            if (openFds[kind]) openFds[kind] = writeAllToFd(kind, payload);
            return;
          }
          const frame = kind === JSON_FRAME ? parseFrame(payload) : null;
          if (frame === null) return finish(1, "cm: the daemon sent something unreadable\n");
          if (!accepted) {
            if (frame.t === "accept") {
              // Committed: from here the daemon runs the command and this process does not.
              accepted = true;
              clearTimeout(timer);
              socket.write(encodeFrame({ t: "go" }));
            } else fallBack(frame.t === "busy" ? `the daemon is busy (${String(frame.reason)})` : `unexpected ${frame.t}`);
            return;
          }
          if (frame.t === "stdin" && typeof frame.maxBytes === "number") {
            void readAllStdin(frame.maxBytes).then(
              (answer) => socket.write(encodeFrame({ t: "stdin", ...answer })),
              (error: unknown) => socket.write(encodeFrame({ t: "stdin", error: error instanceof Error ? error.message : String(error) })),
            );
          } else if (frame.t === "exit" && typeof frame.code === "number") {
            finish(frame.code);
          }
        },
        MAX_FRAME_BYTES,
        () => finish(1, "cm: the daemon sent an oversized frame\n"),
      ),
    );
    socket.on("connect", () => {
      let request: RunRequest;
      try {
        request = runRequest();
      } catch (error) {
        // e.g. a working directory that was removed: the command reports it when run here
        return fallBack(`cannot describe this process (${error instanceof Error ? error.message : String(error)})`);
      }
      socket.write(encodeFrame(request));
    });
  });
}

function runRequest(): RunRequest {
  const { isatty } = process.getBuiltinModule("node:tty");
  const stdout = isatty(1);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return {
    t: "run",
    argv: process.argv,
    env,
    cwd: process.cwd(),
    // Files the command creates get the caller's permissions.
    umask: currentUmask(),
    // isatty rather than process.stdin/stdout: those getters build the streams (milliseconds).
    tty: { stdin: isatty(0), stdout, stderr: isatty(2), columns: stdout && typeof process.stdout.columns === "number" ? process.stdout.columns : null },
  };
}

/** This process's file mode creation mask (reading it means setting it, so it is set back at once). */
function currentUmask(): number {
  const mask = process.umask(0o077);
  process.umask(mask);
  return mask;
}
