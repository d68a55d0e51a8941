import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { isPlainObject, type Layer, type StorageBackend } from "@cass-memory/core";
import type { Runtime } from "../runtime.js";
import { openStore, type OpenedStore, type PostgresStoreHandle, type SqliteStoreHandle, type StoreDirs } from "./backend.js";
import { redactDatabaseUrl, scrubDatabaseSecrets } from "./postgres.js";
import { fingerprint, layerFiles, sqliteDatabaseOf, yamlPathOf } from "./layout.js";
import { otherBackend, readProgress, stagingDir, type MigrationRecord } from "./migrate.js";

/** `cm storage status`: which backend is in use and why, and what each backend holds. */

export interface BackendLayerStatus {
  /** True when the backend holds data for the layer (YAML: any data file; SQLite: the database). */
  present: boolean;
  /** YAML: the data files that exist (names relative to the layer); SQLite: the database and its -wal/-shm. */
  files: string[];
  /** YAML: the playbook file; SQLite: the database file. */
  path: string | null;
  /** Bullets in the layer's playbook (null when there is none or it could not be read). */
  bullets: number | null;
  /** SQLite: the database's schema version. */
  schemaVersion?: number | null;
  /** SQLite: size of the database file in bytes. */
  bytes?: number | null;
  /** Why the layer could not be read, when it could not. */
  error?: string;
}

export interface LayerStorageStatus {
  layer: Layer;
  dir: string;
  yaml: BackendLayerStatus;
  sqlite: BackendLayerStatus;
  /** The layer in the PostgreSQL database (when one is configured). */
  postgres?: BackendLayerStatus & { space: string };
  /** True when the backend not in use holds data for this layer (left from before a switch, or not migrated yet). */
  otherBackendData: boolean;
}

export interface StorageStatus {
  backend: StorageBackend;
  /** Where the choice comes from. */
  source: "env" | "config" | "default";
  reason: string;
  configPath: string;
  globalDir: string;
  repoDir: string | null;
  /** The global SQLite database (`storage.path`), whether in use or not. */
  sqlitePath: string;
  /** The PostgreSQL database (null when no URL is set). The URL is shown without its password. */
  postgres: {
    url: string;
    urlSource: "env" | "config";
    schema: string;
    reachable: boolean;
    schemaVersion: number | null;
    error?: string;
  } | null;
  layers: LayerStorageStatus[];
  migration: {
    /** A migration that was interrupted (its staging directory and progress are kept for a rerun). */
    unfinished: Array<{ to: StorageBackend; from: StorageBackend | null; layers: Layer[]; completed: number; startedAt: string | null; updatedAt: string | null; stagingDirs: string[] }>;
    /** The last committed migration, and whether its source changed afterwards (a process still using it wrote). */
    last: (MigrationRecord & { record: string; sourceChangedSince: boolean | null }) | null;
  };
  /** What to do about what was found. */
  hints: string[];
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

async function readJson(path: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as unknown;
  } catch {
    return undefined;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function yamlStatus(store: OpenedStore | null, dirs: StoreDirs, layer: Layer): Promise<BackendLayerStatus> {
  const files = (await layerFiles("yaml", dirs, layer)).map((f) => f.name);
  const path = yamlPathOf("playbook.yaml", dirs, layer);
  const status: BackendLayerStatus = { present: files.length > 0, files, path, bullets: null };
  if (store !== null && files.includes("playbook.yaml")) {
    try {
      status.bullets = (await store.store.readPlaybook(layer))?.bullets.length ?? null;
    } catch (error) {
      status.error = message(error);
    }
  }
  return status;
}

async function sqliteStatus(store: OpenedStore | null, dirs: StoreDirs, layer: Layer): Promise<BackendLayerStatus> {
  const files = (await layerFiles("sqlite", dirs, layer)).map((f) => f.name);
  const path = sqliteDatabaseOf(dirs, layer);
  const present = files.includes("cass-memory.sqlite");
  const status: BackendLayerStatus = { present, files, path, bullets: null, schemaVersion: null, bytes: null };
  if (!present || path === null) return status;
  try {
    status.bytes = (await stat(path)).size;
  } catch {
    // vanished meanwhile
  }
  if (store === null) return status;
  const sqlite = store.store as SqliteStoreHandle;
  try {
    status.schemaVersion = await sqlite.schemaVersion(layer);
    const index = (store.store as { candidates?: { countBullets(layer: Layer): Promise<number> } }).candidates;
    status.bullets = index !== undefined ? await index.countBullets(layer) : ((await sqlite.readPlaybook(layer))?.bullets.length ?? null);
  } catch (error) {
    status.error = message(error);
  }
  return status;
}

/** The configured PostgreSQL database: reachable or why not, its schema version and what each layer holds. Errors never carry the password. */
async function postgresStatus(
  dirs: StoreDirs,
  layers: Layer[],
  openOptions: { logger: Runtime["deps"]["logger"] },
): Promise<{ postgres: StorageStatus["postgres"]; layers: Map<Layer, BackendLayerStatus & { space: string }> }> {
  const byLayer = new Map<Layer, BackendLayerStatus & { space: string }>();
  const settings = dirs.postgres;
  if (settings === undefined || settings.url === null || settings.urlSource === null) return { postgres: null, layers: byLayer };
  const url = settings.url;
  const status: NonNullable<StorageStatus["postgres"]> = {
    url: redactDatabaseUrl(url),
    urlSource: settings.urlSource,
    schema: settings.schema ?? "cass_memory",
    reachable: false,
    schemaVersion: null,
  };
  let opened: OpenedStore | null = null;
  try {
    opened = await openStore("postgres", dirs, openOptions);
    const store = opened.store as PostgresStoreHandle;
    status.schemaVersion = await store.schemaVersion();
    status.reachable = true;
    for (const layer of layers) {
      const space = layer === "global" ? store.database.spaces.global : store.database.spaces.repo;
      if (space === null) continue;
      const bullets = await store.candidates.countBullets(layer);
      const present = (await store.layerStatus(layer)).present.some((name) => name !== "config.json") || bullets > 0;
      byLayer.set(layer, { present, files: [], path: `${status.url}#${space}`, bullets: present ? bullets : null, schemaVersion: status.schemaVersion, space });
    }
  } catch (error) {
    status.error = scrubDatabaseSecrets(message(error), url);
  } finally {
    opened?.close();
  }
  return { postgres: status, layers: byLayer };
}

async function backendSource(rt: Runtime): Promise<{ source: StorageStatus["source"]; reason: string }> {
  if (rt.storage.envBackend !== null) return { source: "env", reason: `CASS_MEMORY_STORAGE=${rt.storage.envBackend}` };
  const raw = await readJson(rt.paths.configPath);
  if (isPlainObject(raw) && isPlainObject(raw.storage) && typeof raw.storage.backend === "string") {
    return { source: "config", reason: `storage.backend in ${rt.paths.configPath}` };
  }
  return { source: "default", reason: "the default (storage.backend is not set)" };
}

async function lastMigration(rt: Runtime): Promise<StorageStatus["migration"]["last"]> {
  const dir = join(rt.storage.dirs.globalDir, "backups");
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.startsWith("storage-")).sort();
  } catch {
    return null;
  }
  for (const name of names.reverse()) {
    const path = join(dir, name, "migration.json");
    const value = await readJson(path);
    if (!isPlainObject(value) || typeof value.from !== "string" || typeof value.to !== "string") continue;
    const record = value as unknown as MigrationRecord;
    let changed: boolean | null = null;
    if (record.to === rt.storage.backend && isPlainObject(record.sourceFingerprints)) {
      const layers = (Object.keys(record.sourceFingerprints) as Layer[]).filter((l) => l === "global" || (l === "repo" && record.repoDir === rt.storage.dirs.repoDir));
      changed = false;
      for (const layer of layers) {
        if ((await fingerprint(record.from, rt.storage.dirs, [layer])) !== record.sourceFingerprints[layer]) changed = true;
      }
    }
    return { ...record, record: path, sourceChangedSince: changed };
  }
  return null;
}

/** What `cm storage status` reports. Reads only (stores are opened to count bullets, and closed). */
export async function storageStatus(rt: Runtime): Promise<StorageStatus> {
  const dirs = rt.storage.dirs;
  const cli = rt.deps.cliName;
  const backend = rt.storage.backend;
  const layersWanted: Layer[] = dirs.repoDir !== null ? ["global", "repo"] : ["global"];
  const openOptions = { logger: rt.deps.logger, parseCache: false as const, ...(rt.storage.loadSqlite ? { loadSqlite: rt.storage.loadSqlite } : {}), ...(rt.storage.loadPostgres ? { loadPostgres: rt.storage.loadPostgres } : {}) };

  const anyDatabase = (await Promise.all(layersWanted.map((l) => exists(sqliteDatabaseOf(dirs, l) ?? "")))).some(Boolean);
  const yamlStore = await openStore("yaml", dirs, openOptions);
  let sqliteStore: OpenedStore | null = null;
  const hints: string[] = [];
  const layers: LayerStorageStatus[] = [];
  const { postgres, layers: postgresLayers } = await postgresStatus(dirs, layersWanted, openOptions);
  if (postgres?.error !== undefined) {
    hints.push(`The PostgreSQL database ${postgres.url} cannot be used: ${postgres.error}`);
  } else if (backend === "postgres" && postgres === null) {
    hints.push(`storage.backend is postgres but no database URL is set: set CASS_MEMORY_DATABASE_URL (or storage.postgres.url in ${rt.paths.configPath}).`);
  }
  try {
    if (anyDatabase) {
      try {
        sqliteStore = await openStore("sqlite", dirs, openOptions);
      } catch (error) {
        hints.push(`The SQLite store could not be loaded: ${message(error)}`);
      }
    }
    for (const layer of layersWanted) {
      const yaml = await yamlStatus(yamlStore, dirs, layer);
      const sqlite = await sqliteStatus(sqliteStore, dirs, layer);
      const pg = postgresLayers.get(layer);
      if (backend === "postgres") {
        const local = yaml.present || sqlite.present;
        layers.push({ layer, dir: layer === "global" ? dirs.globalDir : (dirs.repoDir as string), yaml, sqlite, ...(pg ? { postgres: pg } : {}), otherBackendData: local });
        if (local && pg !== undefined && !pg.present) {
          hints.push(`The ${layer} layer's data is in this machine's ${yaml.present ? "yaml" : "sqlite"} files only: run '${cli} storage migrate --to postgres' to move it into the database.`);
        }
        continue;
      }
      const inUse = backend === "yaml" ? yaml : sqlite;
      const other = backend === "yaml" ? sqlite : yaml;
      layers.push({ layer, dir: layer === "global" ? dirs.globalDir : (dirs.repoDir as string), yaml, sqlite, ...(pg ? { postgres: pg } : {}), otherBackendData: other.present });
      if (other.present && !inUse.present) {
        hints.push(`The ${layer} layer's data is in ${otherBackend(backend)} only: run '${cli} storage migrate --to ${backend}' to use it with ${backend}.`);
      } else if (other.present) {
        hints.push(`The ${layer} layer's ${otherBackend(backend)} data is not used (left from before a switch to ${backend}); it can stay as a backup or be removed.`);
      }
    }
  } finally {
    sqliteStore?.close();
    yamlStore.close();
  }

  const unfinished: StorageStatus["migration"]["unfinished"] = [];
  for (const to of ["yaml", "sqlite"] as const) {
    const staging = [stagingDir(dirs.globalDir, to), ...(dirs.repoDir !== null ? [stagingDir(dirs.repoDir, to)] : [])];
    const present: string[] = [];
    for (const dir of staging) if (await exists(dir)) present.push(dir);
    if (present.length === 0) continue;
    const progress = await readProgress(dirs.globalDir, to);
    unfinished.push({
      to,
      from: progress?.from ?? null,
      layers: progress?.layers ?? [],
      completed: progress?.completed.length ?? 0,
      startedAt: progress?.startedAt ?? null,
      updatedAt: progress?.updatedAt ?? null,
      stagingDirs: present,
    });
    hints.push(`A migration to ${to} was interrupted: run '${cli} storage migrate --to ${to}' to finish it (copied sections are kept), or remove ${present.join(" and ")}.`);
  }

  const last = await lastMigration(rt);
  if (last?.sourceChangedSince) {
    hints.push(
      `The ${last.from} data changed after the migration to ${last.to} (${last.at}): a process still using ${last.from} wrote to it, and those changes are not in ${last.to}. Compare with 'CASS_MEMORY_STORAGE=${last.from} ${cli} playbook export' and bring rules over with '${cli} playbook import'.`,
    );
  }
  if (rt.storage.envBackend !== null) {
    hints.push(`CASS_MEMORY_STORAGE overrides storage.backend of config.json for processes that have it set.`);
  }
  const { source, reason } = await backendSource(rt);
  return {
    backend,
    source,
    reason,
    configPath: rt.paths.configPath,
    globalDir: dirs.globalDir,
    repoDir: dirs.repoDir,
    sqlitePath: dirs.sqlitePath,
    postgres,
    layers,
    migration: { unfinished, last },
    hints,
  };
}
