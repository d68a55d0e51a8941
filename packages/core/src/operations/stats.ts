import * as z from "zod";
import { compileSanitizer } from "../domain/sanitize.js";
import { semanticMergeCandidatesFor } from "../domain/semantic.js";
import { findMergeCandidates } from "../domain/similarity.js";
import { getEffectiveScore, getHalfLifeDays, isStale, scoreBucket } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import { isActiveBullet, isOutsideValidity, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const StatsInputSchema = lazySchema(() => z.object({}));

const PairSchema = lazySchema(() => z.object({ a: z.string(), b: z.string(), similarity: z.number() }));

export const StatsResultSchema = lazySchema(() => z.object({
  /** Every bullet of the merged playbook, deprecated and blocked ones included. */
  total: z.number(),
  byScope: z.record(z.string(), z.number()),
  byState: z.record(z.string(), z.number()),
  byKind: z.record(z.string(), z.number()),
  /** Active bullets by effective score: ≥10 excellent, ≥5 good, ≥0 neutral, <0 atRisk. */
  scoreDistribution: z.object({ excellent: z.number(), good: z.number(), neutral: z.number(), atRisk: z.number() }),
  /** ≤5 active bullets in force (inside their validity window), by effective score. */
  topPerformers: z.array(z.object({ id: z.string(), content: z.string(), score: z.number(), helpfulCount: z.number() })),
  /** ≤5 active bullets in force, by helpfulCount. */
  mostHelpful: z.array(z.object({ id: z.string(), content: z.string(), helpfulCount: z.number() })),
  atRiskCount: z.number(),
  staleCount: z.number(),
  /** The staleness threshold used for staleCount (the decay half-life, 90 by default). */
  staleThresholdDays: z.number(),
  /** Active bullets whose validTo has passed. */
  expiredCount: z.number(),
  /** Active bullets whose validFrom is still ahead. */
  notYetValidCount: z.number(),
  mergeCandidates: z.array(PairSchema),
  /** Pairs with embedding cosine ≥ 0.85 (≤ 5); empty unless semantic search is enabled and available. */
  semanticMergeCandidates: z.array(PairSchema),
}));
export type StatsResult = z.output<typeof StatsResultSchema>;

/** Bullets counted by a string field (missing or empty values count as "unknown"). */
export function countBy(bullets: readonly Bullet[], key: (b: Bullet) => unknown): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const bullet of bullets) {
    const raw = key(bullet);
    const name = typeof raw === "string" && raw !== "" ? raw : "unknown";
    counts[name] = (counts[name] ?? 0) + 1;
  }
  return counts;
}

function createdMs(b: Bullet): number {
  const at = Date.parse(b.createdAt);
  return Number.isFinite(at) ? at : Number.NEGATIVE_INFINITY;
}

/**
 * `cm stats`: playbook health (reference §1.5.6). `total` and the by-* counts cover every bullet;
 * the health metrics cover active bullets. Rules outside their validity window still count in the
 * score distribution, at-risk, stale and merge metrics (they still need curating), and are
 * reported by `expiredCount` / `notYetValidCount`; they are left out of `topPerformers` and
 * `mostHelpful`, which list rules in force (like `cm top`).
 */
export const statsOperation = defineOperation({
  name: "stats",
  command: "stats",
  description: "Playbook health: counts, score distribution, top rules, at-risk, stale and near-duplicate rules.",
  input: StatsInputSchema,
  output: StatsResultSchema,
  async run(deps): Promise<StatsResult> {
    const now = deps.clock.now();
    const nowMs = now.getTime();
    const playbook = await loadMergedPlaybook(deps);
    const all = playbook.bullets;
    const active = all.filter(isActiveBullet);
    const scored = active.map((bullet) => ({ bullet, score: getEffectiveScore(bullet, now, deps.config) }));

    const scoreDistribution = { excellent: 0, good: 0, neutral: 0, atRisk: 0 };
    for (const { score } of scored) if (Number.isFinite(score)) scoreDistribution[scoreBucket(score)]++;

    const inForce = scored.filter(({ bullet }) => !isOutsideValidity(bullet, now));
    const topPerformers = inForce
      .filter(({ score }) => Number.isFinite(score))
      .sort((a, b) => b.score - a.score)
      .slice(0, 5)
      .map(({ bullet, score }) => ({ id: bullet.id, content: bullet.content, score, helpfulCount: bullet.helpfulCount || 0 }));
    const mostHelpful = inForce
      .map(({ bullet }) => bullet)
      .sort((a, b) => (b.helpfulCount || 0) - (a.helpfulCount || 0))
      .slice(0, 5)
      .map((b) => ({ id: b.id, content: b.content, helpfulCount: b.helpfulCount || 0 }));

    const staleThresholdDays = getHalfLifeDays(deps.config);
    let expiredCount = 0;
    let notYetValidCount = 0;
    for (const b of active) {
      const to = b.validTo !== undefined ? Date.parse(b.validTo) : Number.NaN;
      const from = b.validFrom !== undefined ? Date.parse(b.validFrom) : Number.NaN;
      if (Number.isFinite(to) && nowMs > to) expiredCount++;
      else if (Number.isFinite(from) && nowMs < from) notYetValidCount++;
    }

    // Newest first, so that the scan cap keeps the rules most likely to be fresh duplicates.
    const newestFirst = [...active].sort((a, b) => createdMs(b) - createdMs(a));
    const semanticMergeCandidates = await semanticMergeCandidatesFor(deps, newestFirst, compileSanitizer(deps.config.sanitization).sanitize);

    return {
      total: all.length,
      byScope: countBy(all, (b) => b.scope),
      byState: countBy(all, (b) => b.state),
      byKind: countBy(all, (b) => b.kind),
      scoreDistribution,
      topPerformers,
      mostHelpful,
      atRiskCount: scored.filter(({ score }) => score < 0).length,
      staleCount: active.filter((b) => isStale(b, staleThresholdDays, now)).length,
      staleThresholdDays,
      expiredCount,
      notYetValidCount,
      mergeCandidates: findMergeCandidates(newestFirst),
      semanticMergeCandidates,
    };
  },
});
