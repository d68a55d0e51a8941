import type { CandidateSearch } from "@cass-memory/core";
import type { Sql } from "./database.js";

/**
 * The candidate search behind `readCandidates` on PostgreSQL (what `cm context` ranks on a large
 * playbook). It follows the SQLite store's policy (packages/store-sqlite/src/candidate-search.ts):
 *
 * 1. The task's words become index terms with the column's own text configuration ('english'):
 *    one query term per distinct lexeme sequence ("deploys" and "deployed" are one term). Each
 *    concept (a concept-map group with its phrasings) is one term: any of its phrasings as a phrase.
 * 2. A term held by more than COMMON_TERM_SHARE of the layer's bullets in some column is set aside:
 *    it says little about a rule and is what makes an OR query match most of the playbook. How many
 *    bullets hold a lexeme in each column comes from `cm_terms` (schema migration 2, kept by
 *    triggers in every write), so deciding costs one indexed read, not a scan of the term's list.
 *    Phrases the table cannot answer exactly are counted through the GIN index, up to the cap.
 *    Unlike the SQLite store, stop words (PostgreSQL's english list) are no terms at all.
 * 3. The other terms are matched through the GIN index of `cm_search` (a narrow copy of what the
 *    search needs, so matches sit on few pages), one bitmap scan per term. A bullet scores,
 *    per term, weight × idf × saturated count of the columns holding it (BM25's tf part, k1 = 1.2),
 *    summed. Active bullets matching in content or tags come first, category-only ones fill up.
 * 4. The best POOL_FACTOR × limit active bullets are damped for length (as bm25 does) and the best
 *    `limit` kept. When fewer than `limit` active bullets match in content or tags, the common
 *    terms are added and the search runs again.
 *
 * Everything but the choice of terms runs in the server: the client receives only the chosen rows.
 */

export const MAX_QUERY_WORDS = 64;
/** Terms held by more than this share of the bullets (in one column) are read only when the others find too few. */
export const COMMON_TERM_SHARE = 0.15;
/** How many active bullets (× limit) are damped for length before the best `limit` are kept. */
export const POOL_FACTOR = 2;
export const DEFAULT_CONCEPT_WEIGHT = 0.8;
const MAX_CONCEPTS = 16;
const MAX_CONCEPT_PHRASES = 64;
const MAX_WORD_LENGTH = 100;
const MAX_PHRASE_WORDS = 8;
const TEXT_CONFIG = "english";
const WEIGHTS = ["A", "B", "C"] as const;

function wordsOf(text: string): string[] {
  const words: string[] = [];
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    if (match[0].length <= MAX_WORD_LENGTH) words.push(match[0]);
  }
  return words;
}

/** The distinct words (letters and digits, lower-case) of `terms`, in order, at most `max`. */
export function queryWords(terms: readonly string[], max = MAX_QUERY_WORDS): string[] {
  const words = new Set<string>();
  for (const term of terms) {
    for (const word of wordsOf(term)) {
      if (words.size >= max) return [...words];
      words.add(word);
    }
  }
  return [...words];
}

/**
 * A plain OR tsquery of the search's words and phrases, or null when it has none (kept for
 * diagnostics and tests). Only letters and digits reach the query, so no input changes its syntax.
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
      const words = wordsOf(phrasing).slice(0, MAX_PHRASE_WORDS);
      if (words.length === 1) parts.add(words[0] as string);
      else if (words.length > 1) parts.add(`(${words.join(" <-> ")})`);
    }
  }
  return parts.size === 0 ? null : [...parts].join(" | ");
}

/** One text's lexemes in order, with their word positions (for phrase distances). */
interface Lexed {
  lexemes: string[];
  positions: number[];
}

/** A query term: any of its phrases (a phrase = lexemes at relative distances). */
interface Term {
  phrases: Lexed[];
  weight: number;
}

function quoteLexeme(lexeme: string): string {
  return `'${lexeme.replaceAll("\\", "\\\\").replaceAll("'", "''")}'`;
}

/** The tsquery text of a term, optionally restricted to one weight (column). */
export function termQuery(term: Term, weight?: string): string {
  const suffix = weight === undefined ? "" : `:${weight}`;
  const phrases = term.phrases.map((phrase) => {
    let text = quoteLexeme(phrase.lexemes[0] as string) + suffix;
    for (let i = 1; i < phrase.lexemes.length; i += 1) {
      const distance = Math.max(1, (phrase.positions[i] as number) - (phrase.positions[i - 1] as number));
      text += ` <${distance}> ${quoteLexeme(phrase.lexemes[i] as string)}${suffix}`;
    }
    return phrase.lexemes.length > 1 ? `(${text})` : text;
  });
  return phrases.length === 1 ? (phrases[0] as string) : phrases.join(" | ");
}

export interface CandidateRow {
  row: number;
  pos: number;
  id: string;
  body: string;
}

interface TermStats {
  /** Bullets of the layer. */
  rows: number;
  /** Bullets holding a lexeme, per column weight ('A', 'B', 'C'). */
  df: Map<string, number>;
}

/**
 * Lexemes (in order, with positions) of each text, by the column's text configuration, and the
 * layer's term statistics for every single lexeme met. One round trip.
 */
async function lexAndStats(sql: Sql, space: string, texts: string[]): Promise<{ lexed: Lexed[]; stats: TermStats }> {
  const result = await sql.query({
    text: `WITH input AS (SELECT t, i FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i)),
           lex AS (SELECT i, l.lexeme, l.positions[1] AS p FROM input, unnest(to_tsvector('${TEXT_CONFIG}', t)) AS l),
           words AS (SELECT i, array_agg(lexeme ORDER BY p) AS lexemes, array_agg(p ORDER BY p) AS positions FROM lex GROUP BY i),
           stats AS (SELECT lexeme, weight::text AS weight, df FROM cm_terms WHERE space = $1 AND lexeme IN (SELECT lexeme FROM lex) AND weight IN ('A', 'B', 'C'))
           SELECT 'w' AS kind, i::int AS i, lexemes, positions, NULL::text AS weight, NULL::bigint AS df FROM words
           UNION ALL SELECT 's', NULL, ARRAY[lexeme], NULL, weight, df FROM stats
           UNION ALL SELECT 'n', NULL, NULL, NULL, NULL, (SELECT df FROM cm_terms WHERE space = $1 AND lexeme = '' AND weight = '*')`,
    values: [space, texts],
  });
  const lexed: Lexed[] = texts.map(() => ({ lexemes: [], positions: [] }));
  const stats: TermStats = { rows: 0, df: new Map() };
  for (const r of result.rows as Array<{ kind: string; i: number | null; lexemes: string[] | null; positions: number[] | null; weight: string | null; df: number | null }>) {
    if (r.kind === "w") lexed[(r.i as number) - 1] = { lexemes: r.lexemes ?? [], positions: r.positions ?? [] };
    else if (r.kind === "s") stats.df.set(`${(r.lexemes as string[])[0]}\u0000${r.weight}`, Number(r.df));
    else stats.rows = Number(r.df ?? 0);
  }
  return { lexed, stats };
}

/** The terms of a search: distinct words first (in order), then the concepts. */
function termsOf(query: CandidateSearch, lexed: Lexed[], words: string[]): Term[] {
  const terms: Term[] = [];
  const seen = new Set<string>();
  words.forEach((_, i) => {
    const l = lexed[i] as Lexed;
    if (l.lexemes.length === 0) return; // a stop word, or nothing indexable
    const key = l.lexemes.join(" ");
    if (seen.has(key)) return;
    seen.add(key);
    terms.push({ phrases: [l], weight: 1 });
  });
  const weight = query.conceptWeight !== undefined && query.conceptWeight > 0 ? query.conceptWeight : DEFAULT_CONCEPT_WEIGHT;
  let next = words.length;
  for (const phrasings of (query.concepts ?? []).slice(0, MAX_CONCEPTS)) {
    const phrases: Lexed[] = [];
    const keys = new Set<string>();
    for (const phrasing of phrasings.slice(0, MAX_CONCEPT_PHRASES)) {
      if (wordsOf(phrasing).length === 0) continue;
      const l = lexed[next] as Lexed;
      next += 1;
      if (l.lexemes.length === 0) continue;
      const key = l.lexemes.map((x, j) => `${x}@${(l.positions[j] as number) - (l.positions[0] as number)}`).join(" ");
      if (keys.has(key)) continue;
      keys.add(key);
      phrases.push(l);
    }
    if (phrases.length > 0) terms.push({ phrases, weight });
  }
  return terms;
}

/** The texts to lexize: the words, then each concept's phrasings (those with any word). */
function textsOf(query: CandidateSearch, words: string[]): string[] {
  const texts = [...words];
  for (const phrasings of (query.concepts ?? []).slice(0, MAX_CONCEPTS)) {
    for (const phrasing of phrasings.slice(0, MAX_CONCEPT_PHRASES)) {
      const w = wordsOf(phrasing).slice(0, MAX_PHRASE_WORDS);
      if (w.length > 0) texts.push(w.join(" "));
    }
  }
  return texts;
}

/**
 * Per column, how many bullets hold the term at most (exact for one lexeme; for a phrase the
 * rarest of its lexemes; for several phrases the sum), from the term statistics.
 */
function dfBound(term: Term, stats: TermStats, weight: string): { bound: number; exact: boolean } {
  let bound = 0;
  let exact = term.phrases.length === 1;
  for (const phrase of term.phrases) {
    if (phrase.lexemes.length > 1) exact = false;
    bound += Math.min(...phrase.lexemes.map((lexeme) => stats.df.get(`${lexeme}\u0000${weight}`) ?? 0));
  }
  return { bound, exact };
}

/** Splits the terms into selective and common ones (see the module comment). */
async function splitCommon(sql: Sql, space: string, terms: Term[], stats: TermStats): Promise<{ selective: Term[]; common: Term[] }> {
  const cap = Math.ceil(COMMON_TERM_SHARE * stats.rows);
  const verdict: Array<boolean | null> = terms.map((term) => {
    let unsure = false;
    for (const weight of WEIGHTS) {
      const { bound, exact } = dfBound(term, stats, weight);
      if (bound <= cap) continue;
      if (exact) return true;
      unsure = true;
    }
    return unsure ? null : false;
  });
  const unsure = terms.flatMap((term, i) => (verdict[i] === null ? [i] : []));
  if (unsure.length > 0) {
    // Counted through the index, per column, stopping past the cap.
    const values: unknown[] = [space, cap + 1];
    // (In any column, one count: a phrase held by more than the cap in all columns together is
    // set aside, where the SQLite store looks at each column's list. Cheaper, rarely different.)
    const selects = unsure.map((i) => {
      values.push(termQuery(terms[i] as Term));
      return `SELECT ${i} AS i, (SELECT count(*) FROM (SELECT 1 FROM cm_search WHERE space = $1 AND tsv @@ $${values.length}::tsquery LIMIT $2) AS x) AS n`;
    });
    const counted = await sql.query(selects.join(" UNION ALL "), values);
    for (const r of counted.rows as Array<{ i: number; n: number }>) verdict[r.i] = Number(r.n) > cap;
  }
  return {
    selective: terms.filter((_, i) => verdict[i] === false),
    common: terms.filter((_, i) => verdict[i] === true),
  };
}

/**
 * Scores the bullets matching `terms` in the server and returns the best `limit` active ones
 * (content/tags matches first), plus the bullets of `ids`, in playbook order; `textMatches` counts
 * the chosen bullets that match in content or tags.
 */
async function rank(sql: Sql, space: string, terms: Term[], rowCount: number, limit: number, ids: string[]): Promise<{ rows: CandidateRow[]; textMatches: number }> {
  const values: unknown[] = [space, rowCount, POOL_FACTOR * limit, limit, ids, terms.map((t) => t.weight)];
  const branches = terms.map((term, k) => {
    const [q, a, b, c] = [termQuery(term), termQuery(term, "A"), termQuery(term, "B"), termQuery(term, "C")].map((text) => {
      values.push(text);
      return `$${values.length}::tsquery`;
    });
    return `SELECT row, ${k + 1} AS term, a::int + b::int + c::int AS tf, a OR b AS text, active, len, pos FROM (
              SELECT row, tsv @@ ${a} AS a, tsv @@ ${b} AS b, tsv @@ ${c} AS c, active, len, pos
              FROM cm_search WHERE space = $1 AND tsv @@ ${q} OFFSET 0) AS m`;
  });
  const matched =
    branches.length === 0
      ? "SELECT NULL::bigint AS row, 0 AS term, 0 AS tf, false AS text, false AS active, 0 AS len, 0::bigint AS pos WHERE false"
      : branches.join("\n UNION ALL ");
  const result = await sql.query({
    text: `WITH hits AS MATERIALIZED (${matched}),
           df AS (SELECT term, count(*) AS n FROM hits GROUP BY term),
           weights AS (SELECT w, k::int AS term FROM unnest($6::float8[]) WITH ORDINALITY AS u(w, k)),
           scored AS (
             SELECT h.row, sum(weights.w * greatest(1e-6, ln(($2::float8 - df.n + 0.5) / (df.n + 0.5))) * h.tf * 2.2 / (h.tf + 1.2)) AS score,
                    bool_or(h.text) AS text, max(h.len) AS len, max(h.pos) AS pos
             FROM hits h JOIN df USING (term) JOIN weights USING (term)
             WHERE h.active GROUP BY h.row
           ),
           pool AS (SELECT * FROM scored ORDER BY text DESC, score DESC, row LIMIT $3),
           chosen AS (
             SELECT row, text FROM pool
             ORDER BY text DESC, score / sqrt(0.25 + 0.75 * len / greatest(avg(len) OVER (), 1)) DESC, pos, row LIMIT $4
           ),
           picked AS (SELECT row FROM chosen UNION SELECT row FROM cm_bullets WHERE space = $1 AND id = ANY($5::text[]))
           SELECT b.row, b.pos, b.id, b.body, coalesce(c.text, false) AS text
           FROM picked JOIN cm_bullets b USING (row) LEFT JOIN chosen c USING (row)
           ORDER BY b.pos, b.row`,
    values,
    rowMode: "array",
  });
  let textMatches = 0;
  const rows = (result.rows as Array<[number, number, string, string, boolean]>).map(([row, pos, id, body, text]) => {
    if (text) textMatches += 1;
    return { row, pos, id, body };
  });
  return { rows, textMatches };
}

/**
 * The rows of the best `limit` active bullets of the layer for the search (see the module
 * comment) and of the bullets named in `ids`, in playbook order.
 */
export async function searchCandidates(sql: Sql, space: string, query: CandidateSearch): Promise<CandidateRow[]> {
  const limit = Math.max(0, Math.floor(query.limit));
  const ids = (query.ids ?? []).map((id) => (id.includes("\u0000") ? id.replaceAll("\u0000", "\uFFFD") : id));
  const words = queryWords(query.terms);
  const texts = textsOf(query, words);
  if (limit === 0 || texts.length === 0) return (await rank(sql, space, [], 0, 0, ids)).rows;
  // One short query: parallel workers cost more to start than they save, and compete with the
  // client on small machines.
  await sql.query("SET LOCAL max_parallel_workers_per_gather = 0");
  const { lexed, stats } = await lexAndStats(sql, space, texts);
  const terms = termsOf(query, lexed, words);
  if (terms.length === 0 || stats.rows === 0) return (await rank(sql, space, [], 0, 0, ids)).rows;
  const { selective, common } = await splitCommon(sql, space, terms, stats);
  if (selective.length > 0) {
    const first = await rank(sql, space, selective, stats.rows, limit, ids);
    if (first.textMatches >= limit || common.length === 0) return first.rows;
  }
  // Too few bullets hold the rarer terms: let the common ones in too.
  return (await rank(sql, space, terms, stats.rows, limit, ids)).rows;
}
