import type { Config } from "@cass-memory/core";

/**
 * Which model to talk to and how, decided once from the configuration and the environment.
 * Pure: reads only its arguments (the caller passes `process.env`).
 */

/** Providers this package can call. */
export type LlmProviderName = "openai" | "anthropic" | "google" | "ollama";

export type Env = Readonly<Record<string, string | undefined>>;

export const DEFAULT_PER_CALL_TIMEOUT_MS = 30_000;
export const DEFAULT_TOTAL_TIMEOUT_MS = 120_000;
/** The API key sent to servers that need none (local OpenAI-compatible servers). */
export const UNUSED_API_KEY = "unused";
export const DEFAULT_OLLAMA_BASE_URL = "http://localhost:11434";

export interface LlmTimeouts {
  /** Deadline of one model call. */
  perCallMs: number;
  /** Deadline of one logical request including its retries (at least 3 × perCallMs). */
  totalMs: number;
}

export interface LlmBudget {
  /** USD per local day; 0 blocks every call, a negative value means no limit. */
  dailyLimit: number;
  /** USD per UTC month; 0 blocks every call, a negative value means no limit. */
  monthlyLimit: number;
}

export interface LlmSettings {
  available: true;
  provider: LlmProviderName;
  model: string;
  /** Endpoint override: for `openai` any OpenAI-compatible server; for `ollama` its `/v1` endpoint. */
  baseUrl?: string;
  /** Never log this. Absent for Ollama. */
  apiKey?: string;
  timeouts: LlmTimeouts;
  /** Ask for JSON-schema output (`response_format: json_schema`); false → JSON in plain text. */
  structuredOutputs: boolean;
  budget: LlmBudget;
  /** The model runs on this machine or the local network: calls cost nothing. */
  local: boolean;
}

export type LlmUnavailableCode = "disabled" | "missing_key" | "unsupported_provider" | "no_model";

export interface LlmUnavailable {
  available: false;
  code: LlmUnavailableCode;
  reason: string;
  hint: string;
}

export type LlmSettingsResult = LlmSettings | LlmUnavailable;

/** The environment variable holding each cloud provider's key. */
export const API_KEY_ENV: Readonly<Record<"openai" | "anthropic" | "google", string>> = {
  openai: "OPENAI_API_KEY",
  anthropic: "ANTHROPIC_API_KEY",
  google: "GOOGLE_GENERATIVE_AI_API_KEY",
};

const BASE_URL_ENV: Readonly<Record<"openai" | "anthropic" | "google", string>> = {
  openai: "OPENAI_BASE_URL",
  anthropic: "ANTHROPIC_BASE_URL",
  google: "GOOGLE_BASE_URL",
};

const NO_LLM_HINT = "Or run without an LLM: CASS_MEMORY_LLM=none (the deterministic components are used).";

function nonEmpty(value: string | undefined | null): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function positiveInt(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isInteger(value) && value > 0 ? value : undefined;
  if (typeof value === "string" && /^\s*\d+\s*$/.test(value)) {
    const n = Number(value);
    return Number.isSafeInteger(n) && n > 0 ? n : undefined;
  }
  return undefined;
}

function withoutTrailingSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** True when `CASS_MEMORY_LLM=none` switches LLM use off. */
export function isLlmDisabled(env: Env): boolean {
  return env.CASS_MEMORY_LLM?.trim().toLowerCase() === "none";
}

/** Per-call and total deadlines: config ▸ environment ▸ defaults; the total is at least 3 calls. */
export function resolveTimeouts(config: Config, env: Env): LlmTimeouts {
  const perCallMs =
    positiveInt(config.llmTimeoutMs) ??
    positiveInt(config.llm?.timeoutMs) ??
    positiveInt(env.CM_LLM_TIMEOUT_MS) ??
    DEFAULT_PER_CALL_TIMEOUT_MS;
  const total =
    positiveInt(config.llmTotalTimeoutMs) ??
    positiveInt(config.llm?.totalTimeoutMs) ??
    positiveInt(env.CM_LLM_TOTAL_TIMEOUT_MS) ??
    DEFAULT_TOTAL_TIMEOUT_MS;
  return { perCallMs, totalMs: Math.max(total, 3 * perCallMs) };
}

/**
 * The Ollama server's root URL: OLLAMA_BASE_URL ▸ OLLAMA_HOST (a bare `host:port` gets `http://`)
 * ▸ config.ollamaBaseUrl ▸ http://localhost:11434.
 */
export function resolveOllamaRoot(config: Config, env: Env): string {
  const fromEnv = nonEmpty(env.OLLAMA_BASE_URL) ?? nonEmpty(env.OLLAMA_HOST);
  const raw = fromEnv ?? nonEmpty(config.ollamaBaseUrl) ?? DEFAULT_OLLAMA_BASE_URL;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(raw) ? raw : `http://${raw}`;
  return withoutTrailingSlash(withScheme);
}

/** `<root>/v1`, Ollama's OpenAI-compatible endpoint (a root that already names `/v1` or `/api` is adjusted). */
export function ollamaOpenAiBase(root: string): string {
  const base = withoutTrailingSlash(root);
  if (/\/v1$/i.test(base)) return base;
  if (/\/api$/i.test(base)) return `${base.slice(0, -4)}/v1`;
  return `${base}/v1`;
}

const PRIVATE_V4 = [/^127\./, /^10\./, /^192\.168\./, /^172\.(1[6-9]|2\d|3[01])\./, /^0\.0\.0\.0$/, /^169\.254\./];

/** True for URLs on this machine or a private network (localhost, 127/8, 10/8, 192.168/16, ::1, *.local). */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, "");
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) return true;
  if (host === "host.docker.internal") return true;
  if (host.includes(":")) return host === "::1" || /^f[cd][0-9a-f]{2}:/.test(host);
  return PRIVATE_V4.some((re) => re.test(host));
}

/** The spending limits of config.budget (the original's defaults, $1/day and $20/month, when unset). */
export function budgetOf(config: Config): LlmBudget {
  const daily = config.budget?.dailyLimit;
  const monthly = config.budget?.monthlyLimit;
  return {
    dailyLimit: typeof daily === "number" && Number.isFinite(daily) ? daily : 1,
    monthlyLimit: typeof monthly === "number" && Number.isFinite(monthly) ? monthly : 20,
  };
}

function unavailable(code: LlmUnavailableCode, reason: string, hint: string): LlmUnavailable {
  return { available: false, code, reason, hint };
}

/**
 * Decides whether an LLM can be used and with which settings. Never falls back to another
 * provider: when the configured one cannot be used, the answer says why, and the caller uses the
 * deterministic components.
 */
export function resolveLlmSettings(config: Config, env: Env): LlmSettingsResult {
  if (isLlmDisabled(env)) {
    return unavailable("disabled", "LLM disabled by CASS_MEMORY_LLM=none", "Unset CASS_MEMORY_LLM to use the configured model.");
  }

  const provider = config.provider;
  if (provider === "bedrock" || provider === "cli") {
    return unavailable(
      "unsupported_provider",
      `The "${provider}" LLM provider is not supported in this version`,
      'Set "provider" to "openai" with "baseUrl" pointing at any OpenAI-compatible server (vLLM, LM Studio, llama.cpp, a gateway), ' +
        `or to "ollama", "anthropic" or "google" in config.json. ${NO_LLM_HINT}`,
    );
  }

  const model = nonEmpty(config.model);
  if (model === undefined) {
    return unavailable("no_model", "No LLM model configured", `Set "model" in config.json (e.g. the model name your server serves). ${NO_LLM_HINT}`);
  }

  const timeouts = resolveTimeouts(config, env);
  const structuredOutputs = config.disableStructuredOutputs !== true;
  const common = { available: true as const, model, timeouts, structuredOutputs, budget: budgetOf(config) };

  if (provider === "ollama") {
    const baseUrl = ollamaOpenAiBase(resolveOllamaRoot(config, env));
    return { ...common, provider, baseUrl, local: true };
  }

  const keyEnv = API_KEY_ENV[provider];
  const apiKey = nonEmpty(config.apiKey) ?? nonEmpty(env[keyEnv]);
  const rawBase = nonEmpty(config.baseUrl) ?? nonEmpty(env[BASE_URL_ENV[provider]]);
  const baseUrl = rawBase === undefined ? undefined : withoutTrailingSlash(rawBase);

  if (provider === "openai" && baseUrl !== undefined) {
    // Any OpenAI-compatible server; local ones need no key.
    return { ...common, provider, baseUrl, apiKey: apiKey ?? UNUSED_API_KEY, local: isLocalUrl(baseUrl) };
  }
  if (apiKey === undefined) {
    return unavailable(
      "missing_key",
      `${keyEnv} environment variable not found`,
      `Set it with: export ${keyEnv}=<your-key> (or "apiKey" in config.json)` +
        (provider === "openai" ? ', or point "baseUrl" at a local OpenAI-compatible server' : "") +
        `. ${NO_LLM_HINT}`,
    );
  }
  return {
    ...common,
    provider,
    apiKey,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    local: baseUrl !== undefined && isLocalUrl(baseUrl),
  };
}

/**
 * Settings for an injected model (tests, embedders): the configured names, timeouts and budget,
 * whether or not a key is present. Still honours CASS_MEMORY_LLM=none.
 */
export function settingsForInjectedModel(config: Config, env: Env): LlmSettingsResult {
  const resolved = resolveLlmSettings(config, env);
  if (resolved.available || resolved.code === "disabled") return resolved;
  const provider: LlmProviderName = config.provider === "bedrock" || config.provider === "cli" ? "openai" : config.provider;
  return {
    available: true,
    provider,
    model: nonEmpty(config.model) ?? "unknown",
    timeouts: resolveTimeouts(config, env),
    structuredOutputs: config.disableStructuredOutputs !== true,
    budget: budgetOf(config),
    local: provider === "ollama",
  };
}
