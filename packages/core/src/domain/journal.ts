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
type Snapshot = Partial<Record<TrackedField, unknown>> & { feedbackCount: number };

export interface BulletSnapshot {
  readonly bullets: ReadonlyMap<string, Snapshot>;
}

/** Copies the tracked fields of every bullet (arrays and objects by value, so in-place edits show). */
export function snapshotBullets(playbook: Playbook): BulletSnapshot {
  const bullets = new Map<string, Snapshot>();
  for (const bullet of playbook.bullets) bullets.set(bullet.id, snapshotOf(bullet));
  return { bullets };
}

function snapshotOf(bullet: Bullet): Snapshot {
  const snap: Snapshot = { feedbackCount: bullet.feedbackEvents.length };
  const record = bullet as Record<string, unknown>;
  for (const field of JOURNAL_TRACKED_FIELDS) {
    const value = record[field];
    if (value === undefined) continue;
    snap[field] = value !== null && typeof value === "object" ? JSON.stringify(value) : value;
  }
  return snap;
}

function revive(value: unknown): unknown {
  if (typeof value !== "string" || (value[0] !== "[" && value[0] !== "{")) return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

export interface JournalMeta {
  operation: JournalOperation;
  layer: Layer;
  actor: string;
  /** Where the change came from (a session path, a file being imported, a reflection run id). */
  source?: string;
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
    ...(meta.reason !== undefined ? { reason: meta.reason } : {}),
  });

  for (const bullet of after.bullets) {
    seen.add(bullet.id);
    const prior = before.bullets.get(bullet.id);
    const now = snapshotOf(bullet);
    if (prior === undefined) {
      events.push({
        ...base(bullet.id, "created"),
        hashBefore: null,
        hashAfter: hashContent(bullet.content),
        after: { content: bullet.content, category: bullet.category },
      });
      continue;
    }
    const changedBefore: Record<string, unknown> = {};
    const changedAfter: Record<string, unknown> = {};
    for (const field of JOURNAL_TRACKED_FIELDS) {
      if (prior[field] === now[field]) continue;
      changedBefore[field] = prior[field] === undefined ? null : revive(prior[field]);
      changedAfter[field] = now[field] === undefined ? null : revive(now[field]);
    }
    const feedbackAdded = now.feedbackCount - prior.feedbackCount;
    if (feedbackAdded !== 0) {
      changedBefore.feedbackEvents = prior.feedbackCount;
      changedAfter.feedbackEvents = now.feedbackCount;
      if (feedbackAdded > 0) changedAfter.feedback = bullet.feedbackEvents.slice(-feedbackAdded);
    }
    if (Object.keys(changedAfter).length === 0) continue;
    const change: JournalChange =
      prior.deprecated !== true && now.deprecated === true
        ? "deprecated"
        : prior.deprecated === true && now.deprecated !== true
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
      before: { content: prior.content ?? null, category: prior.category ?? null },
    });
  }
  return events;
}
