import { OpenAICompatibleEmbeddingModel } from "@ai-sdk/openai-compatible";
import { embedMany } from "ai";
import { AppError, checkEmbeddings, isAppError, type Config, type Embedder } from "@cass-memory/core";
import { createTransformersEmbedder, defaultTransformersLoader, type TransformersLoader } from "./embed-transformers.js";
import { isLocalUrl, ollamaOpenAiBase, resolveOllamaRoot, type Env } from "./settings.js";

/**
 * Embedders for semantic search (core's `Embedder` port):
 * - `openai`: any OpenAI-compatible `POST <base>/embeddings` endpoint (OpenAI, vLLM, LM Studio,
 *   llama.cpp, TEI, a gateway) through the AI SDK's `embedMany`;
 * - `ollama`: the same client against Ollama's OpenAI-compatible endpoint (`<root>/v1`);
 * - `xenova` (the original's default): a local transformers.js model, loaded only when the user
 *   installed `@huggingface/transformers` (see embed-transformers.ts).
 * Every failure is an AppError `SEMANTIC_SEARCH_UNAVAILABLE` with a hint; callers fall back to
 * keyword search.
 */

export type EmbeddingBackend = "xenova" | "ollama" | "openai";

/** The original's default model; it names a transformers.js model, so the HTTP backends use their own default instead. */
export const XENOVA_DEFAULT_MODEL = "Xenova/all-MiniLM-L6-v2";
export const DEFAULT_EMBEDDING_MODELS: Readonly<Record<EmbeddingBackend, string>> = {
  xenova: XENOVA_DEFAULT_MODEL,
  ollama: "nomic-embed-text",
  openai: "text-embedding-3-small",
};
export const OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1";
/** Deadline of one `embed()` call (all its batches), unless config `embeddingTimeoutMs` says otherwise. */
export const DEFAULT_EMBEDDING_TIMEOUT_MS = 10_000;
/** Texts per HTTP request: small enough for servers with low batch limits (TEI allows 32 by default). */
export const DEFAULT_EMBEDDING_BATCH_SIZE = 32;
/** Requests in flight at once. */
export const EMBEDDING_PARALLEL_CALLS = 4;
/** A key for the embeddings endpoint only (else OPENAI_API_KEY for the `openai` backend). */
export const EMBEDDING_API_KEY_ENV = "CM_EMBEDDING_API_KEY";
/** Directory of transformers.js models (else config `embeddingModelDir`). */
export const EMBEDDING_MODEL_DIR_ENV = "CM_EMBEDDING_MODEL_DIR";

const OFF_HINT = "or set semanticSearchEnabled: false to use keyword search only";

export interface HttpEmbeddingSettings {
  backend: "openai" | "ollama";
  model: string;
  /** `…/v1`, without a trailing slash. */
  baseUrl: string;
  /** Absent for servers that need none (local ones). Never log it. */
  apiKey?: string;
  timeoutMs: number;
  batchSize: number;
}

export interface LocalEmbeddingSettings {
  backend: "xenova";
  model: string;
  /** Where transformers.js looks for (and caches) models; its own default when absent. */
  modelDir?: string;
  timeoutMs: number;
  batchSize: number;
  /** No downloads (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE set). */
  offline: boolean;
}

export type EmbeddingSettings = HttpEmbeddingSettings | LocalEmbeddingSettings;

function nonEmpty(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

function expandHome(path: string, env: Env): string {
  const home = nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE);
  if (home === undefined) return path;
  if (path === "~") return home;
  return path.startsWith("~/") ? `${home}${path.slice(1)}` : path;
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/**
 * Which embedder to build, from the configuration and the environment. Throws
 * SEMANTIC_SEARCH_UNAVAILABLE when the `openai` backend would call a remote endpoint without a key.
 */
export function resolveEmbeddingSettings(config: Config, env: Env): EmbeddingSettings {
  const backend: EmbeddingBackend = config.embeddingBackend ?? "xenova";
  const configured = nonEmpty(config.embeddingModel) ?? XENOVA_DEFAULT_MODEL;
  const model = backend !== "xenova" && configured === XENOVA_DEFAULT_MODEL ? DEFAULT_EMBEDDING_MODELS[backend] : configured;
  const timeoutMs =
    typeof config.embeddingTimeoutMs === "number" && Number.isInteger(config.embeddingTimeoutMs) && config.embeddingTimeoutMs > 0
      ? config.embeddingTimeoutMs
      : DEFAULT_EMBEDDING_TIMEOUT_MS;
  const batchSize = DEFAULT_EMBEDDING_BATCH_SIZE;

  if (backend === "xenova") {
    const dir = nonEmpty(config.embeddingModelDir) ?? nonEmpty(env[EMBEDDING_MODEL_DIR_ENV]);
    return {
      backend,
      model,
      ...(dir !== undefined ? { modelDir: expandHome(dir, env) } : {}),
      timeoutMs,
      batchSize,
      offline: truthy(env.HF_HUB_OFFLINE) || truthy(env.TRANSFORMERS_OFFLINE),
    };
  }

  const explicitBase = nonEmpty(config.embeddingBaseUrl);
  const baseUrl = (explicitBase ?? (backend === "ollama" ? ollamaOpenAiBase(resolveOllamaRoot(config, env)) : OPENAI_DEFAULT_BASE_URL)).replace(/\/+$/, "");
  const apiKey =
    nonEmpty(env[EMBEDDING_API_KEY_ENV]) ??
    (backend === "openai" ? (nonEmpty(env.OPENAI_API_KEY) ?? (config.provider === "openai" ? nonEmpty(config.apiKey) : undefined)) : undefined);
  if (backend === "openai" && apiKey === undefined && !isLocalUrl(baseUrl)) {
    throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `No API key for the embeddings endpoint ${baseUrl}`, {
      hint: `export OPENAI_API_KEY=<key> (or ${EMBEDDING_API_KEY_ENV}), point embeddingBaseUrl at a local server, ${OFF_HINT}`,
    });
  }
  return { backend, model, baseUrl, ...(apiKey !== undefined ? { apiKey } : {}), timeoutMs, batchSize };
}

export interface CreateEmbedderOptions {
  /** fetch for the HTTP backends (tests, proxies). Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** Loads transformers.js for the `xenova` backend (tests). Default: a dynamic import (see CM_TRANSFORMERS_MODULE). */
  loadTransformers?: TransformersLoader;
}

/**
 * The embedder the configuration asks for. The `xenova` backend loads its model here, so a missing
 * package or model is reported now (as SEMANTIC_SEARCH_UNAVAILABLE with an install hint).
 */
export async function createEmbedder(config: Config, env: Env, options: CreateEmbedderOptions = {}): Promise<Embedder> {
  const settings = resolveEmbeddingSettings(config, env);
  if (settings.backend === "xenova") {
    return createTransformersEmbedder(settings, { load: options.loadTransformers ?? defaultTransformersLoader(env) });
  }
  return createHttpEmbedder(settings, options.fetch !== undefined ? { fetch: options.fetch } : {});
}

/** Status, error codes, names and messages along an error's cause chain. */
function factsOf(error: unknown): { status?: number; codes: string[]; names: string[]; text: string } {
  const codes: string[] = [];
  const names: string[] = [];
  const texts: string[] = [];
  let status: number | undefined;
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== null && typeof current === "object"; depth++) {
    const record = current as Record<string, unknown>;
    const candidate = record.statusCode ?? record.status;
    if (status === undefined && typeof candidate === "number" && candidate >= 100 && candidate < 600) status = candidate;
    if (typeof record.code === "string") codes.push(record.code);
    if (typeof record.name === "string") names.push(record.name);
    if (typeof record.message === "string" && record.message !== "") texts.push(record.message);
    current = record.lastError ?? record.cause;
  }
  if (texts.length === 0) texts.push(String(error));
  return { ...(status !== undefined ? { status } : {}), codes, names, text: texts.join(": ") };
}

/** An AppError with a hint for what an embeddings request threw. */
export function toEmbeddingError(error: unknown, settings: Pick<HttpEmbeddingSettings, "backend" | "baseUrl" | "model" | "timeoutMs">): AppError {
  if (isAppError(error)) return error;
  const facts = factsOf(error);
  const fail = (message: string, hint: string) =>
    new AppError("SEMANTIC_SEARCH_UNAVAILABLE", message, {
      hint,
      cause: error,
      details: { backend: settings.backend, baseUrl: settings.baseUrl, model: settings.model, ...(facts.status !== undefined ? { status: facts.status } : {}) },
    });
  if (facts.names.includes("TimeoutError") || facts.names.includes("AbortError")) {
    return fail(`Embedding request to ${settings.baseUrl} timed out after ${settings.timeoutMs} ms`, `Raise embeddingTimeoutMs for slow servers, ${OFF_HINT}`);
  }
  if (facts.status === 401 || facts.status === 403) {
    return fail(`The embeddings endpoint ${settings.baseUrl} refused the API key (HTTP ${facts.status})`, `Check OPENAI_API_KEY or ${EMBEDDING_API_KEY_ENV}, ${OFF_HINT}`);
  }
  if (facts.status === 404) {
    const pull = settings.backend === "ollama" ? `Pull it with 'ollama pull ${settings.model}', or` : "Check embeddingModel and embeddingBaseUrl, or";
    return fail(`Embedding model '${settings.model}' not found at ${settings.baseUrl} (HTTP 404)`, `${pull} ${OFF_HINT.replace(/^or /, "")}`);
  }
  if (facts.status !== undefined) {
    return fail(`The embeddings endpoint ${settings.baseUrl} answered HTTP ${facts.status}: ${facts.text}`, `Check embeddingModel and embeddingBaseUrl, ${OFF_HINT}`);
  }
  const unreachable = ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ECONNRESET"].some((c) => facts.codes.includes(c) || facts.text.includes(c));
  if (unreachable || /fetch failed|Cannot connect/i.test(facts.text)) {
    const start = settings.backend === "ollama" ? "Start Ollama ('ollama serve') or set embeddingBaseUrl" : "Check that the server runs and embeddingBaseUrl is right";
    return fail(`Cannot reach the embeddings endpoint ${settings.baseUrl}: ${facts.text}`, `${start}, ${OFF_HINT}`);
  }
  return fail(`Embedding request failed: ${facts.text}`, `Check embeddingBackend, embeddingModel and embeddingBaseUrl, ${OFF_HINT}`);
}

/**
 * An embedder over an OpenAI-compatible `/embeddings` endpoint: texts are sent in batches of
 * `batchSize` (at most four requests at a time), with no retries (a failure falls back to keyword
 * search at once; the next call tries again) and one deadline for the whole call.
 */
export function createHttpEmbedder(settings: HttpEmbeddingSettings, options: { fetch?: typeof globalThis.fetch } = {}): Embedder {
  const model = new OpenAICompatibleEmbeddingModel(settings.model, {
    provider: `${settings.backend}.embedding`,
    url: ({ path }) => `${settings.baseUrl}${path}`,
    headers: () => (settings.apiKey !== undefined ? { Authorization: `Bearer ${settings.apiKey}` } : {}),
    maxEmbeddingsPerCall: settings.batchSize,
    supportsParallelCalls: true,
    ...(options.fetch !== undefined ? { fetch: options.fetch } : {}),
  });
  return {
    model: settings.model,
    async embed(texts) {
      if (texts.length === 0) return [];
      try {
        const { embeddings } = await embedMany({
          model,
          values: [...texts],
          maxRetries: 0,
          maxParallelCalls: EMBEDDING_PARALLEL_CALLS,
          abortSignal: AbortSignal.timeout(settings.timeoutMs),
        });
        return checkEmbeddings(embeddings, texts.length, settings.model);
      } catch (error) {
        throw toEmbeddingError(error, settings);
      }
    },
  };
}
