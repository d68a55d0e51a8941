import { describe, expect, it } from "vitest";
import { isAppError } from "@cass-memory/core";
import { assertWithinBudget, recordUsage } from "../src/budget.js";
import { costOf, priceOf, UNKNOWN_MODEL_PRICE } from "../src/pricing.js";
import { harness } from "./helpers.js";

describe("pricing", () => {
  it.each([
    ["gpt-4o", 2.5, 10],
    ["gpt-4o-mini", 0.15, 0.6],
    ["gpt-4o-mini-2024-07-18", 0.15, 0.6],
    ["openai/gpt-4o", 2.5, 10],
    ["claude-sonnet-5", 3, 15],
    ["claude-3-haiku-20240307", 0.25, 1.25],
    ["claude-3-opus", 15, 75],
    ["claude-opus-4-8", 5, 25],
    ["claude-haiku-4-5", 1, 5],
    ["gemini-1.5-flash", 0.075, 0.3],
    ["gemini-2.0-flash", 0.1, 0.4],
    ["gpt-4-turbo", 10, 30],
    ["some-new-model", 5, 15],
    ["gpt-4omega", 5, 15],
  ])("%s costs %s / %s per million", (model, input, output) => {
    expect(priceOf(model)).toEqual({ input, output });
  });

  it("computes the cost of a call, free for local models", () => {
    expect(costOf({ model: "gpt-4o", local: false, tokensIn: 1_000_000, tokensOut: 500_000 })).toBeCloseTo(7.5, 10);
    expect(costOf({ model: "unknown", local: false, tokensIn: 2_000, tokensOut: 1_000 })).toBeCloseTo(
      (2_000 / 1e6) * UNKNOWN_MODEL_PRICE.input + (1_000 / 1e6) * UNKNOWN_MODEL_PRICE.output,
      12,
    );
    expect(costOf({ model: "gpt-4o", local: true, tokensIn: 1_000_000, tokensOut: 1_000_000 })).toBe(0);
  });
});

async function budgetError(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("budget", () => {
  it("a daily limit of 0 blocks even with nothing spent", async () => {
    const { ledger } = harness();
    const error = await budgetError(assertWithinBudget(ledger, { dailyLimit: 0, monthlyLimit: 20 }));
    expect(isAppError(error) && error.code).toBe("LLM_BUDGET_EXCEEDED");
    expect((error as Error).message).toBe("LLM budget exceeded: Daily budget exceeded ($0.00 / $0.00)");
    expect((error as { hint?: string }).hint).toMatch(/dailyLimit/);
  });

  it("blocks when today's spending reached the limit, allows below it", async () => {
    const { ledger, clock, logger } = harness();
    const settings = { provider: "openai" as const, model: "gpt-4o", local: false };
    // 100k in + 100k out of gpt-4o = 0.25 + 1.0 = $1.25
    await recordUsage({ ledger, settings, usage: { inputTokens: 100_000, outputTokens: 100_000 }, clock, logger });
    await expect(assertWithinBudget(ledger, { dailyLimit: 2, monthlyLimit: 20 })).resolves.toBeUndefined();
    const error = await budgetError(assertWithinBudget(ledger, { dailyLimit: 1.25, monthlyLimit: 20 }));
    expect(isAppError(error) && error.code).toBe("LLM_BUDGET_EXCEEDED");
    expect((error as Error).message).toBe("LLM budget exceeded: Daily budget exceeded ($1.25 / $1.25)");
  });

  it("checks the monthly limit too", async () => {
    const { ledger, clock, logger } = harness();
    await recordUsage({ ledger, settings: { provider: "openai", model: "gpt-4o", local: false }, usage: { inputTokens: 400_000 }, clock, logger });
    const error = await budgetError(assertWithinBudget(ledger, { dailyLimit: -1, monthlyLimit: 1 }));
    expect((error as Error).message).toBe("LLM budget exceeded: Monthly budget exceeded ($1.00 / $1.00)");
    expect((error as { details?: unknown }).details).toMatchObject({ period: "monthly", limit: 1 });
  });

  it("a negative limit means no limit", async () => {
    const { ledger, clock, logger } = harness();
    await recordUsage({ ledger, settings: { provider: "openai", model: "gpt-4o", local: false }, usage: { inputTokens: 10_000_000 }, clock, logger });
    await expect(assertWithinBudget(ledger, { dailyLimit: -1, monthlyLimit: -5 })).resolves.toBeUndefined();
  });

  it("records the cost entry and skips calls without usage", async () => {
    const { ledger, clock, logger, costEntries } = harness();
    const settings = { provider: "anthropic" as const, model: "claude-3-haiku", local: false };
    const entry = await recordUsage({ ledger, settings, usage: { inputTokens: 1000, outputTokens: 200 }, clock, logger });
    expect(entry).toMatchObject({ provider: "anthropic", model: "claude-3-haiku", tokensIn: 1000, tokensOut: 200, timestamp: clock.now().toISOString() });
    expect(await recordUsage({ ledger, settings, usage: {}, clock, logger })).toBeUndefined();
    expect(await recordUsage({ ledger, settings, usage: undefined, clock, logger })).toBeUndefined();
    expect(costEntries()).toHaveLength(1);
    expect(costEntries()[0]?.cost).toBeCloseTo(0.0005, 10);
    expect((await ledger.totals()).currentDay.cost).toBeCloseTo(0.0005, 10);
  });

  it("a ledger that fails to record is reported, not thrown", async () => {
    const { clock, logger } = harness();
    const ledger = {
      totals: async () => {
        throw new Error("unused");
      },
      record: async () => {
        throw new Error("disk full");
      },
    };
    const entry = await recordUsage({ ledger, settings: { provider: "openai", model: "gpt-4o", local: false }, usage: { inputTokens: 1 }, clock, logger });
    expect(entry?.tokensIn).toBe(1);
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("disk full"))).toBe(true);
  });
});
