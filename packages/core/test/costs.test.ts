import { afterEach, describe, expect, it } from "vitest";
import { COST_DIR, COST_TOTAL_FILE, addCost, decodeCostTotals, emptyCostTotals, localDayKey, monthlyCostFile, utcMonthKey } from "../src/index.js";
import type { CostEntry, CostTotals } from "../src/index.js";

/**
 * Cost bookkeeping (reference §4.9): the day bucket is keyed by the LOCAL date, the month bucket and
 * the monthly file by the UTC month. The timezone tests switch `process.env.TZ`, which Node applies
 * to Date at once.
 */

const originalTz = process.env.TZ;

function useTimezone(tz: string): void {
  process.env.TZ = tz;
}

afterEach(() => {
  if (originalTz === undefined) delete process.env.TZ;
  else process.env.TZ = originalTz;
});

const entry = (cost: number): CostEntry => ({ provider: "openai", model: "gpt-test", tokensIn: 10, tokensOut: 5, cost, timestamp: "2026-03-15T12:00:00.000Z" });

describe("day and month keys", () => {
  it("the day is the local date and the month the UTC month (east of UTC)", () => {
    useTimezone("Pacific/Auckland"); // UTC+13 in March (daylight saving)
    const instant = new Date("2026-03-31T12:30:00.000Z"); // 01:30 on 1 April in Auckland
    expect(instant.getTimezoneOffset()).toBe(-13 * 60);
    expect(localDayKey(instant)).toBe("2026-04-01");
    expect(utcMonthKey(instant)).toBe("2026-03");
    expect(monthlyCostFile(instant)).toBe("monthly-2026-03.jsonl");
    expect(emptyCostTotals(instant)).toEqual({
      allTime: 0,
      lastUpdated: "2026-03-31T12:30:00.000Z",
      currentMonth: { month: "2026-03", cost: 0 },
      currentDay: { day: "2026-04-01", cost: 0 },
    });
  });

  it("the day is the local date and the month the UTC month (west of UTC)", () => {
    useTimezone("America/Los_Angeles"); // UTC-8 in January
    const instant = new Date("2026-01-01T03:00:00.000Z"); // 19:00 on 31 December in Los Angeles
    expect(instant.getTimezoneOffset()).toBe(8 * 60);
    expect(localDayKey(instant)).toBe("2025-12-31");
    expect(utcMonthKey(instant)).toBe("2026-01");
    expect(monthlyCostFile(instant)).toBe("monthly-2026-01.jsonl");
  });

  it("pads months and days, in UTC too", () => {
    useTimezone("UTC");
    expect(localDayKey(new Date("2026-02-03T00:00:00.000Z"))).toBe("2026-02-03");
    expect(localDayKey(new Date("2026-12-31T23:59:59.999Z"))).toBe("2026-12-31");
    expect(utcMonthKey(new Date("2026-09-30T23:59:59.999Z"))).toBe("2026-09");
    expect(COST_DIR).toBe("cost");
    expect(COST_TOTAL_FILE).toBe("total.json");
  });
});

describe("decodeCostTotals", () => {
  const now = new Date("2026-03-15T12:00:00.000Z");
  const zeros = (): CostTotals => emptyCostTotals(now);

  it("missing, empty or unreadable text gives zeros dated now", () => {
    useTimezone("UTC");
    for (const text of [undefined, "", "   \n", "{ not json", "null", "[]", "[1,2]", "42", '"total"', "true"]) {
      expect(decodeCostTotals(text, now), String(text)).toEqual(zeros());
    }
  });

  it("keeps the totals of the current day and month, and lastUpdated", () => {
    useTimezone("UTC");
    const stored = { allTime: 12.5, lastUpdated: "2026-03-15T08:00:00.000Z", currentMonth: { month: "2026-03", cost: 2.5 }, currentDay: { day: "2026-03-15", cost: 0.75 } };
    expect(decodeCostTotals(JSON.stringify(stored, null, 2), now)).toEqual(stored);
  });

  it("a bucket of another day or month counts as 0 and is renamed to the current one", () => {
    useTimezone("UTC");
    const stored = { allTime: 12.5, lastUpdated: "2026-02-28T08:00:00.000Z", currentMonth: { month: "2026-02", cost: 2.5 }, currentDay: { day: "2026-02-28", cost: 0.75 } };
    expect(decodeCostTotals(JSON.stringify(stored), now)).toEqual({
      allTime: 12.5,
      lastUpdated: "2026-02-28T08:00:00.000Z",
      currentMonth: { month: "2026-03", cost: 0 },
      currentDay: { day: "2026-03-15", cost: 0 },
    });
    // Same month, earlier day: only the day restarts.
    const sameMonth = { ...stored, currentMonth: { month: "2026-03", cost: 2.5 }, currentDay: { day: "2026-03-14", cost: 0.75 } };
    expect(decodeCostTotals(JSON.stringify(sameMonth), now)).toMatchObject({ currentMonth: { month: "2026-03", cost: 2.5 }, currentDay: { day: "2026-03-15", cost: 0 } });
  });

  it("the day bucket is matched against the local date", () => {
    useTimezone("Pacific/Auckland");
    const late = new Date("2026-03-15T12:00:00.000Z"); // 01:00 on 16 March in Auckland
    const stored = { allTime: 3, lastUpdated: "2026-03-15T10:00:00.000Z", currentMonth: { month: "2026-03", cost: 3 }, currentDay: { day: "2026-03-15", cost: 3 } };
    expect(decodeCostTotals(JSON.stringify(stored), late).currentDay).toEqual({ day: "2026-03-16", cost: 0 });
    expect(decodeCostTotals(JSON.stringify({ ...stored, currentDay: { day: "2026-03-16", cost: 1 } }), late).currentDay).toEqual({ day: "2026-03-16", cost: 1 });
  });

  it("garbage values read as 0 without losing the valid ones", () => {
    useTimezone("UTC");
    const month = (cost: number) => ({ month: "2026-03", cost });
    const day = (cost: number) => ({ day: "2026-03-15", cost });
    const cases: Array<[string, Partial<CostTotals>]> = [
      ['{"allTime": "12"}', { allTime: 0 }],
      ['{"allTime": -4}', { allTime: 0 }],
      ['{"allTime": 1e400}', { allTime: 0 }], // parses as Infinity
      ['{"allTime": null, "currentMonth": null, "currentDay": null}', { allTime: 0, currentMonth: month(0), currentDay: day(0) }],
      ['{"allTime": 7, "currentMonth": "2026-03", "currentDay": 5}', { allTime: 7, currentMonth: month(0), currentDay: day(0) }],
      ['{"allTime": 7, "currentMonth": [], "currentDay": []}', { allTime: 7, currentMonth: month(0), currentDay: day(0) }],
      ['{"allTime": 7, "currentMonth": {"month": "2026-03", "cost": "2"}}', { allTime: 7, currentMonth: month(0) }],
      ['{"allTime": 7, "currentDay": {"day": "2026-03-15", "cost": -1}}', { allTime: 7, currentDay: day(0) }],
      ['{"allTime": 7, "currentMonth": {"cost": 9}, "currentDay": {"cost": 9}}', { allTime: 7, currentMonth: month(0), currentDay: day(0) }],
      ['{"allTime": 7, "currentMonth": {"month": 202603, "cost": 9}}', { currentMonth: month(0) }],
      ['{"allTime": 7, "lastUpdated": 12}', { allTime: 7, lastUpdated: "2026-03-15T12:00:00.000Z" }],
      ['{"allTime": 7, "currentMonth": {"month": "2026-03", "cost": 2}, "currentDay": {"day": "2026-03-15", "cost": 1}, "extra": true}', { allTime: 7, currentMonth: month(2), currentDay: day(1) }],
    ];
    for (const [text, expected] of cases) {
      const decoded = decodeCostTotals(text, now);
      expect(decoded, text).toMatchObject(expected);
      expect(Object.keys(decoded), text).toEqual(["allTime", "lastUpdated", "currentMonth", "currentDay"]);
      for (const value of [decoded.allTime, decoded.currentMonth.cost, decoded.currentDay.cost]) expect(Number.isFinite(value) && value >= 0, text).toBe(true);
    }
  });
});

describe("addCost", () => {
  it("adds to allTime, the month and the day, and dates the totals", () => {
    useTimezone("UTC");
    const now = new Date("2026-03-15T12:00:00.000Z");
    const later = new Date("2026-03-15T13:00:00.000Z");
    const once = addCost(emptyCostTotals(now), entry(0.25), now);
    expect(once).toEqual({ allTime: 0.25, lastUpdated: now.toISOString(), currentMonth: { month: "2026-03", cost: 0.25 }, currentDay: { day: "2026-03-15", cost: 0.25 } });
    const twice = addCost(once, entry(0.5), later);
    expect(twice).toEqual({ allTime: 0.75, lastUpdated: later.toISOString(), currentMonth: { month: "2026-03", cost: 0.75 }, currentDay: { day: "2026-03-15", cost: 0.75 } });
    // The input is not modified.
    expect(once.allTime).toBe(0.25);
  });

  it("ignores negative, NaN and infinite costs (but still dates the totals)", () => {
    useTimezone("UTC");
    const now = new Date("2026-03-15T12:00:00.000Z");
    const later = new Date("2026-03-15T14:00:00.000Z");
    const start = addCost(emptyCostTotals(now), entry(1), now);
    for (const cost of [-1, -0.0001, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, "2" as unknown as number]) {
      const next = addCost(start, entry(cost), later);
      expect(next, String(cost)).toEqual({ ...start, lastUpdated: later.toISOString() });
    }
    expect(addCost(start, entry(0), later).allTime).toBe(1);
  });

  it("round-trips through decodeCostTotals as the original's total.json shape", () => {
    useTimezone("UTC");
    const now = new Date("2026-03-15T12:00:00.000Z");
    const totals = addCost(decodeCostTotals(undefined, now), entry(0.125), now);
    const text = JSON.stringify(totals, null, 2);
    expect(Object.keys(JSON.parse(text) as object)).toEqual(["allTime", "lastUpdated", "currentMonth", "currentDay"]);
    expect(decodeCostTotals(text, now)).toEqual(totals);
  });
});
