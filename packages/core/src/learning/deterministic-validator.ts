import type { EvidenceItem, ValidationInput, Validator, ValidatorJudgement } from "../ports.js";

/**
 * The validator that needs no LLM, for the cases the evidence gate leaves open: it weighs the
 * sessions whose snippets read like a success against those that read like a failure. More
 * failures than successes rejects; otherwise the rule is accepted with caution, more confidently
 * the clearer the margin. It never rewrites a rule.
 */

/** Confidence of an acceptance with no margin, and with the widest one. */
export const CAUTION_MIN_CONFIDENCE = 0.5;
export const CAUTION_MAX_CONFIDENCE = 0.8;
/** Confidence of a rejection with the narrowest margin, and with the widest one. */
export const REJECT_MIN_CONFIDENCE = 0.55;
export const REJECT_MAX_CONFIDENCE = 0.9;

function describe(item: EvidenceItem, max = 160): string {
  const snippet = item.snippet.replace(/\s+/g, " ").trim();
  return `${item.session}: ${snippet.length > max ? `${snippet.slice(0, max - 3)}...` : snippet}`;
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

/** The judgement from the gate's counts alone. */
export function judgeByCounts(input: ValidationInput): ValidatorJudgement {
  const { gate } = input;
  const successes = gate.successCount;
  const failures = gate.failureCount;
  const unclear = Math.max(0, gate.sessionCount - successes - failures);
  const decided = successes + failures;
  // 0 when balanced (or nothing decided), 1 when all decided sessions agree.
  const margin = decided === 0 ? 0 : Math.abs(successes - failures) / decided;
  const counts = `${successes} success, ${failures} failure, ${unclear} unclear of ${gate.sessionCount} related session${gate.sessionCount === 1 ? "" : "s"}`;
  const supporting = gate.evidence.filter((e) => e.outcome === "success").map((e) => describe(e));
  const contradicting = gate.evidence.filter((e) => e.outcome === "failure").map((e) => describe(e));

  if (failures > successes) {
    return {
      verdict: "REJECT",
      confidence: round(REJECT_MIN_CONFIDENCE + (REJECT_MAX_CONFIDENCE - REJECT_MIN_CONFIDENCE) * margin),
      reason: `More failure than success in history (${counts}).`,
      supporting,
      contradicting,
    };
  }
  return {
    verdict: "ACCEPT_WITH_CAUTION",
    confidence: round(CAUTION_MIN_CONFIDENCE + (CAUTION_MAX_CONFIDENCE - CAUTION_MIN_CONFIDENCE) * margin),
    reason:
      successes === failures
        ? `History is inconclusive (${counts}); accepted with caution.`
        : `History leans towards success (${counts}); accepted with caution.`,
    supporting,
    contradicting,
  };
}

/** Validator without an LLM (kind "deterministic"). */
export function createDeterministicValidator(): Validator {
  return {
    kind: "deterministic",
    async judge(input) {
      return judgeByCounts(input);
    },
  };
}
