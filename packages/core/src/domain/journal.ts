import type { Layer } from "../ports.js";
import type { Bullet, Playbook } from "../schemas/playbook.js";
import type { JournalChange, JournalEvent, JournalOperation } from "../schemas/records.js";
import { hashContent } from "./text.js";

/**
 * The audit journal's diff: what a mutation did to each bullet, computed from a snapshot taken
 * before the mutation and the playbook after it. Every mutation goes through this, so no command
 * can forget to journal (and a command cannot journal something it did not do).
 */

/** Bullet fields whose changes are recorded with their before/after values. */
export const JOURNAL_TRACKED_FIELDS = [
  "content",
  "category",
  "scope",
  "kind",
  "type",
  "isNegative",
  "state",
  "maturity",
  "deprecated",
  "deprecatedAt",
  "deprecationReason",
  "replacedBy",
  "pinned",
  "pinnedReason",
  "helpfulCount",
  "harmfulCount",
  "tags",
  "evidence",
  "verification",
  "validFrom",
  "validTo",
] as const;

type TrackedField = (typeof JOURNAL_TRACKED_FIELDS)[number];
/** Fields holding objects (or arrays of objects): kept as JSON text, compared as JSON text. */
const JSON_FIELDS: ReadonlySet<string> = new Set(["evidence", "verification"]);
type Snapshot = Partial<Record<TrackedField, unknown>> & { feedbackCount: number };

export interface BulletSnapshot {
  readonly bullets: ReadonlyMap<string, Snapshot>;
}

/**
 * Copies the tracked fields of every bullet: primitives as they are, arrays of strings as shallow
 * copies, objects as JSON text — so in-place edits show, and the common case (a few primitive
 * fields and a short tag list per bullet) costs little even at 10,000 bullets.
 */
export function snapshotBullets(playbook: Playbook): BulletSnapshot {
  const bullets = new Map<string, Snapshot>();
  for (const bullet of playbook.bullets) bullets.set(bullet.id, snapshotOf(bullet));
  return { bullets };
}

// Written out field by field (not a loop over JOURNAL_TRACKED_FIELDS): property reads with fixed
// names stay fast in V8, which matters when a mark snapshots 10,000 bullets.
function snapshotOf(b: Bullet): Snapshot {
  return {
    feedbackCount: b.feedbackEvents.length,
    content: b.content,
    category: b.category,
    scope: b.scope,
    kind: b.kind,
    type: b.type,
    isNegative: b.isNegative,
    state: b.state,
    maturity: b.maturity,
    deprecated: b.deprecated,
    deprecatedAt: b.deprecatedAt,
    deprecationReason: b.deprecationReason,
    replacedBy: b.replacedBy,
    pinned: b.pinned,
    pinnedReason: b.pinnedReason,
    helpfulCount: b.helpfulCount,
    harmfulCount: b.harmfulCount,
    tags: b.tags.slice(),
    evidence: b.evidence === undefined ? undefined : JSON.stringify(b.evidence),
    verification: b.verification === undefined ? undefined : JSON.stringify(b.verification),
    validFrom: b.validFrom,
    validTo: b.validTo,
  };
}

/** Cheap check that nothing tracked changed (the usual case for all but one or two bullets). */
function unchanged(p: Snapshot, b: Bullet): boolean {
  return (
    p.feedbackCount === b.feedbackEvents.length &&
    p.content === b.content &&
    p.category === b.category &&
    p.scope === b.scope &&
    p.kind === b.kind &&
    p.type === b.type &&
    p.isNegative === b.isNegative &&
    p.state === b.state &&
    p.maturity === b.maturity &&
    p.deprecated === b.deprecated &&
    p.deprecatedAt === b.deprecatedAt &&
    p.deprecationReason === b.deprecationReason &&
    p.replacedBy === b.replacedBy &&
    p.pinned === b.pinned &&
    p.pinnedReason === b.pinnedReason &&
    p.helpfulCount === b.helpfulCount &&
    p.harmfulCount === b.harmfulCount &&
    p.validFrom === b.validFrom &&
    p.validTo === b.validTo &&
    sameAsSnapshot("tags", p.tags, b.tags) &&
    (b.evidence === undefined ? p.evidence === undefined : p.evidence === JSON.stringify(b.evidence)) &&
    (b.verification === undefined ? p.verification === undefined : p.verification === JSON.stringify(b.verification))
  );
}

/** Whether the bullet's current value of a field equals its snapshot. */
function sameAsSnapshot(field: TrackedField, prior: unknown, current: unknown): boolean {
  if (current === undefined || prior === undefined) return current === prior;
  if (JSON_FIELDS.has(field)) return prior === JSON.stringify(current);
  if (Array.isArray(prior)) {
    if (!Array.isArray(current) || current.length !== prior.length) return false;
    for (let i = 0; i < prior.length; i++) if (prior[i] !== current[i]) return false;
    return true;
  }
  return prior === current;
}

/** A snapshot value as it is reported in an event (JSON text back to its value). */
function reported(field: TrackedField, value: unknown): unknown {
  if (value === undefined) return null;
  if (JSON_FIELDS.has(field) && typeof value === "string") return JSON.parse(value) as unknown;
  return value;
}

/** A copy of a JSON-like value, so later edits of the bullet cannot change the event. */
function structuredCloneJson(value: unknown): unknown {
  return value !== null && typeof value === "object" ? (JSON.parse(JSON.stringify(value)) as unknown) : value;
}

export interface JournalMeta {
  operation: JournalOperation;
  layer: Layer;
  actor: string;
  /** Where the change came from (a session path, a file being imported, a reflection run id). */
  source?: string;
  /** The reflection run making the change. */
  runId?: string;
  reason?: string;
  timestamp: string;
  /** A fresh unique suffix per call (event ids are `ev-<suffix>`). */
  nextId: () => string;
}

/** The journal events for the difference between `before` and `after`, in playbook order (deletions last). */
export function diffForJournal(before: BulletSnapshot, after: Playbook, meta: JournalMeta): JournalEvent[] {
  const events: JournalEvent[] = [];
  const seen = new Set<string>();
  const base = (bulletId: string, change: JournalChange) => ({
    id: `ev-${meta.nextId()}`,
    timestamp: meta.timestamp,
    operation: meta.operation,
    change,
    bulletId,
    layer: meta.layer,
    actor: meta.actor,
    ...(meta.source !== undefined ? { source: meta.source } : {}),
    ...(meta.runId !== undefined ? { runId: meta.runId } : {}),
    ...(meta.reason !== undefined ? { reason: meta.reason } : {}),
  });

  for (const bullet of after.bullets) {
    seen.add(bullet.id);
    const prior = before.bullets.get(bullet.id);
    if (prior === undefined) {
      events.push({
        ...base(bullet.id, "created"),
        hashBefore: null,
        hashAfter: hashContent(bullet.content),
        after: { content: bullet.content, category: bullet.category },
      });
      continue;
    }
    if (unchanged(prior, bullet)) continue;
    const record = bullet as Record<string, unknown>;
    const changedBefore: Record<string, unknown> = {};
    const changedAfter: Record<string, unknown> = {};
    for (const field of JOURNAL_TRACKED_FIELDS) {
      const current = record[field];
      if (sameAsSnapshot(field, prior[field], current)) continue;
      changedBefore[field] = reported(field, prior[field]);
      changedAfter[field] = current === undefined ? null : structuredCloneJson(current);
    }
    const feedbackCount = bullet.feedbackEvents.length;
    const feedbackAdded = feedbackCount - prior.feedbackCount;
    if (feedbackAdded !== 0) {
      changedBefore.feedbackEvents = prior.feedbackCount;
      changedAfter.feedbackEvents = feedbackCount;
      if (feedbackAdded > 0) changedAfter.feedback = bullet.feedbackEvents.slice(-feedbackAdded);
    }
    if (Object.keys(changedAfter).length === 0) continue;
    const wasDeprecated = prior.deprecated === true;
    const isDeprecated = bullet.deprecated === true;
    const change: JournalChange =
      !wasDeprecated && isDeprecated
        ? "deprecated"
        : wasDeprecated && !isDeprecated
          ? "restored"
          : "content" in changedAfter
            ? "content"
            : feedbackAdded !== 0
              ? "feedback"
              : "updated";
    events.push({
      ...base(bullet.id, change),
      hashBefore: hashContent(String(prior.content ?? "")),
      hashAfter: hashContent(bullet.content),
      before: changedBefore,
      after: changedAfter,
    });
  }
  for (const [id, prior] of before.bullets) {
    if (seen.has(id)) continue;
    events.push({
      ...base(id, "deleted"),
      hashBefore: hashContent(String(prior.content ?? "")),
      hashAfter: null,
      before: { content: reported("content", prior.content), category: reported("category", prior.category) },
    });
  }
  return events;
}

/**
 * Rewrites the events of one bullet in a journal's JSONL text with `map`, keeping every other
 * line (other bullets' events, comments, malformed lines) byte for byte. For stores that keep the
 * journal as a file (MutationTx.rewriteJournal). `changed` counts the events `map` altered.
 */
export function rewriteJournalText(text: string, bulletId: string, map: (event: JournalEvent) => JournalEvent): { text: string; changed: number } {
  let changed = 0;
  const lines = text.split("\n").map((line) => {
    if (!line.includes(bulletId)) return line;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      return line;
    }
    if (typeof value !== "object" || value === null || (value as { bulletId?: unknown }).bulletId !== bulletId) return line;
    const next = map(value as JournalEvent);
    if (next === value) return line;
    changed++;
    return JSON.stringify(next);
  });
  return { text: lines.join("\n"), changed };
}
