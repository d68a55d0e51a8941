import { compileSanitizer } from "../domain/sanitize.js";
import { extractKeywords } from "../domain/text.js";
import type {
  DegradedInfo,
  EpisodicSearchResult,
  EpisodicSource,
  EvidenceGateResult,
  EvidenceItem,
  OperationDeps,
  ValidationVerdict,
  Validator,
} from "../ports.js";
import type { Delta } from "../schemas/records.js";

/**
 * The evidence-count gate of reference §5.8: before anyone (an LLM or the deterministic validator)
 * judges a proposed rule, look the rule's keywords up in the session history and count the
 * sessions whose snippets read like a success or a failure. Clear signals decide on their own;
 * everything else goes on to the validator.
 */

/** History hits examined per rule. */
export const EVIDENCE_SEARCH_LIMIT = 20;
/** This many success sessions and no failure: accepted without a validator. */
export const STRONG_SUCCESS_SESSIONS = 5;
/** This many failure sessions and no success: rejected without a validator. */
export const STRONG_FAILURE_SESSIONS = 3;
/** Add deltas shorter than this are not validated (reference §5.8 `validateDelta`). */
export const MIN_VALIDATED_CONTENT_CHARS = 15;

export const GATE_NO_KEYWORDS_REASON = "No meaningful keywords found for evidence search. Proposing as draft.";
export const GATE_NO_EVIDENCE_REASON = "No historical evidence found. Proposing as draft.";
export const GATE_AMBIGUOUS_REASON = "Evidence found but ambiguous. Proceeding to LLM validation.";
/** A rule needs at least this share of its keywords (and at least two, or all when it has fewer) in its source session. */
export const GROUNDING_MIN_SHARE = 0.4;

/** Phrases that say something worked (reference §5.8). */
export const SUCCESS_PATTERNS: readonly RegExp[] = [
  /\bfixed\s+(?:the|a|an|this|that|it)\b/i,
  /\bsuccessfully\b/i,
  /\bsuccess\b(?!ful)/i,
  /\bsolved\s+(?:the|a|an|this|that|it)\b/i,
  /\bworking\s+now\b/i,
  /\bworks\s+(?:now|correctly|properly)\b/i,
  /\bresolved\b/i,
];

/** Phrases that say something went wrong (reference §5.8). */
export const FAILURE_PATTERNS: readonly RegExp[] = [
  /\bfailed\s+(?:to|with)\b/i,
  /\berror:/i,
  /\b(?:threw|throws)\s+.*error\b/i,
  /\bbroken\b/i,
  /\bcrash(?:ed|es|ing)?\b/i,
  /\bbug\s+(?:in|found|caused)\b/i,
  /\bdoesn't\s+work\b/i,
];

/** Success when a success phrase occurs (it wins, as in the original), else failure, else unknown. */
export function classifySnippetOutcome(snippet: string): EvidenceItem["outcome"] {
  const text = snippet ?? "";
  if (SUCCESS_PATTERNS.some((p) => p.test(text))) return "success";
  if (FAILURE_PATTERNS.some((p) => p.test(text))) return "failure";
  return "unknown";
}

export interface EvidenceGateDeps {
  episodic: EpisodicSource;
  config: OperationDeps["config"];
}

export interface EvidenceGateOptions {
  /** Passed to the episodic search. */
  timeoutMs?: number;
  /**
   * Sessions whose hits are not counted, e.g. the session a rule was just learned from (so it is
   * not its own evidence). The original counts every session.
   */
  excludeSessions?: readonly string[];
  /**
   * The sanitised text of the session the rule was learned from. When given, a rule whose words
   * do not occur in it (generic advice a model added, a canned rule) is rejected before any history
   * search: a rule must be grounded in what the session says.
   */
  sourceText?: string;
}

/** The rule's keywords that occur in the text (a keyword matches a word starting with its first 5 letters). */
export function groundedKeywords(rule: string, text: string): { keywords: string[]; found: string[] } {
  const keywords = extractKeywords(rule, 30);
  const lower = text.toLowerCase();
  const found = keywords.filter((k) => {
    const stem = k.length > 6 ? k.slice(0, 5) : k;
    return lower.includes(stem);
  });
  return { keywords, found };
}

/** Whether a rule is grounded in its source session (see `EvidenceGateOptions.sourceText`). */
export function isGrounded(rule: string, text: string): { grounded: boolean; reason: string } {
  const { keywords, found } = groundedKeywords(rule, text);
  if (keywords.length === 0) return { grounded: false, reason: "The rule has no specific words to find in its session." };
  const needed = Math.min(keywords.length, Math.max(2, Math.ceil(keywords.length * GROUNDING_MIN_SHARE)));
  if (found.length >= needed) return { grounded: true, reason: `${found.length} of ${keywords.length} keywords occur in the session` };
  return {
    grounded: false,
    reason: `Not grounded in its session: ${found.length} of its ${keywords.length} keywords occur there (${needed} needed); generic advice is not learned.`,
  };
}

function gateResult(
  fields: Pick<EvidenceGateResult, "passed" | "suggestedState" | "reason">,
  evidence: EvidenceItem[],
  degraded: DegradedInfo | undefined,
): EvidenceGateResult {
  return {
    ...fields,
    sessionCount: evidence.length,
    successCount: evidence.filter((e) => e.outcome === "success").length,
    failureCount: evidence.filter((e) => e.outcome === "failure").length,
    evidence,
    ...(degraded !== undefined ? { degraded } : {}),
  };
}

async function searchHistory(episodic: EpisodicSource, query: string, options: Parameters<EpisodicSource["search"]>[1]): Promise<EpisodicSearchResult> {
  try {
    return await episodic.search(query, options);
  } catch (error) {
    // Sources report unavailability as `degraded`; a source that throws anyway is treated the same.
    return {
      hits: [],
      degraded: { available: false, reason: "OTHER", message: `History search failed: ${error instanceof Error ? error.message : String(error)}` },
    };
  }
}

/**
 * Runs the gate for one rule. Each distinct session counts once: as a success when any of its
 * snippets reads like a success, else as a failure when one reads like a failure, else unknown.
 * Snippets are sanitised before they are returned. A history that cannot be searched counts as
 * no evidence, and the result carries `degraded`.
 */
export async function runEvidenceGate(deps: EvidenceGateDeps, rule: string, options: EvidenceGateOptions = {}): Promise<EvidenceGateResult> {
  const keywords = extractKeywords(rule);
  if (keywords.length === 0) {
    return gateResult({ passed: true, suggestedState: "draft", reason: GATE_NO_KEYWORDS_REASON }, [], undefined);
  }
  const result = await searchHistory(deps.episodic, keywords.join(" "), {
    limit: EVIDENCE_SEARCH_LIMIT,
    days: deps.config.validationLookbackDays,
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
  });
  const sanitizer = compileSanitizer(deps.config.sanitization);
  const bySession = new Map<string, EvidenceItem>();
  const excluded = new Set(options.excludeSessions ?? []);
  for (const hit of result.hits ?? []) {
    const session = hit?.source_path;
    if (typeof session !== "string" || session === "" || excluded.has(session)) continue;
    const snippet = sanitizer.sanitize(typeof hit.snippet === "string" ? hit.snippet : "");
    const outcome = classifySnippetOutcome(snippet);
    const seen = bySession.get(session);
    if (seen === undefined) {
      bySession.set(session, { session, snippet, outcome });
    } else if (rank(outcome) > rank(seen.outcome)) {
      bySession.set(session, { session, snippet, outcome });
    }
  }
  const evidence = [...bySession.values()];
  const degraded = result.degraded;
  const successes = evidence.filter((e) => e.outcome === "success").length;
  const failures = evidence.filter((e) => e.outcome === "failure").length;

  if (evidence.length === 0) {
    return gateResult({ passed: true, suggestedState: "draft", reason: GATE_NO_EVIDENCE_REASON }, evidence, degraded);
  }
  if (successes >= STRONG_SUCCESS_SESSIONS && failures === 0) {
    return gateResult(
      { passed: true, suggestedState: "active", reason: `Strong success signal (${successes} sessions). Auto-accepting.` },
      evidence,
      degraded,
    );
  }
  if (failures >= STRONG_FAILURE_SESSIONS && successes === 0) {
    return gateResult(
      { passed: false, suggestedState: "draft", reason: `Strong failure signal (${failures} sessions). Auto-rejecting.` },
      evidence,
      degraded,
    );
  }
  return gateResult({ passed: true, suggestedState: "draft", reason: GATE_AMBIGUOUS_REASON }, evidence, degraded);
}

/** Which snippet speaks for a session: success over failure over unknown. */
function rank(outcome: EvidenceItem["outcome"]): number {
  return outcome === "success" ? 2 : outcome === "failure" ? 1 : 0;
}

export interface DeltaValidation {
  valid: boolean;
  /** The delta to apply: the input, or an add whose content the validator refined. */
  delta: Delta;
  verdict?: ValidationVerdict;
  reason: string;
  /** Absent when the delta was not checked (not an add, validation off, too short, not grounded). */
  gate?: EvidenceGateResult;
  /** Kept without any validation (no history to check it against): held as a draft candidate. */
  unvalidated?: boolean;
}

const ACCEPTING: ReadonlySet<ValidationVerdict> = new Set(["ACCEPT", "ACCEPT_WITH_CAUTION", "REFINE"]);

/**
 * The reflect pipeline's check of one proposed delta (reference §5.8 `validateDelta`): only add
 * deltas of at least 15 characters are checked, and only when `validationEnabled`. The gate
 * rejects on a strong failure signal and accepts on a strong success signal; with no supporting
 * evidence at all the rule is kept as a draft without asking the validator; otherwise the
 * validator decides (ACCEPT, ACCEPT_WITH_CAUTION and REFINE keep it; a refinement replaces the
 * content).
 */
export async function validateDelta(
  deps: EvidenceGateDeps,
  delta: Delta,
  validator: Validator,
  options: EvidenceGateOptions = {},
): Promise<DeltaValidation> {
  if (delta.type !== "add") return { valid: true, delta, reason: `Not validated: ${delta.type} delta` };
  if (!deps.config.validationEnabled) return { valid: true, delta, reason: "Not validated: validation disabled in config" };
  const content = delta.bullet.content ?? "";
  if (options.sourceText !== undefined) {
    const grounding = isGrounded(content, options.sourceText);
    if (!grounding.grounded) return { valid: false, delta, verdict: "REJECT", reason: grounding.reason };
  }
  if (content.length < MIN_VALIDATED_CONTENT_CHARS) {
    return { valid: true, delta, reason: `Not validated: content too short (${content.length} chars < ${MIN_VALIDATED_CONTENT_CHARS})`, unvalidated: true };
  }

  const gate = await runEvidenceGate(deps, content, options);
  if (!gate.passed) return { valid: false, delta, verdict: "REJECT", reason: gate.reason, gate };
  if (gate.suggestedState === "active") return { valid: true, delta, verdict: "ACCEPT", reason: gate.reason, gate };
  if (gate.successCount === 0) {
    const days = deps.config.validationLookbackDays;
    const reason =
      gate.sessionCount === 0
        ? `No other session in the last ${days} days mentions it, so there is nothing to validate it against: added unvalidated, as a draft candidate (feedback decides its fate; validationLookbackDays widens the window).`
        : `No supporting sessions (${gate.failureCount} failure, ${gate.sessionCount - gate.failureCount} unclear). Added unvalidated, as a draft candidate.`;
    return { valid: true, delta, reason, gate, unvalidated: true };
  }

  const judgement = await validator.judge({ rule: content, gate });
  const valid = ACCEPTING.has(judgement.verdict);
  const refined = judgement.refinedRule?.trim();
  const next: Delta =
    valid && refined !== undefined && refined !== "" && refined !== content ? { ...delta, bullet: { ...delta.bullet, content: refined } } : delta;
  return { valid, delta: next, verdict: judgement.verdict, reason: judgement.reason, gate };
}
