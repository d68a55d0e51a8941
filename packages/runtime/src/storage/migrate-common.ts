import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { AppError, isAppError, parseSectionKey, sectionLayer, type Layer, type SectionDifference, type StorageBackend, type StoreTransfer } from "@cass-memory/core";
import type { StoreDirs } from "./backend.js";
import { moveFile } from "./layout.js";

/**
 * What every `cm storage migrate` direction shares (file backends to each other, to PostgreSQL and
 * out of it): the staging layout, the progress and record file names, backup stamps, the rollback of
 * half-done installs and the errors a failed verification or install reports.
 */

export const MIGRATION_LOCK = "storage-migrate";
export const PROGRESS_FILE = "progress.json";
export const PROGRESS_VERSION = 1;
export const RECORD_FILE = "migration.json";

/** The staging directory of a layer for a migration to `to`. */
export function stagingDir(layerDir: string, to: StorageBackend): string {
  return join(layerDir, `.migrate-${to}`);
}

/** The directories of the staging store of a migration to `to`. */
export function stagingDirs(live: StoreDirs, to: StorageBackend): StoreDirs {
  const globalDir = stagingDir(live.globalDir, to);
  return {
    globalDir,
    repoDir: live.repoDir === null ? null : stagingDir(live.repoDir, to),
    playbookPath: join(globalDir, "playbook.yaml"),
    diaryDir: join(globalDir, "diary"),
    sqlitePath: join(globalDir, "cass-memory.sqlite"),
  };
}

export function layerDirOf(dirs: StoreDirs, layer: Layer): string {
  return layer === "global" ? dirs.globalDir : (dirs.repoDir as string);
}

export function keyLayer(key: string): Layer {
  return sectionLayer(parseSectionKey(key)) ?? "global";
}

/** An ISO time usable in a directory name. */
export function timestamp(date: Date): string {
  return date.toISOString().replace(/:/g, "-").replace(/\./g, "-");
}

export function requireTransfer(transfer: StoreTransfer | undefined, backend: StorageBackend): StoreTransfer {
  if (transfer === undefined) throw new AppError("INTERNAL_ERROR", `The ${backend} store cannot take part in a migration (it has no section transfer).`);
  return transfer;
}

export function sameLayers(a: readonly Layer[], b: readonly Layer[]): boolean {
  return a.length === b.length && a.every((layer) => b.includes(layer));
}

/** A backup directory name `storage-<stamp>[-n]` not used yet in any of `dirs`. */
export async function freeStamp(stamp: string, dirs: readonly string[]): Promise<string> {
  for (let n = 1; ; n++) {
    const candidate = n === 1 ? stamp : `${stamp}-${n}`;
    let taken = false;
    for (const dir of dirs) {
      try {
        await stat(join(dir, `storage-${candidate}`));
        taken = true;
      } catch {
        // free in this directory
      }
    }
    if (!taken) return candidate;
  }
}

/** Files below `dir`, as paths relative to it (lock directories and temp files left out). */
export async function filesBelow(dir: string, prefix = ""): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(join(dir, prefix), { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    const rel = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
    if (entry.name.endsWith(".lock.d") || /\.tmp\.[0-9a-f]+$/.test(entry.name)) continue;
    if (entry.isDirectory()) out.push(...(await filesBelow(dir, rel)));
    else out.push(rel);
  }
  return out;
}

export type FailedMove = { from: string; to: string; error: string };

/** Undoes moves in reverse order; returns the ones that could not be undone. */
export async function rollback(moves: ReadonlyArray<{ from: string; to: string }>): Promise<FailedMove[]> {
  const failed: FailedMove[] = [];
  for (const m of [...moves].reverse()) {
    try {
      await moveFile(m.to, m.from);
    } catch (error) {
      failed.push({ from: m.to, to: m.from, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return failed;
}

/** How errors name the source: the team database, or the file backend's data. */
function sourceWords(from: StorageBackend): { name: string; data: string } {
  return from === "postgres" ? { name: "the database", data: "the database" } : { name: from, data: `the ${from} data` };
}

export function verificationError(differences: SectionDifference[], from: StorageBackend, to: StorageBackend, cli: string): AppError {
  const first = differences[0] as SectionDifference;
  const source = sourceWords(from);
  return new AppError(
    "INTERNAL_ERROR",
    `Verification failed: ${differences.length} section(s) differ between ${source.name} and the staged ${to} store (first: ${first.key} at ${first.path}: ${first.source} ≠ ${first.target}). Nothing was switched; ${source.data} is unchanged.`,
    {
      hint: `Run '${cli} storage migrate --to ${to}' again to copy the differing sections once more; if they still differ, please report it with these details.`,
      details: { from, to, differences },
    },
  );
}

export function commitError(error: unknown, undone: FailedMove[], from: StorageBackend, to: StorageBackend, cli: string): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  const errno = (error as { code?: unknown }).code;
  const code = isAppError(error) ? error.code : errno === "EACCES" || errno === "EPERM" ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED";
  const unchanged = `${sourceWords(from).data.replace(/^t/, "T")} and config.json are unchanged`;
  const restored =
    undone.length === 0
      ? `${unchanged}; files already moved were put back.`
      : `${unchanged}, but ${undone.length} moved file(s) could not be put back (see details.notRestored).`;
  return new AppError(code, `Could not install the ${to} data: ${reason}. ${restored}`, {
    hint: `Fix the cause, then run '${cli} storage migrate --to ${to}' again: the copied sections are kept and verified again.`,
    details: { from, to, ...(undone.length > 0 ? { notRestored: undone } : {}) },
    cause: error,
  });
}
