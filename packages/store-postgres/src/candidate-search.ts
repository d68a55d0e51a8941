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
 *    A concept the table cannot settle (its phrasings may share bullets) is decided by its
 *    matches, read with the selective terms' (splitCommon, decideUnsure).
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
 * The server lexes the words and reads each term's matches as one compact list (readMatches);
 * the client sums the scores (scoreMatches) and picks the pool (bestScored), as the SQLite store
 * does in-process; the server damps the pool for length and returns the chosen rows (rank).
 * Four statements in one read-only transaction (two more when the common terms are let in).
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
 * layer's term statistics for every single lexeme met. One round trip. (The lexemes go to
 * `cm_terms` as an array: as a subquery the planner guessed 200 of them and scanned the whole
 * table, which every write's count updates leave with many more pages than rows.)
 */
async function lexAndStats(sql: Sql, space: string, texts: string[]): Promise<{ lexed: Lexed[]; stats: TermStats }> {
  const result = await sql.query({
    text: `WITH input AS (SELECT t, i FROM unnest($2::text[]) WITH ORDINALITY AS u(t, i)),
           lex AS (SELECT i, l.lexeme, l.positions[1] AS p FROM input, unnest(to_tsvector('${TEXT_CONFIG}', t)) AS l),
           words AS (SELECT i, array_agg(lexeme ORDER BY p) AS lexemes, array_agg(p ORDER BY p) AS positions FROM lex GROUP BY i),
           stats AS (SELECT lexeme, weight::text AS weight, df FROM cm_terms WHERE space = $1 AND lexeme = ANY (ARRAY(SELECT DISTINCT lexeme FROM lex)) AND weight IN ('A', 'B', 'C', '*'))
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

/** The terms by how many bullets hold them (indexes into the terms; see the module comment). */
interface Split {
  selective: number[];
  common: number[];
  /** Terms the statistics cannot decide (a concept's phrasings may share bullets): counted from their matches. */
  unsure: number[];
  /** Held by more bullets than this: common. */
  cap: number;
}

/**
 * Splits the terms into selective and common ones from the term statistics. A term is common when
 * more than the cap hold it in some column; when only bounds are known (a phrase, several
 * phrasings), it is decided on its count in all columns together, from the statistics when they
 * settle it (one phrasing alone is held by more than the cap; all together by no more), else from
 * its matches (decideUnsure). (One count in all columns, where the SQLite store looks at each
 * column's list: cheaper, rarely different.)
 */
function splitCommon(terms: Term[], stats: TermStats): Split {
  const cap = Math.ceil(COMMON_TERM_SHARE * stats.rows);
  const split: Split = { selective: [], common: [], unsure: [], cap };
  terms.forEach((term, i) => {
    let unsure = false;
    for (const weight of WEIGHTS) {
      const { bound, exact } = dfBound(term, stats, weight);
      if (bound <= cap) continue;
      if (exact) return void split.common.push(i);
      unsure = true;
    }
    if (!unsure) return void split.selective.push(i);
    let atLeast = 0;
    let atMost = 0;
    for (const phrase of term.phrases) {
      const bound = Math.min(...phrase.lexemes.map((lexeme) => stats.df.get(`${lexeme}\u0000*`) ?? 0));
      atMost += bound;
      if (phrase.lexemes.length === 1) atLeast = Math.max(atLeast, bound);
    }
    if (atLeast > cap) split.common.push(i);
    else if (atMost <= cap) split.selective.push(i);
    else split.unsure.push(i);
  });
  return split;
}

/** Settles the unsure terms by their matches: the bullets holding any of their phrasings. */
function decideUnsure(split: Split, sources: Sources): void {
  for (const i of split.unsure) {
    const held = sources.byTerm.get(i + 1)?.length ?? 0;
    (held > split.cap ? split.common : split.selective).push(i);
  }
  split.unsure = [];
  // In term order (the order scores are summed in).
  split.selective.sort((a, b) => a - b);
  split.common.sort((a, b) => a - b);
}

/**
 * Where each term's matches are read from. A one-lexeme phrase is read from `cm_postings` (schema
 * migration 3): its index entries hold the row, the columns holding the lexeme and whether the
 * bullet is active, so no table row is visited. A phrase of several lexemes needs positions: it is
 * matched through the GIN index of `cm_search`. A term with several sources (a concept's
 * phrasings) is merged per bullet by the client (columns OR-ed).
 */
interface Plan {
  /** One-lexeme phrases, and the (1-based) term of each. */
  lexemes: string[];
  terms: number[];
  /** GIN branches: the term (1-based) and its phrases of several lexemes. */
  phrases: Array<{ term: number; phrases: Lexed[] }>;
}

function planOf(terms: Term[], include: readonly number[]): Plan {
  const plan: Plan = { lexemes: [], terms: [], phrases: [] };
  for (const k of include) {
    const term = terms[k] as Term;
    for (const lexeme of new Set(term.phrases.filter((p) => p.lexemes.length === 1).map((p) => p.lexemes[0] as string))) {
      plan.lexemes.push(lexeme);
      plan.terms.push(k + 1);
    }
    const long = term.phrases.filter((p) => p.lexemes.length > 1);
    if (long.length > 0) plan.phrases.push({ term: k + 1, phrases: long });
  }
  return plan;
}

/** Row numbers below this index the score arrays directly; beyond, rows are mapped to dense slots. */
const DENSE_ROW_LIMIT = 4_000_000;

/**
 * One source of a term's matches as the server sends it: integers row × 16 + flags (columns
 * holding the term: 1 content, 2 tags, 4 category; + 8 when active), concatenated and sent as
 * base64 text (a third of hex's size). While every row number is below DENSE_ROW_LIMIT, four
 * little-endian bytes each, which the client reads in place as a Uint32Array; beyond, eight
 * big-endian bytes, mapped to dense slots as they are read.
 */
const ENCODE_MATCH = (row: string, cols: string, active: string): string => {
  const value = `(${row} * 16 + ${cols} + CASE WHEN ${active} THEN 8 ELSE 0 END)`;
  const v = `(${value})::int`;
  const littleEndian = `((${v} & 255) << 24) | (((${v} >> 8) & 255) << 16) | (((${v} >> 16) & 255) << 8) | ((${v} >> 24) & 255)`;
  return `CASE WHEN w.dense THEN int4send(${littleEndian}) ELSE int8send(${value}) END`;
};

const PLATFORM_LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

interface Sources {
  /**
   * Per term (1-based) that matched anything: each bullet holding it once, as slot × 16 + flags
   * (a concept's phrasings' sources merged per bullet, columns OR-ed).
   */
  byTerm: Map<number, Uint32Array>;
  /** The largest bullet row number of the table. */
  top: number;
  /** Slots are row numbers (all below DENSE_ROW_LIMIT), or indexes into rowOfSlot. */
  dense: boolean;
  rowOfSlot: number[];
  slotOfRow: Map<number, number>;
}

const emptySources = (): Sources => ({ byTerm: new Map(), top: 0, dense: true, rowOfSlot: [], slotOfRow: new Map() });

/** The matches of one source (see ENCODE_MATCH), as slot × 16 + flags. */
function decodeList(text: string, sources: Sources): Uint32Array {
  const bytes = Buffer.from(text, "base64");
  if (sources.dense) {
    if (PLATFORM_LITTLE_ENDIAN && bytes.byteOffset % 4 === 0) return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    return Uint32Array.from({ length: bytes.length / 4 }, (_, i) => view.getUint32(4 * i, true));
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const list = new Uint32Array(bytes.length / 8);
  for (let i = 0; i < list.length; i += 1) {
    const low = view.getUint32(8 * i + 4);
    const row = view.getUint32(8 * i) * 0x10000000 + (low >>> 4);
    let slot = sources.slotOfRow.get(row);
    if (slot === undefined) {
      slot = sources.rowOfSlot.length;
      sources.slotOfRow.set(row, slot);
      sources.rowOfSlot.push(row);
    }
    list[i] = slot * 16 + (low & 15);
  }
  return list;
}

/** A term's matches from its sources: one as it is; several merged per bullet, flags OR-ed. */
function mergeSources(lists: readonly Uint32Array[]): Uint32Array {
  if (lists.length === 1) return lists[0] as Uint32Array;
  const merged = new Map<number, number>();
  for (const list of lists) {
    for (const match of list) merged.set(match >>> 4, (merged.get(match >>> 4) ?? 0) | (match & 15));
  }
  const list = new Uint32Array(merged.size);
  let i = 0;
  for (const [slot, flags] of merged) list[i++] = slot * 16 + flags;
  return list;
}

/**
 * Every term's matches, in one round trip: a one-lexeme phrase's from `cm_postings` (an index-only
 * scan of the lexeme's entries), a longer phrase's through the GIN index of `cm_search`. Each
 * source comes back as one text (see ENCODE_MATCH): 150,000 matches cost the server a scan and
 * a concatenation, and the client a few strings, not a row each.
 */
async function readMatches(sql: Sql, space: string, terms: Term[], include: readonly number[], into: Sources): Promise<void> {
  if (include.length === 0) return;
  const plan = planOf(terms, include);
  const values: unknown[] = [space, plan.lexemes, plan.terms, DENSE_ROW_LIMIT];
  const param = (value: unknown, type: string): string => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const parts = [
    "SELECT 0 AS term, w.top::text AS list FROM w",
    `SELECT u.term, x.list FROM w, unnest($2::text[], $3::int[]) AS u(lexeme, term),
       LATERAL (SELECT encode(string_agg(${ENCODE_MATCH("p.row", "p.cols", "p.active")}, ''::bytea), 'base64') AS list FROM cm_postings p WHERE p.space = $1 AND p.lexeme = u.lexeme) AS x`,
  ];
  for (const p of plan.phrases) {
    const term: Term = { phrases: p.phrases, weight: 1 };
    const [q, a, b, c] = [termQuery(term), termQuery(term, "A"), termQuery(term, "B"), termQuery(term, "C")].map((text) => param(text, "tsquery"));
    const cols = `((tsv @@ ${a})::int + 2 * (tsv @@ ${b})::int + 4 * (tsv @@ ${c})::int)`;
    parts.push(`SELECT ${p.term}, encode(string_agg(${ENCODE_MATCH("row", cols, "active")}, ''::bytea), 'base64') FROM w, cm_search WHERE space = $1 AND tsv @@ ${q} GROUP BY w.dense`);
  }
  const result = await sql.query({
    // The encoding follows the largest row number of the whole table (any layer's), read first.
    text: `WITH w AS MATERIALIZED (SELECT top, top < $4::bigint AS dense FROM (SELECT coalesce(max(row), 0) AS top FROM cm_search) AS m)\n${parts.join("\nUNION ALL ")}`,
    values,
    rowMode: "array",
  });
  const rows = result.rows as Array<[number, string | null]>;
  // Both reads of a search (selective, then common terms) see the same snapshot: the same top row.
  into.top = Number(rows.find(([term]) => term === 0)?.[1] ?? 0);
  into.dense = into.top < DENSE_ROW_LIMIT;
  const lists = new Map<number, Uint32Array[]>();
  for (const [term, text] of rows) {
    if (term !== 0 && text !== null && text !== "") lists.set(term, [...(lists.get(term) ?? []), decodeList(text, into)]);
  }
  for (const [term, sources] of lists) into.byTerm.set(term, mergeSources(sources));
}

/** How many of content, tags and category a column mask holds (BM25's term frequency here). */
const COLUMN_COUNT = [0, 1, 1, 2, 1, 2, 2, 3];

/** Per bullet met (by slot, see Sources): its score summed over the terms, and whether it matched in content or tags. */
interface Scored {
  /** The slots of the bullets scored (an active match of a term), in first-met order. */
  slots: number[];
  score: Float64Array;
  text: Uint8Array;
}

/**
 * Sums each active bullet's score: per term, idf × the saturated count of the columns holding it
 * (BM25's tf part, k1 = 1.2). In typed arrays: 150,000 matches summed in SQL cost ~2 µs each.
 */
function scoreMatches(terms: Term[], include: readonly number[], stats: TermStats, sources: Sources): Scored {
  const size = sources.dense ? sources.top + 1 : sources.rowOfSlot.length;
  const scored: Scored = { slots: [], score: new Float64Array(size), text: new Uint8Array(size) };
  const met = new Uint8Array(size);
  const { score, text, slots } = scored;
  for (const k of include) {
    const list = sources.byTerm.get(k + 1);
    if (list === undefined) continue;
    const term = terms[k] as Term;
    // How many bullets hold the term: a one-lexeme term's from the term statistics (the '*'
    // count), the others' from their matches.
    const only = term.phrases.length === 1 && (term.phrases[0] as Lexed).lexemes.length === 1 ? (term.phrases[0] as Lexed).lexemes[0] : undefined;
    const df = only !== undefined ? (stats.df.get(`${only}\u0000*`) ?? 0) : list.length;
    const idf = term.weight * Math.max(1e-6, Math.log((stats.rows - df + 0.5) / (df + 0.5)));
    const gain = COLUMN_COUNT.map((tf) => (idf * tf * 2.2) / (tf + 1.2));
    for (let i = 0; i < list.length; i += 1) {
      const match = list[i] as number;
      if ((match & 8) === 0) continue; // not active
      const slot = match >>> 4;
      if (met[slot] === 0) {
        met[slot] = 1;
        slots.push(slot);
      }
      score[slot] = (score[slot] as number) + (gain[match & 7] as number);
      if ((match & 3) !== 0) text[slot] = 1;
    }
  }
  return scored;
}

/**
 * The best `count` scored bullets by (content/tags match, score, row), best first. The cut-off
 * score is found with a native sort of the competing scores (cheap even before the JIT warms
 * up), so only the bullets at or above it are compared one by one.
 */
function bestScored(scored: Scored, sources: Sources, count: number): Array<{ row: number; score: number; text: boolean }> {
  const { slots, score, text } = scored;
  if (count <= 0 || slots.length === 0) return [];
  let textCount = 0;
  for (const slot of slots) textCount += text[slot] as number;
  // Content/tags matches first: the cut-off lies among them, or among the others once all of them are in.
  const inText = textCount >= count ? 1 : 0;
  const need = inText === 1 ? count : count - textCount;
  const competing = new Float64Array(inText === 1 ? textCount : slots.length - textCount);
  let n = 0;
  for (const slot of slots) if (text[slot] === inText) competing[n++] = score[slot] as number;
  competing.sort();
  const cutoff = need >= competing.length ? -Infinity : (competing[competing.length - need] as number);
  const kept: Array<{ row: number; score: number; text: boolean }> = [];
  for (const slot of slots) {
    const isText = text[slot] as number;
    if (isText < inText || (isText === inText && (score[slot] as number) < cutoff)) continue;
    kept.push({ row: sources.dense ? slot : (sources.rowOfSlot[slot] as number), score: score[slot] as number, text: isText === 1 });
  }
  return kept.sort((a, b) => Number(b.text) - Number(a.text) || b.score - a.score || a.row - b.row).slice(0, count);
}

/**
 * Scores the bullets matching the `include`d terms and returns the best `limit` active ones
 * (content/tags matches first), plus the bullets of `ids`, in playbook order; `textMatches`
 * counts the chosen bullets that match in content or tags. The terms' matches were read by
 * readMatches; the server damps the pool for length and returns the chosen bullets.
 */
async function rank(sql: Sql, space: string, terms: Term[], include: readonly number[], sources: Sources, stats: TermStats, limit: number, ids: string[]): Promise<{ rows: CandidateRow[]; textMatches: number }> {
  // The pool: the best POOL_FACTOR × limit by (content/tags match, score, row).
  const pool = limit > 0 && include.length > 0 ? bestScored(scoreMatches(terms, include, stats, sources), sources, POOL_FACTOR * limit) : [];
  // In the server, one statement: the pool damped for length (as bm25 does, against the pool's
  // mean length), the best `limit` kept, and their bodies with those of `ids`.
  const result = await sql.query({
    text: `WITH pool AS (SELECT * FROM unnest($2::bigint[], $3::float8[], $4::bool[]) AS p(row, score, text)),
           chosen AS (
             SELECT p.row, p.text FROM pool p JOIN cm_search s USING (row)
             ORDER BY p.text DESC, p.score / sqrt(0.25 + 0.75 * s.len / greatest(avg(s.len) OVER (), 1)) DESC, s.pos, p.row LIMIT $5
           ),
           picked AS (SELECT row FROM chosen UNION SELECT row FROM cm_bullets WHERE space = $1 AND id = ANY ($6::text[]))
           SELECT b.row, b.pos, b.id, b.body, coalesce(c.text, false) FROM picked JOIN cm_bullets b USING (row) LEFT JOIN chosen c USING (row)
           ORDER BY b.pos, b.row`,
    values: [space, pool.map((p) => p.row), pool.map((p) => p.score), pool.map((p) => p.text), limit, ids],
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
  const none = emptySources();
  const noStats: TermStats = { rows: 0, df: new Map() };
  if (limit === 0 || texts.length === 0) return (await rank(sql, space, [], [], none, noStats, 0, ids)).rows;
  const { lexed, stats } = await lexAndStats(sql, space, texts);
  const terms = termsOf(query, lexed, words);
  if (terms.length === 0 || stats.rows === 0) return (await rank(sql, space, [], [], none, noStats, 0, ids)).rows;
  const split = splitCommon(terms, stats);
  // The selective terms' matches and the unsure ones' (which their matches then settle), together.
  const sources = emptySources();
  await readMatches(sql, space, terms, [...split.selective, ...split.unsure], sources);
  decideUnsure(split, sources);
  if (split.selective.length > 0) {
    const first = await rank(sql, space, terms, split.selective, sources, stats, limit, ids);
    if (first.textMatches >= limit || split.common.length === 0) return first.rows;
  }
  // Too few bullets hold the rarer terms: let the common ones in too.
  await readMatches(sql, space, terms, split.common.filter((i) => !sources.byTerm.has(i + 1)), sources);
  return (await rank(sql, space, terms, terms.map((_, i) => i), sources, stats, limit, ids)).rows;
}
