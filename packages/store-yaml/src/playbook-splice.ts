import type { Bullet, Playbook } from "@cass-memory/core";
import { validatePlaybookForWrite } from "@cass-memory/core";
import { emitTopLevelSeqItem, emitYaml, parseOwnYaml } from "./fast-yaml.js";
import { isJsonFaithful } from "./parse-cache.js";
import { leadingComments } from "./yaml-codec.js";

/**
 * Writing a change to a few bullets of a large YAML playbook without re-emitting the rest
 * (issue 18: `cm mark` on 1,000 rules).
 *
 * Every time the store writes a playbook it can also record the file's *layout*: the SHA-256 of its
 * bytes, where its leading comment block ends, where each bullet's text starts and ends and the
 * bullet ids in order, plus where each bullet's JSON sits in the parse cache file written for the
 * same bytes (parse-cache.ts). The layout is only recorded for text the store itself produced as
 * `header + emitYaml(playbook)`, so every bullet's text is exactly what the emitter writes for that
 * bullet (fast-yaml.ts `emitTopLevelSeqItem`): the file is *canonical*.
 *
 * A mutation that names its bullets (MutationScope) then reads the file's bytes and hashes them;
 * when the hash is the layout's, it decodes only the head (every key but `bullets`) and the named
 * bullets, hands the mutation a playbook holding just those, and builds the new file by copying the
 * bytes of every other bullet and emitting the changed ones, the head and the new bullets: the same
 * bytes the full writer would produce from the whole playbook. The parse cache file is rebuilt the
 * same way from the old one. Anything unexpected (no layout, other bytes, a layout or cache that
 * does not check out, text that does not re-emit to itself) makes the caller use the full path.
 */

export const LAYOUT_FORMAT = 1;

const BULLETS_LINE = "bullets:\n";
const EMPTY_BULLETS_LINE = "bullets: []\n";
const ITEM_BREAK = Buffer.from("\n  - ");

export interface PlaybookLayout {
  format: number;
  /** Absolute path of the playbook. */
  path: string;
  /** SHA-256 (hex) of the file's bytes. */
  hash: string;
  /** The file's size in bytes. */
  size: number;
  /** End of the leading comment block (leadingComments), in bytes. */
  headerEnd: number;
  /** Start of the first bullet's text (just after the `bullets:` line). */
  itemsStart: number;
  /** End of the last bullet's text (the keys after `bullets`, if any, start here). */
  itemsEnd: number;
  /** Start of each bullet's text; bullet k ends where bullet k + 1 starts (the last at itemsEnd). */
  starts: number[];
  ids: string[];
  /** Where each bullet's JSON is in the parse cache file of `hash` (ends exclusive), and its size. */
  cache: { size: number; starts: number[]; ends: number[] };
}

/** The emitter's text of a playbook without its bullets, cut around its `bullets: []` line. */
export function emitHeadParts(playbook: Playbook): { before: string; after: string } | null {
  const text = emitYaml({ ...playbook, bullets: [] });
  // A top-level key is the only line in column 0 that can read `bullets: []` (scalars are one line, quoted when needed).
  let at: number;
  if (text.startsWith(EMPTY_BULLETS_LINE)) at = 0;
  else {
    const nl = text.indexOf(`\n${EMPTY_BULLETS_LINE}`);
    if (nl === -1) return null;
    at = nl + 1;
  }
  return { before: text.slice(0, at), after: text.slice(at + EMPTY_BULLETS_LINE.length) };
}

/** Concatenates text and byte pieces, keeping track of byte offsets. */
export class Pieces {
  private readonly parts: Buffer[] = [];
  size = 0;
  add(piece: string | Buffer): void {
    const bytes = typeof piece === "string" ? Buffer.from(piece, "utf8") : piece;
    this.parts.push(bytes);
    this.size += bytes.length;
  }
  bytes(): Buffer {
    return Buffer.concat(this.parts, this.size);
  }
  /** The pieces themselves, to be written one after the other (no copy into fresh memory). */
  list(): readonly Buffer[] {
    return this.parts;
  }
}

/** A serialised cache record: its bytes as pieces to write in order, and where each bullet's JSON is. */
export interface CacheRecordBytes {
  parts: readonly Buffer[];
  size: number;
  starts: number[];
  ends: number[];
}

/** Writes the elements of a record's `bullets` array into `out`, recording where each one's JSON is. */
export type BulletsWriter = (out: Pieces, starts: number[], ends: number[]) => void;

/**
 * The parse cache record of a playbook (parse-cache.ts: `{format, path, hash, playbook}`) as JSON
 * with each bullet on its own line (`[\n{…},\n{…}\n]`), and where each bullet's JSON is.
 * `writeBullets` writes the elements. Null when the head holds values JSON cannot represent exactly
 * (the bullets are the writer's business).
 */
export function serializeCacheRecord(
  format: number,
  absPath: string,
  hash: string,
  playbook: Playbook,
  writeBullets: BulletsWriter,
): CacheRecordBytes | null {
  const out = new Pieces();
  const starts: number[] = [];
  const ends: number[] = [];
  out.add(`{"format":${format},"path":${JSON.stringify(absPath)},"hash":${JSON.stringify(hash)},"playbook":{`);
  let first = true;
  let sawBullets = false;
  const record = playbook as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const value = record[key];
    if (value === undefined) continue;
    const lead = `${first ? "" : ","}${JSON.stringify(key)}:`;
    first = false;
    if (key !== "bullets") {
      if (!isJsonFaithful(value)) return null;
      out.add(lead + JSON.stringify(value));
      continue;
    }
    sawBullets = true;
    out.add(`${lead}[`);
    writeBullets(out, starts, ends);
    out.add(starts.length > 0 ? "\n]" : "]");
  }
  if (!sawBullets) return null;
  out.add("}}");
  return { parts: out.list(), size: out.size, starts, ends };
}

/** A BulletsWriter for bullets given as JSON texts (callers check them with isJsonFaithful). */
export function writeBulletJsons(jsons: readonly string[]): BulletsWriter {
  return (out, starts, ends) => {
    // One string for all of them: one conversion to bytes, offsets from each text's byte length.
    let text = "";
    let at = out.size;
    for (let k = 0; k < jsons.length; k += 1) {
      const json = jsons[k]!;
      const sep = k === 0 ? "\n" : ",\n";
      text += sep + json;
      at += sep.length;
      starts.push(at);
      at += Buffer.byteLength(json, "utf8");
      ends.push(at);
    }
    if (text !== "") out.add(text);
  };
}

/** JSON of a bullet for the cache, or null when JSON cannot represent it exactly. */
export function bulletJson(bullet: Bullet): string | null {
  return isJsonFaithful(bullet) ? JSON.stringify(bullet) : null;
}

/**
 * Where the bullets are in `bytes`, which the full writer just produced as `header +
 * emitYaml(checked)`. Null when there are no bullets (nothing to splice) or the text is not laid
 * out as expected.
 */
export function yamlLayoutOf(
  bytes: Buffer,
  header: string,
  checked: Playbook,
): Pick<PlaybookLayout, "size" | "headerEnd" | "itemsStart" | "itemsEnd" | "starts" | "ids"> | null {
  const count = checked.bullets.length;
  if (count === 0) return null;
  const head = emitHeadParts(checked);
  if (head === null) return null;
  const headerBytes = Buffer.from(header, "utf8");
  const lead = Buffer.from(header + head.before + BULLETS_LINE, "utf8");
  const tail = Buffer.from(head.after, "utf8");
  if (bytes.length < lead.length + tail.length) return null;
  if (!bytes.subarray(0, lead.length).equals(lead) || !bytes.subarray(bytes.length - tail.length).equals(tail)) return null;
  const itemsStart = lead.length;
  const itemsEnd = bytes.length - tail.length;
  const starts: number[] = [];
  let at = itemsStart;
  while (at < itemsEnd) {
    if (!isItemStart(bytes, at)) return null;
    starts.push(at);
    const nl = bytes.indexOf(ITEM_BREAK, at);
    at = nl === -1 || nl + 1 >= itemsEnd ? itemsEnd : nl + 1;
  }
  if (starts.length !== count) return null;
  return { size: bytes.length, headerEnd: headerBytes.length, itemsStart, itemsEnd, starts, ids: checked.bullets.map((b) => b.id) };
}

function isItemStart(bytes: Buffer, at: number): boolean {
  return bytes[at] === 0x20 && bytes[at + 1] === 0x20 && bytes[at + 2] === 0x2d && bytes[at + 3] === 0x20 && (at === 0 || bytes[at - 1] === 0x0a);
}

function isIntArray(value: unknown, length: number): value is number[] {
  if (!Array.isArray(value) || value.length !== length) return false;
  for (const v of value) if (!Number.isSafeInteger(v)) return false;
  return true;
}

/** A layout record read from disk, checked for shape and consistency with these bytes and cache bytes. */
export function checkLayout(value: unknown, absPath: string, hash: string, bytes: Buffer, cacheBytes: Buffer): PlaybookLayout | null {
  if (value === null || typeof value !== "object") return null;
  const l = value as Partial<PlaybookLayout>;
  if (l.format !== LAYOUT_FORMAT || l.path !== absPath || l.hash !== hash || l.size !== bytes.length) return null;
  if (!Array.isArray(l.ids) || l.ids.length === 0) return null;
  const n = l.ids.length;
  for (const id of l.ids) if (typeof id !== "string") return null;
  const { headerEnd, itemsStart, itemsEnd, starts, cache } = l;
  if (!Number.isSafeInteger(headerEnd) || !Number.isSafeInteger(itemsStart) || !Number.isSafeInteger(itemsEnd) || !isIntArray(starts, n)) return null;
  if (cache === null || typeof cache !== "object" || cache.size !== cacheBytes.length || !isIntArray(cache.starts, n) || !isIntArray(cache.ends, n)) return null;
  const he = headerEnd as number;
  const is = itemsStart as number;
  const ie = itemsEnd as number;
  if (he < 0 || is < he + BULLETS_LINE.length || ie > bytes.length || starts[0] !== is) return null;
  if (bytes.toString("latin1", is - BULLETS_LINE.length, is) !== BULLETS_LINE) return null;
  if (is - BULLETS_LINE.length !== he && bytes[is - BULLETS_LINE.length - 1] !== 0x0a) return null;
  for (let k = 0; k < n; k += 1) {
    const s = starts[k]!;
    const e = k + 1 < n ? starts[k + 1]! : ie;
    if (e <= s || !isItemStart(bytes, s) || bytes[e - 1] !== 0x0a) return null;
    const cs = cache.starts[k]!;
    const ce = cache.ends[k]!;
    if (cs < 2 || ce <= cs || ce > cacheBytes.length || (k > 0 && cs < cache.ends[k - 1]! + 2)) return null;
    if (cacheBytes[cs] !== 0x7b || cacheBytes[ce - 1] !== 0x7d || cacheBytes[cs - 1] !== 0x0a || cacheBytes[cs - 2] !== (k === 0 ? 0x5b : 0x2c)) return null;
  }
  const last = cache.ends[n - 1]!;
  if (cacheBytes[last] !== 0x0a || cacheBytes[last + 1] !== 0x5d) return null;
  return l as PlaybookLayout;
}

/** What a scoped read hands the mutation, and what the write needs to put it back. */
export interface ScopedRead {
  /** The head and the scoped bullets, decoded as the whole file would decode them. */
  playbook: Playbook;
  /** The bullets handed out (the mutation may replace them in the array). */
  originals: Bullet[];
  /** Their indexes in the file. */
  positions: number[];
  header: string;
}

/**
 * Decodes the head and the bullets with these ids from a canonical file (layout checked): the file
 * with the other bullets cut out is parsed and validated as the whole file would be, and must
 * re-emit to exactly that text after write validation (so the bullets and head the full writer
 * would re-emit unchanged are byte for byte what is on disk). Null otherwise.
 */
export function readScoped(bytes: Buffer, layout: PlaybookLayout, bulletIds: readonly string[], path: string): ScopedRead | null {
  const wanted = new Set(bulletIds);
  const positions: number[] = [];
  const n = layout.ids.length;
  for (let k = 0; k < n; k += 1) if (wanted.has(layout.ids[k]!)) positions.push(k);
  const header = bytes.toString("utf8", 0, layout.headerEnd);
  const before = bytes.toString("utf8", layout.headerEnd, layout.itemsStart - BULLETS_LINE.length);
  const after = bytes.toString("utf8", layout.itemsEnd);
  let items = "";
  for (const k of positions) items += bytes.toString("utf8", layout.starts[k]!, k + 1 < n ? layout.starts[k + 1]! : layout.itemsEnd);
  const body = before + (positions.length > 0 ? BULLETS_LINE + items : EMPTY_BULLETS_LINE) + after;
  if (leadingComments(header + body) !== header) return null;
  let playbook: Playbook;
  let checked: Playbook;
  try {
    // What decodePlaybook gives for this text: the fast parser (the text is in its subset, or this
    // is not our file) and the playbook schema, through write validation, which returns the schema's
    // result while skipping it for rules already in its form (no zod compilation for one rule).
    const parsed = parseOwnYaml(header + body);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    playbook = validatePlaybookForWrite(parsed, path);
    if (playbook.bullets.length !== positions.length) return null;
    for (let i = 0; i < positions.length; i += 1) if (playbook.bullets[i]!.id !== layout.ids[positions[i]!]) return null;
    checked = validatePlaybookForWrite(structuredClone(playbook), path);
  } catch {
    return null;
  }
  if (emitYaml(checked) !== body) return null;
  // The item texts are what emitTopLevelSeqItem writes (the layout's assumption for every bullet).
  for (let i = 0; i < positions.length; i += 1) {
    const k = positions[i]!;
    const text = bytes.toString("utf8", layout.starts[k]!, k + 1 < n ? layout.starts[k + 1]! : layout.itemsEnd);
    if (emitTopLevelSeqItem(checked.bullets[i]) !== text) return null;
  }
  return { playbook, originals: [...playbook.bullets], positions, header };
}

/** Where each bullet of the mutated (scoped) playbook goes: at a handed-out bullet's place, or appended. */
function placeBullets(read: ScopedRead, after: readonly Bullet[]): { placed: Map<number, number>; appended: number[] } {
  const placed = new Map<number, number>();
  const appended: number[] = [];
  const claimed = new Set<number>();
  for (let j = 0; j < after.length; j += 1) {
    const bullet = after[j]!;
    // The same object (changed in place or not), else the first handed-out bullet with its id (replaced).
    let slot = read.originals.indexOf(bullet);
    if (slot !== -1 && claimed.has(slot)) slot = -1;
    if (slot === -1) {
      for (let i = 0; i < read.originals.length; i += 1) {
        if (!claimed.has(i) && read.originals[i]!.id === bullet.id) {
          slot = i;
          break;
        }
      }
    }
    if (slot === -1) appended.push(j);
    else {
      claimed.add(slot);
      placed.set(read.positions[slot]!, j);
    }
  }
  return { placed, appended };
}

export interface SplicedPlaybook {
  bytes: Buffer;
  /** Rebuilds the parse cache record for the new bytes (hash known) from the old cache bytes; null when it cannot. */
  cacheRecord(format: number, absPath: string, hash: string): CacheRecordBytes | null;
  /** The new layout without hash, path and cache (null when the playbook has no bullets left). */
  layout: Pick<PlaybookLayout, "size" | "headerEnd" | "itemsStart" | "itemsEnd" | "starts" | "ids"> | null;
}

/**
 * The new file after a scoped mutation: `mutated` is the scoped playbook after the mutation (its
 * bullets array as the mutation left it), `checked` its write-validated form (same bullets, same
 * order). Bullets not handed out are copied from `bytes`; the head and handed-out or new bullets are
 * emitted. Equal to `read.header + emitYaml(the whole playbook with the same change)`.
 */
export function spliceScoped(
  bytes: Buffer,
  cacheBytes: Buffer,
  layout: PlaybookLayout,
  read: ScopedRead,
  mutated: Playbook,
  checked: Playbook,
): SplicedPlaybook | null {
  if (checked.bullets.length !== mutated.bullets.length) return null;
  const { placed, appended } = placeBullets(read, mutated.bullets);
  const scoped = new Set(read.positions);
  const n = layout.ids.length;
  const end = (k: number): number => (k + 1 < n ? layout.starts[k + 1]! : layout.itemsEnd);
  // The final bullets: [source, index] with source "old" (layout index) or "new" (index into checked).
  const order: Array<[boolean, number]> = [];
  for (let k = 0; k < n; k += 1) {
    if (!scoped.has(k)) order.push([true, k]);
    else {
      const j = placed.get(k);
      if (j !== undefined) order.push([false, j]);
    }
  }
  for (const j of appended) order.push([false, j]);

  const headerBytes = bytes.subarray(0, layout.headerEnd);
  if (order.length === 0) {
    return { bytes: Buffer.concat([headerBytes, Buffer.from(emitYaml(checked), "utf8")]), layout: null, cacheRecord: () => null };
  }
  const head = emitHeadParts(checked);
  if (head === null) return null;
  // Runs of bullets copied unchanged (one piece of bytes each) and emitted bullets, in file order.
  type Segment = { old: true; from: number; to: number } | { old: false; index: number };
  const segments: Segment[] = [];
  for (const [old, index] of order) {
    const last = segments[segments.length - 1];
    if (old && last !== undefined && last.old && last.to === index - 1) last.to = index;
    else segments.push(old ? { old: true, from: index, to: index } : { old: false, index });
  }
  const out = new Pieces();
  out.add(headerBytes);
  out.add(head.before + BULLETS_LINE);
  const itemsStart = out.size;
  const starts: number[] = [];
  const ids: string[] = [];
  for (const segment of segments) {
    if (segment.old) {
      const base = out.size - layout.starts[segment.from]!;
      for (let k = segment.from; k <= segment.to; k += 1) {
        starts.push(base + layout.starts[k]!);
        ids.push(layout.ids[k]!);
      }
      out.add(bytes.subarray(layout.starts[segment.from]!, end(segment.to)));
    } else {
      starts.push(out.size);
      ids.push(checked.bullets[segment.index]!.id);
      out.add(emitTopLevelSeqItem(checked.bullets[segment.index]));
    }
  }
  const itemsEnd = out.size;
  out.add(head.after);
  const newBytes = out.bytes();
  return {
    bytes: newBytes,
    layout: { size: newBytes.length, headerEnd: layout.headerEnd, itemsStart, itemsEnd, starts, ids },
    cacheRecord(format, absPath, hash) {
      const jsons = new Map<number, string>();
      for (const segment of segments) {
        if (segment.old) continue;
        const json = bulletJson(checked.bullets[segment.index]!);
        if (json === null) return null;
        jsons.set(segment.index, json);
      }
      const { starts: cs, ends: ce } = layout.cache;
      const writeBullets: BulletsWriter = (piece, newStarts, newEnds) => {
        segments.forEach((segment, n) => {
          piece.add(n === 0 ? "\n" : ",\n");
          if (segment.old) {
            // The old record has the same `,\n` between these bullets.
            const base = piece.size - cs[segment.from]!;
            for (let k = segment.from; k <= segment.to; k += 1) {
              newStarts.push(base + cs[k]!);
              newEnds.push(base + ce[k]!);
            }
            piece.add(cacheBytes.subarray(cs[segment.from]!, ce[segment.to]!));
          } else {
            newStarts.push(piece.size);
            piece.add(jsons.get(segment.index)!);
            newEnds.push(piece.size);
          }
        });
      };
      return serializeCacheRecord(format, absPath, hash, checked, writeBullets);
    },
  };
}
