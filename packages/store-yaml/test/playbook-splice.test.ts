// Scoped mutations on the YAML store splice the changed bullets into the old text
// (src/playbook-splice.ts). Every test runs the same mutations on two copies of a playbook: one
// store with the parse cache (which records layouts and splices) and one without it (which always
// re-emits the whole playbook, the reference). The files must stay byte for byte equal, and the
// parse cache must hold the playbook that the new text decodes to.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Bullet, JournalEvent, MutationScope, MutationTx, Playbook, Store } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { stringify } from "yaml";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createYamlStore, decodePlaybook, toYaml } from "../src/index.js";
import { emitTopLevelSeqItem } from "../src/fast-yaml.js";
import { isJsonFaithful } from "../src/parse-cache.js";
import { emitHeadParts } from "../src/playbook-splice.js";
import { FIXTURE_HOME, tempDir, testLogger, type TestLogger } from "./helpers.js";

const NOW = "2026-01-01T00:00:00.000Z";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-splice-"));
});
afterEach(async () => {
  await cleanup();
});

type Fn = (playbook: Playbook, tx: MutationTx) => unknown;

interface Pair {
  fast: Store;
  full: Store;
  fastLog: TestLogger;
  fastFile: string;
  fullFile: string;
  fastDir: string;
  /** Runs the same mutation on both stores; resolves to whether the fast store spliced. */
  run(fn: Fn, scope?: MutationScope, layer?: "global" | "repo"): Promise<boolean>;
  expectSame(layer?: "global" | "repo"): Promise<void>;
}

/** Two homes holding `text` as their global (and optionally repo) playbook. */
async function pair(text: string, repoText?: string): Promise<Pair> {
  const homes: Array<{ globalDir: string; repoDir: string }> = [];
  for (const name of ["fast", "full"]) {
    const globalDir = join(dir, name, ".cass-memory");
    const repoDir = join(dir, name, "repo", ".cass");
    await mkdir(globalDir, { recursive: true });
    await mkdir(repoDir, { recursive: true });
    await writeFile(join(globalDir, "playbook.yaml"), text);
    if (repoText !== undefined) await writeFile(join(repoDir, "playbook.yaml"), repoText);
    homes.push({ globalDir, repoDir });
  }
  const fastLog = testLogger();
  const fast = createYamlStore({ ...homes[0]!, logger: fastLog, parseCache: { minBytes: 1024 } });
  const full = createYamlStore({ ...homes[1]!, logger: testLogger(), parseCache: false });
  const fileOf = (home: { globalDir: string; repoDir: string }, layer: "global" | "repo") =>
    join(layer === "global" ? home.globalDir : home.repoDir, "playbook.yaml");
  const result: Pair = {
    fast,
    full,
    fastLog,
    fastFile: fileOf(homes[0]!, "global"),
    fullFile: fileOf(homes[1]!, "global"),
    fastDir: homes[0]!.globalDir,
    async run(fn, scope, layer = "global") {
      const before = fastLog.lines.length;
      const results = await Promise.allSettled([fast.mutatePlaybook(layer, fn, scope), full.mutatePlaybook(layer, fn, scope)]);
      expect(results[0].status).toBe(results[1].status);
      if (results[0].status === "fulfilled" && results[1].status === "fulfilled") expect(results[0].value).toEqual(results[1].value);
      await result.expectSame(layer);
      return fastLog.lines.slice(before).some((line) => line.message.includes("in place"));
    },
    async expectSame(layer = "global") {
      const a = await readFile(fileOf(homes[0]!, layer));
      const b = await readFile(fileOf(homes[1]!, layer));
      expect(a.toString("utf8")).toBe(b.toString("utf8"));
      expect(a.equals(b)).toBe(true);
      // The parse cache of the fast home answers for exactly these bytes, with what they decode to.
      const decoded = decodePlaybook(a.toString("utf8"), "check.yaml", layer);
      const hash = createHash("sha256").update(a).digest("hex");
      const cacheFiles = await readdir(join(homes[0]!.globalDir, ".cache")).catch(() => [] as string[]);
      if (a.length >= 1024 && isJsonFaithful(decoded)) expect(cacheFiles.some((name) => name.includes(hash))).toBe(true);
      expect(await fast.readPlaybook(layer)).toEqual(decoded);
      const fresh = createYamlStore({ globalDir: homes[0]!.globalDir, repoDir: homes[0]!.repoDir, logger: testLogger(), parseCache: { minBytes: 1024 } });
      expect(await fresh.readPlaybook(layer)).toEqual(decoded);
    },
  };
  return result;
}

function bullet(i: number, extra: Partial<Bullet> & Record<string, unknown> = {}): Bullet {
  return createTestBullet({
    id: `b-splice-${i}`,
    category: i % 3 === 0 ? "perf" : "testing",
    content: `Rule ${i}: measure before optimising, keep the script around`,
    helpfulCount: i % 5,
    createdAt: NOW,
    updatedAt: NOW,
    tags: i % 2 === 0 ? ["perf", "ci"] : [],
    ...extra,
  });
}

function playbookOf(bullets: Bullet[], head: Record<string, unknown> = {}): Playbook {
  return {
    schema_version: 2,
    name: "playbook",
    description: "Auto-generated from cass-memory reflections",
    metadata: { createdAt: NOW, totalReflections: 0, totalSessionsProcessed: 0 },
    deprecatedPatterns: [],
    bullets,
    ...head,
  } as Playbook;
}

/** Bullets whose text exercises quoting, escapes, non-ASCII, unknown keys and nested values. */
function variedBullets(count: number): Bullet[] {
  const odd = [
    "Prüfe die Überweisung — ✓ 日本語 🚀 before retrying",
    'Quote "this": and # that',
    "line one\nline two\ttabbed",
    "true",
    "- starts like a list item",
    "  leading and trailing spaces  ",
    "null",
    "1e5",
    "\u2028separator\u0085nel",
    "key: value # not a comment",
  ];
  return Array.from({ length: count }, (_, i) =>
    bullet(i, {
      content: `${odd[i % odd.length]} (${i})`,
      ...(i % 4 === 1 ? { evidence: [{ type: "session", uri: `/s/${i}.jsonl`, note: "seen: twice" }] } : {}),
      ...(i % 6 === 2 ? { customField: { nested: [1, 2.5, -3, "x"], "odd key": null, deep: { list: [[]], empty: {} } } } : {}),
      ...(i % 7 === 3 ? { feedbackEvents: [{ type: "helpful", timestamp: NOW }] } : {}),
    }),
  );
}

const markScope = (id: string): MutationScope => ({ bulletIds: [id] });

/** What `cm mark <id> --helpful` does to the playbook (a new bullet object in place of the old one). */
function markFn(id: string, at = "2026-02-01T00:00:00.000Z"): Fn {
  return (pb) => {
    const index = pb.bullets.findIndex((b) => b.id === id);
    if (index < 0) throw new Error(`not found: ${id}`);
    const old = pb.bullets[index]!;
    pb.bullets[index] = {
      ...old,
      helpfulCount: old.helpfulCount + 1,
      feedbackEvents: [...old.feedbackEvents, { type: "helpful", timestamp: at }],
      updatedAt: at,
    };
    return { id, helpful: old.helpfulCount + 1 };
  };
}

function journalEvent(bulletId: string, n: number): JournalEvent {
  return { id: `ev-${n}`, timestamp: NOW, operation: "feedback", change: "updated", bulletId, layer: "global", actor: "test", hashBefore: null, hashAfter: null };
}

describe("scoped mutations splice the changed bullets (byte-identical to the full writer)", () => {
  it("marks, in-place edits, removals, appends and head changes on a varied playbook", async () => {
    const p = await pair(toYaml(playbookOf(variedBullets(60))));
    // The first write re-emits the whole file (no layout recorded yet); later ones splice.
    expect(await p.run(markFn("b-splice-5"), markScope("b-splice-5"))).toBe(false);
    expect(await p.run(markFn("b-splice-5"), markScope("b-splice-5"))).toBe(true);
    for (const i of [0, 1, 2, 3, 17, 58, 59]) expect(await p.run(markFn(`b-splice-${i}`), markScope(`b-splice-${i}`))).toBe(true);
    // A change in place on the handed-out object.
    expect(
      await p.run(
        (pb) => {
          const b = pb.bullets.find((x) => x.id === "b-splice-8")!;
          b.pinned = true;
          b.content = "Changed: now with 'quotes' and ünïcödé";
        },
        markScope("b-splice-8"),
      ),
    ).toBe(true);
    // Journal events go through the intent path.
    expect(
      await p.run((pb, tx) => {
        markFn("b-splice-9")(pb, tx);
        tx.journal([journalEvent("b-splice-9", 1)]);
      }, markScope("b-splice-9")),
    ).toBe(true);
    expect((await readFile(join(p.fastDir, "events.jsonl"), "utf8")).trim().split("\n")).toHaveLength(1);
    // Removal of the first, a middle and the last bullet.
    for (const id of ["b-splice-0", "b-splice-30", "b-splice-59"]) {
      expect(await p.run((pb) => void pb.bullets.splice(pb.bullets.findIndex((b) => b.id === id), 1), markScope(id))).toBe(true);
    }
    // Several bullets at once, one removed, one replaced, and a new one appended; the head changes too.
    expect(
      await p.run(
        (pb) => {
          pb.bullets.splice(pb.bullets.findIndex((b) => b.id === "b-splice-20"), 1);
          const at = pb.bullets.findIndex((b) => b.id === "b-splice-10");
          pb.bullets[at] = { ...pb.bullets[at]!, maturity: "established" };
          pb.bullets.push(bullet(100, { content: "A new rule: \"quoted\" and long ".repeat(20) }));
          pb.description = "changed # description: yes";
          pb.metadata.totalReflections = 3;
        },
        { bulletIds: ["b-splice-10", "b-splice-20", "b-splice-40", "b-splice-100"] },
      ),
    ).toBe(true);
    // An id that is not there: the mutation sees no bullets and fails; nothing is written.
    const before = await readFile(p.fastFile);
    expect(await p.run(markFn("b-missing"), markScope("b-missing"))).toBe(false);
    expect((await readFile(p.fastFile)).equals(before)).toBe(true);
    // The appended bullet is spliceable too.
    expect(await p.run(markFn("b-splice-100"), markScope("b-splice-100"))).toBe(true);
  });

  it("keeps a leading comment block and top-level keys after the bullets", async () => {
    const pb = playbookOf(variedBullets(30), { extraTopLevel: { notes: ["kept", "as is"], count: 2 } });
    const text = "# My playbook\n\n# reviewed in git\n" + toYaml(pb);
    expect(emitHeadParts(pb)?.after).toContain("extraTopLevel");
    const p = await pair(text);
    for (let round = 0; round < 3; round++) {
      expect(await p.run(markFn("b-splice-29"), markScope("b-splice-29"))).toBe(round > 0);
      expect(await p.run(markFn("b-splice-0"), markScope("b-splice-0"))).toBe(true);
    }
    expect((await readFile(p.fastFile, "utf8")).startsWith("# My playbook\n\n# reviewed in git\nschema_version: 2\n")).toBe(true);
    // Removing the last bullet with keys after the sequence, and appending again.
    expect(await p.run((pb2) => void pb2.bullets.pop(), markScope("b-splice-29"))).toBe(true);
    expect(await p.run((pb2) => void pb2.bullets.push(bullet(77)), markScope("b-splice-77"))).toBe(true);
  });

  it("the repo layer with its header, down to no bullets and back", async () => {
    const repoText = "# Project-specific playbook rules\n" + toYaml(playbookOf([bullet(1, { content: "x".repeat(1500) }), bullet(2, { content: "y".repeat(600) })]));
    const p = await pair(toYaml(playbookOf(variedBullets(3))), repoText);
    const removeFn = (id: string): Fn => (pb) => void pb.bullets.splice(pb.bullets.findIndex((b) => b.id === id), 1);
    expect(await p.run(markFn("b-splice-1"), markScope("b-splice-1"), "repo")).toBe(false);
    expect(await p.run(markFn("b-splice-2"), markScope("b-splice-2"), "repo")).toBe(true);
    expect(await p.run(removeFn("b-splice-1"), markScope("b-splice-1"), "repo")).toBe(true);
    await p.run(removeFn("b-splice-2"), markScope("b-splice-2"), "repo");
    expect((await p.full.readPlaybook("repo"))?.bullets).toEqual([]);
    expect((await readFile(join(dir, "fast", "repo", ".cass", "playbook.yaml"), "utf8")).startsWith("# Project-specific playbook rules\n")).toBe(true);
    await p.run((pb) => void pb.bullets.push(bullet(9, { content: "z".repeat(1200) })), markScope("b-splice-9"), "repo");
    await p.run(markFn("b-splice-9"), markScope("b-splice-9"), "repo");
    expect(await p.run(markFn("b-splice-9"), markScope("b-splice-9"), "repo")).toBe(true);
  });

  it("duplicate ids: the mutation sees every copy, as the full writer's first match", async () => {
    const bullets = variedBullets(20);
    bullets[12] = { ...bullets[12]!, id: "b-splice-4", content: "second copy of the id" };
    const p = await pair(toYaml(playbookOf(bullets)));
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"));
    expect(await p.run(markFn("b-splice-4"), markScope("b-splice-4"))).toBe(true);
    expect(await p.run((pb) => void pb.bullets.splice(pb.bullets.findIndex((b) => b.id === "b-splice-4"), 1), markScope("b-splice-4"))).toBe(true);
    expect(await p.run(markFn("b-splice-4"), markScope("b-splice-4"))).toBe(true);
    expect((await p.full.readPlaybook("global"))?.bullets.filter((b) => b.id === "b-splice-4")).toHaveLength(1);
  });
});

describe("readBullets: the named bullets, as readPlaybook gives them", () => {
  /** Checks the fast store's readBullets against the reference store's whole read; resolves to whether it read only those bullets. */
  async function expectReadBullets(p: Pair, ids: string[], layer: "global" | "repo" = "global"): Promise<boolean> {
    const before = p.fastLog.lines.length;
    const got = await p.fast.readBullets!(layer, ids);
    const whole = await p.full.readPlaybook(layer);
    const wanted = new Set(ids);
    expect(got).toEqual(whole === null ? null : { ...whole, bullets: whole.bullets.filter((b) => wanted.has(b.id)) });
    return p.fastLog.lines.slice(before).some((line) => line.message.includes("without the others"));
  }

  it("a file the store wrote is read without decoding the other bullets", async () => {
    const p = await pair(toYaml(playbookOf(variedBullets(60), { extraTopLevel: { notes: ["kept"] } })));
    // No layout before the store's first write: the whole file is read.
    expect(await expectReadBullets(p, ["b-splice-5"])).toBe(false);
    await p.run(markFn("b-splice-5"), markScope("b-splice-5"));
    for (let i = 0; i < 60; i++) expect(await expectReadBullets(p, [`b-splice-${i}`])).toBe(true);
    expect(await expectReadBullets(p, ["b-splice-59", "b-splice-0", "b-splice-30"])).toBe(true);
    // Ids that are not there: the head alone.
    expect(await expectReadBullets(p, ["b-missing"])).toBe(true);
    expect(await expectReadBullets(p, ["b-splice-8", "b-missing"])).toBe(true);
    expect(await expectReadBullets(p, [])).toBe(false);
    // What is returned is the caller's to change: the next read is unaffected.
    (await p.fast.readBullets!("global", ["b-splice-7"]))!.bullets[0]!.content = "changed by the caller";
    expect(await expectReadBullets(p, ["b-splice-7"])).toBe(true);
  });

  it("every copy of a duplicated id, in file order", async () => {
    const bullets = variedBullets(20);
    bullets[12] = { ...bullets[12]!, id: "b-splice-4", content: "second copy of the id" };
    const p = await pair(toYaml(playbookOf(bullets)));
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"));
    expect(await expectReadBullets(p, ["b-splice-4"])).toBe(true);
    expect((await p.fast.readBullets!("global", ["b-splice-4"]))?.bullets.map((b) => b.content)).toEqual([bullets[4]!.content, "second copy of the id"]);
  });

  it("returns what the bytes on disk hold after another program rewrote them, even at the same size", async () => {
    const p = await pair(toYaml(playbookOf(variedBullets(40))));
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"));
    expect(await expectReadBullets(p, ["b-splice-12"])).toBe(true);
    // Same size, so the recorded layout still fits: a changed letter in the named bullet, in another
    // bullet, and in the head.
    const edits: Array<[RegExp, string]> = [
      [/\(12\)/, "(92)"],
      [/\(14\)/, "(94)"],
      [/^name: playbook$/m, "name: playbooc"],
    ];
    for (const [pattern, replacement] of edits) {
      for (const file of [p.fastFile, p.fullFile]) {
        const text = await readFile(file, "utf8");
        expect(text).toMatch(pattern);
        await writeFile(file, text.replace(pattern, replacement));
      }
      expect(await expectReadBullets(p, ["b-splice-12", "b-splice-14"])).toBe(true);
    }
    expect((await p.fast.readBullets!("global", ["b-splice-12"]))?.name).toBe("playbooc");
    // A different size: the layout no longer fits, and the whole file is read.
    for (const file of [p.fastFile, p.fullFile]) await writeFile(file, (await readFile(file, "utf8")).replace("(92)", "(twelve)"));
    expect(await expectReadBullets(p, ["b-splice-12"])).toBe(false);
  });

  it("the repo layer and the earlier cm's format", async () => {
    const repoText = "# Project-specific playbook rules\n" + toYaml(playbookOf([bullet(1, { content: "x".repeat(1500) }), bullet(2)]));
    const p = await pair(stringify(playbookOf(variedBullets(25))), repoText);
    expect(await expectReadBullets(p, ["b-splice-3"])).toBe(false);
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"), "repo");
    expect(await expectReadBullets(p, ["b-splice-1"], "repo")).toBe(true);
    expect(await expectReadBullets(p, ["b-splice-2", "b-splice-3"], "repo")).toBe(true);
  });

  it("an absent playbook is null, a corrupt one fails as readPlaybook does", async () => {
    const q = await pair(toYaml(playbookOf(variedBullets(5))));
    expect(await q.fast.readBullets!("repo", ["b-splice-1"])).toBeNull();
    await q.run(markFn("b-splice-1"), markScope("b-splice-1"));
    await rm(q.fastFile);
    expect(await q.fast.readBullets!("global", ["b-splice-1"])).toBeNull();
    await writeFile(q.fastFile, "schema_version: 2\nbullets:\n  - id: b-1\n    content: [unclosed\n");
    await expect(q.fast.readBullets!("global", ["b-1"])).rejects.toMatchObject({ code: "PLAYBOOK_CORRUPT" });
  });
});

describe("falls back to the full write (same bytes) when the file is not known canonical", () => {
  it("a playbook written by the earlier cm (the yaml library's format) and the original fixture", async () => {
    const pb = playbookOf(variedBullets(25));
    const p = await pair(stringify(pb));
    expect(await p.run(markFn("b-splice-3"), markScope("b-splice-3"))).toBe(false);
    expect(await p.run(markFn("b-splice-3"), markScope("b-splice-3"))).toBe(true);

    const fixture = await readFile(join(FIXTURE_HOME, "home", ".cass-memory", "playbook.yaml"), "utf8");
    const q = await pair(fixture);
    const ids = decodePlaybook(fixture, "fixture.yaml").bullets.map((b) => b.id);
    expect(await q.run(markFn(ids[0]!), markScope(ids[0]!))).toBe(false);
    for (const id of ids) expect(await q.run(markFn(id), markScope(id))).toBe(true);
  });

  it("a file edited by hand after the store wrote it, a damaged layout, a missing or foreign cache file", async () => {
    const p = await pair(toYaml(playbookOf(variedBullets(40))));
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"));
    expect(await p.run(markFn("b-splice-1"), markScope("b-splice-1"))).toBe(true);

    // Hand edit (same on both sides): a comment line at the end, then a reordering of two keys.
    for (const file of [p.fastFile, p.fullFile]) await writeFile(file, (await readFile(file, "utf8")) + "# edited\n");
    expect(await p.run(markFn("b-splice-2"), markScope("b-splice-2"))).toBe(false);
    expect(await p.run(markFn("b-splice-2"), markScope("b-splice-2"))).toBe(true);
    for (const file of [p.fastFile, p.fullFile]) {
      const text = await readFile(file, "utf8");
      await writeFile(file, text.replace(/^name: playbook\ndescription: (.*)$/m, "description: $1\nname: playbook"));
    }
    expect(await p.run(markFn("b-splice-2"), markScope("b-splice-2"))).toBe(false);

    const cacheDir = join(p.fastDir, ".cache");
    const layoutFile = async () => join(cacheDir, (await readdir(cacheDir)).find((n) => n.endsWith(".layout.json"))!);
    const cacheFile = async () => join(cacheDir, (await readdir(cacheDir)).find((n) => !n.endsWith(".layout.json") && !n.endsWith(".stat.json"))!);

    // A layout whose offsets are off by one byte (same hash): refused.
    const lf = await layoutFile();
    const layout = JSON.parse(await readFile(lf, "utf8")) as { starts: number[] };
    layout.starts[3] = layout.starts[3]! + 1;
    await writeFile(lf, JSON.stringify(layout));
    expect(await p.run(markFn("b-splice-3"), markScope("b-splice-3"))).toBe(false);
    // Unreadable layout.
    await writeFile(await layoutFile(), "{ not json");
    expect(await p.run(markFn("b-splice-3"), markScope("b-splice-3"))).toBe(false);
    // No cache file.
    await rm(await cacheFile());
    expect(await p.run(markFn("b-splice-4"), markScope("b-splice-4"))).toBe(false);
    // The cache record rewritten in another layout (what a reader that missed writes): refused.
    const cf = await cacheFile();
    await writeFile(cf, JSON.stringify(JSON.parse(await readFile(cf, "utf8"))));
    expect(await p.run(markFn("b-splice-4"), markScope("b-splice-4"))).toBe(false);
    expect(await p.run(markFn("b-splice-4"), markScope("b-splice-4"))).toBe(true);
  });

  it("unscoped mutations and values JSON cannot hold exactly", async () => {
    const p = await pair(toYaml(playbookOf(variedBullets(30))));
    await p.run(markFn("b-splice-1"), markScope("b-splice-1"));
    expect(await p.run(markFn("b-splice-1"))).toBe(false);
    // -0 is written to YAML but not cached: no layout, so the next write is a full one.
    expect(await p.run((pb) => void ((pb.bullets[0] as Record<string, unknown>).weight = -0), markScope("b-splice-0"))).toBe(true);
    expect(await p.run(markFn("b-splice-2"), markScope("b-splice-2"))).toBe(false);
  });
});

describe("concurrent scoped writers", () => {
  it("never lose a mutation, and the file stays canonical", async () => {
    const globalDir = join(dir, "c", ".cass-memory");
    await mkdir(globalDir, { recursive: true });
    await writeFile(join(globalDir, "playbook.yaml"), toYaml(playbookOf(variedBullets(40))));
    const open = () => createYamlStore({ globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });
    await open().mutatePlaybook("global", markFn("b-splice-0"), markScope("b-splice-0"));
    const targets = ["b-splice-1", "b-splice-2", "b-splice-1", "b-splice-39", "b-splice-2", "b-splice-1"];
    await Promise.all(targets.map((id, n) => open().mutatePlaybook("global", markFn(id, `2026-02-01T00:00:0${n}.000Z`), markScope(id))));
    const text = await readFile(join(globalDir, "playbook.yaml"), "utf8");
    const decoded = decodePlaybook(text, "check.yaml");
    expect(toYaml(decoded)).toBe(text);
    const count = (id: string) => decoded.bullets.find((b) => b.id === id)!.feedbackEvents.length;
    const base = (id: string) => variedBullets(40).find((b) => b.id === id)!.feedbackEvents.length;
    expect(count("b-splice-1") - base("b-splice-1")).toBe(3);
    expect(count("b-splice-2") - base("b-splice-2")).toBe(2);
    expect(count("b-splice-39") - base("b-splice-39")).toBe(1);
    expect(await open().readPlaybook("global")).toEqual(decoded);
  });
});

describe("concurrent scoped writers in separate processes (built dist)", () => {
  const WORKER = fileURLToPath(new URL("./fixtures/splice-worker.mjs", import.meta.url));
  const runWorker = (args: string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [WORKER, ...args], { stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (chunk: Buffer) => void (out += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`worker exited ${code}: ${err}`))));
    });

  it("splice, and no mark is lost, with the default parse cache settings", { timeout: 120_000 }, async () => {
    const globalDir = join(dir, "procs", ".cass-memory");
    await mkdir(globalDir, { recursive: true });
    const initial = playbookOf(variedBullets(120));
    await writeFile(join(globalDir, "playbook.yaml"), toYaml(initial));
    expect((await readFile(join(globalDir, "playbook.yaml"))).length).toBeGreaterThan(32 * 1024);
    const ids = ["b-splice-7", "b-splice-64", "b-splice-119"];
    const counts = await Promise.all(Array.from({ length: 6 }, (_, p) => runWorker([globalDir, String(p), "8", ...ids])));
    const text = await readFile(join(globalDir, "playbook.yaml"), "utf8");
    const decoded = decodePlaybook(text, "check.yaml");
    expect(toYaml(decoded)).toBe(text);
    // 8 marks per process over 3 ids: 3, 3 and 2 each.
    ids.forEach((id, k) => {
      const added = decoded.bullets.find((b) => b.id === id)!.feedbackEvents.length - initial.bullets.find((b) => b.id === id)!.feedbackEvents.length;
      expect(added).toBe(6 * [3, 3, 2][k]!);
    });
    // Every mark but the very first writes in place: each finds the layout its predecessor recorded
    // before releasing the lock.
    expect(counts.reduce((sum, c) => sum + Number(c), 0)).toBe(6 * 8 - 1);
    const others = decoded.bullets.filter((b) => !ids.includes(b.id));
    expect(others).toEqual(decodePlaybook(toYaml(initial), "initial.yaml").bullets.filter((b) => !ids.includes(b.id)));
    const store = createYamlStore({ globalDir, repoDir: null, logger: testLogger() });
    expect(await store.readPlaybook("global")).toEqual(decoded);
  });
});

describe("a writer killed during a spliced write (journal intent)", () => {
  const WORKER = fileURLToPath(new URL("./fixtures/splice-crash-worker.mjs", import.meta.url));
  const killedRun = (args: string[], point: string): Promise<NodeJS.Signals | null> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [WORKER, ...args], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, CM_TEST_CRASH_AT: point } });
      let err = "";
      child.stderr.on("data", (chunk: Buffer) => void (err += chunk.toString()));
      child.on("error", reject);
      child.on("exit", (code, signal) => (signal !== null ? resolve(signal) : reject(new Error(`worker exited ${code} without being killed: ${err}`))));
    });

  it("leaves the old or the new file, settled into the journal by the next writer, which still splices later", { timeout: 120_000 }, async () => {
    const globalDir = join(dir, "crash", ".cass-memory");
    await mkdir(globalDir, { recursive: true });
    const playbookFile = join(globalDir, "playbook.yaml");
    await writeFile(playbookFile, toYaml(playbookOf(variedBullets(120))));
    const log = testLogger();
    const open = () => createYamlStore({ globalDir, repoDir: null, logger: log });
    const splicedSince = (from: number) => log.lines.slice(from).some((line) => line.message.includes("in place"));
    await open().mutatePlaybook("global", markFn("b-splice-1"), markScope("b-splice-1"));
    const id = "b-splice-50";
    let n = 0;
    for (const { point, landed } of [
      { point: "yaml:after-intent", landed: false },
      { point: "yaml:after-playbook-rename", landed: true },
      { point: "yaml:after-journal-append", landed: true },
    ]) {
      // The file as the store last left it (layout recorded): the killed writer takes the splice path.
      let from = log.lines.length;
      await open().mutatePlaybook("global", markFn("b-splice-2", `2026-02-0${++n}T00:00:00.000Z`), markScope("b-splice-2"));
      expect(splicedSince(from)).toBe(true);
      const eventId = `ev-crash-${n}`;
      expect(await killedRun([globalDir, id, eventId], point)).toBe("SIGKILL");
      const onDisk = decodePlaybook(await readFile(playbookFile, "utf8"), "check.yaml");
      const hasMark = (pb: Playbook) => pb.bullets.find((b) => b.id === id)!.feedbackEvents.some((e) => e.context === eventId);
      expect(hasMark(onDisk)).toBe(landed);
      // Reads see the change and its event alike; the next writer settles the intent.
      const reader = open();
      expect(hasMark((await reader.readPlaybook("global"))!)).toBe(landed);
      expect((await reader.readJournal("global")).some((e) => e.id === eventId)).toBe(landed);
      from = log.lines.length;
      await open().mutatePlaybook("global", markFn("b-splice-3", `2026-02-0${n}T01:00:00.000Z`), markScope("b-splice-3"));
      const journalText = await readFile(join(globalDir, "events.jsonl"), "utf8").catch(() => "");
      const journal = journalText.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { id: string });
      expect(journal.filter((e) => e.id === eventId)).toHaveLength(landed ? 1 : 0);
      expect((await readdir(globalDir)).filter((name) => name.includes("intent"))).toEqual([]);
      const text = await readFile(playbookFile, "utf8");
      const decoded = decodePlaybook(text, "check.yaml");
      expect(toYaml(decoded)).toBe(text);
      expect(hasMark(decoded)).toBe(landed);
      expect(await open().readPlaybook("global")).toEqual(decoded);
      // After a landed kill the recorded layout is the old file's: that write was a full one.
      expect(splicedSince(from)).toBe(!landed);
    }
  });
});

describe("emitter pieces", () => {
  it("a playbook's text is its head before `bullets:`, each bullet's item text, and the head after", () => {
    for (const pb of [playbookOf(variedBullets(40)), playbookOf(variedBullets(5), { zz: [1, { a: "b" }], "quoted key": "v" })]) {
      const head = emitHeadParts(pb)!;
      expect(head.before + "bullets:\n" + pb.bullets.map((b) => emitTopLevelSeqItem(b)).join("") + head.after).toBe(toYaml(pb));
    }
  });
});
