import { isActiveBullet } from "./bullet-state.js";
import type { Bullet } from "../schemas/playbook.js";
import { tokenSet } from "./text.js";

/** Heuristic conflict detection between a new rule and existing ones (warnings only, reference §5.6). */

export const NEGATIVE_MARKERS = ["never", "dont", "don't", "avoid", "forbid", "forbidden", "disable", "prevent", "stop", "skip"] as const;
export const POSITIVE_MARKERS = ["always", "must", "required", "ensure", "use", "enable"] as const;
export const EXCEPTION_MARKERS = ["unless", "except", "only if", "only when", "except when"] as const;

export const CONFLICT_REASONS = {
  negation: "Possible negation conflict (one says do, the other says avoid) with high term overlap",
  opposite: "Opposite directives (must vs avoid) on similar subject matter",
  scope: "Potential scope conflict (always vs exception) on overlapping topic",
} as const;

export interface Conflict {
  bulletId: string;
  content: string;
  reason: string;
}

/** One regex per marker group: whole-word, case-insensitive (so "use" does not match "user"). */
function markerRegex(markers: readonly string[]): RegExp {
  const escaped = markers.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`\\b(?:${escaped.join("|")})\\b`, "i");
}
const NEGATIVE_RE = markerRegex(NEGATIVE_MARKERS);
const POSITIVE_RE = markerRegex(POSITIVE_MARKERS);
const EXCEPTION_RE = markerRegex(EXCEPTION_MARKERS);

/** Pre-computed facts about a text for conflict checks. */
export interface ConflictMeta {
  id: string;
  content: string;
  active: boolean;
  tokens: ReadonlySet<string>;
  neg: boolean;
  pos: boolean;
  exc: boolean;
}

export function conflictMetaOf(id: string, content: string, active = true): ConflictMeta {
  return {
    id,
    content,
    active,
    tokens: tokenSet(content),
    neg: NEGATIVE_RE.test(content),
    pos: POSITIVE_RE.test(content),
    exc: EXCEPTION_RE.test(content),
  };
}

export function buildConflictIndex(bullets: readonly Bullet[]): ConflictMeta[] {
  return bullets.map((b) => conflictMetaOf(b.id, b.content, isActiveBullet(b)));
}

/** Like detectConflicts, over pre-computed metadata (the curator builds it once per batch). */
export function detectConflictsIndexed(newContent: string, index: readonly ConflictMeta[]): Conflict[] {
  const fresh = conflictMetaOf("", newContent);
  if (fresh.tokens.size === 0) return [];
  const freshHasMarkers = fresh.neg || fresh.pos || fresh.exc;
  const out: Conflict[] = [];
  for (const m of index) {
    if (!m.active || m.tokens.size === 0) continue;
    const minOverlap = freshHasMarkers || m.neg || m.pos || m.exc ? 0.1 : 0.2;
    const small = fresh.tokens.size <= m.tokens.size ? fresh.tokens : m.tokens;
    const large = small === fresh.tokens ? m.tokens : fresh.tokens;
    if (small.size / large.size < minOverlap) continue;
    let intersection = 0;
    for (const t of small) if (large.has(t)) intersection++;
    const overlap = intersection / (fresh.tokens.size + m.tokens.size - intersection);
    if (overlap < minOverlap) continue;

    let reason: string | undefined;
    if (fresh.neg !== m.neg) reason = CONFLICT_REASONS.negation;
    else if ((fresh.pos && m.neg) || (m.pos && fresh.neg)) reason = CONFLICT_REASONS.opposite;
    else if ((fresh.pos && m.exc) || (m.pos && fresh.exc)) reason = CONFLICT_REASONS.scope;
    if (reason !== undefined) out.push({ bulletId: m.id, content: m.content, reason });
  }
  return out;
}

/**
 * Existing active bullets that may contradict `newContent`: enough term overlap (Jaccard ≥ 0.1 when
 * either text has a directive marker, else ≥ 0.2) plus differing negation, opposite directives, or
 * an always-vs-exception pair. The first matching reason is reported per bullet.
 */
export function detectConflicts(newContent: string, existing: readonly Bullet[]): Conflict[] {
  return detectConflictsIndexed(newContent, buildConflictIndex(existing));
}
