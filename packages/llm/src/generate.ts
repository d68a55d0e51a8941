import { generateText, NoObjectGeneratedError, Output, type LanguageModel } from "ai";
import type * as z from "zod";
import { AppError, redactSecrets, type Clock, type CostLedger, type Logger } from "@cass-memory/core";
import { assertWithinBudget, recordUsage, type TokenUsage } from "./budget.js";
import { isRetryableLlmError, isStructuredOutputUnsupported, toLlmAppError } from "./errors.js";
import { parseStructured, schemaAsText } from "./json.js";
import type { LlmSettings } from "./settings.js";

/**
 * One structured request to a model: budget check, JSON-schema output (or JSON in text when the
 * server cannot do it), validation, retries for malformed replies and for transient failures,
 * cost recording. Every failure leaves as an AppError.
 */

export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_MAX_RETRIES = 3;
export const MAX_BACKOFF_MS = 30_000;

/** What a model/server can do, learned during a run and shared by the components. */
export interface ModelCapabilities {
  /** Set to false once the server rejected JSON-schema output; later calls use JSON in text. */
  structuredOutputs: boolean;
}

export type Sleep = (ms: number) => Promise<void>;

export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Pause before retry number `retry` (0-based): min(1000 × 2^retry, 30000) ms. */
export function backoffDelay(retry: number): number {
  return Math.min(1000 * 2 ** retry, MAX_BACKOFF_MS);
}

export interface GenerateStructuredOptions<S extends z.ZodType> {
  model: LanguageModel;
  /** The reply's shape; the result is always validated with it. */
  schema: S;
  /** Instructions (ours; redacted like the prompt all the same). */
  system?: string;
  /** The request text; always redacted here (with `sanitize`, or the built-in detector). */
  prompt: string;
  settings: LlmSettings;
  ledger: CostLedger;
  clock: Clock;
  logger: Logger;
  /** Attempts against malformed replies (default 3). */
  maxAttempts?: number;
  /** Retries of transient failures (429, 5xx, timeouts, dropped connections; default 3). */
  maxRetries?: number;
  /** Injectable pause between retries (tests pass a recorder). */
  sleep?: Sleep;
  /** Secret redaction applied to the prompt before it leaves the machine. */
  sanitize?: (text: string) => string;
  /** Shared capabilities (default: from settings, for this request only). */
  capabilities?: ModelCapabilities;
  /** What the request is for, in logs and error details. */
  task?: string;
  /** Name given to the schema in the JSON-schema request. */
  schemaName?: string;
}

export interface GenerateStructuredResult<T> {
  object: T;
  /** How the reply was obtained: the server's JSON-schema mode or JSON read from text. */
  mode: "json_schema" | "text";
  /** Model calls made (including malformed replies and retried failures). */
  calls: number;
}

function correctiveNote(problem: string): string {
  return (
    `[YOUR PREVIOUS REPLY WAS REJECTED: ${problem}. ` +
    "Reply again with ONLY one JSON object that matches the required schema exactly: every field present, null or [] where nothing applies, no prose, no Markdown.]"
  );
}

function textModeSystem(system: string | undefined, schema: z.ZodType): string {
  const instructions =
    "Output format: reply with ONLY one JSON object (no prose before or after it, no Markdown fences) that validates against this JSON Schema:\n" +
    schemaAsText(schema);
  return system === undefined || system.trim() === "" ? instructions : `${system}\n\n${instructions}`;
}

/**
 * The AI SDK prints provider warnings with console.info/console.warn (stdout!) unless the host set
 * `globalThis.AI_SDK_LOG_WARNINGS`. Packages never write to stdout, so when the host has not chosen
 * a logger, printing is switched off and the warnings go to our logger instead.
 */
function keepSdkOffTheConsole(): void {
  const holder = globalThis as { AI_SDK_LOG_WARNINGS?: unknown };
  if (holder.AI_SDK_LOG_WARNINGS === undefined) holder.AI_SDK_LOG_WARNINGS = false;
}

function reportWarnings(logger: Logger, task: string, warnings: ReadonlyArray<unknown> | undefined): void {
  for (const warning of warnings ?? []) {
    const w = warning as { type?: string; feature?: string; message?: string; details?: string };
    const text = w.message ?? [w.feature, w.details].filter(Boolean).join(": ");
    logger.debug(`LLM ${task}: provider warning (${w.type ?? "other"}) ${text || JSON.stringify(warning)}`);
  }
}

function usageOf(usage: { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined): TokenUsage | undefined {
  return usage === undefined ? undefined : { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
}

export async function generateStructured<S extends z.ZodType>(
  options: GenerateStructuredOptions<S>,
): Promise<GenerateStructuredResult<z.output<S>>> {
  const { model, schema, settings, ledger, clock, logger } = options;
  const maxAttempts = Math.max(1, options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS);
  const maxRetries = Math.max(0, options.maxRetries ?? DEFAULT_MAX_RETRIES);
  const sleep = options.sleep ?? realSleep;
  const capabilities = options.capabilities ?? { structuredOutputs: settings.structuredOutputs };
  const task = options.task ?? "request";
  // Nothing reaches a model unredacted (issue 21): the configured sanitizer when given, else the
  // built-in secret detector, over the prompt and the system text alike.
  const clean = options.sanitize ?? ((text: string) => redactSecrets(text).text);
  const prompt = clean(options.prompt);
  const system = options.system === undefined ? undefined : clean(options.system);
  const deadline = clock.now().getTime() + settings.timeouts.totalMs;
  const record = (usage: TokenUsage | undefined) => recordUsage({ ledger, settings, usage, clock, logger });
  keepSdkOffTheConsole();

  let malformed = 0;
  let retries = 0;
  let calls = 0;
  let problem = "";

  for (;;) {
    // Budget first, before every call (retries included); budget errors are never retried.
    await assertWithinBudget(ledger, settings.budget);
    const remaining = deadline - clock.now().getTime();
    if (remaining <= 0) {
      throw new AppError("NETWORK_ERROR", `The ${task} LLM request did not finish within ${settings.timeouts.totalMs} ms`, {
        hint: 'Raise "llmTotalTimeoutMs" (or CM_LLM_TOTAL_TIMEOUT_MS), or retry later.',
        details: { provider: settings.provider, model: settings.model, retries, task },
      });
    }
    const textMode = !capabilities.structuredOutputs;
    const userPrompt = malformed === 0 ? prompt : `${correctiveNote(problem)}\n\n${prompt}`;
    const common = {
      model,
      prompt: userPrompt,
      maxRetries: 0,
      temperature: malformed === 0 ? 0.3 : 0.35,
      abortSignal: AbortSignal.timeout(Math.min(settings.timeouts.perCallMs, remaining)),
    };
    calls++;
    logger.debug(`LLM ${task}: call ${calls} to ${settings.provider}/${settings.model} (${textMode ? "JSON in text" : "JSON schema"})`);

    try {
      if (textMode) {
        const result = await generateText({ ...common, system: textModeSystem(system, schema) });
        reportWarnings(logger, task, result.warnings);
        await record(usageOf(result.usage));
        const parsed = parseStructured(result.text, schema);
        if (parsed.ok) return { object: parsed.value, mode: "text", calls };
        problem = parsed.problem;
      } else {
        const result = await generateText({
          ...common,
          ...(system === undefined ? {} : { system }),
          output: Output.object({ schema, ...(options.schemaName === undefined ? {} : { name: options.schemaName }) }),
        });
        reportWarnings(logger, task, result.warnings);
        await record(usageOf(result.usage));
        // The SDK validated already; validating again keeps the guarantee independent of it.
        const validated = schema.safeParse(result.output);
        if (validated.success) return { object: validated.data, mode: "json_schema", calls };
        problem = "the reply did not match the schema";
      }
    } catch (error) {
      if (NoObjectGeneratedError.isInstance(error)) {
        await record(usageOf(error.usage));
        const text = error.text ?? "";
        // JSON wrapped in fences or prose is still usable.
        const salvaged = parseStructured(text, schema);
        if (salvaged.ok) return { object: salvaged.value, mode: textMode ? "text" : "json_schema", calls };
        problem = text.trim() === "" ? `the reply was empty (finish reason: ${error.finishReason ?? "unknown"})` : salvaged.problem;
      } else if (!textMode && isStructuredOutputUnsupported(error)) {
        capabilities.structuredOutputs = false;
        logger.warn(`${settings.provider}/${settings.model} does not accept JSON-schema output; asking for JSON in plain text instead`);
        continue;
      } else if (isRetryableLlmError(error) && retries < maxRetries) {
        const delay = backoffDelay(retries);
        if (clock.now().getTime() + delay >= deadline) throw toLlmAppError(error, { settings, retries, task });
        retries++;
        const why = error instanceof Error ? error.message : String(error);
        logger.warn(`LLM ${task} failed (${why}); retry ${retries}/${maxRetries} in ${delay} ms`);
        await sleep(delay);
        continue;
      } else {
        throw toLlmAppError(error, { settings, retries, task });
      }
    }

    malformed++;
    if (malformed >= maxAttempts) {
      throw new AppError("LLM_API_ERROR", `The model returned malformed output ${malformed} times: ${problem}`, {
        hint:
          `Try a more capable model ("model" in config.json)` +
          (capabilities.structuredOutputs ? "" : " or a server with JSON-schema support") +
          ", or run without an LLM: CASS_MEMORY_LLM=none.",
        details: { provider: settings.provider, model: settings.model, attempts: malformed, task },
      });
    }
    logger.warn(`LLM ${task}: unusable reply (${problem}); asking again (${malformed + 1}/${maxAttempts})`);
  }
}
