import { CONCEPT_GROUPS } from "./concepts.js";
import type { ConceptPlan } from "./concept-match.js";
import type { DocumentTerms, FieldTerms, IndexedDocument } from "./lexical-index.js";

/**
 * Plain-data forms of what the ranker derives from text, so that a host can keep them between
 * processes: a CLI process otherwise analyses every rule (and the concept map) on every call.
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

let fingerprint: string | undefined;

/** Identifies the analyser and the shipped concept map: saved data is only used under the same fingerprint. */
export function lexicalFingerprint(): string {
  fingerprint ??= `lexical-${ANALYZER_VERSION}-${hashText(JSON.stringify(CONCEPT_GROUPS))}`;
  return fingerprint;
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

const isStringArray = (value: unknown): value is string[] => Array.isArray(value) && value.every((x) => typeof x === "string");
const isGroupIndex = (value: unknown): value is number => Number.isInteger(value) && (value as number) >= 0 && (value as number) < CONCEPT_GROUPS.length;

/** A saved plan of the shipped concept map, or null when it is not one. */
export function decodeConceptPlan(value: unknown): ConceptPlan | null {
  if (value === null || typeof value !== "object") return null;
  const plan = value as Record<string, unknown>;
  const { inserts, joined, surfaces, maxLength } = plan;
  if (!Array.isArray(inserts) || !Array.isArray(joined) || !Array.isArray(surfaces) || !Number.isInteger(maxLength)) return null;
  if (surfaces.length !== CONCEPT_GROUPS.length || !surfaces.every(isStringArray)) return null;
  for (const entry of inserts) {
    if (!Array.isArray(entry) || entry.length !== 2 || !isStringArray(entry[0]) || entry[0].length === 0 || !isGroupIndex(entry[1])) return null;
  }
  for (const entry of joined) {
    if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== "string" || !Array.isArray(entry[1]) || !entry[1].every(isGroupIndex)) return null;
  }
  return value as ConceptPlan;
}
