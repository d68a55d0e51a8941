// The journal intent (src/journal-intent.ts, docs/adr/0012-journal-crash-safety.md): each state a
// crash can leave between the intent, the playbook rename and the journal append is rebuilt here
// from the files of a real mutation, and must read and settle to exactly the right journal.
// (The real SIGKILLs are in packages/runtime/test/durability/journal-gap.test.ts.)
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JournalEvent } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { createYamlStore } from "../src/index.js";
import { INTENT_FILE, INTENT_FORMAT, judgeIntent, type JournalIntent } from "../src/journal-intent.js";
import { tempDir, testLogger, type TestLogger } from "./helpers.js";

let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let logger: TestLogger;
beforeEach(async () => {
  const made = await tempDir("cm-journal-intent-");
  cleanup = made.cleanup;
  globalDir = join(made.dir, ".cass-memory");
  logger = testLogger();
});
afterEach(async () => {
  await cleanup();
});

const NOW = "2026-12-01T10:00:00.000Z";
const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const event = (id: string, bulletId: string): JournalEvent => ({
  id,
  timestamp: NOW,
  operation: "update",
  change: "updated",
  bulletId,
  layer: "global",
  actor: "test",
  hashBefore: null,
  hashAfter: null,
  reason: `reason of ${id}`,
});

const store = () => createYamlStore({ globalDir, repoDir: null, logger });
const playbookPath = () => join(globalDir, "playbook.yaml");
const journalPath = () => join(globalDir, "events.jsonl");
const intentPath = () => join(globalDir, INTENT_FILE);

/** One journaled mutation (bumps a counter): the events it journals. */
async function mutate(s: ReturnType<typeof store>, ids: string[]): Promise<JournalEvent[]> {
  const events = ids.map((id) => event(id, `b-${id}`));
  await s.mutatePlaybook("global", (playbook, tx) => {
    playbook.metadata.totalReflections += 1;
    tx.journal(events);
  });
  return events;
}

interface Recorded {
  playbookBefore: string;
  playbookAfter: string;
  journalBefore: string;
  journalAfter: string;
  intent: JournalIntent;
}

/** Runs mutation M (events `ids`) on a store that already has one, and records the files around it. */
async function recordMutation(ids: string[]): Promise<Recorded> {
  const s = store();
  await mutate(s, ["e-0"]);
  const playbookBefore = await readFile(playbookPath(), "utf8");
  const journalBefore = await readFile(journalPath(), "utf8");
  const events = await mutate(s, ids);
  const playbookAfter = await readFile(playbookPath(), "utf8");
  const journalAfter = await readFile(journalPath(), "utf8");
  expect(existsSync(intentPath()), "a finished mutation leaves no intent").toBe(false);
  const intent: JournalIntent = { format: INTENT_FORMAT, createdAt: NOW, playbook: playbookPath(), before: sha(playbookBefore), after: sha(playbookAfter), events };
  return { playbookBefore, playbookAfter, journalBefore, journalAfter, intent };
}

async function crashState(files: { playbook: string; journal: string; intent: JournalIntent | string | null }) {
  await writeFile(playbookPath(), files.playbook);
  await writeFile(journalPath(), files.journal);
  if (files.intent !== null) await writeFile(intentPath(), typeof files.intent === "string" ? files.intent : JSON.stringify(files.intent));
}

const ids = (events: JournalEvent[]) => events.map((e) => e.id);
const lineIds = (text: string) =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => (JSON.parse(l) as { id: string }).id);

describe("YAML store: the journal intent", () => {
  it("a mutation writes the intent, then the playbook, then the journal, and removes the intent", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    expect(lineIds(r.journalAfter)).toEqual(["e-0", "e-1", "e-2"]);
    expect(ids(await store().readJournal("global"))).toEqual(["e-0", "e-1", "e-2"]);
  });

  it("killed before the playbook rename: the events are not shown and are discarded by the next writer", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    await crashState({ playbook: r.playbookBefore, journal: r.journalBefore, intent: r.intent });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0"]);
    await mutate(s, ["e-3"]);
    expect(existsSync(intentPath())).toBe(false);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-3"]);
  });

  it("killed between the playbook rename and the journal append: readers see the events, the next writer appends them", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    await crashState({ playbook: r.playbookAfter, journal: r.journalBefore, intent: r.intent });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0", "e-1", "e-2"]);
    await mutate(s, ["e-3"]);
    expect(existsSync(intentPath())).toBe(false);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-1", "e-2", "e-3"]);
    expect(logger.lines.filter((l) => l.level === "warn")).toEqual([]);
  });

  it("killed in the middle of the journal append: the torn fragment is cut and the events completed once", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    const appended = r.journalAfter.slice(r.journalBefore.length);
    const firstLine = appended.split("\n")[0]!;
    const torn = r.journalBefore + firstLine + "\n" + appended.split("\n")[1]!.slice(0, 25);
    await crashState({ playbook: r.playbookAfter, journal: torn, intent: r.intent });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0", "e-1", "e-2"]);
    expect(logger.lines.filter((l) => l.level === "warn"), "the fragment of a pending event is not reported as malformed").toEqual([]);
    await mutate(s, ["e-3"]);
    const text = await readFile(journalPath(), "utf8");
    expect(lineIds(text)).toEqual(["e-0", "e-1", "e-2", "e-3"]);
  });

  it("killed after the journal append, before the intent was removed: nothing is duplicated", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    await crashState({ playbook: r.playbookAfter, journal: r.journalAfter, intent: r.intent });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0", "e-1", "e-2"]);
    await mutate(s, ["e-3"]);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-1", "e-2", "e-3"]);
  });

  it("an intent the files cannot decide (playbook replaced since) is set aside, not applied and not deleted", async () => {
    const r = await recordMutation(["e-1"]);
    const edited = r.playbookBefore.replace("totalReflections: 1", "totalReflections: 7");
    expect(edited).not.toBe(r.playbookBefore);
    await crashState({ playbook: edited, journal: r.journalBefore, intent: r.intent });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0"]);
    await mutate(s, ["e-3"]);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-3"]);
    const aside = (await readdir(globalDir)).filter((name) => name.startsWith(`${INTENT_FILE}.unresolved.`));
    expect(aside).toHaveLength(1);
    expect(JSON.parse(await readFile(join(globalDir, aside[0]!), "utf8"))).toEqual(JSON.parse(JSON.stringify(r.intent)));
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("could not be settled"))).toBe(true);
  });

  it("an unreadable intent is set aside and the store keeps working", async () => {
    const r = await recordMutation(["e-1"]);
    await crashState({ playbook: r.playbookAfter, journal: r.journalAfter, intent: "{not json" });
    const s = store();
    expect(ids(await s.readJournal("global"))).toEqual(["e-0", "e-1"]);
    await mutate(s, ["e-3"]);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-1", "e-3"]);
    expect((await readdir(globalDir)).some((name) => name.startsWith(`${INTENT_FILE}.unresolved.`))).toBe(true);
  });

  it("a first mutation killed before the playbook existed is discarded", async () => {
    const events = [event("e-1", "b-1")];
    const intent: JournalIntent = { format: INTENT_FORMAT, createdAt: NOW, playbook: playbookPath(), before: null, after: sha("x"), events };
    expect(judgeIntent(intent, null, null).kind).toBe("discard");
    expect(judgeIntent(intent, sha("x"), null)).toMatchObject({ kind: "complete", missing: events });
  });

  it("old journals without an intent load as before; mutations without events write no intent", async () => {
    const s = store();
    await s.mutatePlaybook("global", (playbook) => void (playbook.metadata.totalReflections += 1));
    await writeFile(journalPath(), JSON.stringify(event("old-1", "b-1")) + "\n" + JSON.stringify(event("old-2", "b-2")) + "\n");
    expect(ids(await s.readJournal("global"))).toEqual(["old-1", "old-2"]);
    await s.mutatePlaybook("global", (playbook) => void (playbook.metadata.totalReflections += 1));
    expect(existsSync(intentPath())).toBe(false);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["old-1", "old-2"]);
  });
});

describe("YAML store: doctor and the journal", () => {
  it("reports an interrupted change and settles it with --fix after backing up the journal and the intent", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    await crashState({ playbook: r.playbookAfter, journal: r.journalBefore, intent: r.intent });
    const s = store();
    const diagnosis = await s.diagnose!();
    const interrupted = diagnosis.checks.find((c) => c.item === "Global interrupted change");
    expect(interrupted?.status).toBe("warn");
    expect(interrupted?.message).toContain("2 missing event(s) will be appended");
    expect(diagnosis.checks.find((c) => c.item === "Global journal coverage")?.status).toBe("pass");
    expect(diagnosis.fixableIssues.map((i) => i.id)).toContain("settle-journal-intent-global");
    const fixed = await s.applyFix!("settle-journal-intent-global");
    expect(fixed.success, fixed.message).toBe(true);
    expect(fixed.backups).toHaveLength(2);
    expect(await readFile(fixed.backups!.find((b) => b.includes("events.jsonl"))!, "utf8")).toBe(r.journalBefore);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-1", "e-2"]);
    const after = await s.diagnose!();
    expect(after.checks.filter((c) => c.category === "Audit Journal" && c.status !== "pass")).toEqual([]);
    expect((await s.applyFix!("settle-journal-intent-global")).message).toContain("No interrupted change");
  });

  it("finds a change an older build left without its journal event and repairs it with a reconstructed event", async () => {
    const s = store();
    await s.mutatePlaybook("global", (playbook, tx) => {
      playbook.bullets.push(bulletFixture("b-gap", "Run the failing test first") as never);
      tx.journal([{ ...event("c-1", "b-gap"), operation: "add", change: "created", hashBefore: null, hashAfter: null }]);
    });
    // What an older build could leave after a SIGKILL: the deprecation written, its event not.
    await s.mutatePlaybook("global", (playbook) => {
      const bullet = playbook.bullets.find((b) => b.id === "b-gap")!;
      bullet.deprecated = true;
      bullet.state = "retired";
      bullet.maturity = "deprecated";
    });
    const diagnosis = await s.diagnose!();
    const coverage = diagnosis.checks.find((c) => c.item === "Global journal coverage");
    expect(coverage?.status).toBe("warn");
    expect(coverage?.message).toContain("b-gap (deprecation)");
    const fixed = await s.applyFix!("repair-journal-gaps-global");
    expect(fixed.success, fixed.message).toBe(true);
    expect(fixed.backups?.[0]).toMatch(/events\.jsonl\.backup\.\d+$/);
    const journal = await s.readJournal("global");
    expect(journal.map((e) => [e.bulletId, e.change, e.actor])).toEqual([
      ["b-gap", "created", "test"],
      ["b-gap", "deprecated", "cm doctor"],
    ]);
    expect((await s.diagnose!()).checks.find((c) => c.item === "Global journal coverage")?.status).toBe("pass");
  });
});

/** An active rule created at NOW (the journal's first event says so). */
function bulletFixture(id: string, content: string) {
  return createTestBullet({ id, content, category: "testing", state: "active", createdAt: NOW, updatedAt: NOW });
}

describe("YAML store: transfer and the journal intent", () => {
  it("an export after a crash carries the interrupted change's events; writing a journal section drops the target's intent", async () => {
    const r = await recordMutation(["e-1", "e-2"]);
    await crashState({ playbook: r.playbookAfter, journal: r.journalBefore, intent: r.intent });
    const transfer = store().transfer!;
    const key = (await transfer.listSections()).find((k) => k.includes("journal") && k.includes("global"))!;
    const section = await transfer.readSection(key);
    expect(section.kind === "journal" ? ids(section.events) : []).toEqual(["e-0", "e-1", "e-2"]);
    await transfer.writeSection(section);
    expect(existsSync(intentPath())).toBe(false);
    expect(lineIds(await readFile(journalPath(), "utf8"))).toEqual(["e-0", "e-1", "e-2"]);
  });
});
