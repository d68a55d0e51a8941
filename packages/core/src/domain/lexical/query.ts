import { analyze, isParticle, type Analysis } from "./analyze.js";
import { stem } from "./stem.js";
import { matchConcepts, shippedConcepts, type CompiledConcepts } from "./concept-match.js";
import type { IndexQuery, QueryTerm } from "./lexical-index.js";

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
 * Words for a full-text candidate search (e.g. an SQLite FTS5 OR-query over a huge playbook): the
 * task's words as written (lower-case, unstemmed, stop words and noise removed, identifiers split,
 * with their joined forms) followed by the words of every concept-map phrasing the task's concepts
 * have. Only letters and digits, distinct, in that order.
 */
export function candidateQueryTerms(task: string): string[] {
  const concepts = shippedConcepts();
  const { analysis, groups } = analyzeQuery(task, DEFAULT_QUERY, concepts);
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (word: string): void => {
    if (word.length < 2 || seen.has(word) || !/^[\p{L}\p{N}]+$/u.test(word)) return;
    seen.add(word);
    out.push(word);
  };
  analysis.surfaces.forEach((w, i) => {
    if (!isParticle(analysis.terms[i]!)) add(w);
  });
  for (const w of analysis.joinedSurfaces) add(w);
  for (const g of groups) for (const w of concepts.surfaces[g]!) add(w);
  return out;
}
