import { isNoiseWord } from "./lexical/analyze.js";
import { sha256Hex } from "./sha256.js";

/**
 * Text primitives of the original (reference §5.1): tokenizer, content hash, Jaccard similarity,
 * keyword extraction and the bullet id format.
 */

/**
 * Tokens: runs of [a-z0-9] that may be joined by `.`, `_`, `-`, `+` and may end in `+`/`#`, so
 * `node.js`, `user_id`, `c++` and `c#` survive as single tokens.
 */
const TOKEN_PATTERN = /[a-z0-9]+(?:[._\-+]+[a-z0-9]+)*[+#]*|[a-z0-9]+[+#]*/g;

/** Lower-cases `text` and returns its tokens of two characters or more, in order (with repeats). */
export function tokenize(text: string): string[] {
  if (!text) return [];
  const matches = text.toLowerCase().match(TOKEN_PATTERN);
  if (matches === null) return [];
  const out: string[] = [];
  for (const token of matches) if (token.length >= 2) out.push(token);
  return out;
}

/** The distinct tokens of `text`. */
export function tokenSet(text: string): Set<string> {
  return new Set(tokenize(text));
}

/** Lower-case, collapse whitespace runs to one space, trim: the form that content hashes are taken of. */
export function normalizeForHash(text: string): string {
  return text.toLowerCase().replace(/\s+/g, " ").trim();
}

/**
 * First 16 hex characters of the SHA-256 of the normalised text. Text that normalises to the empty
 * string hashes to "" (so empty contents never collide with real ones).
 */
export function hashContent(text: string): string {
  const normalized = normalizeForHash(text ?? "");
  if (normalized === "") return "";
  return sha256Hex(normalized).slice(0, 16);
}

/** Jaccard index of two token sets: both empty → 1, exactly one empty → 0. */
export function jaccardOfSets(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  if (a.size === 0 || b.size === 0) return 0;
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let intersection = 0;
  for (const token of small) if (large.has(token)) intersection++;
  return intersection / (a.size + b.size - intersection);
}

/** Jaccard similarity of the token sets of two texts. */
export function jaccardSimilarity(a: string, b: string): number {
  return jaccardOfSets(tokenSet(a), tokenSet(b));
}

/** Words ignored by keyword extraction (the original's list, plus common code keywords). */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  "the", "a", "an", "is", "are", "was", "were", "be", "been", "have", "has", "had", "do", "does",
  "did", "will", "would", "could", "should", "can", "to", "of", "in", "for", "on", "with", "at",
  "by", "from", "as", "into", "through", "during", "before", "after", "and", "or", "but", "if",
  "when", "where", "why", "how", "this", "that", "these", "those", "what", "which", "who", "there",
  "here", "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them",
  "const", "var", "let", "import", "export", "return", "null", "undefined", "true", "false",
  "async", "await", "new",
]);

/**
 * Whether a token is noise rather than a keyword: numbers other than 3–4 digits (statuses, exit
 * codes and ports stay), dates, versions and other digit runs joined by `.`/`-`/`_`, hex literals,
 * and hash-like ids (commit SHAs, pod suffixes, UUIDs: letters and digits alternating).
 */
export function isNoiseToken(token: string): boolean {
  if (/^[\d._+-]+$/.test(token)) return !/^\d{3,4}$/.test(token);
  if (/^0x[0-9a-f]+$/.test(token)) return true;
  const parts = token.split(/[._-]+/).filter((p) => p !== "");
  return parts.length > 0 && (isNoiseWord(parts.join("")) || parts.every((p) => isNoiseWord(p)));
}

/**
 * Keywords of a text: its tokens minus stop words and noise (isNoiseToken), ordered by frequency
 * (descending; ties keep first-seen order), at most `max`.
 */
export function extractKeywords(text: string, max = 10): string[] {
  const counts = new Map<string, number>();
  for (const token of tokenize(text)) {
    if (STOP_WORDS.has(token) || isNoiseToken(token)) continue;
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  // Array.prototype.sort is stable, so equal counts keep insertion (first-seen) order.
  return [...counts.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, Math.max(0, max))
    .map(([keyword]) => keyword);
}

/** A bullet id in the original's format: `b-<ms since epoch, base36>-<6 random base36 chars>`. */
export function formatBulletId(nowMs: number, random6: string): string {
  return `b-${Math.floor(nowMs).toString(36)}-${random6}`;
}

/** `count` base-36 characters drawn from `random` (a function returning numbers in [0, 1)). */
export function randomBase36(count: number, random: () => number): string {
  let out = "";
  for (let i = 0; i < count; i++) {
    const digit = Math.min(35, Math.max(0, Math.floor(random() * 36)));
    out += digit.toString(36);
  }
  return out;
}
