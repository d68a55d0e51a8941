/**
 * The daemon's wire format, in both directions: frames of one kind byte, a 32-bit big-endian
 * length and the payload. Control frames are JSON objects (kind `J`); the command's output comes
 * as raw bytes (kind 1 for stdout, 2 for stderr), written by the caller as they are.
 *
 * `cm` → daemon: `{t:"run", argv, env, cwd, tty}` (a command line to run), `{t:"go"}` (the answer
 * to `accept`: only then does the daemon run it, so a caller that gave up waiting and runs the
 * command itself never has it run twice), `{t:"stdin", text}`, `{t:"stdin", overBytes}` or
 * `{t:"stdin", error}` (the answer to a stdin request), `{t:"ping"}`, `{t:"stop"}`.
 * daemon → `cm`: `{t:"accept"}` or `{t:"busy"}` (run it yourself), then output frames any number
 * of times, `{t:"stdin", maxBytes}` when the command reads stdin, and
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

export type ClientFrame =
  | RunRequest
  | { t: "go" }
  | { t: "stdin"; text: string }
  | { t: "stdin"; overBytes: number }
  | { t: "stdin"; error: string }
  | { t: "ping" }
  | { t: "stop" };

export type DaemonFrame =
  | { t: "accept" }
  | { t: "busy"; reason: string }
  | { t: "stdin"; maxBytes: number }
  | { t: "exit"; code: number }
  | { t: "pong"; pid: number; version: string; key: string; startedAt: string; commands: number; idleSeconds: number }
  | { t: "stopping"; pid: number };

/** Frame kinds: a JSON control frame, or raw bytes for the caller's stdout (1) or stderr (2). */
export const JSON_FRAME = 0x4a;
const HEADER_BYTES = 5;

function frame(kind: number, payload: Buffer): Buffer {
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  out[0] = kind;
  out.writeUInt32BE(payload.length, 1);
  payload.copy(out, HEADER_BYTES);
  return out;
}

export function encodeFrame(value: ClientFrame | DaemonFrame): Buffer {
  return frame(JSON_FRAME, Buffer.from(JSON.stringify(value), "utf8"));
}

/** Output for the caller's stdout or stderr, as bytes (no JSON escaping of a large document). */
export function encodeOutput(fd: 1 | 2, text: string): Buffer {
  return frame(fd, Buffer.from(text, "utf8"));
}

/**
 * Splits a byte stream into frames (kind byte, 32-bit big-endian length, payload) and hands each to
 * `onFrame`. A frame longer than `maxBytes` calls `onOverflow` once and stops the reader (nothing
 * more is delivered), as soon as its header arrives.
 */
export function frameReader(onFrame: (kind: number, payload: Buffer) => void, maxBytes: number, onOverflow: () => void): (chunk: Buffer) => void {
  // Chunks are joined only once a whole header, then a whole frame, has arrived: a large frame
  // arriving in many chunks is copied once, not once per chunk.
  let chunks: Buffer[] = [];
  let total = 0;
  let need = HEADER_BYTES;
  let length = -1;
  let stopped = false;
  return (chunk) => {
    if (stopped) return;
    chunks.push(chunk);
    total += chunk.length;
    while (total >= need) {
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
      chunks = [bytes];
      if (length === -1) {
        length = bytes.readUInt32BE(1);
        if (length > maxBytes) {
          stopped = true;
          onOverflow();
          return;
        }
        need = HEADER_BYTES + length;
        continue;
      }
      const kind = bytes[0]!;
      const payload = bytes.subarray(HEADER_BYTES, need);
      const rest = bytes.subarray(need);
      chunks = rest.length > 0 ? [rest] : [];
      total = rest.length;
      need = HEADER_BYTES;
      length = -1;
      onFrame(kind, payload);
    }
  };
}

/** A JSON frame's object, or null when the payload is not a JSON object with a string `t`. */
export function parseFrame(payload: Buffer | string): ({ t: string } & Record<string, unknown>) | null {
  try {
    const value = JSON.parse(typeof payload === "string" ? payload : payload.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && typeof (value as { t?: unknown }).t === "string" ? (value as { t: string } & Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
