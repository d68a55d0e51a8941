/**
 * The daemon's wire format: one JSON object per line (UTF-8), in both directions.
 *
 * `cm` → daemon: `{t:"run", argv, env, cwd, tty}` (a command line to run), `{t:"go"}` (the answer
 * to `accept`: only then does the daemon run it, so a caller that gave up waiting and runs the
 * command itself never has it run twice), `{t:"stdin", text}` or
 * `{t:"stdin", overBytes}` (the answer to a stdin request), `{t:"ping"}`, `{t:"stop"}`.
 * daemon → `cm`: `{t:"accept"}` or `{t:"busy"}` (run it yourself), then `{t:"out", fd, text}`
 * any number of times, `{t:"stdin", maxBytes}` when the command reads stdin, and
 * `{t:"exit", code}`; `{t:"pong", …}` and `{t:"stopping"}` answer ping and stop.
 */

export interface RunRequest {
  t: "run";
  /** The client's process.argv (node, script, arguments). */
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  /** The caller's file mode creation mask. */
  umask: number;
  tty: { stdin: boolean; stdout: boolean; stderr: boolean; columns: number | null };
}

export type ClientFrame = RunRequest | { t: "go" } | { t: "stdin"; text: string } | { t: "stdin"; overBytes: number } | { t: "ping" } | { t: "stop" };

export type DaemonFrame =
  | { t: "accept" }
  | { t: "busy"; reason: string }
  | { t: "out"; fd: 1 | 2; text: string }
  | { t: "stdin"; maxBytes: number }
  | { t: "exit"; code: number }
  | { t: "pong"; pid: number; version: string; key: string; startedAt: string; commands: number; idleSeconds: number }
  | { t: "stopping"; pid: number };

export function encodeFrame(frame: ClientFrame | DaemonFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/**
 * Splits a byte stream into lines and hands each to `onLine` (without the newline). A line longer
 * than `maxBytes` calls `onOverflow` once and stops the reader (nothing more is delivered).
 */
export function lineReader(onLine: (line: string) => void, maxBytes: number, onOverflow: () => void): (chunk: Buffer) => void {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let stopped = false;
  return (chunk) => {
    if (stopped) return;
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      const part = chunk.subarray(start, nl);
      const line = pending.length === 0 ? part : Buffer.concat([...pending, part]);
      pending = [];
      pendingBytes = 0;
      start = nl + 1;
      if (line.length > maxBytes) {
        stopped = true;
        onOverflow();
        return;
      }
      onLine(line.toString("utf8"));
    }
    if (start < chunk.length) {
      pending.push(chunk.subarray(start));
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxBytes) {
        stopped = true;
        onOverflow();
      }
    }
  };
}

/** A frame's object, or null when the line is not a JSON object with a string `t`. */
export function parseFrame(line: string): ({ t: string } & Record<string, unknown>) | null {
  try {
    const value = JSON.parse(line) as unknown;
    return typeof value === "object" && value !== null && typeof (value as { t?: unknown }).t === "string" ? (value as { t: string } & Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
