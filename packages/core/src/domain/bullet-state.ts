import type { Bullet } from "../schemas/playbook.js";

// Predicates over bullets, kept apart from the zod schemas (re-exported by schemas/playbook.ts) so
// that the ranking and curator subpaths can use them without loading zod.

export const HARMFUL_REASONS = [
  "caused_bug",
  "wasted_time",
  "contradicted_requirements",
  "wrong_context",
  "outdated",
  "other",
] as const;

/** A bullet is active unless it is retired or deprecated (drafts are active, as in the original). */
export function isActiveBullet(b: Pick<Bullet, "state" | "maturity" | "deprecated">): boolean {
  return b.state !== "retired" && b.maturity !== "deprecated" && !b.deprecated;
}

/** Anti-patterns: negative rules or bullets of kind anti_pattern. */
export function isAntiPattern(b: Pick<Bullet, "isNegative" | "kind">): boolean {
  return b.isNegative || b.kind === "anti_pattern";
}

/** True when `now` lies outside the bullet's optional validFrom/validTo window. */
export function isOutsideValidity(b: Pick<Bullet, "validFrom" | "validTo">, now: Date): boolean {
  const t = now.getTime();
  if (b.validTo !== undefined) {
    const to = Date.parse(b.validTo);
    if (Number.isFinite(to) && t > to) return true;
  }
  if (b.validFrom !== undefined) {
    const from = Date.parse(b.validFrom);
    if (Number.isFinite(from) && t < from) return true;
  }
  return false;
}
