import type { Layer } from "../ports.js";
import type { Bullet, Playbook } from "../schemas/playbook.js";
import type { JournalEvent } from "../schemas/records.js";
import { hashContent } from "./text.js";

/**
 * Gaps between a layer's playbook and its audit journal: changes visible in the playbook that no
 * journal event records (left by a crash of a build before docs/adr/0012-journal-crash-safety.md, or
 * by an edit that bypassed the store). The journal is replayed per rule — the last content hash, the
 * deprecation flag and the feedback count its events record — and compared with the rule as it is.
 * Rules with no events that predate the journal (written by the original cm) are not gaps; a count
 * of feedback events lower than journaled is not one either (feedback can be pruned).
 */

export type JournalGapKind = "created" | "content" | "deprecation" | "feedback";

export interface JournalGap {
  bulletId: string;
  kinds: JournalGapKind[];
  /** What the journal says (null: it says nothing about that field). */
  journaled: { hash: string | null; deprecated: boolean | null; feedbackEvents: number | null };
  /** The rule as it is. */
  current: { hash: string; deprecated: boolean; feedbackEvents: number };
}

interface Known {
  created: boolean;
  hash: string | null;
  deprecated: boolean | null;
  feedbackEvents: number | null;
}

function replay(events: readonly JournalEvent[]): Map<string, Known> {
  const known = new Map<string, Known>();
  for (const event of events) {
    let state = known.get(event.bulletId);
    if (state === undefined) {
      state = { created: false, hash: null, deprecated: null, feedbackEvents: null };
      known.set(event.bulletId, state);
    }
    const after = event.after ?? {};
    if (event.change === "created") {
      state.created = true;
      // A rule added by `add` starts without feedback and active; an import may bring both.
      if (event.operation === "add") {
        state.feedbackEvents = 0;
        state.deprecated = false;
      }
    }
    if (event.hashAfter !== null) state.hash = event.hashAfter;
    if (typeof after.deprecated === "boolean") state.deprecated = after.deprecated;
    else if (after.deprecated === null) state.deprecated = false;
    if (typeof after.feedbackEvents === "number") state.feedbackEvents = after.feedbackEvents;
  }
  return known;
}

/** The gaps of one layer: its playbook against its journal (events in file order). */
export function findJournalGaps(playbook: Playbook, events: readonly JournalEvent[]): JournalGap[] {
  if (events.length === 0) return [];
  const journalStart = events.reduce((min, e) => (e.timestamp < min ? e.timestamp : min), events[0]!.timestamp);
  const known = replay(events);
  const gaps: JournalGap[] = [];
  for (const bullet of playbook.bullets) {
    const current = { hash: hashContent(bullet.content), deprecated: bullet.deprecated === true, feedbackEvents: bullet.feedbackEvents.length };
    const state = known.get(bullet.id);
    if (state === undefined) {
      // Created after the journal started, yet never journaled.
      if (bullet.createdAt > journalStart) {
        gaps.push({ bulletId: bullet.id, kinds: ["created"], journaled: { hash: null, deprecated: null, feedbackEvents: null }, current });
      }
      continue;
    }
    const kinds: JournalGapKind[] = [];
    if (state.hash !== null && state.hash !== current.hash) kinds.push("content");
    if (state.deprecated !== null && state.deprecated !== current.deprecated) kinds.push("deprecation");
    if (state.feedbackEvents !== null && current.feedbackEvents > state.feedbackEvents) kinds.push("feedback");
    if (kinds.length > 0) {
      gaps.push({ bulletId: bullet.id, kinds, journaled: { hash: state.hash, deprecated: state.deprecated, feedbackEvents: state.feedbackEvents }, current });
    }
  }
  return gaps;
}

export const RECONSTRUCTED_REASON = "reconstructed by cm doctor: the playbook changed without a journal event";

/**
 * One event per gap that brings the journal up to the playbook (`cm doctor --fix`). Fields the
 * journal never knew (the old content text, the state before a deprecation) are left out; `undo`
 * treats those as it treats rules that predate the journal.
 */
export function reconstructGapEvents(
  playbook: Playbook,
  gaps: readonly JournalGap[],
  meta: { layer: Layer; timestamp: string; actor?: string; nextId: () => string },
): JournalEvent[] {
  const byId = new Map<string, Bullet>(playbook.bullets.map((b) => [b.id, b]));
  const events: JournalEvent[] = [];
  for (const gap of gaps) {
    const bullet = byId.get(gap.bulletId);
    if (bullet === undefined) continue;
    const before: Record<string, unknown> = {};
    const after: Record<string, unknown> = {};
    if (gap.kinds.includes("created")) {
      after.content = bullet.content;
      after.category = bullet.category;
      after.deprecated = bullet.deprecated === true;
      after.feedbackEvents = bullet.feedbackEvents.length;
    }
    if (gap.kinds.includes("content")) after.content = bullet.content;
    if (gap.kinds.includes("deprecation")) {
      before.deprecated = gap.journaled.deprecated;
      after.deprecated = bullet.deprecated === true;
      after.state = bullet.state;
      after.maturity = bullet.maturity;
      if (bullet.deprecationReason !== undefined) after.deprecationReason = bullet.deprecationReason;
    }
    if (gap.kinds.includes("feedback")) {
      const added = bullet.feedbackEvents.length - (gap.journaled.feedbackEvents ?? 0);
      before.feedbackEvents = gap.journaled.feedbackEvents;
      after.feedbackEvents = bullet.feedbackEvents.length;
      after.helpfulCount = bullet.helpfulCount;
      after.harmfulCount = bullet.harmfulCount;
      if (added > 0) after.feedback = JSON.parse(JSON.stringify(bullet.feedbackEvents.slice(-added))) as unknown;
    }
    const change = gap.kinds.includes("created")
      ? "created"
      : gap.kinds.includes("deprecation")
        ? bullet.deprecated === true
          ? "deprecated"
          : "restored"
        : gap.kinds.includes("content")
          ? "content"
          : "feedback";
    events.push({
      id: `ev-${meta.nextId()}`,
      timestamp: meta.timestamp,
      operation: "update",
      change,
      bulletId: bullet.id,
      layer: meta.layer,
      actor: meta.actor ?? "cm doctor",
      reason: RECONSTRUCTED_REASON,
      hashBefore: gap.journaled.hash,
      hashAfter: gap.current.hash,
      ...(Object.keys(before).length > 0 ? { before } : {}),
      after,
    });
  }
  return events;
}
