/**
 * The persistent history index: a manifest (`index.json`) naming one or two segment files (a large
 * *base* and a small *delta*) and, per segment, the session files whose entries are superseded.
 *
 * Each refresh compares the discovered session files with the indexed ones by (path, agent,
 * mtimeMs, size): unchanged files are not read again; new and changed files are read through
 * their reader and written, with the delta's still-valid files, into a new delta; deleted and
 * changed files are masked in the base. When the delta grows past a fifth of the base (or a
 * quarter of the base is masked) everything is compacted into a new base. Segments are merged
 * from their stored postings, so compaction never re-reads session files.
 *
 * Writes go to uniquely named temporary files that are renamed into place, segments first and the
 * manifest last, so a reader always sees a complete index. Two processes refreshing at once each
 * write their own segments and the last manifest rename wins; segment files no manifest names
 * are deleted once they are older than ten minutes. An unreadable, corrupt or version-mismatched
 * manifest or segment is dropped and the index rebuilt from the session files: the index is a
 * cache, never a source of truth.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

import type { Logger } from "@cass-memory/core";

import type { NormalizedConversation, SessionFileRef, SessionReader } from "../model.js";
import { SEGMENT_VERSION, Segment, SegmentCorruptError, SegmentWriter } from "./segment.js";

export const MANIFEST_NAME = "index.json";
const MANIFEST_FORMAT = "cass-memory-episodic-index";
/** Unreferenced segment and temporary files older than this are deleted. */
const GC_AGE_MS = 10 * 60 * 1000;
/** The delta is folded into the base when its session files hold more than this share of the base's bytes… */
const DELTA_RATIO = 0.2;
/** …or more than this many bytes, whatever the base's size… */
const DELTA_MAX_BYTES = 64 * 1024 * 1024;
/** …but a delta of up to this many bytes never forces a compaction. */
const DELTA_MIN_BYTES = 4 * 1024 * 1024;
/** The base is rewritten when more than this share of its documents is superseded. */
const MASKED_RATIO = 0.25;

interface ManifestSegment {
  file: string;
  /** Indices (in the segment's file table) of superseded session files. */
  masked: number[];
}

interface Manifest {
  format: string;
  version: number;
  segments: ManifestSegment[];
  updatedAt: string;
}

/** A session file found by discovery, with the reader that understands it. */
export interface FoundSession {
  reader: SessionReader;
  ref: SessionFileRef;
}

/** One segment of a snapshot with its superseded files. */
export interface LiveSegment {
  /** File name in the index directory. */
  name: string;
  segment: Segment;
  /** 1 for each superseded file (indexed by the segment's file table). */
  masked: Uint8Array;
}

/** A consistent view of the index for one operation. */
export interface IndexSnapshot {
  segments: LiveSegment[];
  /** Documents (messages) and their total length over the live files. */
  liveDocs: number;
  liveTokens: number;
  /** Session files discovered now. */
  discovered: number;
  /** Discovered files that are not indexed in their current version (the time budget ran out). */
  pending: number;
}

/** Reads one session file; never throws (an unreadable file indexes as empty). */
/** A refresh that reads at least this many files reports its progress. */
const PROGRESS_MIN_FILES = 200;

async function readSession(found: FoundSession): Promise<NormalizedConversation[]> {
  try {
    const conversations = await found.reader.read(found.ref);
    return Array.isArray(conversations) ? conversations.filter((c) => c !== null && typeof c === "object" && Array.isArray(c.messages)) : [];
  } catch {
    return [];
  }
}

function randomTag(): string {
  return `${Date.now().toString(36)}-${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
}

export interface IndexStoreOptions {
  /** Directory of the index; null keeps it in a private temporary directory for this process. */
  dir: string | null;
  logger: Logger;
  now?: () => number;
}

export class IndexStore {
  private dir: string | null;
  private tempDir: string | null = null;
  private readonly logger: Logger;
  private readonly now: () => number;
  /** Opened segments by file name (reused while the manifest names them). */
  private readonly open = new Map<string, Segment>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(options: IndexStoreOptions) {
    this.dir = options.dir === null ? null : resolve(options.dir);
    this.logger = options.logger;
    this.now = options.now ?? Date.now;
  }

  /** The directory in use (created on first use; a private temporary one when none is writable). */
  directory(): string {
    if (this.dir !== null) {
      try {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        return this.dir;
      } catch (error) {
        this.logger.warn(`History index directory ${this.dir} is not usable (${(error as NodeJS.ErrnoException).code ?? "error"}); indexing into a temporary directory for this run.`);
        this.dir = null;
      }
    }
    if (this.tempDir === null) {
      const dir = mkdtempSync(join(tmpdir(), "cm-episodic-"));
      this.tempDir = dir;
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    }
    return this.tempDir;
  }

  /** Runs `fn` after every earlier refresh of this store has finished (one build at a time). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Brings the index up to date with `found` and returns a snapshot. Files are read newest first;
   * when `deadline` (epoch ms) passes, reading stops (at least one file is read per refresh), what
   * was read is committed, and the rest is reported as `pending` for the next call.
   */
  refresh(found: readonly FoundSession[], deadline: number | null): Promise<IndexSnapshot> {
    return this.serial(async () => {
      try {
        return await this.refreshNow(found, deadline);
      } catch (error) {
        // An index directory that exists but cannot be written: carry on in a temporary one.
        const code = (error as NodeJS.ErrnoException).code;
        if (this.dir === null || (code !== "EACCES" && code !== "EPERM" && code !== "EROFS")) throw error;
        this.logger.warn(`History index directory ${this.dir} is not writable (${code}); indexing into a temporary directory for this run.`);
        this.dir = null;
        this.evictExcept(new Set());
        return this.refreshNow(found, deadline);
      }
    });
  }

  /** The current index without updating it (null when there is none). */
  current(): Promise<IndexSnapshot | null> {
    return this.serial(async () => {
      const loaded = this.load();
      return loaded === null ? null : this.snapshot(loaded, 0, 0);
    });
  }

  /** Closes the file handles of the cached segments. */
  releaseAll(): void {
    for (const segment of this.open.values()) segment.release();
  }

  private readManifest(dir: string): Manifest | null {
    let text: string;
    try {
      text = readFileSync(join(dir, MANIFEST_NAME), "utf8");
    } catch {
      return null;
    }
    try {
      const m = JSON.parse(text) as Manifest;
      if (m?.format !== MANIFEST_FORMAT || m.version !== SEGMENT_VERSION || !Array.isArray(m.segments)) {
        this.logger.debug("History index is from another version; rebuilding it.");
        return null;
      }
      for (const s of m.segments) {
        if (typeof s?.file !== "string" || !/^seg-[a-z0-9-]+\.bin$/.test(s.file) || !Array.isArray(s.masked)) return null;
        if (!s.masked.every((n) => Number.isInteger(n) && n >= 0)) return null;
      }
      return m;
    } catch {
      this.logger.warn("History index manifest is unreadable; rebuilding the index.");
      return null;
    }
  }

  /** Opens the manifest's segments; null when there is no usable index. */
  private load(): LiveSegment[] | null {
    const dir = this.directory();
    for (let attempt = 0; attempt < 2; attempt++) {
      const manifest = this.readManifest(dir);
      if (manifest === null) return null;
      try {
        const segments = manifest.segments.map((entry) => {
          let segment = this.open.get(entry.file);
          if (segment === undefined) {
            segment = Segment.open(join(dir, entry.file));
            this.open.set(entry.file, segment);
          }
          const masked = new Uint8Array(segment.files.length);
          for (const i of entry.masked) if (i < masked.length) masked[i] = 1;
          return { name: entry.file, segment, masked };
        });
        this.evictExcept(new Set(manifest.segments.map((s) => s.file)));
        return segments;
      } catch (error) {
        if (!(error instanceof SegmentCorruptError)) throw error;
        // Another process may have just replaced the index: look at the manifest once more.
        if (attempt === 1) this.logger.warn(`${error.message}; rebuilding the history index.`);
      }
    }
    return null;
  }

  private evictExcept(keep: Set<string>): void {
    for (const [name, segment] of this.open) {
      if (!keep.has(name)) {
        segment.release();
        this.open.delete(name);
      }
    }
  }

  private snapshot(segments: LiveSegment[], discovered: number, pending: number): IndexSnapshot {
    let liveDocs = 0;
    let liveTokens = 0;
    for (const { segment, masked } of segments) {
      segment.files.forEach((f, i) => {
        if (masked[i]) return;
        liveDocs += f.docEnd - f.docStart;
        liveTokens += f.tokenCount;
      });
    }
    return { segments, liveDocs, liveTokens, discovered, pending };
  }

  private async refreshNow(found: readonly FoundSession[], deadline: number | null): Promise<IndexSnapshot> {
    const dir = this.directory();
    const segments = this.load() ?? [];

    // Live entries by path (a later segment supersedes an earlier one).
    const live = new Map<string, { seg: number; file: number }>();
    segments.forEach(({ segment, masked }, s) => {
      segment.files.forEach((f, i) => {
        if (masked[i]) return;
        const prev = live.get(f.path);
        if (prev !== undefined) segments[prev.seg]!.masked[prev.file] = 1;
        live.set(f.path, { seg: s, file: i });
      });
    });

    const seen = new Set<string>();
    const toRead: FoundSession[] = [];
    for (const item of found) {
      const path = item.ref.path;
      if (seen.has(path)) continue;
      seen.add(path);
      const entry = live.get(path);
      const f = entry === undefined ? undefined : segments[entry.seg]!.segment.files[entry.file]!;
      if (f !== undefined && f.mtimeMs === item.ref.mtimeMs && f.size === item.ref.size && f.agent === item.ref.agent) continue;
      toRead.push(item);
    }
    const removed: string[] = [];
    for (const path of live.keys()) if (!seen.has(path)) removed.push(path);
    if (toRead.length === 0 && removed.length === 0) return this.snapshot(segments, seen.size, 0);
    for (const path of removed) {
      const entry = live.get(path)!;
      segments[entry.seg]!.masked[entry.file] = 1;
    }

    // Compact (rewrite everything into one base) or write a new delta next to the base.
    const liveFiles = (ls: LiveSegment): number[] => {
      const out: number[] = [];
      ls.segment.files.forEach((_, i) => {
        if (!ls.masked[i]) out.push(i);
      });
      return out;
    };
    const liveDocsOf = (ls: LiveSegment): number => ls.segment.files.reduce((n, f, i) => n + (ls.masked[i] ? 0 : f.docEnd - f.docStart), 0);
    const liveBytesOf = (ls: LiveSegment): number => ls.segment.files.reduce((n, f, i) => n + (ls.masked[i] ? 0 : f.size), 0);
    const base = segments[0];
    const delta = segments.length === 2 ? segments[1]! : undefined;
    const incomingBytes = toRead.reduce((n, item) => n + (Number.isFinite(item.ref.size) ? item.ref.size : 0), 0);
    const deltaBytes = (delta !== undefined ? liveBytesOf(delta) : 0) + incomingBytes;
    const compact =
      base === undefined ||
      segments.length > 2 ||
      deltaBytes > Math.min(DELTA_MAX_BYTES, Math.max(DELTA_MIN_BYTES, liveBytesOf(base) * DELTA_RATIO)) ||
      base.segment.docCount - liveDocsOf(base) > base.segment.docCount * MASKED_RATIO;
    const copied = compact ? segments : delta !== undefined ? [delta] : [];

    const name = `seg-${randomTag()}.bin`;
    const temp = join(dir, `${name}.tmp`);
    const writer = new SegmentWriter(temp);
    /** Where each copied live file landed in the new segment. */
    const copiedTo = new Map<string, number>();
    let pending = 0;
    try {
      for (const ls of copied) {
        const files = liveFiles(ls);
        const first = writer.fileCount;
        writer.copyFrom(ls.segment, files);
        files.forEach((i, k) => copiedTo.set(ls.segment.files[i]!.path, first + k));
      }
      // Newest first, so that a time budget indexes recent sessions before old ones.
      toRead.sort((a, b) => b.ref.mtimeMs - a.ref.mtimeMs);
      // Long work says so on stderr (a first run over a large history takes seconds).
      if (toRead.length >= PROGRESS_MIN_FILES) {
        this.logger.info(`Indexing ${toRead.length} session files for history search (later runs read only changed files)…`);
      }
      const newMasks: number[] = [];
      let read = 0;
      for (const item of toRead) {
        if (deadline !== null && read > 0 && this.now() > deadline) break;
        const conversations = await readSession(item);
        if (conversations.length === 0) this.logger.debug(`No session could be read from ${item.ref.agent} file ${item.ref.path} ('cm doctor' says why)`);
        await writer.addParsed({ ref: item.ref, conversations });
        read++;
        // The file's previous version is superseded: in the new segment if it was copied there,
        // else where it lies.
        const path = item.ref.path;
        const at = copiedTo.get(path);
        if (at !== undefined) newMasks.push(at);
        else {
          const entry = live.get(path);
          if (entry !== undefined) segments[entry.seg]!.masked[entry.file] = 1;
        }
      }
      pending = toRead.length - read;
      if (toRead.length >= PROGRESS_MIN_FILES) {
        this.logger.info(
          pending > 0
            ? `Indexed ${read} of ${toRead.length} session files in the time allowed; the next search continues.`
            : `Indexed ${read} session files.`,
        );
      }
      await writer.finish();
      renameSync(temp, join(dir, name));
      const segment = Segment.open(join(dir, name));
      this.open.set(name, segment);
      const fresh: LiveSegment = { name, segment, masked: new Uint8Array(segment.files.length) };
      for (const i of newMasks) fresh.masked[i] = 1;
      const next = [...(compact ? [] : base !== undefined ? [base] : []), fresh];
      this.writeManifest(dir, next);
      const snapshot = this.snapshot(next, seen.size, pending);
      this.collectGarbage(dir);
      return snapshot;
    } catch (error) {
      writer.close();
      rmSync(temp, { force: true });
      throw error;
    }
  }

  private writeManifest(dir: string, segments: LiveSegment[]): void {
    const manifest: Manifest = {
      format: MANIFEST_FORMAT,
      version: SEGMENT_VERSION,
      segments: segments.map((ls) => ({ file: ls.name, masked: liveMasked(ls) })),
      updatedAt: new Date(this.now()).toISOString(),
    };
    const manifestTemp = join(dir, `${MANIFEST_NAME}.${randomTag()}.tmp`);
    writeFileSync(manifestTemp, `${JSON.stringify(manifest)}\n`, { mode: 0o600 });
    renameSync(manifestTemp, join(dir, MANIFEST_NAME));
    this.evictExcept(new Set(manifest.segments.map((s) => s.file)));
  }

  /** Deletes old segment and temporary files that the current manifest does not name. */
  private collectGarbage(dir: string): void {
    const manifest = this.readManifest(dir);
    if (manifest === null) return;
    const keep = new Set(manifest.segments.map((s) => s.file));
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    const now = Date.now();
    for (const name of names) {
      const ours = (name.startsWith("seg-") && (name.endsWith(".bin") || name.endsWith(".tmp"))) || (name.startsWith(`${MANIFEST_NAME}.`) && name.endsWith(".tmp"));
      if (!ours || keep.has(name)) continue;
      try {
        if (now - statSync(join(dir, name)).mtimeMs > GC_AGE_MS) unlinkSync(join(dir, name));
      } catch {
        // gone already, or not ours to delete
      }
    }
  }
}

function liveMasked(ls: LiveSegment): number[] {
  const out: number[] = [];
  ls.masked.forEach((m, i) => {
    if (m) out.push(i);
  });
  return out;
}
