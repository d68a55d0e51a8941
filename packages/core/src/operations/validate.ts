import * as z from "zod";
import { AppError } from "../errors.js";
import { extractKeywords } from "../domain/text.js";
import { runEvidenceGate } from "../learning/evidence-gate.js";
import { resolveLearning } from "../learning/fallback.js";
import { defineOperation } from "../operation.js";
import type { LearningKind } from "../ports.js";
import { DegradedSchema } from "./context.js";
import { lazySchema } from "../schemas/lazy.js";

/** Confidence of the gate's own verdicts (reference §1.5.12). */
export const STRONG_FAILURE_CONFIDENCE = 0.9;
export const STRONG_SUCCESS_CONFIDENCE = 0.95;
export const NO_EVIDENCE_CONFIDENCE = 0.6;
/** A REFINE verdict is reported as ACCEPT_WITH_CAUTION with its confidence scaled by this. */
export const REFINE_CONFIDENCE_FACTOR = 0.8;

export const ValidateInputSchema = lazySchema(() => z.object({
  rule: z.string(),
  /** Adds the evidence gate's figures (`gate`) to the result. */
  verbose: z.boolean().optional(),
}));
export type ValidateInput = z.output<typeof ValidateInputSchema>;

export const VALIDATE_VERDICTS = ["ACCEPT", "REJECT", "ACCEPT_WITH_CAUTION"] as const;

export const ValidateResultSchema = lazySchema(() => z.object({
  proposedRule: z.string(),
  verdict: z.enum(VALIDATE_VERDICTS),
  confidence: z.number(),
  reason: z.string(),
  refinedRule: z.string().optional(),
  evidence: z.array(z.object({ session: z.string(), snippet: z.string(), outcome: z.enum(["success", "failure", "unknown"]) })),
  /** Who judged (or would have judged) an ambiguous rule: an LLM or the deterministic validator. */
  mode: z.enum(["llm", "deterministic"]),
  /** The history could not be searched; the rule was judged as if nothing had been found. */
  degraded: z.object({ cass: DegradedSchema.optional() }).optional(),
  /** The LLM validator failed and the deterministic one answered. */
  fallback: z.object({ reason: z.string(), code: z.string().optional() }).optional(),
  /** With `verbose`: the evidence gate's inputs and counts. */
  gate: z
    .object({
      keywords: z.array(z.string()),
      passed: z.boolean(),
      suggestedState: z.enum(["draft", "active"]),
      reason: z.string(),
      sessionCount: z.number(),
      successCount: z.number(),
      failureCount: z.number(),
    })
    .optional(),
}));
export type ValidateResult = z.output<typeof ValidateResultSchema>;

function clamp01(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.min(1, Math.max(0, value));
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * `cm validate "<rule>"` (reference §1.5.12): checks a proposed rule against session history
 * before it goes into the playbook. The evidence gate (§5.8) decides clear cases — a strong
 * failure signal rejects, a strong success signal accepts, no evidence at all accepts with
 * caution — and the validator (LLM, or the deterministic one) judges the rest. Nothing is written.
 */
export const validateOperation = defineOperation({
  name: "validate",
  command: "validate",
  description: "Check a proposed rule against session history (evidence gate, then a validator) before adding it.",
  input: ValidateInputSchema,
  output: ValidateResultSchema,
  async run(deps, input): Promise<ValidateResult> {
    const rule = input.rule?.trim() ?? "";
    if (rule === "") {
      throw new AppError("INVALID_INPUT", "Proposed rule text is required", {
        hint: `${deps.cliName} validate "Always run the migrations inside a transaction"`,
        details: { field: "rule", received: input.rule ?? null },
      });
    }
    const learning = resolveLearning(deps);
    const gate = await runEvidenceGate(deps, rule);
    deps.logger.debug(
      `validate: gate ${gate.passed ? "passed" : "failed"} (${gate.suggestedState}) — ${gate.sessionCount} sessions, ${gate.successCount} success, ${gate.failureCount} failure`,
    );
    let mode: LearningKind = learning.validator.kind;
    const evidence = gate.evidence.map((e) => ({ session: e.session, snippet: e.snippet, outcome: e.outcome }));
    // Keys in the original's order, then ours.
    const result = (verdict: ValidateResult["verdict"], confidence: number, reason: string, extra: { refinedRule?: string; fallback?: ValidateResult["fallback"] } = {}): ValidateResult => ({
      proposedRule: rule,
      verdict,
      confidence,
      reason,
      ...(extra.refinedRule !== undefined ? { refinedRule: extra.refinedRule } : {}),
      evidence,
      mode,
      ...(gate.degraded !== undefined ? { degraded: { cass: gate.degraded } } : {}),
      ...(extra.fallback !== undefined ? { fallback: extra.fallback } : {}),
      ...(input.verbose
        ? {
            gate: {
              keywords: extractKeywords(rule),
              passed: gate.passed,
              suggestedState: gate.suggestedState,
              reason: gate.reason,
              sessionCount: gate.sessionCount,
              successCount: gate.successCount,
              failureCount: gate.failureCount,
            },
          }
        : {}),
    });

    if (!gate.passed) return result("REJECT", STRONG_FAILURE_CONFIDENCE, gate.reason);
    if (gate.suggestedState === "active") return result("ACCEPT", STRONG_SUCCESS_CONFIDENCE, gate.reason);
    if (gate.sessionCount === 0) return result("ACCEPT_WITH_CAUTION", NO_EVIDENCE_CONFIDENCE, gate.reason);

    const judgement = await learning.validator.judge({ rule, gate });
    const fellBack = learning.fallbacks.find((f) => f.component === "validator");
    if (fellBack !== undefined) mode = "deterministic";
    const refine = judgement.verdict === "REFINE";
    const verdict: ValidateResult["verdict"] = judgement.verdict === "REFINE" ? "ACCEPT_WITH_CAUTION" : judgement.verdict;
    const confidence = round(clamp01(refine ? judgement.confidence * REFINE_CONFIDENCE_FACTOR : judgement.confidence));
    const refinedRule = judgement.refinedRule?.trim();
    return result(verdict, confidence, judgement.reason, {
      ...(refinedRule !== undefined && refinedRule !== "" && refinedRule !== rule ? { refinedRule } : {}),
      ...(fellBack !== undefined ? { fallback: { reason: fellBack.reason, ...(fellBack.code !== undefined ? { code: fellBack.code } : {}) } } : {}),
    });
  },
});
