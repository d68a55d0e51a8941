import { mkdtemp, rm, writeFile, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";
import { createYamlStore } from "../src/index.js";
import { testLogger } from "./helpers.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "cm-memo-"));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const bullet = (id: string, content: string) => createTestBullet({ id, content, category: "testing" });

describe("memoized reads (long-running servers)", () => {
  it("returns the same frozen playbook while the file is unchanged, and re-reads after any write", async () => {
    const store = createYamlStore({ globalDir: dir, repoDir: null, logger: testLogger(), memoizeReads: true });
    await store.mutatePlaybook("global", (p) => void p.bullets.push(bullet("b-1", "Run the failing test alone first")));
    const first = await store.readPlaybook("global");
    const second = await store.readPlaybook("global");
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first!.bullets[0])).toBe(true);
    expect(() => {
      (first!.bullets as unknown[]).push({});
    }).toThrow(TypeError);

    // Our own write: mutatePlaybook reads the file itself (a mutable copy) and replaces it.
    await store.mutatePlaybook("global", (p) => void p.bullets.push(bullet("b-2", "Keep fixtures next to their tests")));
    const third = await store.readPlaybook("global");
    expect(third).not.toBe(first);
    expect(third!.bullets.map((b) => b.id)).toEqual(["b-1", "b-2"]);

    // Another process rewriting the file in place (same inode) is seen too.
    const path = join(dir, "playbook.yaml");
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace("Keep fixtures next to their tests", "Keep fixtures beside their tests!"));
    const fourth = await store.readPlaybook("global");
    expect(fourth!.bullets[1]!.content).toBe("Keep fixtures beside their tests!");

    await rm(path);
    expect(await store.readPlaybook("global")).toBeNull();
  });

  it("is off by default: every read is a fresh, mutable object", async () => {
    const store = createYamlStore({ globalDir: dir, repoDir: null, logger: testLogger() });
    await store.mutatePlaybook("global", (p) => void p.bullets.push(bullet("b-1", "Run the failing test alone first")));
    const a = await store.readPlaybook("global");
    const b = await store.readPlaybook("global");
    expect(a).not.toBe(b);
    expect(Object.isFrozen(a)).toBe(false);
  });
});
