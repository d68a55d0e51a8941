import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CANDIDATE_RETRIEVAL_MIN_BULLETS, contextOperation, forgetOperation, markOperation, runOperation, type Bullet, type Store } from "@cass-memory/core";
import { createTestBullet, createTestDeps } from "@cass-memory/core/testing";
import { makeStore, useTestDir, withDb } from "./helpers.js";

const NOW = "2026-01-02T03:04:05.678Z";
const TOPICS = ["kafka consumer lag", "terraform state drift", "webpack bundle size", "gradle daemon memory", "nginx upstream timeout", "redis eviction policy"];

/** A large playbook: filler rules about unrelated topics, plus a few about database migrations. */
function fillerBullets(count: number): Bullet[] {
  const out: Bullet[] = [];
  for (let i = 0; i < count; i++) {
    const topic = TOPICS[i % TOPICS.length]!;
    out.push(createTestBullet({ id: `b-fill-${i}`, category: "ops", content: `Check ${topic} before release ${i}`, createdAt: NOW, updatedAt: NOW }));
  }
  return out;
}

const relevant = (id: string, content: string, extra: Record<string, unknown> = {}) =>
  createTestBullet({ id, category: "database", content, createdAt: NOW, updatedAt: NOW, ...extra });

const testDir = useTestDir();

describe("context on a large SQLite playbook reads candidates from the full-text index", () => {
  it("finds the same rules as a whole-playbook read, with repo overrides and the blocked log applied", async () => {
    const store = makeStore({ globalDir: join(testDir(), "home"), repoDir: join(testDir(), "repo", ".cass") });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(...fillerBullets(CANDIDATE_RETRIEVAL_MIN_BULLETS));
      pb.bullets.push(
        relevant("b-mig-1", "Run database migrations inside a transaction so a failed migration rolls back"),
        relevant("b-mig-2", "Never edit a migration that has already been applied in production"),
        relevant("b-mig-3", "Back up the database before running destructive migrations"),
        relevant("b-mig-old", "Squash database migrations every release", { deprecated: true }),
        relevant("b-mig-repo", "Global wording of the migration naming rule"),
      );
    });
    // The repo layer overrides b-mig-repo with wording that shares no word with the task.
    await store.mutatePlaybook("repo", (pb) => {
      pb.bullets.push(relevant("b-mig-repo", "Name files YYYYMMDDHHMM_description.sql", { category: "conventions" }));
      pb.bullets.push(relevant("b-repo-own", "Keep database migrations reversible with a down step"));
    });
    await store.appendBlocked("global", [{ id: "b-mig-3", content: "Back up the database before running destructive migrations", reason: "wrong for us", timestamp: NOW } as never]);

    const task = "write a database migration for the orders table";
    let indexReads = 0;
    const counted: Store = {
      ...store,
      candidates: {
        countBullets: (layer) => store.candidates.countBullets(layer),
        readCandidates: (layer, query) => (indexReads++, store.candidates.readCandidates(layer, query)),
      },
    } as Store;
    const viaIndex = await runOperation(contextOperation, createTestDeps(counted), { task, noHistory: true, limit: 20 });
    // Global and repo candidates, then the repo bullet overriding a global candidate.
    expect(indexReads).toBe(3);
    // The same store without its index: the whole playbook is read and merged.
    const whole: Store = { ...store, candidates: undefined } as Store;
    const viaWholeRead = await runOperation(contextOperation, createTestDeps(whole), { task, noHistory: true, limit: 20 });

    const ids = (r: typeof viaIndex) => r.relevantBullets.map((b) => b.id).sort();
    expect(ids(viaIndex)).toEqual(ids(viaWholeRead));
    expect(ids(viaIndex)).toEqual(["b-mig-1", "b-mig-2", "b-repo-own"]);
    // The override is the repo's wording even though only the global bullet matched the task.
    expect(viaIndex.relevantBullets.find((b) => b.id === "b-mig-repo")).toBeUndefined();
  });

  it("finds a rule that names the task's problem in other words, among more rules sharing those words than it reads", async () => {
    const store = makeStore({ globalDir: join(testDir(), "home"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(...fillerBullets(CANDIDATE_RETRIEVAL_MIN_BULLETS));
      // More than CANDIDATE_LIMIT rules using the words of the session-loss concept's phrasings
      // ("session", "cookie", "secret", "signing") without any of the phrasings themselves.
      for (let i = 0; i < 600; i++) {
        pb.bullets.push(relevant(`b-loose-${i}`, `Rotate the cookie jar and the secret store keys ${i}, signing the session tokens`, { category: "ops" }));
      }
      // The rule about why users get logged out, in the words of one phrasing ("signing secret").
      pb.bullets.push(relevant("b-target", "Load the signing secret from the environment instead of generating it at boot", { category: "auth" }));
    });
    const task = "Users keep getting logged out after every restart";
    const viaIndex = await runOperation(contextOperation, createTestDeps(store), { task, noHistory: true, limit: 10 });
    const whole: Store = { ...store, candidates: undefined } as Store;
    const viaWholeRead = await runOperation(contextOperation, createTestDeps(whole), { task, noHistory: true, limit: 10 });
    expect(viaWholeRead.relevantBullets[0]?.id).toBe("b-target");
    expect(viaIndex.relevantBullets[0]?.id).toBe("b-target");
  });

  it("reads the whole playbook below the threshold (identical results on small playbooks)", async () => {
    const store = makeStore({ globalDir: join(testDir(), "home"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(...fillerBullets(50), relevant("b-mig-1", "Run database migrations inside a transaction"));
    });
    expect(await store.candidates.countBullets("global")).toBe(51);
    const result = await runOperation(contextOperation, createTestDeps(store), { task: "database migration", noHistory: true });
    expect(result.relevantBullets.map((b) => b.id)).toEqual(["b-mig-1"]);
  });

  it("returns candidates in playbook order, limited, active only, plus the bullets asked for by id", async () => {
    const store = makeStore({ globalDir: join(testDir(), "home"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(
        relevant("b-1", "kafka consumer alert"),
        relevant("b-2", "unrelated rule"),
        relevant("b-3", "kafka partitions", { deprecated: true }),
        relevant("b-4", "kafka kafka consumer consumer lag lag"),
      );
    });
    const all = await store.candidates.readCandidates("global", { terms: ["kafka", "lag"], limit: 10 });
    expect(all?.bullets.map((b) => b.id)).toEqual(["b-1", "b-4"]);
    const one = await store.candidates.readCandidates("global", { terms: ["kafka", "lag"], limit: 1, ids: ["b-3"] });
    expect(one?.bullets.map((b) => b.id)).toEqual(["b-3", "b-4"]);
    expect(await store.candidates.readCandidates("global", { terms: ['"; DROP', "*"], limit: 5 })).toMatchObject({ bullets: [] });
  });
});

describe("operations on one rule read and write only that rule's rows", () => {
  it("mark and forget touch only the scoped rows (an undecodable unrelated row is never read)", async () => {
    const globalDir = join(testDir(), "home");
    const store = makeStore({ globalDir, repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(...fillerBullets(20), relevant("b-target", "Run database migrations inside a transaction"));
    });
    // Break an unrelated row: a whole-playbook read would now fail with PLAYBOOK_CORRUPT.
    withDb(join(globalDir, "cass-memory.sqlite"), "global", (db) => db.prepare("UPDATE bullets SET body = '{broken' WHERE id = 'b-fill-3'").run());
    await expect(store.readPlaybook("global")).rejects.toMatchObject({ code: "PLAYBOOK_CORRUPT" });

    const deps = createTestDeps(store);
    const marked = await runOperation(markOperation, deps, { bulletId: "b-target", helpful: true, session: "/s/one.jsonl" });
    expect(marked).toMatchObject({ bulletId: "b-target", type: "helpful" });
    await runOperation(forgetOperation, deps, { bulletId: "b-fill-7", reason: "obsolete" });

    withDb(join(globalDir, "cass-memory.sqlite"), "global", (db) => {
      const body = (id: string) => JSON.parse(db.prepare("SELECT body FROM bullets WHERE id = ?").pluck().get(id) as string) as Bullet;
      expect(body("b-target").helpfulCount).toBe(1);
      expect(body("b-target").feedbackEvents).toHaveLength(1);
      expect(body("b-fill-7").deprecated).toBe(true);
      expect(db.prepare("SELECT body FROM bullets WHERE id = 'b-fill-3'").pluck().get()).toBe("{broken");
      const events = db.prepare("SELECT bullet_id FROM journal ORDER BY seq").pluck().all();
      expect(events).toEqual(["b-target", "b-fill-7"]);
    });
  });
});
