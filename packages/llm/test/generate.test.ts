import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { isAppError, type AppError } from "@cass-memory/core";
import { backoffDelay, generateStructured, type GenerateStructuredOptions } from "../src/generate.js";
import { extractJson } from "../src/json.js";
import { harness, httpError, promptText, scriptedModel, testSettings, type Step } from "./helpers.js";

const Schema = z.object({ title: z.string(), score: z.number(), tags: z.array(z.string()) });
type Out = z.output<typeof Schema>;
const GOOD = JSON.stringify({ title: "T", score: 0.5, tags: ["a"] });

function setup(steps: Step[], overrides: Partial<GenerateStructuredOptions<typeof Schema>> = {}) {
  const h = harness();
  const model = scriptedModel(steps);
  const run = () =>
    generateStructured({
      model,
      schema: Schema,
      system: "You are a test.",
      prompt: "Give me JSON.",
      settings: testSettings(),
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      sleep: h.sleep,
      ...overrides,
    });
  return { ...h, model, run };
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error as AppError;
    throw error;
  }
  throw new Error("expected a failure");
}

describe("generateStructured", () => {
  it("returns the validated object and sends the JSON schema as responseFormat", async () => {
    const { run, model } = setup([GOOD]);
    const result = await run();
    expect(result).toEqual({ object: { title: "T", score: 0.5, tags: ["a"] }, mode: "json_schema", calls: 1 });
    const format = model.doGenerateCalls[0]?.responseFormat;
    expect(format?.type).toBe("json");
    expect(format && "schema" in format ? format.schema : undefined).toMatchObject({
      type: "object",
      required: ["title", "score", "tags"],
    });
  });

  it("retries a malformed reply with a corrective note, then succeeds", async () => {
    const { run, model, logger } = setup(['{"title": "T", "score": "high"}', GOOD]);
    const result = await run();
    expect(result.object.title).toBe("T");
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(promptText(model, 0)).not.toContain("PREVIOUS REPLY WAS REJECTED");
    expect(promptText(model, 1)).toContain("PREVIOUS REPLY WAS REJECTED");
    expect(promptText(model, 1)).toContain("Give me JSON.");
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("unusable reply"))).toBe(true);
  });

  it("gives up after 3 malformed replies with LLM_API_ERROR, recording the cost of each call", async () => {
    const { run, model, costEntries } = setup(["not json at all"]);
    const error = await failure(run());
    expect(error.code).toBe("LLM_API_ERROR");
    expect(error.message).toMatch(/^The model returned malformed output 3 times: /);
    expect(error.hint).toBeTruthy();
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(costEntries()).toHaveLength(3);
    expect(costEntries()[0]).toMatchObject({ provider: "openai", model: "gpt-4o-mini", tokensIn: 100, tokensOut: 50 });
  });

  it("accepts JSON wrapped in a Markdown fence without another call", async () => {
    const { run, model } = setup(["Here you go:\n```json\n" + GOOD + "\n```\nDone."]);
    const result = await run();
    expect(result.object.score).toBe(0.5);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it("records the cost of a successful call in the ledger", async () => {
    const { run, ledger, costEntries } = setup([{ text: GOOD, tokensIn: 1_000_000, tokensOut: 0 }]);
    await run();
    expect(costEntries()).toEqual([
      { provider: "openai", model: "gpt-4o-mini", tokensIn: 1_000_000, tokensOut: 0, cost: 0.15, timestamp: "2026-03-10T12:00:00.000Z" },
    ]);
    expect((await ledger.totals()).currentDay.cost).toBeCloseTo(0.15, 10);
  });

  describe("budget", () => {
    it("dailyLimit 0 blocks before any model call", async () => {
      const { run, model } = setup([GOOD], { settings: testSettings({ budget: { dailyLimit: 0, monthlyLimit: 20 } }) });
      const error = await failure(run());
      expect(error.code).toBe("LLM_BUDGET_EXCEEDED");
      expect(error.message).toBe("LLM budget exceeded: Daily budget exceeded ($0.00 / $0.00)");
      expect(model.doGenerateCalls).toHaveLength(0);
    });

    it("spending at the limit blocks; the budget error is not retried", async () => {
      const { run, model, ledger, sleeps } = setup([GOOD], { settings: testSettings({ budget: { dailyLimit: 0.5, monthlyLimit: 20 } }) });
      await ledger.record({ provider: "openai", model: "gpt-4o", tokensIn: 1, tokensOut: 1, cost: 0.5, timestamp: "2026-03-10T11:00:00.000Z" });
      const error = await failure(run());
      expect(error.code).toBe("LLM_BUDGET_EXCEEDED");
      expect(error.message).toContain("($0.50 / $0.50)");
      expect(model.doGenerateCalls).toHaveLength(0);
      expect(sleeps).toEqual([]);
    });

    it("a negative limit allows calls whatever was spent", async () => {
      const { run, model, ledger } = setup([GOOD], { settings: testSettings({ budget: { dailyLimit: -1, monthlyLimit: -1 } }) });
      await ledger.record({ provider: "openai", model: "gpt-4o", tokensIn: 1, tokensOut: 1, cost: 1000, timestamp: "2026-03-10T11:00:00.000Z" });
      await expect(run()).resolves.toMatchObject({ object: { title: "T" } });
      expect(model.doGenerateCalls).toHaveLength(1);
    });

    it("is checked again before each retry", async () => {
      // The first (malformed) reply costs $1.50 and uses up a $1 daily budget: the retry is blocked.
      const { run, model } = setup([{ text: "nope", tokensIn: 10_000_000, tokensOut: 0 }, GOOD], {
        settings: testSettings({ budget: { dailyLimit: 1, monthlyLimit: 20 } }),
      });
      const error = await failure(run());
      expect(error.code).toBe("LLM_BUDGET_EXCEEDED");
      expect(model.doGenerateCalls).toHaveLength(1);
    });
  });

  describe("transport errors", () => {
    it("retries a 503 after the backoff, then succeeds", async () => {
      const { run, model, sleeps } = setup([httpError(503, "Service Unavailable"), GOOD]);
      const result = await run();
      expect(result.object.title).toBe("T");
      expect(model.doGenerateCalls).toHaveLength(2);
      expect(sleeps).toEqual([1000]);
    });

    it("backs off exponentially and reports LLM_RATE_LIMITED after repeated 429s", async () => {
      const { run, model, sleeps } = setup([httpError(429, "Rate limit reached")]);
      const error = await failure(run());
      expect(error.code).toBe("LLM_RATE_LIMITED");
      expect(error.message).toContain("after 3 retries");
      expect(sleeps).toEqual([1000, 2000, 4000]);
      expect(model.doGenerateCalls).toHaveLength(4);
    });

    it("does not retry a 401 and reports the key", async () => {
      const { run, model, sleeps } = setup([httpError(401, "Incorrect API key provided"), GOOD]);
      const error = await failure(run());
      expect(error.code).toBe("MISSING_API_KEY");
      expect(error.hint).toContain("OPENAI_API_KEY");
      expect(model.doGenerateCalls).toHaveLength(1);
      expect(sleeps).toEqual([]);
    });

    it("does not retry a 404 and says the model name may be wrong", async () => {
      const { run, model } = setup([httpError(404, "The model `gpt-9` does not exist")]);
      const error = await failure(run());
      expect(error.code).toBe("LLM_API_ERROR");
      expect(error.message).toContain("gpt-4o-mini");
      expect(error.hint).toMatch(/"model"/);
      expect(model.doGenerateCalls).toHaveLength(1);
    });

    it("does not retry a plain 400", async () => {
      const { run, model } = setup([httpError(400, "max_tokens is too large"), GOOD]);
      const error = await failure(run());
      expect(error.code).toBe("LLM_API_ERROR");
      expect(model.doGenerateCalls).toHaveLength(1);
    });

    it("retries 'overloaded' errors without a status", async () => {
      const { run, sleeps } = setup([new Error("Overloaded"), GOOD]);
      await expect(run()).resolves.toMatchObject({ object: { title: "T" } });
      expect(sleeps).toEqual([1000]);
    });

    it("stops retrying when the total timeout would be exceeded", async () => {
      const { run, model, sleeps } = setup([httpError(500, "boom")], {
        settings: testSettings({ timeouts: { perCallMs: 500, totalMs: 1500 } }),
      });
      const error = await failure(run());
      expect(error.code).toBe("LLM_API_ERROR");
      // 1000 ms fits in 1500 ms; the next pause (2000 ms) would not: the fake clock stands still, so only the backoff counts.
      expect(sleeps).toEqual([1000]);
      expect(model.doGenerateCalls).toHaveLength(2);
    });

    it("maps a per-call timeout to NETWORK_ERROR after retries", async () => {
      const h = harness();
      const { MockLanguageModelV3 } = await import("ai/test");
      const slow = new MockLanguageModelV3({
        doGenerate: ({ abortSignal }) =>
          new Promise((_, reject) => {
            abortSignal?.addEventListener("abort", () => reject(abortSignal.reason));
          }),
      });
      const error = await failure(
        generateStructured({
          model: slow,
          schema: Schema,
          prompt: "x",
          settings: testSettings({ timeouts: { perCallMs: 20, totalMs: 100_000 } }),
          ledger: h.ledger,
          clock: h.clock,
          logger: h.logger,
          sleep: h.sleep,
          maxRetries: 1,
        }),
      );
      expect(error.code).toBe("NETWORK_ERROR");
      expect(error.message).toContain("20 ms");
      expect(h.sleeps).toEqual([1000]);
      expect(slow.doGenerateCalls).toHaveLength(2);
    });

    it("backoffDelay is min(1000 × 2^n, 30000)", () => {
      expect([0, 1, 2, 3, 4, 5, 6].map(backoffDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    });
  });

  describe("JSON in text", () => {
    it("with structuredOutputs false, describes the schema in the prompt and sends no responseFormat", async () => {
      const { run, model } = setup([GOOD], { settings: testSettings({ structuredOutputs: false }) });
      const result = await run();
      expect(result.mode).toBe("text");
      expect(model.doGenerateCalls[0]?.responseFormat).toBeUndefined();
      const sent = promptText(model, 0);
      expect(sent).toContain("JSON Schema");
      expect(sent).toContain('"required":["title","score","tags"]');
      expect(sent).toContain("You are a test.");
    });

    it("falls back to text when the server rejects json_schema, and remembers it", async () => {
      const capabilities = { structuredOutputs: true };
      const { run, model, logger } = setup([httpError(400, "response_format json_schema is not supported by this server"), GOOD, GOOD], {
        capabilities,
      });
      const first = await run();
      expect(first.mode).toBe("text");
      expect(model.doGenerateCalls[0]?.responseFormat?.type).toBe("json");
      expect(model.doGenerateCalls[1]?.responseFormat).toBeUndefined();
      expect(capabilities.structuredOutputs).toBe(false);
      expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("JSON in plain text"))).toBe(true);
      await run();
      expect(model.doGenerateCalls[2]?.responseFormat).toBeUndefined();
    });

    it("validates text replies with the schema (wrong types are malformed)", async () => {
      const { run, model } = setup(['{"title": 1, "score": 2, "tags": []}', GOOD], { settings: testSettings({ structuredOutputs: false }) });
      await run();
      expect(model.doGenerateCalls).toHaveLength(2);
      expect(promptText(model, 1)).toContain("title");
    });
  });

  it("keeps the AI SDK's warnings off stdout/stderr and reports them to the logger", async () => {
    const holder = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
    delete holder.AI_SDK_LOG_WARNINGS;
    const info = vi.spyOn(console, "info").mockImplementation(() => undefined);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const { run, logger } = setup([{ text: GOOD, warnings: [{ type: "other", message: "temperature is ignored by this model" }] }]);
      await run();
      expect(info).not.toHaveBeenCalled();
      expect(warn).not.toHaveBeenCalled();
      expect(holder.AI_SDK_LOG_WARNINGS).toBe(false);
      expect(logger.lines.some((l) => l.level === "debug" && l.message.includes("temperature is ignored by this model"))).toBe(true);
    } finally {
      info.mockRestore();
      warn.mockRestore();
    }
  });

  it("sanitises the prompt before it is sent", async () => {
    const { run, model } = setup([GOOD], { prompt: "key AKIAABCDEFGHIJKLMNOP here", sanitize: (t) => t.replace(/AKIA[0-9A-Z]{16}/g, "[AWS_ACCESS_KEY]") });
    await run();
    expect(promptText(model, 0)).toContain("[AWS_ACCESS_KEY]");
    expect(promptText(model, 0)).not.toContain("AKIAABCDEFGHIJKLMNOP");
  });

  it("redacts prompt and system text with the built-in detector when no sanitizer is given", async () => {
    // Fake values assembled at run time (issue 21: an LLM request carried POSTGRES_PASSWORD=…).
    const password = ["Pg", "9x!", "Tq7", "Lm2", "Vw"].join("");
    const key = ["s", "k-", "proj-", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0h"].join("");
    const { run, model } = setup([GOOD], { prompt: `session text: POSTGRES_PASSWORD=${password} and OPENAI_API_KEY=${key}`, system: `Never echo ${key}` });
    await run();
    const sent = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(sent).not.toContain(password);
    expect(sent).not.toContain(key.slice(8, 30));
    expect(sent).toContain("POSTGRES_PASSWORD=[CREDENTIAL_REDACTED]");
    expect(sent).toContain("[OPENAI_KEY]");
  });
});

describe("extractJson", () => {
  it.each([
    ['{"a":1}', { a: 1 }],
    ['  {"a":1}\n', { a: 1 }],
    ['```json\n{"a":2}\n```', { a: 2 }],
    ['Sure!\n```\n{"a":3}\n```', { a: 3 }],
    ['The answer is {"a": {"b": "}"}} as requested', { a: { b: "}" } }],
    ['<think>maybe {"x":0}</think>{"a":4}', { a: 4 }],
    ['first {broken then {"a":5}', { a: 5 }],
  ])("%s", (text, expected) => {
    expect(extractJson(text)).toEqual({ ok: true, value: expected });
  });

  it("reports text without JSON", () => {
    expect(extractJson("no json here")).toEqual({ ok: false, problem: "the reply did not contain valid JSON" });
    expect(extractJson("   ")).toEqual({ ok: false, problem: "the reply was empty" });
  });
});
