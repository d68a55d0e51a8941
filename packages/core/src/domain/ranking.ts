import type { Config } from "../schemas/config.js";
import { isActiveBullet, isAntiPattern, isOutsideValidity } from "./bullet-state.js";
import type { Bullet, DeprecatedPattern } from "../schemas/playbook.js";
import { analyze } from "./lexical/analyze.js";
import { shippedConcepts } from "./lexical/concept-match.js";
import { DEFAULT_BM25F, fieldTerms, LexicalIndex, type Bm25fParams, type IndexBuildOptions } from "./lexical/lexical-index.js";
import { analyzeQuery, DEFAULT_QUERY, type QueryParams } from "./lexical/query.js";
import { DAY_MS, formatLastHelpful, getEffectiveScore, getHalfLifeDays, getHarmfulMultiplier, MATURITY_MULTIPLIER } from "./scoring.js";
import { extractKeywords } from "./text.js";
import type { OmitKnown } from "./types.js";

/**
 * Context ranking for `cm context` and `cm recall`.
 *
 * Relevance is lexical, computed offline: BM25F over each rule's content, tags and category (a rule
 * must match in its content or tags; the category only adds to such a match), with
 * identifier splitting, stemming, noise filtering for pasted logs and paths, a coding-domain
 * concept map that links different phrasings of the same problem, and a proximity bonus
 * (lexical/*). An inverted index over the bullets array is built once and cached, so a query only
 * touches the rules that share a term with the task.
 *
 * Relevance scale (`relevanceScore`): 0 means no match; otherwise the rule's lexical score divided
 * by the best lexical score among the rules eligible for this task, so the best match scores 1 and
 * `minRelevanceScore` (default 0.1) drops rules scoring below a tenth of the best match (values
 * above 1, from configs written for the original's keyword points, act as 1). With
 * semantic scores (RankOptions.semantic) relevance is `(1 − w)·lexical + w·max(0, cosine)` on the
 * same 0..1 scale.
 *
 * Order: relevance decides. Feedback, maturity and decay (the effective score) only multiply it by
 * a bounded factor in (0.85, 1.15), so they reorder rules of comparable relevance but can never lift
 * a rule above one that is more than 1.35 times as relevant. (The original multiplied relevance by
 * the effective score itself, so a popular rule matching one word outranked the rule that solves
 * the task; bench/relevance measures this as "crowding".)
 */

export type ScoredBullet = OmitKnown<Bullet, "embedding"> & {
  relevanceScore: number;
  effectiveScore: number;
  finalScore: number;
  lastHelpful: string;
  reasoning: string;
};

/** Semantic similarities to fuse with the lexical relevance (see RankOptions.semantic). */
export interface SemanticScores {
  /** Cosine similarity in [-1, 1] between the task and a bullet, for some (or all) bullets. */
  scores: ReadonlyMap<Bullet, number>;
  /** Share of the semantic similarity in the fused relevance, 0..1. */
  weight: number;
}

export interface RankOptions {
  now: Date;
  config: Config;
  /** Canonical workspace path; workspace-scoped bullets are kept only when theirs equals it exactly. */
  workspace?: string;
  limit: number;
  /**
   * Minimum relevance (0..1 scale, see the module comment); rules with relevance 0 never qualify.
   * Values above 1 (meaningful only on the original's keyword-point scale) act as 1: only the best
   * match (and rules tied with it) remain.
   */
  minRelevance: number;
  /**
   * Semantic similarities. A bullet with a similarity ≥ SEMANTIC_CANDIDATE_MIN is a candidate even
   * without a lexical match; relevance becomes `(1 − weight)·lexicalNormalized + weight·max(0, cosine)`,
   * where lexicalNormalized is the lexical score divided by the best lexical score (0 without a
   * lexical match) and a bullet missing from `scores` counts as cosine 0.
   */
  semantic?: SemanticScores;
}

export interface RankResult {
  rules: ScoredBullet[];
  antiPatterns: ScoredBullet[];
  /** Rules and anti-patterns together, best first (what `rules` and `antiPatterns` were split from). */
  ranked: ScoredBullet[];
  keywords: string[];
}

/** Semantic similarity from which a bullet is a candidate without any lexical match. */
export const SEMANTIC_CANDIDATE_MIN = 0.3;
/** The effective score moves the final score by at most ± this share of the relevance. */
export const FEEDBACK_SPAN = 0.15;
/** Effective score at which the feedback factor reaches tanh(1) ≈ 76% of its span. */
export const FEEDBACK_SCALE = 4;

/** The bounded feedback factor: 1 + 0.15·tanh(effective / 4), always within (0.85, 1.15). */
export function feedbackMultiplier(effectiveScore: number): number {
  if (Number.isNaN(effectiveScore)) return 1;
  if (!Number.isFinite(effectiveScore)) return effectiveScore > 0 ? 1 + FEEDBACK_SPAN : 1 - FEEDBACK_SPAN;
  return 1 + FEEDBACK_SPAN * Math.tanh(effectiveScore / FEEDBACK_SCALE);
}

// ---------------------------------------------------------------------------------------------
// Index cache

/** Tuning knobs of the lexical ranker (the defaults are what `cm` uses; benchmarks may vary them). */
export interface LexicalParams {
  bm25f: Readonly<Bm25fParams>;
  query: Readonly<QueryParams>;
}

export const DEFAULT_LEXICAL: Readonly<LexicalParams> = Object.freeze({ bm25f: DEFAULT_BM25F, query: DEFAULT_QUERY });

/** Eligibility that does not depend on the query: never, always, or check (workspace scope, validity window). */
const enum Static {
  Never = 0,
  Always = 1,
  Check = 2,
}

/** The text an index was built from, per bullet position (what decides whether it can be reused). */
interface IndexedTexts {
  contents: string[];
  /** Copies of the tag lists (the bullets' own arrays may be changed in place). */
  tags: Array<string[] | undefined>;
  categories: string[];
}

/** An index plus what ranking keeps per bullet of one bullets array. */
interface CachedIndex {
  params: Readonly<Bm25fParams>;
  texts: IndexedTexts;
  index: LexicalIndex;
  bullets: Bullet[];
  /** Every bullet (and its tags and feedback arrays) was frozen when cached, so none can have changed since. */
  frozen: boolean;
  /** Static eligibility per bullet (only meaningful when `frozen`; otherwise every bullet is checked). */
  eligibility: Uint8Array;
  /** Parsed feedback per bullet (filled on first use; only for frozen bullets, which cannot change). */
  feedback: Array<ParsedFeedback | undefined>;
  /** Scratch for ranking. */
  candidates: Int32Array;
  values: Float64Array;
  positions: Int32Array;
  position?: Map<Bullet, number>;
}

const byArray = new WeakMap<readonly Bullet[], CachedIndex>();
/** The most recently used entry (kept alive, so a new array of the same bullets finds it). */
let mostRecent: CachedIndex | undefined;

function isFrozenBullet(b: Bullet): boolean {
  return Object.isFrozen(b) && (b.tags === undefined || Object.isFrozen(b.tags)) && (b.feedbackEvents === undefined || Object.isFrozen(b.feedbackEvents));
}

function sameTags(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === undefined || b === undefined) return (a?.length ?? 0) === (b?.length ?? 0);
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether `bullets` hold, position by position, the texts an index was built from. */
function sameTexts(texts: IndexedTexts, bullets: readonly Bullet[]): boolean {
  if (texts.contents.length !== bullets.length) return false;
  for (let i = 0; i < bullets.length; i++) {
    const b = bullets[i]!;
    if (b.content !== texts.contents[i] || b.category !== texts.categories[i] || !sameTags(b.tags, texts.tags[i])) return false;
  }
  return true;
}

/** Whether `cached` describes exactly these bullet objects, unchanged. */
function sameBullets(cached: CachedIndex, bullets: readonly Bullet[], sameArray: boolean): boolean {
  if (cached.bullets.length !== bullets.length) return false;
  if (cached.frozen) {
    // Frozen bullets cannot have changed: identities are enough (and nothing at all for a frozen array).
    if (sameArray && Object.isFrozen(bullets)) return true;
    for (let i = 0; i < bullets.length; i++) if (bullets[i] !== cached.bullets[i]) return false;
    return true;
  }
  for (let i = 0; i < bullets.length; i++) if (bullets[i] !== cached.bullets[i]) return false;
  return sameTexts(cached.texts, bullets);
}

function staticEligibility(b: Bullet): Static {
  if (!isActiveBullet(b)) return Static.Never;
  if (b.scope === "workspace" || b.validFrom !== undefined || b.validTo !== undefined) return Static.Check;
  return Static.Always;
}

/**
 * The lexical index of a bullets array, cached: per array (the MCP server and the CLI pass the same
 * array for every query), and for a new array whose bullets carry the same texts in the same order
 * (a re-merged view of an unchanged playbook, or the same playbook re-read after a feedback change)
 * the text index is reused and only per-bullet data (eligibility, feedback) is refreshed. Every use
 * re-checks the bullets against what was cached, so an array or bullet changed in place is handled.
 */
export function lexicalIndexFor(bullets: readonly Bullet[], params: Readonly<Bm25fParams> = DEFAULT_BM25F, build?: IndexBuildOptions): LexicalIndex {
  return cachedIndex(bullets, params, build).index;
}

/** An index kept for these bullets or for the same texts, which ranking them would reuse. */
function reusableIndex(bullets: readonly Bullet[], params: Readonly<Bm25fParams>): CachedIndex | undefined {
  for (const c of [byArray.get(bullets), mostRecent]) if (c !== undefined && c.params === params && sameTexts(c.texts, bullets)) return c;
  return undefined;
}

/** Whether ranking `bullets` would reuse an index this process already built (no analysis needed). */
export function hasLexicalIndex(bullets: readonly Bullet[], params: Readonly<Bm25fParams> = DEFAULT_BM25F): boolean {
  return reusableIndex(bullets, params) !== undefined;
}

function cachedIndex(bullets: readonly Bullet[], params: Readonly<Bm25fParams>, build?: IndexBuildOptions): CachedIndex {
  const hit = byArray.get(bullets);
  if (hit !== undefined && hit.params === params && sameBullets(hit, bullets, true)) return (mostRecent = hit);
  if (mostRecent !== undefined && mostRecent !== hit && mostRecent.params === params && sameBullets(mostRecent, bullets, false)) {
    byArray.set(bullets, mostRecent);
    return mostRecent;
  }
  // Same texts as an index we have: keep the index, refresh what depends on the bullet objects.
  const base = reusableIndex(bullets, params);
  const n = bullets.length;
  let frozen = true;
  const eligibility = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const b = bullets[i]!;
    if (frozen && !isFrozenBullet(b)) frozen = false;
    eligibility[i] = staticEligibility(b);
  }
  const texts: IndexedTexts = base?.texts ?? {
    contents: bullets.map((b) => b.content),
    tags: bullets.map((b) => (b.tags === undefined ? undefined : [...b.tags])),
    categories: bullets.map((b) => b.category),
  };
  const feedback: Array<ParsedFeedback | undefined> = new Array(n);
  if (base !== undefined && base.frozen && frozen) {
    // Parsed feedback of unchanged (identical, frozen) bullets carries over.
    for (let i = 0; i < n; i++) if (bullets[i] === base.bullets[i]) feedback[i] = base.feedback[i];
  }
  const built: CachedIndex = {
    params,
    texts,
    index: base?.index ?? new LexicalIndex(bullets, params, build),
    bullets: [...bullets],
    frozen,
    eligibility,
    feedback,
    candidates: base?.candidates ?? new Int32Array(n),
    values: base?.values ?? new Float64Array(n),
    positions: base?.positions ?? new Int32Array(n),
  };
  byArray.set(bullets, built);
  mostRecent = built;
  return built;
}

function positionOf(cached: CachedIndex, bullet: Bullet): number | undefined {
  if (cached.position === undefined) {
    cached.position = new Map();
    cached.bullets.forEach((b, i) => cached.position!.set(b, i));
  }
  return cached.position.get(bullet);
}

// ---------------------------------------------------------------------------------------------
// Effective scores with pre-parsed feedback

interface ParsedFeedback {
  /** Event times (ms; NaN when unparseable), types (1 helpful, 2 harmful, 0 other) and weights. */
  at: Float64Array;
  type: Uint8Array;
  weight: Float64Array;
}

function parseFeedback(bullet: Bullet): ParsedFeedback {
  const events = bullet.feedbackEvents ?? [];
  const out: ParsedFeedback = { at: new Float64Array(events.length), type: new Uint8Array(events.length), weight: new Float64Array(events.length) };
  events.forEach((e, i) => {
    out.at[i] = Date.parse(e.timestamp);
    out.type[i] = e.type === "helpful" ? 1 : e.type === "harmful" ? 2 : 0;
    const dv = e.decayedValue;
    out.weight[i] = typeof dv === "number" && Number.isFinite(dv) ? Math.max(0, dv) : 1;
  });
  return out;
}

/** What effective scores need from the options, computed once per ranking. */
interface ScoringContext {
  now: Date;
  nowMs: number;
  halfLife: number;
  harmfulMultiplier: number;
  config: Config;
}

function scoringContext(now: Date, config: Config): ScoringContext {
  return { now, nowMs: now.getTime(), halfLife: getHalfLifeDays(config), harmfulMultiplier: getHarmfulMultiplier(config), config };
}

/**
 * getEffectiveScore (scoring.ts) with the bullet's timestamps parsed once: frozen bullets (what
 * the stores hand out) cannot change, so their parsed feedback is kept with the index.
 */
function effectiveScoreAt(cached: CachedIndex, d: number, ctx: ScoringContext): number {
  const bullet = cached.bullets[d]!;
  if (!cached.frozen) return getEffectiveScore(bullet, ctx.now, ctx.config);
  let parsed = cached.feedback[d];
  if (parsed === undefined) cached.feedback[d] = parsed = parseFeedback(bullet);
  const { nowMs, halfLife } = ctx;
  let helpful = 0;
  let harmful = 0;
  if (halfLife > 0 && Number.isFinite(nowMs)) {
    const { at, type, weight } = parsed;
    for (let i = 0; i < at.length; i++) {
      const t = at[i]!;
      if (!Number.isFinite(t)) continue;
      const value = Math.pow(0.5, Math.max(0, (nowMs - t) / DAY_MS) / halfLife) * weight[i]!;
      if (!Number.isFinite(value)) continue;
      if (type[i] === 1) helpful += value;
      else if (type[i] === 2) harmful += value;
    }
  }
  return (helpful - ctx.harmfulMultiplier * harmful) * (MATURITY_MULTIPLIER[bullet.maturity] ?? 1);
}

// ---------------------------------------------------------------------------------------------
// Ranking

/** Whether a bullet may appear for the given workspace (global bullets always; workspace ones on exact match). */
function inWorkspace(bullet: Bullet, workspace: string | undefined): boolean {
  if (bullet.scope !== "workspace") return true;
  return workspace !== undefined && bullet.workspace === workspace;
}

function eligible(bullet: Bullet, opts: RankOptions): boolean {
  if (!isActiveBullet(bullet) || !inWorkspace(bullet, opts.workspace)) return false;
  if ((bullet.validTo !== undefined || bullet.validFrom !== undefined) && isOutsideValidity(bullet, opts.now)) return false;
  return true;
}

function eligibleAt(cached: CachedIndex, d: number, opts: RankOptions): boolean {
  if (cached.frozen) {
    const e = cached.eligibility[d]!;
    if (e !== Static.Check) return e === Static.Always;
  }
  return eligible(cached.bullets[d]!, opts);
}

/** Keywords of a task for the history query and the suggested searches (noise such as ids and timestamps removed). */
export function taskKeywords(task: string): string[] {
  return extractKeywords(task);
}

/**
 * Positions of the k largest values among `positions[0..n)` (by values[position]), in no particular
 * order, using a min-heap of size k (O(n log k)). Ties at the boundary are broken towards lower
 * positions, i.e. earlier playbook order.
 */
function topK(positions: Int32Array, n: number, values: Float64Array, k: number): Int32Array {
  const heap = new Int32Array(k);
  let size = 0;
  // "a ranks below b": smaller value, or equal value and later position.
  const below = (a: number, b: number): boolean => values[a]! < values[b]! || (values[a] === values[b] && a > b);
  const siftDown = (from: number): void => {
    let i = from;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < size && below(heap[l]!, heap[m]!)) m = l;
      if (r < size && below(heap[r]!, heap[m]!)) m = r;
      if (m === i) return;
      const t = heap[i]!;
      heap[i] = heap[m]!;
      heap[m] = t;
      i = m;
    }
  };
  for (let x = 0; x < n; x++) {
    const p = positions[x]!;
    if (size < k) {
      let i = size++;
      heap[i] = p;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!below(heap[i]!, heap[parent]!)) break;
        const t = heap[i]!;
        heap[i] = heap[parent]!;
        heap[parent] = t;
        i = parent;
      }
    } else if (below(heap[0]!, p)) {
      heap[0] = p;
      siftDown(0);
    }
  }
  return heap.subarray(0, size);
}

interface Candidate {
  order: number;
  relevance: number;
  effective: number;
  final: number;
}

/**
 * Ranks the bullets for a task and splits the top `limit` into rules and anti-patterns (anti-patterns
 * are ranked in the same list). `lexical` overrides the tuning (benchmarks only).
 */
export function rankBulletsForTask(
  bullets: readonly Bullet[],
  task: string,
  opts: RankOptions,
  lexical: Readonly<LexicalParams> = DEFAULT_LEXICAL,
): RankResult {
  const keywords = taskKeywords(task);
  const limit = Math.max(0, Math.floor(opts.limit));
  const cached = cachedIndex(bullets, lexical.bm25f);
  const index = cached.index;
  const { query } = analyzeQuery(task, lexical.query, shippedConcepts(), index);
  const found = index.search(query);

  // Lexical candidates that may be shown, and the best lexical score among them.
  const { candidates: lexicalDocs, values } = cached;
  let m = 0;
  let best = 0;
  for (let i = 0; i < found.count; i++) {
    const d = found.docs[i]!;
    const score = found.scores[d]!;
    // The category only adds to a match in the content or tags; on its own it would surface every
    // rule of a category.
    if (!(score > 0) || found.textHits[d] === 0 || !eligibleAt(cached, d, opts)) continue;
    lexicalDocs[m++] = d;
    if (score > best) best = score;
  }

  // Relevance of every candidate (values[i] belongs to docs[i]).
  let docs: Int32Array = lexicalDocs;
  let count = m;
  for (let i = 0; i < m; i++) values[i] = found.scores[lexicalDocs[i]!]! / best;
  const semantic = opts.semantic;
  if (semantic !== undefined) {
    const w = Number.isFinite(semantic.weight) ? Math.min(1, Math.max(0, semantic.weight)) : 0;
    const cosineOf = (bullet: Bullet): number => {
      const c = semantic.scores.get(bullet);
      return c !== undefined && Number.isFinite(c) ? Math.max(0, Math.min(1, c)) : 0;
    };
    const lexicalSet = new Set<number>();
    const extra: Array<[number, number]> = [];
    for (let i = 0; i < m; i++) {
      const d = lexicalDocs[i]!;
      lexicalSet.add(d);
      values[i] = (1 - w) * values[i]! + w * cosineOf(cached.bullets[d]!);
    }
    for (const [bullet, cosine] of semantic.scores) {
      if (!(cosine >= SEMANTIC_CANDIDATE_MIN)) continue;
      const d = positionOf(cached, bullet);
      if (d === undefined || lexicalSet.has(d) || !eligibleAt(cached, d, opts)) continue;
      lexicalSet.add(d);
      extra.push([d, w * Math.min(1, cosine)]);
    }
    if (extra.length > 0) {
      docs = new Int32Array(m + extra.length);
      docs.set(lexicalDocs.subarray(0, m));
      const allValues = new Float64Array(m + extra.length);
      allValues.set(values.subarray(0, m));
      extra.forEach(([d, v], i) => {
        docs[m + i] = d;
        allValues[m + i] = v;
      });
      count = m + extra.length;
      return finishRanking(cached, docs, allValues, count, limit, opts, keywords);
    }
  }
  return finishRanking(cached, docs, values, count, limit, opts, keywords);
}

function finishRanking(
  cached: CachedIndex,
  docs: Int32Array,
  values: Float64Array,
  count: number,
  limit: number,
  opts: RankOptions,
  keywords: string[],
): RankResult {
  const pool: Candidate[] = [];
  if (limit > 0) {
    const ctx = scoringContext(opts.now, opts.config);
    // Positions (into docs/values) of the rules that reach minRelevance.
    const positions = cached.positions.length >= count ? cached.positions : new Int32Array(count);
    let qualifying = 0;
    const minRelevance = Math.min(1, opts.minRelevance);
    for (let i = 0; i < count; i++) if (values[i]! > 0 && values[i]! >= minRelevance) positions[qualifying++] = i;
    const take = (i: number): Candidate => {
      const order = docs[i]!;
      const relevance = values[i]!;
      const effective = effectiveScoreAt(cached, order, ctx);
      return { order, relevance, effective, final: relevance * feedbackMultiplier(effective) };
    };
    if (qualifying <= limit) {
      for (let x = 0; x < qualifying; x++) pool.push(take(positions[x]!));
    } else {
      // The `limit` most relevant rules all have a final score ≥ the smallest of theirs, so a rule
      // whose relevance × (1 + span) is below that cannot make the cut (exact, not a heuristic).
      const top = topK(positions, qualifying, values, limit);
      const taken = new Set<number>();
      let kthFinal = Number.POSITIVE_INFINITY;
      for (const i of top) {
        const c = take(i);
        pool.push(c);
        taken.add(i);
        if (c.final < kthFinal) kthFinal = c.final;
      }
      const floor = kthFinal / (1 + FEEDBACK_SPAN);
      for (let x = 0; x < qualifying; x++) {
        const i = positions[x]!;
        if (values[i]! >= floor && !taken.has(i)) pool.push(take(i));
      }
    }
  }
  pool.sort((a, b) => b.final - a.final || b.relevance - a.relevance || a.order - b.order);

  const rules: ScoredBullet[] = [];
  const antiPatterns: ScoredBullet[] = [];
  const ranked: ScoredBullet[] = [];
  for (const c of pool.slice(0, limit)) {
    const bullet = cached.bullets[c.order]!;
    // One spread (fast) and, only for the rare bullet that has one, dropping the embedding.
    const scored = {
      ...bullet,
      relevanceScore: c.relevance,
      effectiveScore: c.effective,
      finalScore: c.final,
      lastHelpful: formatLastHelpful(bullet, opts.now),
      reasoning: bulletReasoning(bullet),
    } as ScoredBullet & { embedding?: unknown };
    if ("embedding" in scored) delete scored.embedding;
    (isAntiPattern(bullet) ? antiPatterns : rules).push(scored);
    ranked.push(scored);
  }
  return { rules, antiPatterns, ranked, keywords };
}

/** Query analysis for keyword lists: every distinct term weighs 1 (repeats do not add). */
const SINGLE_WEIGHT_QUERY: Readonly<QueryParams> = Object.freeze({ ...DEFAULT_QUERY, repeatBoost: 0 });

/**
 * Lexical relevance of one bullet to a list of keywords, without any collection statistics (no
 * idf): each distinct query term (after identifier splitting and stemming) and each concept-map
 * group the keywords share with the bullet adds its BM25F-saturated field frequency — about 1 for
 * one occurrence in the content, more in tags, at most k1 + 1 = 2.2 — times its query weight (1 for
 * a word, DEFAULT_QUERY.expansionWeight = 0.8 for a concept group). 0 means no shared term.
 */
export function scoreBulletRelevance(bullet: Pick<Bullet, "content" | "tags"> & { category?: string }, keywords: readonly string[]): number {
  if (keywords.length === 0 || !bullet.content) return 0;
  const distinct = [...new Set(keywords.map((k) => k.toLowerCase()))];
  const { query } = analyzeQuery(distinct.join(" \n "), SINGLE_WEIGHT_QUERY);
  if (query.terms.length === 0) return 0;
  const concepts = shippedConcepts();
  const { k1, content, tags, category } = DEFAULT_BM25F;
  const pseudo = new Map<string, number>();
  const addField = (text: string, weight: number): void => {
    for (const t of fieldTerms(analyze(text), concepts).terms) pseudo.set(t, (pseudo.get(t) ?? 0) + weight);
  };
  addField(bullet.content, content.weight);
  for (const tag of bullet.tags ?? []) addField(tag, tags.weight);
  if (bullet.category) addField(bullet.category, category.weight);
  let score = 0;
  for (const q of query.terms) {
    const f = pseudo.get(q.term);
    if (f !== undefined && f > 0) score += (q.weight * f * (k1 + 1)) / (f + k1);
  }
  return score;
}

const REASONING_MAX = 200;

function truncateReasoning(text: string): string {
  if (text.length <= REASONING_MAX) return text;
  const sentenceEnd = text.search(/[.!?]/);
  if (sentenceEnd > 0 && sentenceEnd < REASONING_MAX - 3) return text.slice(0, sentenceEnd + 1);
  const cut = text.slice(0, REASONING_MAX);
  const lastSpace = cut.lastIndexOf(" ");
  if (lastSpace > REASONING_MAX * 0.7) return `${cut.slice(0, lastSpace)}...`;
  return `${cut.slice(0, REASONING_MAX - 3)}...`;
}

/**
 * Why a rule exists: its `reasoning` (≤ 200 chars: first sentence or a word-boundary cut + "..."),
 * else `From <agent> session on <M/D/YYYY>`, else "No reasoning available".
 * Deviation: the original formatted the date in the machine's local time zone; we use UTC so the
 * output does not depend on where it runs.
 */
export function bulletReasoning(bullet: Pick<Bullet, "reasoning" | "sourceAgents" | "createdAt">): string {
  const reasoning = bullet.reasoning?.trim();
  if (reasoning) return truncateReasoning(reasoning);
  const agent = bullet.sourceAgents?.[0];
  const created = bullet.createdAt;
  if (agent || created) {
    let date = "unknown date";
    const ms = created ? Date.parse(created) : Number.NaN;
    if (Number.isFinite(ms)) {
      const d = new Date(ms);
      date = `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()}`;
    }
    return `From ${agent || "unknown"} session on ${date}`;
  }
  return "No reasoning available";
}

// ---------------------------------------------------------------------------------------------
// History query and suggestions

export const MAX_CASS_QUERY_TERMS = 8;
const TRACKER_ID = /^(?:bd|br)-[a-z0-9]+(?:[.-][a-z0-9]+)+$/i;

/**
 * The cass query for a task's keywords: up to 8 keywords of ≥ 2 chars that are not all digits, not
 * issue-tracker ids (`bd-…`, `br-…`) and contain no `.`, `/` or `\`; joined with " OR ". "" when none.
 */
export function buildCassQuery(keywords: readonly string[]): string {
  const terms = keywords
    .filter((k) => k.length >= 2 && !/^\d+$/.test(k) && !TRACKER_ID.test(k) && !/[./\\]/.test(k))
    .slice(0, MAX_CASS_QUERY_TERMS);
  return terms.join(" OR ");
}

const PROBLEM_TERMS = ["error", "fix", "bug", "issue", "problem", "fail", "debug"];
const MAX_SUGGESTIONS = 5;

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Up to five ready-to-run `cass search '<q>' --days N` commands for digging deeper (reference §5.12 item 7). */
export function suggestCassQueries(task: string, keywords: readonly string[]): string[] {
  const out: string[] = [];
  const add = (query: string, days: number): void => {
    if (out.length >= MAX_SUGGESTIONS) return;
    const command = `cass search ${shellQuote(query)} --days ${days}`;
    if (!out.includes(command)) out.push(command);
  };
  const [first, second, third] = keywords;
  if (keywords.length >= 2) add(keywords.slice(0, 3).join(" "), 30);
  if (first !== undefined) {
    const lowerTask = task.toLowerCase();
    const hasProblem = PROBLEM_TERMS.some((t) => lowerTask.includes(t));
    add(`${first} ${hasProblem ? "fix" : "error"}`, 60);
    add(first, 90);
  }
  if (first !== undefined && second !== undefined) add(`${first} ${second}`, 60);
  if (third !== undefined) add(third, 90);
  return out;
}

/**
 * Matcher for a deprecated pattern: `/…/` or text with regex syntax is a case-insensitive regex
 * (skipped when longer than 256 chars, nested-quantified or invalid); anything else a
 * case-insensitive substring.
 */
export function deprecatedPatternMatcher(pattern: string): (text: string) => boolean {
  if (!pattern) return () => false;
  const wrapped = pattern.length > 2 && pattern.startsWith("/") && pattern.endsWith("/");
  const looksLikeRegex = /\\/.test(pattern) || /[()[\]|?*+^$]/.test(pattern);
  if (!wrapped && !looksLikeRegex) {
    const needle = pattern.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  const body = wrapped ? pattern.slice(1, -1) : pattern;
  if (body.length > 256 || /\([^)]*[*+][^)]*\)[*+?]/.test(body)) return () => false;
  try {
    const regex = new RegExp(body, "i");
    return (text) => regex.test(text);
  } catch {
    return () => false;
  }
}

/** `Task matches deprecated pattern "<p>"[ - use <r> instead][ (Reason: <reason>)]` per matching pattern. */
export function deprecatedPatternWarnings(
  task: string,
  patterns: ReadonlyArray<Pick<DeprecatedPattern, "pattern"> & { replacement?: string | undefined; reason?: string | undefined }>,
): string[] {
  const out: string[] = [];
  for (const p of patterns) {
    if (!p?.pattern || !deprecatedPatternMatcher(p.pattern)(task)) continue;
    const replacement = p.replacement ? ` - use ${p.replacement} instead` : "";
    const reason = p.reason ? ` (Reason: ${p.reason})` : "";
    out.push(`Task matches deprecated pattern "${p.pattern}"${replacement}${reason}`);
  }
  return out;
}
