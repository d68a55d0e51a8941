import type { Db } from "./database.js";

/**
 * The candidate search behind `readCandidates` (what `cm context` ranks on a large playbook).
 *
 * Why not one FTS5 `MATCH "a" OR "b" OR …` ranked by bm25 (what it was): a task's words plus their
 * concept expansions are up to 64 words, together they match most of a large playbook (85,000 of
 * 100,000 rules for a pasted CI log), and bm25 costs about 2 µs per matching row. It also scores
 * every inflection separately ("deploy", "deploys", "deployed" are one indexed term, queried three
 * times), so rules about a many-worded concept crowd out the rules matching the task's own words.
 *
 * Here instead:
 * 1. The words are reduced to distinct index terms with the index's own tokenizer (a temporary
 *    FTS5 table with the same tokenizer, read through fts5vocab): one query word per term.
 * 2. For each term, the ids of the rows holding it in the content, the tags and the category are
 *    read from the index (no ranking function, so well under 1 µs per row). A term held by more
 *    than COMMON_TERM_SHARE of the rows (its list is cut off there) is set aside: it says little
 *    about a rule (its idf is below 2) and is what makes an OR query match everything. The common
 *    terms are added when the others find fewer than `limit` active rules.
 * 3. A row scores, per term, idf × saturated count of the columns holding it (BM25's tf part with
 *    k1 = 1.2, one per column), summed over the terms. Rows matching in their content or tags come
 *    first; rows matching only in their category only fill up (the ranking needs a content or tags
 *    match, the category only adds to one).
 * 4. The best POOL_FACTOR × limit rows are read with their text length, damped for length (long
 *    rules match more words by chance, as in bm25), filtered to active bullets, and the best
 *    `limit` kept.
 * 5. Concepts (the concept-map groups the task mentions, each with its phrasings) are scored as
 *    the ranker scores them: a group is one term, held by the rows containing any of its phrasings
 *    as a phrase, weighted `conceptWeight` (0.8) of a word. Splitting the phrasings into words
 *    instead (what this search did at first) turned a task about "signed in users asked for their
 *    password again" into a search for every rule saying "session", "cookie", "secret" or "user",
 *    each word counted at full weight, and the rules that hold the phrasings were crowded out.
 *
 * Measured on a generated 100,000-rule playbook (bench/scale) against the whole-playbook ranking's
 * top 10 for the 111 tasks of bench/relevance: 1,066 of those 1,110 rules are among the 500
 * candidates (994 with concepts split into words, 973 with the bm25 OR query), at about a fifth
 * of the bm25 query's time. The thresholds were chosen there (with concepts as phrases,
 * COMMON_TERM_SHARE 0.25 or more keeps 1,073 at more cost per query and trades one weak task for
 * another; POOL_FACTOR 3 kept 991 of 994). Most rules still missed are found by the ranker through
 * identifier parts ("flat" in "FlatList"), which the index's tokenizer does not split, or through
 * words held by more than COMMON_TERM_SHARE of the rows.
 */

/** The tokenizer of `bullets_fts` (schema migration 1); the query words must be split the same way. */
export const FTS_TOKENIZER = "porter unicode61 remove_diacritics 2";
/** Words of the query considered (as before: the first ones, the task's own words come first). */
export const MAX_QUERY_WORDS = 64;
/** Terms held by more than this share of the rows are read only when the others find too few rows. */
export const COMMON_TERM_SHARE = 0.15;
/** How many rows (× limit) are scored for length and checked for being active. */
export const POOL_FACTOR = 2;

/** A concept's weight relative to a word when the query does not say (the ranker's expansionWeight). */
export const DEFAULT_CONCEPT_WEIGHT = 0.8;
/** Concepts and phrasings per concept considered (the shipped map's groups have at most ~40 phrasings). */
const MAX_CONCEPTS = 16;
const MAX_CONCEPT_PHRASES = 64;

const K1 = 1.2;
const LENGTH_B = 0.75;
/** FTS5's floor for the idf of a term held by half the rows or more. */
const IDF_FLOOR = 1e-6;
/** Above this many row ids, row ids are mapped to dense slots rather than used as array indexes. */
const DENSE_ROW_LIMIT = 4_000_000;

interface Statements {
  clearWords: { run(): unknown };
  insertWords: { run(json: string): unknown };
  tokens: { all(): unknown[] };
  postings: { get(match: string, limit: number): unknown };
  counts: { get(): unknown };
  pool: { all(json: string): unknown[] };
}

const prepared = new WeakMap<Db, Statements>();

/**
 * The statements of a connection, creating its temporary query tables when missing. They are
 * checked on every call (a cheap schema lookup): created inside a read transaction that is rolled
 * back (a damaged row in the same read), they are gone again.
 */
function statementsOf(db: Db): Statements {
  // Temporary (per connection, never in the file): writing them needs no lock on the database.
  db.exec(
    `CREATE VIRTUAL TABLE IF NOT EXISTS temp.cm_query_words USING fts5(word, tokenize = '${FTS_TOKENIZER}');
     CREATE VIRTUAL TABLE IF NOT EXISTS temp.cm_query_tokens USING fts5vocab(temp, cm_query_words, instance);`,
  );
  const known = prepared.get(db);
  if (known !== undefined) return known;
  const made: Statements = {
    clearWords: db.prepare("DELETE FROM temp.cm_query_words"),
    insertWords: db.prepare("INSERT INTO temp.cm_query_words (rowid, word) SELECT key, value FROM json_each(?)"),
    tokens: db.prepare("SELECT doc, term FROM temp.cm_query_tokens ORDER BY doc, offset").raw(),
    // One JSON array rather than a row per match: a third cheaper for lists of thousands of rows.
    postings: db.prepare("SELECT json_group_array(rowid) FROM (SELECT rowid FROM bullets_fts WHERE bullets_fts MATCH ? LIMIT ?)").pluck(),
    counts: db.prepare("SELECT count(*) AS rows, coalesce(max(row), 0) AS maxRow FROM bullets"),
    pool: db
      .prepare(
        `SELECT row, pos, length(content) + length(tags) FROM bullets
         WHERE row IN (SELECT value FROM json_each(?)) AND state <> 'retired' AND maturity <> 'deprecated' AND deprecated = 0`,
      )
      .raw(),
  };
  prepared.set(db, made);
  return made;
}

/** The distinct words (letters and digits, lower-case) of `terms`, in order, at most `max`. */
export function queryWords(terms: readonly string[], max = MAX_QUERY_WORDS): string[] {
  const words = new Set<string>();
  for (const term of terms) {
    for (const match of term.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
      if (words.size >= max) return [...words];
      words.add(match[0]);
    }
  }
  return [...words];
}

/**
 * One FTS5 phrase per distinct index term of `words`, in order: "deploys" and "deployed" are both
 * the term "deploi", so only the first is kept. (A word the tokenizer splits is kept as a phrase.)
 */
export function distinctTermWords(db: Db, words: readonly string[]): string[] {
  if (words.length === 0) return [];
  const s = statementsOf(db);
  s.clearWords.run();
  s.insertWords.run(JSON.stringify(words));
  const tokensOf = new Map<number, string[]>();
  for (const [doc, term] of s.tokens.all() as Array<[number, string]>) {
    const list = tokensOf.get(doc);
    if (list === undefined) tokensOf.set(doc, [term]);
    else list.push(term);
  }
  s.clearWords.run();
  const seen = new Set<string>();
  const out: string[] = [];
  words.forEach((word, i) => {
    const tokens = tokensOf.get(i);
    if (tokens === undefined) return; // nothing indexable (e.g. only combining marks)
    const key = tokens.join(" ");
    if (seen.has(key)) return;
    seen.add(key);
    out.push(word);
  });
  return out;
}

/**
 * Scores by row id, in arrays indexed by row id (row ids are dense unless many rows were deleted;
 * past DENSE_ROW_LIMIT they are mapped to dense slots first).
 */
class Scores {
  private readonly slotOf: Map<number, number> | null;
  private score: Float64Array;
  private tf: Uint8Array;
  private text: Uint8Array;
  private rowOfSlot: number[] = [];
  /** Slots matching in content or tags, in first-match order. */
  private readonly textSlots: number[] = [];
  /** Slots matching somewhere (text: 1, only the category so far: 2). */
  private matched: Uint8Array;
  private readonly categorySlots: number[] = [];

  constructor(maxRow: number) {
    const dense = maxRow <= DENSE_ROW_LIMIT;
    const size = dense ? maxRow + 1 : 1024;
    this.slotOf = dense ? null : new Map();
    this.score = new Float64Array(size);
    this.tf = new Uint8Array(size);
    this.text = new Uint8Array(size);
    this.matched = new Uint8Array(size);
  }

  private slot(row: number): number {
    if (this.slotOf === null) return row;
    let slot = this.slotOf.get(row);
    if (slot === undefined) {
      slot = this.rowOfSlot.length;
      this.slotOf.set(row, slot);
      this.rowOfSlot.push(row);
      if (slot >= this.score.length) {
        const grow = <T extends Float64Array | Uint8Array>(a: T, make: (n: number) => T): T => {
          const b = make(a.length * 2);
          b.set(a);
          return b;
        };
        this.score = grow(this.score, (n) => new Float64Array(n));
        this.tf = grow(this.tf, (n) => new Uint8Array(n));
        this.text = grow(this.text, (n) => new Uint8Array(n));
        this.matched = grow(this.matched, (n) => new Uint8Array(n));
      }
    }
    return slot;
  }

  /** Adds one term: weight × idf × saturated count of the columns holding it, per row (BM25, k1 = 1.2). */
  addTerm(lists: ColumnRows, rowCount: number, weight: number): void {
    const { tf } = this;
    const touched: number[] = [];
    const count = (rows: readonly number[]): void => {
      for (const row of rows) {
        const slot = this.slot(row);
        if (tf[slot] === 0) touched.push(slot);
        tf[slot] = (tf[slot] as number) + 1;
      }
    };
    count(lists.content);
    count(lists.tags);
    count(lists.category);
    if (touched.length === 0) return;
    const df = touched.length;
    const idf = weight * Math.max(IDF_FLOOR, Math.log((rowCount - df + 0.5) / (df + 0.5)));
    const { score } = this;
    for (const slot of touched) {
      const n = tf[slot] as number;
      score[slot] = (score[slot] as number) + (idf * n * (K1 + 1)) / (n + K1);
      tf[slot] = 0;
    }
    for (const rows of [lists.content, lists.tags]) {
      for (const row of rows) {
        const slot = this.slot(row);
        if (this.text[slot] === 0) {
          this.text[slot] = 1;
          this.textSlots.push(slot);
        }
      }
    }
    for (const row of lists.category) {
      const slot = this.slot(row);
      if (this.matched[slot] === 0) {
        this.matched[slot] = 1;
        this.categorySlots.push(slot);
      }
    }
  }

  /** Rows matching in content or tags (`text`), or else only in the category, with their scores. */
  entries(which: "text" | "category"): { rows: Float64Array; scores: Float64Array } {
    const slots = which === "text" ? this.textSlots : this.categorySlots.filter((slot) => this.text[slot] === 0);
    const n = slots.length;
    const rows = new Float64Array(n);
    const scores = new Float64Array(n);
    for (let i = 0; i < n; i += 1) {
      const slot = slots[i] as number;
      rows[i] = this.slotOf === null ? slot : (this.rowOfSlot[slot] as number);
      scores[i] = this.score[slot] as number;
    }
    return { rows, scores };
  }
}

interface ColumnRows {
  content: number[];
  tags: number[];
  category: number[];
}

/**
 * The rows matching `expression` (an FTS5 phrase, or phrases OR-ed in brackets) in each column;
 * null when one list exceeds `cap` rows (cap < 0: no cap).
 */
function columnRows(s: Statements, expression: string, cap: number): ColumnRows | null {
  const read = (column: string): number[] | null => {
    const rows = JSON.parse(s.postings.get(`{${column}} : ${expression}`, cap < 0 ? -1 : cap + 1) as string) as number[];
    return cap >= 0 && rows.length > cap ? null : rows;
  };
  const content = read("content");
  if (content === null) return null;
  const tags = read("tags");
  if (tags === null) return null;
  const category = read("category");
  if (category === null) return null;
  return { content, tags, category };
}

/** Sorts indexes best score first, ties to the lower row id. */
function byScore(rows: Float64Array, scores: Float64Array): (a: number, b: number) => number {
  return (a, b) => (scores[b] as number) - (scores[a] as number) || (rows[a] as number) - (rows[b] as number);
}

/** The k-th largest of `values` (1-based k ≤ length); reorders `values`. */
function kthLargest(values: Float64Array, k: number): number {
  let lo = 0;
  let hi = values.length - 1;
  const target = k - 1;
  while (lo < hi) {
    const pivot = values[(lo + hi) >> 1] as number;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while ((values[i] as number) > pivot) i += 1;
      while ((values[j] as number) < pivot) j -= 1;
      if (i <= j) {
        const t = values[i] as number;
        values[i] = values[j] as number;
        values[j] = t;
        i += 1;
        j -= 1;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else break;
  }
  return values[target] as number;
}

/** Indexes (into rows/scores) of the `k` best entries not in `skip`, best first (ties: lower row id). */
export function bestIndexes(rows: Float64Array, scores: Float64Array, k: number, skip: ReadonlySet<number> = new Set()): number[] {
  const open: number[] = [];
  if (skip.size === 0) {
    const threshold = rows.length > k ? kthLargest(scores.slice(), k) : Number.NEGATIVE_INFINITY;
    for (let i = 0; i < rows.length; i += 1) if ((scores[i] as number) >= threshold) open.push(i);
  } else {
    for (let i = 0; i < rows.length; i += 1) if (!skip.has(i)) open.push(i);
  }
  return open.sort(byScore(rows, scores)).slice(0, k);
}

/**
 * The FTS5 expression matching any of `phrasings` as a phrase (its letters and digits, in order),
 * or null when none has any. At most MAX_CONCEPT_PHRASES phrasings are used.
 */
export function conceptExpression(phrasings: readonly string[]): string | null {
  const phrases = new Set<string>();
  for (const phrasing of phrasings) {
    if (phrases.size >= MAX_CONCEPT_PHRASES) break;
    const words = [...phrasing.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0]);
    if (words.length > 0) phrases.add(`"${words.join(" ")}"`);
  }
  return phrases.size === 0 ? null : `(${[...phrases].join(" OR ")})`;
}

export interface ConceptOptions {
  /** The phrasings of each concept the task mentions (see core's `CandidateSearch`). */
  concepts?: readonly (readonly string[])[];
  /** A concept's weight relative to a word (default DEFAULT_CONCEPT_WEIGHT). */
  conceptWeight?: number;
}

/**
 * Row ids of the best `limit` active bullets for `terms` and `concepts` (see the module comment),
 * best first.
 */
export function searchCandidateRows(db: Db, terms: readonly string[], limit: number, options: ConceptOptions = {}): number[] {
  const want = Math.floor(limit);
  if (!(want > 0)) return [];
  const items: Array<{ expression: string; weight: number }> = distinctTermWords(db, queryWords(terms)).map((word) => ({
    expression: `"${word}"`,
    weight: 1,
  }));
  const conceptWeight = options.conceptWeight !== undefined && options.conceptWeight > 0 ? options.conceptWeight : DEFAULT_CONCEPT_WEIGHT;
  for (const phrasings of (options.concepts ?? []).slice(0, MAX_CONCEPTS)) {
    const expression = conceptExpression(phrasings);
    if (expression !== null) items.push({ expression, weight: conceptWeight });
  }
  if (items.length === 0) return [];
  const s = statementsOf(db);
  const { rows: rowCount, maxRow } = s.counts.get() as { rows: number; maxRow: number };
  if (rowCount === 0) return [];
  const scores = new Scores(maxRow);
  const cap = Math.ceil(COMMON_TERM_SHARE * rowCount);
  const common: typeof items = [];
  for (const item of items) {
    const lists = columnRows(s, item.expression, cap);
    if (lists === null) common.push(item);
    else scores.addTerm(lists, rowCount, item.weight);
  }
  const addCommon = (): void => {
    for (const item of common.splice(0)) scores.addTerm(columnRows(s, item.expression, -1) as ColumnRows, rowCount, item.weight);
  };
  if (common.length > 0 && scores.entries("text").rows.length < want) addCommon();

  let chosen = chooseActive(s, scores.entries("text"), want);
  if (chosen.length < want && common.length > 0) {
    // Too many of the rare terms' rows are inactive: let the common terms in too.
    addCommon();
    chosen = chooseActive(s, scores.entries("text"), want);
  }
  // Last, rows matching only in their category (the ranking never shows them, but they match).
  if (chosen.length < want) chosen.push(...chooseActive(s, scores.entries("category"), want - chosen.length));
  return chosen;
}

/** The best `want` active rows: scored rows are taken POOL_FACTOR × want at a time, damped for length. */
function chooseActive(s: Statements, { rows, scores }: { rows: Float64Array; scores: Float64Array }, want: number): number[] {
  const chosen: number[] = [];
  const done = new Set<number>();
  while (chosen.length < want && done.size < rows.length) {
    const batch = bestIndexes(rows, scores, POOL_FACTOR * want, done);
    for (const i of batch) done.add(i);
    const scoreOf = new Map<number, number>();
    for (const i of batch) scoreOf.set(rows[i] as number, scores[i] as number);
    const active = s.pool.all(JSON.stringify(batch.map((i) => rows[i]))) as Array<[number, number, number]>;
    if (active.length === 0) continue;
    const meanLength = active.reduce((sum, r) => sum + r[2], 0) / active.length || 1;
    const ranked = active.map(([row, pos, length]) => ({
      row,
      pos,
      value: (scoreOf.get(row) as number) / Math.sqrt(1 - LENGTH_B + (LENGTH_B * length) / meanLength),
    }));
    ranked.sort((a, b) => b.value - a.value || a.pos - b.pos || a.row - b.row);
    for (const r of ranked) {
      if (chosen.length >= want) break;
      chosen.push(r.row);
    }
  }
  return chosen;
}
