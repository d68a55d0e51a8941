import type { CandidateSearch } from "@cass-memory/core";

/**
 * The candidate search behind `readCandidates` on PostgreSQL: the task's words (and each concept's
 * phrasings as phrases) become one `to_tsquery('english', …)` OR-query matched against the
 * bullets' generated tsvector through its GIN index; active matches are ranked with `ts_rank`
 * (content weighs more than tags, tags more than the category) and the best `limit` kept.
 */

export const MAX_QUERY_WORDS = 64;
const MAX_CONCEPTS = 16;
const MAX_CONCEPT_PHRASES = 64;
const MAX_WORD_LENGTH = 100;

function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    if (match[0].length <= MAX_WORD_LENGTH) words.push(match[0]);
  }
  return words;
}

/**
 * The tsquery text for a candidate search, or null when it has no words. Only letters and digits
 * reach the query, so no input can change its syntax.
 */
export function tsQueryOf(query: Pick<CandidateSearch, "terms" | "concepts">): string | null {
  const parts = new Set<string>();
  for (const term of query.terms) {
    for (const word of wordsOf(term)) {
      if (parts.size >= MAX_QUERY_WORDS) break;
      parts.add(word);
    }
  }
  for (const phrasings of (query.concepts ?? []).slice(0, MAX_CONCEPTS)) {
    for (const phrasing of phrasings.slice(0, MAX_CONCEPT_PHRASES)) {
      const words = wordsOf(phrasing).slice(0, 8);
      if (words.length === 1) parts.add(words[0] as string);
      else if (words.length > 1) parts.add(`(${words.join(" <-> ")})`);
    }
  }
  return parts.size === 0 ? null : [...parts].join(" | ");
}

/** Bullets that are neither retired nor deprecated. */
export const ACTIVE_FILTER = "state <> 'retired' AND maturity <> 'deprecated' AND NOT deprecated";
