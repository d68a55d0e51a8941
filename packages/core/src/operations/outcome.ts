import * as z from "zod";
import { AppError } from "../errors.js";
import { compileSanitizer } from "../domain/sanitize.js";
import {
  applyImplicitFeedback,
  hasFeedbackEvent,
  implicitFeedbackEvent,
  scoreImplicitFeedback,
  SENTIMENTS,
  detectSentiment,
  type OutcomeInput,
  type OutcomeStatus,
  type Sentiment,
} from "../learning/outcomes.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import type { Bullet, FeedbackEvent, Playbook } from "../schemas/playbook.js";
import {
  ContextLogEntrySchema,
  OUTCOME_STATUSES,
  OutcomeRecordSchema,
  type ContextLogEntry,
  type OutcomeRecord,
} from "../schemas/records.js";
import { formatZodIssues } from "../operation.js";
import { mutatePlaybookJournaled, requireNonEmpty, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * Outcomes (reference §1.5.22, §1.5.23, §4.7, §5.7): `cm outcome` records how a task went and turns
 * it into implicit feedback on the rules it used; `cm outcome-apply` re-applies logged outcomes.
 * `recordOutcomes` is shared with reflect, which records the sessions it graded itself.
 */

/** Session id of an outcome reported without `--session`. */
export const MANUAL_OUTCOME_SESSION = "cli-manual";
/** Logged outcomes `outcome-apply` looks at by default (the newest ones). */
export const DEFAULT_OUTCOME_APPLY_LIMIT = 50;
/** The soft-success reason of `cm outcome` when the signals cancel out. */
export const OUTCOME_NO_SIGNAL_REASON = "No implicit signal strong enough to record feedback";

/** The soft-success reason of `cm outcome-apply --session <id>` when the log has nothing for it. */
export function noOutcomesReason(session: string): string {
  return `No outcomes found for session ${session}`;
}

// ---------------------------------------------------------------------------------------------
// Where the log lives

/**
 * The outcome and context logs live in the repository's `.cass/` when it exists, else in the
 * global directory (reference §4.7; the same rule `context --log-context` follows).
 */
export async function outcomeLogLayer(deps: OperationDeps): Promise<Layer> {
  if (deps.store.locations.repoDir === null) return "global";
  const status = await deps.store.layerStatus("repo");
  return status.present.length > 0 ? "repo" : "global";
}

function joinPath(dir: string, name: string): string {
  return `${dir.replace(/[\\/]+$/, "")}/${name}`;
}

export function outcomeLogPath(deps: OperationDeps, layer: Layer): string {
  const dir = layer === "repo" ? deps.store.locations.repoDir : deps.store.locations.globalDir;
  return joinPath(dir ?? deps.store.locations.globalDir, "outcomes.jsonl");
}

/** The valid records of the layer's outcome log, in file order (invalid lines are skipped). */
export async function readOutcomeLog(deps: OperationDeps, layer: Layer): Promise<OutcomeRecord[]> {
  const { records } = await deps.store.readLog(layer, "outcomes");
  const out: OutcomeRecord[] = [];
  for (const raw of records) {
    const parsed = OutcomeRecordSchema.safeParse(raw);
    if (parsed.success) out.push(parsed.data);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Applying outcomes as feedback

export interface OutcomeFeedbackPerRecord {
  sessionId: string;
  recordedAt: string;
  /** null when the outcome carries no signal worth recording (or names no rules). */
  type: "helpful" | "harmful" | null;
  weight: number | null;
  /** The signals behind the feedback ("success, fast"). */
  context: string | null;
  rules: string[];
  /** Rules that got the event now. */
  applied: number;
  /** Rules that already had this outcome's event (re-applying is a no-op). */
  alreadyApplied: number;
  /** Rules found in neither playbook. */
  missing: string[];
}

export interface OutcomeFeedbackResult {
  /** Feedback events added, over all records. */
  applied: number;
  /** Distinct rule ids found in neither playbook, in order of first appearance. */
  missing: string[];
  alreadyApplied: number;
  perRecord: OutcomeFeedbackPerRecord[];
  /** Ids of the bullets that got an event now. */
  touched: string[];
}

export interface OutcomeFeedbackOptions {
  /** The reflection run recording these outcomes (put on the journal events). */
  runId?: string;
}

interface PlannedEvent {
  record: number;
  ruleId: string;
  event: FeedbackEvent;
}

function uniqueRules(rules: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of rules) {
    const id = raw.trim();
    if (id === "" || seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out;
}

const bulletsById = (playbook: Playbook | null): Map<string, Bullet> => new Map((playbook?.bullets ?? []).map((b) => [b.id, b]));

/**
 * Applies each outcome's implicit feedback (reference §5.7) to the rules it names: the repository
 * playbook when it holds the rule, else the global one. Each rule gets one event `{type,
 * timestamp: recordedAt, sessionPath: sessionId, context, decayedValue, reason: "other" if
 * harmful}`; an event already present (same type, session and timestamp) is not added again, so
 * re-applying a log is harmless. Mutations are journaled (operation `feedback`, source = the
 * session id, plus `runId` when given), one locked write per layer and session.
 */
export async function applyOutcomeFeedback(
  deps: OperationDeps,
  records: readonly OutcomeRecord[],
  options: OutcomeFeedbackOptions = {},
): Promise<OutcomeFeedbackResult> {
  const hasRepo = deps.store.locations.repoPlaybook !== null;
  const [repoPlaybook, globalPlaybook] = await Promise.all([
    hasRepo ? deps.store.readPlaybook("repo") : Promise.resolve(null),
    deps.store.readPlaybook("global"),
  ]);
  const snapshot: Record<Layer, Map<string, Bullet>> = { repo: bulletsById(repoPlaybook), global: bulletsById(globalPlaybook) };

  const perRecord: OutcomeFeedbackPerRecord[] = [];
  // Grouped by layer and session, in order of first appearance: one journaled write per group.
  const groups = new Map<string, { layer: Layer; sessionId: string; reasons: Set<string>; items: PlannedEvent[] }>();

  records.forEach((record, index) => {
    const rules = uniqueRules(record.rulesUsed ?? []);
    const scored = rules.length > 0 ? scoreImplicitFeedback({ ...record, rulesUsed: rules }) : null;
    const entry: OutcomeFeedbackPerRecord = {
      sessionId: record.sessionId,
      recordedAt: record.recordedAt,
      type: scored?.type ?? null,
      weight: scored?.decayedValue ?? null,
      context: scored?.context ?? null,
      rules,
      applied: 0,
      alreadyApplied: 0,
      missing: [],
    };
    perRecord.push(entry);
    if (scored === null) return;

    const event = implicitFeedbackEvent({ feedback: scored, timestamp: record.recordedAt, sessionPath: record.sessionId });
    for (const ruleId of rules) {
      const layer: Layer | null = snapshot.repo.has(ruleId) ? "repo" : snapshot.global.has(ruleId) ? "global" : null;
      if (layer === null) {
        entry.missing.push(ruleId);
        continue;
      }
      const key = `${layer}\u0000${record.sessionId}`;
      let group = groups.get(key);
      if (!group) {
        group = { layer, sessionId: record.sessionId, reasons: new Set(), items: [] };
        groups.set(key, group);
      }
      group.reasons.add(scored.context);
      group.items.push({ record: index, ruleId, event });
    }
  });

  const now = deps.clock.now();
  const touched = new Set<string>();
  for (const group of groups.values()) {
    // Nothing to write when every event is already there (the common case of a re-apply).
    const known = snapshot[group.layer];
    if (group.items.every((item) => hasFeedbackEvent(known.get(item.ruleId)!, item.event))) {
      for (const item of group.items) perRecord[item.record]!.alreadyApplied++;
      continue;
    }
    await mutatePlaybookJournaled(
      deps,
      group.layer,
      {
        operation: "feedback",
        source: group.sessionId,
        ...(options.runId !== undefined ? { runId: options.runId } : {}),
        reason: `outcome: ${[...group.reasons].join("; ")}`,
      },
      (playbook) => {
        for (const item of group.items) {
          const entry = perRecord[item.record]!;
          const index = playbook.bullets.findIndex((b) => b.id === item.ruleId);
          if (index < 0) {
            // Removed between the read and the lock.
            entry.missing.push(item.ruleId);
            continue;
          }
          const next = applyImplicitFeedback(playbook.bullets[index]!, item.event, now, deps.config);
          if (next === null) entry.alreadyApplied++;
          else {
            playbook.bullets[index] = next;
            entry.applied++;
            touched.add(item.ruleId);
          }
        }
      },
    );
  }

  const missing: string[] = [];
  for (const entry of perRecord) for (const id of entry.missing) if (!missing.includes(id)) missing.push(id);
  return {
    applied: perRecord.reduce((n, e) => n + e.applied, 0),
    missing,
    alreadyApplied: perRecord.reduce((n, e) => n + e.alreadyApplied, 0),
    perRecord,
    touched: [...touched],
  };
}

// ---------------------------------------------------------------------------------------------
// Recording outcomes (log + feedback)

export interface RecordOutcomesResult extends OutcomeFeedbackResult {
  /** The records as appended to the log (notes and task sanitised, `recordedAt` and `path` set). */
  records: OutcomeRecord[];
  /** The layer whose outcome log was written. */
  logLayer: Layer;
}

/**
 * Appends outcomes to the outcome log (the repository's `.cass/` when it exists, else the global
 * directory) and applies their implicit feedback ({@link applyOutcomeFeedback}). Notes and task are
 * sanitised first. A record without `recordedAt` gets the clock's time (made unique per session
 * within the batch, since the time is the feedback's idempotency key). With `runId`, the records
 * and the journal events carry it.
 */
export async function recordOutcomes(
  deps: OperationDeps,
  inputs: readonly OutcomeInput[],
  options: OutcomeFeedbackOptions = {},
): Promise<RecordOutcomesResult> {
  const logLayer = await outcomeLogLayer(deps);
  if (inputs.length === 0) return { applied: 0, missing: [], alreadyApplied: 0, perRecord: [], touched: [], records: [], logLayer };
  const path = outcomeLogPath(deps, logLayer);
  const sanitizer = compileSanitizer(deps.config.sanitization);
  const nowMs = deps.clock.now().getTime();
  const taken = new Set<string>();

  const records = inputs.map((input): OutcomeRecord => {
    let recordedAt = input.recordedAt;
    if (recordedAt === undefined) {
      let ms = nowMs;
      while (taken.has(`${input.sessionId}\u0000${ms}`)) ms++;
      taken.add(`${input.sessionId}\u0000${ms}`);
      recordedAt = new Date(ms).toISOString();
    }
    // Key order of the original's records.
    const raw: Record<string, unknown> = { sessionId: input.sessionId, outcome: input.outcome, rulesUsed: uniqueRules(input.rulesUsed) };
    if (input.notes !== undefined) raw.notes = sanitizer.sanitize(input.notes);
    if (input.durationSec !== undefined) raw.durationSec = input.durationSec;
    if (input.task !== undefined) raw.task = sanitizer.sanitize(input.task);
    if (input.errorCount !== undefined) raw.errorCount = input.errorCount;
    if (input.hadRetries !== undefined) raw.hadRetries = input.hadRetries;
    if (input.sentiment !== undefined) raw.sentiment = input.sentiment;
    if (input.autoGraded !== undefined) raw.autoGraded = input.autoGraded;
    raw.recordedAt = recordedAt;
    raw.path = path;
    if (options.runId !== undefined) raw.runId = options.runId;
    const parsed = OutcomeRecordSchema.safeParse(raw);
    if (!parsed.success || input.sessionId.trim() === "") {
      throw new AppError("VALIDATION_FAILED", `Invalid outcome record: ${parsed.success ? "sessionId is empty" : formatZodIssues(parsed.error)}`, {
        details: { sessionId: input.sessionId },
      });
    }
    return parsed.data;
  });

  await deps.store.appendLog(logLayer, "outcomes", records);
  const feedback = await applyOutcomeFeedback(deps, records, options);
  return { ...feedback, records, logLayer };
}

// ---------------------------------------------------------------------------------------------
// cm outcome

export const OutcomeCommandInputSchema = lazySchema(() => z.object({
  status: z.string(),
  /** Comma-separated rule ids, or a list. */
  rules: z.union([z.string(), z.array(z.string())]),
  session: z.string().optional(),
  /** Seconds the task took. */
  duration: z.number().optional(),
  /** Errors met during the task. */
  errors: z.number().optional(),
  retries: z.boolean().optional(),
  sentiment: z.string().optional(),
  /** Free-text notes; the sentiment is detected from them when `sentiment` is absent. */
  text: z.string().optional(),
  /** The task the outcome is about (logged, sanitised). */
  task: z.string().optional(),
}));
export type OutcomeCommandInput = z.input<typeof OutcomeCommandInputSchema>;

const OutcomeRecordedSchema = lazySchema(() => z.object({
  applied: z.number(),
  missing: z.array(z.string()),
  type: z.enum(["helpful", "harmful"]),
  weight: z.number(),
  sentiment: z.enum(SENTIMENTS),
}));
const OutcomeNoSignalSchema = lazySchema(() => z.object({
  feedbackRecorded: z.literal(false),
  rulesProvided: z.array(z.string()),
}));
export const OutcomeResultSchema = lazySchema(() => z.union([OutcomeRecordedSchema, OutcomeNoSignalSchema]));
export type OutcomeResult = z.output<typeof OutcomeResultSchema>;

function oneOfValue<T extends string>(name: string, raw: string, allowed: readonly T[], hint?: string): T {
  const value = raw.trim().toLowerCase();
  const match = allowed.find((a) => a === value);
  if (match === undefined) {
    throw new AppError("INVALID_INPUT", `${name} must be one of: ${allowed.join(", ")}.`, {
      ...(hint !== undefined ? { hint } : {}),
      details: { field: name, received: raw, allowed: [...allowed] },
    });
  }
  return match;
}

function nonNegativeInt(name: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  return requirePositiveInt(name, value, 0, 0);
}

/** Splits `a, b,,c` into ids; a list is trimmed the same way. */
export function parseRuleList(rules: string | readonly string[]): string[] {
  const parts = typeof rules === "string" ? rules.split(",") : rules.flatMap((r) => r.split(","));
  return uniqueRules(parts);
}

/**
 * `cm outcome <status> <rules>` (reference §1.5.22): scores the outcome's implicit signal; when
 * there is one, logs the outcome and records the feedback on each rule, else reports that
 * nothing was recorded (a soft success).
 */
export const outcomeOperation = defineOperation({
  name: "cm_outcome",
  command: "outcome",
  description:
    "Report how a task went (success|failure|mixed|partial) and which rules it used; records implicit helpful/harmful feedback on those rules.",
  input: OutcomeCommandInputSchema,
  output: OutcomeResultSchema,
  async run(deps, input): Promise<OutcomeResult> {
    const cli = deps.cliName;
    const outcome: OutcomeStatus = oneOfValue("status", input.status, OUTCOME_STATUSES, `Example: ${cli} outcome success b-abc123`);
    const rules = parseRuleList(input.rules);
    if (rules.length === 0) {
      throw new AppError("MISSING_REQUIRED", "rules is required.", {
        hint: `Pass comma-separated rule ids, e.g. ${cli} outcome ${outcome} b-abc123,b-def456`,
        details: { field: "rules", received: input.rules },
      });
    }
    const durationSec = nonNegativeInt("duration", input.duration);
    const errorCount = nonNegativeInt("errors", input.errors);
    const session = input.session !== undefined ? requireNonEmpty("session", input.session) : MANUAL_OUTCOME_SESSION;
    const sentiment: Sentiment =
      input.sentiment !== undefined ? oneOfValue("sentiment", input.sentiment, SENTIMENTS) : detectSentiment(input.text);
    await requireSomeKnownRule(deps, rules, outcome);

    const outcomeInput: OutcomeInput = {
      sessionId: session,
      outcome,
      rulesUsed: rules,
      ...(input.text !== undefined && input.text.trim() !== "" ? { notes: input.text } : {}),
      ...(durationSec !== undefined ? { durationSec } : {}),
      ...(input.task !== undefined && input.task.trim() !== "" ? { task: input.task } : {}),
      ...(errorCount !== undefined ? { errorCount } : {}),
      ...(input.retries === true ? { hadRetries: true } : {}),
      sentiment,
    };
    const scored = scoreImplicitFeedback(outcomeInput);
    if (scored === null) return { feedbackRecorded: false, rulesProvided: rules };

    const result = await recordOutcomes(deps, [outcomeInput]);
    return { applied: result.applied, missing: result.missing, type: scored.type, weight: scored.decayedValue, sentiment };
  },
});

/**
 * An outcome naming only rules that exist in neither layer is a mistake (a typo, another
 * machine's ids): refused, nothing recorded. Some unknown ids among known ones are recorded and
 * reported in `missing`, as the original does.
 */
async function requireSomeKnownRule(deps: OperationDeps, rules: readonly string[], outcome: OutcomeStatus): Promise<void> {
  const hasRepo = deps.store.locations.repoDir !== null;
  const [global, repo] = await Promise.all([deps.store.readPlaybook("global"), hasRepo ? deps.store.readPlaybook("repo") : Promise.resolve(null)]);
  const known = new Set([...(global?.bullets ?? []), ...(repo?.bullets ?? [])].map((b) => b.id));
  if (rules.some((id) => known.has(id))) return;
  throw new AppError("BULLET_NOT_FOUND", `No rule with ${rules.length === 1 ? "this id" : "any of these ids"} exists: ${rules.join(", ")}. Nothing was recorded.`, {
    hint: `Use the ids cm context returned (e.g. ${deps.cliName} outcome ${outcome} b-abc123); list them with: ${deps.cliName} playbook list`,
    details: { field: "rules", missing: [...rules] },
  });
}

// ---------------------------------------------------------------------------------------------
// cm outcome-apply

export const OutcomeApplyInputSchema = lazySchema(() => z.object({
  session: z.string().optional(),
  limit: z.number().optional(),
}));
export type OutcomeApplyInput = z.input<typeof OutcomeApplyInputSchema>;

const ApplyAllSchema = lazySchema(() => z.object({
  applied: z.number(),
  missing: z.array(z.string()),
  totalOutcomes: z.number(),
  /** Events that were already recorded (beyond the original). */
  alreadyApplied: z.number(),
}));
const ApplySessionSchema = lazySchema(() => z.object({
  applied: z.number(),
  missing: z.array(z.string()),
  session: z.string(),
  alreadyApplied: z.number(),
}));
const ApplyNoneSchema = lazySchema(() => z.object({
  session: z.string(),
  outcomesFound: z.literal(0),
  applied: z.literal(0),
  missing: z.array(z.string()),
}));
export const OutcomeApplyResultSchema = lazySchema(() => z.union([ApplyAllSchema, ApplySessionSchema, ApplyNoneSchema]));
export type OutcomeApplyResult = z.output<typeof OutcomeApplyResultSchema>;

/**
 * Fills in the rules of outcomes logged without any: those of the newest context-log entry of the
 * same session that listed rules (reference §1.5.23). Such outcomes count as auto-graded.
 */
export function backfillRulesFromContextLog(records: readonly OutcomeRecord[], contextLog: readonly ContextLogEntry[]): OutcomeRecord[] {
  const newest = new Map<string, { entry: ContextLogEntry; time: number }>();
  for (const entry of contextLog) {
    if (entry.session === undefined || entry.ruleIds.length === 0) continue;
    const time = Date.parse(entry.timestamp);
    const current = newest.get(entry.session);
    // Later lines win ties (and times that do not parse).
    if (!current || !(Number.isFinite(current.time) && Number.isFinite(time) && time < current.time)) {
      newest.set(entry.session, { entry, time });
    }
  }
  return records.map((record) => {
    if (record.rulesUsed.length > 0) return record;
    const match = newest.get(record.sessionId);
    return match ? { ...record, rulesUsed: [...match.entry.ruleIds], autoGraded: true } : record;
  });
}

/**
 * `cm outcome-apply [--session <id>] [--limit <n>]` (reference §1.5.23): applies the newest logged
 * outcomes again (idempotent: events already recorded are not added twice). With `--session`,
 * only that session's outcomes (the limit then counts that session's outcomes).
 */
export const outcomeApplyOperation = defineOperation({
  name: "cm_outcome_apply",
  command: "outcome-apply",
  description: "Apply logged task outcomes as implicit feedback on the rules they used (idempotent).",
  input: OutcomeApplyInputSchema,
  output: OutcomeApplyResultSchema,
  async run(deps, input): Promise<OutcomeApplyResult> {
    const limit = requirePositiveInt("limit", input.limit, DEFAULT_OUTCOME_APPLY_LIMIT);
    const session = input.session !== undefined ? requireNonEmpty("session", input.session) : undefined;
    const layer = await outcomeLogLayer(deps);
    const all = await readOutcomeLog(deps, layer);
    const selected = (session !== undefined ? all.filter((r) => r.sessionId === session) : all).slice(-limit);
    if (session !== undefined && selected.length === 0) return { session, outcomesFound: 0, applied: 0, missing: [] };

    let records = selected;
    if (records.some((r) => r.rulesUsed.length === 0)) {
      const { records: rawContext } = await deps.store.readLog(layer, "context-log");
      const contextLog: ContextLogEntry[] = [];
      for (const raw of rawContext) {
        const parsed = ContextLogEntrySchema.safeParse(raw);
        if (parsed.success) contextLog.push(parsed.data);
      }
      records = backfillRulesFromContextLog(records, contextLog);
    }
    const result = await applyOutcomeFeedback(deps, records);
    return session !== undefined
      ? { applied: result.applied, missing: result.missing, session, alreadyApplied: result.alreadyApplied }
      : { applied: result.applied, missing: result.missing, totalOutcomes: records.length, alreadyApplied: result.alreadyApplied };
  },
});
