import { appendFile, cp, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { DiaryEntry, Store, StoreSection, StoreTransfer } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { REPO_PLAYBOOK_HEADER, createYamlStore } from "../src/index.js";
import { FIXTURE_HOME, tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-yaml-transfer-"));
});
afterEach(async () => {
  await cleanup();
});

interface Dirs {
  globalDir: string;
  repoDir: string;
}

function dirsOf(name: string): Dirs {
  return { globalDir: join(dir, name, "home", ".cass-memory"), repoDir: join(dir, name, "repo", ".cass") };
}

function open(dirs: Dirs): Store {
  return createYamlStore({ ...dirs, logger: testLogger(), parseCache: false, now: () => new Date("2026-03-15T12:00:00.000Z") });
}

function transferOf(store: Store): StoreTransfer {
  if (!store.transfer) throw new Error("no transfer");
  return store.transfer;
}

async function copyAll(from: Store, to: Store): Promise<string[]> {
  const keys = await transferOf(from).listSections();
  for (const key of keys) await transferOf(to).writeSection(await transferOf(from).readSection(key));
  return keys;
}

/** Every file below `root` (relative path → bytes), lock directories and the parse cache left out. */
async function filesBelow(root: string): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  async function walk(path: string): Promise<void> {
    let entries;
    try {
      entries = await readdir(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) {
        if (entry.name.endsWith(".lock.d") || entry.name === ".cache") continue;
        await walk(full);
      } else {
        found.set(relative(root, full), (await readFile(full)).toString("base64"));
      }
    }
  }
  await walk(root);
  return found;
}

function diary(n: number): DiaryEntry {
  return {
    id: `diary-${String(n).padStart(4, "0")}`,
    sessionPath: `/s/${n}.jsonl`,
    timestamp: "2026-01-01T00:00:00.000Z",
    agent: "claude",
    status: "success",
    accomplishments: [`did ${n} ✓`],
    decisions: [],
    challenges: [],
    preferences: [],
    keyLearnings: [],
    relatedSessions: [],
    tags: [],
    searchAnchors: [],
  };
}

describe("YAML store transfer: files", () => {
  it("writes byte for byte the files the store's own methods write", async () => {
    const a = dirsOf("a");
    const source = open(a);
    for (const layer of ["global", "repo"] as const) {
      await source.mutatePlaybook(layer, (pb, tx) => {
        pb.bullets.push(createTestBullet({ id: `b-${layer}`, content: "no", tags: ["yes", "日本語"], futureField: { x: [1, null] } }));
        pb.deprecatedPatterns.push({ pattern: "var ", deprecatedAt: "2026-01-01T00:00:00.000Z", reason: "use let" });
        tx.journal([
          { id: `ev-${layer}`, timestamp: "2026-01-01T00:00:00.000Z", operation: "add", change: "created", bulletId: `b-${layer}`, layer, actor: "t", hashBefore: null, hashAfter: "0123456789abcdef" },
        ]);
      });
      await source.appendBlocked(layer, [{ id: `b-x-${layer}`, content: "blocked ✓" }]);
      await source.appendLog(layer, "traumas", [{ id: "trauma-1", pattern: "rm -rf /" }]);
    }
    await source.appendLog("global", "outcomes", [{ a: 1 }, { b: "é" }]);
    for (let n = 0; n < 5; n += 1) await source.writeDiary(diary(n));
    await source.appendProcessedSessions("global", [{ sessionPath: "/s/1.jsonl", processedAt: "2026-01-01T00:00:00.000Z", deltasGenerated: 0 }]);
    await source.appendProcessedSessions("global", [{ sessionPath: "/s/2.jsonl", processedAt: "2026-01-02T00:00:00.000Z", deltasGenerated: 2 }]);
    await source.mutateOnboardingState((state) => void state.processedSessions.push({ path: "/s/1.jsonl", processedAt: "2026-01-01T00:00:00.000Z", rulesExtracted: 1 }), {
      nowIso: "2026-01-01T00:00:00.000Z",
    });
    await source.costs.record({ provider: "openai", model: "m", tokensIn: 1, tokensOut: 2, cost: 0.25, timestamp: "2026-03-15T12:00:00.000Z" });

    const b = dirsOf("b");
    await copyAll(source, open(b));
    for (const key of ["globalDir", "repoDir"] as const) {
      const expected = await filesBelow(a[key]);
      expect(expected.size).toBeGreaterThan(3);
      expect(await filesBelow(b[key]), key).toEqual(expected);
    }
    expect(await readFile(join(b.repoDir, "playbook.yaml"), "utf8")).toMatch(new RegExp(`^${REPO_PLAYBOOK_HEADER.split("\n")[0]}`));
  });

  it("gives diary files strictly increasing modification times, oldest entry first", async () => {
    const store = open(dirsOf("a"));
    const entries = [diary(3), diary(1), diary(2)]; // newest first, as the store lists them
    await transferOf(store).writeSection({ key: "diaries", kind: "diaries", entries, skipped: 0 });
    const diaryDir = join(dirsOf("a").globalDir, "diary");
    const times = await Promise.all(entries.map(async (e) => (await stat(join(diaryDir, `${e.id}.json`))).mtimeMs));
    expect(times[0]).toBeGreaterThan(times[1] as number);
    expect(times[1]).toBeGreaterThan(times[2] as number);
    expect((await store.listDiaries()).map((e) => e.id)).toEqual(entries.map((e) => e.id));
  });

  it("leaves files in the diary directory that are not diary entries alone", async () => {
    const dirs = dirsOf("a");
    const store = open(dirs);
    await store.writeDiary(diary(1));
    await writeFile(join(dirs.globalDir, "diary", "notes.json"), "{ my own notes");
    await transferOf(store).writeSection({ key: "diaries", kind: "diaries", entries: [diary(2)], skipped: 0 });
    expect((await readdir(join(dirs.globalDir, "diary"))).sort()).toEqual(["diary-0002.json", "notes.json"]);
    expect(await transferOf(store).readSection("diaries")).toEqual({ key: "diaries", kind: "diaries", entries: [diary(2)], skipped: 1 });
  });

  it("carries one entry per diary id: a second file with the same id is counted in skipped", async () => {
    const dirs = dirsOf("a");
    const store = open(dirs);
    await store.writeDiary(diary(1));
    await writeFile(join(dirs.globalDir, "diary", "diary-0001 copy.json"), JSON.stringify({ ...diary(1), accomplishments: ["older copy"] }, null, 2));
    const section = await transferOf(store).readSection("diaries");
    expect(section).toMatchObject({ skipped: 1 });
    expect(section.kind === "diaries" ? section.entries.map((e) => e.id) : []).toEqual([diary(1).id]);
    const target = open(dirsOf("b"));
    await transferOf(target).writeSection(section);
    expect(await transferOf(target).readSection("diaries")).toEqual({ ...section, skipped: 0 });
  });

  it("keeps a playbook's leading comments, and backs up a playbook that does not parse before replacing it", async () => {
    const dirs = dirsOf("a");
    const store = open(dirs);
    const path = join(dirs.globalDir, "playbook.yaml");
    await store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-1" })));
    const playbook = await store.readPlaybook("global");
    await writeFile(path, `# my notes\n${await readFile(path, "utf8")}`);
    await transferOf(store).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook });
    expect((await readFile(path, "utf8")).startsWith("# my notes\nschema_version: 2\n")).toBe(true);

    await writeFile(path, "bullets: [unclosed\n");
    await transferOf(store).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook });
    expect(await store.readPlaybook("global")).toEqual(playbook);
    const backups = (await readdir(dirs.globalDir)).filter((name) => name.startsWith("playbook.yaml.backup."));
    expect(backups).toHaveLength(1);
    expect(await readFile(join(dirs.globalDir, backups[0] as string), "utf8")).toBe("bullets: [unclosed\n");
  });

  it("counts malformed cost lines and an unreadable total.json in skipped", async () => {
    const dirs = dirsOf("a");
    const store = open(dirs);
    await store.costs.record({ provider: "p", model: "m", tokensIn: 1, tokensOut: 1, cost: 0.5, timestamp: "2026-03-15T12:00:00.000Z" });
    await appendFile(join(dirs.globalDir, "cost", "monthly-2026-03.jsonl"), "{ torn\n");
    await writeFile(join(dirs.globalDir, "cost", "total.json"), "{ damaged");
    const section = await transferOf(store).readSection("costs");
    expect(section).toEqual({
      key: "costs",
      kind: "costs",
      months: { "2026-03": [{ provider: "p", model: "m", tokensIn: 1, tokensOut: 1, cost: 0.5, timestamp: "2026-03-15T12:00:00.000Z" }] },
      totals: null,
      skipped: 2,
    });
    const target = open(dirsOf("b"));
    await transferOf(target).writeSection(section);
    expect(await transferOf(target).readSection("costs")).toEqual({ ...section, skipped: 0 });
    await expect(stat(join(dirsOf("b").globalDir, "cost", "total.json"))).rejects.toThrow();
  });

  it("writes nothing for an empty section of a layer directory that does not exist", async () => {
    const dirs = dirsOf("a");
    const store = open(dirs);
    const empty: StoreSection = { key: "repo/log/outcomes", kind: "log", layer: "repo", log: "outcomes", records: [], skipped: 0 };
    await transferOf(store).writeSection(empty);
    await transferOf(store).writeSection({ key: "repo/playbook", kind: "playbook", layer: "repo", playbook: null });
    await transferOf(store).writeSection({ key: "diaries", kind: "diaries", entries: [], skipped: 0 });
    await transferOf(store).writeSection({ key: "costs", kind: "costs", months: {}, totals: null, skipped: 0 });
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("YAML store transfer: the original's files", () => {
  it("copies the original cm's directories into fresh ones that read the same and parse as plain YAML", async () => {
    const a = dirsOf("a");
    await mkdir(join(dir, "a"), { recursive: true });
    await cp(join(FIXTURE_HOME, "home"), join(dir, "a", "home"), { recursive: true });
    await cp(join(FIXTURE_HOME, "repo"), join(dir, "a", "repo"), { recursive: true });
    const source = open(a);
    const keys = await copyAll(source, open(dirsOf("b")));
    expect(keys).toEqual([
      "global/playbook",
      "global/blocked",
      "global/log/outcomes",
      "global/log/context-log",
      "global/log/traumas",
      "repo/playbook",
      "repo/log/traumas",
      "processed/global",
      "onboarding",
    ]);
    const target = open(dirsOf("b"));
    for (const key of keys) expect(await transferOf(target).readSection(key), key).toEqual(await transferOf(source).readSection(key));
    for (const layer of ["global", "repo"] as const) {
      const file = join(layer === "global" ? dirsOf("b").globalDir : dirsOf("b").repoDir, "playbook.yaml");
      const plain = parse(await readFile(file, "utf8")) as { bullets: Array<{ id: string }> };
      expect(plain.bullets.map((b) => b.id)).toEqual((await source.readPlaybook(layer))?.bullets.map((b) => b.id));
    }
    // The original's onboarding file and processed log are carried byte for byte.
    for (const name of ["onboarding-state.json", "reflections/global.processed.log", "traumas.jsonl", "outcomes.jsonl"]) {
      expect(await readFile(join(dirsOf("b").globalDir, name), "utf8"), name).toBe(await readFile(join(a.globalDir, name), "utf8"));
    }
  });
});
