import { APICallError } from "ai";
import { AppError, isAppError } from "@cass-memory/core";
import { API_KEY_ENV, type LlmSettings } from "./settings.js";

/**
 * Classifying what a model call threw: whether to retry it, whether it means the server cannot do
 * JSON-schema output, and which AppError to report.
 */

/** HTTP statuses worth retrying: rate limits, server errors, Anthropic's "overloaded" (529). */
const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504, 529]);
/** Node error codes of a dropped or stalled connection (retryable). */
const RETRYABLE_CODES = new Set(["ECONNRESET", "ETIMEDOUT", "EPIPE", "UND_ERR_SOCKET", "UND_ERR_CONNECT_TIMEOUT"]);
/** Node error codes of an endpoint that cannot be reached at all (not retried). */
const UNREACHABLE_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
const RETRYABLE_MESSAGE = /overloaded|rate[\s_-]?limit|ECONNRESET|ETIMEDOUT|socket hang up|server_error|temporarily unavailable/i;
const STRUCTURED_UNSUPPORTED = /response_format|json_schema|json schema|structured output|guided_json|json mode|not support.*(schema|format)/i;

interface ErrorFacts {
  status: number | undefined;
  codes: Set<string>;
  names: Set<string>;
  text: string;
  message: string;
}

/** Status, error codes, names and messages found along the error's cause chain. */
function factsOf(error: unknown): ErrorFacts {
  const codes = new Set<string>();
  const names = new Set<string>();
  const texts: string[] = [];
  let status: number | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && current !== undefined; depth++) {
    if (typeof current !== "object") {
      texts.push(String(current));
      break;
    }
    const record = current as Record<string, unknown>;
    if (status === undefined) {
      const candidate = record.statusCode ?? record.status;
      if (typeof candidate === "number" && candidate >= 100 && candidate < 600) status = candidate;
    }
    if (typeof record.code === "string") codes.add(record.code);
    if (typeof record.name === "string") names.add(record.name);
    if (typeof record.message === "string") texts.push(record.message);
    if (typeof record.responseBody === "string") texts.push(record.responseBody);
    // A RetryError wraps the last attempt's error.
    current = record.lastError ?? record.cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return { status, codes, names, text: texts.join(" | "), message };
}

function isTimeout(facts: ErrorFacts): boolean {
  return facts.names.has("TimeoutError") || facts.names.has("AbortError");
}

/** True when the error is worth another attempt after a pause. */
export function isRetryableLlmError(error: unknown): boolean {
  if (isAppError(error)) return false;
  const facts = factsOf(error);
  if (facts.status !== undefined) return RETRYABLE_STATUS.has(facts.status);
  if (isTimeout(facts)) return true;
  if ([...facts.codes].some((c) => RETRYABLE_CODES.has(c))) return true;
  if ([...facts.codes].some((c) => UNREACHABLE_CODES.has(c))) return false;
  return RETRYABLE_MESSAGE.test(facts.text);
}

/** True when the server refused the request because it cannot produce JSON-schema output. */
export function isStructuredOutputUnsupported(error: unknown): boolean {
  if (isAppError(error)) return false;
  const facts = factsOf(error);
  if (facts.names.has("AI_UnsupportedFunctionalityError")) return STRUCTURED_UNSUPPORTED.test(facts.text);
  if (facts.status === undefined || ![400, 404, 415, 422, 500, 501].includes(facts.status)) return false;
  return STRUCTURED_UNSUPPORTED.test(facts.text);
}

function endpointOf(settings: Pick<LlmSettings, "provider" | "baseUrl">): string {
  return settings.baseUrl ?? `the ${settings.provider} API`;
}

function keyHint(settings: Pick<LlmSettings, "provider">): string {
  if (settings.provider === "ollama") return "Ollama needs no key; check that nothing in front of it requires one.";
  const env = API_KEY_ENV[settings.provider];
  return `Check ${env} (or "apiKey" in config.json), or run without an LLM: CASS_MEMORY_LLM=none.`;
}

function unreachableHint(settings: Pick<LlmSettings, "provider" | "baseUrl">): string {
  if (settings.provider === "ollama") {
    return `Is Ollama running? Start it with 'ollama serve', or set OLLAMA_BASE_URL / "ollamaBaseUrl". Or run without an LLM: CASS_MEMORY_LLM=none.`;
  }
  if (settings.baseUrl !== undefined) {
    return `Is the server at ${settings.baseUrl} running? Check "baseUrl" in config.json. Or run without an LLM: CASS_MEMORY_LLM=none.`;
  }
  return "Check your network connection and retry, or run without an LLM: CASS_MEMORY_LLM=none.";
}

export interface LlmErrorContext {
  settings: Pick<LlmSettings, "provider" | "model" | "baseUrl" | "timeouts">;
  /** Retries made before giving up. */
  retries: number;
  /** What the call was for (diary, reflect, validate, audit). */
  task?: string;
}

/** Maps anything a model call threw to an AppError with a hint (AppErrors pass through). */
export function toLlmAppError(error: unknown, context: LlmErrorContext): AppError {
  if (isAppError(error)) return error as AppError;
  const { settings, retries } = context;
  const facts = factsOf(error);
  const details: Record<string, unknown> = { provider: settings.provider, model: settings.model, retries };
  if (context.task !== undefined) details.task = context.task;
  if (facts.status !== undefined) details.status = facts.status;
  const after = retries > 0 ? ` after ${retries} ${retries === 1 ? "retry" : "retries"}` : "";
  const options = (hint: string, retryable = false) => ({ hint, details, cause: error, retryable });

  if (facts.names.has("AI_LoadAPIKeyError")) {
    return new AppError("MISSING_API_KEY", facts.message, options(keyHint(settings)));
  }
  switch (facts.status) {
    case 401:
      return new AppError("MISSING_API_KEY", `${settings.provider} rejected the API key (HTTP 401): ${facts.message}`, options(keyHint(settings)));
    case 403:
      return new AppError(
        "LLM_API_ERROR",
        `${settings.provider} refused access (HTTP 403): ${facts.message}`,
        options(`The key may lack access to model '${settings.model}'. ${keyHint(settings)}`),
      );
    case 404:
      return new AppError(
        "LLM_API_ERROR",
        `Model '${settings.model}' was rejected by provider '${settings.provider}' (HTTP 404): ${facts.message}`,
        options(`The model name may be misspelt or retired: update "model" in config.json to a model ${endpointOf(settings)} serves.`),
      );
    case 429:
      return new AppError(
        "LLM_RATE_LIMITED",
        `Rate limited by ${settings.provider}${after}: ${facts.message}`,
        options("Wait a minute and retry, or lower the request rate (fewer sessions per reflect run).", true),
      );
    case undefined:
      break;
    default:
      return new AppError(
        "LLM_API_ERROR",
        `${settings.provider} API error (HTTP ${facts.status})${after}: ${facts.message}`,
        options(
          facts.status >= 500 ? "The provider had a problem; retry later." : `Check "model", "baseUrl" and the provider settings in config.json.`,
          RETRYABLE_STATUS.has(facts.status),
        ),
      );
  }
  if (isTimeout(facts)) {
    return new AppError(
      "NETWORK_ERROR",
      `The model did not answer within ${settings.timeouts.perCallMs} ms${after}`,
      options('Raise "llmTimeoutMs" (or CM_LLM_TIMEOUT_MS) for slow models, or retry later.', true),
    );
  }
  const codes = [...facts.codes];
  if (codes.some((c) => UNREACHABLE_CODES.has(c) || RETRYABLE_CODES.has(c)) || APICallError.isInstance(error)) {
    return new AppError("NETWORK_ERROR", `Cannot reach ${endpointOf(settings)}${after}: ${facts.text}`, options(unreachableHint(settings)));
  }
  if (/rate[\s_-]?limit/i.test(facts.text)) {
    return new AppError("LLM_RATE_LIMITED", `Rate limited by ${settings.provider}${after}: ${facts.message}`, options("Wait a minute and retry.", true));
  }
  return new AppError("LLM_API_ERROR", `LLM call failed${after}: ${facts.message}`, options(`Check the provider settings in config.json, or run without an LLM: CASS_MEMORY_LLM=none.`));
}
