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
 *    Terms the table cannot answer exactly are counted (their one-lexeme phrasings from the
 *    postings, their longer ones through the GIN index), up to the cap.
 *    Unlike the SQLite store, stop words (PostgreSQL's english list) are no terms at all.
 * 3. The other terms' matches are read from `cm_postings` (schema migration 3: one index entry per
 *    bullet and lexeme holding its columns and active state, read by index-only scans) for every
 *    one-lexeme word or phrasing, and through the GIN index of `cm_search` for phrasings of
 *    several words (they need positions). A bullet scores,
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
  /** Bullets holding a lexeme, per column weight ('A', 'B', 'C') and in any column ('*'). */
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
           stats AS (SELECT lexeme, weight::text AS weight, df FROM cm_terms WHERE space = $1 AND lexeme IN (SELECT lexeme FROM lex) AND weight IN ('A', 'B', 'C', '*'))
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
    // Counted, stopping past the cap: the bullets holding any of the term's one-lexeme phrases
    // (from the postings index alone) and any of its longer phrases (through the GIN index).
    const values: unknown[] = [space, cap + 1];
    const param = (value: unknown, type: string): string => {
      values.push(value);
      return `$${values.length}::${type}`;
    };
    // (In any column, one count: a phrase held by more than the cap in all columns together is
    // set aside, where the SQLite store looks at each column's list. Cheaper, rarely different.)
    const selects = unsure.map((i) => {
      const term = terms[i] as Term;
      const single = [...new Set(term.phrases.filter((p) => p.lexemes.length === 1).map((p) => p.lexemes[0] as string))];
      const long = term.phrases.filter((p) => p.lexemes.length > 1);
      const count = (parts: string[]): string => `(SELECT count(*) FROM (SELECT DISTINCT row FROM (${parts.join(" UNION ALL ")}) AS u LIMIT $2) AS x)`;
      const singles = single.length > 0 ? `SELECT row FROM cm_postings WHERE space = $1 AND lexeme = ANY (${param(single, "text[]")})` : null;
      const phrases = long.length > 0 ? `SELECT row FROM cm_search WHERE space = $1 AND tsv @@ ${param(termQuery({ phrases: long, weight: 1 }), "tsquery")}` : null;
      // The longer phrases are matched only when the one-lexeme ones are not already past the cap.
      const n =
        singles !== null && phrases !== null
          ? `CASE WHEN ${count([singles])} >= $2 THEN $2 ELSE ${count([singles, phrases])} END`
          : count([(singles ?? phrases) as string]);
      return `SELECT ${i} AS i, ${n} AS n`;
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
 * Where each term's matches are read from. A one-lexeme phrase is read from `cm_postings` (schema
 * migration 3): its index entries hold the row, the columns holding the lexeme and whether the
 * bullet is active, so no table row is visited. A phrase of several lexemes needs positions: it is
 * matched through the GIN index of `cm_search`. A term with one source goes straight into the
 * matches; a term with several (a concept's phrasings) is merged per bullet (columns OR-ed).
 */
interface Plan {
  /** Lexemes, and the (1-based) term of each, of terms that are exactly one lexeme. */
  direct: { lexemes: string[]; terms: number[] };
  /** Lexemes (and terms) of the terms merged per bullet. */
  merged: { lexemes: string[]; terms: number[] };
  /** GIN branches: the term, its phrases of several lexemes, whether it is merged. */
  phrases: Array<{ term: number; phrases: Lexed[]; merged: boolean }>;
}

function planOf(terms: Term[]): Plan {
  const plan: Plan = { direct: { lexemes: [], terms: [] }, merged: { lexemes: [], terms: [] }, phrases: [] };
  terms.forEach((term, k) => {
    const single = [...new Set(term.phrases.filter((p) => p.lexemes.length === 1).map((p) => p.lexemes[0] as string))];
    const long = term.phrases.filter((p) => p.lexemes.length > 1);
    const merged = single.length + (long.length > 0 ? 1 : 0) > 1;
    const into = merged ? plan.merged : plan.direct;
    for (const lexeme of single) {
      into.lexemes.push(lexeme);
      into.terms.push(k + 1);
    }
    if (long.length > 0) plan.phrases.push({ term: k + 1, phrases: long, merged });
  });
  return plan;
}

/**
 * Scores the bullets matching `terms` in the server and returns the best `limit` active ones
 * (content/tags matches first), plus the bullets of `ids`, in playbook order; `textMatches` counts
 * the chosen bullets that match in content or tags.
 */
async function rank(sql: Sql, space: string, terms: Term[], stats: TermStats, limit: number, ids: string[]): Promise<{ rows: CandidateRow[]; textMatches: number }> {
  const plan = planOf(terms);
  // How many bullets hold a one-lexeme term is known from the term statistics (the '*' count);
  // the others' are counted from their matches.
  const direct = new Set(plan.direct.terms);
  const known = terms.map((term, k) => (direct.has(k + 1) ? (stats.df.get(`${(term.phrases[0] as Lexed).lexemes[0]}\u0000*`) ?? 0) : null));
  const values: unknown[] = [space, stats.rows, POOL_FACTOR * limit, limit, ids, terms.map((t) => t.weight), known];
  const param = (value: unknown, type: string): string => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  // Matches as (row, term, cols, active); cols: 1 content, 2 tags, 4 category.
  const phraseBranch = (p: Plan["phrases"][number]): string => {
    const term: Term = { phrases: p.phrases, weight: 1 };
    const [q, a, b, c] = [termQuery(term), termQuery(term, "A"), termQuery(term, "B"), termQuery(term, "C")].map((text) => param(text, "tsquery"));
    return `SELECT row, ${p.term} AS term, ((tsv @@ ${a})::int + 2 * (tsv @@ ${b})::int + 4 * (tsv @@ ${c})::int)::smallint AS cols, active
            FROM cm_search WHERE space = $1 AND tsv @@ ${q}`;
  };
  const postings = (list: Plan["direct"]): string =>
    `SELECT p.row, u.term, p.cols, p.active FROM unnest(${param(list.lexemes, "text[]")}, ${param(list.terms, "int[]")}) AS u(lexeme, term)
     JOIN cm_postings p ON p.space = $1 AND p.lexeme = u.lexeme`;
  const others: string[] = [];
  for (const p of plan.phrases) if (!p.merged) others.push(phraseBranch(p));
  const mergedParts: string[] = [];
  if (plan.merged.lexemes.length > 0) mergedParts.push(postings(plan.merged));
  for (const p of plan.phrases) if (p.merged) mergedParts.push(phraseBranch(p));
  if (mergedParts.length > 0) {
    others.push(`SELECT row, term, bit_or(cols)::smallint AS cols, bool_or(active) AS active FROM (${mergedParts.join("\n UNION ALL ")}) AS g GROUP BY row, term`);
  }
  const hits: string[] = [];
  if (plan.direct.lexemes.length > 0) hits.push(postings(plan.direct));
  if (others.length > 0) hits.push("SELECT row, term, cols, active FROM other");
  if (hits.length === 0) hits.push("SELECT NULL::bigint AS row, 0 AS term, 0::smallint AS cols, false AS active WHERE false");
  const result = await sql.query({
    text: `WITH ${others.length > 0 ? `other AS MATERIALIZED (${others.join("\n UNION ALL ")}), counted AS (SELECT term, count(*) AS n FROM other GROUP BY term),` : ""}
           hits AS (${hits.join("\n UNION ALL ")}),
           idf AS MATERIALIZED (
             SELECT term, w * greatest(1e-6, ln(($2::float8 - x.df + 0.5) / (x.df + 0.5))) AS f
             FROM (SELECT k::int AS term, w, d FROM unnest($6::float8[], $7::float8[]) WITH ORDINALITY AS u(w, d, k)) AS t${others.length > 0 ? " LEFT JOIN counted USING (term)" : ""},
                  LATERAL (SELECT coalesce(d, ${others.length > 0 ? "counted.n" : "NULL"}) AS df) AS x
             WHERE x.df IS NOT NULL
           ),
           scored AS (
             SELECT h.row, sum(idf.f * h.tf * 2.2 / (h.tf + 1.2)) AS score, bool_or(h.text) AS text
             FROM (SELECT row, term, (cols & 1) + ((cols >> 1) & 1) + ((cols >> 2) & 1) AS tf, cols & 3 <> 0 AS text FROM hits WHERE active) AS h
             JOIN idf USING (term)
             GROUP BY h.row
           ),
           pool AS (
             SELECT t.row, t.score, t.text, s.len, s.pos
             FROM (SELECT * FROM scored ORDER BY text DESC, score DESC, row LIMIT $3) AS t JOIN cm_search s USING (row)
           ),
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
  if (limit === 0 || texts.length === 0) return (await rank(sql, space, [], { rows: 0, df: new Map() }, 0, ids)).rows;
  // One short query: parallel workers cost more to start than they save, and compete with the
  // client on small machines.
  await sql.query("SET LOCAL max_parallel_workers_per_gather = 0");
  const { lexed, stats } = await lexAndStats(sql, space, texts);
  const terms = termsOf(query, lexed, words);
  if (terms.length === 0 || stats.rows === 0) return (await rank(sql, space, [], { rows: 0, df: new Map() }, 0, ids)).rows;
  const { selective, common } = await splitCommon(sql, space, terms, stats);
  if (selective.length > 0) {
    const first = await rank(sql, space, selective, stats, limit, ids);
    if (first.textMatches >= limit || common.length === 0) return first.rows;
  }
  // Too few bullets hold the rarer terms: let the common ones in too.
  return (await rank(sql, space, terms, stats, limit, ids)).rows;
}
