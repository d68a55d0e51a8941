import { readFile, stat } from "node:fs/promises";
import { AppError, DEFAULT_INPUT_LIMITS, overLimitMessage, toAppError } from "@cass-memory/core";
import { currentCommandIo } from "./output.js";
import { readAllStdin } from "./raw-io.js";

/**
 * Flag parsing shared by the commands. Numbers use the original's strict integer syntax
 * (`^-?\d+$`); bad values are INVALID_INPUT errors reported in the command's envelope.
 */

export function parseStrictInt(raw: string): number {
  const trimmed = raw.trim();
  return /^-?\d+$/.test(trimmed) ? Number.parseInt(trimmed, 10) : Number.NaN;
}

/** `undefined` when the flag is absent; otherwise an integer ≥ `min`, or INVALID_INPUT. */
export function intOption(name: string, raw: string | undefined, min = 1): number | undefined {
  if (raw === undefined) return undefined;
  const value = parseStrictInt(raw);
  if (!Number.isInteger(value)) {
    throw new AppError("INVALID_INPUT", `${name} must be an integer.`, { details: { field: name, received: raw } });
  }
  if (value < min) {
    throw new AppError("INVALID_INPUT", `${name} must be >= ${min}.`, { details: { field: name, received: value, min } });
  }
  return value;
}

const STRICT_FLOAT = /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** `undefined` when absent; otherwise a number in the original's strict float syntax within [min, max], or INVALID_INPUT. */
export function floatOption(name: string, raw: string | undefined, min = -Infinity, max = Infinity): number | undefined {
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  const value = STRICT_FLOAT.test(trimmed) ? Number(trimmed) : Number.NaN;
  if (!Number.isFinite(value) || value < min || value > max) {
    const range = Number.isFinite(max) ? `between ${min} and ${max}` : `a number >= ${min}`;
    throw new AppError("INVALID_INPUT", `${name} must be ${range}.`, { details: { field: name, received: raw } });
  }
  return value;
}

/** Case-insensitive one-of check with the original's message. */
export function oneOf<T extends string>(name: string, raw: string, allowed: readonly T[]): T {
  const value = raw.trim().toLowerCase();
  const match = allowed.find((a) => a === value);
  if (match === undefined) {
    throw new AppError("INVALID_INPUT", `${name} must be one of: ${allowed.join(", ")}.`, {
      details: { field: name, received: raw, allowed: [...allowed] },
    });
  }
  return match;
}

/** The whole of stdin as text ("" when stdin is a terminal: never block waiting for a human). */
export async function readStdin(maxBytes: number = DEFAULT_INPUT_LIMITS.fileBytes): Promise<string> {
  const io = currentCommandIo();
  const read = await (io !== null ? io.readStdin(maxBytes) : readAllStdin(maxBytes));
  if ("overBytes" in read) throw tooLarge("stdin", read.overBytes, maxBytes);
  return read.text;
}

function tooLarge(what: string, bytes: number, limit: number): AppError {
  return new AppError("INVALID_INPUT", overLimitMessage(what, bytes, limit), {
    hint: "Split the input into smaller files. The limit is the config key inputLimits.fileBytes.",
    details: { field: what, bytes, limit, configKey: "inputLimits.fileBytes" },
  });
}

/**
 * Reads a file given as input, refusing one over `maxBytes` before reading it (FILE_NOT_FOUND when
 * it does not exist).
 */
export async function readInputFile(path: string, maxBytes: number = DEFAULT_INPUT_LIMITS.fileBytes): Promise<string> {
  let bytes: number;
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new AppError("INVALID_INPUT", `${path} is not a file.`, { details: { path } });
    bytes = st.size;
  } catch (error) {
    if (error instanceof AppError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") throw new AppError("FILE_NOT_FOUND", `File not found: ${path}`, { details: { path }, cause: error });
    throw toAppError(error);
  }
  if (bytes > maxBytes) throw tooLarge(path, bytes, maxBytes);
  return readFile(path, "utf8");
}

export function isInteractive(): boolean {
  return process.stdin.isTTY === true && process.stdout.isTTY === true;
}

/** Asks one question on the terminal (stderr prompt) and returns the trimmed answer. */
export async function ask(question: string): Promise<string> {
  // Loaded here, not at start-up: only interactive prompts need readline.
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}
