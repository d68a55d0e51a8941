import { VERSION } from "./version.js";
import { redactSecrets } from "@cass-memory/core";
import { writeAllToFd } from "./raw-io.js";

/**
 * Every byte cm prints passes the secret detector (issue 21): JSON values are redacted string by
 * string before they are serialised, and all text (human output, TOON, stderr) once more as a
 * whole. The CLI swaps in the configured scanner (extras, allowlist, or none when sanitization is
 * disabled) once the runtime is loaded; before that the built-in detector is used.
 */
const builtinRedactor = (text: string): string => redactSecrets(text).text;
let redactText: (text: string) => string = builtinRedactor;

/** Redacts output with `redact` from now on (null: the built-in detector again). */
export function setOutputRedactor(redact: ((text: string) => string) | null): void {
  redactText = redact ?? builtinRedactor;
}

/**
 * The only module that writes to stdout. JSON is pretty-printed with 2 spaces and a trailing
 * newline, and written synchronously and completely (partial writes and EAGAIN are retried, EPIPE
 * ends quietly) so a large document is never cut short when the process exits.
 */

let stdoutClosed = false;

/**
 * Where one command's input and output go when it does not run in a process of its own: the
 * resident process (`cm daemon`) sends both to the `cm` that asked for the command.
 */
export interface CommandIo {
  /** Text for stdout (1) or stderr (2), already made terminal-safe. */
  write(fd: 1 | 2, text: string): void;
  /** The caller's whole stdin ("" when it is a terminal), or its size when over `maxBytes`. */
  readStdin(maxBytes: number): Promise<{ text: string } | { overBytes: number }>;
  /**
   * Lets the caller go now with this exit code; the command may go on working (and the process
   * stays busy with it), but nothing it writes reaches the caller any more (`cm hook`'s time limit).
   */
  release(code: number): void;
}

let commandIo: CommandIo | null = null;

/** Sends the output of the commands run from now on to `io` (null: this process's stdout and stderr). */
export function setCommandIo(io: CommandIo | null): void {
  commandIo = io;
}

/** The redirection in effect, if any (options.ts reads stdin through it). */
export function currentCommandIo(): CommandIo | null {
  return commandIo;
}

/** Any control character other than tab and newline (C0, DEL, C1), escape sequences included. */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;
/** An SGR colour sequence (ESC [ digits;… m), the only escape sequence cm itself writes. */
const SGR = "\u001b\\[[0-9;]*m";
const ESCAPES = new RegExp(
  // SGR | other CSI | OSC (to BEL or ST) | other ESC + one char | any single control character
  `(${SGR})|\u001b\\[[0-?]*[ -/]*[@-~]|\u001b\\][^\u0007\u001b]*(?:\u0007|\u001b\\\\)?|\u001b[@-_]?|[\u0000-\u0008\u000b-\u001f\u007f-\u009f]`,
  "g",
);

/**
 * Text safe for a terminal: stored rule text, session snippets or file content could carry escape
 * sequences that retitle the window, write the clipboard (OSC 52), hide text or move the cursor.
 * Every control character except tab and newline is removed; colour (SGR) sequences are kept only
 * when `keepColor` (cm's own styling, when colour is on). JSON output never contains raw control
 * characters, so it passes through unchanged.
 */
export function terminalSafe(text: string, keepColor: boolean): string {
  if (!CONTROL.test(text)) return text;
  return text.replace(ESCAPES, (match, sgr: string | undefined) => (sgr !== undefined && keepColor ? match : ""));
}

function colorOn(fd: number): boolean {
  const env = process.env;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR === "0") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "") return true;
  return (fd === 1 ? process.stdout.isTTY : process.stderr.isTTY) === true;
}

function writeAllSync(fd: 1 | 2, raw: string): void {
  if (commandIo !== null) {
    commandIo.write(fd, terminalSafe(raw, colorOn(fd)));
    return;
  }
  if (fd === 1 && stdoutClosed) return;
  const written = writeAllToFd(fd, Buffer.from(terminalSafe(raw, colorOn(fd)), "utf8"));
  if (!written && fd === 1) stdoutClosed = true;
}

/** Writes text to stdout, synchronously and completely. */
export function writeStdout(text: string): void {
  writeAllSync(1, redactText(text));
}

/** Writes one line (newline added) to stdout. */
export function printLine(text = ""): void {
  writeStdout(text.endsWith("\n") ? text : `${text}\n`);
}

/** Writes diagnostics to stderr (never stdout). */
export function writeStderr(text: string): void {
  writeAllSync(2, redactText(text.endsWith("\n") ? text : `${text}\n`));
}

/** Strings up to this length are redacted once per document and the result reused. */
const MEMO_MAX_CHARS = 1024;

export function printJson(value: unknown): void {
  // Every string value is redacted as it is serialised (keys are ours), so the text needs no
  // second pass and no redacted copy of the value is built (a large playbook list allocates much less).
  // Redaction is a function of the text alone, and a document repeats most of its short strings
  // (timestamps, session paths, categories, states: a `cm context` of 50 rules holds ~1,300 strings,
  // ~170 of them distinct), so each distinct short string is scanned once.
  const memo = new Map<string, string>();
  const replacer = (_key: string, item: unknown): unknown => {
    if (typeof item !== "string") return item;
    if (item.length > MEMO_MAX_CHARS) return redactText(item);
    let redacted = memo.get(item);
    if (redacted === undefined) {
      redacted = redactText(item);
      memo.set(item, redacted);
    }
    return redacted;
  };
  writeAllSync(1, `${escapeC1(JSON.stringify(value, replacer, 2))}\n`);
}

/**
 * JSON.stringify escapes control characters below U+0020 but not DEL and the C1 range
 * (U+007F-U+009F, where U+009B starts a terminal command): those are escaped too, so JSON output
 * never carries a raw control character and the text it holds arrives unchanged.
 */
function escapeC1(json: string): string {
  return /[\u007f-\u009f]/.test(json) ? json.replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`) : json;
}

export interface EnvelopeMetadata {
  executionMs: number;
  version: string;
}

export function metadata(startedAt: number): EnvelopeMetadata {
  return { executionMs: Math.max(0, Math.round(Date.now() - startedAt)), version: VERSION };
}

export interface SuccessExtras {
  warnings?: string[];
  /** Soft success: the command ran but had no effect. */
  effect?: false;
  reason?: string;
}

/** The success envelope of reference §1.3, keys in the original's order. */
export function successEnvelope(command: string, data: unknown, startedAt: number, extras: SuccessExtras = {}): Record<string, unknown> {
  const envelope: Record<string, unknown> = {
    success: true,
    command,
    timestamp: new Date().toISOString(),
    data,
    metadata: metadata(startedAt),
  };
  if (extras.warnings && extras.warnings.length > 0) envelope.warnings = extras.warnings;
  if (extras.effect === false) {
    envelope.effect = false;
    if (extras.reason !== undefined) envelope.reason = extras.reason;
  }
  return envelope;
}

export interface ErrorBody {
  message: string;
  code: string;
  exitCode: number;
  recovery: string[];
  cause?: string;
  docs?: string;
  hint?: string;
  retryable?: boolean;
  details?: Record<string, unknown>;
}

/** The error envelope of reference §1.3 (everything nested under `error`). */
export function errorEnvelope(command: string, error: ErrorBody, startedAt: number): Record<string, unknown> {
  return {
    success: false,
    command,
    timestamp: new Date().toISOString(),
    error,
    metadata: metadata(startedAt),
  };
}

/**
 * Runs `fn` with these exact values exempt from redaction: secrets cm made for the user to read,
 * such as the access token in the URL `cm dashboard` prints. Text around them is still redacted.
 */
export function withUnredacted<T>(values: readonly string[], fn: () => T): T {
  const previous = redactText;
  const keep = values.filter((v) => v.length >= 8);
  redactText = (text) => {
    let pieces = [text];
    for (const value of keep) pieces = pieces.flatMap((piece, i) => (i % 2 === 1 ? [piece] : interleave(piece.split(value), value)));
    return pieces.map((piece, i) => (i % 2 === 1 ? piece : previous(piece))).join("");
  };
  try {
    return fn();
  } finally {
    redactText = previous;
  }
}

/** `[a, b, c]` → `[a, value, b, value, c]`: kept values at odd positions. */
function interleave(parts: string[], value: string): string[] {
  const out: string[] = [];
  parts.forEach((part, i) => {
    if (i > 0) out.push(value);
    out.push(part);
  });
  return out;
}
