import * as z from "zod";
import { toIsoString } from "./tolerant.js";
import { lazySchema } from "./lazy.js";

/** Records other than the playbook (reference §4.4–4.9, §7). Unknown fields are preserved. */

const timestamp = lazySchema(() => z.preprocess(toIsoString, z.string().min(1)));

export const DiaryEntrySchema = lazySchema(() => z.looseObject({
  id: z.string().min(1),
  sessionPath: z.string(),
  timestamp,
  agent: z.string().default("unknown"),
  workspace: z.string().optional(),
  duration: z.number().nullable().optional(),
  status: z.enum(["success", "failure", "mixed"]).default("mixed"),
  accomplishments: z.array(z.string()).default([]),
  decisions: z.array(z.string()).default([]),
  challenges: z.array(z.string()).default([]),
  preferences: z.array(z.string()).default([]),
  keyLearnings: z.array(z.string()).default([]),
  relatedSessions: z
    .array(
      z.looseObject({
        sessionPath: z.string(),
        agent: z.string(),
        relevanceScore: z.number(),
        snippet: z.string(),
      }),
    )
    .default([]),
  tags: z.array(z.string()).default([]),
  searchAnchors: z.array(z.string()).default([]),
}));
export type DiaryEntry = z.output<typeof DiaryEntrySchema>;

const scopeEnum = lazySchema(() => z.enum(["global", "workspace", "language", "framework", "task"]));
const kindEnum = lazySchema(() => z.enum(["project_convention", "stack_pattern", "workflow_rule", "anti_pattern"]));

/** A proposed change to the playbook (reflector output, curator input). */
export const DeltaSchema = lazySchema(() => z.discriminatedUnion("type", [
  z.looseObject({
    type: z.literal("add"),
    bullet: z.looseObject({
      content: z.string().min(1),
      category: z.string().min(1),
      id: z.string().optional(),
      scope: scopeEnum.optional(),
      workspace: z.string().optional(),
      kind: kindEnum.optional(),
      type: z.enum(["rule", "anti-pattern"]).optional(),
      isNegative: z.boolean().optional(),
      searchPointer: z.string().optional(),
      tags: z.array(z.string()).optional(),
    }),
    reason: z.string().default(""),
    sourceSession: z.string().default(""),
  }),
  z.looseObject({
    type: z.literal("helpful"),
    bulletId: z.string().min(1),
    sourceSession: z.string().optional(),
    context: z.string().optional(),
  }),
  z.looseObject({
    type: z.literal("harmful"),
    bulletId: z.string().min(1),
    sourceSession: z.string().optional(),
    reason: z.string().optional(),
    context: z.string().optional(),
  }),
  z.looseObject({
    type: z.literal("replace"),
    bulletId: z.string().min(1),
    newContent: z.string().min(1),
    reason: z.string().optional(),
  }),
  z.looseObject({
    type: z.literal("deprecate"),
    bulletId: z.string().min(1),
    reason: z.string().default(""),
    replacedBy: z.string().optional(),
  }),
  z.looseObject({
    type: z.literal("merge"),
    bulletIds: z.array(z.string().min(1)),
    mergedContent: z.string().min(1),
    reason: z.string().optional(),
  }),
]));
export type Delta = z.output<typeof DeltaSchema>;

export const OUTCOME_STATUSES = ["success", "failure", "mixed", "partial"] as const;
export const OutcomeRecordSchema = lazySchema(() => z.looseObject({
  sessionId: z.string(),
  outcome: z.enum(OUTCOME_STATUSES),
  rulesUsed: z.array(z.string()).default([]),
  notes: z.string().optional(),
  durationSec: z.number().optional(),
  task: z.string().optional(),
  errorCount: z.number().optional(),
  hadRetries: z.boolean().optional(),
  sentiment: z.enum(["positive", "negative", "neutral"]).optional(),
  autoGraded: z.boolean().optional(),
  recordedAt: timestamp,
  path: z.string().optional(),
}));
export type OutcomeRecord = z.output<typeof OutcomeRecordSchema>;

export const TraumaEntrySchema = lazySchema(() => z.looseObject({
  id: z.string().min(1),
  severity: z.enum(["CRITICAL", "FATAL"]),
  pattern: z.string().min(1),
  scope: z.enum(["global", "project"]),
  projectPath: z.string().optional(),
  status: z.enum(["active", "healed"]),
  trigger_event: z.looseObject({
    session_path: z.string(),
    timestamp,
    human_message: z.string().optional(),
  }),
  created_at: timestamp,
}));
export type TraumaEntry = z.output<typeof TraumaEntrySchema>;

export const ProcessedSessionSchema = lazySchema(() => z.looseObject({
  sessionPath: z.string(),
  processedAt: timestamp,
  diaryId: z.string().optional(),
  deltasGenerated: z.number().default(0),
}));
export type ProcessedSession = z.output<typeof ProcessedSessionSchema>;

export const ContextLogEntrySchema = lazySchema(() => z.looseObject({
  task: z.string(),
  ruleIds: z.array(z.string()).default([]),
  antiPatternIds: z.array(z.string()).default([]),
  workspace: z.string().optional(),
  session: z.string().optional(),
  timestamp,
  source: z.string().default("context"),
}));
export type ContextLogEntry = z.output<typeof ContextLogEntrySchema>;

export const OnboardingStateSchema = lazySchema(() => z.looseObject({
  version: z.literal(1),
  startedAt: timestamp,
  lastUpdatedAt: timestamp,
  processedSessions: z
    .array(
      z.looseObject({
        path: z.string(),
        processedAt: timestamp,
        rulesExtracted: z.number().int().min(0),
        skipped: z.boolean().optional(),
      }),
    )
    .default([]),
  stats: z
    .looseObject({ totalSessionsProcessed: z.number().default(0), totalRulesExtracted: z.number().default(0) })
    .default({ totalSessionsProcessed: 0, totalRulesExtracted: 0 }),
}));
export type OnboardingState = z.output<typeof OnboardingStateSchema>;

/**
 * Audit journal (`events.jsonl` beside each playbook; beyond the original). One event per bullet
 * touched by a mutation, appended under the playbook's lock right after the playbook is written.
 * `operation` is the command that caused it; `change` is what happened to this bullet.
 */
export const JOURNAL_OPERATIONS = [
  "add",
  "feedback",
  "replace",
  "deprecate",
  "remove",
  "forget",
  "undo",
  "merge",
  "import",
  "curate",
  "bootstrap",
  "update",
] as const;
export type JournalOperation = (typeof JOURNAL_OPERATIONS)[number];

export const JOURNAL_CHANGES = ["created", "deleted", "feedback", "content", "deprecated", "restored", "updated"] as const;
export type JournalChange = (typeof JOURNAL_CHANGES)[number];

/** JournalEventSchema's keys, in the order it returns them. */
export const JOURNAL_EVENT_KEYS: ReadonlySet<string> = new Set([
  "id", "timestamp", "operation", "change", "bulletId", "layer", "actor", "source", "runId", "reason", "hashBefore", "hashAfter", "before", "after",
]);

export const JournalEventSchema = lazySchema(() => z.looseObject({
  id: z.string().min(1),
  timestamp,
  operation: z.string().min(1),
  change: z.string().min(1),
  bulletId: z.string().min(1),
  layer: z.enum(["global", "repo"]),
  actor: z.string().default("unknown"),
  source: z.string().optional(),
  /** The reflection run that made the change (`cm undo --run <runId>` reverts it). */
  runId: z.string().optional(),
  reason: z.string().optional(),
  /** First 16 hex of the SHA-256 of the normalised content (reference §5.1 hashContent); null when absent. */
  hashBefore: z.string().nullable(),
  hashAfter: z.string().nullable(),
  /** The tracked fields that changed, with their values before and after. */
  before: z.record(z.string(), z.unknown()).optional(),
  after: z.record(z.string(), z.unknown()).optional(),
}));
export type JournalEvent = z.output<typeof JournalEventSchema>;

/**
 * The reflection-run log (`reflection-runs.jsonl` in the global directory; beyond the original).
 * A `run` record is appended when a reflection changed the playbook; a `revert` record when
 * `cm undo --run` took it back.
 */
export const ReflectionRunSchema = lazySchema(() => z.looseObject({
  type: z.literal("run"),
  runId: z.string().min(1),
  startedAt: timestamp,
  finishedAt: timestamp,
  mode: z.enum(["llm", "mixed", "deterministic"]),
  model: z.looseObject({ provider: z.string(), model: z.string() }).optional(),
  inputs: z
    .looseObject({
      days: z.number().optional(),
      maxSessions: z.number().optional(),
      agent: z.string().optional(),
      workspace: z.string().optional(),
      session: z.string().optional(),
    })
    .default({}),
  sessions: z.array(z.string()).default([]),
  deltasGenerated: z.number().default(0),
  /** Deltas the curator applied, per layer. */
  applied: z.looseObject({ global: z.number().default(0), repo: z.number().default(0) }).default({ global: 0, repo: 0 }),
  /** Bullets the run created or changed. */
  bulletIds: z.array(z.string()).default([]),
  errors: z.array(z.string()).default([]),
}));
export type ReflectionRun = z.output<typeof ReflectionRunSchema>;

export const ReflectionRevertSchema = lazySchema(() => z.looseObject({
  type: z.literal("revert"),
  runId: z.string().min(1),
  revertedAt: timestamp,
  /** Bullets changed by the revert. */
  bulletIds: z.array(z.string()).default([]),
}));
export type ReflectionRevert = z.output<typeof ReflectionRevertSchema>;
