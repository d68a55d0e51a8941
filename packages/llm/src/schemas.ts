import * as z from "zod";
import { BULLET_KINDS, BULLET_SCOPES, BULLET_TYPES, HARMFUL_REASONS } from "@cass-memory/core";

/**
 * The shapes requested from the model. They are written for strict JSON-schema servers (OpenAI's
 * strict mode, llama.cpp grammars): every field is required, "not applicable" is `null`, unions
 * are plain `anyOf`, no numeric bounds (ranges are enforced after parsing).
 */

export const DiaryReplySchema = z.object({
  status: z.enum(["success", "failure", "mixed"]),
  accomplishments: z.array(z.string()),
  decisions: z.array(z.string()),
  challenges: z.array(z.string()),
  preferences: z.array(z.string()),
  keyLearnings: z.array(z.string()),
  tags: z.array(z.string()),
});
export type DiaryReply = z.output<typeof DiaryReplySchema>;

const AddDeltaReply = z.object({
  type: z.literal("add"),
  bullet: z.object({
    content: z.string(),
    category: z.string(),
    kind: z.enum(BULLET_KINDS).nullable(),
    type: z.enum(BULLET_TYPES).nullable(),
    isNegative: z.boolean().nullable(),
    scope: z.enum(BULLET_SCOPES).nullable(),
    workspace: z.string().nullable(),
    searchPointer: z.string().nullable(),
    tags: z.array(z.string()).nullable(),
  }),
  reason: z.string(),
  sourceSession: z.string().nullable(),
});

const HelpfulDeltaReply = z.object({
  type: z.literal("helpful"),
  bulletId: z.string(),
  sourceSession: z.string().nullable(),
  context: z.string().nullable(),
});

const HarmfulDeltaReply = z.object({
  type: z.literal("harmful"),
  bulletId: z.string(),
  sourceSession: z.string().nullable(),
  reason: z.enum(HARMFUL_REASONS).nullable(),
  context: z.string().nullable(),
});

const ReplaceDeltaReply = z.object({
  type: z.literal("replace"),
  bulletId: z.string(),
  newContent: z.string(),
  reason: z.string().nullable(),
});

const DeprecateDeltaReply = z.object({
  type: z.literal("deprecate"),
  bulletId: z.string(),
  reason: z.string(),
  replacedBy: z.string().nullable(),
});

const MergeDeltaReply = z.object({
  type: z.literal("merge"),
  bulletIds: z.array(z.string()),
  mergedContent: z.string(),
  reason: z.string().nullable(),
});

/** One proposed change, mirroring core's DeltaSchema with nulls for absent fields. */
export const DeltaReplySchema = z.union([
  AddDeltaReply,
  HelpfulDeltaReply,
  HarmfulDeltaReply,
  ReplaceDeltaReply,
  DeprecateDeltaReply,
  MergeDeltaReply,
]);
export type DeltaReply = z.output<typeof DeltaReplySchema>;

export const ReflectorReplySchema = z.object({ deltas: z.array(DeltaReplySchema) });
export type ReflectorReply = z.output<typeof ReflectorReplySchema>;

export const ValidatorReplySchema = z.object({
  verdict: z.enum(["ACCEPT", "REJECT", "REFINE", "ACCEPT_WITH_CAUTION"]),
  /** 0..1 (clamped after parsing). */
  confidence: z.number(),
  reason: z.string(),
  supporting: z.array(z.string()),
  contradicting: z.array(z.string()),
  suggestedRefinement: z.string().nullable(),
});
export type ValidatorReply = z.output<typeof ValidatorReplySchema>;

export const AuditReplySchema = z.object({
  results: z.array(
    z.object({
      ruleId: z.string(),
      status: z.enum(["followed", "violated", "not_applicable"]).nullable(),
      evidence: z.string(),
    }),
  ),
  summary: z.string().nullable(),
});
export type AuditReply = z.output<typeof AuditReplySchema>;
