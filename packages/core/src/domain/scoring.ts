import type { Config } from "../schemas/config.js";
import type { Bullet, FeedbackEvent, Maturity } from "../schemas/playbook.js";

/**
 * Confidence decay, effective score and maturity transitions (reference §5.2, §5.3, §5.16).
 * Every function takes `now` explicitly; nothing here reads a clock.
 */

export const DAY_MS = 86_400_000;

/** Tolerance used by the maturity thresholds so that decayed sums like 2.9999 still count as 3. */
const EPSILON = 0.01;

export type ScoreBucket = "excellent" | "good" | "neutral" | "atRisk";

/** Effective-score multiplier per maturity. */
export const MATURITY_MULTIPLIER: Readonly<Record<Maturity, number>> = {
  candidate: 0.5,
  established: 1.0,
  proven: 1.5,
  deprecated: 0,
};

type ScoringConfigLike = Pick<Config, "scoring" | "defaultDecayHalfLife" | "pruneHarmfulThreshold">;

/**
 * Half-life of feedback in days: `scoring.decayHalfLifeDays` when positive, else the legacy
 * `defaultDecayHalfLife` when positive, else 90. (A bullet's own `confidenceDecayHalfLifeDays` is
 * not consulted, as in the original.)
 */
export function getHalfLifeDays(config: Pick<Config, "scoring" | "defaultDecayHalfLife">): number {
  const fromScoring = config.scoring?.decayHalfLifeDays;
  if (typeof fromScoring === "number" && Number.isFinite(fromScoring) && fromScoring > 0) return fromScoring;
  const legacy = config.defaultDecayHalfLife;
  if (typeof legacy === "number" && Number.isFinite(legacy) && legacy > 0) return legacy;
  return 90;
}

/** `scoring.harmfulMultiplier` when positive, else 4. */
export function getHarmfulMultiplier(config: Pick<Config, "scoring">): number {
  const value = config.scoring?.harmfulMultiplier;
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 4;
}

/**
 * Decayed value of one feedback event: `0.5 ^ (max(0, ageDays) / halfLife) × weight`, where the
 * weight is the event's `decayedValue` (clamped at ≥ 0) when it is a finite number, else 1. Events
 * dated in the future count in full; an unparseable timestamp or a non-positive half-life gives 0.
 */
export function eventWeight(
  event: Pick<FeedbackEvent, "timestamp" | "decayedValue">,
  now: Date,
  halfLifeDays: number,
): number {
  if (!(halfLifeDays > 0)) return 0;
  const at = Date.parse(event.timestamp);
  const nowMs = now.getTime();
  if (!Number.isFinite(at) || !Number.isFinite(nowMs)) return 0;
  const ageDays = Math.max(0, (nowMs - at) / DAY_MS);
  const decay = Math.pow(0.5, ageDays / halfLifeDays);
  const dv = event.decayedValue;
  const weight = typeof dv === "number" && Number.isFinite(dv) ? Math.max(0, dv) : 1;
  return decay * weight;
}

/** Sums of the decayed values of the helpful and of the harmful events (the counters are not used). */
export function getDecayedCounts(
  bullet: Pick<Bullet, "feedbackEvents">,
  now: Date,
  config: Pick<Config, "scoring" | "defaultDecayHalfLife">,
): { decayedHelpful: number; decayedHarmful: number } {
  const halfLife = getHalfLifeDays(config);
  let decayedHelpful = 0;
  let decayedHarmful = 0;
  for (const event of bullet.feedbackEvents ?? []) {
    const value = eventWeight(event, now, halfLife);
    if (!Number.isFinite(value)) continue;
    if (event.type === "helpful") decayedHelpful += value;
    else if (event.type === "harmful") decayedHarmful += value;
  }
  return { decayedHelpful, decayedHarmful };
}

/** `(decayedHelpful − harmfulMultiplier × decayedHarmful) × maturityMultiplier`; no floor. */
export function getEffectiveScore(
  bullet: Pick<Bullet, "feedbackEvents" | "maturity">,
  now: Date,
  config: Pick<Config, "scoring" | "defaultDecayHalfLife">,
): number {
  const { decayedHelpful, decayedHarmful } = getDecayedCounts(bullet, now, config);
  const raw = decayedHelpful - getHarmfulMultiplier(config) * decayedHarmful;
  const multiplier = MATURITY_MULTIPLIER[bullet.maturity] ?? 1;
  return raw * multiplier;
}

type MaturityInput = Pick<Bullet, "feedbackEvents" | "maturity" | "deprecated" | "pinned">;

/** The maturity the feedback supports (reference §5.3). Deprecated stays deprecated; pinned is unchanged. */
export function calculateMaturityState(bullet: MaturityInput, now: Date, config: ScoringConfigLike): Maturity {
  if (bullet.maturity === "deprecated" || bullet.deprecated) return "deprecated";
  if (bullet.pinned) return bullet.maturity;

  const scoring = config.scoring;
  const minFeedback = scoring?.minFeedbackForActive ?? 3;
  const minHelpfulForProven = scoring?.minHelpfulForProven ?? 10;
  const maxHarmfulRatioForProven = scoring?.maxHarmfulRatioForProven ?? 0.1;

  const { decayedHelpful, decayedHarmful } = getDecayedCounts(bullet, now, config);
  let total = decayedHelpful + decayedHarmful;
  if (total <= EPSILON) total = 0;
  const harmfulRatio = total > 0 ? decayedHarmful / total : 0;

  if (harmfulRatio > 0.3 && total >= minFeedback - EPSILON) return "deprecated";
  if (total < minFeedback - EPSILON) return "candidate";
  if (decayedHelpful >= minHelpfulForProven - EPSILON && harmfulRatio < maxHarmfulRatioForProven) return "proven";
  return "established";
}

/** Curation promotion: only ever moves up (candidate → established/proven, established → proven). */
export function checkForPromotion(bullet: MaturityInput, now: Date, config: ScoringConfigLike): Maturity {
  const current = bullet.maturity;
  if (current === "proven" || current === "deprecated") return current;
  const next = calculateMaturityState(bullet, now, config);
  const promoted =
    (current === "candidate" && (next === "established" || next === "proven")) ||
    (current === "established" && next === "proven");
  return promoted ? next : current;
}

/**
 * Curation demotion (pinned bullets are exempt): an effective score below −pruneHarmfulThreshold
 * means auto-deprecation; any negative score moves proven → established and established → candidate.
 */
export function checkForDemotion(
  bullet: MaturityInput,
  now: Date,
  config: ScoringConfigLike,
): Maturity | "auto-deprecate" {
  if (bullet.pinned) return bullet.maturity;
  const score = getEffectiveScore(bullet, now, config);
  const threshold = config.pruneHarmfulThreshold ?? 3;
  if (score < -threshold) return "auto-deprecate";
  if (score < 0) {
    if (bullet.maturity === "proven") return "established";
    if (bullet.maturity === "established") return "candidate";
  }
  return bullet.maturity;
}

/** Score distribution bucket used by stats: ≥10 excellent, ≥5 good, ≥0 neutral, else atRisk. */
export function scoreBucket(score: number): ScoreBucket {
  if (score >= 10) return "excellent";
  if (score >= 5) return "good";
  if (score >= 0) return "neutral";
  return "atRisk";
}

/** Newest parseable feedback timestamp in ms, or null. */
function newestFeedbackMs(bullet: Pick<Bullet, "feedbackEvents">, type?: "helpful" | "harmful"): number | null {
  let newest: number | null = null;
  for (const event of bullet.feedbackEvents ?? []) {
    if (type !== undefined && event.type !== type) continue;
    const at = Date.parse(event.timestamp);
    if (Number.isFinite(at) && (newest === null || at > newest)) newest = at;
  }
  return newest;
}

/**
 * True when more than `days` days have passed since the newest feedback event (or, without
 * feedback, since creation). Unparseable dates are ignored; a bullet with no usable date is not stale.
 */
export function isStale(bullet: Pick<Bullet, "feedbackEvents" | "createdAt">, days: number, now: Date): boolean {
  const last = newestFeedbackMs(bullet) ?? Date.parse(bullet.createdAt);
  if (!Number.isFinite(last)) return false;
  return now.getTime() - last > days * DAY_MS;
}

function plural(n: number, unit: string): string {
  return n === 1 ? `1 ${unit} ago` : `${n} ${unit}s ago`;
}

/**
 * How long ago the newest helpful event was: "just now", "N minute(s) ago", … "N year(s) ago",
 * or "Never" (reference §5.12 item 9). Months are 30 days, years 365 days, always rounded down.
 */
export function formatLastHelpful(bullet: Pick<Bullet, "feedbackEvents">, now: Date): string {
  const newest = newestFeedbackMs(bullet, "helpful");
  if (newest === null) return "Never";
  const seconds = Math.floor((now.getTime() - newest) / 1000);
  const minutes = Math.floor(seconds / 60);
  const hours = Math.floor(minutes / 60);
  const days = Math.floor(hours / 24);
  const weeks = Math.floor(days / 7);
  const months = Math.floor(days / 30);
  const years = Math.floor(days / 365);
  if (seconds < 60) return "just now";
  if (minutes < 60) return plural(minutes, "minute");
  if (hours < 24) return plural(hours, "hour");
  if (days < 7) return plural(days, "day");
  if (weeks < 4) return plural(weeks, "week");
  if (months < 12) return plural(months, "month");
  // 360–364 days are 12 "months" but 0 years; the original printed "0 years ago" there.
  return plural(Math.max(1, years), "year");
}
