import * as z from "zod";
import { lazySchema } from "./lazy.js";

/**
 * The configuration of cm with every key and default of the original (reference §3.1), in the
 * original's key order (`cm init` writes the full default object in this order). Unknown keys are
 * preserved so that a newer cm's settings survive a rewrite by this one.
 */

/** The stores `storage.backend` can select. */
export const STORAGE_BACKENDS = ["yaml", "sqlite", "postgres"] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

export const LLM_PROVIDERS = ["openai", "anthropic", "google", "ollama", "bedrock", "cli"] as const;
export type LlmProvider = (typeof LLM_PROVIDERS)[number];

export const DEFAULT_SESSION_EXCLUDE_PATTERNS = [
  "prompt_suggestion",
  "prompt-suggestion",
  "auto_complete",
  "auto-complete",
  "inline_completion",
  "inline-completion",
  "/subagents/agent-a",
  "/subagents/workflows/",
] as const;

export const ScoringConfigSchema = lazySchema(() => z.looseObject({
  decayHalfLifeDays: z.number().default(90),
  harmfulMultiplier: z.number().default(4),
  minFeedbackForActive: z.number().default(3),
  minHelpfulForProven: z.number().default(10),
  maxHarmfulRatioForProven: z.number().default(0.1),
}));
export type ScoringConfig = z.output<typeof ScoringConfigSchema>;

const positiveInt = lazySchema(() => z.number().int().positive());

export const ConfigSchema = lazySchema(() => z.looseObject({
  schema_version: z.number().default(1),
  provider: z.enum(LLM_PROVIDERS).default("anthropic"),
  model: z.string().default("claude-sonnet-5"),
  llm: z
    .looseObject({
      provider: z.string().optional(),
      model: z.string().optional(),
      timeoutMs: positiveInt.optional(),
      totalTimeoutMs: positiveInt.optional(),
    })
    .optional(),
  llmTimeoutMs: positiveInt.optional(),
  llmTotalTimeoutMs: positiveInt.optional(),
  cassPath: z.string().default("cass"),
  /**
   * Where session history comes from (beyond the original): `cass` (the cass CLI), `native` (our
   * own readers of agents' session files), `auto` (cass when it is installed and healthy, else
   * native), or `none`.
   */
  episodic: z.enum(["auto", "cass", "native", "none"]).default("auto"),
  /** Extra session directories per agent for the native readers, e.g. `{ "claude_code": ["/data/claude"] }`. */
  sessionRoots: z.record(z.string(), z.array(z.string())).default({}),
  remoteCass: z
    .looseObject({
      enabled: z.boolean().default(false),
      hosts: z.array(z.looseObject({ host: z.string().min(1), label: z.string().optional() })).default([]),
    })
    .default({ enabled: false, hosts: [] }),
  playbookPath: z.string().default("~/.cass-memory/playbook.yaml"),
  diaryDir: z.string().default("~/.cass-memory/diary"),
  scoring: ScoringConfigSchema.default({
    decayHalfLifeDays: 90,
    harmfulMultiplier: 4,
    minFeedbackForActive: 3,
    minHelpfulForProven: 10,
    maxHarmfulRatioForProven: 0.1,
  }),
  maxReflectorIterations: z.number().default(3),
  autoReflect: z.boolean().default(false),
  sessionExcludePatterns: z.array(z.string()).default([...DEFAULT_SESSION_EXCLUDE_PATTERNS]),
  sessionIncludeAll: z.boolean().default(false),
  dedupSimilarityThreshold: z.number().default(0.85),
  pruneHarmfulThreshold: z.number().default(3),
  defaultDecayHalfLife: z.number().default(90),
  /**
   * Beyond the original: the largest inputs operations accept, in bytes of UTF-8 (task, rule text,
   * category, feedback reason, search query); larger ones fail with INVALID_INPUT. Defaults in
   * `DEFAULT_INPUT_LIMITS` (8 KiB, 4 KiB, 128, 2 KiB, 2 KiB, and 64 MiB for input files).
   */
  inputLimits: z
    .looseObject({
      taskBytes: positiveInt.optional(),
      ruleBytes: positiveInt.optional(),
      categoryBytes: positiveInt.optional(),
      reasonBytes: positiveInt.optional(),
      queryBytes: positiveInt.optional(),
      fileBytes: positiveInt.optional(),
    })
    .optional(),
  maxBulletsInContext: z.number().default(50),
  maxHistoryInContext: z.number().default(10),
  sessionLookbackDays: z.number().default(7),
  validationLookbackDays: z.number().default(90),
  relatedSessionsDays: z.number().default(30),
  minRelevanceScore: z.number().default(0.1),
  maxRelatedSessions: z.number().default(5),
  validationEnabled: z.boolean().default(true),
  crossAgent: z
    .looseObject({
      enabled: z.boolean().default(false),
      consentGiven: z.boolean().default(false),
      consentDate: z.string().nullable().optional(),
      agents: z.array(z.string()).default([]),
      auditLog: z.boolean().default(true),
    })
    .default({ enabled: false, consentGiven: false, agents: [], auditLog: true }),
  semanticSearchEnabled: z.boolean().default(false),
  semanticWeight: z.number().min(0).max(1).default(0.6),
  /**
   * `xenova`: a local transformers.js model (needs `@huggingface/transformers` installed next to
   * cm); `ollama`: Ollama's OpenAI-compatible endpoint; `openai` (beyond the original): any
   * OpenAI-compatible `/embeddings` endpoint (OpenAI, vLLM, LM Studio, a gateway).
   */
  embeddingBackend: z.enum(["xenova", "ollama", "openai"]).default("xenova"),
  embeddingModel: z.string().default("Xenova/all-MiniLM-L6-v2"),
  /**
   * Beyond the original: base URL of the embeddings endpoint (`…/v1`) for the `openai` and
   * `ollama` backends (default https://api.openai.com/v1, or Ollama's `<ollamaBaseUrl>/v1`).
   */
  embeddingBaseUrl: z.string().min(1).optional(),
  /** Beyond the original: where the `xenova` backend finds (and caches) models. */
  embeddingModelDir: z.string().min(1).optional(),
  /** Beyond the original: deadline of one embedding request in ms (default 10 000). */
  embeddingTimeoutMs: positiveInt.optional(),
  verbose: z.boolean().default(false),
  jsonOutput: z.boolean().default(false),
  apiKey: z.string().optional(),
  baseUrl: z.string().optional(),
  ollamaBaseUrl: z.string().default("http://localhost:11434"),
  disableStructuredOutputs: z.boolean().default(false),
  /**
   * What reflect/diary/validate do when an LLM call fails (budget exhausted, server down, replies
   * malformed after retries): `deterministic` (default) answers with the offline components and
   * reports it; `none` fails the session instead. Beyond the original.
   */
  llmFallback: z.enum(["deterministic", "none"]).optional(),
  sanitization: z
    .looseObject({
      enabled: z.boolean().default(true),
      extraPatterns: z.array(z.string()).default([]),
      /** Literal strings, or `/regex/flags`, that are never treated as secrets. */
      allowlist: z.array(z.string()).default([]),
      auditLog: z.boolean().default(false),
      auditLevel: z.enum(["off", "info", "debug"]).default("info"),
    })
    .default({ enabled: true, extraPatterns: [], allowlist: [], auditLog: false, auditLevel: "info" }),
  budget: z
    .looseObject({
      dailyLimit: z.number().default(1),
      monthlyLimit: z.number().default(20),
      warningThreshold: z.number().default(80),
      currency: z.string().default("USD"),
    })
    .default({ dailyLimit: 1, monthlyLimit: 20, warningThreshold: 80, currency: "USD" }),
  serve: z
    .looseObject({
      maxConcurrentCassCalls: z.number().int().positive().default(2),
      maxQueuedCassCalls: z.number().int().min(0).default(32),
      cassQueueTimeoutMs: z.number().int().min(0).default(20000),
    })
    .default({ maxConcurrentCassCalls: 2, maxQueuedCassCalls: 32, cassQueueTimeoutMs: 20000 }),
  cliCommand: z.string().min(1).max(256).optional(),
  /**
   * Where the memory is stored (beyond the original): `yaml` (the original's files, the default)
   * or `sqlite` (one database per layer). `path` is the global layer's database (default
   * `<globalDir>/cass-memory.sqlite`; `~` expanded, relative paths taken from the global
   * directory). Environment: CASS_MEMORY_STORAGE, CASS_MEMORY_STORAGE_PATH. Move the data with
   * `cm storage migrate --to <backend>`. Only the global config may set it.
   */
  storage: z
    .looseObject({
      backend: z.enum(STORAGE_BACKENDS).default("yaml"),
      path: z.string().min(1).optional(),
      /**
       * `postgres`: one database shared by a team. `url` (CASS_MEMORY_DATABASE_URL wins over it) is
       * never printed with its password; `schema` (default `cass_memory`); `repoKey` names this
       * repository's rows (default: derived from the git remote `origin`).
       */
      postgres: z
        .looseObject({
          url: z.string().min(1).max(4096).optional(),
          schema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/).optional(),
          repoKey: z.string().min(1).max(512).optional(),
        })
        .optional(),
    })
    .default({ backend: "yaml" }),
}));

export type Config = z.output<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** The full default configuration, as `cm init` writes it. */
export function defaultConfig(): Config {
  return ConfigSchema.parse({});
}

/** Keys a repository's `.cass/config.*` may not set (reference §3.4). */
export const REPO_FORBIDDEN_CONFIG_KEYS: readonly string[] = [
  "cassPath",
  "sessionRoots",
  "playbookPath",
  "diaryDir",
  "crossAgent",
  "remoteCass",
  "apiKey",
  "baseUrl",
  "ollamaBaseUrl",
  "embeddingBaseUrl",
  "embeddingModelDir",
  // A committed repo config must not route the user's rules to a cloud embeddings API.
  "embeddingBackend",
  "cliCommand",
  "budget",
  "sanitization",
  "serve",
  // The backend of the user's store (both layers) is the user's choice, not a repository's.
  "storage",
];
