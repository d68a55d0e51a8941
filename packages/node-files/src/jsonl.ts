import { parseJsonLines } from "@cass-memory/core";
import { mkdir, open, readFile, readdir } from "node:fs/promises";
import { dirname } from "node:path";
import { AppError } from "@cass-memory/core";
import { FILE_MODE } from "./atomic-write.js";

/** JSONL files: one JSON value per line, appended under the file's lock (reference §4.6, §4.7). */

export interface JsonlLines {
  /** Parsed values of the lines that were valid JSON, in file order. */
  values: unknown[];
  /** Lines that were not valid JSON (blank lines and `#` comment lines are not counted). */
  malformed: number;
}

/** Reads a JSONL file; a missing file reads as empty. Malformed lines are skipped and counted. */
export async function readJsonl(path: string): Promise<JsonlLines> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return { values: [], malformed: 0 };
    throw readError(path, error);
  }
  return parseJsonLines(text);
}

/**
 * Appends one line per record with a plain append (the caller holds the file's lock). When the file
 * does not end with a newline (a torn last line), a newline is written first so that the new record
 * is not glued onto it.
 */
export async function appendJsonl(path: string, records: readonly unknown[], options: { sync?: boolean } = {}): Promise<void> {
  if (records.length === 0) return;
  const body = records.map((r) => JSON.stringify(r)).join("\n") + "\n";
  try {
    await mkdir(dirname(path), { recursive: true });
    const handle = await open(path, "a+", FILE_MODE);
    try {
      const { size } = await handle.stat();
      let prefix = "";
      if (size > 0) {
        const last = Buffer.alloc(1);
        await handle.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = "\n";
      }
      await handle.appendFile(prefix + body);
      if (options.sync) await handle.sync();
    } finally {
      await handle.close();
    }
  } catch (error) {
    const errno = (error as { code?: unknown }).code;
    throw new AppError(errno === "EACCES" || errno === "EPERM" ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED", `Failed to append to ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: `Check that ${dirname(path)} is writable.`,
      details: { path },
      cause: error,
    });
  }
}

export function readError(path: string, error: unknown): AppError {
  const errno = (error as { code?: unknown } | null)?.code;
  const permission = errno === "EACCES" || errno === "EPERM";
  return new AppError(permission ? "FILE_PERMISSION_DENIED" : "FILE_NOT_FOUND", `Could not read ${path}: ${error instanceof Error ? error.message : String(error)}`, {
    hint: `Check that ${path} exists and is readable.`,
    details: { path },
    cause: error,
  });
}

/** The names in a directory, sorted; empty when it is missing or unreadable. */
export async function listDir(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).sort();
  } catch {
    return [];
  }
}
