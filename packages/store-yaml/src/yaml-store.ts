import { constants as fsConstants } from "node:fs";
import type { BigIntStats } from "node:fs";
import { access, mkdir, open, readFile, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import {
  AppError,
  JournalEventSchema,
  createEmptyPlaybook,
  decodeBlockedEntries,
  defaultConfig,
  noteTextSource,
  checkJournalEventsForWrite,
  parseJsonLines,
  rewriteJournalText,
  updateLogText,
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
  LogRecordUpdate,
  LogUpdateResult,
  Logger,
  JournalEvent,
  MutationScope,
  MutationTx,
  Playbook,
  StarterFile,
  Store,
  StoreLocations,
} from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/node-files";
import { backupFile, createYamlDiagnostics } from "./diagnostics.js";
import { appendJsonl, listDir, readError, readJsonl } from "@cass-memory/node-files";
import { crashPoint, withLock } from "@cass-memory/node-files";
import { INTENT_FORMAT, intentPathFor, pendingView, readBytesOrNull, settleIntent, writeIntent } from "./journal-intent.js";
import { createLearningFiles } from "./learning-files.js";
import { createOnboardingFiles } from "./onboarding.js";
import { createYamlTransfer } from "./transfer.js";
import type { LockOptions } from "@cass-memory/node-files";
import { PARSE_CACHE_FORMAT, ParseCache, isJsonFaithful, sha256Hex, statKey } from "./parse-cache.js";
import { LAYOUT_FORMAT, checkLayout, readScoped, serializeCacheRecord, spliceScoped, writeBulletJsons, yamlLayoutOf } from "./playbook-splice.js";
import type { CacheRecordBytes, PlaybookLayout, SplicedPlaybook } from "./playbook-splice.js";
import { REPO_PLAYBOOK_HEADER, decodePlaybook, fromYaml, leadingComments, toYaml } from "./yaml-codec.js";

export interface YamlStoreOptions {
  /** The global data directory (`~/.cass-memory`). */
  globalDir: string;
  /** The global playbook (config `playbookPath`); default `<globalDir>/playbook.yaml`. */
  globalPlaybookPath?: string;
  /** The diary directory (config `diaryDir`), checked by `diagnose`; default `<globalDir>/diary`. */
  diaryDir?: string;
  /** `<git root>/.cass`, or null outside a git repository. */
  repoDir: string | null;
  logger: Logger;
  lock?: { timeoutMs?: number; staleMs?: number };
  /**
   * Parse cache under `<globalDir>/.cache/` (default on). Playbook files smaller than `minBytes`
   * (default 32 KiB) are parsed directly: for them the cache costs more than it saves.
   */
  parseCache?: false | { minBytes?: number };
  /** The clock used for the cost ledger's day and month buckets (default: the system clock). */
  now?: () => Date;
  /**
   * Keep the last parsed playbook of each file in memory and return it while the file is
   * unchanged (same inode, size and times; every write replaces the inode). For long-running
   * processes (the MCP server, `cm daemon`); the memo is shared by all such stores of the process
   * and holds up to 8 files. The returned playbooks are deeply frozen: read results must not be
   * modified (mutations go through `mutatePlaybook`, which always reads the file).
   */
  memoizeReads?: boolean;
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
  "reflection-runs": "reflection-runs.jsonl",
};

const DEFAULT_CACHE_MIN_BYTES = 32 * 1024;

/** The audit journal's file name, beside each playbook (beyond the original). */
export const JOURNAL_FILE = "events.jsonl";

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

/** What a playbook mutation wrote: the whole playbook re-emitted, or changed bullets spliced in. */
type Written =
  | { kind: "full"; bytes: Buffer; hash: string; playbook: Playbook; header: string }
  | { kind: "splice"; bytes: Buffer; hash: string; spliced: SplicedPlaybook };

interface LoadedPlaybook {
  playbook: Playbook;
  bytes: Buffer;
  /** SHA-256 of `bytes` when it was computed (parse cache). */
  hash?: string;
  /** The file's stat, taken on the open file before `bytes` were read from it (parse cache). */
  info?: BigIntStats;
  /** The playbook came from a parse cache file that is ASCII. */
  ascii?: boolean;
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

  /** A playbook file's bytes, with its stat taken on the open file first (parse cache). Null when it does not exist. */
  async function readRaw(path: string): Promise<{ bytes: Buffer; info?: BigIntStats } | null> {
    try {
      const handle = await open(path, "r");
      try {
        const info = cache !== null ? await handle.stat({ bigint: true }) : undefined;
        const bytes = await handle.readFile();
        return info !== undefined ? { bytes, info } : { bytes };
      } finally {
        await handle.close();
      }
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return null;
      throw readError(path, error);
    }
  }

  /** The SHA-256 of a file's bytes when the parse cache is used for it, else undefined. */
  function cacheHashOf(bytes: Buffer): string | undefined {
    return cache !== null && bytes.length >= cacheMinBytes ? sha256Hex(bytes) : undefined;
  }

  /** Validates the bytes read by readRaw (parse cache first); `hash` is cacheHashOf(bytes). */
  async function decodeRaw(raw: { bytes: Buffer; info?: BigIntStats }, hash: string | undefined, path: string, layer: Layer): Promise<LoadedPlaybook> {
    const { bytes, info } = raw;
    if (cache !== null && hash !== undefined) {
      const hit = await cache.read(path, hash);
      if (hit) return { playbook: hit.playbook, bytes, hash, ascii: hit.ascii, ...(info ? { info } : {}) };
    }
    const playbook = decodePlaybook(bytes.toString("utf8"), path, layer);
    if (cache !== null && hash !== undefined) {
      await cache.put(path, hash, playbook);
      return { playbook, bytes, hash, ...(info ? { info } : {}) };
    }
    return { playbook, bytes };
  }

  /** Reads and validates a playbook file (parse cache first). Null when the file does not exist. */
  async function load(path: string, layer: Layer): Promise<LoadedPlaybook | null> {
    const raw = await readRaw(path);
    return raw === null ? null : decodeRaw(raw, cacheHashOf(raw.bytes), path, layer);
  }

  /**
   * For a mutation scoped to some bullets: the recorded layout of these exact bytes, the parse cache
   * bytes it refers to, and the head and scoped bullets decoded (playbook-splice.ts). Null when the
   * file cannot be spliced (the full read and write are used).
   */
  function prepareSplice(path: string, bytes: Buffer, hash: string, bulletIds: readonly string[]) {
    if (cache === null) return null;
    const cacheBytes = cache.readBytes(path, hash);
    if (cacheBytes === null) return null;
    const layout = checkLayout(cache.readLayout(path), resolve(path), hash, bytes, cacheBytes);
    if (layout === null) return null;
    const read = readScoped(bytes, layout, bulletIds, path);
    return read === null ? null : { layout, cacheBytes, read };
  }

  /**
   * After a write, still under the playbook's lock: the parse cache record of the new bytes for the
   * next reader, then their layout for the next writer (which then finds it even when it was waiting
   * for the lock). Best effort, never throws; a crash before it only costs the next reader a parse.
   */
  async function recordWritten(path: string, written: Written): Promise<void> {
    if (cache === null || written.bytes.length < cacheMinBytes) return;
    const absPath = resolve(path);
    let record: CacheRecordBytes | null = null;
    let layout: Omit<PlaybookLayout, "format" | "path" | "hash" | "cache"> | null = null;
    try {
      if (written.kind === "splice") {
        record = written.spliced.cacheRecord(PARSE_CACHE_FORMAT, absPath, written.hash);
        layout = written.spliced.layout;
      } else if (isJsonFaithful(written.playbook)) {
        const jsons = written.playbook.bullets.map((bullet) => JSON.stringify(bullet));
        record = serializeCacheRecord(PARSE_CACHE_FORMAT, absPath, written.hash, written.playbook, writeBulletJsons(jsons));
        layout = yamlLayoutOf(written.bytes, written.header, written.playbook);
      }
    } catch (error) {
      logger.debug(`Could not lay out ${path} for the parse cache: ${error instanceof Error ? error.message : String(error)}`);
      record = null;
    }
    if (record === null) {
      // Values JSON cannot hold exactly (put() declines them), or a splice without the old cache.
      if (written.kind === "full") await cache.put(path, written.hash, written.playbook);
      return;
    }
    if (!(await cache.putBytes(path, written.hash, record.parts)) || layout === null) return;
    await cache.writeLayout(path, {
      format: LAYOUT_FORMAT,
      path: absPath,
      hash: written.hash,
      ...layout,
      cache: { size: record.size, starts: record.starts, ends: record.ends },
    } satisfies PlaybookLayout);
  }

  /**
   * load() for reads: a file whose stat is recorded with the hash of its bytes (parse-cache.ts) is
   * served from the parse cache without reading or hashing it; otherwise load() and record the stat.
   */
  async function loadForRead(path: string, layer: Layer): Promise<Playbook | null> {
    if (cache !== null) {
      const info = await stat(path, { bigint: true }).catch(() => null);
      if (info !== null && Number(info.size) >= cacheMinBytes) {
        const recorded = cache.statRecordFor(path, statKey(info));
        const hit = recorded === null ? null : await cache.read(path, recorded.hash, recorded.ascii);
        if (hit && recorded !== null) {
          // A record from before the ASCII flag (or a miss's): add it once the file is found ASCII.
          if (hit.ascii && !recorded.ascii) await cache.noteStat(path, info, recorded.hash, true);
          return vouchForTexts(hit.playbook, layer, recorded.hash);
        }
      }
    }
    const loaded = await load(path, layer);
    if (loaded === null) return null;
    if (cache !== null && loaded.hash !== undefined && loaded.info !== undefined) await cache.noteStat(path, loaded.info, loaded.hash, loaded.ascii === true);
    return loaded.hash !== undefined ? vouchForTexts(loaded.playbook, layer, loaded.hash) : loaded.playbook;
  }

  /**
   * Tells core's ranker that the texts of this read's bullets are those decoded from the file bytes
   * with SHA-256 `hash` (noteTextSource), so the saved lexical index is found without hashing every
   * text. The decoder's version (PARSE_CACHE_FORMAT, bumped when decoding changes) and the layer
   * are part of the source.
   */
  function vouchForTexts(playbook: Playbook, layer: Layer, hash: string): Playbook {
    noteTextSource(playbook.bullets, `yaml-v${PARSE_CACHE_FORMAT}-${layer}-${hash}`);
    return playbook;
  }

  async function readPlaybook(layer: Layer): Promise<Playbook | null> {
    const path = playbookPathOf(layer);
    if (path === null) return null;
    if (!options.memoizeReads) return loadForRead(path, layer);
    // What a read returns depends only on the file's bytes and the layer, so the memo is shared by
    // every store of the process (the resident `cm daemon` opens one per command).
    const memoKey = `${layer}\u0000${resolve(path)}`;
    let key: string;
    try {
      const info = await stat(path, { bigint: true });
      key = `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
    } catch (error) {
      readMemo.delete(memoKey);
      if (errnoOf(error) === "ENOENT") return null;
      throw readError(path, error);
    }
    const hit = readMemo.get(memoKey);
    if (hit !== undefined && hit.key === key) {
      // Most recently used last: the first entry is the one to drop when the memo is full.
      readMemo.delete(memoKey);
      readMemo.set(memoKey, hit);
      return hit.playbook;
    }
    const loaded = await loadForRead(path, layer);
    if (loaded === null) return null;
    const frozen = deepFreeze(loaded);
    readMemo.delete(memoKey);
    readMemo.set(memoKey, { key, playbook: frozen });
    while (readMemo.size > READ_MEMO_MAX) readMemo.delete(readMemo.keys().next().value as string);
    return frozen;
  }

  /**
   * Store.readBullets: the head and the bullets with these ids. A file this store wrote (its layout
   * recorded) is read without decoding the other bullets: readScoped cuts the named items out of the
   * bytes and accepts them only when they and the head re-emit to exactly the text on disk, so what
   * it returns is what those bytes hold, whether or not the layout is the file's latest. Anything
   * else (no layout or cache, a layout that does not fit the bytes) reads the whole playbook.
   */
  async function readBullets(layer: Layer, ids: readonly string[]): Promise<Playbook | null> {
    const path = playbookPathOf(layer);
    if (path === null) return null;
    // The layout and cache files first: without them (small files, files this store has not
    // written) the playbook is read once, by readPlaybook.
    const layout = cache !== null && ids.length > 0 ? cache.readLayout(path) : null;
    const hash = (layout as { hash?: unknown } | null)?.hash;
    const cacheBytes = cache !== null && typeof hash === "string" && /^[0-9a-f]{64}$/.test(hash) ? cache.readBytes(path, hash) : null;
    if (cacheBytes !== null) {
      const raw = await readRaw(path);
      if (raw === null) return null;
      const checked = raw.bytes.length >= cacheMinBytes ? checkLayout(layout, resolve(path), hash as string, raw.bytes, cacheBytes) : null;
      const read = checked === null ? null : readScoped(raw.bytes, checked, ids, path);
      if (read !== null) {
        logger.debug(`Read ${read.positions.length} bullet(s) of ${path} without the others`);
        return read.playbook;
      }
    }
    const playbook = await readPlaybook(layer);
    if (playbook === null) return null;
    const wanted = new Set(ids);
    return { ...playbook, bullets: playbook.bullets.filter((b) => wanted.has(b.id)) };
  }

  function journalPathOf(layer: Layer): string | null {
    const path = playbookPathOf(layer);
    return path === null ? null : join(dirname(path), JOURNAL_FILE);
  }

  async function mutatePlaybook<T>(
    layer: Layer,
    fn: (playbook: Playbook, tx: MutationTx) => T | Promise<T>,
    scope?: MutationScope,
  ): Promise<T> {
    const path = playbookPathOf(layer);
    const journalPath = journalPathOf(layer);
    if (path === null || journalPath === null) throw notInRepo();
    return withLock(
      path,
      async () => {
        // A change interrupted by a crash is settled before the next one (journal-intent.ts).
        await settleIntent(path, journalPath, logger);
        const raw = await readRaw(path);
        const hash = raw === null ? undefined : cacheHashOf(raw.bytes);
        // A change to named bullets of a file this store wrote (layout recorded for these bytes)
        // decodes and re-emits only those bullets (playbook-splice.ts); anything else reads it whole.
        const splice =
          raw !== null && hash !== undefined && scope?.bulletIds !== undefined ? prepareSplice(path, raw.bytes, hash, scope.bulletIds) : null;
        let playbook: Playbook;
        let header: string;
        if (splice !== null) {
          playbook = splice.read.playbook;
          header = splice.read.header;
        } else {
          const loaded = raw === null ? null : await decodeRaw(raw, hash, path, layer);
          playbook = loaded?.playbook ?? createEmptyPlaybook(new Date().toISOString(), layer);
          header = loaded ? leadingComments(loaded.bytes.toString("utf8")) : layer === "repo" ? REPO_PLAYBOOK_HEADER : "";
        }
        const queued: JournalEvent[] = [];
        const rewrites: Array<[string, (event: JournalEvent) => JournalEvent]> = [];
        const value = await fn(playbook, {
          journal: (events) => void queued.push(...events),
          rewriteJournal: (bulletId, map) => void rewrites.push([bulletId, map]),
        });
        const checked = validatePlaybookForWrite(playbook, path);
        const events = checkJournalEventsForWrite(queued);
        let next: Written;
        if (splice !== null && raw !== null) {
          const spliced = spliceScoped(raw.bytes, splice.cacheBytes, splice.layout, splice.read, playbook, checked);
          if (spliced === null) throw new Error(`Internal error: could not place the changed bullets of ${path} (nothing was written)`);
          next = { kind: "splice", bytes: spliced.bytes, hash: sha256Hex(spliced.bytes), spliced };
          logger.debug(`Rewrote ${splice.read.positions.length} bullet(s) of ${path} in place`);
        } else {
          const bytes = Buffer.from(header + toYaml(checked), "utf8");
          next = { kind: "full", bytes, hash: sha256Hex(bytes), playbook: checked, header };
        }
        if (events.length === 0) {
          await atomicWriteFile(path, next.bytes);
          await rewriteJournalFile(journalPath, rewrites);
          await recordWritten(path, next);
          return value;
        }
        // Intent, playbook, journal, all under the playbook's lock (docs/adr/0012-journal-crash-safety.md):
        // a crash at any point leaves an intent that the next writer, reader or doctor settles.
        const intentPath = intentPathFor(journalPath);
        const before = raw === null ? null : (hash ?? sha256Hex(raw.bytes));
        await writeIntent(intentPath, { format: INTENT_FORMAT, createdAt: new Date().toISOString(), playbook: path, before, after: next.hash, events });
        crashPoint("yaml:after-intent");
        await atomicWriteFile(path, next.bytes);
        crashPoint("yaml:after-playbook-rename");
        await appendJsonl(journalPath, events, { sync: true });
        crashPoint("yaml:after-journal-append");
        await unlink(intentPath);
        await rewriteJournalFile(journalPath, rewrites);
        await recordWritten(path, next);
        return value;
      },
      lockOptions,
    );
  }

  /** Applies MutationTx.rewriteJournal requests to the journal file (atomic replace; other lines kept). */
  async function rewriteJournalFile(journalPath: string, rewrites: ReadonlyArray<[string, (event: JournalEvent) => JournalEvent]>): Promise<void> {
    if (rewrites.length === 0) return;
    const bytes = await readBytesOrNull(journalPath);
    if (bytes === null) return;
    let text = bytes.toString("utf8");
    let changed = 0;
    for (const [bulletId, map] of rewrites) {
      const result = rewriteJournalText(text, bulletId, map);
      text = result.text;
      changed += result.changed;
    }
    if (changed > 0) await atomicWriteFile(journalPath, text);
  }

  async function readJournal(layer: Layer): Promise<JournalEvent[]> {
    const path = layer === "repo" && repoDir === null ? null : journalPathOf(layer);
    if (path === null) return [];
    let bytes: Buffer | null;
    try {
      bytes = await readBytesOrNull(path);
    } catch (error) {
      throw readError(path, error);
    }
    const { values, malformed } = bytes === null ? { values: [], malformed: 0 } : parseJsonLines(bytes.toString("utf8"));
    const events: JournalEvent[] = [];
    let invalid = malformed;
    for (const value of values) {
      const parsed = JournalEventSchema.safeParse(value);
      if (parsed.success) events.push(parsed.data);
      else invalid++;
    }
    // Events of an interrupted change whose playbook write happened (settled by the next writer).
    const pending = await pendingView(playbookPathOf(layer) as string, path, bytes);
    events.push(...pending.extra);
    if (pending.tornFragment) invalid--;
    if (invalid > 0) logger.warn(`Skipped ${invalid} malformed line(s) in ${path}`);
    return events;
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

  async function removeBlocked(layer: Layer, ids: readonly string[]): Promise<number> {
    const dir = layerDir(layer);
    if (dir === null || ids.length === 0) return 0;
    const path = join(dir, "blocked.log");
    const drop = new Set(ids);
    return withLock(
      path,
      async () => {
        let text: string;
        try {
          text = await readFile(path, "utf8");
        } catch (error) {
          if (errnoOf(error) === "ENOENT") return 0;
          throw readError(path, error);
        }
        let removed = 0;
        const kept = text.split("\n").filter((line) => {
          if (line.trim() === "") return false;
          try {
            const value = JSON.parse(line) as { id?: unknown } | null;
            if (value !== null && typeof value.id === "string" && drop.has(value.id)) {
              removed++;
              return false;
            }
          } catch {
            // Lines that are not JSON are kept as they are (reference §4.6).
          }
          return true;
        });
        if (removed > 0) await atomicWriteFile(path, kept.length > 0 ? kept.join("\n") + "\n" : "");
        return removed;
      },
      lockOptions,
    );
  }

  async function readStarterFiles(): Promise<StarterFile[]> {
    const found: StarterFile[] = [];
    for (const dir of [join(globalDir, "starters"), join(globalDir, "starters", "custom")]) {
      for (const name of await listDir(dir)) {
        if (!/\.(ya?ml|json)$/i.test(name)) continue;
        const path = join(dir, name);
        try {
          const text = await readFile(path, "utf8");
          found.push({ path, data: /\.json$/i.test(name) ? (JSON.parse(text) as unknown) : fromYaml(text, path) });
        } catch (error) {
          found.push({ path, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
    return found;
  }

  async function mutateConfigFile(fn: (raw: Record<string, unknown>) => void): Promise<Record<string, unknown>> {
    const path = join(globalDir, "config.json");
    return withLock(
      path,
      async () => {
        let raw: Record<string, unknown> = {};
        let text = "";
        try {
          text = await readFile(path, "utf8");
        } catch (error) {
          if (errnoOf(error) !== "ENOENT") throw readError(path, error);
        }
        if (text.trim() !== "") {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not valid JSON`, {
              hint: `Fix ${path} by hand, or run 'cm doctor --fix --force' to back it up and reset it.`,
              details: { path },
              cause: error,
            });
          }
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not a JSON object`, {
              hint: `Fix ${path} by hand, or run 'cm doctor --fix --force' to back it up and reset it.`,
              details: { path },
            });
          }
          raw = parsed as Record<string, unknown>;
        }
        fn(raw);
        await atomicWriteFile(path, JSON.stringify(raw, null, 2));
        return raw;
      },
      lockOptions,
    );
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

  async function updateLog(layer: Layer, log: LogName, fn: LogRecordUpdate): Promise<LogUpdateResult> {
    const dir = layerDir(layer);
    if (dir === null) return { replaced: 0, removed: 0 };
    const path = join(dir, LOG_FILES[log]);
    return withLock(
      path,
      async () => {
        let text: string;
        try {
          text = await readFile(path, "utf8");
        } catch (error) {
          if (errnoOf(error) === "ENOENT") return { replaced: 0, removed: 0 };
          throw readError(path, error);
        }
        const result = updateLogText(text, fn);
        if (result.text !== null) await atomicWriteFile(path, result.text);
        return { replaced: result.replaced, removed: result.removed };
      },
      lockOptions,
    );
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

  const onboarding = createOnboardingFiles({ globalDir, logger, lockOptions });

  const learning = createLearningFiles({
    globalDir,
    diaryDir: options.diaryDir ?? join(globalDir, "diary"),
    logger,
    lockOptions,
    now: options.now ?? (() => new Date()),
  });

  const diagnostics = createYamlDiagnostics({
    globalDir,
    globalPlaybook,
    diaryDir: options.diaryDir ?? join(globalDir, "diary"),
    repoDir,
    logger,
    lockOptions,
  });

  return {
    locations,
    readPlaybook,
    readBullets,
    mutatePlaybook,
    readJournal,
    readBlocked,
    appendBlocked,
    removeBlocked,
    readStarterFiles,
    mutateConfigFile,
    readOnboardingState: onboarding.readOnboardingState,
    mutateOnboardingState: onboarding.mutateOnboardingState,
    appendProcessedSessions: onboarding.appendProcessedSessions,
    readProcessedSessions: onboarding.readProcessedSessions,
    appendLog,
    readLog,
    updateLog,
    writeDiary: learning.writeDiary,
    readDiary: learning.readDiary,
    listDiaries: learning.listDiaries,
    costs: learning.costs,
    exclusive: learning.exclusive,
    layerStatus,
    initialize,
    transfer: createYamlTransfer({
      globalDir,
      repoDir,
      diaryDir: options.diaryDir ?? join(globalDir, "diary"),
      logger,
      lockOptions,
      logFiles: LOG_FILES,
      playbookPath: playbookPathOf,
      journalPath: journalPathOf,
      loadPlaybook: async (layer) => {
        const path = playbookPathOf(layer);
        return path === null ? null : ((await load(path, layer))?.playbook ?? null);
      },
      listDiaries: () => learning.listDiaries(),
      readOnboardingState: onboarding.readOnboardingState,
    }),
    diagnose: diagnostics.diagnose,
    applyFix: diagnostics.applyFix,
  };
}

/** Freezes a parsed playbook and everything in it (plain JSON-like data). */
/** Playbooks kept by memoizeReads stores, by layer and file: the last read of each while unchanged. */
const readMemo = new Map<string, { key: string; playbook: Playbook }>();
/** Files whose last read stays in memory (a process serving several homes or projects). */
const READ_MEMO_MAX = 8;

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}
