import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";
import { DEFAULT_OLLAMA_BASE_URL, ollamaOpenAiBase, type LlmSettings } from "./settings.js";

export interface CreateModelOptions {
  /** A fetch implementation for the provider (tests, proxies). Default: the global fetch. */
  fetch?: typeof globalThis.fetch;
}

/**
 * Builds the AI SDK model for resolved settings. OpenAI and every OpenAI-compatible server go
 * through the Chat Completions API (`/chat/completions`): local servers rarely implement the
 * Responses API that the SDK's default OpenAI model uses.
 */
export function createLanguageModel(settings: LlmSettings, options: CreateModelOptions = {}): LanguageModel {
  const fetchOption = options.fetch === undefined ? {} : { fetch: options.fetch };
  switch (settings.provider) {
    case "openai":
      return createOpenAI({
        ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
        ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
        ...fetchOption,
      }).chat(settings.model);
    case "ollama":
      return createOpenAICompatible({
        name: "ollama",
        baseURL: settings.baseUrl ?? ollamaOpenAiBase(DEFAULT_OLLAMA_BASE_URL),
        ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
        supportsStructuredOutputs: settings.structuredOutputs,
        ...fetchOption,
      }).chatModel(settings.model);
    case "anthropic":
      return createAnthropic({
        ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
        ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
        ...fetchOption,
      })(settings.model);
    case "google":
      return createGoogleGenerativeAI({
        ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
        ...(settings.baseUrl === undefined ? {} : { baseURL: settings.baseUrl }),
        ...fetchOption,
      })(settings.model);
  }
}
