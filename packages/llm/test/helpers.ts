import { APICallError } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { defaultConfig, type Config } from "@cass-memory/core";
import { createFakeClock, createMemoryLogger, createMemoryStore } from "@cass-memory/core/testing";
import type { LlmSettings } from "../src/settings.js";

/** One scripted model step: a text reply (with token usage) or an error to throw. */
export type Step = string | { text: string; tokensIn?: number; tokensOut?: number; warnings?: Array<{ type: "other"; message: string }> } | Error;

/** A mock model answering with `steps` in order (the last one repeats), recording every call. */
export function scriptedModel(steps: Step[], options: { modelId?: string } = {}): MockLanguageModelV3 {
  let index = 0;
  return new MockLanguageModelV3({
    modelId: options.modelId ?? "mock-model",
    doGenerate: async () => {
      const step = steps[Math.min(index, steps.length - 1)];
      index++;
      if (step === undefined) throw new Error("no scripted step");
      if (step instanceof Error) throw step;
      const reply: Exclude<Step, string | Error> = typeof step === "string" ? { text: step } : step;
      const tokensIn = reply.tokensIn ?? 100;
      const tokensOut = reply.tokensOut ?? 50;
      return {
        content: [{ type: "text", text: reply.text }],
        finishReason: { unified: "stop", raw: undefined },
        usage: {
          inputTokens: { total: tokensIn, noCache: tokensIn, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: tokensOut, text: tokensOut, reasoning: undefined },
        },
        warnings: reply.warnings ?? [],
      };
    },
  });
}

export function httpError(status: number, message = `HTTP ${status}`): APICallError {
  return new APICallError({
    message,
    url: "http://model.test/v1/chat/completions",
    requestBodyValues: {},
    statusCode: status,
    responseBody: JSON.stringify({ error: { message } }),
    isRetryable: [408, 429, 500, 502, 503, 504].includes(status),
  });
}

/** The text of every user/system message the model received in call `n`. */
export function promptText(model: MockLanguageModelV3, n = 0): string {
  const call = model.doGenerateCalls[n];
  if (call === undefined) return "";
  return call.prompt
    .map((message) =>
      typeof message.content === "string"
        ? message.content
        : message.content.map((part) => ("text" in part && typeof part.text === "string" ? part.text : "")).join(""),
    )
    .join("\n");
}

export function testConfig(overrides: Record<string, unknown> = {}): Config {
  return { ...defaultConfig(), ...overrides } as Config;
}

export function testSettings(overrides: Partial<LlmSettings> = {}): LlmSettings {
  return {
    available: true,
    provider: "openai",
    model: "gpt-4o-mini",
    apiKey: "sk-test",
    timeouts: { perCallMs: 30_000, totalMs: 120_000 },
    structuredOutputs: true,
    budget: { dailyLimit: -1, monthlyLimit: -1 },
    local: false,
    ...overrides,
  };
}

/** Ledger, clock, logger and a sleep recorder as generateStructured wants them. */
export function harness(start = "2026-03-10T12:00:00.000Z") {
  const clock = createFakeClock(start);
  const store = createMemoryStore({ now: () => clock.now().toISOString() });
  const logger = createMemoryLogger();
  const sleeps: number[] = [];
  const sleep = async (ms: number) => {
    sleeps.push(ms);
  };
  /** Cost entries written to `cost/monthly-*.jsonl`. */
  const costEntries = (): Array<Record<string, unknown>> => {
    const text = store.readRawGlobalFile(`cost/monthly-${clock.now().toISOString().slice(0, 7)}.jsonl`) ?? "";
    return text
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  };
  return { clock, store, ledger: store.costs, logger, sleeps, sleep, costEntries };
}
