import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { AppError, isAppError, isPlainObject, parseSectionKey, sectionLayer, type Layer, type SectionDifference, type StorageBackend, type StoreTransfer } from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/store-yaml";
import type { StoreDirs } from "./backend.js";
import { layerFiles, moveFile, pathOf } from "./layout.js";
import type { MigrateStorageOptions, MigrateStorageResult } from "./migrate.js";

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

export interface InstallStagedOptions {
  from: StorageBackend;
  to: Exclude<StorageBackend, "postgres">;
  live: StoreDirs;
  stage: StoreDirs;
  layers: readonly Layer[];
  now: Date;
  cli: string;
  onProgress?: MigrateStorageOptions["onProgress"];
  /** Writes config.json (the store's mutateConfigFile). */
  mutateConfigFile(fn: (raw: Record<string, unknown>) => void): Promise<unknown>;
}

export interface InstalledStaged {
  /** The `storage-<stamp>` name of this migration's backup directories. */
  stamp: string;
  backups: MigrateStorageResult["backups"];
  installed: MigrateStorageResult["installed"];
  configUpdated: boolean;
}

/**
 * The commit of a migration to a file backend: checks that every staged file is one the install
 * knows where to put, moves the target backend's live files of each layer to
 * `backups/storage-<stamp>/`, renames the staged ones into place and writes `storage.backend`. On
 * any failure every move is undone (commitError says what could not be).
 */
export async function installStaged(o: InstallStagedOptions): Promise<InstalledStaged> {
  const { from, to, live, stage, layers, cli } = o;
  for (const layer of layers) {
    const known = new Set((await layerFiles(to, stage, layer)).map((f) => f.name));
    const extra = (await filesBelow(layerDirOf(stage, layer))).filter((name) => !known.has(name) && !(layer === "global" && name === PROGRESS_FILE));
    if (extra.length > 0) {
      throw new AppError("INTERNAL_ERROR", `The staged ${to} store holds files the migration does not know how to install: ${extra.join(", ")}. Nothing was switched.`, {
        details: { layer, staging: layerDirOf(stage, layer), files: extra },
      });
    }
  }
  const stamp = await freeStamp(timestamp(o.now), layers.map((layer) => join(layerDirOf(live, layer), "backups")).concat(join(live.globalDir, "backups")));
  const moves: Array<{ from: string; to: string }> = [];
  const backups: MigrateStorageResult["backups"] = [];
  const installed: MigrateStorageResult["installed"] = [];
  const move = async (a: string, b: string): Promise<void> => {
    await moveFile(a, b);
    moves.push({ from: a, to: b });
  };
  let configUpdated = false;
  try {
    await o.onProgress?.({ phase: "commit", message: `Installing the ${to} data` });
    for (const layer of layers) {
      const liveFiles = await layerFiles(to, live, layer);
      if (liveFiles.length > 0) {
        const dir = join(layerDirOf(live, layer), "backups", `storage-${stamp}`);
        for (const file of liveFiles) await move(file.path, join(dir, file.name));
        backups.push({ layer, dir, files: liveFiles.map((f) => f.name) });
      }
      const placed: string[] = [];
      for (const file of await layerFiles(to, stage, layer)) {
        const destination = pathOf(to, file.name, live, layer);
        if (destination === null) continue;
        await move(file.path, destination);
        placed.push(destination);
      }
      installed.push({ layer, files: placed });
    }
    await o.mutateConfigFile((config) => {
      const storage = isPlainObject(config.storage) ? config.storage : {};
      if (storage.backend !== to) configUpdated = true;
      config.storage = { ...storage, backend: to };
    });
  } catch (error) {
    const undone = await rollback(moves);
    throw commitError(error, undone, from, to, cli);
  }
  return { stamp, backups, installed, configUpdated };
}

/**
 * After the switch: leaves `record` in `<globalDir>/backups/storage-<stamp>/migration.json` for
 * `storage status`, removes the staging directories, and warns when CASS_MEMORY_STORAGE still
 * names another backend. Failures here become warnings (the migration itself is done).
 */
export async function finishInstall(o: {
  live: StoreDirs;
  stage: StoreDirs;
  layers: readonly Layer[];
  to: StorageBackend;
  stamp: string;
  record: object;
  envBackend: StorageBackend | null;
  warnings: string[];
}): Promise<void> {
  const { live, to, warnings } = o;
  try {
    await atomicWriteFile(join(live.globalDir, "backups", `storage-${o.stamp}`, RECORD_FILE), `${JSON.stringify(o.record, null, 2)}\n`);
  } catch (error) {
    warnings.push(`Could not write the migration record: ${error instanceof Error ? error.message : String(error)}`);
  }
  for (const dir of o.layers.map((layer) => layerDirOf(o.stage, layer)).concat(stagingDir(live.globalDir, to))) {
    try {
      await rm(dir, { recursive: true, force: true });
    } catch (error) {
      warnings.push(`Could not remove the staging directory ${dir}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (o.envBackend !== null && o.envBackend !== to) {
    warnings.push(`CASS_MEMORY_STORAGE=${o.envBackend} is set: it overrides storage.backend, so processes with it still use ${o.envBackend}. Unset it to use ${to}.`);
  }
}
