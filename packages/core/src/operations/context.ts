import * as z from "zod";
import { compileSanitizer } from "../domain/sanitize.js";
import { redactDeep } from "../domain/secrets.js";
import {
  buildCassQuery,
  deprecatedPatternWarnings,
  rankBulletsForTask,
  suggestCassQueries,
  type ScoredBullet,
} from "../domain/ranking.js";
import { semanticScoresForTask } from "../domain/semantic.js";
import { runVerification } from "../domain/verification.js";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { DegradedInfo, HistoryHit, OperationDeps } from "../ports.js";
import { isActiveBullet, isAntiPattern, type DeprecatedPattern } from "../schemas/playbook.js";
import { TraumaEntrySchema, type TraumaEntry } from "../schemas/records.js";
import { findTraumaMatch } from "../domain/trauma.js";
import { loadContextPlaybook } from "./context-playbook.js";
import { warmLexicalIndex } from "../domain/lexical-cache.js";
import { requireNonEmpty, requirePositiveInt } from "./shared.js";
import { fitContextToBudget, measureJson, TrimmedSchema, type TrimmedIds } from "./context-view.js";
import { formatZodIssues } from "../operation.js";
import { requireWithinLimit } from "../domain/input-limits.js";
import { lazySchema } from "../schemas/lazy.js";
import { checkFlatObject, type FlatFields } from "../schemas/flat-object.js";

export const CONTEXT_HISTORY_TIMEOUT_MS = 8_000;
export const SNIPPET_MAX_CHARS = 300;

export const ContextInputSchema = lazySchema(() => z.object({
  task: z.string(),
  /** Absolute, canonical workspace path (the front end resolves `~`, relative paths and symlinks). */
  workspace: z.string().optional(),
  /**
   * Canonical working directory. Workspace-scoped rules match `workspace`, or this directory when
   * no workspace is given (reference §5.12); history is filtered by `workspace` only.
   */
  currentDir: z.string().optional(),
  limit: z.number().optional(),
  history: z.number().optional(),
  days: z.number().optional(),
  session: z.string().optional(),
  logContext: z.boolean().optional(),
  /** Skip the history search entirely (`--no-history`). */
  noHistory: z.boolean().optional(),
  /** Minimum relevance score a rule needs (default: config `minRelevanceScore`). */
  minScore: z.number().optional(),
  /** Trim the result to about this many tokens (≈ 4 characters each), lowest ranked first. */
  maxTokens: z.number().optional(),
}));
export type ContextInput = z.input<typeof ContextInputSchema>;

/** ContextInputSchema as a table (Operation.inputFields). */
export const CONTEXT_INPUT_FIELDS: FlatFields = {
  task: ["string", false],
  workspace: ["string", true],
  currentDir: ["string", true],
  limit: ["number", true],
  history: ["number", true],
  days: ["number", true],
  session: ["string", true],
  logContext: ["boolean", true],
  noHistory: ["boolean", true],
  minScore: ["number", true],
  maxTokens: ["number", true],
};

export const ScoredBulletSchema = lazySchema(() => z.looseObject({
  id: z.string(),
  content: z.string(),
  category: z.string(),
  relevanceScore: z.number(),
  effectiveScore: z.number(),
  finalScore: z.number(),
  lastHelpful: z.string(),
  reasoning: z.string(),
  /** Present when the rule's verification check failed against the workspace. */
  stale: z.object({ reason: z.string(), checkedAt: z.string() }).optional(),
}));

export const HistorySnippetSchema = lazySchema(() => z.looseObject({
  source_path: z.string(),
  line_number: z.number(),
  agent: z.string(),
  snippet: z.string(),
  origin: z.looseObject({ kind: z.enum(["local", "remote"]), host: z.string().optional() }),
  sessionPath: z.string(),
  timestamp: z.string().optional(),
}));

export const DegradedSchema = lazySchema(() => z.object({
  available: z.literal(false),
  reason: z.enum(["NOT_FOUND", "INDEX_MISSING", "FTS_TABLE_MISSING", "TIMEOUT", "OTHER"]),
  message: z.string(),
  suggestedFix: z.array(z.string()).optional(),
  /** The source that answered in its place (e.g. `native` while cass failed). */
  answeredBy: z.string().optional(),
}));

/** History that matched but lies before the lookback window (present only when the window held none). */
export const OlderHistorySchema = lazySchema(() => z.object({
  /** Sessions with matching history older than the window. */
  sessions: z.number(),
  /** The window that was searched (days). */
  days: z.number(),
  /** The flag that includes them, e.g. `--days 365`. */
  flag: z.string(),
  message: z.string(),
}));
export type OlderHistory = z.output<typeof OlderHistorySchema>;

export const ContextResultSchema = lazySchema(() => z.object({
  task: z.string(),
  relevantBullets: z.array(ScoredBulletSchema),
  antiPatterns: z.array(ScoredBulletSchema),
  historySnippets: z.array(HistorySnippetSchema),
  deprecatedWarnings: z.array(z.string()),
  suggestedCassQueries: z.array(z.string()),
  degraded: z.object({ cass: DegradedSchema.optional() }).optional(),
  /** No history inside the lookback window, but older sessions match: how many, and how to see them. */
  olderHistory: OlderHistorySchema.optional(),
  semanticMode: z.enum(["semantic", "keyword"]),
  semanticError: z.string().optional(),
  traumaWarning: z.object({ pattern: z.string(), reason: z.string(), reference: z.string() }).optional(),
  /** Present when `maxTokens` made the result smaller: how many of each list were left out. */
  trimmed: TrimmedSchema.optional(),
}));
export type ContextResult = z.output<typeof ContextResultSchema>;
export type HistorySnippet = z.output<typeof HistorySnippetSchema>;

/**
 * `cm context "<task>"`: the rules, pitfalls and past-session snippets relevant to a task
 * (reference §1.5.2, ranking §5.12). Works without `init` and without any history source.
 */
export const contextOperation = defineOperation({
  name: "cm_context",
  command: "context",
  description:
    "Get the playbook rules, anti-patterns and past-session history relevant to a task. Call before starting work.",
  input: ContextInputSchema,
  inputFields: CONTEXT_INPUT_FIELDS,
  output: ContextResultSchema,
  run: (deps, input) => lookupContextParsed(deps, input, {}),
});

/** How a front end sizes what it prints, for `maxTokens` (see `fitContextToBudget`). */
export interface ContextLookupOptions {
  /** Tokens of the result as printed (default: its JSON text ÷ 4, as an MCP result carries it). */
  measure?: (result: ContextResult) => number;
  /** Receives the ids `maxTokens` removed, when it removed any (diagnostics; not in the result). */
  onTrimmed?: (removed: TrimmedIds) => void;
}

/**
 * `contextOperation` with the front end's own measure of the printed result: validates `rawInput`
 * like `runOperation` does, then runs the lookup (the context log records what is returned).
 */
export async function lookupContext(deps: OperationDeps, rawInput: ContextInput, options: ContextLookupOptions = {}): Promise<ContextResult> {
  const checked = checkFlatObject<z.output<typeof ContextInputSchema>>(CONTEXT_INPUT_FIELDS, rawInput);
  if (checked !== undefined) return lookupContextParsed(deps, checked, options);
  const parsed = ContextInputSchema.safeParse(rawInput);
  if (!parsed.success) {
    throw new AppError("INVALID_INPUT", formatZodIssues(parsed.error), {
      hint: `Run '${deps.cliName} context --help' for usage.`,
      details: { issues: parsed.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
    });
  }
  return lookupContextParsed(deps, parsed.data, options);
}

async function lookupContextParsed(
  deps: OperationDeps,
  input: z.output<typeof ContextInputSchema>,
  options: ContextLookupOptions,
): Promise<ContextResult> {
    const task = requireNonEmpty("task", input.task, `Example: ${deps.cliName} context "fix the login bug" --json`);
    requireWithinLimit("task", task, "taskBytes", deps.config, "Describe the task in a sentence or two; leave file contents and logs out.");
    const limit = requirePositiveInt("limit", input.limit, deps.config.maxBulletsInContext);
    const historyLimit = requirePositiveInt("history", input.history, deps.config.maxHistoryInContext);
    const days = requirePositiveInt("days", input.days, deps.config.sessionLookbackDays);
    const maxTokens = input.maxTokens === undefined ? undefined : requirePositiveInt("maxTokens", input.maxTokens, 0);
    const minRelevance = input.minScore ?? deps.config.minRelevanceScore;
    if (!Number.isFinite(minRelevance) || minRelevance < 0) {
      throw new AppError("INVALID_INPUT", "minScore must be a number >= 0.", {
        hint: `${deps.cliName} context "<task>" --min-score 0.3`,
        details: { field: "minScore", received: input.minScore ?? null },
      });
    }
    if (input.workspace !== undefined) requireNonEmpty("workspace", input.workspace);
    if (input.session !== undefined) requireNonEmpty("session", input.session);

    const now = deps.clock.now();
    const sanitizer = compileSanitizer(deps.config.sanitization);
    const [{ playbook, candidatesFrom }, traumaWarning] = await Promise.all([loadContextPlaybook(deps, task), findTraumaWarning(deps, task)]);
    // Saved analyses are for whole playbooks; candidates change with every task.
    if (candidatesFrom === undefined) await warmLexicalIndex(playbook.bullets, deps.lexicalCache, deps.logger);

    const rankingWorkspace = input.workspace ?? input.currentDir;
    // Rank enough extra rules that every rule a failed check pushes down can be replaced.
    let verifiable = 0;
    for (const b of playbook.bullets) if (b.verification !== undefined && isActiveBullet(b)) verifiable++;
    // Semantic scores when enabled and an embedder answers; any failure means keyword mode + semanticError.
    const semantic = await semanticScoresForTask(deps, task, playbook.bullets, sanitizer.sanitize);
    const ranked = rankBulletsForTask(playbook.bullets, task, {
      ...(semantic.rank !== undefined ? { semantic: semantic.rank } : {}),
      now,
      config: deps.config,
      ...(rankingWorkspace !== undefined ? { workspace: rankingWorkspace } : {}),
      limit: limit + verifiable,
      minRelevance,
    });
    const selected = await applyVerifications(deps, ranked.ranked, rankingWorkspace, now.toISOString(), limit);

    const query = input.noHistory ? "" : buildCassQuery(ranked.keywords);
    let historySnippets: HistorySnippet[] = [];
    let degraded: DegradedInfo | undefined;
    let olderHistory: OlderHistory | undefined;
    if (query !== "") {
      const result = await deps.episodic.search(query, {
        limit: historyLimit,
        days,
        ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
        timeoutMs: CONTEXT_HISTORY_TIMEOUT_MS,
      });
      historySnippets = result.hits.slice(0, historyLimit).map((hit) => toSnippet(hit, sanitizer.sanitize));
      degraded = result.degraded;
      if (result.hits.length === 0 && (degraded === undefined || degraded.answeredBy !== undefined)) {
        olderHistory = await findOlderHistory(deps, query, days, input.workspace, "--days");
      }
    }

    const deprecatedWarnings = [
      ...deprecatedPatternWarnings(task, playbook.deprecatedPatterns),
      ...historyPatternWarnings(historySnippets, playbook.deprecatedPatterns),
    ];

    const result: ContextResult = {
      task,
      relevantBullets: selected.filter((b) => !isAntiPattern(b)),
      antiPatterns: selected.filter((b) => isAntiPattern(b)),
      historySnippets,
      deprecatedWarnings,
      suggestedCassQueries: suggestCassQueries(task, ranked.keywords),
      ...(degraded ? { degraded: { cass: degraded } } : {}),
      ...(olderHistory ? { olderHistory } : {}),
      semanticMode: semantic.mode,
      ...(semantic.error !== undefined ? { semanticError: semantic.error } : {}),
      ...(traumaWarning ? { traumaWarning } : {}),
    };
    if (maxTokens !== undefined) {
      const removed = fitContextToBudget(result, maxTokens, options.measure ?? measureJson);
      if (removed !== null) options.onTrimmed?.(removed);
    }

    if (input.logContext) {
      await logContext(deps, {
        task: sanitizer.sanitize(task),
        ruleIds: result.relevantBullets.map((b) => b.id),
        antiPatternIds: result.antiPatterns.map((b) => b.id),
        ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
        ...(input.session !== undefined ? { session: input.session } : {}),
        timestamp: now.toISOString(),
        source: "context",
      });
    }
    return result;
}

/** Hits looked at when counting the sessions that match outside the lookback window. */
const OLDER_HISTORY_PROBE = 100;
/** The second search (only made when the window held nothing) gets less time than the first. */
const OLDER_HISTORY_TIMEOUT_MS = 4_000;

/**
 * When a window held no history: the sessions whose history matches `query` at any age, counted
 * (bounded), with the flag that widens the window. Undefined when there are none or the source fails.
 */
export async function findOlderHistory(
  deps: OperationDeps,
  query: string,
  days: number,
  workspace: string | undefined,
  flagName: string,
): Promise<OlderHistory | undefined> {
  let hits: HistoryHit[];
  try {
    const older = await deps.episodic.search(query, {
      limit: OLDER_HISTORY_PROBE,
      ...(workspace !== undefined ? { workspace } : {}),
      timeoutMs: OLDER_HISTORY_TIMEOUT_MS,
    });
    hits = older.hits;
  } catch (error) {
    deps.logger.debug(`Looking for older history failed: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
  // The windowed search found nothing, so every hit here lies before the window.
  const sessions = new Set<string>();
  let oldest = Number.POSITIVE_INFINITY;
  for (const hit of hits) {
    sessions.add(hit.source_path);
    let at = typeof hit.created_at === "number" ? hit.created_at : typeof hit.created_at === "string" ? Date.parse(hit.created_at) : Number.NaN;
    // Some cass builds report seconds.
    if (Number.isFinite(at) && at > 0 && at < 1e11) at *= 1000;
    if (Number.isFinite(at) && at > 0) oldest = Math.min(oldest, at);
  }
  if (sessions.size === 0) return undefined;
  // Hits without a time: a year is the widest window offered.
  const needed = Math.max(days + 1, Number.isFinite(oldest) ? Math.ceil((deps.clock.now().getTime() - oldest) / 86_400_000) : 365);
  const flag = `${flagName} ${needed}`;
  const count = `${sessions.size}${hits.length >= OLDER_HISTORY_PROBE ? "+" : ""}`;
  return {
    sessions: sessions.size,
    days,
    flag,
    message: `No history in the last ${days} days, but ${count} older session(s) match; use ${flag} to include them.`,
  };
}

/** Verification checks make a stale rule rank this much lower (its finalScore is multiplied by it). */
export const STALE_PENALTY = 0.5;

/**
 * Runs the verification checks of the ranked rules against the workspace: a rule whose check
 * fails gets `stale: {reason}` and a lower final score, then the best `limit` are kept. Because a
 * failed check only lowers a score, ranking `limit + (rules with checks)` first is enough.
 */
async function applyVerifications(
  deps: OperationDeps,
  ranked: ScoredBullet[],
  workspace: string | undefined,
  nowIso: string,
  limit: number,
): Promise<ScoredBullet[]> {
  if (workspace === undefined || !ranked.some((b) => b.verification !== undefined)) return ranked.slice(0, limit);
  const checked = await Promise.all(
    ranked.map(async (bullet) => {
      if (bullet.verification === undefined) return bullet;
      const outcome = await runVerification(bullet.verification, deps.files, workspace, nowIso);
      if (outcome.ok) return bullet;
      return {
        ...bullet,
        finalScore: bullet.finalScore * STALE_PENALTY,
        stale: { reason: outcome.reason ?? "verification failed", checkedAt: outcome.checkedAt },
      };
    }),
  );
  return checked
    .map((bullet, order) => ({ bullet, order }))
    .sort((a, b) => b.bullet.finalScore - a.bullet.finalScore || a.order - b.order)
    .slice(0, limit)
    .map((entry) => entry.bullet);
}

export function toSnippet(raw: HistoryHit, sanitize: (text: string) => string): HistorySnippet {
  // Every text field of a hit (title, snippet, content, …) is redacted, not only the snippet.
  const hit = redactDeep(raw, sanitize);
  const flat = hit.snippet.replace(/[\r\n]+/g, " ").trim();
  const snippet = flat.length > SNIPPET_MAX_CHARS ? `${flat.slice(0, SNIPPET_MAX_CHARS)}...` : flat;
  const created = hit.created_at;
  return {
    ...hit,
    snippet,
    sessionPath: hit.source_path,
    ...(created !== undefined && created !== null && created !== "" && created !== 0 ? { timestamp: String(created) } : {}),
  };
}

function historyPatternWarnings(snippets: HistorySnippet[], patterns: DeprecatedPattern[]): string[] {
  const warnings: string[] = [];
  for (const p of patterns) {
    const needle = p.pattern.toLowerCase();
    if (needle === "" || !snippets.some((s) => s.snippet.toLowerCase().includes(needle))) continue;
    warnings.push(
      `${p.pattern} was deprecated${p.replacement ? ` - use ${p.replacement} instead` : ""}${p.reason ? ` (Reason: ${p.reason})` : ""}`,
    );
  }
  return warnings;
}

/**
 * The first active trauma whose pattern matches the task (case-insensitive, first 16 KiB of the
 * task), global before repo. Invalid and unsafe patterns are skipped, never run (domain/trauma.ts).
 */
async function findTraumaWarning(
  deps: OperationDeps,
  task: string,
): Promise<{ pattern: string; reason: string; reference: string } | undefined> {
  const layers = deps.store.locations.repoDir !== null ? (["global", "repo"] as const) : (["global"] as const);
  const logs = await Promise.all(layers.map((layer) => deps.store.readLog(layer, "traumas")));
  const entries: TraumaEntry[] = [];
  for (const { records } of logs) {
    for (const raw of records) {
      const parsed = TraumaEntrySchema.safeParse(raw);
      if (parsed.success) entries.push(parsed.data);
    }
  }
  const found = findTraumaMatch(entries, task);
  if (found === undefined) return undefined;
  const t = found.entry;
  return {
    pattern: t.pattern,
    reason: t.trigger_event.human_message ?? `${t.severity} incident`,
    reference: t.trigger_event.session_path,
  };
}

/** Context logs go to the repo's `.cass/` when it exists, else the global dir (reference §4.7). */
async function logContext(deps: OperationDeps, entry: Record<string, unknown>): Promise<void> {
  let layer: "global" | "repo" = "global";
  if (deps.store.locations.repoDir !== null) {
    const status = await deps.store.layerStatus("repo");
    if (status.present.length > 0) layer = "repo";
  }
  await deps.store.appendLog(layer, "context-log", [entry]);
}
