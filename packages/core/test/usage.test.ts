import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { budgetBlocks, budgetLimitState, usageOperation } from "../src/operations/usage.js";
import { defaultConfig } from "../src/schemas/config.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";

// Noon UTC: the local day stays the same date in any time zone within ±11 h.
const DAY1 = "2026-03-10T12:00:00.000Z";
const DAY2 = "2026-03-11T12:00:00.000Z";
const NEXT_MONTH = "2026-04-15T12:00:00.000Z";

function setup(budget: { dailyLimit?: number; monthlyLimit?: number } = {}) {
  let now = DAY1;
  const store = createMemoryStore({ repo: false, now: () => now });
  const config = defaultConfig();
  config.budget = { ...config.budget, ...budget };
  const deps = createTestDeps(store, { config });
  return { store, deps, setNow: (iso: string) => void (now = iso) };
}

const entry = (cost: number) => ({ provider: "openai", model: "gpt-4o-mini", tokensIn: 1000, tokensOut: 200, cost, timestamp: DAY1 });

describe("cm usage (operation)", () => {
  it("reports zeros and the default limits when nothing was spent", async () => {
    const { deps } = setup();
    expect(await runOperation(usageOperation, deps, {})).toEqual({
      today: 0,
      month: 0,
      total: 0,
      dailyLimit: 1,
      monthlyLimit: 20,
      blocked: { daily: false, monthly: false },
    });
  });

  it("sums recorded costs per day, month and in total; buckets restart with the date", async () => {
    const { store, deps, setNow } = setup();
    await store.costs.record(entry(0.25));
    await store.costs.record(entry(0.5));
    let usage = await runOperation(usageOperation, deps, {});
    expect(usage).toMatchObject({ today: 0.75, month: 0.75, total: 0.75 });

    setNow(DAY2);
    await store.costs.record(entry(0.1));
    usage = await runOperation(usageOperation, deps, {});
    expect(usage.today).toBeCloseTo(0.1, 10);
    expect(usage.month).toBeCloseTo(0.85, 10);
    expect(usage.total).toBeCloseTo(0.85, 10);

    setNow(NEXT_MONTH);
    usage = await runOperation(usageOperation, deps, {});
    expect(usage).toMatchObject({ today: 0, month: 0 });
    expect(usage.total).toBeCloseTo(0.85, 10);
  });

  it("marks a reached limit and a $0 limit as blocking; a negative limit never blocks", async () => {
    const reached = setup({ dailyLimit: 0.5 });
    await reached.store.costs.record(entry(0.5));
    expect((await runOperation(usageOperation, reached.deps, {})).blocked).toEqual({ daily: true, monthly: false });

    const zero = setup({ dailyLimit: 0, monthlyLimit: -1 });
    await zero.store.costs.record(entry(100));
    expect(await runOperation(usageOperation, zero.deps, {})).toMatchObject({ dailyLimit: 0, monthlyLimit: -1, blocked: { daily: true, monthly: false } });
  });
});

describe("budget semantics", () => {
  it.each([
    [0, 0, true, "blocked"],
    [0, -1, false, "none"],
    [5, -0.01, false, "none"],
    [0.99, 1, false, "ok"],
    [1, 1, true, "blocked"],
    [2, 1, true, "blocked"],
  ] as const)("spent %d with limit %d", (spent, limit, blocks, state) => {
    expect(budgetBlocks(spent, limit)).toBe(blocks);
    expect(budgetLimitState(spent, limit)).toBe(state);
  });
});
