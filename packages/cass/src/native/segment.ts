/**
 * Index segments: immutable files holding an inverted index over the messages of a set of
 * session files, the per-message metadata needed to filter and rank, and each session file's
 * message texts (compressed, for snippets).
 *
 * Layout of `seg-*.bin` (all integers little-endian):
 *
 *   "CMEPIDX1"                        8-byte magic
 *   text blocks                       per session file: deflate-raw(JSON array of its messages' texts)
 *   sections                          terms (UTF-8, concatenated, sorted), termOffsets (u32 × terms+1),
 *                                     postingOffsets (u32 × terms+1), postings (varint pairs:
 *                                     doc-id delta, term frequency), docConv / docLine / docLen
 *                                     (u32 × docs), docTime (f64 × docs, NaN when unknown)
 *   footer                            JSON: version, counts, files, conversations, section offsets
 *   u32 footer length, "CMEPIDX1"     trailer
 *
 * A query reads the footer and the small arrays (dictionary, per-message metadata: a few bytes per
 * message), then only the postings of its terms and the text blocks of the files it shows.
 * Message texts are kept only on disk, compressed, and cut to MAX_DOC_CHARS: that bounds both the
 * index size and a query's memory, at the price of snippets never coming from beyond the cut (the
 * cut text is also all that is indexed, so a snippet always shows what matched).
 */
import { closeSync, fstatSync, openSync, readSync, writeSync } from "node:fs";
import { endianness } from "node:os";
import { promisify } from "node:util";
import { deflateRaw, inflateRawSync } from "node:zlib";

import { redactSecrets } from "@cass-memory/core";
import type { NormalizedConversation, SessionFileRef } from "../model.js";
import { analyzeWord, scanWordSpans } from "./tokenize.js";

/** Bump when the tokenizer, the stemmer or the file layout changes: older segments are rebuilt. */
export const SEGMENT_VERSION = 2;
export const SEGMENT_FORMAT = "cass-memory-episodic-segment";
/** Longest message text indexed and kept for snippets (characters). */
export const MAX_DOC_CHARS = 32 * 1024;

const MAGIC = Buffer.from("CMEPIDX1", "latin1");
// Promisified on first use: reading zlib's `deflateRaw` here would load zlib (~4 ms) in every
// command that merely imports this module (the CLI bundles load built-ins lazily).
let deflateRawPromise: ((input: Buffer, options: { level: number }) => Promise<Buffer>) | undefined;
const deflateRawAsync = (input: Buffer, options: { level: number }): Promise<Buffer> => (deflateRawPromise ??= promisify(deflateRaw))(input, options);
const LITTLE_ENDIAN = endianness() === "LE";

export class SegmentCorruptError extends Error {
  constructor(path: string, why: string) {
    super(`index segment ${path} is unreadable: ${why}`);
    this.name = "SegmentCorruptError";
  }
}

export interface SegmentFileEntry {
  path: string;
  agent: string;
  mtimeMs: number;
  size: number;
  /** Messages of this file are documents [docStart, docEnd). */
  docStart: number;
  docEnd: number;
  /** Conversations of this file are [convStart, convEnd). */
  convStart: number;
  convEnd: number;
  /** Byte range of the compressed text block. */
  textOffset: number;
  textLength: number;
  /** Sum of the document lengths (tokens) of this file. */
  tokenCount: number;
}

export interface SegmentConv {
  agent: string;
  title: string | null;
  workspace: string | null;
  sourcePath: string;
  externalId: string | null;
  startedAt: number | null;
  endedAt: number | null;
  messageCount: number;
  file: number;
}

type SectionName = "terms" | "termOffsets" | "postingOffsets" | "postings" | "docConv" | "docLine" | "docLen" | "docTime";

interface Footer {
  format: string;
  version: number;
  littleEndian: boolean;
  docCount: number;
  termCount: number;
  tokenCount: number;
  files: SegmentFileEntry[];
  convs: SegmentConv[];
  sections: Record<SectionName, [number, number]>;
}

// ------------------------------------------------------------------------------------------------
// Growable buffers and varints

class GrowU32 {
  data = new Uint32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Uint32Array {
    return this.data.subarray(0, this.length);
  }
}

class GrowF64 {
  data = new Float64Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  view(): Float64Array {
    return this.data.subarray(0, this.length);
  }
}

class ByteBuf {
  data: Buffer;
  length = 0;
  constructor(initial = 4096) {
    this.data = Buffer.allocUnsafe(initial);
  }
  ensure(extra: number): void {
    if (this.length + extra <= this.data.length) return;
    let size = this.data.length * 2;
    while (size < this.length + extra) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.data.copy(next, 0, 0, this.length);
    this.data = next;
  }
  varint(value: number): void {
    this.ensure(5);
    let v = value >>> 0;
    while (v >= 0x80) {
      this.data[this.length++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.data[this.length++] = v;
  }
  bytes(src: Uint8Array): void {
    this.ensure(src.length);
    this.data.set(src, this.length);
    this.length += src.length;
  }
  /** Appends the UTF-8 bytes of `text`. */
  utf8(text: string): void {
    this.ensure(text.length * 3);
    this.length += this.data.write(text, this.length, "utf8");
  }
  view(): Uint8Array {
    return this.data.subarray(0, this.length);
  }
}

/**
 * Decodes postings (`doc-delta, tf` varint pairs) and calls `fn(doc, tf)` for each, in
 * ascending document order. Stops early (returns false) on a malformed stream.
 */
export function forEachPosting(buf: Uint8Array, fn: (doc: number, tf: number) => void): boolean {
  let pos = 0;
  let doc = 0;
  const n = buf.length;
  while (pos < n) {
    let delta = 0;
    let shift = 0;
    let byte: number;
    do {
      if (pos >= n || shift > 28) return false;
      byte = buf[pos++]!;
      delta |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    let tf = 0;
    shift = 0;
    do {
      if (pos >= n || shift > 28) return false;
      byte = buf[pos++]!;
      tf |= (byte & 0x7f) << shift;
      shift += 7;
    } while (byte & 0x80);
    doc += delta >>> 0;
    fn(doc, tf >>> 0);
  }
  return true;
}

function asBytes(view: Uint32Array | Float64Array): Uint8Array {
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
}

// ------------------------------------------------------------------------------------------------
// Term sources for the merge

interface TermSource {
  readonly termCount: number;
  term(i: number): string;
  /** Calls `fn(newDoc, tf)` for the postings of term `i` that survive, in ascending order. */
  postings(i: number, fn: (doc: number, tf: number) => void): void;
}

/**
 * Memo of the analyser for one build: raw word → token ids, in an open-addressing table keyed by
 * the word's characters *in the text*, so a word seen before costs a hash and a compare, and no
 * string is allocated for it. Keys are stored as UTF-16 code units in one pool.
 */
class WordTable {
  /** Per slot, 4 ints: length (-1 when empty), hash, offset of the characters, value. */
  private slots: Int32Array;
  private mask: number;
  private chars = new Uint16Array(1 << 20);
  private charsUsed = 0;
  size = 0;

  constructor(private readonly maxEntries: number, capacity = 1 << 15) {
    this.slots = WordTable.emptySlots(capacity);
    this.mask = capacity - 1;
  }

  private static emptySlots(capacity: number): Int32Array {
    const slots = new Int32Array(capacity * 4);
    for (let i = 0; i < slots.length; i += 4) slots[i] = -1;
    return slots;
  }

  static hash(text: string, start: number, end: number): number {
    let h = 0x811c9dc5 | 0;
    for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
    return h;
  }

  /** The value stored for text[start, end), or undefined. */
  get(text: string, start: number, end: number, h: number): number | undefined {
    const len = end - start;
    const slots = this.slots;
    const chars = this.chars;
    let slot = h & this.mask;
    for (;;) {
      const at = slot << 2;
      const l = slots[at]!;
      if (l < 0) return undefined;
      if (l === len && slots[at + 1] === h) {
        const off = slots[at + 2]!;
        let i = 0;
        while (i < len && chars[off + i] === text.charCodeAt(start + i)) i++;
        if (i === len) return slots[at + 3];
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Stores text[start, end) that `get` did not find (ignored once the table is full). */
  set(text: string, start: number, end: number, h: number, value: number): void {
    if (this.size >= this.maxEntries) return;
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const len = end - start;
    if (this.charsUsed + len > this.chars.length) {
      const next = new Uint16Array(Math.max(this.chars.length * 2, this.charsUsed + len));
      next.set(this.chars.subarray(0, this.charsUsed));
      this.chars = next;
    }
    const off = this.charsUsed;
    for (let i = 0; i < len; i++) this.chars[off + i] = text.charCodeAt(start + i);
    this.charsUsed += len;
    this.place(this.slots, this.mask, len, h, off, value);
    this.size++;
  }

  private place(slots: Int32Array, mask: number, len: number, h: number, off: number, value: number): void {
    let slot = h & mask;
    while (slots[slot << 2]! >= 0) slot = (slot + 1) & mask;
    const at = slot << 2;
    slots[at] = len;
    slots[at + 1] = h;
    slots[at + 2] = off;
    slots[at + 3] = value;
  }

  private grow(): void {
    const old = this.slots;
    const capacity = (this.mask + 1) * 2;
    const slots = WordTable.emptySlots(capacity);
    const mask = capacity - 1;
    for (let at = 0; at < old.length; at += 4) {
      if (old[at]! < 0) continue;
      this.place(slots, mask, old[at]!, old[at + 1]!, old[at + 2]!, old[at + 3]!);
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** Block sizes of the postings pool (each block ends with a 4-byte pointer to the next). */
const BLOCK_SIZES = [8, 16, 32, 64, 128, 256, 512, 1024];
const NO_TOKENS = -1;
const PAGE_BITS = 20;
const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;
/** Most distinct words the analyser memo holds (about 40 bytes each plus two per character). */
const MAX_MEMO_WORDS = 1_500_000;

/**
 * The inverted index of newly read documents, built in memory: a dictionary of terms and, per
 * term, its encoded postings in a chain of blocks of a shared byte pool (the postings of each
 * term grow in place; nothing is sorted until the end). Memory is about the size of the encoded
 * postings plus the dictionary.
 */
class PostingsBuilder implements TermSource {
  private readonly vocab = new Map<string, number>();
  private readonly termStrings: string[] = [];
  private head = new Int32Array(4096);
  private pos = new Int32Array(4096);
  private blockEnd = new Int32Array(4096);
  private lastDoc = new Int32Array(4096);
  private level = new Uint8Array(4096);
  private tf = new Uint32Array(4096);
  /** The byte pool, in pages (a block never straddles two); an address is page << 20 | offset. */
  private readonly pages: Uint8Array[] = [];
  private pageUsed = PAGE_SIZE;
  private readonly touched: number[] = [];
  private docLength = 0;
  private readonly memo = new WordTable(MAX_MEMO_WORDS);
  /** Token-id lists of words with several tokens: [count, id, id, …] runs. */
  private multi = new Int32Array(1 << 16);
  private multiUsed = 0;
  private readonly collect: number[] = [];
  private sorted: string[] = [];
  private sortedIds: Int32Array = new Int32Array(0);

  private readonly termId = (token: string): void => {
    let id = this.vocab.get(token);
    if (id === undefined) id = this.newTerm(token);
    this.collect.push(id);
  };

  private newTerm(token: string): number {
    const id = this.termStrings.length;
    this.vocab.set(token, id);
    this.termStrings.push(token);
    if (id >= this.head.length) {
      const grow = <T extends Int32Array | Uint8Array | Uint32Array>(a: T): T => {
        const next = new (a.constructor as new (n: number) => T)(a.length * 2);
        next.set(a);
        return next;
      };
      this.head = grow(this.head);
      this.pos = grow(this.pos);
      this.blockEnd = grow(this.blockEnd);
      this.lastDoc = grow(this.lastDoc);
      this.level = grow(this.level);
      this.tf = grow(this.tf);
    }
    const start = this.alloc(BLOCK_SIZES[0]!);
    this.head[id] = start;
    this.pos[id] = start;
    this.blockEnd[id] = start + BLOCK_SIZES[0]! - 4;
    this.lastDoc[id] = 0;
    this.level[id] = 0;
    return id;
  }

  private alloc(size: number): number {
    if (this.pageUsed + size > PAGE_SIZE) {
      this.pages.push(new Uint8Array(PAGE_SIZE));
      this.pageUsed = 0;
    }
    const at = ((this.pages.length - 1) << PAGE_BITS) | this.pageUsed;
    this.pageUsed += size;
    return at;
  }

  private writeByte(t: number, b: number): void {
    let p = this.pos[t]!;
    if (p === this.blockEnd[t]) {
      const lvl = Math.min(this.level[t]! + 1, BLOCK_SIZES.length - 1);
      const size = BLOCK_SIZES[lvl]!;
      const next = this.alloc(size);
      const page = this.pages[p >>> PAGE_BITS]!;
      const o = p & PAGE_MASK;
      page[o] = next & 0xff;
      page[o + 1] = (next >>> 8) & 0xff;
      page[o + 2] = (next >>> 16) & 0xff;
      page[o + 3] = (next >>> 24) & 0xff;
      this.level[t] = lvl;
      this.blockEnd[t] = next + size - 4;
      p = next;
    }
    this.pages[p >>> PAGE_BITS]![p & PAGE_MASK] = b;
    this.pos[t] = p + 1;
  }

  private writeVarint(t: number, value: number): void {
    let v = value >>> 0;
    while (v >= 0x80) {
      this.writeByte(t, (v & 0x7f) | 0x80);
      v >>>= 7;
    }
    this.writeByte(t, v);
  }

  private count(id: number): void {
    this.docLength++;
    const tf = this.tf;
    if (tf[id] === 0) this.touched.push(id);
    tf[id]! += 1;
  }

  /** Adds the words of `text` to the current document. */
  addText(text: string): void {
    scanWordSpans(text, (start, end) => {
      const h = WordTable.hash(text, start, end);
      let value = this.memo.get(text, start, end, h);
      if (value === undefined) {
        const word = text.slice(start, end);
        this.collect.length = 0;
        analyzeWord(word, this.termId);
        const ids = this.collect;
        if (ids.length === 0) value = NO_TOKENS;
        else if (ids.length === 1) value = ids[0]!;
        else {
          if (this.multiUsed + ids.length + 1 > this.multi.length) {
            const next = new Int32Array(Math.max(this.multi.length * 2, this.multiUsed + ids.length + 1));
            next.set(this.multi.subarray(0, this.multiUsed));
            this.multi = next;
          }
          value = -2 - this.multiUsed;
          this.multi[this.multiUsed++] = ids.length;
          for (const id of ids) this.multi[this.multiUsed++] = id;
        }
        this.memo.set(text, start, end, h, value);
      }
      if (value >= 0) this.count(value);
      else if (value !== NO_TOKENS) {
        const at = -2 - value;
        const end = at + 1 + this.multi[at]!;
        for (let k = at + 1; k < end; k++) this.count(this.multi[k]!);
      }
    });
  }

  /**
   * Ends the current document as document `doc` and returns its length in tokens. A document
   * without tokens is not recorded (returns 0).
   */
  endDoc(doc: number): number {
    const length = this.docLength;
    this.docLength = 0;
    if (length === 0) return 0;
    for (const t of this.touched) {
      this.writeVarint(t, doc - this.lastDoc[t]!);
      this.writeVarint(t, this.tf[t]!);
      this.lastDoc[t] = doc;
      this.tf[t] = 0;
    }
    this.touched.length = 0;
    return length;
  }

  /** Sorts the dictionary; call once, after the last document. */
  seal(): void {
    this.sorted = [...this.termStrings].sort();
    this.sortedIds = new Int32Array(this.sorted.length);
    for (let k = 0; k < this.sorted.length; k++) this.sortedIds[k] = this.vocab.get(this.sorted[k]!)!;
    this.vocab.clear();
    this.termStrings.length = 0;
  }

  get termCount(): number {
    return this.sorted.length;
  }

  term(i: number): string {
    return this.sorted[i]!;
  }

  postings(i: number, fn: (doc: number, tf: number) => void): void {
    const t = this.sortedIds[i]!;
    const last = this.pos[t]!;
    let start = this.head[t]!;
    let lvl = 0;
    const chunks: Uint8Array[] = [];
    for (;;) {
      const page = this.pages[start >>> PAGE_BITS]!;
      const from = start & PAGE_MASK;
      const dataEnd = from + BLOCK_SIZES[lvl]! - 4;
      if (last >>> PAGE_BITS === start >>> PAGE_BITS && (last & PAGE_MASK) >= from && (last & PAGE_MASK) <= dataEnd) {
        chunks.push(page.subarray(from, last & PAGE_MASK));
        break;
      }
      chunks.push(page.subarray(from, dataEnd));
      start = page[dataEnd]! | (page[dataEnd + 1]! << 8) | (page[dataEnd + 2]! << 16) | (page[dataEnd + 3]! << 24);
      lvl = Math.min(lvl + 1, BLOCK_SIZES.length - 1);
    }
    const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    forEachPosting(bytes, fn);
  }
}

// ------------------------------------------------------------------------------------------------
// Reading

function readExact(fd: number, length: number, position: number, path: string): Buffer {
  const buf = Buffer.allocUnsafeSlow(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, buf, done, length - done, position + done);
    if (n <= 0) throw new SegmentCorruptError(path, "unexpected end of file");
    done += n;
  }
  return buf;
}

function u32Section(buf: Buffer): Uint32Array {
  return new Uint32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0;
}

/** An opened segment. Arrays are in memory; postings and texts are read from the file on demand. */
export class Segment implements TermSource {
  readonly files: SegmentFileEntry[];
  readonly convs: SegmentConv[];
  readonly docCount: number;
  readonly termCount: number;
  readonly tokenCount: number;
  readonly terms: Buffer;
  readonly termOffsets: Uint32Array;
  readonly postingOffsets: Uint32Array;
  readonly docConv: Uint32Array;
  readonly docLine: Uint32Array;
  readonly docLen: Uint32Array;
  readonly docTime: Float64Array;
  private readonly postingsStart: number;
  private allPostings: Buffer | null = null;
  private fd: number | null = null;
  /** Document → surviving id in a merge (set while this segment is a merge source). */
  docMap: Int32Array | null = null;

  private constructor(
    readonly path: string,
    footer: Footer,
    arrays: {
      terms: Buffer;
      termOffsets: Uint32Array;
      postingOffsets: Uint32Array;
      docConv: Uint32Array;
      docLine: Uint32Array;
      docLen: Uint32Array;
      docTime: Float64Array;
    },
  ) {
    this.files = footer.files;
    this.convs = footer.convs;
    this.docCount = footer.docCount;
    this.termCount = footer.termCount;
    this.tokenCount = footer.tokenCount;
    this.terms = arrays.terms;
    this.termOffsets = arrays.termOffsets;
    this.postingOffsets = arrays.postingOffsets;
    this.docConv = arrays.docConv;
    this.docLine = arrays.docLine;
    this.docLen = arrays.docLen;
    this.docTime = arrays.docTime;
    this.postingsStart = footer.sections.postings[0];
  }

  /** Opens and validates a segment file; throws SegmentCorruptError when it cannot be used. */
  static open(path: string): Segment {
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch (error) {
      throw new SegmentCorruptError(path, (error as NodeJS.ErrnoException).code ?? "cannot open");
    }
    try {
      const size = fstatSync(fd).size;
      if (size < MAGIC.length * 2 + 4) throw new SegmentCorruptError(path, "too short");
      const head = readExact(fd, MAGIC.length, 0, path);
      const tail = readExact(fd, MAGIC.length + 4, size - MAGIC.length - 4, path);
      if (!head.equals(MAGIC) || !tail.subarray(4).equals(MAGIC)) throw new SegmentCorruptError(path, "bad magic");
      const footerLength = tail.readUInt32LE(0);
      const footerStart = size - MAGIC.length - 4 - footerLength;
      if (footerStart < MAGIC.length) throw new SegmentCorruptError(path, "bad footer length");
      let footer: Footer;
      try {
        footer = JSON.parse(readExact(fd, footerLength, footerStart, path).toString("utf8")) as Footer;
      } catch (error) {
        if (error instanceof SegmentCorruptError) throw error;
        throw new SegmentCorruptError(path, "footer is not JSON");
      }
      if (footer?.format !== SEGMENT_FORMAT || footer.version !== SEGMENT_VERSION) {
        throw new SegmentCorruptError(path, "format or version mismatch");
      }
      if (footer.littleEndian !== LITTLE_ENDIAN) throw new SegmentCorruptError(path, "written on a machine of other byte order");
      const { docCount, termCount } = footer;
      if (!isNonNegInt(docCount) || !isNonNegInt(termCount) || !Array.isArray(footer.files) || !Array.isArray(footer.convs)) {
        throw new SegmentCorruptError(path, "bad counts");
      }
      const expected: Partial<Record<SectionName, number>> = {
        termOffsets: (termCount + 1) * 4,
        postingOffsets: (termCount + 1) * 4,
        docConv: docCount * 4,
        docLine: docCount * 4,
        docLen: docCount * 4,
        docTime: docCount * 8,
      };
      const section = (name: SectionName): Buffer => {
        const range = footer.sections?.[name];
        if (!Array.isArray(range) || !isNonNegInt(range[0]) || !isNonNegInt(range[1])) throw new SegmentCorruptError(path, `no ${name} section`);
        const [offset, length] = range;
        if (offset < MAGIC.length || offset + length > footerStart) throw new SegmentCorruptError(path, `${name} out of bounds`);
        const want = expected[name];
        if (want !== undefined && want !== length) throw new SegmentCorruptError(path, `${name} has the wrong size`);
        return name === "postings" ? Buffer.alloc(0) : readExact(fd, length, offset, path);
      };
      const terms = section("terms");
      const termOffsets = u32Section(section("termOffsets"));
      const postingOffsets = u32Section(section("postingOffsets"));
      section("postings");
      const docConv = u32Section(section("docConv"));
      const docLine = u32Section(section("docLine"));
      const docLen = u32Section(section("docLen"));
      const timeBuf = section("docTime");
      const docTime = new Float64Array(timeBuf.buffer, timeBuf.byteOffset, docCount);
      if (termOffsets[termCount] !== terms.length) throw new SegmentCorruptError(path, "term offsets do not match");
      if (postingOffsets[termCount] !== footer.sections.postings[1]) throw new SegmentCorruptError(path, "posting offsets do not match");
      for (let i = 0; i < termCount; i++) {
        if (termOffsets[i]! > termOffsets[i + 1]! || postingOffsets[i]! > postingOffsets[i + 1]!) {
          throw new SegmentCorruptError(path, "offsets are not ascending");
        }
      }
      let tokenTotal = 0;
      for (let d = 0; d < docCount; d++) {
        if (docConv[d]! >= footer.convs.length) throw new SegmentCorruptError(path, "document points past the conversations");
        tokenTotal += docLen[d]!;
      }
      if (tokenTotal !== footer.tokenCount) throw new SegmentCorruptError(path, "token count mismatch");
      for (const f of footer.files) {
        if (
          typeof f?.path !== "string" ||
          !isNonNegInt(f.docStart) ||
          !isNonNegInt(f.docEnd) ||
          f.docStart > f.docEnd ||
          f.docEnd > docCount ||
          !isNonNegInt(f.convStart) ||
          !isNonNegInt(f.convEnd) ||
          f.convEnd > footer.convs.length ||
          !isNonNegInt(f.textOffset) ||
          !isNonNegInt(f.textLength) ||
          f.textOffset + f.textLength > footerStart
        ) {
          throw new SegmentCorruptError(path, "bad file entry");
        }
      }
      return new Segment(path, footer, { terms, termOffsets, postingOffsets, docConv, docLine, docLen, docTime });
    } finally {
      closeSync(fd);
    }
  }

  term(i: number): string {
    return this.terms.toString("utf8", this.termOffsets[i]!, this.termOffsets[i + 1]!);
  }

  /** Index of `token` in the dictionary, or -1. */
  findTerm(token: string): number {
    let lo = 0;
    let hi = this.termCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.term(mid);
      if (t === token) return mid;
      if (t < token) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** First index whose term is >= `token`. */
  private lowerBound(token: string): number {
    let lo = 0;
    let hi = this.termCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.term(mid) < token) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Indices of the terms starting with `prefix`. */
  prefixTerms(prefix: string): number[] {
    const out: number[] = [];
    for (let i = this.lowerBound(prefix); i < this.termCount; i++) {
      if (!this.term(i).startsWith(prefix)) break;
      out.push(i);
    }
    return out;
  }

  /** Indices of the terms containing `fragment`. */
  substringTerms(fragment: string): number[] {
    const needle = Buffer.from(fragment, "utf8");
    const out: number[] = [];
    let from = 0;
    let last = -1;
    for (;;) {
      const at = this.terms.indexOf(needle, from);
      if (at < 0) break;
      // The term holding byte `at`: the last offset <= at.
      let lo = 0;
      let hi = this.termCount - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (this.termOffsets[mid]! <= at) lo = mid;
        else hi = mid - 1;
      }
      if (at + needle.length <= this.termOffsets[lo + 1]! && lo !== last) {
        out.push(lo);
        last = lo;
      }
      from = at + 1;
    }
    return out;
  }

  /** Size of a term's postings in bytes (a cheap proxy for its document frequency). */
  postingBytes(i: number): number {
    return this.postingOffsets[i + 1]! - this.postingOffsets[i]!;
  }

  private handle(): number {
    if (this.fd === null) this.fd = openSync(this.path, "r");
    return this.fd;
  }

  /** Closes the file handle opened by reads (arrays stay usable). */
  release(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = null;
    }
  }

  readPostings(i: number): Uint8Array {
    const start = this.postingOffsets[i]!;
    const length = this.postingOffsets[i + 1]! - start;
    if (this.allPostings !== null) return this.allPostings.subarray(start, start + length);
    if (length === 0) return new Uint8Array(0);
    return readExact(this.handle(), length, this.postingsStart + start, this.path);
  }

  /** Loads the whole postings section (for merges, which visit every term). */
  loadAllPostings(): void {
    if (this.allPostings !== null) return;
    const length = this.postingOffsets[this.termCount]!;
    this.allPostings = length === 0 ? Buffer.alloc(0) : readExact(this.handle(), length, this.postingsStart, this.path);
  }

  dropAllPostings(): void {
    this.allPostings = null;
  }

  postings(i: number, fn: (doc: number, tf: number) => void): void {
    const map = this.docMap;
    forEachPosting(this.readPostings(i), (doc, tf) => {
      const to = map === null ? doc : map[doc]!;
      if (to >= 0) fn(to, tf);
    });
  }

  /** The compressed text block of a file, as stored. */
  readTextBlock(fileIdx: number): Buffer {
    const f = this.files[fileIdx]!;
    return readExact(this.handle(), f.textLength, f.textOffset, this.path);
  }

  /** The texts of a file's documents (in document order), or null when the block is damaged. */
  readTexts(fileIdx: number): string[] | null {
    const f = this.files[fileIdx]!;
    if (f.textLength === 0) return [];
    try {
      const parsed = JSON.parse(inflateRawSync(this.readTextBlock(fileIdx)).toString("utf8")) as unknown;
      if (!Array.isArray(parsed) || parsed.length !== f.docEnd - f.docStart) return null;
      return parsed.map((t) => (typeof t === "string" ? t : ""));
    } catch {
      return null;
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Writing

/** A session file read through its reader, ready to be indexed. */
export interface ParsedSessionFile {
  ref: SessionFileRef;
  conversations: NormalizedConversation[];
}

function cutText(text: string): string {
  if (text.length <= MAX_DOC_CHARS) return text;
  let end = MAX_DOC_CHARS;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

function finiteOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** Text blocks compressed on the thread pool that may wait for their turn to be written. */
const MAX_PENDING_BLOCKS = 16;

/**
 * Writes one segment file: first the files copied from existing segments (in each segment's
 * document order), then newly read files; `finish()` merges all postings into the file.
 * Message texts are compressed on libuv's thread pool while the next file is tokenised.
 */
export class SegmentWriter {
  private readonly fd: number;
  private pos = 0;
  private readonly files: SegmentFileEntry[] = [];
  private readonly convs: SegmentConv[] = [];
  private readonly docConv = new GrowU32();
  private readonly docLine = new GrowU32();
  private readonly docLen = new GrowU32();
  private readonly docTime = new GrowF64();
  private tokenCount = 0;
  private readonly sources: TermSource[] = [];
  private builder: PostingsBuilder | null = null;
  /** Compressed text blocks in file order, with the file entry each belongs to. */
  private readonly pending: Array<{ entry: SegmentFileEntry; block: Promise<Buffer> }> = [];
  private closed = false;

  constructor(readonly path: string) {
    this.fd = openSync(path, "wx", 0o600);
    this.write(MAGIC);
  }

  get docCount(): number {
    return this.docLen.length;
  }

  /** Number of files written so far (copied and new). */
  get fileCount(): number {
    return this.files.length;
  }

  private write(bytes: Uint8Array): void {
    let done = 0;
    while (done < bytes.length) {
      done += writeSync(this.fd, bytes, done, bytes.length - done, this.pos + done);
    }
    this.pos += bytes.length;
  }

  /**
   * Copies files (ascending indices) of an existing segment without re-reading them. Must come
   * before any `addParsed` so that document ids stay ascending across sources.
   */
  copyFrom(segment: Segment, fileIndices: readonly number[]): void {
    if (this.builder !== null) throw new Error("SegmentWriter.copyFrom after addParsed");
    if (fileIndices.length === 0) return;
    if (this.sources.includes(segment)) throw new Error("SegmentWriter.copyFrom called twice for one segment");
    const map = new Int32Array(segment.docCount).fill(-1);
    for (const fileIdx of fileIndices) {
      const f = segment.files[fileIdx]!;
      const convBase = this.convs.length;
      const fileNo = this.files.length;
      for (let c = f.convStart; c < f.convEnd; c++) this.convs.push({ ...segment.convs[c]!, file: fileNo });
      const docStart = this.docCount;
      let tokens = 0;
      for (let d = f.docStart; d < f.docEnd; d++) {
        map[d] = this.docCount;
        this.docConv.push(convBase + (segment.docConv[d]! - f.convStart));
        this.docLine.push(segment.docLine[d]!);
        this.docLen.push(segment.docLen[d]!);
        this.docTime.push(segment.docTime[d]!);
        tokens += segment.docLen[d]!;
      }
      const textOffset = this.pos;
      if (f.textLength > 0) this.write(segment.readTextBlock(fileIdx));
      this.tokenCount += tokens;
      this.files.push({
        ...f,
        docStart,
        docEnd: this.docCount,
        convStart: convBase,
        convEnd: this.convs.length,
        textOffset,
        textLength: f.textLength,
        tokenCount: tokens,
      });
    }
    segment.loadAllPostings();
    segment.docMap = map;
    this.sources.push(segment);
  }

  /** Indexes a newly read session file. */
  async addParsed(file: ParsedSessionFile): Promise<void> {
    if (this.builder === null) this.builder = new PostingsBuilder();
    const builder = this.builder;
    const fileNo = this.files.length;
    const convStart = this.convs.length;
    const docStart = this.docCount;
    const texts: string[] = [];
    let tokens = 0;
    for (const conv of file.conversations) {
      const convNo = this.convs.length;
      this.convs.push({
        agent: conv.agent ?? file.ref.agent,
        // Secrets in session files stay there: the index keeps titles and texts redacted (issue 21).
        title: typeof conv.title === "string" ? redactSecrets(conv.title).text : null,
        workspace: typeof conv.workspace === "string" && conv.workspace !== "" ? conv.workspace : null,
        sourcePath: typeof conv.sourcePath === "string" && conv.sourcePath !== "" ? conv.sourcePath : file.ref.path,
        externalId: typeof conv.externalId === "string" ? conv.externalId : null,
        startedAt: finiteOrNull(conv.startedAt),
        endedAt: finiteOrNull(conv.endedAt),
        messageCount: Array.isArray(conv.messages) ? conv.messages.length : 0,
        file: fileNo,
      });
      for (const message of conv.messages ?? []) {
        if (typeof message?.content !== "string" || message.content.trim() === "") continue;
        const text = cutText(redactSecrets(message.content).text);
        builder.addText(text);
        const length = builder.endDoc(this.docCount);
        if (length === 0) continue;
        this.docConv.push(convNo);
        this.docLine.push(Number.isInteger(message.lineNumber) && message.lineNumber > 0 ? message.lineNumber : 1);
        this.docLen.push(length);
        this.docTime.push(finiteOrNull(message.createdAt) ?? Number.NaN);
        texts.push(text);
        tokens += length;
      }
    }
    this.tokenCount += tokens;
    const entry: SegmentFileEntry = {
      path: file.ref.path,
      agent: file.ref.agent,
      mtimeMs: file.ref.mtimeMs,
      size: file.ref.size,
      docStart,
      docEnd: this.docCount,
      convStart,
      convEnd: this.convs.length,
      textOffset: 0,
      textLength: 0,
      tokenCount: tokens,
    };
    this.files.push(entry);
    if (texts.length > 0) {
      this.pending.push({ entry, block: deflateRawAsync(Buffer.from(JSON.stringify(texts), "utf8"), { level: 1 }) });
      if (this.pending.length > MAX_PENDING_BLOCKS) await this.writePending(MAX_PENDING_BLOCKS / 2);
    }
  }

  /** Writes compressed blocks, oldest first, until at most `keep` are still pending. */
  private async writePending(keep: number): Promise<void> {
    while (this.pending.length > keep) {
      const { entry, block } = this.pending.shift()!;
      const bytes = await block;
      entry.textOffset = this.pos;
      entry.textLength = bytes.length;
      this.write(bytes);
    }
  }

  /** Merges the postings of every source and writes the sections, footer and trailer. */
  async finish(): Promise<void> {
    await this.writePending(0);
    if (this.builder !== null) {
      this.builder.seal();
      this.sources.push(this.builder);
      this.builder = null;
    }
    const sources = this.sources;
    const k = sources.length;
    const heads = new Int32Array(k);
    const headTerms: (string | null)[] = sources.map((s) => (s.termCount > 0 ? s.term(0) : null));

    const termBytes = new ByteBuf(1 << 16);
    const termOffsets = new GrowU32();
    const postingOffsets = new GrowU32();
    const postingsStart = this.pos;
    let postingsLength = 0;
    const out = new ByteBuf(1 << 20);
    const flushOut = (): void => {
      if (out.length === 0) return;
      this.write(out.view());
      postingsLength += out.length;
      out.length = 0;
    };
    let prevDoc = 0;
    let written = 0;
    const push = (doc: number, tf: number): void => {
      out.varint(doc - prevDoc);
      out.varint(tf);
      prevDoc = doc;
      written++;
    };
    for (;;) {
      let min: string | null = null;
      for (let s = 0; s < k; s++) {
        const t = headTerms[s]!;
        if (t !== null && (min === null || t < min)) min = t;
      }
      if (min === null) break;
      const startLength = postingsLength + out.length;
      prevDoc = 0;
      written = 0;
      for (let s = 0; s < k; s++) {
        if (headTerms[s] !== min) continue;
        const source = sources[s]!;
        source.postings(heads[s]!, push);
        heads[s]!++;
        headTerms[s] = heads[s]! < source.termCount ? source.term(heads[s]!) : null;
      }
      if (written === 0) {
        // Every document of this term was dropped: leave the term out.
        out.length = startLength - postingsLength;
        continue;
      }
      termOffsets.push(termBytes.length);
      postingOffsets.push(startLength);
      termBytes.utf8(min);
      if (out.length >= 1 << 20) flushOut();
    }
    flushOut();
    termOffsets.push(termBytes.length);
    postingOffsets.push(postingsLength);
    for (const s of sources) {
      if (s instanceof Segment) {
        s.docMap = null;
        s.dropAllPostings();
      }
    }

    const sections = {} as Record<SectionName, [number, number]>;
    sections.postings = [postingsStart, postingsLength];
    const put = (name: SectionName, bytes: Uint8Array): void => {
      sections[name] = [this.pos, bytes.length];
      this.write(bytes);
    };
    put("terms", termBytes.view());
    put("termOffsets", asBytes(termOffsets.view()));
    put("postingOffsets", asBytes(postingOffsets.view()));
    put("docConv", asBytes(this.docConv.view()));
    put("docLine", asBytes(this.docLine.view()));
    put("docLen", asBytes(this.docLen.view()));
    put("docTime", asBytes(this.docTime.view()));
    const footer: Footer = {
      format: SEGMENT_FORMAT,
      version: SEGMENT_VERSION,
      littleEndian: LITTLE_ENDIAN,
      docCount: this.docCount,
      termCount: termOffsets.length - 1,
      tokenCount: this.tokenCount,
      files: this.files,
      convs: this.convs,
      sections,
    };
    const footerBytes = Buffer.from(JSON.stringify(footer), "utf8");
    this.write(footerBytes);
    const trailer = Buffer.alloc(4 + MAGIC.length);
    trailer.writeUInt32LE(footerBytes.length, 0);
    MAGIC.copy(trailer, 4);
    this.write(trailer);
    this.close();
  }

  /** Closes the file (after finish, or to abandon the segment) and detaches the merge sources. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const { block } of this.pending.splice(0)) block.catch(() => undefined);
    for (const s of this.sources) {
      if (s instanceof Segment) {
        s.docMap = null;
        s.dropAllPostings();
      }
    }
    closeSync(this.fd);
  }
}
