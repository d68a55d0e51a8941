import type { Bm25fParams, DocumentTerms, FieldTerms, IndexSnapshot, IndexedDocument } from "./lexical-index.js";

/**
 * Plain-data forms of what the ranker derives from text, so that a host can keep them between
 * processes: a CLI process otherwise analyses every rule on every call.
 * Everything here is validated on the way back in; anything unexpected reads as "not cached".
 */

/**
 * Version of the analyser's output. Bump it whenever analyze.ts, stem.ts, the way concepts are
 * matched or the DocumentTerms layout change: saved analyses of an older version are then ignored.
 * (Changes to the concept map itself are covered by the fingerprint's hash of it.) A test pins the
 * analyser's output for sample texts and tells you to bump this when it changes.
 */
export const ANALYZER_VERSION = 1;

/** Two 32-bit FNV-1a style hashes of `text` with different multipliers, as 16 hex digits. */
export function hashText(text: string): string {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

/**
 * hashText(JSON.stringify(CONCEPT_GROUPS)), written out: hashing the 48 KB map costs a CLI process
 * ≈10 ms on every call. A test recomputes it and says to update this constant when the map changes.
 */
export const CONCEPT_MAP_HASH = "934db3fca949b05c";

/** Identifies the analyser and the shipped concept map: saved data is only used under the same fingerprint. */
export function lexicalFingerprint(): string {
  return `lexical-${ANALYZER_VERSION}-${CONCEPT_MAP_HASH}`;
}

/** The key a document's analysis is saved under: a hash of its texts plus their length. */
export function documentKey(doc: IndexedDocument): string {
  const text = `${doc.content ?? ""}\u0001${(doc.tags ?? []).join("\u0002")}\u0001${doc.category ?? ""}`;
  return hashText(text) + text.length.toString(36);
}

// Encoded terms: six lists (content words, content extra, tags words, tags extra, category words,
// category extra) separated by "|", terms within a list by spaces. Analysed terms never contain
// either character (they are letters, digits and + # . _ -, or "~" and a concept id); a document
// with a term that does is not encoded (and is analysed again next time).
const LIST = "|";
const TERM = " ";

function encodeList(terms: readonly string[]): string | null {
  for (const t of terms) if (t === "" || t.includes(LIST) || t.includes(TERM)) return null;
  return terms.join(TERM);
}

export function encodeTerms(terms: DocumentTerms): string | null {
  const parts: string[] = [];
  for (const field of [terms.content, terms.tags, terms.category]) {
    for (const list of [field.words, field.extra]) {
      const encoded = encodeList(list);
      if (encoded === null) return null;
      parts.push(encoded);
    }
  }
  return parts.join(LIST);
}

const splitList = (text: string): string[] => (text === "" ? [] : text.split(TERM));

export function decodeTerms(encoded: string): DocumentTerms | null {
  const parts = encoded.split(LIST);
  if (parts.length !== 6) return null;
  const lists = parts.map(splitList);
  for (const list of lists) for (const t of list) if (t === "") return null;
  const field = (i: number): FieldTerms => ({ words: lists[i]!, extra: lists[i + 1]! });
  return { content: field(0), tags: field(2), category: field(4) };
}

/**
 * Saved documents: a flat array of key, encoded terms, key, encoded terms… (an array of strings
 * parses faster than an object with as many keys). Malformed input gives an empty map.
 */
export function decodeDocuments(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!Array.isArray(value) || value.length % 2 !== 0) return out;
  for (let i = 0; i < value.length; i += 2) {
    const key = value[i];
    const terms = value[i + 1];
    if (typeof key !== "string" || typeof terms !== "string") return new Map();
    out.set(key, terms);
  }
  return out;
}

/**
 * What to save after analysing: every document in use (in use order), then documents saved before
 * and not in use now (edited or deleted rules, rules of another repository's layer) while the total
 * stays within `inUse + max(1000, inUse / 2)`, so the file follows the playbook instead of growing.
 */
export function documentsToSave(inUse: ReadonlyArray<readonly [string, string]>, saved: ReadonlyMap<string, string>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [key, terms] of inUse) {
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(key, terms);
  }
  const budget = seen.size + Math.max(1000, Math.floor(seen.size / 2));
  for (const [key, terms] of saved) {
    if (seen.size >= budget) break;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(key, terms);
  }
  return out;
}


// -------------------------------------------------------------------------------------------------
// A whole built index (LexicalIndex.snapshot) as bytes: loading it is a copy, where rebuilding from
// saved analyses still interns every term and counts every posting.
//
// Layout (little-endian; a big-endian host ignores saved snapshots): "CMLX", format, size, terms,
// postings, stream length, byte length of the terms' text, then the sections, each starting at a
// multiple of 8: the terms joined by "\n" (UTF-8), idf (f64 × terms), postingStart (i32 ×
// terms + 1), docs (i32 × postings), impacts (f32 × postings), streamTerms (i32 × stream),
// streamStart (i32 × size + 1), inText (u8 × postings).

const SNAPSHOT_MAGIC = 0x584c4d43; // "CMLX" read as a little-endian u32
const SNAPSHOT_FORMAT = 1;
const HEADER_WORDS = 7;
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

const align8 = (n: number): number => (n + 7) & ~7;

/** The key a snapshot of these documents is saved under: the analyser, the parameters and every document's key. */
export function indexSnapshotKey(documentKeys: readonly string[], params: Readonly<Bm25fParams>): string {
  return `${lexicalFingerprint()}.${hashText(JSON.stringify(params))}.${documentKeys.length}.${hashText(documentKeys.join(""))}`;
}

/**
 * The same key made with a host's digest (LexicalCache.digest, native code) of every document's texts
 * at once, instead of documentKey per document in JavaScript: for 10,000 rules that is ≈5 ms instead
 * of ≈150 ms in a short-lived process, whose JavaScript rarely gets optimised before it exits. The
 * texts are joined with separators that documentKey uses too, and each document ends with "\u0000",
 * so different lists of texts give different inputs. "d" marks keys made this way.
 */
export function indexSnapshotKeyByDigest(docs: readonly IndexedDocument[], params: Readonly<Bm25fParams>, digest: (text: string) => string): string {
  const parts: string[] = [];
  for (const doc of docs) parts.push(doc.content ?? "", "\u0001", (doc.tags ?? []).join("\u0002"), "\u0001", doc.category ?? "", "\u0000");
  return `${lexicalFingerprint()}.${hashText(JSON.stringify(params))}.${docs.length}.d${digest(parts.join(""))}`;
}

/**
 * One piece of what `indexSnapshotKeyBySource` keys: either a run of documents whose texts a store
 * vouched for (`source` names the exact texts of a whole list, e.g. a file's hash and decoder
 * version; `from`..`to` are positions in that list, inclusive), or one document given by its texts.
 */
export type SourcedTexts = { source: string; from: number; to: number } | { doc: IndexedDocument };

/**
 * The key of a snapshot of documents described by runs of vouched-for texts and by the remaining
 * documents' own texts, in order. Each piece is one line: a run is "\u0003source\u0004from\u0004to",
 * a document the JSON of [content, tags, category] (JSON never holds a raw line break or
 * "\u0003", and sources must not either), so different descriptions never give the same input.
 * "s" marks keys made this way. `digest` (the host's, native) is used when given, else hashText.
 */
export function indexSnapshotKeyBySource(
  pieces: readonly SourcedTexts[],
  count: number,
  params: Readonly<Bm25fParams>,
  digest?: (text: string) => string,
): string {
  let text = "";
  for (const piece of pieces) {
    if ("source" in piece) text += `\u0003${piece.source}\u0004${piece.from}\u0004${piece.to}\n`;
    else text += `${JSON.stringify([piece.doc.content ?? "", piece.doc.tags ?? [], piece.doc.category ?? ""])}\n`;
  }
  const hash = digest !== undefined ? digest(text) : hashText(text) + text.length.toString(36);
  return `${lexicalFingerprint()}.${hashText(JSON.stringify(params))}.${count}.s${hash}`;
}

interface Section {
  bytes: number;
  offset: number;
}

function sectionsOf(terms: number, postings: number, stream: number, size: number, textBytes: number): { sections: Section[]; total: number } {
  const lengths = [textBytes, terms * 8, (terms + 1) * 4, postings * 4, postings * 4, stream * 4, (size + 1) * 4, postings];
  let offset = HEADER_WORDS * 4;
  const sections: Section[] = [];
  for (const bytes of lengths) {
    offset = align8(offset);
    sections.push({ bytes, offset });
    offset += bytes;
  }
  return { sections, total: offset };
}

/** The bytes of `snapshot`; null when a term cannot be written (empty, or holding a line break). */
export function encodeIndexSnapshot(snapshot: IndexSnapshot): Uint8Array | null {
  for (const term of snapshot.terms) if (term === "" || term.includes("\n")) return null;
  const text = new TextEncoder().encode(snapshot.terms.join("\n"));
  const terms = snapshot.terms.length;
  const postings = snapshot.docs.length;
  const stream = snapshot.streamTerms.length;
  const { sections, total } = sectionsOf(terms, postings, stream, snapshot.size, text.length);
  const out = new Uint8Array(total);
  new Uint32Array(out.buffer, 0, HEADER_WORDS).set([SNAPSHOT_MAGIC, SNAPSHOT_FORMAT, snapshot.size, terms, postings, stream, text.length]);
  const arrays = [text, snapshot.idf, snapshot.postingStart, snapshot.docs, snapshot.impacts, snapshot.streamTerms, snapshot.streamStart, snapshot.inText];
  arrays.forEach((array, i) => out.set(new Uint8Array(array.buffer, array.byteOffset, array.byteLength), sections[i]!.offset));
  return out;
}

/** A snapshot from `encodeIndexSnapshot`'s bytes, checked for consistency; null when they are not one. */
export function decodeIndexSnapshot(input: Uint8Array): IndexSnapshot | null {
  if (!LITTLE_ENDIAN || input.byteLength < HEADER_WORDS * 4) return null;
  // Typed views need 8-byte alignment within their buffer: copy when the bytes are not aligned.
  const bytes = input.byteOffset % 8 === 0 ? input : input.slice();
  const header = new Uint32Array(bytes.buffer, bytes.byteOffset, HEADER_WORDS);
  const [magic, format, size, terms, postings, stream, textBytes] = header as unknown as number[];
  if (magic !== SNAPSHOT_MAGIC || format !== SNAPSHOT_FORMAT) return null;
  const { sections, total } = sectionsOf(terms!, postings!, stream!, size!, textBytes!);
  if (total !== bytes.byteLength) return null;
  const at = (i: number): number => bytes.byteOffset + sections[i]!.offset;
  const termList = terms === 0 ? [] : new TextDecoder("utf-8", { fatal: false }).decode(bytes.subarray(sections[0]!.offset, sections[0]!.offset + textBytes!)).split("\n");
  if (termList.length !== terms) return null;
  const snapshot: IndexSnapshot = {
    size: size!,
    terms: termList,
    idf: new Float64Array(bytes.buffer, at(1), terms!),
    postingStart: new Int32Array(bytes.buffer, at(2), terms! + 1),
    docs: new Int32Array(bytes.buffer, at(3), postings!),
    impacts: new Float32Array(bytes.buffer, at(4), postings!),
    streamTerms: new Int32Array(bytes.buffer, at(5), stream!),
    streamStart: new Int32Array(bytes.buffer, at(6), size! + 1),
    inText: new Uint8Array(bytes.buffer, at(7), postings!),
  };
  return validSnapshot(snapshot) ? snapshot : null;
}

/** Whether every offset and id of `s` stays within bounds (what searching it relies on). */
function validSnapshot(s: IndexSnapshot): boolean {
  const { size, postingStart, docs, streamTerms, streamStart, idf } = s;
  const terms = s.terms.length;
  if (postingStart[0] !== 0 || postingStart[terms] !== docs.length || streamStart[0] !== 0 || streamStart[size] !== streamTerms.length) return false;
  for (let t = 0; t < terms; t++) if (postingStart[t + 1]! < postingStart[t]! || !Number.isFinite(idf[t]!) || s.terms[t] === "") return false;
  for (let d = 0; d < size; d++) if (streamStart[d + 1]! < streamStart[d]!) return false;
  for (let i = 0; i < docs.length; i++) if (docs[i]! < 0 || docs[i]! >= size) return false;
  for (let i = 0; i < streamTerms.length; i++) if (streamTerms[i]! < 0 || streamTerms[i]! >= terms) return false;
  return new Set(s.terms).size === terms;
}
