import * as z from "zod";
import { REDACT_SECRETS_FIX, redactStoredSecrets, storedSecretsCheck } from "./doctor-secrets.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { SECRET_KINDS, detectSecrets } from "../domain/secrets.js";

/** Kinds of the built-in detector (user extras are the `custom` kind). */
const BUILT_IN_KINDS = SECRET_KINDS.filter((k) => k !== "custom").length;
import { defineOperation } from "../operation.js";
import type { EpisodicHealth, FixResult, FixableIssue, HealthCheck, HealthStatus, LlmStatus, OperationDeps } from "../ports.js";
import { ConfigSchema, type LlmProvider } from "../schemas/config.js";
import { TraumaEntrySchema } from "../schemas/records.js";
import { loadMergedPlaybook } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm doctor` / `cm dr` (reference §1.5.13): one health report over every part of the system.
 * Storage checks come from the store (`Store.diagnose`, which knows its own files); this operation
 * adds episodic-source health, LLM configuration, sanitiser pattern health, the trauma registry and
 * the configuration problems the host found, then plans and applies fixes (`Store.applyFix`) and
 * re-checks. Health is reported in the data, never through an error: doctor itself always succeeds.
 */

export const DoctorInputSchema = lazySchema(() => z.object({
  /** Apply the planned fixes (only when something is wrong). */
  fix: z.boolean().optional(),
  /** Plan only: report what `fix` would do and write nothing. */
  dryRun: z.boolean().optional(),
  /** Allow cautious fixes (those that replace a file, after backing it up). */
  force: z.boolean().optional(),
  /** Whether the front end asked the user before applying (reported in the plan). */
  interactive: z.boolean().optional(),
  /** Also run the self-test (`--self-test` / `--full`). */
  selfTest: z.boolean().optional(),
}));
export type DoctorInput = z.input<typeof DoctorInputSchema>;

const StatusSchema = lazySchema(() => z.enum(["pass", "warn", "fail"]));
export const DoctorCheckSchema = lazySchema(() => z.object({
  category: z.string(),
  item: z.string(),
  status: StatusSchema,
  message: z.string(),
  details: z.unknown().optional(),
}));
export const DoctorFixableIssueSchema = lazySchema(() => z.object({
  id: z.string(),
  description: z.string(),
  category: z.string(),
  severity: z.enum(["warn", "fail"]),
  safety: z.enum(["safe", "cautious", "manual"]),
  howToFix: z.array(z.string()).optional(),
}));
export const RecommendedActionSchema = lazySchema(() => z.object({
  label: z.string(),
  command: z.string().optional(),
  reason: z.string(),
  urgency: z.enum(["high", "medium", "low"]),
}));
export const FixPlanSchema = lazySchema(() => z.object({
  enabled: z.boolean(),
  dryRun: z.boolean(),
  interactive: z.boolean(),
  force: z.boolean(),
  wouldApply: z.array(z.string()),
  wouldSkip: z.array(z.object({ id: z.string(), reason: z.string() })),
}));
export const DoctorFixResultSchema = lazySchema(() => z.object({
  id: z.string(),
  success: z.boolean(),
  message: z.string(),
  backups: z.array(z.string()).optional(),
}));
export const DoctorResultSchema = lazySchema(() => z.object({
  version: z.string(),
  generatedAt: z.string(),
  overallStatus: z.enum(["healthy", "degraded", "unhealthy"]),
  checks: z.array(DoctorCheckSchema),
  fixableIssues: z.array(DoctorFixableIssueSchema),
  recommendedActions: z.array(RecommendedActionSchema),
  fixPlan: FixPlanSchema.optional(),
  fixResults: z.array(DoctorFixResultSchema).optional(),
  selfTest: z.array(DoctorCheckSchema).optional(),
}));
export type DoctorResult = z.output<typeof DoctorResultSchema>;
export type DoctorCheck = z.output<typeof DoctorCheckSchema>;
export type DoctorFixableIssue = z.output<typeof DoctorFixableIssueSchema>;
export type RecommendedAction = z.output<typeof RecommendedActionSchema>;
export type FixPlan = z.output<typeof FixPlanSchema>;
export type OverallStatus = DoctorResult["overallStatus"];

/** Text that no secret pattern should touch (the original's false-positive probes). */
export const SANITIZER_BENIGN_SAMPLES: readonly string[] = [
  "The tokenizer splits text into tokens",
  "Bearer of bad news",
  "This is a password-protected file",
  "The API key concept is important",
];

/** Credential sources per provider, by name (values are never seen by core). */
export const LLM_CREDENTIAL_SOURCES: Readonly<Record<LlmProvider, readonly string[]>> = {
  anthropic: ["ANTHROPIC_API_KEY"],
  openai: ["OPENAI_API_KEY"],
  google: ["GOOGLE_GENERATIVE_AI_API_KEY"],
  bedrock: ["AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"],
  ollama: [],
  cli: ["CASS_CLI_COMMAND"],
};

export const DOCTOR_CATEGORIES = {
  cass: "Cass Integration",
  sessions: "Session History",
  storage: "Storage",
  config: "Configuration",
  llm: "LLM Configuration",
  sanitization: "Sanitization Pattern Health",
  trauma: "Trauma System",
  selfTest: "Self-Test",
} as const;

const PLAYBOOK_LOAD_WARN_MS = 500;
const CASS_SEARCH_WARN_MS = 2000;
const CASS_SEARCH_FAIL_MS = 5000;
const MIN_SANITIZER_PATTERNS = 10;
const DEPRECATED_CONFIG_KEYS = ["maxContextBullets", "enableEmbeddings"] as const;
const URGENCY_ORDER = { high: 0, medium: 1, low: 2 } as const;

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function overallStatusOf(checks: readonly Pick<HealthCheck, "status">[]): OverallStatus {
  if (checks.some((c) => c.status === "fail")) return "unhealthy";
  if (checks.some((c) => c.status === "warn")) return "degraded";
  return "healthy";
}

function elapsedMs(deps: OperationDeps, start: Date): number {
  return Math.max(0, deps.clock.now().getTime() - start.getTime());
}

// ------------------------------------------------------------------------------------------------
// Checks

/** One check per history source: the cass CLI (its original category) and our native session readers. */
async function episodicChecks(deps: OperationDeps): Promise<HealthCheck[]> {
  let health: EpisodicHealth;
  try {
    health = await deps.episodic.health();
  } catch (error) {
    return [{ category: DOCTOR_CATEGORIES.cass, item: "cass", status: "fail", message: `History source health check failed: ${messageOf(error)}` }];
  }
  const parts = health.components ?? [health];
  // With another source answering, a missing cass is only a warning: history still works.
  const historyElsewhere = parts.some((p) => p.available && p.name !== "cass");
  return parts.map((part) => (part.name === "native" ? nativeCheck(part) : cassCheck(part, historyElsewhere)));
}

function cassCheck(health: EpisodicHealth, historyElsewhere: boolean): HealthCheck {
  const category = DOCTOR_CATEGORIES.cass;
  if (health.available) {
    return { category, item: "cass", status: "pass", message: `${health.name} available${health.version ? ` (version ${health.version})` : ""}`, details: health };
  }
  const degraded = health.degraded;
  if (degraded === undefined || degraded.reason === "NOT_FOUND") {
    return historyElsewhere
      ? { category, item: "cass", status: "warn", message: "cass CLI not found (optional: history comes from the native session readers)", details: health }
      : { category, item: "cass", status: "fail", message: "cass CLI not found", details: health };
  }
  return { category, item: "cass", status: "warn", message: `cass is degraded (${degraded.reason}): ${degraded.message}`, details: health };
}

/** "claude_code 2, cline 1" */
function perAgent(counts: Record<string, number> | undefined): string {
  return Object.entries(counts ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([agent, n]) => `${agent} ${n}`)
    .join(", ");
}

function nativeCheck(health: EpisodicHealth): HealthCheck {
  const category = DOCTOR_CATEGORIES.sessions;
  const roots = health.roots ?? [];
  const unreadable = health.unreadable;
  const files = health.files ?? health.sessions ?? 0;
  // Which agents' files were found but could not be read, and why (the first reason of each).
  const unreadableNote =
    unreadable !== undefined && unreadable.count > 0
      ? `${unreadable.count} of ${files} session file(s) could not be read (${perAgent(unreadable.byAgent)})` +
        (unreadable.files[0] !== undefined ? `, e.g. ${unreadable.files[0].path}: ${unreadable.files[0].reason}` : "")
      : "";
  const details = {
    sessions: health.sessions ?? 0,
    files,
    agents: health.agents ?? {},
    ...(unreadable !== undefined ? { unreadable } : {}),
    roots,
  };
  if (health.available) {
    const agents = perAgent(health.agents);
    const pending = health.pending ?? 0;
    return {
      category,
      item: "Native session files",
      status: unreadableNote !== "" ? "warn" : "pass",
      message:
        `${health.sessions ?? 0} readable sessions${agents ? ` (${agents})` : ""} in ${files} session file(s)` +
        (pending > 0 ? `; ${pending} file(s) not read yet` : "") +
        (unreadableNote !== "" ? `; ${unreadableNote}` : ""),
      details,
    };
  }
  if (unreadableNote !== "") {
    return { category, item: "Native session files", status: "warn", message: `No readable sessions: ${unreadableNote}.`, details };
  }
  return {
    category,
    item: "Native session files",
    status: "warn",
    message: `No agent session files found in ${roots.length} known locations; history stays empty until an agent saves sessions (or configure sessionRoots).`,
    details: { roots },
  };
}

async function storageChecks(deps: OperationDeps): Promise<{ checks: HealthCheck[]; issues: FixableIssue[] }> {
  if (!deps.store.diagnose) {
    return {
      checks: [{ category: DOCTOR_CATEGORIES.storage, item: "Diagnostics", status: "warn", message: "storage backend provides no diagnostics" }],
      issues: [],
    };
  }
  try {
    const diagnosis = await deps.store.diagnose();
    return { checks: diagnosis.checks, issues: diagnosis.fixableIssues };
  } catch (error) {
    return {
      checks: [{ category: DOCTOR_CATEGORIES.storage, item: "Diagnostics", status: "fail", message: `Storage diagnostics failed: ${messageOf(error)}` }],
      issues: [],
    };
  }
}

function configProblemCheck(problems: readonly string[]): HealthCheck | null {
  if (problems.length === 0) return null;
  return {
    category: DOCTOR_CATEGORIES.config,
    item: "Effective configuration",
    status: "fail",
    message: problems.join("; "),
    details: { problems: [...problems] },
  };
}

/** Names of the credential sources visible to this process, including `config.apiKey`. */
function visibleCredentials(deps: OperationDeps): string[] {
  const names = [...(deps.runtimeReport?.llmCredentials ?? [])];
  if (typeof deps.config.apiKey === "string" && deps.config.apiKey.trim() !== "") names.push("config.apiKey");
  // A configured command counts only when the host found it as an executable.
  if (typeof deps.config.cliCommand === "string" && deps.config.cliCommand.trim() !== "" && deps.runtimeReport?.llmCommand?.found === true) {
    names.push("config.cliCommand");
  }
  return names;
}

/** A configured LLM command the host looked for and did not find, as a sentence; null otherwise. */
function missingLlmCommand(deps: OperationDeps): string | null {
  const report = deps.runtimeReport?.llmCommand;
  if (typeof deps.config.cliCommand !== "string" || deps.config.cliCommand.trim() === "") return null;
  if (report === undefined) return `the LLM command '${deps.config.cliCommand.trim()}' could not be checked`;
  return report.found ? null : `the LLM command '${report.command}' was not found (not on PATH, or not executable)`;
}

function providersWithCredentials(credentials: readonly string[]): LlmProvider[] {
  return (Object.keys(LLM_CREDENTIAL_SOURCES) as LlmProvider[]).filter((p) => LLM_CREDENTIAL_SOURCES[p].some((name) => credentials.includes(name)));
}

function llmCheck(deps: OperationDeps, status: LlmStatus | undefined): HealthCheck {
  const category = DOCTOR_CATEGORIES.llm;
  const report = deps.runtimeReport ?? {};
  const provider = deps.config.provider;
  const model = deps.config.model;
  const credentials = visibleCredentials(deps);
  const details = { provider, model, credentialsFound: credentials, environmentInspected: report.llmCredentials !== undefined };
  if (report.llmDisabled) {
    return { category, item: "Provider", status: "pass", message: "LLM disabled (CASS_MEMORY_LLM=none); deterministic mode", details };
  }
  // The host resolved the model exactly as reflect will: trust that over the key heuristics below.
  if (status?.available === true) {
    const sources = LLM_CREDENTIAL_SOURCES[status.provider as LlmProvider] ?? [];
    const keys = credentials.filter((c) => sources.includes(c) || c === "config.apiKey");
    const where = status.local
      ? ` (local server${status.baseUrl ? ` ${status.baseUrl}` : ""}, no API key needed; not contacted)`
      : keys.length > 0
        ? ` (${keys.join(", ")} set)`
        : "";
    return { category, item: "Provider", status: "pass", message: `Provider: ${status.provider}, model: ${status.model}${where}`, details };
  }
  if (status?.available === false) {
    return {
      category,
      item: "Provider",
      status: "warn",
      message: `LLM not configured (optional): ${status.reason}; reflect and validate use the deterministic components`,
      details: { ...details, hint: status.hint },
    };
  }
  if (provider === "ollama") {
    return { category, item: "Provider", status: "pass", message: `Provider: ollama, model: ${model} (no API key needed; server ${deps.config.ollamaBaseUrl} not contacted)`, details };
  }
  const missingCommand = provider === "cli" ? missingLlmCommand(deps) : null;
  if (missingCommand !== null) {
    return { category, item: "Provider", status: "warn", message: `LLM not usable: ${missingCommand}; reflect and validate use the deterministic components`, details };
  }
  const own = LLM_CREDENTIAL_SOURCES[provider];
  const ownFound = credentials.filter((c) => own.includes(c) || c === "config.apiKey" || (provider === "cli" && c === "config.cliCommand"));
  if (ownFound.length > 0) {
    return { category, item: "Provider", status: "pass", message: `Provider: ${provider}, model: ${model} (${ownFound.join(", ")} set)`, details };
  }
  const others = providersWithCredentials(credentials).filter((p) => p !== provider);
  if (others.length > 0) {
    return {
      category,
      item: "Provider",
      status: "warn",
      message: `Provider ${provider} has no credentials (${own.join(" or ")}); credentials found for: ${others.join(", ")} (set "provider" in config.json to use one)`,
      details,
    };
  }
  if (report.llmCredentials === undefined) {
    return { category, item: "Provider", status: "warn", message: `LLM not configured (optional): provider ${provider}, model ${model}; the host did not report API keys`, details };
  }
  return {
    category,
    item: "Provider",
    status: "warn",
    message: `LLM not configured (optional): no API key for ${provider} (set ${own.join(" or ") || "one"}); cm works without an LLM`,
    details,
  };
}

interface FalsePositive {
  pattern: string;
  sample: string;
}

function sanitizerProbe(deps: OperationDeps): { falsePositives: FalsePositive[]; warnings: string[]; extraCount: number } {
  const falsePositives: FalsePositive[] = [];
  for (const sample of SANITIZER_BENIGN_SAMPLES) for (const f of detectSecrets(sample)) falsePositives.push({ pattern: f.kind, sample });
  const extra = deps.config.sanitization.extraPatterns.filter((p) => typeof p === "string" && p.trim() !== "");
  const all = compileSanitizer({ enabled: true, extraPatterns: extra });
  const baseline = compileSanitizer({ enabled: true, extraPatterns: [] });
  for (const raw of extra) {
    const single = compileSanitizer({ enabled: true, extraPatterns: [raw] });
    if (single.warnings.length > 0) continue;
    for (const sample of SANITIZER_BENIGN_SAMPLES) {
      if (single.sanitize(sample) !== baseline.sanitize(sample)) falsePositives.push({ pattern: raw, sample });
    }
  }
  return { falsePositives, warnings: all.warnings, extraCount: extra.length - all.warnings.length };
}

function sanitizationCheck(deps: OperationDeps): HealthCheck {
  const category = DOCTOR_CATEGORIES.sanitization;
  if (!deps.config.sanitization.enabled) {
    return { category, item: "Pattern Health", status: "warn", message: "Sanitization disabled; breadth checks skipped" };
  }
  const { falsePositives, warnings, extraCount } = sanitizerProbe(deps);
  const details = { builtInPatterns: BUILT_IN_KINDS, extraPatterns: extraCount, falsePositives, skippedPatterns: warnings };
  if (falsePositives.length > 0) {
    const names = [...new Set(falsePositives.map((f) => f.pattern))];
    return {
      category,
      item: "Pattern Health",
      status: "warn",
      message: `${plural(names.length, "pattern")} match benign text: ${falsePositives.map((f) => `${f.pattern} ("${f.sample}")`).join(", ")}`,
      details,
    };
  }
  if (warnings.length > 0) {
    return { category, item: "Pattern Health", status: "warn", message: `${plural(warnings.length, "custom pattern")} skipped: ${warnings.join("; ")}`, details };
  }
  return {
    category,
    item: "Pattern Health",
    status: "pass",
    message: `${BUILT_IN_KINDS} built-in + ${extraCount} custom patterns; no false positives on benign samples`,
    details,
  };
}

async function traumaCheck(deps: OperationDeps): Promise<HealthCheck> {
  const category = DOCTOR_CATEGORIES.trauma;
  try {
    let active = 0;
    let healed = 0;
    let invalid = 0;
    for (const layer of ["global", "repo"] as const) {
      if (layer === "repo" && deps.store.locations.repoDir === null) continue;
      const { records, malformed } = await deps.store.readLog(layer, "traumas");
      invalid += malformed;
      for (const record of records) {
        const parsed = TraumaEntrySchema.safeParse(record);
        if (!parsed.success) invalid += 1;
        else if (parsed.data.status === "active") active += 1;
        else healed += 1;
      }
    }
    const details = { active, healed, invalid };
    if (invalid > 0) {
      return { category, item: "Database", status: "warn", message: `Loaded ${plural(active, "trauma pattern")}; ${plural(invalid, "invalid line")} skipped`, details };
    }
    return { category, item: "Database", status: "pass", message: `Loaded ${plural(active, "trauma pattern")}`, details };
  } catch (error) {
    return { category, item: "Database", status: "warn", message: `Could not read the trauma registry: ${messageOf(error)}` };
  }
}

/**
 * A reset config.json must keep using the store the memory is in: the defaults say YAML, so a
 * SQLite user (backend found by the host from config or, for an unreadable file, from the data)
 * gets `storage.backend` written back. Never repair into a different backend.
 */
async function keepBackend(deps: OperationDeps, result: FixResult): Promise<void> {
  const backend = deps.config.storage.backend;
  const defaults = ConfigSchema.parse({}).storage.backend;
  if (backend === defaults) return;
  try {
    await deps.store.mutateConfigFile((raw) => {
      const storage = typeof raw.storage === "object" && raw.storage !== null && !Array.isArray(raw.storage) ? (raw.storage as Record<string, unknown>) : {};
      raw.storage = { ...storage, backend };
    });
    result.message = `${result.message} (storage.backend kept: ${backend})`;
  } catch (error) {
    result.success = false;
    result.message = `${result.message}, but storage.backend could not be set back to ${backend}: ${messageOf(error)}`;
  }
}

/** `configProblems` overrides the host's startup report (after a re-check). */
async function collect(deps: OperationDeps, configProblems?: readonly string[]): Promise<{ checks: HealthCheck[]; issues: FixableIssue[] }> {
  const checks: HealthCheck[] = await episodicChecks(deps);
  const storage = await storageChecks(deps);
  checks.push(...storage.checks);
  const configProblem = configProblemCheck(configProblems ?? deps.runtimeReport?.configProblems ?? []);
  if (configProblem) checks.push(configProblem);
  const llmStatus = await deps.runtimeReport?.llmStatus?.().catch(() => undefined);
  checks.push(llmCheck(deps, llmStatus), sanitizationCheck(deps), await traumaCheck(deps));
  checks.push(...(await deps.runtimeReport?.hostChecks?.().catch(() => []) ?? []));
  const secrets = await storedSecretsCheck(deps);
  checks.push(secrets.check);
  return { checks, issues: secrets.issue ? [...storage.issues, secrets.issue] : storage.issues };
}

// ------------------------------------------------------------------------------------------------
// Self-test

async function selfTests(deps: OperationDeps, configProblems: readonly string[], llmStatus: LlmStatus | undefined): Promise<HealthCheck[]> {
  const category = DOCTOR_CATEGORIES.selfTest;
  const out: HealthCheck[] = [];

  const loadStart = deps.clock.now();
  try {
    const playbook = await loadMergedPlaybook(deps);
    const ms = elapsedMs(deps, loadStart);
    out.push({
      category,
      item: "Playbook Load",
      status: ms > PLAYBOOK_LOAD_WARN_MS ? "warn" : "pass",
      message: `Loaded ${plural(playbook.bullets.length, "rule")} in ${ms} ms${ms > PLAYBOOK_LOAD_WARN_MS ? ` (slower than ${PLAYBOOK_LOAD_WARN_MS} ms)` : ""}`,
      details: { durationMs: ms, bullets: playbook.bullets.length },
    });
  } catch (error) {
    out.push({ category, item: "Playbook Load", status: "fail", message: `Could not load the playbook: ${messageOf(error)}` });
  }

  try {
    const health = await deps.episodic.health();
    if (!health.available) {
      out.push({ category, item: "Cass Search", status: "warn", message: "Skipped (cass not available)" });
    } else {
      const start = deps.clock.now();
      const result = await deps.episodic.search("self test query", { limit: 1, timeoutMs: CASS_SEARCH_FAIL_MS });
      const ms = elapsedMs(deps, start);
      const status: HealthStatus = result.degraded ? "warn" : ms > CASS_SEARCH_FAIL_MS ? "fail" : ms > CASS_SEARCH_WARN_MS ? "warn" : "pass";
      out.push({
        category,
        item: "Cass Search",
        status,
        message: result.degraded ? `Search degraded (${result.degraded.reason}): ${result.degraded.message}` : `Search answered in ${ms} ms (${plural(result.hits.length, "hit")})`,
        details: { durationMs: ms, hits: result.hits.length },
      });
    }
  } catch (error) {
    out.push({ category, item: "Cass Search", status: "fail", message: `Search failed: ${messageOf(error)}` });
  }

  if (!deps.config.sanitization.enabled) {
    out.push({ category, item: "Sanitization", status: "warn", message: "Sanitization disabled: secrets are stored and sent unredacted" });
  } else {
    const { extraCount } = sanitizerProbe(deps);
    const total = BUILT_IN_KINDS + extraCount;
    // A fake key assembled at run time, so that secret scanners do not flag this file.
    const probe = `api_key=${"Z9".repeat(12)}`;
    const redacted = compileSanitizer({ enabled: true, extraPatterns: deps.config.sanitization.extraPatterns }).sanitize(probe) !== probe;
    out.push({
      category,
      item: "Sanitization",
      status: !redacted ? "fail" : total < MIN_SANITIZER_PATTERNS ? "warn" : "pass",
      message: !redacted ? "A test secret was not redacted" : `${total} patterns active (${BUILT_IN_KINDS} built-in); test secret redacted`,
      details: { patterns: total },
    });
  }

  const problems: string[] = [...configProblems];
  const warnings: string[] = [];
  const raw = deps.config as Record<string, unknown>;
  for (const key of DEPRECATED_CONFIG_KEYS) if (key in raw) warnings.push(`deprecated key '${key}' is ignored`);
  for (const key of ["playbookPath", "diaryDir"] as const) {
    const value = deps.config[key];
    if (!/^(\/|~|[A-Za-z]:[\\/]|\\\\)/.test(value)) warnings.push(`${key} is not an absolute path: ${value}`);
  }
  const c = deps.config;
  if (!(c.dedupSimilarityThreshold > 0 && c.dedupSimilarityThreshold <= 1)) warnings.push(`dedupSimilarityThreshold should be in (0, 1], is ${c.dedupSimilarityThreshold}`);
  if (!(c.minRelevanceScore >= 0 && c.minRelevanceScore <= 1)) warnings.push(`minRelevanceScore should be in [0, 1], is ${c.minRelevanceScore}`);
  if (!(c.scoring.decayHalfLifeDays > 0)) warnings.push(`scoring.decayHalfLifeDays should be > 0, is ${c.scoring.decayHalfLifeDays}`);
  if (!(c.scoring.harmfulMultiplier > 0)) warnings.push(`scoring.harmfulMultiplier should be > 0, is ${c.scoring.harmfulMultiplier}`);
  if (!(c.maxBulletsInContext >= 1)) warnings.push(`maxBulletsInContext should be >= 1, is ${c.maxBulletsInContext}`);
  if (!(c.pruneHarmfulThreshold >= 1)) warnings.push(`pruneHarmfulThreshold should be >= 1, is ${c.pruneHarmfulThreshold}`);
  out.push({
    category,
    item: "Config Validation",
    status: problems.length > 0 ? "fail" : warnings.length > 0 ? "warn" : "pass",
    message: problems.length > 0 || warnings.length > 0 ? [...problems, ...warnings].join("; ") : "Configuration is consistent",
    ...(problems.length > 0 || warnings.length > 0 ? { details: { problems, warnings } } : {}),
  });

  const report = deps.runtimeReport ?? {};
  const credentials = visibleCredentials(deps);
  if (report.llmDisabled) {
    out.push({ category, item: "LLM System", status: "pass", message: "LLM disabled (CASS_MEMORY_LLM=none)" });
  } else if (llmStatus?.available === true) {
    out.push({ category, item: "LLM System", status: "pass", message: `Model ${llmStatus.provider}/${llmStatus.model} is configured${llmStatus.local ? " (local, no API key needed)" : ""}` });
  } else if (llmStatus?.available === false) {
    out.push({ category, item: "LLM System", status: "fail", message: `${llmStatus.reason} (${llmStatus.hint})` });
  } else if (deps.config.provider === "ollama" || credentials.length > 0) {
    out.push({
      category,
      item: "LLM System",
      status: "pass",
      message: deps.config.provider === "ollama" ? "Provider ollama needs no API key" : `Credentials available: ${credentials.join(", ")}`,
    });
  } else {
    out.push({
      category,
      item: "LLM System",
      status: "fail",
      message: "No API keys configured (set ANTHROPIC_API_KEY, OPENAI_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY, or CASS_MEMORY_LLM=none)",
    });
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Plan, actions

function withHowToFix(issues: readonly FixableIssue[], cli: string): DoctorFixableIssue[] {
  return issues.map((issue) => {
    const howToFix =
      issue.safety === "safe"
        ? [`${cli} doctor --fix --no-interactive`]
        : issue.safety === "cautious"
          ? [`${cli} doctor --fix --force --no-interactive`]
          : (issue.howToFix ?? []);
    return { id: issue.id, description: issue.description, category: issue.category, severity: issue.severity, safety: issue.safety, howToFix };
  });
}

function planFixes(issues: readonly FixableIssue[], flags: { fix: boolean; dryRun: boolean; interactive: boolean; force: boolean }, canApply: boolean): FixPlan {
  const wouldApply: string[] = [];
  const wouldSkip: Array<{ id: string; reason: string }> = [];
  for (const issue of issues) {
    if (issue.safety === "manual") wouldSkip.push({ id: issue.id, reason: "manual fix required" });
    else if (!canApply) wouldSkip.push({ id: issue.id, reason: "storage backend cannot apply fixes" });
    else if (issue.safety === "cautious" && !flags.force) wouldSkip.push({ id: issue.id, reason: "requires --force" });
    else if (!wouldApply.includes(issue.id)) wouldApply.push(issue.id);
  }
  return { enabled: flags.fix, dryRun: flags.dryRun, interactive: flags.interactive, force: flags.force, wouldApply, wouldSkip };
}

function recommend(
  deps: OperationDeps,
  checks: readonly HealthCheck[],
  issues: readonly FixableIssue[],
  status: OverallStatus,
  flags: { fix: boolean; dryRun: boolean; force: boolean },
  plan: FixPlan | undefined,
  results: readonly FixResult[] | undefined,
): RecommendedAction[] {
  const cli = deps.cliName;
  const actions: RecommendedAction[] = [];
  const find = (category: string, item: string) => checks.find((c) => c.category.startsWith(category) && c.item === item);

  const cass = find(DOCTOR_CATEGORIES.cass, "cass");
  if (cass?.status === "fail") {
    actions.push({ label: "Install cass (enables history)", command: "cargo install coding-agent-search", reason: "Session history search is disabled without cass.", urgency: "high" });
  }
  const structure = find("Global Storage", "Structure");
  const missing = ((structure?.details as { missing?: unknown } | undefined)?.missing ?? []) as unknown[];
  if (structure && (structure.status === "fail" || missing.includes("config.json") || missing.includes("playbook.yaml"))) {
    actions.push({ label: "Initialize global storage", command: `${cli} init`, reason: structure.message, urgency: "high" });
  }
  for (const check of checks) {
    if (check.status !== "fail") continue;
    if (check.category === DOCTOR_CATEGORIES.config && check.item === "config.json") {
      const resettable = issues.some((i) => i.id === "reset-config");
      actions.push({
        label: "Repair config.json",
        ...(resettable ? { command: `${cli} doctor --fix --force --no-interactive` } : {}),
        reason: `${check.message}${resettable ? " (the fix backs the file up, then writes the defaults)" : ""}`,
        urgency: "high",
      });
    } else if (check.category === DOCTOR_CATEGORIES.config) {
      actions.push({ label: "Fix the configuration", reason: check.message, urgency: "high" });
    } else if (check.category === "Playbook") {
      actions.push({ label: `Repair ${check.item}`, reason: check.message, urgency: "high" });
    } else if (check.category.startsWith("Global Storage") && check.item === "Permissions") {
      actions.push({ label: "Fix storage permissions", reason: check.message, urgency: "high" });
    }
  }
  const stuck = find("Locks", "Lock debris");
  if (stuck?.status === "warn" && /held by a running process/.test(stuck.message)) {
    actions.push({ label: "Check for a hung cm process", reason: stuck.message, urgency: "medium" });
  }
  const llm = find(DOCTOR_CATEGORIES.llm, "Provider");
  if (llm?.status === "warn") actions.push({ label: "Configure an LLM API key (optional)", reason: llm.message, urgency: "low" });
  const repo = find("Repo .cass/", "Structure");
  if (repo?.status === "warn") {
    actions.push({ label: "Initialize repo-level memory (optional)", command: `${cli} init --repo`, reason: repo.message, urgency: "low" });
  }

  const applicable = issues.filter((i) => i.safety !== "manual");
  if (!flags.fix && applicable.length > 0) {
    const safe = applicable.filter((i) => i.safety === "safe");
    const cautious = applicable.filter((i) => i.safety === "cautious");
    if (safe.length > 0) {
      actions.push({
        label: "Apply safe auto-fixes",
        command: `${cli} doctor --fix --no-interactive`,
        reason: `${safe.length} safe fix${safe.length === 1 ? "" : "es"} available: ${safe.map((i) => i.id).join(", ")}`,
        urgency: status === "healthy" ? "low" : "medium",
      });
    }
    if (cautious.length > 0) {
      actions.push({
        label: "Apply cautious fixes (files are backed up first)",
        command: `${cli} doctor --fix --force --no-interactive`,
        reason: `Needs --force: ${cautious.map((i) => i.id).join(", ")}`,
        urgency: "medium",
      });
    }
  }
  if (flags.fix && flags.dryRun && plan && plan.wouldApply.length > 0) {
    actions.push({
      label: "Apply fixes for real",
      command: `${cli} doctor --fix${flags.force ? " --force" : ""} --no-interactive`,
      reason: `Dry run: would apply ${plan.wouldApply.join(", ")}`,
      urgency: "medium",
    });
  }
  const failed = (results ?? []).filter((r) => !r.success);
  if (failed.length > 0) {
    actions.push({ label: "Review failed fixes", reason: failed.map((r) => `${r.id}: ${r.message}`).join("; "), urgency: "medium" });
  }
  return actions
    .map((action, index) => ({ action, index }))
    .sort((a, b) => URGENCY_ORDER[a.action.urgency] - URGENCY_ORDER[b.action.urgency] || a.index - b.index)
    .map(({ action }) => action);
}

export const doctorOperation = defineOperation({
  name: "doctor",
  command: "doctor",
  description: "Check the health of cass-memory (storage, configuration, history source, LLM, sanitizer) and optionally fix problems.",
  input: DoctorInputSchema,
  output: DoctorResultSchema,
  async run(deps, input): Promise<DoctorResult> {
    const flags = {
      fix: Boolean(input.fix),
      dryRun: Boolean(input.dryRun),
      force: Boolean(input.force),
      interactive: Boolean(input.interactive),
    };
    let configProblems: readonly string[] = deps.runtimeReport?.configProblems ?? [];
    let { checks, issues } = await collect(deps, configProblems);
    const canApply = typeof deps.store.applyFix === "function";
    const plan = flags.fix || flags.dryRun ? planFixes(issues, flags, canApply) : undefined;
    let fixResults: FixResult[] | undefined;
    if (plan && flags.fix && !flags.dryRun && overallStatusOf(checks) !== "healthy" && plan.wouldApply.length > 0 && deps.store.applyFix) {
      fixResults = [];
      for (const id of plan.wouldApply) {
        try {
          const result = id === REDACT_SECRETS_FIX ? await redactStoredSecrets(deps) : await deps.store.applyFix(id);
          fixResults.push({ id: result.id, success: result.success, message: result.message, ...(result.backups && result.backups.length > 0 ? { backups: [...result.backups] } : {}) });
        } catch (error) {
          fixResults.push({ id, success: false, message: messageOf(error) });
        }
        if (fixResults[fixResults.length - 1]!.success) deps.logger.debug(`doctor: applied ${id}`);
        else deps.logger.warn(`doctor: fix ${id} failed: ${fixResults[fixResults.length - 1]!.message}`);
        if (id === "reset-config" && fixResults[fixResults.length - 1]!.success) await keepBackend(deps, fixResults[fixResults.length - 1]!);
      }
      // Report the state after the fixes (the configuration too, when the host can reload it).
      const recheck = deps.runtimeReport?.recheckConfig;
      if (recheck) {
        try {
          configProblems = await recheck();
        } catch (error) {
          configProblems = [`Could not reload the configuration: ${messageOf(error)}`];
        }
      }
      ({ checks, issues } = await collect(deps, configProblems));
    }
    const overallStatus = overallStatusOf(checks);
    const selfTest = input.selfTest ? await selfTests(deps, configProblems, await deps.runtimeReport?.llmStatus?.().catch(() => undefined)) : undefined;
    return {
      version: deps.runtimeReport?.version ?? "unknown",
      generatedAt: deps.clock.now().toISOString(),
      overallStatus,
      checks,
      fixableIssues: withHowToFix(issues, deps.cliName),
      recommendedActions: recommend(deps, checks, issues, overallStatus, flags, plan, fixResults),
      ...(plan ? { fixPlan: plan } : {}),
      ...(fixResults ? { fixResults } : {}),
      ...(selfTest ? { selfTest } : {}),
    };
  },
});
