import { isAscii } from "node:buffer";
import { createHash } from "node:crypto";
import { readFileSync, type BigIntStats } from "node:fs";
import { mkdir, readdir, rename, unlink, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { type Logger, type Playbook, sha256Hex as sha256HexJs } from "@cass-memory/core";
import { FILE_MODE, atomicWriteFile, tempPathFor } from "@cass-memory/node-files";

/**
 * Parse cache for large playbooks. Parsing 8 MB of YAML takes seconds with the `yaml` package; the
 * validated playbook is therefore kept as JSON under `<globalDir>/.cache/`, in a file named after
 * the playbook's path, the cache format and the SHA-256 of the playbook file's exact bytes. A hit
 * needs no YAML parse and no zod (the data was validated before it was cached); any change to the
 * file changes the hash and misses. At most one cache file is kept per playbook path.
 *
 * Beside it, `playbook-<path hash>.v1.stat.json` remembers which hash the file had at a given stat
 * (device, inode, size, modification and change times in nanoseconds), so that a read of an unchanged
 * file needs neither reading nor hashing it (≈10 MB at 10,000 rules). It is written only for a file
 * whose last change is STAT_SETTLED_MS older than the read (as git does for racily clean files): any
 * later write then gives the file another change time, so a recorded stat never names other bytes.
 */

/** Bump when the cached shape or the validation that produced it changes. */
export const PARSE_CACHE_FORMAT = 1;

/** A file's stat is recorded only when its last change is at least this much older than the read. */
export const STAT_SETTLED_MS = 2000;

/** What identifies one version of a file without reading it. */
export function statKey(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

interface CacheRecord {
  format: number;
  path: string;
  hash: string;
  playbook: Playbook;
}

/** True when JSON.stringify/parse gives back exactly the same data (finite numbers, plain objects). */
export function isJsonFaithful(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (const item of value) if (item === undefined || !isJsonFaithful(item)) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      for (const key of Object.keys(value)) {
        const inner = (value as Record<string, unknown>)[key];
        if (inner !== undefined && !isJsonFaithful(inner)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/**
 * Replaces a cache file through a temp file and a rename, like atomicWriteFile but without the
 * fsync (≈5 ms for a 1 MB record, on every mutation): after a crash a cache file may be empty or
 * torn, never another version's content (each name holds one content, and the records name their
 * hash and path), and a torn record fails JSON parsing or the layout checks, so it is only a miss.
 */
async function writeCacheFile(path: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<void> {
  const tmp = tempPathFor(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(tmp, data, { mode: FILE_MODE, flag: "wx" });
    await rename(tmp, path);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
}

export class ParseCache {
  readonly dir: string;
  private readonly logger: Logger;

  constructor(globalDir: string, logger: Logger) {
    this.dir = join(globalDir, ".cache");
    this.logger = logger;
  }

  private prefixFor(path: string): string {
    // Core's SHA-256 (the same digest): hashing one short path must not load node:crypto on the
    // warm read, which needs no other hashing (~8 ms per process).
    return `playbook-${sha256HexJs(resolve(path)).slice(0, 16)}.`;
  }

  private fileFor(path: string, hash: string): string {
    return `${this.prefixFor(path)}v${PARSE_CACHE_FORMAT}.${hash}.json`;
  }

  private statFileFor(path: string): string {
    return `${this.prefixFor(path)}v${PARSE_CACHE_FORMAT}.stat.json`;
  }

  private layoutFileFor(path: string): string {
    return `${this.prefixFor(path)}v${PARSE_CACHE_FORMAT}.layout.json`;
  }

  /** The raw bytes of the cache file for these playbook bytes, or null. Never throws. */
  readBytes(path: string, hash: string): Buffer | null {
    try {
      return readFileSync(join(this.dir, this.fileFor(path, hash)));
    } catch {
      return null;
    }
  }

  /** The recorded layout of the playbook at `path` (playbook-splice.ts; unchecked), or null. Never throws. */
  readLayout(path: string): unknown {
    try {
      return JSON.parse(readFileSync(join(this.dir, this.layoutFileFor(path)), "utf8")) as unknown;
    } catch {
      return null;
    }
  }

  /** Records a playbook's layout (after putBytes, which removes older files of the playbook). Best effort. */
  async writeLayout(path: string, layout: object): Promise<void> {
    try {
      await writeCacheFile(join(this.dir, this.layoutFileFor(path)), JSON.stringify(layout));
    } catch (error) {
      this.logger.debug(`Could not record the layout of ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The hash recorded (noteStat) for the file at `path` with this stat key, or null. Never throws. */
  hashForStat(path: string, key: string): string | null {
    return this.statRecordFor(path, key)?.hash ?? null;
  }

  /**
   * What noteStat recorded for the file at `path` with this stat key: the hash of its bytes, and
   * whether the cache file of that hash was found to be ASCII (`ascii`). Null when nothing matches.
   * Never throws.
   */
  statRecordFor(path: string, key: string): { hash: string; ascii: boolean } | null {
    try {
      const record = JSON.parse(readFileSync(join(this.dir, this.statFileFor(path)), "utf8")) as { format?: unknown; path?: unknown; stat?: unknown; hash?: unknown; ascii?: unknown } | null;
      if (record === null || record.format !== PARSE_CACHE_FORMAT || record.path !== resolve(path) || record.stat !== key) return null;
      return typeof record.hash === "string" && /^[0-9a-f]{64}$/.test(record.hash) ? { hash: record.hash, ascii: record.ascii === true } : null;
    } catch {
      return null;
    }
  }

  /**
   * Records that the file at `path`, with stat `info` taken before its bytes were read from the same
   * open file, has bytes with `hash`, when its last change is settled (STAT_SETTLED_MS). `ascii`:
   * the cache file of `hash` was read and is ASCII, so reads by this record may skip that check
   * (every cache file of one hash holds the same playbook as JSON, so the same characters). Best effort.
   */
  async noteStat(path: string, info: BigIntStats, hash: string, ascii = false): Promise<void> {
    const changedMs = Number((info.ctimeNs > info.mtimeNs ? info.ctimeNs : info.mtimeNs) / 1_000_000n);
    if (changedMs > Date.now() - STAT_SETTLED_MS) return;
    try {
      const record = { format: PARSE_CACHE_FORMAT, path: resolve(path), stat: statKey(info), hash, ...(ascii ? { ascii: true } : {}) };
      await atomicWriteFile(join(this.dir, this.statFileFor(path)), JSON.stringify(record));
    } catch (error) {
      this.logger.debug(`Could not record the stat of ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** The cached playbook for these exact bytes, or null. Never throws. */
  async get(path: string, hash: string): Promise<Playbook | null> {
    return (await this.read(path, hash))?.playbook ?? null;
  }

  /**
   * get(), also saying whether the cache file is ASCII. `knownAscii`: a stat record said so (the
   * check, ≈15 ms at 10,000 rules, is skipped; a file damaged since reads as Latin-1, as damage
   * within ASCII reads as whatever it became). Never throws.
   */
  async read(path: string, hash: string, knownAscii = false): Promise<{ playbook: Playbook; ascii: boolean } | null> {
    let text: string;
    let ascii: boolean;
    try {
      // One synchronous read into a buffer, decoded as Latin-1 when it is ASCII (JSON.stringify's
      // output usually is): a one-byte copy, and the cheapest string for JSON.parse. Measured on
      // 9 MB (10,000 rules): ≈90 ms CPU, against ≈160 ms for readFileSync(…, "utf8").
      const bytes = readFileSync(join(this.dir, this.fileFor(path, hash)));
      ascii = knownAscii || isAscii(bytes);
      text = ascii ? bytes.toString("latin1") : bytes.toString("utf8");
    } catch {
      return null;
    }
    try {
      const record = JSON.parse(text) as Partial<CacheRecord>;
      if (record.format !== PARSE_CACHE_FORMAT || record.hash !== hash || record.path !== resolve(path)) return null;
      const playbook = record.playbook;
      if (typeof playbook !== "object" || playbook === null || !Array.isArray(playbook.bullets)) return null;
      return { playbook, ascii };
    } catch (error) {
      this.logger.debug(`Ignoring unreadable parse cache for ${path}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  /**
   * Stores a validated playbook for the bytes with `hash` and removes older cache files of the same
   * playbook. Best effort: failures are logged at debug level and never thrown.
   */
  async put(path: string, hash: string, playbook: Playbook): Promise<void> {
    try {
      if (!isJsonFaithful(playbook)) {
        this.logger.debug(`Not caching ${path}: it holds values JSON cannot represent exactly.`);
        return;
      }
      const record: CacheRecord = { format: PARSE_CACHE_FORMAT, path: resolve(path), hash, playbook };
      await this.putBytes(path, hash, JSON.stringify(record));
    } catch (error) {
      this.logger.debug(`Could not write the parse cache for ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /**
   * Stores an already serialised cache record (JSON of `{format, path, hash, playbook}` with a
   * validated playbook; pieces are written in order) and removes the other files of the same playbook. Returns whether it was
   * written; failures are logged at debug level and never thrown.
   */
  async putBytes(path: string, hash: string, data: string | Uint8Array | readonly Uint8Array[]): Promise<boolean> {
    try {
      const name = this.fileFor(path, hash);
      await writeCacheFile(join(this.dir, name), data);
      const prefix = this.prefixFor(path);
      for (const entry of await readdir(this.dir)) {
        if (entry !== name && entry.startsWith(prefix) && !entry.includes(".tmp.")) {
          await unlink(join(this.dir, entry)).catch(() => undefined);
        }
      }
      return true;
    } catch (error) {
      this.logger.debug(`Could not write the parse cache for ${path}: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }
}
