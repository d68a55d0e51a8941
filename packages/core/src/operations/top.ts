import * as z from "zod";
import { AppError } from "../errors.js";
import { formatLastHelpful, getEffectiveScore } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import { isActiveBullet, isOutsideValidity, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/** Values of the `--scope` filter of `top`, `stale` and `similar`. */
export const SCOPE_FILTERS = ["global", "workspace", "all"] as const;
export type ScopeFilter = (typeof SCOPE_FILTERS)[number];

/**
 * The `--scope` filter with the original's one-of check (case-insensitive, trimmed; absent → all):
 * INVALID_INPUT "scope must be one of: global, workspace, all." otherwise.
 */
export function parseScopeFilter(raw: string | undefined): ScopeFilter {
  if (raw === undefined) return "all";
  const value = raw.trim().toLowerCase();
  const match = SCOPE_FILTERS.find((s) => s === value);
  if (match === undefined) {
    throw new AppError("INVALID_INPUT", `scope must be one of: ${SCOPE_FILTERS.join(", ")}.`, {
      hint: `Valid scopes: ${SCOPE_FILTERS.join(", ")}`,
      details: { field: "scope", received: raw, allowed: [...SCOPE_FILTERS] },
    });
  }
  return match;
}

/** Bullets whose `scope` equals the filter (all of them for `all`). */
export function filterByScope<B extends Pick<Bullet, "scope">>(bullets: readonly B[], scope: ScopeFilter): B[] {
  return scope === "all" ? [...bullets] : bullets.filter((b) => b.scope === scope);
}

/** The original's integer check (reference §1.4.5) with a usage hint: "<name> must be an integer." / "… >= <min>." */
/** Two decimals, as the original rounds scores in its JSON (`Number(x.toFixed(2))`). */
export function round2(n: number): number {
  return Number(n.toFixed(2));
}

export const TopInputSchema = lazySchema(() => z.object({
  /** How many bullets (default 10, ≥ 1). */
  count: z.number().optional(),
  scope: z.string().optional(),
  /** Case-insensitive exact category. */
  category: z.string().optional(),
}));
export type TopInput = z.input<typeof TopInputSchema>;

export const TopResultSchema = lazySchema(() => z.object({
  count: z.number(),
  filters: z.object({ scope: z.enum(SCOPE_FILTERS), category: z.string().nullable() }),
  bullets: z.array(
    z.object({
      rank: z.number(),
      id: z.string(),
      score: z.number(),
      content: z.string(),
      category: z.string(),
      scope: z.string(),
      maturity: z.string(),
      feedback: z.object({ helpful: z.number(), harmful: z.number() }),
      lastUsed: z.string(),
    }),
  ),
}));
export type TopResult = z.output<typeof TopResultSchema>;

/**
 * `cm top [count]`: the active rules with the highest effective score (reference §1.5.7). Rules
 * outside their validFrom/validTo window are left out: they are not in force, so they are not
 * "top" rules, whatever their past score.
 */
export const topOperation = defineOperation({
  name: "top",
  command: "top",
  description: "Show the most effective playbook rules (by decayed effective score).",
  input: TopInputSchema,
  output: TopResultSchema,
  async run(deps, input): Promise<TopResult> {
    const usage = `Usage: ${deps.cliName} top [count] [--scope global|workspace|all] [--category <name>] [--json]`;
    const count = requirePositiveInt("count", input.count, 10, 1, usage);
    const scope = parseScopeFilter(input.scope);
    let category: string | null = null;
    if (input.category !== undefined) {
      category = input.category.trim();
      if (category === "") {
        throw new AppError("INVALID_INPUT", "category must be a non-empty string.", {
          hint: `Example: ${deps.cliName} top 10 --category security --json`,
          details: { field: "category", received: input.category },
        });
      }
    }

    const now = deps.clock.now();
    const playbook = await loadMergedPlaybook(deps);
    const wanted = category?.toLowerCase() ?? null;
    const candidates = filterByScope(
      playbook.bullets.filter((b) => isActiveBullet(b) && !isOutsideValidity(b, now)),
      scope,
    ).filter((b) => wanted === null || b.category.toLowerCase() === wanted);

    const ranked = candidates
      .map((bullet) => ({ bullet, score: getEffectiveScore(bullet, now, deps.config) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, count);

    return {
      count: ranked.length,
      filters: { scope, category },
      bullets: ranked.map(({ bullet, score }, i) => ({
        rank: i + 1,
        id: bullet.id,
        score: round2(score),
        content: bullet.content,
        category: bullet.category || "uncategorized",
        scope: bullet.scope || "global",
        maturity: bullet.maturity || "candidate",
        feedback: { helpful: bullet.helpfulCount || 0, harmful: bullet.harmfulCount || 0 },
        lastUsed: formatLastHelpful(bullet, now),
      })),
    };
  },
});
