import { describe, expect, it } from "vitest";
import { isLocalUrl, ollamaOpenAiBase, resolveLlmSettings, settingsForInjectedModel } from "../src/settings.js";
import { testConfig } from "./helpers.js";

type Case = {
  name: string;
  config?: Record<string, unknown>;
  env?: Record<string, string>;
  expect: Record<string, unknown>;
};

const cases: Case[] = [
  {
    name: "CASS_MEMORY_LLM=none disables the LLM whatever is configured",
    config: { provider: "openai", model: "gpt-4o-mini" },
    env: { CASS_MEMORY_LLM: "none", OPENAI_API_KEY: "sk-x" },
    expect: { available: false, code: "disabled", reason: "LLM disabled by CASS_MEMORY_LLM=none" },
  },
  {
    name: "CASS_MEMORY_LLM is case-insensitive",
    env: { CASS_MEMORY_LLM: " NONE ", ANTHROPIC_API_KEY: "k" },
    expect: { available: false, code: "disabled" },
  },
  {
    name: "openai with OPENAI_API_KEY",
    config: { provider: "openai", model: "gpt-4o-mini" },
    env: { OPENAI_API_KEY: "sk-env" },
    expect: { available: true, provider: "openai", model: "gpt-4o-mini", apiKey: "sk-env", baseUrl: undefined, local: false },
  },
  {
    name: "config apiKey wins over the environment",
    config: { provider: "openai", model: "gpt-4o", apiKey: "sk-config" },
    env: { OPENAI_API_KEY: "sk-env" },
    expect: { available: true, apiKey: "sk-config" },
  },
  {
    name: "openai without a key and without baseUrl is unavailable (no silent fallback to another provider)",
    config: { provider: "openai", model: "gpt-4o-mini" },
    env: { ANTHROPIC_API_KEY: "sk-ant" },
    expect: { available: false, code: "missing_key", reason: "OPENAI_API_KEY environment variable not found" },
  },
  {
    name: "openai with a local baseUrl needs no key and is free",
    config: { provider: "openai", model: "qwen2.5-coder", baseUrl: "http://127.0.0.1:8080/v1/" },
    expect: { available: true, provider: "openai", baseUrl: "http://127.0.0.1:8080/v1", apiKey: "unused", local: true },
  },
  {
    name: "OPENAI_BASE_URL is used when config has no baseUrl",
    config: { provider: "openai", model: "m" },
    env: { OPENAI_BASE_URL: "https://gateway.example.com/v1" },
    expect: { available: true, baseUrl: "https://gateway.example.com/v1", apiKey: "unused", local: false },
  },
  {
    name: "config baseUrl wins over OPENAI_BASE_URL",
    config: { provider: "openai", model: "m", baseUrl: "http://localhost:1234/v1" },
    env: { OPENAI_BASE_URL: "https://other.example.com/v1", OPENAI_API_KEY: "sk" },
    expect: { available: true, baseUrl: "http://localhost:1234/v1", apiKey: "sk", local: true },
  },
  {
    name: "anthropic with ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL",
    config: { provider: "anthropic", model: "claude-sonnet-5" },
    env: { ANTHROPIC_API_KEY: "sk-ant", ANTHROPIC_BASE_URL: "https://proxy.example.com/v1" },
    expect: { available: true, provider: "anthropic", apiKey: "sk-ant", baseUrl: "https://proxy.example.com/v1" },
  },
  {
    name: "anthropic without a key is unavailable with a hint",
    config: { provider: "anthropic", model: "claude-sonnet-5" },
    env: { OPENAI_API_KEY: "sk" },
    expect: { available: false, code: "missing_key", reason: "ANTHROPIC_API_KEY environment variable not found" },
  },
  {
    name: "google with GOOGLE_GENERATIVE_AI_API_KEY",
    config: { provider: "google", model: "gemini-2.0-flash" },
    env: { GOOGLE_GENERATIVE_AI_API_KEY: "AIza-test" },
    expect: { available: true, provider: "google", apiKey: "AIza-test" },
  },
  {
    name: "google without a key",
    config: { provider: "google", model: "gemini-2.0-flash" },
    expect: { available: false, code: "missing_key", reason: "GOOGLE_GENERATIVE_AI_API_KEY environment variable not found" },
  },
  {
    name: "ollama from config, no key needed",
    config: { provider: "ollama", model: "llama3.2:3b" },
    expect: { available: true, provider: "ollama", baseUrl: "http://localhost:11434/v1", apiKey: undefined, local: true },
  },
  {
    name: "ollama: OLLAMA_BASE_URL beats OLLAMA_HOST and config",
    config: { provider: "ollama", model: "llama3", ollamaBaseUrl: "http://cfg:11434" },
    env: { OLLAMA_BASE_URL: "http://gpu-box:11434/", OLLAMA_HOST: "other:1" },
    expect: { baseUrl: "http://gpu-box:11434/v1" },
  },
  {
    name: "ollama: a bare OLLAMA_HOST gets http://",
    config: { provider: "ollama", model: "llama3", ollamaBaseUrl: "http://cfg:11434" },
    env: { OLLAMA_HOST: "10.0.0.5:11434" },
    expect: { baseUrl: "http://10.0.0.5:11434/v1" },
  },
  {
    name: "bedrock is reported as unsupported",
    config: { provider: "bedrock", model: "anthropic.claude" },
    env: { AWS_PROFILE: "x" },
    expect: { available: false, code: "unsupported_provider" },
  },
  {
    name: "cli is reported as unsupported",
    config: { provider: "cli", model: "default" },
    expect: { available: false, code: "unsupported_provider" },
  },
  {
    name: "an empty model name is unavailable",
    config: { provider: "ollama", model: "  " },
    expect: { available: false, code: "no_model" },
  },
  {
    name: "default timeouts",
    config: { provider: "ollama", model: "m" },
    expect: { timeouts: { perCallMs: 30_000, totalMs: 120_000 } },
  },
  {
    name: "timeouts from the environment",
    config: { provider: "ollama", model: "m" },
    env: { CM_LLM_TIMEOUT_MS: "5000", CM_LLM_TOTAL_TIMEOUT_MS: "60000" },
    expect: { timeouts: { perCallMs: 5000, totalMs: 60_000 } },
  },
  {
    name: "config timeouts beat the environment; the total is at least three calls",
    config: { provider: "ollama", model: "m", llmTimeoutMs: 50_000, llmTotalTimeoutMs: 60_000 },
    env: { CM_LLM_TIMEOUT_MS: "5000" },
    expect: { timeouts: { perCallMs: 50_000, totalMs: 150_000 } },
  },
  {
    name: "invalid environment timeouts are ignored",
    config: { provider: "ollama", model: "m" },
    env: { CM_LLM_TIMEOUT_MS: "soon", CM_LLM_TOTAL_TIMEOUT_MS: "-3" },
    expect: { timeouts: { perCallMs: 30_000, totalMs: 120_000 } },
  },
  {
    name: "disableStructuredOutputs turns JSON-schema output off",
    config: { provider: "ollama", model: "m", disableStructuredOutputs: true },
    expect: { structuredOutputs: false },
  },
  {
    name: "structured outputs are on by default; budget limits come from config",
    config: { provider: "ollama", model: "m", budget: { dailyLimit: 0, monthlyLimit: -1, warningThreshold: 80, currency: "USD" } },
    expect: { structuredOutputs: true, budget: { dailyLimit: 0, monthlyLimit: -1 } },
  },
];

describe("resolveLlmSettings", () => {
  it.each(cases)("$name", ({ config, env, expect: expected }) => {
    const result = resolveLlmSettings(testConfig(config), env ?? {});
    for (const [key, value] of Object.entries(expected)) {
      expect((result as unknown as Record<string, unknown>)[key], key).toEqual(value);
    }
  });

  it("unavailable results carry a hint that mentions CASS_MEMORY_LLM=none", () => {
    const result = resolveLlmSettings(testConfig({ provider: "anthropic" }), {});
    expect(result.available).toBe(false);
    if (!result.available) expect(result.hint).toContain("ANTHROPIC_API_KEY");
    const bedrock = resolveLlmSettings(testConfig({ provider: "bedrock" }), {});
    if (bedrock.available) throw new Error("bedrock must be unavailable");
    expect(bedrock.hint).toMatch(/baseUrl/);
    expect(bedrock.hint).toMatch(/ollama/);
  });

  it("never invents a model: the configured name is used as is", () => {
    const result = resolveLlmSettings(testConfig({ provider: "openai", model: "my-finetune", baseUrl: "http://localhost:8000/v1" }), {});
    expect(result.available && result.model).toBe("my-finetune");
  });
});

describe("settingsForInjectedModel", () => {
  it("does not need a key but still honours CASS_MEMORY_LLM=none", () => {
    expect(settingsForInjectedModel(testConfig({ provider: "anthropic", model: "claude-sonnet-5" }), {})).toMatchObject({
      available: true,
      provider: "anthropic",
      model: "claude-sonnet-5",
    });
    expect(settingsForInjectedModel(testConfig(), { CASS_MEMORY_LLM: "none" })).toMatchObject({ available: false, code: "disabled" });
  });
});

describe("URL helpers", () => {
  it.each([
    ["http://localhost:11434", true],
    ["http://127.0.0.1:8080/v1", true],
    ["http://192.168.1.20:1234/v1", true],
    ["http://10.1.2.3/v1", true],
    ["http://172.20.0.2:8000", true],
    ["http://[::1]:8080", true],
    ["http://gpu.local:11434", true],
    ["https://api.openai.com/v1", false],
    ["https://openrouter.ai/api/v1", false],
    ["http://172.32.0.1", false],
    ["not a url", false],
  ])("isLocalUrl(%s) = %s", (url, expected) => {
    expect(isLocalUrl(url)).toBe(expected);
  });

  it.each([
    ["http://localhost:11434", "http://localhost:11434/v1"],
    ["http://localhost:11434/", "http://localhost:11434/v1"],
    ["http://localhost:11434/v1", "http://localhost:11434/v1"],
    ["http://localhost:11434/api", "http://localhost:11434/v1"],
  ])("ollamaOpenAiBase(%s) = %s", (root, expected) => {
    expect(ollamaOpenAiBase(root)).toBe(expected);
  });
});
