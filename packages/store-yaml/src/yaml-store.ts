import { constants as fsConstants } from "node:fs";
import { access, copyFile, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  AppError,
  createEmptyPlaybook,
  decodeBlockedEntries,
  defaultConfig,
  validateBlockedEntries,
  validatePlaybookForWrite,
} from "@cass-memory/core";
import type {
  BlockedEntry,
  InitializeOptions,
  InitializeResult,
  Layer,
  LayerStatus,
  LogName,
  LogReadResult,
  Logger,
  Playbook,
  Store,
  StoreLocations,
} from "@cass-memory/core";
import { atomicWriteFile } from "./atomic-write.js";
import { appendJsonl, readError, readJsonl } from "./jsonl.js";
import { withLock } from "./lock.js";
import type { LockOptions } from "./lock.js";
import { ParseCache, sha256Hex } from "./parse-cache.js";
import { REPO_PLAYBOOK_HEADER, decodePlaybook, leadingComments, toYaml } from "./yaml-codec.js";

export interface YamlStoreOptions {
  /** The global data directory (`~/.cass-memory`). */
  globalDir: string;
  /** The global playbook (config `playbookPath`); default `<globalDir>/playbook.yaml`. */
  globalPlaybookPath?: string;
  /** `<git root>/.cass`, or null outside a git repository. */
  repoDir: string | null;
  logger: Logger;
  lock?: { timeoutMs?: number; staleMs?: number };
  /**
   * Parse cache under `<globalDir>/.cache/` (default on). Playbook files smaller than `minBytes`
   * (default 32 KiB) are parsed directly: for them the cache costs more than it saves.
   */
  parseCache?: false | { minBytes?: number };
}

export const GLOBAL_LAYER_FILES = ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"] as const;
export const REPO_LAYER_FILES = ["playbook.yaml", "blocked.log"] as const;
export const GLOBAL_SUBDIRS = ["diary", "reflections", "embeddings", "cost"] as const;

const LOG_FILES: Readonly<Record<LogName, string>> = {
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
};

const DEFAULT_CACHE_MIN_BYTES = 32 * 1024;

function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into a git repository first",
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path, fsConstants.F_OK);
    return true;
  } catch {
    return false;
  }
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

interface LoadedPlaybook {
  playbook: Playbook;
  bytes: Buffer;
}

/** Copies `file` to `<file>.backup.<epoch-ms>` (never overwriting an earlier backup); returns the backup path. */
async function backupFile(file: string): Promise<string> {
  for (let ms = Date.now(); ; ms += 1) {
    const backup = `${file}.backup.${ms}`;
    try {
      await copyFile(file, backup, fsConstants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") {
        throw new AppError("FILE_WRITE_FAILED", `Could not back up ${file}: ${error instanceof Error ? error.message : String(error)}`, {
          hint: `Check that ${file} is readable and its directory writable.`,
          details: { path: file },
          cause: error,
        });
      }
    }
  }
}

/**
 * The store over the original's files: `~/.cass-memory/` (global layer) and `<git root>/.cass/`
 * (repo layer), in the original's formats, with the original's lock directories and atomic writes.
 */
export function createYamlStore(options: YamlStoreOptions): Store {
  const { globalDir, repoDir, logger } = options;
  const globalPlaybook = options.globalPlaybookPath ?? join(globalDir, "playbook.yaml");
  const repoPlaybook = repoDir === null ? null : join(repoDir, "playbook.yaml");
  const locations: StoreLocations = { globalDir, globalPlaybook, repoDir, repoPlaybook };
  const lockOptions: LockOptions = { ...options.lock, logger };
  const cache = options.parseCache === false ? null : new ParseCache(globalDir, logger);
  const cacheMinBytes = options.parseCache === false ? Infinity : (options.parseCache?.minBytes ?? DEFAULT_CACHE_MIN_BYTES);

  function layerDir(layer: Layer): string | null {
    return layer === "global" ? globalDir : repoDir;
  }

  function requireLayerDir(layer: Layer): string {
    const dir = layerDir(layer);
    if (dir === null) throw notInRepo();
    return dir;
  }

  function playbookPathOf(layer: Layer): string | null {
    return layer === "global" ? globalPlaybook : repoPlaybook;
  }

  /** Reads and validates a playbook file (parse cache first). Null when the file does not exist. */
  async function load(path: string, layer: Layer): Promise<LoadedPlaybook | null> {
    let bytes: Buffer;
    try {
      bytes = await readFile(path);
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return null;
      throw readError(path, error);
    }
    const useCache = cache !== null && bytes.length >= cacheMinBytes;
    const hash = useCache ? sha256Hex(bytes) : "";
    if (useCache) {
      const hit = await cache.get(path, hash);
      if (hit) return { playbook: hit, bytes };
    }
    const playbook = decodePlaybook(bytes.toString("utf8"), path, layer);
    if (useCache) await cache.put(path, hash, playbook);
    return { playbook, bytes };
  }

  async function readPlaybook(layer: Layer): Promise<Playbook | null> {
    const path = playbookPathOf(layer);
    if (path === null) return null;
    const loaded = await load(path, layer);
    return loaded?.playbook ?? null;
  }

  async function mutatePlaybook<T>(layer: Layer, fn: (playbook: Playbook) => T | Promise<T>): Promise<T> {
    const path = playbookPathOf(layer);
    if (path === null) throw notInRepo();
    let written: { text: string; playbook: Playbook } | null = null;
    const result = await withLock(
      path,
      async () => {
        const loaded = await load(path, layer);
        const playbook = loaded?.playbook ?? createEmptyPlaybook(new Date().toISOString(), layer);
        const header = loaded ? leadingComments(loaded.bytes.toString("utf8")) : layer === "repo" ? REPO_PLAYBOOK_HEADER : "";
        const value = await fn(playbook);
        const checked = validatePlaybookForWrite(playbook, path);
        const text = header + toYaml(checked);
        await atomicWriteFile(path, text);
        written = { text, playbook: checked };
        return value;
      },
      lockOptions,
    );
    // Prime the parse cache for the next reader, outside the lock (keyed by content, so races only miss).
    const done = written as { text: string; playbook: Playbook } | null;
    if (cache !== null && done !== null && Buffer.byteLength(done.text) >= cacheMinBytes) {
      await cache.put(path, sha256Hex(done.text), done.playbook);
    }
    return result;
  }

  async function readBlocked(layer: Layer): Promise<BlockedEntry[]> {
    const dir = layerDir(layer);
    if (dir === null) return [];
    const files = layer === "global" ? ["blocked.log", "toxic_bullets.log"] : ["blocked.log", "toxic.log"];
    const entries: BlockedEntry[] = [];
    for (const name of files) {
      const path = join(dir, name);
      const { values, malformed } = await readJsonl(path);
      const decoded = decodeBlockedEntries(values);
      entries.push(...decoded.entries);
      const invalid = malformed + decoded.invalid;
      if (invalid > 0) logger.warn(`Skipped ${invalid} malformed line(s) in ${path}`);
    }
    return entries;
  }

  async function appendBlocked(layer: Layer, entries: BlockedEntry[]): Promise<void> {
    const dir = requireLayerDir(layer);
    const records = validateBlockedEntries(entries);
    if (records.length === 0) return;
    const path = join(dir, "blocked.log");
    await withLock(path, () => appendJsonl(path, records), lockOptions);
  }

  async function appendLog(layer: Layer, log: LogName, records: unknown[]): Promise<void> {
    const dir = requireLayerDir(layer);
    if (records.length === 0) return;
    const path = join(dir, LOG_FILES[log]);
    await withLock(path, () => appendJsonl(path, records), lockOptions);
  }

  async function readLog(layer: Layer, log: LogName): Promise<LogReadResult> {
    const dir = layerDir(layer);
    if (dir === null) return { records: [], malformed: 0 };
    const { values, malformed } = await readJsonl(join(dir, LOG_FILES[log]));
    return { records: values, malformed };
  }

  async function layerStatus(layer: Layer): Promise<LayerStatus> {
    const expected = [...(layer === "global" ? GLOBAL_LAYER_FILES : REPO_LAYER_FILES)];
    const dir = layerDir(layer);
    if (dir === null) return { present: [], expected };
    const present: string[] = [];
    for (const name of expected) if (await exists(join(dir, name))) present.push(name);
    return { present, expected };
  }

  async function initialize(layer: Layer, init: InitializeOptions): Promise<InitializeResult> {
    const dir = requireLayerDir(layer);
    await mkdir(dir, { recursive: true });
    if (layer === "global") {
      for (const sub of GLOBAL_SUBDIRS) await mkdir(join(dir, sub), { recursive: true });
    }
    // Global --force rewrites config and playbook only (reference §1.5.1); the repo layer resets both files.
    const files: Array<{ name: string; content: () => string; rewrite: boolean }> =
      layer === "global"
        ? [
            { name: "config.json", content: () => JSON.stringify(init.config ?? defaultConfig(), null, 2), rewrite: true },
            { name: "playbook.yaml", content: () => toYaml(createEmptyPlaybook(init.nowIso, "global")), rewrite: true },
            { name: "blocked.log", content: () => "", rewrite: false },
            { name: "usage.jsonl", content: () => "", rewrite: false },
          ]
        : [
            { name: "playbook.yaml", content: () => REPO_PLAYBOOK_HEADER + toYaml(createEmptyPlaybook(init.nowIso, "repo")), rewrite: true },
            { name: "blocked.log", content: () => "", rewrite: true },
          ];
    const result: InitializeResult = { created: [], existed: [], overwritten: [], backups: [] };
    for (const file of files) {
      const path = join(dir, file.name);
      await withLock(
        path,
        async () => {
          if (!(await exists(path))) {
            await atomicWriteFile(path, file.content());
            result.created.push(file.name);
          } else if (init.overwrite && file.rewrite) {
            const backup = await backupFile(path);
            result.backups.push({ file: path, backup });
            await atomicWriteFile(path, file.content());
            result.overwritten.push(file.name);
          } else {
            result.existed.push(file.name);
          }
        },
        lockOptions,
      );
    }
    return result;
  }

  return {
    locations,
    readPlaybook,
    mutatePlaybook,
    readBlocked,
    appendBlocked,
    appendLog,
    readLog,
    layerStatus,
    initialize,
  };
}
