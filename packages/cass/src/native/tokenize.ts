/**
 * Text analysis for the native history index. The same analyser runs over indexed messages and
 * over queries, so whatever it does (lower-casing, identifier splitting, stop words, stemming) is
 * applied identically on both sides.
 *
 * A *word* is a run of letters and digits (any script) that may be joined by `_`, `.` or `-` and
 * may end in `+`/`#` (`snake_case`, `node.js`, `cma-es`, `c++`). Each word yields:
 * - its *parts*: the pieces between joiners, each split again at camelCase boundaries
 *   (`useEffect` → `use`, `effect`; `HTMLParser` → `html`, `parser`),
 * - the lower-cased *whole* word when it has more than one part and no dot (`useeffect`,
 *   `snake_case`, `cma-es`), so a query keyword that was lower-cased upstream (core's keyword
 *   extraction does that) still matches,
 * - the compounds inside a dotted word (`user_id` in `orders.user_id`, `useeffect` in
 *   `React.useEffect`).
 * Tokens shorter than 2 characters, stop words, long digit runs and long hash-like strings are
 * dropped; purely alphabetic tokens go through a light suffix stemmer (plurals, -ing, -ed, final e).
 */
import { STOP_WORDS } from "@cass-memory/core";

/** Tokens longer than this are not indexed (blobs, minified code, base64). */
export const MAX_TOKEN_LENGTH = 40;
/** Runs of digits longer than this are ids or timestamps: not indexed. */
const MAX_DIGIT_RUN = 6;
/** Tokens mixing letters and digits longer than this are hashes or ids: not indexed. */
const MAX_ALNUM_LENGTH = 24;

/**
 * Core's stop words (English function words and common code keywords) plus pronouns,
 * quantifiers and the fragments English contractions split into (`don't` → `don`).
 */
export const NATIVE_STOP_WORDS: ReadonlySet<string> = new Set([
  ...STOP_WORDS,
  "my", "your", "our", "its", "their", "his", "mine", "yours", "not", "no", "so", "than", "then",
  "too", "very", "just", "also", "only", "all", "any", "some", "each", "both", "other", "such",
  "own", "same", "about", "above", "below", "up", "down", "out", "off", "over", "under", "again",
  "once", "am", "being", "having", "doing", "because", "until", "while", "between", "against",
  "ll", "ve", "re", "don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn",
  "couldn", "shouldn", "hasn", "haven", "hadn", "ain", "let", "im", "ok", "okay",
]);

// ------------------------------------------------------------------------------------------------
// Character classes (ASCII fast paths, Unicode letters and digits otherwise)

const UNICODE_WORD_CHAR = /[\p{L}\p{N}\p{M}]/u;

function isWordCode(code: number, text: string, index: number): boolean {
  if (code < 128) {
    return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 48 && code <= 57);
  }
  if (code >= 0xd800 && code <= 0xdbff) {
    return UNICODE_WORD_CHAR.test(text.slice(index, index + 2));
  }
  if (code >= 0xdc00 && code <= 0xdfff) {
    // Low surrogate: part of the pair its high surrogate decided on.
    return index > 0 && isWordCode(text.charCodeAt(index - 1), text, index - 1);
  }
  return UNICODE_WORD_CHAR.test(text[index]!);
}

/** `_`, `.` and `-` join the parts of one word when a word character follows them. */
function isJoinerCode(code: number): boolean {
  return code === 95 /* _ */ || code === 46 /* . */ || code === 45 /* - */;
}

// ------------------------------------------------------------------------------------------------
// Stemming

const VOWEL = /[aeiouy]/;

function undouble(stem: string): string {
  const n = stem.length;
  if (n >= 3) {
    const last = stem[n - 1]!;
    if (last === stem[n - 2] && !"aeiouylsz".includes(last)) return stem.slice(0, -1);
  }
  return stem;
}

/**
 * A light English suffix stemmer for lower-case ASCII words: plurals (`queries` → `query`,
 * `fixes` → `fix`, `tests` → `test`), `-ing` and `-ed` (`running` → `run`, `failed` → `fail`),
 * then a final `e` (`cache`, `cached`, `caching` → `cach`). Deliberately conservative: words of
 * three letters or fewer are left alone, and `-ss`/`-us`/`-is` endings are not plurals.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) {
    w = `${w.slice(0, -3)}y`;
  } else if (w.endsWith("sses")) {
    w = w.slice(0, -2);
  } else if (w.endsWith("xes") || w.endsWith("ches") || w.endsWith("shes") || w.endsWith("zzes")) {
    w = w.slice(0, -2);
  } else if (w.endsWith("s")) {
    if (!w.endsWith("ss") && !w.endsWith("us") && !w.endsWith("is")) w = w.slice(0, -1);
  } else if (w.endsWith("ing") && w.length >= 6) {
    const base = w.slice(0, -3);
    if (VOWEL.test(base)) w = undouble(base);
  } else if (w.endsWith("ed") && w.length >= 5) {
    const base = w.slice(0, -2);
    if (VOWEL.test(base) && !base.endsWith("e")) w = undouble(base);
  }
  if (w.length > 4 && w.endsWith("e") && !w.endsWith("ee")) w = w.slice(0, -1);
  return w;
}

// ------------------------------------------------------------------------------------------------
// Normalisation of one token

const ALPHA = /^[a-z]+$/;
const DIGITS = /^[0-9]+$/;
const HAS_DIGIT = /[0-9]/;

/** The indexed form of a lower-cased token, or null when it is not indexed. */
export function normalizeToken(lower: string): string | null {
  if (lower.length < 2 || lower.length > MAX_TOKEN_LENGTH) return null;
  if (NATIVE_STOP_WORDS.has(lower)) return null;
  if (ALPHA.test(lower)) return stem(lower);
  if (DIGITS.test(lower)) return lower.length > MAX_DIGIT_RUN ? null : lower;
  if (lower.length > MAX_ALNUM_LENGTH && HAS_DIGIT.test(lower)) return null;
  return lower;
}

// ------------------------------------------------------------------------------------------------
// Words and their tokens

/** How a token was derived from its word: used to weight query tokens. */
export const TokenKind = {
  /** The word itself (it had a single part). */
  Single: 0,
  /** The whole of a compound word (`useeffect`, `snake_case`). */
  Whole: 1,
  /** One part of a compound word. */
  Part: 2,
} as const;
export type TokenKind = (typeof TokenKind)[keyof typeof TokenKind];

/** Splits one joiner-free piece at camelCase boundaries (`HTMLParser` → `HTML`, `Parser`). */
function camelParts(piece: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (let i = 1; i < piece.length; i++) {
    const prev = piece.charCodeAt(i - 1);
    const cur = piece.charCodeAt(i);
    const prevLower = prev >= 97 && prev <= 122;
    const prevUpper = prev >= 65 && prev <= 90;
    const curUpper = cur >= 65 && cur <= 90;
    if (curUpper && prevLower) {
      out.push(piece.slice(start, i));
      start = i;
    } else if (prevUpper && !curUpper && cur >= 97 && cur <= 122 && i - 1 > start) {
      // "HTMLParser": the boundary is before the last capital of a capital run.
      out.push(piece.slice(start, i - 1));
      start = i - 1;
    }
  }
  out.push(piece.slice(start));
  return out;
}

/** Character classes of a word, from one pass over it. */
const HAS_UPPER = 1;
const HAS_JOINER = 2;
const HAS_OTHER = 4; // anything that is not an ASCII lower-case letter

function classify(word: string): number {
  let flags = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if (c >= 97 && c <= 122) continue;
    if (c >= 65 && c <= 90) flags |= HAS_UPPER;
    else if (c === 95 || c === 46 || c === 45) flags |= HAS_JOINER;
    else flags |= HAS_OTHER;
  }
  return flags;
}

/**
 * Calls `emit` for every token of one word (the raw text between separators): its parts, then the
 * lower-cased compounds it contains: each `.`-separated segment made of several parts
 * (`user_id` in `orders.user_id`), each camelCase piece (`useEffect` in `use_useEffect`), and the
 * whole word when it has no dot. Each distinct compound is emitted once.
 */
export function analyzeWord(word: string, emit: (token: string, kind: TokenKind) => void): void {
  const flags = classify(word);
  if (flags === 0) {
    // A plain lower-case word: the vast majority of prose.
    if (word.length >= 2 && word.length <= MAX_TOKEN_LENGTH && !NATIVE_STOP_WORDS.has(word)) emit(stem(word), TokenKind.Single);
    return;
  }
  if ((flags & HAS_JOINER) === 0) {
    // No joiners: a single piece, maybe camelCase.
    const split = (flags & HAS_UPPER) !== 0 ? camelParts(word) : null;
    if (split === null || split.length === 1) {
      const t = normalizeToken((flags & (HAS_UPPER | HAS_OTHER)) !== 0 ? word.toLowerCase() : word);
      if (t !== null) emit(t, TokenKind.Single);
      return;
    }
    for (const p of split) {
      const t = normalizeToken(p.toLowerCase());
      if (t !== null) emit(t, TokenKind.Part);
    }
    const whole = normalizeToken(word.toLowerCase());
    if (whole !== null) emit(whole, TokenKind.Whole);
    return;
  }
  const lower = (flags & (HAS_UPPER | HAS_OTHER)) !== 0 ? word.toLowerCase() : word;
  const parts: string[] = [];
  const compounds: string[] = [];
  const segments = word.split(".");
  const lowerSegments = segments.length > 1 ? lower.split(".") : [lower];
  for (let s = 0; s < segments.length; s++) {
    const segment = segments[s]!;
    const pieces = segment.split(JOINER_IN_SEGMENT);
    const before = parts.length;
    for (const piece of pieces) {
      const split = (flags & HAS_UPPER) !== 0 ? camelParts(piece) : [piece];
      if (split.length > 1) {
        if (pieces.length > 1 || segments.length > 1) compounds.push(piece.toLowerCase());
        for (const p of split) parts.push(p.toLowerCase());
      } else {
        parts.push((flags & (HAS_UPPER | HAS_OTHER)) !== 0 ? piece.toLowerCase() : piece);
      }
    }
    if (pieces.length > 1 && segments.length > 1 && parts.length - before > 1) compounds.push(lowerSegments[s]!);
  }
  if (parts.length === 1) {
    const t = normalizeToken(parts[0]!);
    if (t !== null) emit(t, TokenKind.Single);
    return;
  }
  for (const p of parts) {
    const t = normalizeToken(p);
    if (t !== null) emit(t, TokenKind.Part);
  }
  // The whole word, unless it is a dotted path or member access (`obj.method`, `file.ts`): those
  // are rarely searched as a whole (core's query builder drops keywords containing a dot) and
  // would each add a dictionary term.
  if (segments.length === 1) compounds.push(lower);
  const emitted: string[] = [];
  for (const c of compounds) {
    const t = normalizeToken(c);
    if (t !== null && !emitted.includes(t)) {
      emitted.push(t);
      emit(t, TokenKind.Whole);
    }
  }
}

const JOINER_IN_SEGMENT = /[_-]/;

/**
 * Scans `text` for words and calls `onSpan(start, end)` for each (`end` exclusive). A word may
 * carry a trailing `+`/`#` run of up to two characters (`c++`, `c#`).
 */
export function scanWordSpans(text: string, onSpan: (start: number, end: number) => void): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    let code = text.charCodeAt(i);
    if (!isWordCode(code, text, i)) {
      i++;
      continue;
    }
    const start = i;
    i++;
    for (;;) {
      while (i < n && isWordCode(text.charCodeAt(i), text, i)) i++;
      // A joiner continues the word only when a word character follows it.
      if (i + 1 < n && isJoinerCode(text.charCodeAt(i)) && isWordCode(text.charCodeAt(i + 1), text, i + 1)) {
        i += 2;
        continue;
      }
      break;
    }
    let end = i;
    code = text.charCodeAt(end);
    if (code === 43 /* + */ || code === 35 /* # */) {
      let j = end;
      while (j < n && j - end < 2 && (text.charCodeAt(j) === 43 || text.charCodeAt(j) === 35)) j++;
      if (j >= n || !isWordCode(text.charCodeAt(j), text, j)) end = j;
    }
    onSpan(start, end);
    i = Math.max(i, end);
  }
}

/** Like scanWordSpans, with the word itself. */
export function scanWords(text: string, onWord: (word: string, start: number, end: number) => void): void {
  scanWordSpans(text, (start, end) => onWord(text.slice(start, end), start, end));
}

/**
 * Memo of word → tokens for the indexer: prose and code repeat the same words constantly, so most
 * words are analysed once. Bounded: it is cleared when it grows past `maxEntries`.
 */
export class WordCache {
  private readonly map = new Map<string, readonly string[]>();
  constructor(private readonly maxEntries = 200_000) {}

  tokens(word: string): readonly string[] {
    let hit = this.map.get(word);
    if (hit === undefined) {
      const out: string[] = [];
      analyzeWord(word, (t) => out.push(t));
      hit = out;
      if (this.map.size >= this.maxEntries) this.map.clear();
      this.map.set(word, hit);
    }
    return hit;
  }
}

/** Every indexed token of `text`, in order, with repeats. */
export function tokenizeForIndex(text: string, cache: WordCache = new WordCache()): string[] {
  const out: string[] = [];
  scanWords(text, (word) => {
    for (const t of cache.tokens(word)) out.push(t);
  });
  return out;
}

// ------------------------------------------------------------------------------------------------
// Queries

/** One weighted query token. `prefix`/`substring` tokens are expanded against the dictionary. */
export interface QueryTerm {
  token: string;
  weight: number;
  match: "exact" | "prefix" | "substring";
}

export interface ParsedQuery {
  terms: QueryTerm[];
  /** Tokens whose messages are excluded (`NOT x`, `-x`). */
  excluded: string[];
}

/** Most tokens one query is expanded to (buildCassQuery sends at most 8 keywords). */
export const MAX_QUERY_TERMS = 32;
/** Weight of one part of a compound query word relative to the whole word. */
const PART_WEIGHT = 0.5;
const OPERATORS = new Set(["OR", "AND", "||", "&&", "|"]);

/**
 * Parses a cass-style query: whitespace-separated keywords, optionally joined by `OR`/`AND`
 * (every query is scored as a disjunction: BM25 rewards messages that match more of the terms),
 * `NOT x` or `-x` to exclude, quotes ignored (phrases become their words), `foo*` for a prefix and
 * `*foo*` for a substring of indexed tokens.
 */
export function parseQuery(query: string): ParsedQuery {
  const terms = new Map<string, QueryTerm>();
  const excluded = new Set<string>();
  const add = (token: string, weight: number, match: QueryTerm["match"]): void => {
    const key = `${match}:${token}`;
    const prev = terms.get(key);
    if (prev === undefined) terms.set(key, { token, weight, match });
    else if (weight > prev.weight) prev.weight = weight;
  };
  const raw = query.replace(/["“”]/g, " ").split(/\s+/).filter((w) => w !== "");
  let negateNext = false;
  for (let word of raw) {
    if (OPERATORS.has(word)) continue;
    if (word === "NOT") {
      negateNext = true;
      continue;
    }
    let negate = negateNext;
    negateNext = false;
    if (word.length > 1 && word.startsWith("-")) {
      negate = true;
      word = word.slice(1);
    }
    const wildcard = word.includes("*");
    if (wildcard && !negate) {
      const leading = word.startsWith("*");
      const core = word.replace(/\*/g, "").toLowerCase();
      if (core.length >= 2 && !/\s/.test(core)) {
        add(core, 1, leading ? "substring" : "prefix");
      }
      continue;
    }
    const cleaned = word.replace(/\*/g, "");
    scanWords(cleaned, (w) => {
      analyzeWord(w, (token, kind) => {
        if (negate) excluded.add(token);
        else add(token, kind === TokenKind.Part ? PART_WEIGHT : 1, "exact");
      });
    });
  }
  return { terms: [...terms.values()].slice(0, MAX_QUERY_TERMS), excluded: [...excluded] };
}
