/**
 * Snippets: the window of a message (at most SNIPPET_CHARS characters, newlines kept) that holds
 * the most query terms, cut at word boundaries and marked with "…" where text was left out.
 */
import { WordCache, scanWords } from "./tokenize.js";

export const SNIPPET_CHARS = 400;
/** Share of the spare room placed before the first match (the rest goes after the last). */
const LEAD_SHARE = 0.3;
/** How far a cut may move to land on whitespace. */
const BOUNDARY_SLACK = 24;

interface Match {
  start: number;
  end: number;
  tokens: readonly string[];
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

function safeCut(text: string, index: number): number {
  // Never split a surrogate pair.
  const code = text.charCodeAt(index - 1);
  return code >= 0xd800 && code <= 0xdbff ? index - 1 : index;
}

/**
 * The best window of `text` for the query tokens `weights` (token → weight): the span of at most
 * `maxChars` characters whose matched distinct tokens have the highest total weight; ties go to
 * the earliest span. With no match, the start of the text.
 */
export function makeSnippet(text: string, weights: ReadonlyMap<string, number>, maxChars = SNIPPET_CHARS, cache = new WordCache(10_000)): string {
  if (text.length <= maxChars) return text.trim();
  const matches: Match[] = [];
  scanWords(text, (word, start, end) => {
    const tokens = cache.tokens(word).filter((t) => weights.has(t));
    if (tokens.length > 0) matches.push({ start, end, tokens });
  });

  let spanStart = 0;
  let spanEnd = 0;
  if (matches.length > 0) {
    // Sliding window over matches whose extent fits in maxChars.
    const counts = new Map<string, number>();
    let weight = 0;
    let best = -1;
    let left = 0;
    for (let right = 0; right < matches.length; right++) {
      for (const t of matches[right]!.tokens) {
        const c = counts.get(t) ?? 0;
        if (c === 0) weight += weights.get(t)!;
        counts.set(t, c + 1);
      }
      while (matches[right]!.end - matches[left]!.start > maxChars) {
        for (const t of matches[left]!.tokens) {
          const c = counts.get(t)! - 1;
          counts.set(t, c);
          if (c === 0) weight -= weights.get(t)!;
        }
        left++;
      }
      if (weight > best + 1e-9) {
        best = weight;
        spanStart = matches[left]!.start;
        spanEnd = matches[right]!.end;
      }
    }
  }

  const spare = Math.max(0, maxChars - (spanEnd - spanStart));
  let start = Math.max(0, spanStart - Math.floor(spare * LEAD_SHARE));
  let end = Math.min(text.length, start + maxChars);
  start = Math.max(0, Math.min(start, end - maxChars));

  // Move the cuts onto whitespace when it is near, without losing the matched span.
  if (start > 0) {
    for (let i = start; i < Math.min(spanStart, start + BOUNDARY_SLACK); i++) {
      if (isSpace(text.charCodeAt(i))) {
        start = i + 1;
        break;
      }
    }
  }
  if (end < text.length) {
    for (let i = end; i > Math.max(spanEnd, end - BOUNDARY_SLACK); i--) {
      if (isSpace(text.charCodeAt(i - 1))) {
        end = i - 1;
        break;
      }
    }
  }
  const first = text.charCodeAt(start);
  if (first >= 0xdc00 && first <= 0xdfff) start++;
  end = safeCut(text, end);
  const body = text.slice(start, end).trim();
  return `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`;
}
