import * as z from "zod";
import { camelizeKnownKeys, toIsoString } from "./tolerant.js";

export const BULLET_SCOPES = ["global", "workspace", "language", "framework", "task"] as const;
export const BULLET_SOURCES = ["learned", "community", "manual", "custom"] as const;
export const BULLET_TYPES = ["rule", "anti-pattern"] as const;
export const BULLET_KINDS = ["project_convention", "stack_pattern", "workflow_rule", "anti_pattern"] as const;
export const BULLET_STATES = ["draft", "active", "retired"] as const;
export const MATURITIES = ["candidate", "established", "proven", "deprecated"] as const;
import { HARMFUL_REASONS } from "../domain/bullet-state.js";
import { lazySchema } from "./lazy.js";
export { HARMFUL_REASONS };
export const FEEDBACK_TYPES = ["helpful", "harmful"] as const;

export type BulletScope = (typeof BULLET_SCOPES)[number];
export type BulletSource = (typeof BULLET_SOURCES)[number];
export type BulletType = (typeof BULLET_TYPES)[number];
export type BulletKind = (typeof BULLET_KINDS)[number];
export type BulletState = (typeof BULLET_STATES)[number];
export type Maturity = (typeof MATURITIES)[number];
export type HarmfulReason = (typeof HARMFUL_REASONS)[number];
export type FeedbackType = (typeof FEEDBACK_TYPES)[number];

const timestamp = lazySchema(() => z.preprocess(toIsoString, z.string().min(1)));
const optionalTimestamp = lazySchema(() => z.preprocess(toIsoString, z.string()).optional());

const FEEDBACK_KEYS = new Set(["type", "timestamp", "sessionPath", "reason", "context", "decayedValue"]);

export const FeedbackEventSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, FEEDBACK_KEYS),
  z.looseObject({
    type: z.enum(FEEDBACK_TYPES),
    timestamp,
    sessionPath: z.string().optional(),
    // Kept as a free string on load: a newer cm may add reasons; writers use HARMFUL_REASONS.
    reason: z.string().optional(),
    context: z.string().optional(),
    decayedValue: z.number().optional(),
  }),
));
export type FeedbackEvent = z.output<typeof FeedbackEventSchema>;

/** Where a rule comes from, so a reader can check it (beyond the original). */
export const EVIDENCE_TYPES = ["session", "code", "artifact", "log", "ticket", "doc", "assumption"] as const;
export type EvidenceType = (typeof EVIDENCE_TYPES)[number];

export const EvidenceSchema = lazySchema(() => z.looseObject({
  type: z.enum(EVIDENCE_TYPES),
  uri: z.string().min(1),
  note: z.string().optional(),
}));
export type Evidence = z.output<typeof EvidenceSchema>;

export const VERIFICATION_TYPES = ["file_exists", "regex"] as const;
export const VERIFICATION_MODES = ["exists", "absent"] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];
export type VerificationMode = (typeof VERIFICATION_MODES)[number];

/**
 * A check `cm context` runs against the workspace: `file_exists` looks for the file `pattern`;
 * `regex` searches the file `path` for `pattern`. `mode: absent` expects the opposite. Paths are
 * relative to the workspace unless absolute.
 */
export const VerificationSchema = lazySchema(() => z.looseObject({
  type: z.enum(VERIFICATION_TYPES),
  pattern: z.string().min(1),
  path: z.string().optional(),
  mode: z.enum(VERIFICATION_MODES).default("exists"),
}));
export type Verification = z.output<typeof VerificationSchema>;

export const BULLET_KEYS: ReadonlySet<string> = new Set([
  "id", "scope", "scopeKey", "workspace", "category", "content", "source", "searchPointer", "type",
  "isNegative", "kind", "state", "maturity", "promotedAt", "lastValidatedAt", "helpfulCount",
  "harmfulCount", "feedbackEvents", "confidenceDecayHalfLifeDays", "createdAt", "updatedAt", "pinned",
  "pinnedReason", "deprecated", "deprecatedAt", "deprecationReason", "replacedBy", "sourceSessions",
  "sourceAgents", "reasoning", "tags", "embedding", "effectiveScore", "evidence", "verification",
  "validFrom", "validTo",
]);

export const BulletSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, BULLET_KEYS),
  z.looseObject({
    id: z.string().min(1),
    scope: z.enum(BULLET_SCOPES).default("global"),
    scopeKey: z.string().optional(),
    workspace: z.string().optional(),
    category: z.string(),
    content: z.string(),
    source: z.enum(BULLET_SOURCES).default("learned"),
    searchPointer: z.string().optional(),
    type: z.enum(BULLET_TYPES).default("rule"),
    isNegative: z.boolean().default(false),
    kind: z.enum(BULLET_KINDS).default("stack_pattern"),
    state: z.enum(BULLET_STATES).default("draft"),
    maturity: z.enum(MATURITIES).default("candidate"),
    promotedAt: optionalTimestamp,
    lastValidatedAt: optionalTimestamp,
    helpfulCount: z.number().default(0),
    harmfulCount: z.number().default(0),
    feedbackEvents: z.array(FeedbackEventSchema).default([]),
    confidenceDecayHalfLifeDays: z.number().default(90),
    createdAt: timestamp,
    updatedAt: timestamp,
    pinned: z.boolean().default(false),
    pinnedReason: z.string().optional(),
    deprecated: z.boolean().default(false),
    deprecatedAt: optionalTimestamp,
    deprecationReason: z.string().optional(),
    replacedBy: z.string().optional(),
    sourceSessions: z.array(z.string()).default([]),
    sourceAgents: z.array(z.string()).default([]),
    reasoning: z.string().optional(),
    tags: z.array(z.string()).default([]),
    embedding: z.array(z.number()).optional(),
    effectiveScore: z.number().optional(),
    // Beyond the original (optional, so the original's files and ours stay interchangeable).
    evidence: z.array(EvidenceSchema).optional(),
    verification: VerificationSchema.optional(),
    validFrom: optionalTimestamp,
    validTo: optionalTimestamp,
  }),
));
export type Bullet = z.output<typeof BulletSchema>;
export type BulletInput = z.input<typeof BulletSchema>;

/** DeprecatedPatternSchema's keys, in the order it returns them. */
export const PATTERN_KEYS: ReadonlySet<string> = new Set(["pattern", "deprecatedAt", "reason", "replacement"]);
export const DeprecatedPatternSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, PATTERN_KEYS),
  z.looseObject({
    pattern: z.string(),
    deprecatedAt: timestamp,
    reason: z.string(),
    replacement: z.string().optional(),
  }),
));
export type DeprecatedPattern = z.output<typeof DeprecatedPatternSchema>;

/** PlaybookMetadataSchema's keys, in the order it returns them. */
export const METADATA_KEYS: ReadonlySet<string> = new Set(["createdAt", "lastReflection", "totalReflections", "totalSessionsProcessed"]);
export const PlaybookMetadataSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, METADATA_KEYS),
  z.looseObject({
    createdAt: timestamp,
    lastReflection: optionalTimestamp,
    totalReflections: z.number().default(0),
    totalSessionsProcessed: z.number().default(0),
  }),
));
export type PlaybookMetadata = z.output<typeof PlaybookMetadataSchema>;

/** PlaybookSchema's keys that it renames from snake_case (all but `schema_version`, which follows them in its order). */
const PLAYBOOK_KEYS = new Set(["name", "description", "metadata", "deprecatedPatterns", "bullets"]);
export const PlaybookSchema = lazySchema(() => z.preprocess(
  (v) => camelizeKnownKeys(v, PLAYBOOK_KEYS, new Set(["schema_version"])),
  z.looseObject({
    schema_version: z.number().default(2),
    name: z.string().default("playbook"),
    description: z.string().default("Auto-generated from cass-memory reflections"),
    metadata: PlaybookMetadataSchema,
    deprecatedPatterns: z.array(DeprecatedPatternSchema).default([]),
    bullets: z.array(BulletSchema).default([]),
  }),
));
export type Playbook = z.output<typeof PlaybookSchema>;

/** `blocked.log` / `toxic_bullets.log` line (reference §4.6). */
export const BlockedEntrySchema = lazySchema(() => z.looseObject({
  id: z.string().min(1),
  content: z.string(),
  reason: z.string().optional(),
  forgottenAt: optionalTimestamp,
}));
export type BlockedEntry = z.output<typeof BlockedEntrySchema>;

export const PLAYBOOK_SCHEMA_VERSION = 2;
export const DEFAULT_PLAYBOOK_DESCRIPTION = "Auto-generated from cass-memory reflections";
export const REPO_PLAYBOOK_NAME = "repo-playbook";
export const REPO_PLAYBOOK_DESCRIPTION = "Project-specific rules for this repository";

export function createEmptyPlaybook(nowIso: string, layer: "global" | "repo" = "global"): Playbook {
  return {
    schema_version: PLAYBOOK_SCHEMA_VERSION,
    name: layer === "repo" ? REPO_PLAYBOOK_NAME : "playbook",
    description: layer === "repo" ? REPO_PLAYBOOK_DESCRIPTION : DEFAULT_PLAYBOOK_DESCRIPTION,
    metadata: { createdAt: nowIso, totalReflections: 0, totalSessionsProcessed: 0 },
    deprecatedPatterns: [],
    bullets: [],
  };
}

// Defined without zod, so that ranking and the curator can use them without loading the schemas.
export { isActiveBullet, isAntiPattern, isOutsideValidity } from "../domain/bullet-state.js";
