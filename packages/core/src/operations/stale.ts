import * as z from "zod";
import { DAY_MS, getEffectiveScore } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import { isActiveBullet, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook, requirePositiveInt } from "./shared.js";
import { SCOPE_FILTERS, filterByScope, parseScopeFilter, round2 } from "./top.js";
import { lazySchema } from "../schemas/lazy.js";

export const STALE_DEFAULT_DAYS = 90;

export const StaleInputSchema = lazySchema(() => z.object({
  /** Staleness threshold in whole days (default 90, ≥ 0; 0 lists every active rule). */
  days: z.number().optional(),
  scope: z.string().optional(),
  /** Also list active rules whose `validTo` falls within the next N days (≥ 0). */
  expiring: z.number().optional(),
}));
export type StaleInput = z.input<typeof StaleInputSchema>;

const LastFeedbackSchema = lazySchema(() => z.object({
  action: z.enum(["helpful", "harmful"]).nullable(),
  timestamp: z.string().nullable(),
}));

export const StaleBulletSchema = lazySchema(() => z.object({
  id: z.string(),
  daysSinceLastFeedback: z.number(),
  content: z.string(),
  category: z.string(),
  scope: z.string(),
  score: z.number(),
  maturity: z.string(),
  lastFeedback: LastFeedbackSchema,
  recommendation: z.string(),
}));

export const ExpiringBulletSchema = lazySchema(() => z.object({
  id: z.string(),
  content: z.string(),
  category: z.string(),
  scope: z.string(),
  maturity: z.string(),
  score: z.number(),
  validFrom: z.string().nullable(),
  validTo: z.string(),
  /** Whole days left before `validTo` (0: expires within 24 hours). */
  expiresInDays: z.number(),
}));

export const StaleResultSchema = lazySchema(() => z.object({
  threshold: z.number(),
  count: z.number(),
  totalActive: z.number(),
  filters: z.object({ scope: z.enum(SCOPE_FILTERS) }),
  bullets: z.array(StaleBulletSchema),
  /** Only with `expiring`: active rules (same scope filter) expiring within `withinDays`, soonest first. */
  expiring: z
    .object({ withinDays: z.number(), count: z.number(), bullets: z.array(ExpiringBulletSchema) })
    .optional(),
}));
export type StaleResult = z.output<typeof StaleResultSchema>;
export type StaleBullet = z.output<typeof StaleBulletSchema>;
export type ExpiringBullet = z.output<typeof ExpiringBulletSchema>;

interface Staleness {
  days: number;
  action: "helpful" | "harmful" | null;
  timestamp: string | null;
}

/** Whole days since the newest feedback event, or since creation when there is none. */
function staleness(bullet: Bullet, nowMs: number): Staleness {
  let newest: { at: number; action: "helpful" | "harmful"; timestamp: string } | null = null;
  for (const event of bullet.feedbackEvents) {
    const at = Date.parse(event.timestamp);
    if (!Number.isFinite(at)) continue;
    if (newest === null || at > newest.at) newest = { at, action: event.type, timestamp: event.timestamp };
  }
  if (newest !== null) return { days: Math.floor((nowMs - newest.at) / DAY_MS), action: newest.action, timestamp: newest.timestamp };
  const created = Date.parse(bullet.createdAt);
  return { days: Number.isFinite(created) ? Math.floor((nowMs - created) / DAY_MS) : Number.NaN, action: null, timestamp: null };
}

/**
 * What to do about a stale rule. The original's rules, in order, preceded by one for rules whose
 * `validTo` has passed (a field the original does not have).
 */
export function staleRecommendation(
  bullet: Pick<Bullet, "id" | "maturity" | "validTo">,
  days: number,
  score: number,
  cli: string,
  nowMs: number,
): string {
  const id = bullet.id;
  if (bullet.validTo !== undefined) {
    const to = Date.parse(bullet.validTo);
    if (Number.isFinite(to) && to < nowMs) {
      return `Expired on ${bullet.validTo.slice(0, 10)} - remove it or extend validTo (${cli} playbook remove ${id} --reason "expired")`;
    }
  }
  if (score < -2) return `Consider: ${cli} forget ${id} --reason "<why>" (negative score suggests harm)`;
  if (days > 180 && bullet.maturity === "candidate") {
    return `Very stale candidate - consider deprecating if no longer relevant (${cli} playbook remove ${id} --reason "<why>")`;
  }
  if (days > 120 && score < 1) return `Stale with low score - review for relevance (${cli} playbook get ${id})`;
  if (score > 5) return "Good score despite being stale - may still be valid, review periodically";
  return `Review for current relevance (${cli} playbook get ${id})`;
}

/**
 * `cm stale`: active rules without feedback for `days` or more (reference §1.5.8, §5.16), most
 * stale first. With `expiring`, also the active rules whose `validTo` lies between now and
 * `expiring` days ahead. Rules already past `validTo` stay in the stale listing (with an
 * "Expired on …" recommendation) because they need cleaning up.
 */
export const staleOperation = defineOperation({
  name: "stale",
  command: "stale",
  description: "Find playbook rules without recent feedback, and rules about to expire.",
  input: StaleInputSchema,
  output: StaleResultSchema,
  async run(deps, input): Promise<StaleResult> {
    const cli = deps.cliName;
    const threshold = requirePositiveInt("days", input.days, STALE_DEFAULT_DAYS, 0, `Example: ${cli} stale --days 90 --json`);
    const scope = parseScopeFilter(input.scope);
    const expiringDays =
      input.expiring === undefined
        ? undefined
        : requirePositiveInt("expiring", input.expiring, 0, 0, `Example: ${cli} stale --expiring 30 --json`);

    const now = deps.clock.now();
    const nowMs = now.getTime();
    const playbook = await loadMergedPlaybook(deps);
    const active = filterByScope(playbook.bullets.filter(isActiveBullet), scope);

    const stale: StaleBullet[] = [];
    for (const bullet of active) {
      const s = staleness(bullet, nowMs);
      if (!(s.days >= threshold)) continue;
      const score = getEffectiveScore(bullet, now, deps.config);
      const maturity = bullet.maturity || "candidate";
      stale.push({
        id: bullet.id,
        daysSinceLastFeedback: s.days,
        content: bullet.content,
        category: bullet.category || "uncategorized",
        scope: bullet.scope || "global",
        score: round2(score),
        maturity,
        lastFeedback: { action: s.action, timestamp: s.timestamp },
        recommendation: staleRecommendation({ ...bullet, maturity }, s.days, score, cli, nowMs),
      });
    }
    stale.sort((a, b) => b.daysSinceLastFeedback - a.daysSinceLastFeedback);

    const result: StaleResult = {
      threshold,
      count: stale.length,
      totalActive: active.length,
      filters: { scope },
      bullets: stale,
    };
    if (expiringDays !== undefined) {
      const expiring = expiringBullets(active, expiringDays, now, deps.config);
      result.expiring = { withinDays: expiringDays, count: expiring.length, bullets: expiring };
    }
    return result;
  },
});

/** Active rules whose `validTo` is now or later and at most `withinDays` whole days away, soonest first. */
function expiringBullets(bullets: readonly Bullet[], withinDays: number, now: Date, config: Parameters<typeof getEffectiveScore>[2]): ExpiringBullet[] {
  const nowMs = now.getTime();
  const out: Array<ExpiringBullet & { at: number }> = [];
  for (const bullet of bullets) {
    if (bullet.validTo === undefined) continue;
    const at = Date.parse(bullet.validTo);
    if (!Number.isFinite(at) || at < nowMs) continue;
    const expiresInDays = Math.floor((at - nowMs) / DAY_MS);
    if (expiresInDays > withinDays) continue;
    out.push({
      at,
      id: bullet.id,
      content: bullet.content,
      category: bullet.category || "uncategorized",
      scope: bullet.scope || "global",
      maturity: bullet.maturity || "candidate",
      score: round2(getEffectiveScore(bullet, now, config)),
      validFrom: bullet.validFrom ?? null,
      validTo: bullet.validTo,
      expiresInDays,
    });
  }
  out.sort((a, b) => a.at - b.at);
  return out.map(({ at: _at, ...rest }) => rest);
}
