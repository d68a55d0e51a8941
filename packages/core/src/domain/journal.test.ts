import { describe, expect, it } from "vitest";
import { createTestBullet } from "../testing/fakes.js";
import type { Bullet, Playbook } from "../schemas/playbook.js";
import { JOURNAL_TRACKED_FIELDS, diffForJournal, snapshotBullets, type JournalMeta } from "./journal.js";

const meta: JournalMeta = { operation: "update", layer: "global", actor: "test", timestamp: "2026-01-01T00:00:00.000Z", nextId: () => "1" };

function playbook(bullets: Bullet[]): Playbook {
  return { schema_version: 2, name: "p", description: "", metadata: { createdAt: meta.timestamp, totalReflections: 0, totalSessionsProcessed: 0 }, deprecatedPatterns: [], bullets };
}

/** A value of the right type that differs from the current one. */
function changed(field: string, current: unknown): unknown {
  if (field === "evidence") return [{ type: "doc", uri: "https://x" }];
  if (field === "verification") return { type: "file_exists", pattern: "a.ts", mode: "exists" };
  if (field === "tags") return ["changed"];
  if (typeof current === "boolean") return !current;
  if (typeof current === "number") return current + 1;
  return `${String(current ?? "")}-changed`;
}

describe("diffForJournal", () => {
  it.each(JOURNAL_TRACKED_FIELDS)("notices an in-place change of %s, with its before and after values", (field) => {
    const pb = playbook([createTestBullet({ id: "b-1" }), createTestBullet({ id: "b-2" })]);
    const snap = snapshotBullets(pb);
    const record = pb.bullets[1] as Record<string, unknown>;
    const before = record[field];
    record[field] = changed(field, before);
    const events = diffForJournal(snap, pb, meta);
    expect(events).toHaveLength(1);
    expect(events[0]!.bulletId).toBe("b-2");
    expect(events[0]!.before).toEqual({ [field]: before === undefined ? null : before });
    expect(events[0]!.after).toEqual({ [field]: record[field] });
  });

  it("notices an in-place push onto tags and feedback events", () => {
    const pb = playbook([createTestBullet({ id: "b-1", tags: ["a"] })]);
    const snap = snapshotBullets(pb);
    pb.bullets[0]!.tags.push("b");
    pb.bullets[0]!.feedbackEvents.push({ type: "helpful", timestamp: meta.timestamp });
    const [event] = diffForJournal(snap, pb, meta);
    expect(event).toMatchObject({ change: "feedback", before: { tags: ["a"], feedbackEvents: 0 }, after: { tags: ["a", "b"], feedbackEvents: 1 } });
  });

  it("reports creations, deletions, deprecations and restorations, and nothing for untouched bullets", () => {
    const pb = playbook([createTestBullet({ id: "b-1" }), createTestBullet({ id: "b-2" }), createTestBullet({ id: "b-3", deprecated: true })]);
    const snap = snapshotBullets(pb);
    pb.bullets = [
      { ...pb.bullets[0]!, deprecated: true },
      { ...pb.bullets[2]!, deprecated: false },
      createTestBullet({ id: "b-4", content: "new" }),
    ];
    const events = diffForJournal(snap, pb, meta);
    expect(events.map((e) => [e.bulletId, e.change])).toEqual([
      ["b-1", "deprecated"],
      ["b-3", "restored"],
      ["b-4", "created"],
      ["b-2", "deleted"],
    ]);
    expect(events.find((e) => e.change === "created")).toMatchObject({ hashBefore: null, after: { content: "new" } });
    expect(events.find((e) => e.change === "deleted")).toMatchObject({ hashAfter: null });
  });
});
