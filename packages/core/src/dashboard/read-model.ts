import { AppError } from "../errors.js";
import { isActiveBullet } from "../domain/bullet-state.js";
import { buildConflictIndex, detectConflictsIndexed } from "../domain/conflicts.js";
import { DAY_MS, getEffectiveScore, getHalfLifeDays, isStale } from "../domain/scoring.js";
import { findMergeCandidates } from "../domain/similarity.js";
import { loadTraumas } from "../operations/trauma.js";
import { loadMergedPlaybook } from "../operations/shared.js";
import { staleRecommendation } from "../operations/stale.js";
import { countBy } from "../operations/stats.js";
import { round2 } from "../operations/top.js";
import type { Config } from "../schemas/config.js";
import type { Layer, OperationDeps } from "../ports.js";
import type { Bullet, Playbook } from "../schemas/playbook.js";
import {
  ContextLogEntrySchema,
  ReflectionRevertSchema,
  ReflectionRunSchema,
  type JournalEvent,
  type ReflectionRun,
  type TraumaEntry,
} from "../schemas/records.js";

/**
 * The dashboard's read model: what the web dashboard shows, computed from the merged playbook, the
 * audit journal and the logs with core's own scoring, staleness, near-duplicate and conflict
 * logic. Each `dashboard*` function reads the merged playbook once; the `compute*` functions are
 * pure (data in, data out) so they can be tested and cached without a store.
 */

type ScoringConfig = Pick<Config, "scoring" | "defaultDecayHalfLife">;

// ------------------------------------------------------------------------------------------ paging

export const DASHBOARD_DEFAULT_LIMIT = 50;
export const DASHBOARD_MAX_LIMIT = 500;
/** Longest search text looked for (longer `q` is refused by the host as bad input). */
export const DASHBOARD_MAX_QUERY_CHARS = 200;

export interface Page<T> {
  total: number;
  offset: number;
  limit: number;
  items: T[];
}

export interface PageRequest {
  offset?: number;
  limit?: number;
}

export function paginate<T>(items: readonly T[], request: PageRequest = {}): Page<T> {
  const offset = request.offset ?? 0;
  const limit = request.limit ?? DASHBOARD_DEFAULT_LIMIT;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new AppError("INVALID_INPUT", "offset must be an integer >= 0.", { details: { field: "offset", received: offset } });
  }
  if (!Number.isInteger(limit) || limit < 1 || limit > DASHBOARD_MAX_LIMIT) {
    throw new AppError("INVALID_INPUT", `limit must be an integer between 1 and ${DASHBOARD_MAX_LIMIT}.`, {
      details: { field: "limit", received: limit },
    });
  }
  return { total: items.length, offset, limit, items: items.slice(offset, offset + limit) };
}

// ----------------------------------------------------------------------------------- rule summaries

export interface RuleSummary {
  id: string;
  content: string;
  category: string;
  kind: string;
  scope: string;
  state: string;
  maturity: string;
  /** Effective score now (decayed feedback × maturity multiplier), 2 decimals. */
  score: number;
  helpfulCount: number;
  harmfulCount: number;
  pinned: boolean;
  active: boolean;
  createdAt: string;
  updatedAt: string;
}

export function ruleSummary(bullet: Bullet, now: Date, config: ScoringConfig, score?: number): RuleSummary {
  const s = score ?? getEffectiveScore(bullet, now, config);
  return {
    id: bullet.id,
    content: bullet.content,
    category: bullet.category || "uncategorized",
    kind: bullet.kind,
    scope: bullet.scope || "global",
    state: bullet.state,
    maturity: bullet.maturity || "candidate",
    score: Number.isFinite(s) ? round2(s) : 0,
    helpfulCount: bullet.helpfulCount || 0,
    harmfulCount: bullet.harmfulCount || 0,
    pinned: bullet.pinned === true,
    active: isActiveBullet(bullet),
    createdAt: bullet.createdAt,
    updatedAt: bullet.updatedAt,
  };
}

// ---------------------------------------------------------------------------------------- overview

/** Bin edges of the score histogram (active rules); null stands for an open end. */
export const SCORE_BIN_EDGES: ReadonlyArray<number | null> = [null, -10, -5, -2, 0, 2, 5, 10, 20, null];

export interface DashboardOverview {
  generatedAt: string;
  counts: {
    /** Every bullet of the merged playbook (deprecated and retired included, blocked excluded). */
    total: number;
    /** Bullets that are not retired or deprecated. */
    active: number;
    byState: Record<string, number>;
    byMaturity: Record<string, number>;
    byKind: Record<string, number>;
    byScope: Record<string, number>;
    byCategory: Record<string, number>;
  };
  /** Effective scores of the active rules; a bin holds `from <= score < to`. */
  scoreHistogram: Array<{ from: number | null; to: number | null; count: number }>;
  /** Feedback events on every bullet, and those of the last 7 days (`now - 7 days <= at <= now`). */
  feedback: { helpful: number; harmful: number; last7Days: { helpful: number; harmful: number } };
}

export function scoreBinIndex(score: number): number {
  for (let i = 1; i < SCORE_BIN_EDGES.length - 1; i++) if (score < (SCORE_BIN_EDGES[i] as number)) return i - 1;
  return SCORE_BIN_EDGES.length - 2;
}

export function computeOverview(playbook: Playbook, now: Date, config: ScoringConfig): DashboardOverview {
  const all = playbook.bullets;
  const active = all.filter(isActiveBullet);
  const histogram = SCORE_BIN_EDGES.slice(0, -1).map((from, i) => ({ from, to: SCORE_BIN_EDGES[i + 1] ?? null, count: 0 }));
  for (const bullet of active) {
    const score = getEffectiveScore(bullet, now, config);
    if (Number.isFinite(score)) histogram[scoreBinIndex(score)]!.count++;
  }
  const nowMs = now.getTime();
  const weekAgo = nowMs - 7 * DAY_MS;
  const feedback = { helpful: 0, harmful: 0, last7Days: { helpful: 0, harmful: 0 } };
  for (const bullet of all) {
    for (const event of bullet.feedbackEvents) {
      feedback[event.type]++;
      const at = Date.parse(event.timestamp);
      if (at >= weekAgo && at <= nowMs) feedback.last7Days[event.type]++;
    }
  }
  return {
    generatedAt: now.toISOString(),
    counts: {
      total: all.length,
      active: active.length,
      byState: countBy(all, (b) => b.state),
      byMaturity: countBy(all, (b) => b.maturity),
      byKind: countBy(all, (b) => b.kind),
      byScope: countBy(all, (b) => b.scope),
      byCategory: countBy(all, (b) => b.category),
    },
    scoreHistogram: histogram,
    feedback,
  };
}

// ------------------------------------------------------------------------------------------- rules

export const RULE_SORTS = ["score", "updated", "helpful", "harmful", "created"] as const;
export type RuleSort = (typeof RULE_SORTS)[number];

export interface RuleQuery extends PageRequest {
  /** Case-insensitive text looked for in content, category and tags. */
  q?: string;
  /** A bullet state (draft, active, retired), or `deprecated`. */
  state?: string;
  maturity?: string;
  kind?: string;
  scope?: string;
  category?: string;
  sort?: RuleSort;
  order?: "asc" | "desc";
}

function matchesText(bullet: Bullet, needle: string): boolean {
  if (bullet.content.toLowerCase().includes(needle)) return true;
  if (bullet.category.toLowerCase().includes(needle)) return true;
  return bullet.tags.some((t) => t.toLowerCase().includes(needle));
}

export function computeRules(playbook: Playbook, now: Date, config: ScoringConfig, query: RuleQuery = {}): Page<RuleSummary> {
  const q = query.q?.trim().toLowerCase() ?? "";
  if (q.length > DASHBOARD_MAX_QUERY_CHARS) {
    throw new AppError("INVALID_INPUT", `q must be at most ${DASHBOARD_MAX_QUERY_CHARS} characters.`, { details: { field: "q" } });
  }
  const sort = query.sort ?? "score";
  if (!RULE_SORTS.includes(sort)) {
    throw new AppError("INVALID_INPUT", `sort must be one of ${RULE_SORTS.join(", ")}.`, { details: { field: "sort", received: sort } });
  }
  const order = query.order ?? "desc";
  if (order !== "asc" && order !== "desc") {
    throw new AppError("INVALID_INPUT", "order must be asc or desc.", { details: { field: "order", received: order } });
  }
  const selected = playbook.bullets.filter(
    (b) =>
      (query.state === undefined ||
        (query.state === "deprecated" ? b.deprecated || b.maturity === "deprecated" : b.state === query.state)) &&
      (query.maturity === undefined || b.maturity === query.maturity) &&
      (query.kind === undefined || b.kind === query.kind) &&
      (query.scope === undefined || b.scope === query.scope) &&
      (query.category === undefined || b.category === query.category) &&
      (q === "" || matchesText(b, q)),
  );
  const rows = selected.map((bullet) => ({ bullet, score: getEffectiveScore(bullet, now, config) }));
  const key = (row: { bullet: Bullet; score: number }): number | string => {
    switch (sort) {
      case "score":
        return Number.isFinite(row.score) ? row.score : 0;
      case "helpful":
        return row.bullet.helpfulCount || 0;
      case "harmful":
        return row.bullet.harmfulCount || 0;
      case "updated":
        return row.bullet.updatedAt;
      case "created":
        return row.bullet.createdAt;
    }
  };
  const sign = order === "asc" ? 1 : -1;
  rows.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) return (ka < kb ? -1 : 1) * sign;
    return a.bullet.id < b.bullet.id ? -1 : a.bullet.id > b.bullet.id ? 1 : 0;
  });
  const page = paginate(rows, query);
  return { ...page, items: page.items.map((row) => ruleSummary(row.bullet, now, config, row.score)) };
}

// ------------------------------------------------------------------------------------- rule detail

export const SCORE_SERIES_MAX_POINTS = 200;
/** Evenly spaced samples between the first event (or creation) and now, besides the events. */
const SCORE_SERIES_SPACED = 50;

export interface ScorePoint {
  at: string;
  score: number;
}

/**
 * The rule's effective score over time: at each instant, `getEffectiveScore` over the feedback
 * events recorded by then, decayed to that instant, with the rule's current maturity multiplier.
 * Sampled at every event (thinned evenly when there are many) and at evenly spaced instants from
 * the first event (or the creation) to now; at most 200 points, oldest first.
 */
export function computeScoreSeries(bullet: Bullet, now: Date, config: ScoringConfig): ScorePoint[] {
  const nowMs = now.getTime();
  const events = bullet.feedbackEvents
    .map((event) => ({ event, at: Date.parse(event.timestamp) }))
    .filter((e) => Number.isFinite(e.at) && e.at <= nowMs)
    .sort((a, b) => a.at - b.at);
  let eventTimes = [...new Set(events.map((e) => e.at))];
  const eventBudget = SCORE_SERIES_MAX_POINTS - SCORE_SERIES_SPACED;
  if (eventTimes.length > eventBudget) {
    const step = eventTimes.length / eventBudget;
    eventTimes = Array.from({ length: eventBudget }, (_, i) => eventTimes[Math.floor(i * step)]!);
  }
  const created = Date.parse(bullet.createdAt);
  const startCandidates = [events[0]?.at, Number.isFinite(created) ? created : undefined].filter((v): v is number => v !== undefined);
  const start = startCandidates.length > 0 ? Math.min(...startCandidates, nowMs) : nowMs;
  const times = new Set<number>(eventTimes);
  const spaced = start < nowMs ? SCORE_SERIES_SPACED : 1;
  for (let i = 0; i < spaced; i++) times.add(spaced === 1 ? nowMs : Math.round(start + ((nowMs - start) * i) / (spaced - 1)));
  const sorted = [...times].sort((a, b) => a - b).slice(-SCORE_SERIES_MAX_POINTS);
  const out: ScorePoint[] = [];
  let seen = 0;
  for (const t of sorted) {
    while (seen < events.length && events[seen]!.at <= t) seen++;
    const score = getEffectiveScore({ maturity: bullet.maturity, feedbackEvents: events.slice(0, seen).map((e) => e.event) }, new Date(t), config);
    out.push({ at: new Date(t).toISOString(), score: Number.isFinite(score) ? round2(score) : 0 });
  }
  return out;
}

export interface RuleJournalEntry {
  at: string;
  op: string;
  change: string;
  summary: string;
  actor: string;
  layer: Layer;
  runId?: string;
}

function journalSummary(event: JournalEvent): string {
  const fields = Object.keys(event.after ?? event.before ?? {});
  const parts = [`${event.operation}: ${event.change}`];
  if (fields.length > 0) parts.push(`(${fields.join(", ")})`);
  if (event.reason !== undefined && event.reason !== "") parts.push(`- ${event.reason}`);
  return parts.join(" ");
}

export interface RuleDetail {
  rule: Bullet & { score: number; active: boolean };
  scoreSeries: ScorePoint[];
  events: Array<{ at: string; type: "helpful" | "harmful"; sessionPath?: string; reason?: string }>;
  journal: RuleJournalEntry[];
}

export function computeRuleDetail(bullet: Bullet, journal: readonly JournalEvent[], now: Date, config: ScoringConfig): RuleDetail {
  const score = getEffectiveScore(bullet, now, config);
  const entries = journal
    .filter((e) => e.bulletId === bullet.id)
    .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0))
    .map((e) => ({
      at: e.timestamp,
      op: e.operation,
      change: e.change,
      summary: journalSummary(e),
      actor: e.actor,
      layer: e.layer,
      ...(e.runId !== undefined ? { runId: e.runId } : {}),
    }));
  return {
    rule: { ...bullet, score: Number.isFinite(score) ? round2(score) : 0, active: isActiveBullet(bullet) },
    scoreSeries: computeScoreSeries(bullet, now, config),
    events: [...bullet.feedbackEvents]
      .sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0))
      .map((e) => ({
        at: e.timestamp,
        type: e.type,
        ...(e.sessionPath !== undefined ? { sessionPath: e.sessionPath } : {}),
        ...(e.reason !== undefined ? { reason: e.reason } : {}),
      })),
    journal: entries,
  };
}

// -------------------------------------------------------------------------------------------- risk

/** Days ahead within which an active rule's `validTo` counts as expiring (like `cm stale --expiring 30`). */
export const EXPIRING_WITHIN_DAYS = 30;

export interface DashboardRisk {
  /** Active rules with a negative effective score (`cm stats` atRisk), lowest first. */
  atRisk: Array<RuleSummary & { reason: string }>;
  /** Active rules without feedback for longer than the decay half-life (`cm stats` staleCount), most stale first. */
  stale: Array<RuleSummary & { daysSinceFeedback: number; recommendation: string }>;
  staleThresholdDays: number;
  /** Active rules whose validTo is between now and 30 days ahead (`cm stale --expiring 30`), soonest first. */
  expiring: Array<RuleSummary & { validTo: string; expiresInDays: number }>;
  expiringWithinDays: number;
  /** Each list holds at most `limit` rules (the first ones in its order); `totals` counts them all. */
  limit: number;
  totals: { atRisk: number; stale: number; expiring: number };
}

/** Default and largest number of rules per risk list (a 10,000-rule playbook can have thousands of stale ones). */
export const RISK_DEFAULT_LIMIT = 200;

function newestFeedbackMs(bullet: Bullet): number | null {
  let newest: number | null = null;
  for (const event of bullet.feedbackEvents) {
    const at = Date.parse(event.timestamp);
    if (Number.isFinite(at) && (newest === null || at > newest)) newest = at;
  }
  return newest;
}

export function computeRisk(playbook: Playbook, now: Date, config: ScoringConfig, cliName = "cm", limit = RISK_DEFAULT_LIMIT): DashboardRisk {
  if (!Number.isInteger(limit) || limit < 1 || limit > DASHBOARD_MAX_LIMIT) {
    throw new AppError("INVALID_INPUT", `limit must be an integer between 1 and ${DASHBOARD_MAX_LIMIT}.`, { details: { field: "limit", received: limit } });
  }
  const nowMs = now.getTime();
  const threshold = getHalfLifeDays(config);
  const atRisk: DashboardRisk["atRisk"] = [];
  const stale: DashboardRisk["stale"] = [];
  const expiring: DashboardRisk["expiring"] = [];
  for (const bullet of playbook.bullets) {
    if (!isActiveBullet(bullet)) continue;
    const score = getEffectiveScore(bullet, now, config);
    const summary = ruleSummary(bullet, now, config, score);
    if (score < 0) {
      atRisk.push({
        ...summary,
        reason: `Effective score ${summary.score} is below 0 (${summary.harmfulCount} harmful, ${summary.helpfulCount} helpful)`,
      });
    }
    if (isStale(bullet, threshold, now)) {
      const last = newestFeedbackMs(bullet) ?? Date.parse(bullet.createdAt);
      const days = Math.floor((nowMs - last) / DAY_MS);
      stale.push({ ...summary, daysSinceFeedback: days, recommendation: staleRecommendation(bullet, days, score, cliName, nowMs) });
    }
    if (bullet.validTo !== undefined) {
      const to = Date.parse(bullet.validTo);
      if (Number.isFinite(to) && to >= nowMs) {
        const expiresInDays = Math.floor((to - nowMs) / DAY_MS);
        if (expiresInDays <= EXPIRING_WITHIN_DAYS) expiring.push({ ...summary, validTo: bullet.validTo, expiresInDays });
      }
    }
  }
  atRisk.sort((a, b) => a.score - b.score || (a.id < b.id ? -1 : 1));
  stale.sort((a, b) => b.daysSinceFeedback - a.daysSinceFeedback || (a.id < b.id ? -1 : 1));
  expiring.sort((a, b) => Date.parse(a.validTo) - Date.parse(b.validTo) || (a.id < b.id ? -1 : 1));
  return {
    atRisk: atRisk.slice(0, limit),
    stale: stale.slice(0, limit),
    staleThresholdDays: threshold,
    expiring: expiring.slice(0, limit),
    expiringWithinDays: EXPIRING_WITHIN_DAYS,
    limit,
    totals: { atRisk: atRisk.length, stale: stale.length, expiring: expiring.length },
  };
}

// -------------------------------------------------------------------------------------- duplicates

/** Newest active rules scanned for near-duplicates and conflicts (both are quadratic in this). */
export const DUPLICATE_SCAN_MAX = 2000;
export const CONFLICT_SCAN_MAX = 1000;
export const DUPLICATE_MAX_PAIRS = 100;

export interface DashboardDuplicates {
  /** Near-duplicate active rules (token Jaccard ≥ 0.8, `cm stats` mergeCandidates), ≤ 100 pairs. */
  pairs: Array<{ a: RuleSummary; b: RuleSummary; similarity: number }>;
  /** Active rules that may contradict each other (the curator's conflict heuristics), ≤ 100 pairs. */
  conflicts: Array<{ a: RuleSummary; b: RuleSummary; reason: string }>;
  /** How many of the newest active rules were compared. */
  scanned: { duplicates: number; conflicts: number };
}

function createdMs(b: Bullet): number {
  const at = Date.parse(b.createdAt);
  return Number.isFinite(at) ? at : Number.NEGATIVE_INFINITY;
}

export function computeDuplicates(playbook: Playbook, now: Date, config: ScoringConfig): DashboardDuplicates {
  // Newest first, as `cm stats` does, so that the scan caps keep the rules most likely to be fresh duplicates.
  const newestFirst = playbook.bullets.filter(isActiveBullet).sort((a, b) => createdMs(b) - createdMs(a));
  const byId = new Map(newestFirst.map((b) => [b.id, b]));
  const summaries = new Map<string, RuleSummary>();
  const summaryOf = (id: string): RuleSummary => {
    let s = summaries.get(id);
    if (s === undefined) {
      s = ruleSummary(byId.get(id)!, now, config);
      summaries.set(id, s);
    }
    return s;
  };
  const pairs = findMergeCandidates(newestFirst, { maxPairs: DUPLICATE_MAX_PAIRS, maxScan: DUPLICATE_SCAN_MAX }).map((p) => ({
    a: summaryOf(p.a),
    b: summaryOf(p.b),
    similarity: p.similarity,
  }));
  const scannedForConflicts = newestFirst.slice(0, CONFLICT_SCAN_MAX);
  const index = buildConflictIndex(scannedForConflicts);
  const conflicts: DashboardDuplicates["conflicts"] = [];
  outer: for (let i = 0; i < scannedForConflicts.length; i++) {
    const left = scannedForConflicts[i]!;
    for (const found of detectConflictsIndexed(left.content, index.slice(i + 1))) {
      conflicts.push({ a: summaryOf(left.id), b: summaryOf(found.bulletId), reason: found.reason });
      if (conflicts.length >= DUPLICATE_MAX_PAIRS) break outer;
    }
  }
  return {
    pairs,
    conflicts,
    scanned: { duplicates: Math.min(newestFirst.length, DUPLICATE_SCAN_MAX), conflicts: scannedForConflicts.length },
  };
}

// -------------------------------------------------------------------------------------------- runs

export interface DashboardRun {
  runId: string;
  at: string;
  startedAt: string;
  mode: string;
  sessions: string[];
  /** Rules the run created. */
  added: string[];
  /** Rules the run changed otherwise (content, feedback, maturity, …). */
  updated: string[];
  /** Rules the run deprecated or deleted. */
  removed: string[];
  reverted: boolean;
  errors: string[];
}

/** Reflection runs (the global reflection-runs log), newest first, with what each did per the journal. */
export function computeRuns(records: readonly unknown[], journal: readonly JournalEvent[]): DashboardRun[] {
  const runs: ReflectionRun[] = [];
  const reverted = new Set<string>();
  for (const record of records) {
    const run = ReflectionRunSchema.safeParse(record);
    if (run.success) {
      runs.push(run.data);
      continue;
    }
    const revert = ReflectionRevertSchema.safeParse(record);
    if (revert.success) reverted.add(revert.data.runId);
  }
  const changes = new Map<string, { added: Set<string>; updated: Set<string>; removed: Set<string> }>();
  for (const event of journal) {
    if (event.runId === undefined) continue;
    let entry = changes.get(event.runId);
    if (entry === undefined) {
      entry = { added: new Set(), updated: new Set(), removed: new Set() };
      changes.set(event.runId, entry);
    }
    if (event.change === "created") entry.added.add(event.bulletId);
    else if (event.change === "deleted" || event.change === "deprecated") entry.removed.add(event.bulletId);
    else entry.updated.add(event.bulletId);
  }
  return runs
    .map((run) => {
      const c = changes.get(run.runId);
      const added = c ? [...c.added] : [];
      const removed = c ? [...c.removed].filter((id) => !c.added.has(id)) : [];
      const updated = c ? [...c.updated].filter((id) => !c.added.has(id) && !c.removed.has(id)) : [];
      return {
        runId: run.runId,
        at: run.finishedAt,
        startedAt: run.startedAt,
        mode: run.mode,
        sessions: run.sessions,
        added,
        updated,
        removed,
        reverted: reverted.has(run.runId),
        errors: run.errors,
      };
    })
    .sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

// ------------------------------------------------------------------------------------- context log

export interface DashboardContextEntry {
  at: string;
  task: string;
  workspace?: string;
  session?: string;
  returned: Array<{ id: string; content: string | null; antiPattern: boolean }>;
  /**
   * Feedback recorded on the returned rules after this request and before the next context request
   * (of any task), oldest first.
   */
  markedAfter: Array<{ id: string; type: "helpful" | "harmful"; at: string }>;
}

/** The context log (both layers), newest first, paginated; only the page's entries are joined with feedback. */
export function computeContextLog(records: readonly unknown[], playbook: Playbook, request: PageRequest = {}): Page<DashboardContextEntry> {
  const entries = records
    .map((r) => ContextLogEntrySchema.safeParse(r))
    .filter((r) => r.success)
    .map((r) => r.data)
    .map((e) => ({ entry: e, at: Date.parse(e.timestamp) }))
    .filter((e) => Number.isFinite(e.at))
    .sort((a, b) => b.at - a.at);
  const page = paginate(entries, request);
  const byId = new Map(playbook.bullets.map((b) => [b.id, b]));
  const items = page.items.map(({ entry, at }, i) => {
    const next = entries[page.offset + i - 1]?.at ?? Number.POSITIVE_INFINITY;
    const anti = new Set(entry.antiPatternIds);
    const ids = [...new Set([...entry.ruleIds, ...entry.antiPatternIds])];
    const markedAfter: DashboardContextEntry["markedAfter"] = [];
    for (const id of ids) {
      for (const event of byId.get(id)?.feedbackEvents ?? []) {
        const t = Date.parse(event.timestamp);
        if (t >= at && t < next) markedAfter.push({ id, type: event.type, at: event.timestamp });
      }
    }
    markedAfter.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
    return {
      at: entry.timestamp,
      task: entry.task,
      ...(entry.workspace !== undefined ? { workspace: entry.workspace } : {}),
      ...(entry.session !== undefined ? { session: entry.session } : {}),
      returned: ids.map((id) => ({ id, content: byId.get(id)?.content ?? null, antiPattern: anti.has(id) })),
      markedAfter,
    };
  });
  return { ...page, items };
}

// ------------------------------------------------------------------------------- store-reading API

function layersOf(deps: OperationDeps): Layer[] {
  return deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
}

async function readJournals(deps: OperationDeps): Promise<JournalEvent[]> {
  const parts = await Promise.all(layersOf(deps).map((layer) => deps.store.readJournal(layer)));
  return parts.flat();
}

/** The merged playbook (one read); the dashboard functions below take it so a host can read it once per request. */
export function loadDashboardPlaybook(deps: OperationDeps): Promise<Playbook> {
  return loadMergedPlaybook(deps);
}

export async function dashboardOverview(deps: OperationDeps, playbook?: Playbook): Promise<DashboardOverview> {
  return computeOverview(playbook ?? (await loadMergedPlaybook(deps)), deps.clock.now(), deps.config);
}

export async function dashboardRules(deps: OperationDeps, query: RuleQuery = {}, playbook?: Playbook): Promise<Page<RuleSummary>> {
  return computeRules(playbook ?? (await loadMergedPlaybook(deps)), deps.clock.now(), deps.config, query);
}

/** One rule of the merged playbook (deprecated ones included) with its score series, events and journal; BULLET_NOT_FOUND otherwise. */
export async function dashboardRule(deps: OperationDeps, id: string, playbook?: Playbook): Promise<RuleDetail> {
  const merged = playbook ?? (await loadMergedPlaybook(deps));
  const bullet = merged.bullets.find((b) => b.id === id);
  if (bullet === undefined) {
    throw new AppError("BULLET_NOT_FOUND", `Bullet ${id} not found`, { hint: `List the rules with: ${deps.cliName} playbook list --all`, details: { bulletId: id } });
  }
  return computeRuleDetail(bullet, await readJournals(deps), deps.clock.now(), deps.config);
}

export async function dashboardRisk(deps: OperationDeps, limit?: number, playbook?: Playbook): Promise<DashboardRisk> {
  return computeRisk(playbook ?? (await loadMergedPlaybook(deps)), deps.clock.now(), deps.config, deps.cliName, limit);
}

export async function dashboardDuplicates(deps: OperationDeps, playbook?: Playbook): Promise<DashboardDuplicates> {
  return computeDuplicates(playbook ?? (await loadMergedPlaybook(deps)), deps.clock.now(), deps.config);
}

export async function dashboardRuns(deps: OperationDeps, request: PageRequest = {}): Promise<Page<DashboardRun>> {
  const [{ records }, journal] = await Promise.all([deps.store.readLog("global", "reflection-runs"), readJournals(deps)]);
  return paginate(computeRuns(records, journal), request);
}

/** Every trauma (active and healed) of both registries, newest first. */
export async function dashboardTraumas(deps: OperationDeps, request: PageRequest = {}): Promise<Page<TraumaEntry>> {
  const all = await loadTraumas(deps);
  all.sort((a, b) => (a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0));
  return paginate(all, request);
}

export async function dashboardContextLog(deps: OperationDeps, request: PageRequest = {}, playbook?: Playbook): Promise<Page<DashboardContextEntry>> {
  const [logs, merged] = await Promise.all([
    Promise.all(layersOf(deps).map((layer) => deps.store.readLog(layer, "context-log"))),
    playbook !== undefined ? Promise.resolve(playbook) : loadMergedPlaybook(deps),
  ]);
  return computeContextLog(logs.flatMap((l) => l.records), merged, request);
}
