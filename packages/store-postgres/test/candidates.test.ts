import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";
import { closeStores, makeStore } from "./helpers.js";
import { tsQueryOf } from "../src/index.js";

/** `candidates` (what `cm context` ranks on a large playbook): the tsvector/GIN search. */

let root = "";
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cm-pg-candidates-"));
});
afterAll(async () => {
  await closeStores();
  await rm(root, { recursive: true, force: true });
});

describe("candidate search", () => {
  it("finds active rules sharing a word (stemmed), respects the limit, adds rules by id whatever their state, keeps playbook order", async () => {
    const store = makeStore({ globalDir: join(root, "a", ".cass-memory"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(
        createTestBullet({ id: "b-deploy", content: "Deploying on Fridays needs a rollback plan", category: "ops" }),
        createTestBullet({ id: "b-tests", content: "Run the tests before pushing", category: "testing" }),
        createTestBullet({ id: "b-retired", content: "Deploy with the old script", state: "retired" }),
        createTestBullet({ id: "b-tagged", content: "Keep changes small", tags: ["deploy"] }),
        createTestBullet({ id: "b-other", content: "Write docs for public functions", category: "docs" }),
      );
    });
    expect(await store.candidates.countBullets("global")).toBe(5);
    const found = await store.candidates.readCandidates("global", { terms: ["deploy", "friday"], limit: 10 });
    expect(found?.bullets.map((b) => b.id)).toEqual(["b-deploy", "b-tagged"]);
    const withIds = await store.candidates.readCandidates("global", { terms: ["deploy"], limit: 1, ids: ["b-retired", "b-other"] });
    expect(withIds?.bullets.map((b) => b.id)).toEqual(["b-deploy", "b-retired", "b-other"]);
    const phrase = await store.candidates.readCandidates("global", { terms: [], concepts: [["rollback plan"]], limit: 10 });
    expect(phrase?.bullets.map((b) => b.id)).toEqual(["b-deploy"]);
    expect((await store.candidates.readCandidates("global", { terms: ["'); DROP TABLE cm_bullets; --"], limit: 10 }))?.bullets.map((b) => b.id)).toEqual([]);
    expect(await makeStore({ globalDir: join(root, "empty", ".cass-memory"), repoDir: null }).candidates.readCandidates("global", { terms: ["x"], limit: 5 })).toBeNull();
  });

  it("only letters and digits reach the tsquery", () => {
    expect(tsQueryOf({ terms: ["it's a 'quoted' & (tricky) | !query"] })).toBe("it | s | a | quoted | tricky | query");
    expect(tsQueryOf({ terms: [], concepts: [["sign in", "login"]] })).toBe("(sign <-> in) | login");
    expect(tsQueryOf({ terms: ["!!!"] })).toBeNull();
  });
});
