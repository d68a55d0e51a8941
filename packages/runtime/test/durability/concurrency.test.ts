// Issue 7, proof: eight real OS processes write one store at the same time, each a seeded stream
// of 100 mixed mutations through the real operations (mark helpful/harmful, playbook add, forget).
// Afterwards every mutation is there exactly once, with its journal event, and the files or the
// database are valid when read by a second, independent reader.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  BACKENDS,
  SnapshotIndex,
  depsFor,
  diedOfMissingBuild,
  fileProblems,
  ftsIds,
  leftovers,
  openStore,
  seedBullets,
  snapshotOf,
  spawnWorker,
  type Announcement,
  type WorkerHandle,
} from "./helpers.js";

const WORKERS = 8;
const MUTATIONS = 100;
const SHARED_BULLETS = 24;
const BASE_SEED = Number(process.env.CONCURRENCY_SEED ?? 7001);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe.each(process.env.DURABILITY_BACKENDS ? (process.env.DURABILITY_BACKENDS.split(",") as typeof BACKENDS) : BACKENDS)("%s store: 8 processes × 100 mutations at once", (backend) => {
  it(
    "keeps every mutation exactly once, with one journal event each, and leaves valid files",
    async () => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), `cm-durability-${backend}-`)));
      dirs.push(dir);
      const seedStore = openStore(backend, dir);
      const shared = await seedBullets(depsFor(seedStore), SHARED_BULLETS);
      seedStore.close?.();
      const targets = shared.map((s) => s.id);

      let workers: WorkerHandle[] = [];
      for (let attempt = 1; ; attempt++) {
        workers = [];
        for (let w = 0; w < WORKERS; w++) {
          workers.push(
            spawnWorker({
              backend,
              dir,
              worker: w,
              count: MUTATIONS,
              seed: BASE_SEED + w,
              targets,
              waitForGo: true,
              mix: { mark: 5, add: 3, batch: 0, forget: 2 },
            }),
          );
        }
        // Everyone has loaded its modules and opened the store; then all start at once.
        const ready = await Promise.allSettled(workers.map((w) => w.waitFor((line) => line.type === "ready")));
        if (ready.every((r) => r.status === "fulfilled")) break;
        for (const w of workers) w.child.kill("SIGKILL");
        await Promise.all(workers.map((w) => w.exited));
        // Nobody wrote anything yet; start again only when a package was being rebuilt meanwhile.
        const failed = workers.filter((w, i) => ready[i]!.status === "rejected");
        if (!failed.every(diedOfMissingBuild) || attempt >= 10) throw new Error(`writers did not start: ${failed.map((w) => w.stderr()).join("\n")}`);
        await sleep(3000);
      }
      for (const w of workers) w.child.stdin.end("go\n");
      const exits = await Promise.all(workers.map((w) => w.exited));

      exits.forEach((exit, w) => {
        const failures = workers[w]!.lines.filter((l) => l.type === "error" || l.type === "fatal");
        expect(failures, `worker ${w} (seed ${BASE_SEED + w}) failed: ${JSON.stringify(failures.slice(0, 3))}\n${workers[w]!.stderr()}`).toEqual([]);
        expect(exit, `worker ${w} exit; stderr: ${workers[w]!.stderr()}`).toEqual({ code: 0, signal: null });
      });
      const done: Announcement[] = workers.flatMap((w) => w.lines.filter((l) => l.type === "done"));
      expect(done).toHaveLength(WORKERS * MUTATIONS);
      const kinds = new Set(done.map((d) => d.op));
      expect(kinds).toEqual(new Set(["mark", "add", "forget"]));

      // The files, read by an independent reader.
      expect(fileProblems(backend, dir)).toEqual([]);
      expect(leftovers(dir)).toEqual([]);

      // The store's own view, from a fresh instance.
      const store = openStore(backend, dir);
      try {
        const snapshot = await snapshotOf(store);
        const index = new SnapshotIndex(snapshot);
        const notPresent = done.map((line) => ({ line, verdict: index.verdict(line) })).filter((v) => v.verdict !== "present");
        expect(notPresent.map((v) => `${v.line.tag} ${v.line.op}: ${JSON.stringify(v.verdict)}`)).toEqual([]);
        expect(index.invariantProblems()).toEqual([]);

        // Each add's bullet is the one the worker was told about, with its content.
        for (const line of done.filter((d) => d.op === "add")) {
          const bullet = index.bullets.get(line.ids![0]!);
          expect(bullet?.content).toBe(line.contents![0]);
        }
        // Each mark is on its bullet exactly once (no lost or doubled read-modify-write).
        const marks = done.filter((d) => d.op === "mark");
        const marksPerBullet = new Map<string, number>();
        for (const m of marks) marksPerBullet.set(m.bulletId!, (marksPerBullet.get(m.bulletId!) ?? 0) + 1);
        for (const [id, count] of marksPerBullet) expect(index.bullets.get(id)?.feedbackEvents?.length, id).toBe(count);
        // Forgotten rules are deprecated and on the blocked log once.
        const forgets = done.filter((d) => d.op === "forget");
        expect(snapshot.blocked.map((b) => b.id).sort()).toEqual(forgets.map((f) => f.bulletId!).sort());

        // One journal event per mutation (plus the seeding's created events), nothing else.
        expect(snapshot.journal).toHaveLength(SHARED_BULLETS + WORKERS * MUTATIONS);
        const adds = done.filter((d) => d.op === "add").length;
        expect(snapshot.playbook.bullets).toHaveLength(SHARED_BULLETS + adds);

        if (backend === "sqlite") {
          // The full-text index finds each added rule by its unique token, and only that rule.
          const tokens = done.filter((d) => d.op === "add").map((d) => d.tag!);
          const found = ftsIds(dir, tokens);
          for (const line of done.filter((d) => d.op === "add")) expect(found.get(line.tag!), line.tag).toEqual(line.ids);
        }
      } finally {
        store.close?.();
      }
    },
    300_000,
  );
});
