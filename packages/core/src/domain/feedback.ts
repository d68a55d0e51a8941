import type { Config } from "../schemas/config.js";
import { HARMFUL_REASONS } from "./bullet-state.js";
import type { Bullet, FeedbackEvent, FeedbackType, HarmfulReason } from "../schemas/playbook.js";
import { calculateMaturityState } from "./scoring.js";

/** Explicit feedback on one bullet (`cm mark`, reference §1.5.4). */

export const AUTO_DEPRECATION_REASON = "Automatically deprecated due to harmful feedback ratio";

const REASON_SET: ReadonlySet<string> = new Set(HARMFUL_REASONS);

/**
 * Maps free text to a harmful reason: one of the six known reasons (case-insensitive, surrounding
 * whitespace ignored), else "other" with the raw text kept as `context`. Missing/blank → "other".
 */
export function normalizeHarmfulReason(text?: string): { reason: HarmfulReason; context?: string } {
  if (text === undefined || text.trim() === "") return { reason: "other" };
  const candidate = text.trim().toLowerCase();
  if (REASON_SET.has(candidate)) return { reason: candidate as HarmfulReason };
  return { reason: "other", context: text };
}

export interface ApplyFeedbackInput {
  type: FeedbackType;
  /** Harmful: a reason name or free text. Helpful: free text stored as the event's context. */
  reason?: string;
  sessionPath?: string;
  now: Date;
  config: Config;
}

/**
 * Returns a new bullet with one more feedback event: the counter is incremented, `updatedAt` set
 * and the maturity recomputed (pinned bullets keep theirs). A bullet whose maturity becomes
 * `deprecated` is also flagged deprecated and retired.
 */
export function applyFeedback(bullet: Bullet, input: ApplyFeedbackInput): Bullet {
  const nowIso = input.now.toISOString();
  const event: FeedbackEvent = { type: input.type, timestamp: nowIso };
  if (input.sessionPath !== undefined) event.sessionPath = input.sessionPath;
  if (input.type === "harmful") {
    const { reason, context } = normalizeHarmfulReason(input.reason);
    event.reason = reason;
    if (context !== undefined) event.context = context;
  } else if (input.reason !== undefined && input.reason !== "") {
    event.context = input.reason;
  }

  return withFeedbackEvent(bullet, event, input.now, input.config);
}

/**
 * The bullet with `event` appended: its counter incremented, `updatedAt` set, the maturity
 * recomputed (pinned bullets keep theirs), and retired when the maturity becomes `deprecated`.
 */
export function withFeedbackEvent(bullet: Bullet, event: FeedbackEvent, now: Date, config: Config): Bullet {
  const nowIso = now.toISOString();
  const next: Bullet = {
    ...bullet,
    feedbackEvents: [...(bullet.feedbackEvents ?? []), event],
    helpfulCount: (bullet.helpfulCount ?? 0) + (event.type === "helpful" ? 1 : 0),
    harmfulCount: (bullet.harmfulCount ?? 0) + (event.type === "harmful" ? 1 : 0),
    updatedAt: nowIso,
  };
  if (!next.pinned) next.maturity = calculateMaturityState(next, now, config);
  if (next.maturity === "deprecated" && !bullet.deprecated) {
    next.deprecated = true;
    next.deprecatedAt = nowIso;
    next.state = "retired";
    next.deprecationReason = bullet.deprecationReason ?? AUTO_DEPRECATION_REASON;
  }
  return next;
}
