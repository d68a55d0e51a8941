import { createHash } from "node:crypto";
import { copyFile, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { COST_DIR, PROCESSED_LOG_DIR, ONBOARDING_STATE_FILE, type Layer, type StorageBackend } from "@cass-memory/core";
import { SQLITE_DATABASE_FILE, type StoreDirs } from "./backend.js";

/**
 * Which files hold each backend's data, per layer, so that a migration can back up, install and
 * fingerprint them. The YAML list mirrors the files store-yaml writes (the original's): config.json,
 * starters, lock directories and caches are not store data and never move.
 */

/** One file of a layer's data: its path and its name relative to the layer (used in backups). */
export interface DataFile {
  name: string;
  path: string;
}

/** The layer logs' file names (both stores use the original's names). */
export const LOG_FILE_NAMES = ["outcomes.jsonl", "context-log.jsonl", "traumas.jsonl", "usage.jsonl", "privacy-audit.jsonl", "reflection-runs.jsonl"] as const;
/** The audit journal beside each playbook. */
export const JOURNAL_FILE_NAME = "events.jsonl";

const PROCESSED_FILE = /\.processed\.log$/;
const COST_FILE = /^(monthly-\d{4}-\d{2}\.jsonl|total\.json)$/;
const DIARY_FILE = /\.json$/;

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return false;
    throw error;
  }
}

async function filesIn(dir: string, pattern: RegExp): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries.filter((e) => e.isFile() && pattern.test(e.name)).map((e) => e.name).sort();
  } catch (error) {
    if (errnoOf(error) === "ENOENT" || errnoOf(error) === "ENOTDIR") return [];
    throw error;
  }
}

function layerDir(dirs: StoreDirs, layer: Layer): string | null {
  return layer === "global" ? dirs.globalDir : dirs.repoDir;
}

/** Where a YAML layer file of this name lives (the global playbook and diaries may be configured elsewhere). */
export function yamlPathOf(name: string, dirs: StoreDirs, layer: Layer): string | null {
  const dir = layerDir(dirs, layer);
  if (dir === null) return null;
  if (name === "playbook.yaml") return layer === "global" ? dirs.playbookPath : join(dir, name);
  if (name === JOURNAL_FILE_NAME) return layer === "global" ? join(dirname(dirs.playbookPath), name) : join(dir, name);
  if (name.startsWith("diary/")) return layer === "global" ? join(dirs.diaryDir, name.slice("diary/".length)) : null;
  return join(dir, name);
}

/** The YAML data files of a layer that exist. */
export async function yamlLayerFiles(dirs: StoreDirs, layer: Layer): Promise<DataFile[]> {
  const dir = layerDir(dirs, layer);
  if (dir === null) return [];
  const names: string[] = ["playbook.yaml", JOURNAL_FILE_NAME, "blocked.log", layer === "global" ? "toxic_bullets.log" : "toxic.log", ...LOG_FILE_NAMES];
  if (layer === "global") {
    names.push(ONBOARDING_STATE_FILE);
    for (const name of await filesIn(dirs.diaryDir, DIARY_FILE)) names.push(`diary/${name}`);
    for (const name of await filesIn(join(dir, PROCESSED_LOG_DIR), PROCESSED_FILE)) names.push(`${PROCESSED_LOG_DIR}/${name}`);
    for (const name of await filesIn(join(dir, COST_DIR), COST_FILE)) names.push(`${COST_DIR}/${name}`);
  }
  const found: DataFile[] = [];
  for (const name of names) {
    const path = yamlPathOf(name, dirs, layer);
    if (path !== null && (await isFile(path))) found.push({ name, path });
  }
  return found;
}

/** The layer's database file (null outside a repository for `repo`). */
export function sqliteDatabaseOf(dirs: StoreDirs, layer: Layer): string | null {
  if (layer === "global") return dirs.sqlitePath;
  return dirs.repoDir === null ? null : join(dirs.repoDir, SQLITE_DATABASE_FILE);
}

/** The SQLite files of a layer that exist: the database and its `-wal` / `-shm` companions. */
export async function sqliteLayerFiles(dirs: StoreDirs, layer: Layer): Promise<DataFile[]> {
  const db = sqliteDatabaseOf(dirs, layer);
  if (db === null) return [];
  const found: DataFile[] = [];
  for (const suffix of ["", "-wal", "-shm"]) {
    const path = `${db}${suffix}`;
    if (await isFile(path)) found.push({ name: `${SQLITE_DATABASE_FILE}${suffix}`, path });
  }
  return found;
}

/** Where a SQLite file of this name (`cass-memory.sqlite[-wal|-shm]`) lives in `dirs`. */
export function sqlitePathOf(name: string, dirs: StoreDirs, layer: Layer): string | null {
  const db = sqliteDatabaseOf(dirs, layer);
  return db === null ? null : `${db}${name.slice(SQLITE_DATABASE_FILE.length)}`;
}

export function layerFiles(backend: StorageBackend, dirs: StoreDirs, layer: Layer): Promise<DataFile[]> {
  return backend === "yaml" ? yamlLayerFiles(dirs, layer) : sqliteLayerFiles(dirs, layer);
}

export function pathOf(backend: StorageBackend, name: string, dirs: StoreDirs, layer: Layer): string | null {
  return backend === "yaml" ? yamlPathOf(name, dirs, layer) : sqlitePathOf(name, dirs, layer);
}

/** True when the backend holds anything for the layer (for YAML: any data file, for SQLite: the database). */
export async function layerHasData(backend: StorageBackend, dirs: StoreDirs, layer: Layer): Promise<boolean> {
  const files = await layerFiles(backend, dirs, layer);
  return backend === "yaml" ? files.length > 0 : files.some((f) => f.name === SQLITE_DATABASE_FILE);
}

/**
 * A fingerprint of a backend's data in the given layers: names, sizes and modification times of
 * its files (an empty `-wal` and the `-shm` index are left out: opening a database creates them
 * without changing any data). Equal fingerprints mean nothing was written in between.
 */
export async function fingerprint(backend: StorageBackend, dirs: StoreDirs, layers: readonly Layer[]): Promise<string> {
  const hash = createHash("sha256");
  hash.update(`${backend}\n`);
  for (const layer of layers) {
    for (const file of await layerFiles(backend, dirs, layer)) {
      if (file.name.endsWith("-shm")) continue;
      let info;
      try {
        info = await stat(file.path, { bigint: true });
      } catch (error) {
        if (errnoOf(error) === "ENOENT") continue;
        throw error;
      }
      if (file.name.endsWith("-wal") && info.size === 0n) continue;
      hash.update(`${layer}\t${file.name}\t${info.size}\t${info.mtimeNs}\t${info.ino}\n`);
    }
  }
  return hash.digest("hex");
}

/** Moves a file, creating the target's directory; across file systems it copies, then removes. */
export async function moveFile(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await rename(from, to);
  } catch (error) {
    if (errnoOf(error) !== "EXDEV") throw error;
    const temp = join(dirname(to), `.${basename(to)}.${process.pid}.moving`);
    await copyFile(from, temp);
    await rename(temp, to);
    await rm(from, { force: true });
  }
}
