import { describe, expect, it } from "vitest";
import { createEmptyPlaybook } from "../schemas/playbook.js";
import type { Playbook } from "../schemas/playbook.js";
import type { JournalEvent } from "../schemas/records.js";
import { diffForJournal, snapshotBullets, type JournalMeta } from "./journal.js";
import { findJournalGaps, reconstructGapEvents } from "./journal-gaps.js";
import { T0, events as feedback, makeBullet } from "./test-support.js";

let n = 0;
const meta = (operation: JournalMeta["operation"], at: string): JournalMeta => ({ operation, layer: "global", actor: "test", timestamp: at, nextId: () => `t${++n}` });
const LATER = "2026-02-01T00:00:00.000Z";

/** Applies `change` to the playbook and returns its journal events (as every store mutation does). */
function journaled(playbook: Playbook, operation: JournalMeta["operation"], change: (p: Playbook) => void): JournalEvent[] {
  const before = snapshotBullets(playbook);
  change(playbook);
  return diffForJournal(before, playbook, meta(operation, LATER));
}

function setup(): { playbook: Playbook; journal: JournalEvent[] } {
  const playbook = createEmptyPlaybook(T0.toISOString(), "global");
  const journal = [
    ...journaled(playbook, "add", (p) => p.bullets.push(makeBullet({ id: "b-1", content: "Run the failing test first" }), makeBullet({ id: "b-2", content: "Pin dependencies" }))),
  ];
  journal.push(...journaled(playbook, "feedback", (p) => p.bullets[0]!.feedbackEvents.push(...feedback("helpful", 1))));
  return { playbook, journal };
}

describe("findJournalGaps", () => {
  it("finds nothing when every change was journaled, and nothing for rules that predate the journal", () => {
    const { playbook, journal } = setup();
    playbook.bullets.push(makeBullet({ id: "b-old", content: "Written by the original cm", createdAt: "2025-06-01T00:00:00.000Z" }));
    expect(findJournalGaps(playbook, journal)).toEqual([]);
    expect(findJournalGaps(playbook, [])).toEqual([]);
  });

  it("finds a creation, a content edit, a deprecation and feedback without events, and the repair closes them", () => {
    const { playbook, journal } = setup();
    playbook.bullets.push(makeBullet({ id: "b-3", content: "Added by a writer killed before its journal append", createdAt: "2026-03-01T00:00:00.000Z" }));
    playbook.bullets[0]!.feedbackEvents.push(...feedback("harmful", 2));
    playbook.bullets[0]!.harmfulCount = 2;
    playbook.bullets[1]!.content = "Pin dependencies with a lock file";
    playbook.bullets[1]!.deprecated = true;
    const gaps = findJournalGaps(playbook, journal);
    expect(gaps.map((g) => [g.bulletId, g.kinds])).toEqual([
      ["b-1", ["feedback"]],
      ["b-2", ["content", "deprecation"]],
      ["b-3", ["created"]],
    ]);
    const repaired = reconstructGapEvents(playbook, gaps, { layer: "global", timestamp: "2026-03-02T00:00:00.000Z", nextId: () => `r${++n}` });
    expect(repaired.map((e) => [e.bulletId, e.change, e.actor])).toEqual([
      ["b-1", "feedback", "cm doctor"],
      ["b-2", "deprecated", "cm doctor"],
      ["b-3", "created", "cm doctor"],
    ]);
    expect(repaired[0]!.after).toMatchObject({ feedbackEvents: 3, harmfulCount: 2 });
    expect(findJournalGaps(playbook, [...journal, ...repaired])).toEqual([]);
  });

  it("fewer feedback events than journaled is not a gap (feedback can be pruned)", () => {
    const { playbook, journal } = setup();
    playbook.bullets[0]!.feedbackEvents = [];
    expect(findJournalGaps(playbook, journal)).toEqual([]);
  });
});
