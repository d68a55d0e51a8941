import type { CostEntry, CostTotals } from "../ports.js";

/**
 * The cost ledger's bookkeeping (reference §4.9), shared by every store: `total.json` holds running
 * totals whose day bucket is keyed by the local date and whose month bucket by the UTC month.
 */

export const COST_DIR = "cost";
export const COST_TOTAL_FILE = "total.json";

/** `YYYY-MM-DD` of the local date. */
export function localDayKey(date: Date): string {
  const pad = (n: number): string => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** `YYYY-MM` of the UTC date. */
export function utcMonthKey(date: Date): string {
  return date.toISOString().slice(0, 7);
}

/** `cost/monthly-<YYYY-MM>.jsonl` for an entry recorded at `date`. */
export function monthlyCostFile(date: Date): string {
  return `monthly-${utcMonthKey(date)}.jsonl`;
}

export function emptyCostTotals(now: Date): CostTotals {
  return {
    allTime: 0,
    lastUpdated: now.toISOString(),
    currentMonth: { month: utcMonthKey(now), cost: 0 },
    currentDay: { day: localDayKey(now), cost: 0 },
  };
}

const finite = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);

/**
 * Totals as of `now` from the text of `total.json` (undefined when missing): unreadable text gives
 * zeros, and a day or month bucket that is not the current one counts as 0.
 */
export function decodeCostTotals(text: string | undefined, now: Date): CostTotals {
  const fresh = emptyCostTotals(now);
  if (text === undefined || text.trim() === "") return fresh;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fresh;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return fresh;
  const record = raw as Record<string, unknown>;
  const month = (record.currentMonth ?? {}) as Record<string, unknown>;
  const day = (record.currentDay ?? {}) as Record<string, unknown>;
  return {
    allTime: finite(record.allTime),
    lastUpdated: typeof record.lastUpdated === "string" ? record.lastUpdated : fresh.lastUpdated,
    currentMonth: { month: fresh.currentMonth.month, cost: month.month === fresh.currentMonth.month ? finite(month.cost) : 0 },
    currentDay: { day: fresh.currentDay.day, cost: day.day === fresh.currentDay.day ? finite(day.cost) : 0 },
  };
}

/** The totals after recording `entry` at `now` (`current` already decoded as of `now`). */
export function addCost(current: CostTotals, entry: CostEntry, now: Date): CostTotals {
  const cost = finite(entry.cost);
  return {
    allTime: current.allTime + cost,
    lastUpdated: now.toISOString(),
    currentMonth: { month: current.currentMonth.month, cost: current.currentMonth.cost + cost },
    currentDay: { day: current.currentDay.day, cost: current.currentDay.cost + cost },
  };
}
