import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JournalEvent, Playbook } from "@cass-memory/core";
import { closeStores, makeStore, runWorker, testUrl } from "./helpers.js";

/**
 * The proofs on a real server: several "machines" (two home directories) writing one
 * team database at once lose nothing, and a process killed in the middle of a mutation leaves it
 * entirely present or entirely absent.
 */

let root = "";
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cm-pg-proof-"));
});
afterAll(async () => {
  await closeStores();
  await rm(root, { recursive: true, force: true });
});

/** Every journal event id appears once, and each playbook change has its event (and no event is without its change). */
function checkJournal(playbook: Playbook | null, journal: JournalEvent[]): Map<string, JournalEvent> {
  const byId = new Map<string, JournalEvent>();
  for (const event of journal) {
    expect(byId.has(event.id), `event ${event.id} journalled twice`).toBe(false);
    byId.set(event.id, event);
  }
  const bullets = new Map((playbook?.bullets ?? []).map((b) => [b.id, b]));
  for (const event of byId.values()) {
    if (event.operation === "add") expect(bullets.has(event.bulletId), `bullet of ${event.id}`).toBe(true);
  }
  for (const bullet of bullets.values()) {
    const marks = [...byId.values()].filter((e) => e.bulletId === bullet.id && e.operation === "mark").length;
    expect(bullet.helpfulCount, `marks of ${bullet.id}`).toBe(marks);
    expect([...byId.values()].filter((e) => e.bulletId === bullet.id && e.operation === "add")).toHaveLength(1);
  }
  return byId;
}

describe("team database proofs", () => {
  it(
    "8 processes on two homes × 100 mixed mutations: every change present once, one journal event each",
    async () => {
      const homes = [join(root, "machine-a", ".cass-memory"), join(root, "machine-b", ".cass-memory")];
      const space = `team-${Date.now()}`;
      const processes = 8;
      const count = 100;
      await Promise.all(
        Array.from({ length: processes }, (_, p) => runWorker(["mixed", homes[p % 2] as string, space, JSON.stringify({ index: p, count })], `mixed ${p}`)),
      );
      const reader = makeStore({ globalDir: homes[0] as string, repoDir: null, globalSpace: space });
      const playbook = await reader.readPlaybook("global");
      const journal = await reader.readJournal("global");
      expect(journal).toHaveLength(processes * count);
      const events = checkJournal(playbook, journal);
      for (let p = 0; p < processes; p += 1) for (let i = 0; i < count; i += 1) expect(events.has(`m-${p}-${i}`), `m-${p}-${i}`).toBe(true);
      const adds = journal.filter((e) => e.operation === "add").length;
      expect(playbook?.bullets.length).toBe(adds);
      expect(new Set(playbook?.bullets.map((b) => b.id)).size).toBe(adds);
      // Both homes see the same team memory.
      const other = makeStore({ globalDir: homes[1] as string, repoDir: null, globalSpace: space });
      expect(await other.readPlaybook("global")).toEqual(playbook);
      expect(await other.changeCounter("global")).toBe(processes * count);
    },
    300_000,
  );

  it(
    "20 SIGKILL trials in the middle of mutations: each mutation is all there or not at all, and the next writer is not blocked",
    async () => {
      const home = join(root, "crash", ".cass-memory");
      const space = `crash-${Date.now()}`;
      const points = ["postgres:after-playbook-rows", "postgres:after-journal-rows", "postgres:before-commit", ""];
      const worker = fileURLToPath(new URL("./fixtures/worker.mjs", import.meta.url));
      let killedMidway = 0;
      for (let trial = 0; trial < 20; trial += 1) {
        const point = points[trial % points.length] as string;
        const start = trial * 1_000;
        if (point !== "") {
          // Killed by a crash point (SIGKILL to itself) inside the transaction of some mutation after a few commits.
          const result = await runWorker(["mixed", home, space, JSON.stringify({ index: trial, count: 5 + (trial % 7), start })], `crash ${trial}`, {
            CM_TEST_CRASH_AT: point,
          });
          expect(result.signal).toBe("SIGKILL");
        } else {
          // Killed from outside once it has started writing.
          const child = spawn(process.execPath, [worker, testUrl(), "mixed", home, space, JSON.stringify({ index: trial, count: 200, start, progressEvery: 1 })], {
            stdio: ["ignore", "ignore", "pipe"],
          });
          const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("exit", (code, signal) => resolve(signal ?? code)));
          let seen = "";
          await new Promise<void>((resolve) => {
            child.stderr.on("data", (chunk: Buffer) => {
              if (seen.length < 10_000) seen += chunk.toString();
              if ((seen.match(/at \d+/g) ?? []).length >= 3) resolve();
            });
            void exited.then(() => resolve());
          });
          child.kill("SIGKILL");
          expect(await exited, seen).toBe("SIGKILL");
        }
        killedMidway += 1;
        // The invariant holds after every kill, and the layer is writable at once (the dead writer's lock is gone).
        const store = makeStore({ globalDir: home, repoDir: null, globalSpace: space, lock: { timeoutMs: 20_000 } });
        checkJournal(await store.readPlaybook("global"), await store.readJournal("global"));
        await store.mutatePlaybook("global", (pb) => {
          pb.metadata.totalReflections += 1;
        });
        await store.close();
      }
      expect(killedMidway).toBe(20);
      const final = makeStore({ globalDir: home, repoDir: null, globalSpace: space });
      const playbook = await final.readPlaybook("global");
      expect(playbook?.metadata.totalReflections).toBe(20);
      checkJournal(playbook, await final.readJournal("global"));
    },
    600_000,
  );
});
