import { analyze, isParticle, type Analysis } from "./analyze.js";
import { stem } from "./stem.js";
import { matchConcepts, shippedConcepts, type CompiledConcepts } from "./concept-match.js";
import type { IndexQuery, QueryTerm } from "./lexical-index.js";
import type { CandidateSearch } from "../../ports.js";

/**
 * From a task description to an index query: the task's own terms (weighted by how often the task
 * repeats them, with diminishing returns, so a pasted log that repeats one word fifty times does
 * not drown the question), plus one pseudo-term per concept-map group the task mentions, at a
 * reduced weight.
 */

export interface QueryParams {
  /** Weight of a concept-map expansion relative to a literal term. */
  expansionWeight: number;

  /** A term repeated r times in the task weighs 1 + repeatBoost·ln(r), at most maxTermWeight. */
  repeatBoost: number;
  maxTermWeight: number;
}

export const DEFAULT_QUERY: Readonly<QueryParams> = Object.freeze({
  expansionWeight: 0.8,

  repeatBoost: 0.3,
  maxTermWeight: 2,
});

export interface AnalyzedQuery {
  query: IndexQuery;
  analysis: Analysis;
  /** Concept groups the task mentions (indexes into the compiled map), distinct, in text order. */
  groups: number[];
}

/** What a query may ask of the collection it will search. */
export interface Vocabulary {
  has(term: string): boolean;
}

/**
 * With a `vocabulary` (the index to be searched), two adjacent task words whose concatenation is
 * an indexed term are searched as that word too ("roll back" also finds "rollback", "time out"
 * "timeout", "set up" "setup").
 */
export function analyzeQuery(
  task: string,
  params: Readonly<QueryParams> = DEFAULT_QUERY,
  concepts: CompiledConcepts = shippedConcepts(),
  vocabulary?: Vocabulary,
): AnalyzedQuery {
  const analysis = analyze(task);
  const repeats = new Map<string, number>();
  const words = analysis.terms.filter((t) => !isParticle(t));
  for (const t of words) repeats.set(t, (repeats.get(t) ?? 0) + 1);
  for (const t of analysis.joined) repeats.set(t, (repeats.get(t) ?? 0) + 1);
  if (vocabulary !== undefined) {
    for (let i = 1; i < analysis.surfaces.length; i++) {
      const compound = stem(analysis.surfaces[i - 1]! + analysis.surfaces[i]!);
      if (!repeats.has(compound) && vocabulary.has(compound)) repeats.set(compound, 1);
    }
  }
  const terms: QueryTerm[] = [];
  for (const [term, r] of repeats) {
    const weight = Math.min(params.maxTermWeight, 1 + params.repeatBoost * Math.log(r));
    terms.push({ term, weight, literal: true });
  }

  const groups = [...new Set(matchConcepts(analysis, concepts))];
  for (const g of groups) terms.push({ term: concepts.terms[g]!, weight: params.expansionWeight, literal: false });

  const pairs: Array<readonly [string, string]> = [];
  const seenPairs = new Set<string>();
  for (let i = 1; i < words.length; i++) {
    const a = words[i - 1]!;
    const b = words[i]!;
    if (a === b) continue;
    const key = a < b ? `${a} ${b}` : `${b} ${a}`;
    if (seenPairs.has(key)) continue;
    seenPairs.add(key);
    pairs.push([a, b]);
  }
  return { query: { terms, pairs }, analysis, groups };
}

/**
 * What a full-text candidate search (an SQLite FTS5 index over a huge playbook) needs to find the
 * rules the ranker would score for a task (the port's CandidateSearch without its limit and ids):
 * - `terms`: the task's words as written (lower-case, unstemmed, stop words and noise removed,
 *   identifiers split, with their joined forms), letters and digits only, distinct, in order;
 * - `concepts`: one entry per concept-map group the task mentions, holding that group's phrasings
 *   as written. The ranker scores a group as one pseudo-term shared by every rule that contains
 *   any of its phrasings, at `expansionWeight` of a word; a search should do the same (match the
 *   phrasings as phrases, count the group once) rather than treat each of their words as a term
 *   of the task.
 * - `conceptWeight`: that weight.
 */
export type CandidateQuery = Required<Omit<CandidateSearch, "limit" | "ids">>;

const isWord = (word: string): boolean => word.length >= 2 && /^[\p{L}\p{N}]+$/u.test(word);

/** The task's own candidate words and the concept groups it mentions (distinct, in text order). */
function candidateParts(task: string): { terms: string[]; groups: number[]; concepts: CompiledConcepts } {
  const concepts = shippedConcepts();
  const { analysis, groups } = analyzeQuery(task, DEFAULT_QUERY, concepts);
  const terms = new Set<string>();
  analysis.surfaces.forEach((w, i) => {
    if (!isParticle(analysis.terms[i]!) && isWord(w)) terms.add(w);
  });
  for (const w of analysis.joinedSurfaces) if (isWord(w)) terms.add(w);
  return { terms: [...terms], groups: [...new Set(groups)], concepts };
}

export function candidateQuery(task: string): CandidateQuery {
  const { terms, groups, concepts } = candidateParts(task);
  return { terms, concepts: groups.map((g) => [...concepts.groups[g]!.phrases]), conceptWeight: DEFAULT_QUERY.expansionWeight };
}

/**
 * The words of `candidateQuery` in one flat list, for a search that takes only words: the task's
 * own words followed by every word of its concepts' phrasings, distinct, in that order.
 */
export function candidateQueryTerms(task: string): string[] {
  const { terms, groups, concepts } = candidateParts(task);
  const out = new Set(terms);
  for (const g of groups) for (const w of concepts.surfaces[g]!) if (isWord(w)) out.add(w);
  return [...out];
}
