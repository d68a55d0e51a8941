import { DEFAULT_SESSION_EXCLUDE_PATTERNS, LLM_PROVIDERS, STORAGE_BACKENDS, type Config } from "./config.js";

/**
 * A fast path for validating the merged configuration, beside ConfigSchema (as bullet-check.ts is
 * beside BulletSchema). Every command loads the configuration once; building ConfigSchema (~150
 * zod schemas) and running it costs a short-lived process 10–15 ms, about a tenth of a warm
 * `cm context`. `checkConfig` walks a plain table of the same keys, types, bounds and defaults.
 *
 * It is conservative: it returns what `ConfigSchema.parse` would return (the same values, the same
 * key order: the schema's keys, then unknown keys as given) only when every value is plainly valid,
 * and `undefined` for anything else — a wrong type, a bound crossed, an unusual object — so that
 * the caller validates with the schema, which reports errors exactly as before. A stricter table
 * only costs speed; `packages/core/test/config-check.test.ts` holds the table to the schema (the
 * same keys at every level, the same defaults) and both to the same results on generated inputs.
 */

type Spec =
  | { kind: "number"; int?: true; gt?: number; gte?: number; lte?: number }
  | { kind: "string"; min?: number; max?: number; pattern?: RegExp }
  | { kind: "boolean" }
  | { kind: "enum"; values: readonly string[] }
  | { kind: "array"; item: Spec }
  | { kind: "record"; value: Spec }
  | { kind: "object"; fields: readonly Field[] }
  | { kind: "nullable"; inner: Spec };

/** A key of an object: required, optional (absent when not given), or filled with a default. */
export interface Field {
  key: string;
  spec: Spec;
  presence: "required" | "optional" | { default: () => unknown };
}

const number: Spec = { kind: "number" };
const string: Spec = { kind: "string" };
const boolean: Spec = { kind: "boolean" };
const positiveInt: Spec = { kind: "number", int: true, gt: 0 };
const strings: Spec = { kind: "array", item: string };
const oneOf = (values: readonly string[]): Spec => ({ kind: "enum", values });
const object = (fields: readonly Field[]): Spec => ({ kind: "object", fields });

const optional = (key: string, spec: Spec): Field => ({ key, spec, presence: "optional" });
const required = (key: string, spec: Spec): Field => ({ key, spec, presence: "required" });
/**
 * An object whose default is what its own fields give for an empty object (so it is not written
 * twice; the schema's object defaults are the same, which config-check.test.ts checks).
 */
const filledObject = (key: string, fields: readonly Field[]): Field => ({
  key,
  spec: object(fields),
  presence: { default: () => checkObject(fields, {}) },
});
/** A default given as JSON-like data: each use gets its own copy (the caller may change it). */
const withDefault = (key: string, spec: Spec, value: unknown): Field => ({ key, spec, presence: { default: () => structuredClone(value) } });

/** ConfigSchema as a table (packages/core/src/schemas/config.ts, in its key order). */
export const CONFIG_FIELDS: readonly Field[] = [
  withDefault("schema_version", number, 1),
  withDefault("provider", oneOf(LLM_PROVIDERS), "anthropic"),
  withDefault("model", string, "claude-sonnet-5"),
  optional(
    "llm",
    object([optional("provider", string), optional("model", string), optional("timeoutMs", positiveInt), optional("totalTimeoutMs", positiveInt)]),
  ),
  optional("llmTimeoutMs", positiveInt),
  optional("llmTotalTimeoutMs", positiveInt),
  withDefault("cassPath", string, "cass"),
  withDefault("episodic", oneOf(["auto", "cass", "native", "none"]), "auto"),
  withDefault("sessionRoots", { kind: "record", value: strings }, {}),
  filledObject(
    "remoteCass",
    [
      withDefault("enabled", boolean, false),
      withDefault("hosts", { kind: "array", item: object([required("host", { kind: "string", min: 1 }), optional("label", string)]) }, []),
    ],
  ),
  withDefault("playbookPath", string, "~/.cass-memory/playbook.yaml"),
  withDefault("diaryDir", string, "~/.cass-memory/diary"),
  filledObject(
    "scoring",
    [
      withDefault("decayHalfLifeDays", number, 90),
      withDefault("harmfulMultiplier", number, 4),
      withDefault("minFeedbackForActive", number, 3),
      withDefault("minHelpfulForProven", number, 10),
      withDefault("maxHarmfulRatioForProven", number, 0.1),
    ],
  ),
  withDefault("maxReflectorIterations", number, 3),
  withDefault("autoReflect", boolean, false),
  withDefault("sessionExcludePatterns", strings, DEFAULT_SESSION_EXCLUDE_PATTERNS),
  withDefault("sessionIncludeAll", boolean, false),
  withDefault("dedupSimilarityThreshold", number, 0.85),
  withDefault("pruneHarmfulThreshold", number, 3),
  withDefault("defaultDecayHalfLife", number, 90),
  optional(
    "inputLimits",
    object(["taskBytes", "ruleBytes", "categoryBytes", "reasonBytes", "queryBytes", "fileBytes"].map((key) => optional(key, positiveInt))),
  ),
  withDefault("maxBulletsInContext", number, 50),
  withDefault("maxHistoryInContext", number, 10),
  withDefault("sessionLookbackDays", number, 7),
  withDefault("validationLookbackDays", number, 90),
  withDefault("relatedSessionsDays", number, 30),
  withDefault("minRelevanceScore", number, 0.1),
  withDefault("maxRelatedSessions", number, 5),
  withDefault("validationEnabled", boolean, true),
  filledObject(
    "crossAgent",
    [
      withDefault("enabled", boolean, false),
      withDefault("consentGiven", boolean, false),
      optional("consentDate", { kind: "nullable", inner: string }),
      withDefault("agents", strings, []),
      withDefault("auditLog", boolean, true),
    ],
  ),
  withDefault("semanticSearchEnabled", boolean, false),
  withDefault("semanticWeight", { kind: "number", gte: 0, lte: 1 }, 0.6),
  withDefault("embeddingBackend", oneOf(["xenova", "ollama", "openai"]), "xenova"),
  withDefault("embeddingModel", string, "Xenova/all-MiniLM-L6-v2"),
  optional("embeddingBaseUrl", { kind: "string", min: 1 }),
  optional("embeddingModelDir", { kind: "string", min: 1 }),
  optional("embeddingTimeoutMs", positiveInt),
  withDefault("verbose", boolean, false),
  withDefault("jsonOutput", boolean, false),
  optional("apiKey", string),
  optional("baseUrl", string),
  withDefault("ollamaBaseUrl", string, "http://localhost:11434"),
  withDefault("disableStructuredOutputs", boolean, false),
  optional("llmFallback", oneOf(["deterministic", "none"])),
  filledObject(
    "sanitization",
    [
      withDefault("enabled", boolean, true),
      withDefault("extraPatterns", strings, []),
      withDefault("allowlist", strings, []),
      withDefault("auditLog", boolean, false),
      withDefault("auditLevel", oneOf(["off", "info", "debug"]), "info"),
    ],
  ),
  filledObject(
    "budget",
    [
      withDefault("dailyLimit", number, 1),
      withDefault("monthlyLimit", number, 20),
      withDefault("warningThreshold", number, 80),
      withDefault("currency", string, "USD"),
    ],
  ),
  filledObject(
    "serve",
    [
      withDefault("maxConcurrentCassCalls", positiveInt, 2),
      withDefault("maxQueuedCassCalls", { kind: "number", int: true, gte: 0 }, 32),
      withDefault("cassQueueTimeoutMs", { kind: "number", int: true, gte: 0 }, 20000),
    ],
  ),
  optional("cliCommand", { kind: "string", min: 1, max: 256 }),
  filledObject(
    "storage",
    [
      withDefault("backend", oneOf(STORAGE_BACKENDS), "yaml"),
      optional("path", { kind: "string", min: 1 }),
      optional(
        "postgres",
        object([
          optional("url", { kind: "string", min: 1, max: 4096 }),
          optional("schema", { kind: "string", pattern: /^[a-z_][a-z0-9_]{0,62}$/ }),
          optional("repoKey", { kind: "string", min: 1, max: 512 }),
        ]),
      ),
    ],
  ),
];

const INVALID = Symbol("invalid");

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function checkValue(spec: Spec, value: unknown): unknown {
  switch (spec.kind) {
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return INVALID;
      if (spec.int && !Number.isSafeInteger(value)) return INVALID;
      if (spec.gt !== undefined && !(value > spec.gt)) return INVALID;
      if (spec.gte !== undefined && !(value >= spec.gte)) return INVALID;
      if (spec.lte !== undefined && !(value <= spec.lte)) return INVALID;
      return value;
    case "string":
      if (typeof value !== "string") return INVALID;
      if (spec.min !== undefined && value.length < spec.min) return INVALID;
      if (spec.max !== undefined && value.length > spec.max) return INVALID;
      if (spec.pattern !== undefined && !spec.pattern.test(value)) return INVALID;
      return value;
    case "boolean":
      return typeof value === "boolean" ? value : INVALID;
    case "enum":
      return typeof value === "string" && spec.values.includes(value) ? value : INVALID;
    case "nullable":
      return value === null ? null : checkValue(spec.inner, value);
    case "array": {
      if (!Array.isArray(value)) return INVALID;
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) {
        if (!(i in value)) return INVALID;
        const item = checkValue(spec.item, value[i]);
        if (item === INVALID) return INVALID;
        out.push(item);
      }
      return out;
    }
    case "record": {
      if (!isPlainObject(value)) return INVALID;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value)) {
        if (key === "__proto__") return INVALID;
        const item = checkValue(spec.value, value[key]);
        if (item === INVALID) return INVALID;
        out[key] = item;
      }
      return out;
    }
    case "object":
      return checkObject(spec.fields, value);
  }
}

const knownKeys = new WeakMap<readonly Field[], ReadonlySet<string>>();
function keysOf(fields: readonly Field[]): ReadonlySet<string> {
  let keys = knownKeys.get(fields);
  if (keys === undefined) {
    keys = new Set(fields.map((f) => f.key));
    knownKeys.set(fields, keys);
  }
  return keys;
}

function checkObject(fields: readonly Field[], value: unknown): Record<string, unknown> | typeof INVALID {
  if (!isPlainObject(value)) return INVALID;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    if (!Object.hasOwn(value, field.key)) {
      if (field.presence === "required") return INVALID;
      if (field.presence !== "optional") out[field.key] = field.presence.default();
      continue;
    }
    const checked = checkValue(field.spec, value[field.key]);
    if (checked === INVALID) return INVALID;
    out[field.key] = checked;
  }
  // Unknown keys are kept as given (the schema is loose), after the known ones. A key given as
  // `undefined` (not JSON) is left to the schema.
  const known = keysOf(fields);
  for (const key of Object.keys(value)) {
    if (known.has(key)) continue;
    const given = value[key];
    if (key === "__proto__" || given === undefined) return INVALID;
    out[key] = given;
  }
  return out;
}

/** `ConfigSchema.parse(value)` when `value` is plainly valid; `undefined` when the schema must decide. */
export function checkConfig(value: unknown): Config | undefined {
  const out = checkObject(CONFIG_FIELDS, value);
  return out === INVALID ? undefined : (out as Config);
}
