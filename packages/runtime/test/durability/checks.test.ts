// The checks the concurrency and crash tests rely on must be able to fail: here each kind of damage
// they look for is made on purpose (through the store, bypassing the journal, or in the files) and
// must be reported.
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { forgetOperation, markOperation, runOperation } from "@cass-memory/core";
import { BACKENDS, DATABASE_FILE, SnapshotIndex, depsFor, fileProblems, leftovers, loadSqlite, openStore, pidlessLocks, seedBullets, snapshotOf, type Announcement } from "./helpers.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "cm-durability-checks-")));
  dirs.push(dir);
  return dir;
}

describe.each(BACKENDS)("%s store: the durability checks", (backend) => {
  it("tell present, absent, half-done and torn mutations apart", async () => {
    const dir = tempDir();
    const store = openStore(backend, dir);
    try {
      const deps = depsFor(store);
      const [a, b, c] = await seedBullets(deps, 3);
      const markA: Announcement = { type: "start", op: "mark", tag: "m1", bulletId: a!.id, helpful: true, session: "/s/m1.jsonl" };
      const markB: Announcement = { type: "start", op: "mark", tag: "m2", bulletId: b!.id, helpful: false, session: "/s/m2.jsonl" };
      const never: Announcement = { type: "start", op: "mark", tag: "m3", bulletId: a!.id, helpful: true, session: "/s/m3.jsonl" };
      const forget: Announcement = { type: "start", op: "forget", tag: "f1", bulletId: c!.id, reason: "forgotten by f1" };
      const addSeed: Announcement = { type: "start", op: "add", tag: "seed", contents: [a!.content, b!.content] };
      await runOperation(markOperation, deps, { bulletId: a!.id, helpful: true, session: markA.session!, reason: "m1" });
      await runOperation(markOperation, deps, { bulletId: b!.id, harmful: true, session: markB.session!, reason: "m2" });
      await runOperation(forgetOperation, deps, { bulletId: c!.id, reason: forget.reason! });

      let index = new SnapshotIndex(await snapshotOf(store));
      expect([markA, markB, forget, addSeed].map((l) => index.verdict(l))).toEqual(["present", "present", "present", "present"]);
      expect(index.verdict(never)).toBe("absent");
      expect(index.invariantProblems()).toEqual([]);
      // The right event of the wrong type is not the announced mark.
      expect(index.verdict({ ...markB, helpful: true })).toHaveProperty("torn");
      // A batch of which only part is there is torn.
      expect(index.verdict({ ...addSeed, contents: [a!.content, "a rule that was never added"] })).toHaveProperty("torn");

      // A lost update: the feedback event vanishes from the playbook, its journal event stays.
      await store.mutatePlaybook("global", (playbook) => {
        const bullet = playbook.bullets.find((x) => x.id === a!.id)!;
        bullet.feedbackEvents = [];
      });
      // A counter out of step with the events.
      await store.mutatePlaybook("global", (playbook) => {
        playbook.bullets.find((x) => x.id === b!.id)!.harmfulCount = 5;
      });
      index = new SnapshotIndex(await snapshotOf(store));
      expect(index.verdict(markA)).toHaveProperty("torn");
      expect(index.invariantProblems()).toEqual([
        `${a!.id}: counters 1/0 but 0/0 feedback events`,
        `${a!.id}: 0 feedback event(s) but 1 feedback journal event(s)`,
        `${b!.id}: counters 0/5 but 0/1 feedback events`,
      ]);

      // A change without its journal event (written around the journal), and a forget without its blocked entry.
      await store.mutatePlaybook("global", (playbook) => {
        const bullet = playbook.bullets.find((x) => x.id === a!.id)!;
        bullet.feedbackEvents = [{ type: "helpful", timestamp: new Date().toISOString(), sessionPath: never.session! }];
      });
      await store.removeBlocked("global", [c!.id]);
      index = new SnapshotIndex(await snapshotOf(store));
      expect(index.verdict(never)).toBe("no-journal");
      expect(index.verdict(forget)).toBe("not-blocked");
    } finally {
      store.close?.();
    }
  });

  it("report damaged files and leftovers", async () => {
    const dir = tempDir();
    const store = openStore(backend, dir);
    try {
      await seedBullets(depsFor(store), 2);
    } finally {
      store.close?.();
    }
    expect(fileProblems(backend, dir)).toEqual([]);
    expect(leftovers(dir)).toEqual([]);
    mkdirSync(join(dir, "playbook.yaml.lock.d"));
    writeFileSync(join(dir, "playbook.yaml.tmp.0123456789abcdef"), "half a file");
    expect(leftovers(dir)).toEqual(["playbook.yaml.lock.d", "playbook.yaml.tmp.0123456789abcdef"]);
    expect(pidlessLocks(dir)).toEqual(["playbook.yaml.lock.d"]);

    if (backend === "yaml") {
      appendFileSync(join(dir, "events.jsonl"), '{"torn": \n');
      expect(fileProblems(backend, dir)).toEqual([expect.stringMatching(/^events\.jsonl:\d+ is not JSON/)]);
      writeFileSync(join(dir, "playbook.yaml"), "bullets: [\n");
      expect(fileProblems(backend, dir)[0]).toMatch(/^playbook\.yaml does not parse/);
    } else {
      // The full-text index out of step with its table (a row changed behind the triggers' back).
      const Database = loadSqlite();
      const db = new Database(join(dir, DATABASE_FILE));
      db.exec("DROP TRIGGER bullets_fts_update; UPDATE bullets SET content = 'entirely different words' WHERE row = (SELECT min(row) FROM bullets);");
      db.close();
      expect(fileProblems(backend, dir)).toEqual([expect.stringMatching(/^FTS integrity-check: /)]);
    }
  });
});
