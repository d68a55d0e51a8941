// Doctor's journal coverage on SQLite (docs/adr/0012-journal-crash-safety.md): a crash cannot leave a
// change without its event here (one transaction; packages/runtime/test/durability/journal-gap.test.ts
// kills writers inside it), but data carried over from an older YAML store can. Such a gap is made
// here by a mutation that journals nothing, must be reported, and `--fix` must close it after a backup.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";
import { closeStores, makeStore, useTestDir } from "./helpers.js";

const dir = useTestDir();
afterEach(() => closeStores());
const NOW = "2026-12-01T10:00:00.000Z";

describe("SQLite store: doctor and journal gaps", () => {
  it("reports a rule changed without a journal event and repairs it with a reconstructed event", async () => {
    const store = makeStore({ globalDir: join(dir(), "home"), repoDir: null });
    await store.mutatePlaybook("global", (playbook, tx) => {
      playbook.bullets.push(createTestBullet({ id: "b-gap", content: "Run the failing test first", category: "testing", state: "active", createdAt: NOW, updatedAt: NOW }));
      tx.journal([{ id: "c-1", timestamp: NOW, operation: "add", change: "created", bulletId: "b-gap", layer: "global", actor: "test", hashBefore: null, hashAfter: null }]);
    });
    let diagnosis = await store.diagnose!();
    expect(diagnosis.checks.find((c) => c.item === "Global journal coverage")?.status).toBe("pass");

    await store.mutatePlaybook("global", (playbook) => {
      const bullet = playbook.bullets.find((b) => b.id === "b-gap")!;
      bullet.feedbackEvents.push({ type: "helpful", timestamp: NOW } as never);
      bullet.helpfulCount = 1;
    });
    diagnosis = await store.diagnose!();
    const coverage = diagnosis.checks.find((c) => c.item === "Global journal coverage");
    expect(coverage?.status).toBe("warn");
    expect(coverage?.message).toContain("b-gap (feedback)");
    expect(diagnosis.fixableIssues.map((i) => i.id)).toContain("repair-journal-gaps-global");

    const fixed = await store.applyFix!("repair-journal-gaps-global");
    expect(fixed.success, fixed.message).toBe(true);
    expect(existsSync(fixed.backups![0]!)).toBe(true);
    const journal = await store.readJournal("global");
    expect(journal.map((e) => [e.change, e.actor])).toEqual([
      ["created", "test"],
      ["feedback", "cm doctor"],
    ]);
    expect(journal[1]!.after).toMatchObject({ feedbackEvents: 1, helpfulCount: 1 });
    diagnosis = await store.diagnose!();
    expect(diagnosis.checks.find((c) => c.item === "Global journal coverage")?.status).toBe("pass");
    expect((await store.applyFix!("repair-journal-gaps-global")).message).toContain("Every playbook change");
  });
});
