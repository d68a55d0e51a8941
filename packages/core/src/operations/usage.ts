import * as z from "zod";
import { defineOperation } from "../operation.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm usage` (reference §1.5.11, §4.9, §5.15): LLM spending today, this month and in total, from
 * the cost ledger, against the budget limits of the configuration.
 *
 * Budget semantics (ours, stated so callers agree): a limit of 0 blocks every LLM call; a negative
 * limit means "no limit"; a positive limit blocks calls once the spending reaches it.
 */

/** True when a limit stops further LLM calls given what was spent in its period. */
export function budgetBlocks(spent: number, limit: number): boolean {
  if (!Number.isFinite(limit) || limit < 0) return false;
  if (limit === 0) return true;
  return spent >= limit;
}

/** "none" (negative limit), "blocked" (limit 0 or reached) or "ok". */
export function budgetLimitState(spent: number, limit: number): "none" | "blocked" | "ok" {
  if (!Number.isFinite(limit) || limit < 0) return "none";
  return budgetBlocks(spent, limit) ? "blocked" : "ok";
}

export const UsageInputSchema = lazySchema(() => z.object({}));

export const UsageResultSchema = lazySchema(() => z.object({
  /** USD spent today (local date). */
  today: z.number(),
  /** USD spent this month (UTC month). */
  month: z.number(),
  /** USD spent in total. */
  total: z.number(),
  dailyLimit: z.number(),
  monthlyLimit: z.number(),
  /** Whether each limit currently blocks LLM calls (beyond the original). */
  blocked: z.object({ daily: z.boolean(), monthly: z.boolean() }).optional(),
}));
export type UsageResult = z.output<typeof UsageResultSchema>;

export const usageOperation = defineOperation({
  name: "cm_usage",
  command: "usage",
  description: "Show LLM spending (today, this month, all time) against the configured budget limits.",
  input: UsageInputSchema,
  output: UsageResultSchema,
  async run(deps): Promise<UsageResult> {
    const totals = await deps.store.costs.totals();
    const dailyLimit = deps.config.budget.dailyLimit;
    const monthlyLimit = deps.config.budget.monthlyLimit;
    const today = totals.currentDay.cost;
    const month = totals.currentMonth.cost;
    return {
      today,
      month,
      total: totals.allTime,
      dailyLimit,
      monthlyLimit,
      blocked: { daily: budgetBlocks(today, dailyLimit), monthly: budgetBlocks(month, monthlyLimit) },
    };
  },
});
