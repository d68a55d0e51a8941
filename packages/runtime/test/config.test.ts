import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { isAppError } from "@cass-memory/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LLM_DEPRECATION_WARNING, loadConfig } from "../src/config.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let globalDir: string;
let repoRoot: string;
let cleanup: () => void;

beforeEach(() => {
  const t = tempDir();
  root = t.path;
  cleanup = t.cleanup;
  globalDir = join(root, "home", ".cass-memory");
  repoRoot = join(root, "repo");
  mkdirSync(join(repoRoot, ".git"), { recursive: true });
  mkdirSync(globalDir, { recursive: true });
});
afterEach(() => cleanup());

const env = () => ({ HOME: join(root, "home") });
const writeGlobal = (value: unknown) => writeFile(join(globalDir, "config.json"), JSON.stringify(value, null, 2));
const writeRepo = (name: string, text: string) => writeFile(join(repoRoot, ".cass", name), text);

describe("loadConfig cascade", () => {
  it("returns the defaults when no file exists, with paths under the global dir", () => {
    const { config, warnings, sources } = loadConfig({ globalDir, repoRoot: null, env: env() });
    expect(config.maxBulletsInContext).toBe(50);
    expect(config.provider).toBe("anthropic");
    expect(config.playbookPath).toBe(join(globalDir, "playbook.yaml"));
    expect(config.diaryDir).toBe(join(globalDir, "diary"));
    expect(warnings).toEqual([]);
    expect(sources).toEqual({ global: null, repo: null });
  });

  it("applies defaults < global < env < repo", () => {
    writeGlobal({ maxBulletsInContext: 20, maxHistoryInContext: 4, cassPath: "/global/cass", model: "g-model", scoring: { harmfulMultiplier: 2 } });
    writeRepo("config.json", JSON.stringify({ maxBulletsInContext: 5, model: "repo-model", scoring: { decayHalfLifeDays: 30 } }));
    const { config, sources } = loadConfig({ globalDir, repoRoot, env: { ...env(), CASS_PATH: "/env/cass" } });
    expect(config.maxBulletsInContext).toBe(5); // repo over global
    expect(config.maxHistoryInContext).toBe(4); // global over defaults
    expect(config.cassPath).toBe("/env/cass"); // env over global
    expect(config.model).toBe("repo-model");
    expect(config.scoring).toMatchObject({ harmfulMultiplier: 2, decayHalfLifeDays: 30, minFeedbackForActive: 3 });
    expect(sources).toEqual({ global: join(globalDir, "config.json"), repo: join(repoRoot, ".cass", "config.json") });
  });

  it("ignores the repo layer outside a repository", () => {
    writeRepo("config.json", JSON.stringify({ maxBulletsInContext: 5 }));
    expect(loadConfig({ globalDir, repoRoot: null, env: env() }).config.maxBulletsInContext).toBe(50);
  });

  it("drops keys a repository may not set, with a warning, and unions extraPatterns", () => {
    writeGlobal({ cassPath: "/global/cass", sanitization: { extraPatterns: ["alpha", "beta"], enabled: true } });
    writeRepo(
      "config.json",
      JSON.stringify({
        cassPath: "/evil/cass",
        apiKey: "sk-evil",
        baseUrl: "http://evil.example",
        budget: { dailyLimit: 999 },
        serve: { maxConcurrentCassCalls: 99 },
        sanitization: { enabled: false, extraPatterns: [" beta ", "gamma"] },
        provider: "openai",
      }),
    );
    const { config, warnings } = loadConfig({ globalDir, repoRoot, env: env() });
    expect(config.cassPath).toBe("/global/cass");
    expect(config.apiKey).toBeUndefined();
    expect(config.baseUrl).toBeUndefined();
    expect(config.budget.dailyLimit).toBe(1);
    expect(config.serve.maxConcurrentCassCalls).toBe(2);
    expect(config.sanitization.enabled).toBe(true);
    expect(config.sanitization.extraPatterns).toEqual(["alpha", "beta", "gamma"]);
    expect(config.provider).toBe("openai"); // allowed
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("'cassPath'");
    expect(warnings[0]).toContain("'apiKey'");
    expect(warnings[0]).toContain("'sanitization'");
  });

  it("warns about a non-array repo extraPatterns", () => {
    writeRepo("config.json", JSON.stringify({ sanitization: { extraPatterns: "secret" } }));
    const { config, warnings } = loadConfig({ globalDir, repoRoot, env: env() });
    expect(config.sanitization.extraPatterns).toEqual([]);
    expect(warnings.some((w) => w.includes("Ignoring repo sanitization.extraPatterns"))).toBe(true);
  });

  it("reads a YAML repo config with snake_case keys (JSON preferred when both exist)", () => {
    writeRepo("config.yaml", "max_reflector_iterations: 7\nscoring:\n  decay_half_life_days: 45\nsemantic_search_enabled: true\n");
    let { config } = loadConfig({ globalDir, repoRoot, env: env() });
    expect(config.maxReflectorIterations).toBe(7);
    expect(config.scoring.decayHalfLifeDays).toBe(45);
    expect(config.semanticSearchEnabled).toBe(true);

    writeRepo("config.json", JSON.stringify({ maxReflectorIterations: 2 }));
    ({ config } = loadConfig({ globalDir, repoRoot, env: env() }));
    expect(config.maxReflectorIterations).toBe(2);
    expect(config.scoring.decayHalfLifeDays).toBe(90);
  });

  it("reads .cass/config.yml too", () => {
    writeRepo("config.yml", "min_relevance_score: 0.5\n");
    expect(loadConfig({ globalDir, repoRoot, env: env() }).config.minRelevanceScore).toBe(0.5);
  });

  it("treats an invalid global config.json as defaults, with a warning", () => {
    writeFile(join(globalDir, "config.json"), "{ not json");
    const { config, warnings, unreadable } = loadConfig({ globalDir, repoRoot: null, env: env() });
    expect(config.maxBulletsInContext).toBe(50);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Failed to load config from .*config\.json \(line 1\): /);
    // Reported so that writing commands can refuse to run.
    expect(unreadable).toMatchObject({ path: join(globalDir, "config.json"), line: 1 });
  });

  it("throws CONFIG_INVALID naming the file when the merged config is schema-invalid", () => {
    writeGlobal({ provider: "invalid-provider" });
    let caught: unknown;
    try {
      loadConfig({ globalDir, repoRoot: null, env: env() });
    } catch (error) {
      caught = error;
    }
    expect(isAppError(caught)).toBe(true);
    const err = caught as { code: string; message: string; hint?: string; exitCode: number };
    expect(err.code).toBe("CONFIG_INVALID");
    expect(err.exitCode).toBe(3);
    expect(err.message).toMatch(/^Configuration validation failed: provider/);
    expect(err.hint).toContain(join(globalDir, "config.json"));
  });

  it("names the repo file when the repo layer is invalid", () => {
    writeRepo("config.json", JSON.stringify({ maxBulletsInContext: "many" }));
    expect(() => loadConfig({ globalDir, repoRoot, env: env() })).toThrowError(/maxBulletsInContext/);
    try {
      loadConfig({ globalDir, repoRoot, env: env() });
    } catch (error) {
      expect((error as { hint: string }).hint).toContain(join(repoRoot, ".cass", "config.json"));
    }
  });

  it("migrates the deprecated llm shape once, with a warning", () => {
    writeGlobal({ llm: { provider: "openai", model: "gpt-x", timeoutMs: 1000, totalTimeoutMs: 5000 } });
    writeRepo("config.json", JSON.stringify({ llm: { model: "repo-model" } }));
    const { config, warnings } = loadConfig({ globalDir, repoRoot, env: env() });
    expect(config.provider).toBe("openai");
    expect(config.model).toBe("repo-model");
    expect(config.llmTimeoutMs).toBe(1000);
    expect(config.llmTotalTimeoutMs).toBe(5000);
    expect(config.llm).toBeUndefined();
    expect(warnings.filter((w) => w === LLM_DEPRECATION_WARNING)).toHaveLength(1);
  });

  it("keeps the top-level provider over llm.provider", () => {
    writeGlobal({ provider: "google", llm: { provider: "openai" } });
    expect(loadConfig({ globalDir, repoRoot: null, env: env() }).config.provider).toBe("google");
  });

  it("maps the environment variables of the env layer", () => {
    writeGlobal({ ollamaBaseUrl: "http://file:1" });
    const { config } = loadConfig({
      globalDir,
      repoRoot: null,
      env: {
        ...env(),
        OLLAMA_HOST: "gpu-box:11434",
        ANTHROPIC_BASE_URL: "http://proxy.local/v1",
        CASS_MEMORY_VERBOSE: "true",
        MCP_CASS_MAX_CONCURRENCY: "4",
        MCP_CASS_MAX_QUEUE: "8",
        MCP_CASS_QUEUE_TIMEOUT_MS: "1500",
      },
    });
    expect(config.ollamaBaseUrl).toBe("http://gpu-box:11434");
    expect(config.baseUrl).toBe("http://proxy.local/v1");
    expect(config.verbose).toBe(true);
    expect(config.serve).toEqual({ maxConcurrentCassCalls: 4, maxQueuedCassCalls: 8, cassQueueTimeoutMs: 1500 });
  });

  it("prefers OLLAMA_BASE_URL to OLLAMA_HOST and a file baseUrl to the env one", () => {
    writeGlobal({ baseUrl: "http://from-file" });
    const { config } = loadConfig({
      globalDir,
      repoRoot: null,
      env: { ...env(), OLLAMA_BASE_URL: "http://a:1", OLLAMA_HOST: "b:2", OPENAI_BASE_URL: "http://from-env" },
    });
    expect(config.ollamaBaseUrl).toBe("http://a:1");
    expect(config.baseUrl).toBe("http://from-file");
  });

  it("forces verbose from CASS_MEMORY_VERBOSE even when the repo turns it off", () => {
    writeRepo("config.json", JSON.stringify({ verbose: false }));
    expect(loadConfig({ globalDir, repoRoot, env: { ...env(), CASS_MEMORY_VERBOSE: "1" } }).config.verbose).toBe(true);
  });

  it("expands ~ in paths and keeps explicit playbook paths", () => {
    writeGlobal({ playbookPath: "~/rules/pb.yaml", diaryDir: "/abs/diary", cassPath: "~/bin/cass" });
    const { config } = loadConfig({ globalDir, repoRoot: null, env: env() });
    expect(config.playbookPath).toBe(join(root, "home", "rules", "pb.yaml"));
    expect(config.diaryDir).toBe("/abs/diary");
    expect(config.cassPath).toBe(join(root, "home", "bin", "cass"));
  });

  it("rewrites the literal default paths under CASS_MEMORY_HOME's directory", () => {
    const custom = join(root, "custom");
    writeGlobal({ playbookPath: "~/.cass-memory/playbook.yaml", diaryDir: "~/.cass-memory/diary" });
    const moved = join(custom);
    mkdirSync(moved, { recursive: true });
    writeFile(join(moved, "config.json"), JSON.stringify({ playbookPath: "~/.cass-memory/playbook.yaml" }));
    const { config } = loadConfig({ globalDir: moved, repoRoot: null, env: { ...env(), CASS_MEMORY_HOME: moved } });
    expect(config.playbookPath).toBe(join(moved, "playbook.yaml"));
    expect(config.diaryDir).toBe(join(moved, "diary"));
  });

  it("ignores a non-integer MCP_CASS_* value with a warning", () => {
    const { config, warnings } = loadConfig({ globalDir, repoRoot: null, env: { ...env(), MCP_CASS_MAX_QUEUE: "lots" } });
    expect(config.serve.maxQueuedCassCalls).toBe(32);
    expect(warnings[0]).toContain("MCP_CASS_MAX_QUEUE");
  });

  it("fails validation for an env value the schema rejects", () => {
    expect(() => loadConfig({ globalDir, repoRoot: null, env: { ...env(), MCP_CASS_MAX_CONCURRENCY: "0" } })).toThrowError(
      /Configuration validation failed: serve\.maxConcurrentCassCalls/,
    );
  });
});
