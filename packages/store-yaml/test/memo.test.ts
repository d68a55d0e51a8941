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

  it("is shared by the memoizing stores of the process (one per command in cm daemon), up to 8 files", async () => {
    const first = createYamlStore({ globalDir: dir, repoDir: null, logger: testLogger(), memoizeReads: true });
    await first.mutatePlaybook("global", (p) => void p.bullets.push(bullet("b-1", "Run the failing test alone first")));
    const read = await first.readPlaybook("global");
    const second = createYamlStore({ globalDir: dir, repoDir: null, logger: testLogger(), memoizeReads: true });
    expect(await second.readPlaybook("global")).toBe(read);
    // A store that does not memoize neither uses nor fills it.
    expect(await createYamlStore({ globalDir: dir, repoDir: null, logger: testLogger() }).readPlaybook("global")).not.toBe(read);

    // Nine other files read after it push it out: the next read parses the file again.
    for (let i = 0; i < 9; i++) {
      const other = join(dir, `home-${i}`);
      const store = createYamlStore({ globalDir: other, repoDir: null, logger: testLogger(), memoizeReads: true });
      await store.mutatePlaybook("global", (p) => void p.bullets.push(bullet(`b-${i}`, `Rule number ${i} for the memo`)));
      await store.readPlaybook("global");
    }
    const again = await second.readPlaybook("global");
    expect(again).not.toBe(read);
    expect(again).toEqual(read);
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
