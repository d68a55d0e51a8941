// Issue 21 item 5, proof: a writer killed exactly between the steps of a playbook write and its
// journal events (the test-only crash points of docs/adr/0012-journal-crash-safety.md, set with
// CM_TEST_CRASH_AT), many times per store, on one store that carries everything earlier kills left.
// After each kill: every change visible in the playbook has its journal event (read through the
// store, as `cm history` reads it), `history` lists it, doctor's journal checks pass, and the next
// writer settles the interrupted change into the journal file itself.
//
// JOURNAL_GAP_TRIALS changes the number of trials per store (default 24), DURABILITY_BACKENDS the stores.
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { historyOperation, markOperation, runOperation, type JournalEvent } from "@cass-memory/core";
import {
  BACKENDS,
  SnapshotIndex,
  depsFor,
  diedOfMissingBuild,
  fileProblems,
  openStore,
  seedBullets,
  snapshotOf,
  spawnWorker,
  type Announcement,
  type Backend,
  type Verdict,
} from "./helpers.js";

const TRIALS = Number(process.env.JOURNAL_GAP_TRIALS ?? 24);
const SELECTED = process.env.DURABILITY_BACKENDS ? (process.env.DURABILITY_BACKENDS.split(",") as Backend[]) : BACKENDS;

/** The crash points per store and what a mutation killed there must look like afterwards. */
const POINTS: Record<Backend, Array<{ point: string; landed: boolean }>> = {
  yaml: [
    { point: "yaml:after-playbook-rename", landed: true },
    { point: "yaml:after-intent", landed: false },
    { point: "yaml:after-journal-append", landed: true },
  ],
  sqlite: [
    { point: "sqlite:after-playbook-rows", landed: false },
    { point: "sqlite:after-journal-rows", landed: false },
  ],
};

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The verdict a killed mutation must have: a forget writes its blocked entry after the deprecation. */
function expected(line: Announcement, landed: boolean): Verdict {
  if (!landed) return "absent";
  return line.op === "forget" ? "not-blocked" : "present";
}

/** Ids of the bullets a mutation touched (an add's bullets are found by their content). */
function touched(index: SnapshotIndex, line: Announcement): string[] {
  if (line.op === "add") return (line.contents ?? []).flatMap((content) => index.byContent.get(content) ?? []);
  return [line.bulletId!];
}

/** The journal event a landed mutation must have written for `bulletId`. */
function matches(line: Announcement, event: JournalEvent): boolean {
  if (line.op === "add") return event.change === "created";
  if (line.op === "mark") return event.operation === "feedback" && event.source === line.session;
  return event.operation === "forget" && event.reason === line.reason;
}

describe.each(SELECTED)("%s store: a writer killed between the playbook write and its journal events", (backend) => {
  it(
    `leaves no change without its journal event (${TRIALS} targeted trials)`,
    async () => {
      const dir = realpathSync(mkdtempSync(join(tmpdir(), `cm-journal-gap-${backend}-`)));
      dirs.push(dir);
      const seedStore = openStore(backend, dir);
      const seeds = await seedBullets(depsFor(seedStore), 20 + TRIALS);
      seedStore.close?.();
      const targets = seeds.slice(0, 20).map((s) => s.id);
      const registry: Array<{ trial: number; line: Announcement; verdict: Verdict }> = [];
      const counts: Record<string, number> = {};
      let restarts = 0;

      for (let trial = 0; trial < TRIALS; trial++) {
        const { point, landed } = POINTS[backend][trial % POINTS[backend].length]!;
        const worker = spawnWorker(
          {
            backend,
            dir,
            worker: trial,
            count: 1_000_000,
            seed: 7100 + trial,
            targets,
            forgettable: [seeds[20 + trial]!.id],
            mix: { mark: 3, add: 2, batch: 1, forget: 2 },
            batchSize: 6,
            tagPrefix: `g${trial}`,
          },
          { CM_TEST_CRASH_AT: point },
        );
        const exit = await worker.exited;
        if (exit.signal !== "SIGKILL" && diedOfMissingBuild(worker) && restarts < 20) {
          restarts += 1;
          trial -= 1;
          await new Promise((resolve) => setTimeout(resolve, 3000));
          continue;
        }
        const label = `trial ${trial} (${backend}, killed at ${point})`;
        expect(exit.signal, `${label}: the writer must kill itself at the crash point; stderr: ${worker.stderr()}`).toBe("SIGKILL");
        const started = worker.lines.filter((l) => l.type === "start");
        expect(worker.lines.filter((l) => l.type === "done" || l.type === "error" || l.type === "fatal"), label).toEqual([]);
        expect(started, label).toHaveLength(1);
        const line = started[0]!;
        if (backend === "yaml") {
          // The kill really fell inside the write: the intent is there until someone settles it.
          expect(existsSync(join(dir, "events.pending.json")), `${label}: intent file`).toBe(true);
        }

        const store = openStore(backend, dir);
        try {
          const index = new SnapshotIndex(await snapshotOf(store));
          const verdict = index.verdict(line);
          const key = `${point} ${line.op}${(line.contents?.length ?? 0) > 1 ? " batch" : ""}: ${typeof verdict === "string" ? verdict : "torn"}`;
          counts[key] = (counts[key] ?? 0) + 1;
          expect(verdict, `${label}: ${line.op} ${line.tag}`).toEqual(expected(line, landed));
          expect(index.invariantProblems(), label).toEqual([]);
          for (const earlier of registry) {
            expect(index.verdict(earlier.line), `${label}: ${earlier.line.tag} of trial ${earlier.trial} changed`).toEqual(earlier.verdict);
          }
          registry.push({ trial, line, verdict });

          // `cm history <id>` (the same operation) lists the change of each bullet it touched.
          const deps = depsFor(store);
          for (const bulletId of touched(index, line)) {
            const history = await runOperation(historyOperation, deps, { bulletId });
            expect(history.events.filter((e) => matches(line, e)), `${label}: history of ${bulletId}`).toHaveLength(landed ? 1 : 0);
          }
          // Doctor sees no gap; on YAML it reports the interrupted change (and offers to settle it).
          const diagnosis = await store.diagnose!();
          const journalChecks = diagnosis.checks.filter((c) => c.category === "Audit Journal");
          expect(journalChecks.filter((c) => c.status !== "pass").map((c) => c.item), `${label}: doctor`).toEqual(backend === "yaml" ? ["Global interrupted change"] : []);
          expect(diagnosis.fixableIssues.filter((i) => i.category === "Audit Journal").map((i) => i.id), `${label}: doctor fixes`).toEqual(
            backend === "yaml" ? ["settle-journal-intent-global"] : [],
          );
          expect(journalChecks.find((c) => c.item === "Global journal coverage")?.status, `${label}: coverage`).toBe("pass");
        } finally {
          store.close?.();
        }

        // The next writer settles the interrupted change into the journal itself.
        const next = openStore(backend, dir);
        try {
          const session = `/journal-gap/verify/t${trial}.jsonl`;
          await runOperation(markOperation, depsFor(next), { bulletId: targets[trial % targets.length]!, helpful: true, session, reason: `verify ${trial}` });
          registry.push({ trial, line: { type: "start", op: "mark", tag: `verify-g${trial}`, bulletId: targets[trial % targets.length]!, helpful: true, session }, verdict: "present" });
        } finally {
          next.close?.();
        }
        expect(fileProblems(backend, dir), label).toEqual([]);
        const settled = openStore(backend, dir);
        try {
          const diagnosis = await settled.diagnose!();
          expect(diagnosis.checks.filter((c) => c.category === "Audit Journal" && c.status !== "pass"), `${label}: doctor after the next write`).toEqual([]);
        } finally {
          settled.close?.();
        }
        if (backend === "yaml") {
          expect(existsSync(join(dir, "events.pending.json")), `${label}: settled`).toBe(false);
          const onDisk = readFileSync(join(dir, "events.jsonl"), "utf8")
            .split("\n")
            .filter((l) => l.trim() !== "")
            .map((l) => JSON.parse(l) as JournalEvent);
          const after = new SnapshotIndex({ ...(await snapshotOf(openStore(backend, dir))), journal: onDisk });
          expect(after.verdict(line), `${label}: the journal file itself`).toEqual(expected(line, landed));
          expect(new Set(onDisk.map((e) => e.id)).size, `${label}: no event written twice`).toBe(onDisk.length);
        }
      }
      console.info(`[journal-gap ${backend}] ${TRIALS} targeted trials: ${JSON.stringify(counts)}`);
    },
    600_000,
  );
});
