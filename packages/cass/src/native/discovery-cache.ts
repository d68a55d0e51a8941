/**
 * Remembers the result of broad discovery walks for a while, so that a search does not walk the
 * user's whole home directory on every call.
 *
 * Most readers look in a fixed per-agent directory (`~/.claude/projects`, `~/.codex/sessions`, …)
 * and stay uncached: listing those is cheap, and a session an agent has just written must be
 * searchable at once. A reader whose `discover` walks a broad root instead (Aider: the home
 * directory to depth 5, looking for `.aider.chat.history.md` in project folders) declares a
 * `walkCacheKey`; its walk result per root — the list of paths found — is kept with the time of
 * the walk, in memory and in `<index dir>/discovery.json`, and reused until `ttlMs` has passed:
 *
 * - within the TTL a call does not walk: the remembered paths are stat-ed again, so a known file
 *   that changed is re-indexed at once and a deleted one disappears at once;
 * - a file created in a new place (a first Aider chat in another project) is only found by the
 *   next walk, so it can take up to the TTL (default ten minutes) to become searchable;
 * - one process (the MCP server) walks a root at most once per TTL, concurrent calls share one
 *   walk, and other processes reuse a walk persisted by any of them;
 * - a persisted record that is unreadable, damaged, from another format version or made with other
 *   walk rules (another `walkCacheKey`) is ignored and the root walked again; a file that cannot be
 *   written leaves the cache in memory only. The file is a cache, never a source of truth;
 * - the file is written only into an existing index directory (the history index creates it when
 *   it first indexes a session): a command that finds nothing to index (`cm doctor` on a new
 *   machine) leaves no directory behind, and its walks are remembered in memory only.
 */
import { existsSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";

import type { Logger } from "@cass-memory/core";

import type { DiscoveryEnv, SessionFileRef, SessionReader } from "../model.js";
import { toRefs } from "./readers/util.js";

/** How long a broad walk's result is reused (milliseconds) unless the source is told otherwise. */
export const DEFAULT_DISCOVERY_CACHE_TTL_MS = 10 * 60 * 1000;
/** The persisted walk results, next to the history index's manifest. */
export const DISCOVERY_CACHE_NAME = "discovery.json";
const FORMAT = "cass-memory-episodic-discovery";
const VERSION = 1;

/** A reader whose `discover` walks a broad root, and whose walk results may be remembered. */
export interface CachedWalkReader extends SessionReader {
  /**
   * Names the walk rules (e.g. `aider/2`): persisted results made under another key are ignored,
   * so changing what the walk finds means changing the key.
   */
  readonly walkCacheKey: string;
}

export function isCachedWalkReader(reader: SessionReader): reader is CachedWalkReader {
  const key = (reader as Partial<CachedWalkReader>).walkCacheKey;
  return typeof key === "string" && key !== "";
}

interface WalkRecord {
  /** The reader's `walkCacheKey`. */
  reader: string;
  /** The walked root (absolute). */
  root: string;
  /** When the walk ran (ms, by the cache's clock). */
  walkedAt: number;
  /** Absolute paths of the session files the walk found. */
  paths: string[];
}

interface CacheFile {
  format: string;
  version: number;
  walks: WalkRecord[];
}

export interface WalkCacheOptions {
  /** The persisted file; null keeps walk results in memory for this process only. */
  file: string | null;
  /** How long a walk's result is reused; 0 (or less) walks on every call. */
  ttlMs: number;
  /** Current time in ms (the source's clock). */
  now: () => number;
  logger: Logger;
}

function keyOf(reader: string, root: string): string {
  return `${reader}\u0000${root}`;
}

function isRecord(value: unknown): value is WalkRecord {
  if (typeof value !== "object" || value === null) return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r["reader"] === "string" &&
    typeof r["root"] === "string" &&
    typeof r["walkedAt"] === "number" &&
    Number.isFinite(r["walkedAt"]) &&
    Array.isArray(r["paths"]) &&
    r["paths"].every((p) => typeof p === "string" && isAbsolute(p))
  );
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error instanceof Error ? error.message : String(error));
}

export class WalkCache {
  private readonly file: string | null;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly logger: Logger;
  /** Walk results known to this process, by reader key and root. */
  private readonly memory = new Map<string, WalkRecord>();
  /** Walks made while the index directory did not exist yet, persisted by `flush`. */
  private readonly unsaved = new Map<string, WalkRecord>();
  /** Walks under way, shared by concurrent calls for the same root. */
  private readonly inflight = new Map<string, Promise<SessionFileRef[]>>();

  constructor(options: WalkCacheOptions) {
    this.file = options.file === null ? null : resolve(options.file);
    this.ttlMs = Number.isFinite(options.ttlMs) ? options.ttlMs : DEFAULT_DISCOVERY_CACHE_TTL_MS;
    this.now = options.now;
    this.logger = options.logger;
  }

  /**
   * The readers to run discovery with: readers that declare a broad walk are wrapped so their
   * `discover` goes through the cache; the others are returned unchanged. `fresh` walks again
   * whatever the cache holds (and remembers the new result).
   */
  wrap(readers: readonly SessionReader[], fresh = false): SessionReader[] {
    if (this.ttlMs <= 0) return [...readers];
    return readers.map((reader) => {
      if (!isCachedWalkReader(reader)) return reader;
      const wrapped: SessionReader = {
        agent: reader.agent,
        defaultRoots: (ctx: DiscoveryEnv) => reader.defaultRoots(ctx),
        discover: (root: string) => this.discover(reader, root, fresh),
        read: (ref: SessionFileRef) => reader.read(ref),
      };
      return wrapped;
    });
  }

  /** The session files of `reader` under `root`: remembered ones (stat-ed now) or a new walk's. */
  async discover(reader: CachedWalkReader, rootPath: string, fresh = false): Promise<SessionFileRef[]> {
    const root = resolve(rootPath);
    const key = keyOf(reader.walkCacheKey, root);
    const running = this.inflight.get(key);
    if (running !== undefined) return copyRefs(await running);
    if (!fresh) {
      const known = this.lookup(key);
      if (known !== null) return toRefs(reader.agent, known.paths);
    }
    const walk = this.walk(reader, root, key);
    this.inflight.set(key, walk);
    try {
      return copyRefs(await walk);
    } finally {
      this.inflight.delete(key);
    }
  }

  private fresh(record: WalkRecord, now: number): boolean {
    // A walk time in the future (a clock set back, a damaged record) counts as stale.
    return Number.isFinite(now) && record.walkedAt <= now && now - record.walkedAt < this.ttlMs;
  }

  /** A remembered walk of this root that is still within the TTL: this process's, else a persisted one. */
  private lookup(key: string): WalkRecord | null {
    const now = this.now();
    const mine = this.memory.get(key);
    if (mine !== undefined && this.fresh(mine, now)) return mine;
    for (const record of this.load()) {
      if (keyOf(record.reader, record.root) !== key || !this.fresh(record, now)) continue;
      this.memory.set(key, record);
      return record;
    }
    return null;
  }

  private async walk(reader: CachedWalkReader, root: string, key: string): Promise<SessionFileRef[]> {
    const walkedAt = this.now();
    const refs = await reader.discover(root);
    const record: WalkRecord = { reader: reader.walkCacheKey, root, walkedAt, paths: refs.map((r) => resolve(r.path)) };
    this.memory.set(key, record);
    this.unsaved.set(key, record);
    this.flush();
    return refs;
  }

  /**
   * Persists the walks not saved yet, once the index directory exists (call it after the history
   * index was brought up to date, which creates the directory when it indexes anything).
   */
  flush(): void {
    if (this.unsaved.size === 0 || this.file === null || !existsSync(dirname(this.file))) return;
    const records = [...this.unsaved.values()];
    this.unsaved.clear();
    this.persist(records);
  }

  /** The valid records of the persisted file (none when it is missing or damaged). */
  private load(): WalkRecord[] {
    if (this.file === null) return [];
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch (error) {
      if (errorCode(error) !== "ENOENT") this.logger.debug(`Discovery cache ${this.file} is not readable (${errorCode(error)}); walking again.`);
      return [];
    }
    try {
      const parsed = JSON.parse(text) as Partial<CacheFile> | null;
      if (parsed === null || typeof parsed !== "object" || parsed.format !== FORMAT || parsed.version !== VERSION || !Array.isArray(parsed.walks)) {
        this.logger.debug(`Discovery cache ${this.file} is not in the expected format; walking again.`);
        return [];
      }
      return parsed.walks.filter(isRecord);
    } catch {
      this.logger.debug(`Discovery cache ${this.file} is damaged; walking again.`);
      return [];
    }
  }

  /** Writes `records` into the persisted file with the other roots' still-fresh records. */
  private persist(records: readonly WalkRecord[]): void {
    if (this.file === null) return;
    const now = this.now();
    const replaced = new Set(records.map((r) => keyOf(r.reader, r.root)));
    const walks = [...this.load().filter((r) => !replaced.has(keyOf(r.reader, r.root)) && this.fresh(r, now)), ...records];
    const body: CacheFile = { format: FORMAT, version: VERSION, walks };
    const tmp = `${this.file}.${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 8)}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(body)}\n`, { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (error) {
      this.logger.debug(`Could not save the discovery cache ${this.file} (${errorCode(error)}); it is kept in memory for this run.`);
      try {
        unlinkSync(tmp);
      } catch {
        // Nothing was written.
      }
    }
  }
}

function copyRefs(refs: readonly SessionFileRef[]): SessionFileRef[] {
  return refs.map((r) => ({ ...r }));
}
