import { AppError, type Clock, type CostEntry, type CostLedger, type Logger } from "@cass-memory/core";
import { costOf } from "./pricing.js";
import type { LlmBudget, LlmSettings } from "./settings.js";

/**
 * Spending limits (reference §5.15), checked before every model call. Unlike the original, a limit
 * of 0 blocks every call (a "$0 budget" means no spending); a negative limit means no limit.
 */

const BUDGET_HINT =
  'Raise "budget.dailyLimit" / "budget.monthlyLimit" in config.json (a negative value means no limit), ' +
  "wait for the next day or month, or run without an LLM: CASS_MEMORY_LLM=none.";

function usd(amount: number): string {
  return `$${amount.toFixed(2)}`;
}

function isLimited(limit: number): boolean {
  return Number.isFinite(limit) && limit >= 0;
}

/**
 * Throws LLM_BUDGET_EXCEEDED when today's or this month's spending has reached its limit.
 * The ledger's totals are read fresh for every check.
 */
export async function assertWithinBudget(ledger: CostLedger, budget: LlmBudget): Promise<void> {
  if (!isLimited(budget.dailyLimit) && !isLimited(budget.monthlyLimit)) return;
  const totals = await ledger.totals();
  const checks: Array<{ period: "daily" | "monthly"; label: string; spent: number; limit: number }> = [
    { period: "daily", label: "Daily", spent: totals.currentDay.cost, limit: budget.dailyLimit },
    { period: "monthly", label: "Monthly", spent: totals.currentMonth.cost, limit: budget.monthlyLimit },
  ];
  for (const { period, label, spent, limit } of checks) {
    if (!isLimited(limit) || spent < limit) continue;
    throw new AppError("LLM_BUDGET_EXCEEDED", `LLM budget exceeded: ${label} budget exceeded (${usd(spent)} / ${usd(limit)})`, {
      hint: BUDGET_HINT,
      details: { period, spent, limit },
      retryable: false,
    });
  }
}

/** Token counts a call reported (undefined when the provider reported none). */
export interface TokenUsage {
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
}

/**
 * Records one call's cost in the ledger when the provider reported usage. A failure to write the
 * ledger is logged, never thrown: the model's answer is already paid for and should be used.
 */
export async function recordUsage(options: {
  ledger: CostLedger;
  settings: Pick<LlmSettings, "provider" | "model" | "local">;
  usage: TokenUsage | undefined;
  clock: Clock;
  logger: Logger;
}): Promise<CostEntry | undefined> {
  const { usage, settings } = options;
  if (usage === undefined) return undefined;
  const reported = [usage.inputTokens, usage.outputTokens].some((n) => typeof n === "number" && Number.isFinite(n));
  if (!reported) return undefined;
  const tokensIn = typeof usage.inputTokens === "number" && Number.isFinite(usage.inputTokens) ? usage.inputTokens : 0;
  const tokensOut = typeof usage.outputTokens === "number" && Number.isFinite(usage.outputTokens) ? usage.outputTokens : 0;
  const entry: CostEntry = {
    provider: settings.provider,
    model: settings.model,
    tokensIn,
    tokensOut,
    cost: costOf({ model: settings.model, local: settings.local, tokensIn, tokensOut }),
    timestamp: options.clock.now().toISOString(),
  };
  try {
    await options.ledger.record(entry);
  } catch (error) {
    options.logger.warn(`Could not record LLM cost: ${error instanceof Error ? error.message : String(error)}`);
  }
  return entry;
}
