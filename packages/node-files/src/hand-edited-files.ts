import { constants as fsConstants } from "node:fs";
import { copyFile, mkdir, open, readFile, readdir, rename, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AppError } from "@cass-memory/core";
import type { StarterFile } from "@cass-memory/core";
import { atomicWriteFile } from "./atomic-write.js";
import { withLock, type LockOptions } from "./lock.js";

/**
 * The files a database-backed store (SQLite, PostgreSQL) leaves as files, because people edit them by hand: the global `config.json`
 * and the custom starter playbooks in `<globalDir>/starters/`. Same formats, locks and atomic writes
 * as the YAML store.
 */

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Copies `file` to `<file>.backup.<epoch-ms>` (never replacing an earlier backup); returns the backup's path. */
export async function backupFile(file: string): Promise<string> {
  for (let ms = Date.now(); ; ms += 1) {
    const backup = `${file}.backup.${ms}`;
    try {
      await copyFile(file, backup, fsConstants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if (errnoOf(error) === "EEXIST") continue;
      throw new AppError("FILE_WRITE_FAILED", `Could not back up ${file}: ${messageOf(error)}`, {
        hint: `Check that ${file} is readable and its directory writable.`,
        details: { path: file },
        cause: error,
      });
    }
  }
}

export function readFailure(path: string, error: unknown): AppError {
  const errno = errnoOf(error);
  return new AppError(errno === "EACCES" || errno === "EPERM" ? "FILE_PERMISSION_DENIED" : "FILE_NOT_FOUND", `Could not read ${path}: ${messageOf(error)}`, {
    hint: `Check that ${path} exists and is readable.`,
    details: { path },
    cause: error,
  });
}

/** The file's text, or null when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw readFailure(path, error);
  }
}

/** Read-modify-write of `<globalDir>/config.json` under its lock `config.json.lock.d`. */
export async function mutateConfigJson(
  path: string,
  fn: (raw: Record<string, unknown>) => void,
  lock: LockOptions,
): Promise<Record<string, unknown>> {
  return withLock(
    path,
    async () => {
      const text = (await readTextIfExists(path)) ?? "";
      let raw: Record<string, unknown> = {};
      if (text.trim() !== "") {
        const hint = `Fix ${path} by hand, or run 'cm doctor --fix --force' to back it up and reset it.`;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          throw new AppError("CONFIG_INVALID", `Config file ${path} is not valid JSON`, { hint, details: { path }, cause: error });
        }
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
          throw new AppError("CONFIG_INVALID", `Config file ${path} is not a JSON object`, { hint, details: { path } });
        }
        raw = parsed as Record<string, unknown>;
      }
      fn(raw);
      await atomicWriteFile(path, JSON.stringify(raw, null, 2));
      return raw;
    },
    lock,
  );
}

/** Parses YAML text (the host passes one: this package has no YAML dependency). */
export type YamlParser = (text: string, source: string) => unknown;

/**
 * The custom starters in `<globalDir>/starters/` and `starters/custom/`, sorted by path within each
 * directory. JSON files are parsed here; YAML files with `parseYaml` when the host gave one, else
 * they are reported with an error saying so.
 */
export async function readStarterDir(globalDir: string, parseYaml: YamlParser | undefined): Promise<StarterFile[]> {
  const found: StarterFile[] = [];
  for (const dir of [join(globalDir, "starters"), join(globalDir, "starters", "custom")]) {
    let names: string[];
    try {
      names = (await readdir(dir)).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (!/\.(ya?ml|json)$/i.test(name)) continue;
      const path = join(dir, name);
      const json = /\.json$/i.test(name);
      try {
        const text = await readFile(path, "utf8");
        if (json) found.push({ path, data: JSON.parse(text) as unknown });
        else if (parseYaml !== undefined) found.push({ path, data: parseYaml(text, path) });
        else found.push({ path, error: "YAML starter files need a YAML parser; this store was created without one (option parseYaml)" });
      } catch (error) {
        found.push({ path, error: messageOf(error) });
      }
    }
  }
  return found;
}
