import { withFeedbackEvent } from "../domain/feedback.js";
import type { Config } from "../schemas/config.js";
import type { Bullet, FeedbackEvent } from "../schemas/playbook.js";
import { OUTCOME_STATUSES } from "../schemas/records.js";

/**
 * Implicit feedback from task outcomes (reference §5.7): how a finished task went (status,
 * duration, errors, retries, the user's tone) becomes one weighted helpful or harmful event on
 * each rule the task used. Pure functions: no clock, no I/O.
 */

export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];
export const SENTIMENTS = ["positive", "negative", "neutral"] as const;
export type Sentiment = (typeof SENTIMENTS)[number];

/** What is known about one finished task (a `cm outcome` call, or a session graded by reflect). */
export interface OutcomeInput {
  /** Session path or id the outcome belongs to (`cli-manual` for a bare `cm outcome`). */
  sessionId: string;
  outcome: OutcomeStatus;
  rulesUsed: string[];
  notes?: string;
  durationSec?: number;
  task?: string;
  errorCount?: number;
  hadRetries?: boolean;
  sentiment?: Sentiment;
  /** Set when the outcome was inferred from a transcript rather than reported by an agent. */
  autoGraded?: boolean;
  /** When the outcome was recorded; the feedback events carry this time (idempotency key). */
  recordedAt?: string;
}

export interface ImplicitFeedback {
  type: "helpful" | "harmful";
  /** The event's weight, within [0.1, 2]. */
  decayedValue: number;
  /** The signals that contributed, comma-separated (e.g. "success, fast, sentiment+"). */
  context: string;
}

/** Tasks finishing faster than this (seconds) count as a helpful signal. */
export const FAST_OUTCOME_SECONDS = 600;
/** Tasks taking longer than this (seconds) count as a harmful signal. */
export const SLOW_OUTCOME_SECONDS = 3600;
/**
 * An auto-graded session that mentions more rules than this cannot blame them: the transcript
 * shows the rules were seen, not that they caused the failure.
 */
export const AUTO_GRADED_HARM_RULE_LIMIT = 8;
/** Outside a failure, harm is recorded only when it outweighs help by at least this much. */
export const HARM_MARGIN = 1.0;
export const MIN_IMPLICIT_WEIGHT = 0.1;
export const MAX_IMPLICIT_WEIGHT = 2;

const clampWeight = (value: number): number => Math.min(MAX_IMPLICIT_WEIGHT, Math.max(MIN_IMPLICIT_WEIGHT, value));

/**
 * Scores the implicit signal of an outcome (reference §5.7), or null when there is none worth
 * recording. Helpful and harmful points are accumulated per signal; harm is recorded only when it
 * is justified (a failure at least as bad as it was good, or a clear margin otherwise, and never
 * for an auto-graded session naming more than {@link AUTO_GRADED_HARM_RULE_LIMIT} rules).
 */
export function scoreImplicitFeedback(signals: Omit<OutcomeInput, "sessionId" | "rulesUsed"> & { rulesUsed?: readonly string[] }): ImplicitFeedback | null {
  let helpful = 0;
  let harmful = 0;
  const reasons: string[] = [];

  switch (signals.outcome) {
    case "success":
      helpful += 1;
      reasons.push("success");
      break;
    case "failure":
      harmful += 1;
      reasons.push("failure");
      break;
    default:
      helpful += 0.1;
      harmful += 0.1;
      reasons.push(signals.outcome);
  }

  const duration = signals.durationSec;
  if (typeof duration === "number" && Number.isFinite(duration)) {
    if (duration > 0 && duration < FAST_OUTCOME_SECONDS && signals.outcome !== "failure") {
      helpful += 0.5;
      reasons.push("fast");
    } else if (duration > SLOW_OUTCOME_SECONDS) {
      harmful += 0.3;
      reasons.push("slow");
    }
  }

  const errors = signals.errorCount;
  if (typeof errors === "number" && Number.isFinite(errors)) {
    if (errors >= 2) {
      harmful += 0.7;
      reasons.push("errors>=2");
    } else if (errors === 1) {
      harmful += 0.3;
      reasons.push("error");
    }
  }

  if (signals.hadRetries === true) {
    harmful += 0.5;
    reasons.push("retries");
  }

  if (signals.sentiment === "positive") {
    helpful += 0.3;
    reasons.push("sentiment+");
  } else if (signals.sentiment === "negative") {
    harmful += 0.5;
    reasons.push("sentiment-");
  }

  if (helpful <= 0 && harmful <= 0) return null;
  const context = reasons.join(", ");

  const tooManyRules = signals.autoGraded === true && (signals.rulesUsed?.length ?? 0) > AUTO_GRADED_HARM_RULE_LIMIT;
  // Compare with a little tolerance: 0.1 + 0.7 + 0.3 - 0.1 is not exactly 1.0 in floating point.
  const harmJustified =
    !tooManyRules && (signals.outcome === "failure" ? harmful >= helpful - 1e-9 : harmful - helpful >= HARM_MARGIN - 1e-9);
  if (harmJustified) return { type: "harmful", decayedValue: clampWeight(harmful), context };
  if (helpful >= harmful) return { type: "helpful", decayedValue: clampWeight(helpful), context };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Sentiment

// Word starts are anchored; verb endings stay open ("broke" also finds "broken", "revert" "reverted").
const APOSTROPHE = "['\u2019]";
const POSITIVE_PATTERNS: readonly RegExp[] = [
  /\bthat worked\b/i,
  /\bperfect\b/i,
  /\bthanks\b/i,
  /\bgreat\b/i,
  /\bexactly what i needed\b/i,
  /\bsolved it\b/i,
  /\blgtm\b/i,
  /\blooks good\b/i,
  /\bnice work\b/i,
  /\bwell done\b/i,
  /\bship it\b/i,
];
const NEGATIVE_PATTERNS: readonly RegExp[] = [
  new RegExp(`\\bthat(?:${APOSTROPHE}s| is) wrong\\b`, "i"),
  new RegExp(`\\bdoesn${APOSTROPHE}t work`, "i"),
  /\bbroke/i,
  /\bnot what i wanted\b/i,
  /\btry again\b/i,
  /\bundo/i,
  /\brevert/i,
  new RegExp(`\\bdon${APOSTROPHE}t do that\\b`, "i"),
  new RegExp(`\\bthat${APOSTROPHE}s not right\\b`, "i"),
  /\bstart over\b/i,
  /\broll ?back\b/i,
];

/**
 * The user's tone in a text: how many positive phrases ("that worked", "thanks", "lgtm", …) vs
 * negative ones ("doesn't work", "revert", "start over", …) occur (each phrase counts once).
 */
export function detectSentiment(text?: string | null): Sentiment {
  if (typeof text !== "string" || text.trim() === "") return "neutral";
  const positive = POSITIVE_PATTERNS.filter((p) => p.test(text)).length;
  const negative = NEGATIVE_PATTERNS.filter((p) => p.test(text)).length;
  if (positive > negative) return "positive";
  if (negative > positive) return "negative";
  return "neutral";
}

// ---------------------------------------------------------------------------------------------
// Auto-grading a session transcript (reflect's auto-outcome)

/** Rule ids as they appear in transcripts (reference §5.7); kept only when they contain a digit. */
export const TRANSCRIPT_RULE_ID_PATTERN = /(?<![0-9a-f])b-[a-z0-9]{6,}(?:-[a-z0-9]+)*\b/gi;

/**
 * The playbook rule ids a transcript mentions, lower-cased, de-duplicated in order of first
 * appearance, without those in `exclude` (compared lower-cased). Ids without a digit are dropped
 * (they are words such as `b-complete`, not generated ids).
 */
export function extractRuleIdsFromTranscript(text: string, exclude: Iterable<string> = []): string[] {
  const skip = new Set<string>();
  for (const id of exclude) skip.add(id.toLowerCase());
  const seen = new Set<string>();
  const ids: string[] = [];
  for (const match of text.matchAll(TRANSCRIPT_RULE_ID_PATTERN)) {
    const id = match[0].toLowerCase();
    if (!/[0-9]/.test(id) || seen.has(id) || skip.has(id)) continue;
    seen.add(id);
    ids.push(id);
  }
  return ids;
}

/** Words that signal trouble when they occur at least twice in a transcript. */
const ERROR_WORDS: readonly RegExp[] = [/\berror/gi, /\bfailed\b/gi, /\bexception/gi, /\btraceback\b/gi, /\bpanic/gi];
/** Refusals by the user or the harness; each one found counts as an error. */
const REJECTION_PATTERNS: readonly RegExp[] = [
  /\buser denied\b/i,
  /\bpermission denied\b/i,
  /\btool\b[^\n]{0,60}\brejected\b/i,
  /\buser\b[^\n]{0,60}\brejected\b/i,
];
const RETRY_PATTERN = /\btry again\b|\bretrying\b|\blet me try\b|\battempt\b[^\n]{0,40}\bagain\b/i;

/** How many error words occur at least twice, plus how many kinds of rejection occur. */
export function countTranscriptErrors(text: string): number {
  let count = 0;
  for (const word of ERROR_WORDS) {
    let hits = 0;
    for (const _ of text.matchAll(word)) {
      if (++hits >= 2) break;
    }
    if (hits >= 2) count++;
  }
  for (const pattern of REJECTION_PATTERNS) if (pattern.test(text)) count++;
  return count;
}

export function transcriptHasRetries(text: string): boolean {
  return RETRY_PATTERN.test(text);
}

/** The part of a transcript whose tone is judged: the last max(2000 chars, 20 %) of it. */
export function sentimentTail(text: string): string {
  const size = Math.max(2000, Math.floor(text.length * 0.2));
  return text.length <= size ? text : text.slice(text.length - size);
}

export interface SessionOutcomeInput {
  /** The session's path; becomes the outcome's `sessionId`. */
  sessionPath: string;
  /** The session as text (sanitised). */
  text: string;
  /** The diary's verdict on the session. */
  status: "success" | "failure" | "mixed";
  /** Ids never to grade (compared lower-cased), e.g. rules the session gave inline feedback on. */
  excludeIds?: Iterable<string>;
  /** Rule ids to grade instead of scraping them from the text. */
  ruleIds?: readonly string[];
  durationSec?: number | null;
  task?: string;
  /** When given, the outcome's `recordedAt`; otherwise it is set when the outcome is recorded. */
  nowIso?: string;
}

/**
 * Grades a processed session for reflect's auto-outcome (reference §5.7): the rules it mentions
 * ({@link extractRuleIdsFromTranscript}), its status from the diary, the tone of its last
 * max(2000, 20 %) characters, the errors and retries it shows. Returns null when the session
 * mentions no rule (nothing to grade). The outcome has `autoGraded: true`.
 */
export function classifySessionOutcome(input: SessionOutcomeInput): OutcomeInput | null {
  const exclude = new Set<string>();
  for (const id of input.excludeIds ?? []) exclude.add(id.toLowerCase());
  const rulesUsed =
    input.ruleIds !== undefined
      ? [...new Set(input.ruleIds.map((id) => id.toLowerCase()))].filter((id) => !exclude.has(id))
      : extractRuleIdsFromTranscript(input.text, exclude);
  if (rulesUsed.length === 0) return null;

  const outcome: OutcomeInput = {
    sessionId: input.sessionPath,
    outcome: input.status,
    rulesUsed,
    errorCount: countTranscriptErrors(input.text),
    hadRetries: transcriptHasRetries(input.text),
    sentiment: detectSentiment(sentimentTail(input.text)),
    autoGraded: true,
  };
  if (typeof input.durationSec === "number" && Number.isFinite(input.durationSec)) outcome.durationSec = input.durationSec;
  if (input.task !== undefined && input.task.trim() !== "") outcome.task = input.task;
  if (input.nowIso !== undefined) outcome.recordedAt = input.nowIso;
  return outcome;
}

// ---------------------------------------------------------------------------------------------
// Applying implicit feedback to a bullet

export interface ImplicitFeedbackEvent {
  feedback: ImplicitFeedback;
  /** The outcome's `recordedAt` (the event's timestamp). */
  timestamp: string;
  sessionPath: string;
}

/** The feedback event an outcome adds to a rule (harmful events get reason "other"). */
export function implicitFeedbackEvent(input: ImplicitFeedbackEvent): FeedbackEvent {
  const event: FeedbackEvent = {
    type: input.feedback.type,
    timestamp: input.timestamp,
    sessionPath: input.sessionPath,
    context: input.feedback.context,
    decayedValue: input.feedback.decayedValue,
  };
  if (input.feedback.type === "harmful") event.reason = "other";
  return event;
}

/** True when the bullet already has an event of this type, session and timestamp. */
export function hasFeedbackEvent(bullet: Pick<Bullet, "feedbackEvents">, event: Pick<FeedbackEvent, "type" | "sessionPath" | "timestamp">): boolean {
  const wanted = Date.parse(event.timestamp);
  return (bullet.feedbackEvents ?? []).some(
    (e) =>
      e.type === event.type &&
      e.sessionPath === event.sessionPath &&
      (e.timestamp === event.timestamp || (Number.isFinite(wanted) && Date.parse(e.timestamp) === wanted)),
  );
}

/**
 * Returns the bullet with the outcome's event added — or null when that event (type, session,
 * timestamp) is already there. Counters, `updatedAt` and maturity change as with `cm mark`; a rule
 * whose maturity becomes deprecated is retired.
 */
export function applyImplicitFeedback(bullet: Bullet, event: FeedbackEvent, now: Date, config: Config): Bullet | null {
  return hasFeedbackEvent(bullet, event) ? null : withFeedbackEvent(bullet, event, now, config);
}
