import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  AppError,
  ConfigSchema,
  checkConfig,
  REPO_FORBIDDEN_CONFIG_KEYS,
  camelizeDeep,
  formatZodIssues,
  isPlainObject,
  type Config,
} from "@cass-memory/core";
import { fromYaml } from "@cass-memory/store-yaml";
import { expandHome } from "./paths.js";
import { resolveSqlitePath, storageFromEnv } from "./storage/backend.js";

/**
 * The configuration cascade, later layers win:
 *
 *   defaults < global `<globalDir>/config.json` < repo `.cass/config.{json,yaml,yml}` < environment
 *
 * The original put the environment below the repository; the only key both may set is `verbose`,
 * which `CASS_MEMORY_VERBOSE` forced on there too, so the results are the same and the order now
 * reads as users expect (an explicit environment variable beats a committed file).
 * (CLI overrides would come last; no flag maps to a config key today.) Nested objects are merged
 * key-wise. A repository may not set the keys of `REPO_FORBIDDEN_CONFIG_KEYS`; its
 * `sanitization.extraPatterns` are added to the global ones rather than replacing them.
 * `storage` is among those keys: one backend serves both layers of the user's store, so a
 * committed `.cass/config.*` cannot move the user's global memory to another backend or file.
 * `storage.path` is resolved to an absolute path (default `<globalDir>/cass-memory.sqlite`).
 */

type Env = Record<string, string | undefined>;
type Raw = Record<string, unknown>;

export const DEFAULT_PLAYBOOK_PATH = "~/.cass-memory/playbook.yaml";
export const DEFAULT_DIARY_DIR = "~/.cass-memory/diary";
export const REPO_CONFIG_FILES = ["config.json", "config.yaml", "config.yml"] as const;

export interface LoadConfigOptions {
  globalDir: string;
  /** The git root, or null outside a repository (then no repo layer is read). */
  repoRoot: string | null;
  env?: Env;
  /**
   * Do not throw on a schema-invalid result: the offending top-level keys fall back to their
   * defaults and each problem is reported in `problems` (used by `cm doctor`, which must run on a
   * broken configuration to diagnose it).
   */
  tolerateInvalid?: boolean;
}

export interface LoadedConfig {
  config: Config;
  /** Human-readable warnings (invalid global JSON, ignored repo keys, deprecated shapes). */
  warnings: string[];
  /** The files that contributed a layer (null when absent). */
  sources: { global: string | null; repo: string | null };
  /**
   * Problems for which defaults were used instead: config files that could not be read or parsed
   * and, with `tolerateInvalid`, settings that failed validation. Also present in `warnings`.
   */
  problems: string[];
  /**
   * The global config.json exists but could not be read or parsed (defaults were used). Commands
   * may still read with defaults, but must not write: with the file's `storage` settings unknown,
   * a write could go to the wrong store.
   */
  unreadable: UnreadableConfig | null;
}

export interface UnreadableConfig {
  path: string;
  message: string;
  /** 1-based line of the syntax error, when known. */
  line: number | null;
}

/** The line of a JSON.parse error: from its "position N" / "line N", else the end of the text (truncated input). */
export function jsonErrorLine(text: string, message: string): number | null {
  const line = /\bline (\d+)/.exec(message);
  if (line) return Number(line[1]);
  const position = /\bposition (\d+)/.exec(message);
  let offset = position ? Math.min(Number(position[1]), text.length) : /end of (JSON|data)/i.test(message) ? text.length : null;
  if (offset === null) {
    // V8 may instead quote the text around the bad token: `…"<before><token><after>" is not valid JSON`.
    const quoted = /"(?:\.\.\.)?([\s\S]*?)(?:\.\.\.)?" is not valid JSON/.exec(message);
    const at = quoted?.[1] ? text.indexOf(quoted[1]) : -1;
    if (at >= 0) offset = at + Math.floor(quoted![1]!.length / 2);
  }
  if (offset === null) return null;
  let count = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) count++;
  return offset === text.length && text.endsWith("\n") ? count - 1 : count;
}

export const LLM_DEPRECATION_WARNING =
  "Config uses deprecated 'llm.provider/llm.model' shape; move them to top-level 'provider' and 'model' (and llm.timeoutMs/totalTimeoutMs to llmTimeoutMs/llmTotalTimeoutMs).";

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function readOptional(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw error;
  }
}

/**
 * Reads the global config.json. Missing → `{}`; unreadable or invalid → warning and `{}` (as the
 * original), reported in `unreadable` so that writing commands can refuse to run.
 */
function readGlobalLayer(path: string, warnings: string[]): { raw: Raw; present: boolean; unreadable: UnreadableConfig | null } {
  let text: string | null = null;
  try {
    text = readOptional(path);
    if (text === null) return { raw: {}, present: false, unreadable: null };
    const parsed: unknown = JSON.parse(text);
    if (!isPlainObject(parsed)) throw new Error("expected a JSON object");
    return { raw: parsed, present: true, unreadable: null };
  } catch (error) {
    const message = errorMessage(error);
    const line = text === null ? null : jsonErrorLine(text, message);
    warnings.push(`Failed to load config from ${path}${line !== null ? ` (line ${line})` : ""}: ${message}`);
    return { raw: {}, present: false, unreadable: { path, message, line } };
  }
}

/** Reads `.cass/config.json`, else `.yaml`, else `.yml`. YAML keys are camelized deeply. */
function readRepoLayer(repoRoot: string, warnings: string[]): { raw: Raw; path: string | null } {
  for (const name of REPO_CONFIG_FILES) {
    const path = join(repoRoot, ".cass", name);
    let text: string | null;
    try {
      text = readOptional(path);
    } catch (error) {
      warnings.push(`Failed to load config from ${path}: ${errorMessage(error)}`);
      return { raw: {}, path: null };
    }
    if (text === null) continue;
    try {
      const parsed: unknown = name === "config.json" ? JSON.parse(text) : camelizeDeep(fromYaml(text, path) ?? {});
      if (!isPlainObject(parsed)) throw new Error("expected a mapping of keys to values");
      return { raw: parsed, path };
    } catch (error) {
      warnings.push(`Failed to load config from ${path}: ${errorMessage(error)}`);
      return { raw: {}, path: null };
    }
  }
  return { raw: {}, path: null };
}

/** Moves the deprecated `llm.{provider,model,timeoutMs,totalTimeoutMs}` shape to the top level. */
function migrateLlmShape(layer: Raw): boolean {
  const llm = layer.llm;
  if (!isPlainObject(llm)) return false;
  if (layer.provider === undefined && llm.provider !== undefined) layer.provider = llm.provider;
  if (layer.model === undefined && llm.model !== undefined) layer.model = llm.model;
  if (layer.llmTimeoutMs === undefined && llm.timeoutMs !== undefined) layer.llmTimeoutMs = llm.timeoutMs;
  if (layer.llmTotalTimeoutMs === undefined && llm.totalTimeoutMs !== undefined) layer.llmTotalTimeoutMs = llm.totalTimeoutMs;
  delete layer.llm;
  return true;
}

function parseEnvInt(name: string, value: string | undefined, warnings: string[]): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  if (!/^-?\d+$/.test(value.trim())) {
    warnings.push(`Ignoring ${name}=${JSON.stringify(value)}: not an integer.`);
    return undefined;
  }
  return Number.parseInt(value.trim(), 10);
}

function isTruthyFlag(value: string | undefined): boolean {
  return value !== undefined && ["1", "true"].includes(value.trim().toLowerCase());
}

/** The environment layer (reference §3.5). `globalRaw` decides whether an env base URL applies. */
function envLayer(env: Env, globalRaw: Raw, warnings: string[]): Raw {
  const layer: Raw = {};
  const cassPath = env.CASS_PATH?.trim();
  if (cassPath) layer.cassPath = cassPath;
  // Ours: choose the history source (auto | cass | native | none).
  const episodic = env.CASS_MEMORY_EPISODIC?.trim().toLowerCase();
  if (episodic) layer.episodic = episodic;

  const ollamaBase = env.OLLAMA_BASE_URL?.trim();
  const ollamaHost = env.OLLAMA_HOST?.trim();
  if (ollamaBase) layer.ollamaBaseUrl = ollamaBase;
  else if (ollamaHost) layer.ollamaBaseUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(ollamaHost) ? ollamaHost : `http://${ollamaHost}`;

  if (globalRaw.baseUrl === undefined) {
    const base = [env.OPENAI_BASE_URL, env.ANTHROPIC_BASE_URL, env.GOOGLE_BASE_URL].map((v) => v?.trim()).find((v) => v);
    if (base) layer.baseUrl = base;
  }
  if (isTruthyFlag(env.CASS_MEMORY_VERBOSE)) layer.verbose = true;

  const serve: Raw = {};
  const concurrency = parseEnvInt("MCP_CASS_MAX_CONCURRENCY", env.MCP_CASS_MAX_CONCURRENCY, warnings);
  const queue = parseEnvInt("MCP_CASS_MAX_QUEUE", env.MCP_CASS_MAX_QUEUE, warnings);
  const timeout = parseEnvInt("MCP_CASS_QUEUE_TIMEOUT_MS", env.MCP_CASS_QUEUE_TIMEOUT_MS, warnings);
  if (concurrency !== undefined) serve.maxConcurrentCassCalls = concurrency;
  if (queue !== undefined) serve.maxQueuedCassCalls = queue;
  if (timeout !== undefined) serve.cassQueueTimeoutMs = timeout;
  if (Object.keys(serve).length > 0) layer.serve = serve;
  return layer;
}

/** Removes the keys a repository may not set; returns the repo's additive extraPatterns. */
function sanitizeRepoLayer(layer: Raw, path: string, warnings: string[]): string[] {
  let extra: string[] = [];
  const sanitization = layer.sanitization;
  if (sanitization !== undefined) {
    const patterns = isPlainObject(sanitization) ? sanitization.extraPatterns : undefined;
    if (Array.isArray(patterns) && patterns.every((p) => typeof p === "string")) {
      extra = patterns;
    } else if (isPlainObject(sanitization) && patterns !== undefined) {
      warnings.push(`Ignoring repo sanitization.extraPatterns in ${path}: expected an array of strings.`);
    }
  }
  const removed: string[] = [];
  for (const key of REPO_FORBIDDEN_CONFIG_KEYS) {
    if (!(key in layer)) continue;
    delete layer[key];
    const onlyPatterns =
      key === "sanitization" && isPlainObject(sanitization) && Object.keys(sanitization).every((k) => k === "extraPatterns");
    if (!onlyPatterns) removed.push(key);
  }
  if (removed.length > 0) {
    warnings.push(
      `Ignoring ${removed.map((k) => `'${k}'`).join(", ")} in ${path}: a repository config may not set ${removed.length === 1 ? "this key" : "these keys"} (only the user's global config can).`,
    );
  }
  return extra;
}

/** Top-level later-wins merge; plain-object values are merged one level deep, key-wise. */
function mergeLayer(base: Raw, layer: Raw): Raw {
  const out: Raw = { ...base };
  for (const [key, value] of Object.entries(layer)) {
    if (value === undefined) continue;
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? { ...prev, ...value } : value;
  }
  return out;
}

function unionPatterns(...lists: unknown[][]): string[] {
  const out: string[] = [];
  for (const list of lists) {
    for (const item of list) {
      if (typeof item !== "string") continue;
      const trimmed = item.trim();
      if (trimmed !== "" && !out.includes(trimmed)) out.push(trimmed);
    }
  }
  return out;
}

/**
 * Loads and validates the merged configuration. Throws AppError `CONFIG_INVALID` when the merged
 * result does not satisfy the schema; everything softer is reported in `warnings`.
 */
export function loadConfig(options: LoadConfigOptions): LoadedConfig {
  const env = options.env ?? process.env;
  const warnings: string[] = [];
  const problems: string[] = [];
  const globalPath = join(options.globalDir, "config.json");
  const global = readGlobalLayer(globalPath, warnings);
  const repo = options.repoRoot !== null ? readRepoLayer(options.repoRoot, warnings) : { raw: {}, path: null };
  problems.push(...warnings.filter((w) => w.startsWith("Failed to load config from ")));

  const migrated = migrateLlmShape(global.raw);
  const repoMigrated = migrateLlmShape(repo.raw);
  if (migrated || repoMigrated) warnings.push(LLM_DEPRECATION_WARNING);

  const repoPatterns = repo.path !== null ? sanitizeRepoLayer(repo.raw, repo.path, warnings) : [];
  const envRaw = envLayer(env, global.raw, warnings);
  // CASS_MEMORY_STORAGE / CASS_MEMORY_STORAGE_PATH (an invalid backend is an error of its own, with a hint).
  const storageEnv = storageFromEnv(env);
  if (storageEnv.error !== null) {
    if (!options.tolerateInvalid) throw storageEnv.error;
    problems.push(`${storageEnv.error.message} Using storage.backend of the configuration.`);
    warnings.push(`${storageEnv.error.message} Using storage.backend of the configuration.`);
  } else if (storageEnv.storage !== null) {
    envRaw.storage = storageEnv.storage;
  }

  let merged = mergeLayer(mergeLayer(global.raw, repo.raw), envRaw);
  const globalSanitization = global.raw.sanitization;
  if (repoPatterns.length > 0) {
    const globalPatterns = isPlainObject(globalSanitization) && Array.isArray(globalSanitization.extraPatterns) ? globalSanitization.extraPatterns : [];
    merged = mergeLayer(merged, { sanitization: { extraPatterns: unionPatterns(globalPatterns, repoPatterns) } });
  } else if (isPlainObject(globalSanitization) && Array.isArray(globalSanitization.extraPatterns)) {
    merged = mergeLayer(merged, { sanitization: { extraPatterns: unionPatterns(globalSanitization.extraPatterns) } });
  }

  // The plain check first (core's checkConfig: the same result for a plainly valid configuration,
  // without building the schema); anything else goes through the schema, which reports errors.
  // jitless: one object is parsed; compiling zod's fast path for it costs more than it saves.
  const checked = checkConfig(merged);
  const parsed = checked !== undefined ? ({ success: true, data: checked } as const) : ConfigSchema.safeParse(merged, { jitless: true });
  const sources = { global: global.present ? globalPath : null, repo: repo.path };
  let validated: Config;
  if (parsed.success) {
    validated = parsed.data;
  } else if (options.tolerateInvalid) {
    validated = tolerantParse(merged, sources, warnings, problems);
  } else {
    const files = [sources.global, sources.repo].filter((f): f is string => f !== null);
    const issues = formatZodIssues(parsed.error);
    throw new AppError("CONFIG_INVALID", `Configuration validation failed: ${issues}`, {
      hint:
        files.length > 0
          ? `Fix ${files.join(" or ")} (or the CASS_*/MCP_CASS_* environment variables) and re-run.`
          : "Check the CASS_*/MCP_CASS_*/OLLAMA_* environment variables.",
      details: { files, issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
      cause: parsed.error,
    });
  }

  const config = validated;
  if (config.playbookPath === DEFAULT_PLAYBOOK_PATH) config.playbookPath = join(options.globalDir, "playbook.yaml");
  if (config.diaryDir === DEFAULT_DIARY_DIR) config.diaryDir = join(options.globalDir, "diary");
  config.playbookPath = expandHome(config.playbookPath, env);
  config.diaryDir = expandHome(config.diaryDir, env);
  config.cassPath = expandHome(config.cassPath, env);
  config.storage.path = resolveSqlitePath(config.storage.path, options.globalDir, env);
  return { config, warnings, sources, problems, unreadable: global.unreadable };
}

/**
 * Validates `merged`, dropping the top-level keys that fail (so they take their defaults) until
 * the rest validates; each dropped key is reported. Falls back to the full defaults when the
 * problem cannot be pinned to a key.
 */
function tolerantParse(merged: Raw, sources: { global: string | null; repo: string | null }, warnings: string[], problems: string[]): Config {
  const files = [sources.global, sources.repo].filter((f): f is string => f !== null);
  const where = files.length > 0 ? ` (from ${files.join(" or ")} or the environment)` : "";
  let candidate: Raw = { ...merged };
  for (let round = 0; round < 8; round++) {
    const result = ConfigSchema.safeParse(candidate);
    if (result.success) return result.data;
    const keys = [...new Set(result.error.issues.map((i) => (i.path.length > 0 ? String(i.path[0]) : "")))];
    const problem = `Invalid configuration${where}: ${formatZodIssues(result.error)}`;
    if (keys.includes("")) {
      problems.push(`${problem}; using the default configuration`);
      warnings.push(`${problem}; using the default configuration`);
      return ConfigSchema.parse({});
    }
    const message = `${problem}; using the default${keys.length === 1 ? "" : "s"} for ${keys.map((k) => `'${k}'`).join(", ")}`;
    problems.push(message);
    warnings.push(message);
    candidate = Object.fromEntries(Object.entries(candidate).filter(([key]) => !keys.includes(key)));
  }
  problems.push("Configuration could not be validated; using the default configuration");
  return ConfigSchema.parse({});
}
