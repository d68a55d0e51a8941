import { createTestBullet } from "@cass-memory/core/testing";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createYamlStore, toYaml } from "../src/index.js";
import { STAT_SETTLED_MS } from "../src/parse-cache.js";
import { testLogger, useTempHome } from "./helpers.js";

const home = useTempHome("cm-cache-");

const NOW = "2026-01-01T00:00:00.000Z";

function bigPlaybook(count: number, description = "Auto-generated from cass-memory reflections") {
  return {
    schema_version: 2,
    name: "playbook",
    description,
    metadata: { createdAt: NOW, totalReflections: 0, totalSessionsProcessed: 0 },
    deprecatedPatterns: [],
    bullets: Array.from({ length: count }, (_, i) =>
      createTestBullet({
        id: `b-cache-${i}`,
        category: "perf",
        content: `Rule number ${i}: always measure before optimising, and keep the measurement script around`,
        helpfulCount: i % 7,
        createdAt: NOW,
        updatedAt: NOW,
        tags: ["perf"],
      }),
    ),
  };
}

function open() {
  return createYamlStore({ globalDir: home.globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });
}

describe("parse cache", () => {
  it("writes one cache file per playbook, keyed by content, and serves hits without parsing", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    const first = await open().readPlaybook("global");
    const files = await readdir(home.cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^playbook-[0-9a-f]{16}\.v1\.[0-9a-f]{64}\.json$/);
    // Poison the cached copy: a hit must return it (proving no YAML parse happened).
    const cacheFile = join(home.cacheDir, files[0] ?? "");
    const record = JSON.parse(await readFile(cacheFile, "utf8")) as { playbook: { description: string } };
    expect(record.playbook).toEqual(first);
    record.playbook.description = "served from cache";
    await writeFile(cacheFile, JSON.stringify(record));
    expect((await open().readPlaybook("global"))?.description).toBe("served from cache");
  });

  it("misses when the file changes and replaces the old cache file", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    await open().readPlaybook("global");
    const oldFiles = await readdir(home.cacheDir);
    await writeFile(home.playbookPath, toYaml(bigPlaybook(51)));
    expect((await open().readPlaybook("global"))?.bullets).toHaveLength(51);
    const newFiles = await readdir(home.cacheDir);
    expect(newFiles).toHaveLength(1);
    expect(newFiles).not.toEqual(oldFiles);
  });

  it("is primed by a mutation so the next read hits", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    await open().mutatePlaybook("global", (pb) => void (pb.description = "mutated"));
    // One cache record, and the layout of the written file (playbook-splice.ts).
    const all = await readdir(home.cacheDir);
    expect(all.filter((name) => name.endsWith(".layout.json"))).toHaveLength(1);
    const files = all.filter((name) => !name.endsWith(".layout.json"));
    expect(files).toHaveLength(1);
    const record = JSON.parse(await readFile(join(home.cacheDir, files[0] ?? ""), "utf8")) as { playbook: { description: string } };
    expect(record.playbook.description).toBe("mutated");
  });

  it("ignores a damaged cache file and never fails the command when the cache cannot be written", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    await open().readPlaybook("global");
    const [name] = await readdir(home.cacheDir);
    await writeFile(join(home.cacheDir, name ?? ""), "{ not json");
    expect((await open().readPlaybook("global"))?.bullets).toHaveLength(50);
    // .cache is a file: the cache cannot be used at all
    const other = join(home.dir, "other");
    await mkdir(other);
    await writeFile(join(other, ".cache"), "not a directory");
    await writeFile(join(other, "playbook.yaml"), toYaml(bigPlaybook(50)));
    const s = createYamlStore({ globalDir: other, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });
    expect((await s.readPlaybook("global"))?.bullets).toHaveLength(50);
  });

  it("does not cache small files or corrupt files", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(1)));
    await createYamlStore({ globalDir: home.globalDir, repoDir: null, logger: testLogger() }).readPlaybook("global");
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)) + "bullets: [duplicate key\n");
    await expect(open().readPlaybook("global")).rejects.toMatchObject({ code: "PLAYBOOK_CORRUPT" });
    await expect(readdir(home.cacheDir)).rejects.toMatchObject({ code: "ENOENT" });
  });
});

describe("parse cache: text", () => {
  it("serves non-ASCII rule texts exactly (the cache file is decoded as Latin-1 only when it is ASCII)", async () => {
    const pb = bigPlaybook(50);
    pb.bullets[3]!.content = "Prüfe die Überweisung — ✓ 日本語 🚀 before retrying";
    await writeFile(home.playbookPath, toYaml(pb));
    const first = await open().readPlaybook("global");
    const [name] = await readdir(home.cacheDir);
    expect((await readFile(join(home.cacheDir, name ?? ""), "utf8")).includes("日本語")).toBe(true);
    const second = await open().readPlaybook("global");
    expect(second?.bullets[3]?.content).toBe("Prüfe die Überweisung — ✓ 日本語 🚀 before retrying");
    expect(second).toEqual(first);
  });
});

describe("parse cache: reads of an unchanged file by its stat", () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, STAT_SETTLED_MS + 200));
  const statFiles = async () => (await readdir(home.cacheDir)).filter((name) => name.endsWith(".stat.json"));

  it("records the stat of a settled file and then serves reads without reading the playbook", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    // A file changed less than STAT_SETTLED_MS ago is read and hashed, and its stat is not recorded.
    await open().readPlaybook("global");
    expect(await statFiles()).toEqual([]);
    await settle();
    const first = await open().readPlaybook("global");
    expect(await statFiles()).toHaveLength(1);
    // Point the stat record at another cache record (a hash no bytes have): only a read that trusts
    // the stat, without reading and hashing the playbook, can return that record's rules.
    const [recordName] = (await readdir(home.cacheDir)).filter((name) => /\.v1\.[0-9a-f]{64}\.json$/.test(name));
    const record = JSON.parse(await readFile(join(home.cacheDir, recordName ?? ""), "utf8")) as { hash: string; playbook: { description: string } };
    const fakeHash = "f".repeat(64);
    record.hash = fakeHash;
    record.playbook.description = "served by stat";
    await writeFile(join(home.cacheDir, (recordName ?? "").replace(/[0-9a-f]{64}/, fakeHash)), JSON.stringify(record));
    const [statName] = await statFiles();
    const statRecord = JSON.parse(await readFile(join(home.cacheDir, statName ?? ""), "utf8")) as { hash: string };
    await writeFile(join(home.cacheDir, statName ?? ""), JSON.stringify({ ...statRecord, hash: fakeHash }));
    expect(first?.description).not.toBe("served by stat");
    expect((await open().readPlaybook("global"))?.description).toBe("served by stat");
    // Both the memoizing store (a long-running host) and a plain one take the same path.
    const memo = createYamlStore({ globalDir: home.globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 }, memoizeReads: true });
    expect((await memo.readPlaybook("global"))?.description).toBe("served by stat");
  });

  it("never serves an old parse after the file changes, even with the same size", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50, "version A")));
    await settle();
    expect((await open().readPlaybook("global"))?.description).toBe("version A");
    expect(await statFiles()).toHaveLength(1);
    // Same length, other bytes, written in place (same inode).
    const text = await readFile(home.playbookPath, "utf8");
    await writeFile(home.playbookPath, text.replace("version A", "version B"));
    expect((await open().readPlaybook("global"))?.description).toBe("version B");
    // A mutation through the store replaces the file: still the new content.
    await open().mutatePlaybook("global", (pb) => void (pb.description = "version C"));
    expect((await open().readPlaybook("global"))?.description).toBe("version C");
  });

  it("ignores a damaged or foreign stat record", async () => {
    await writeFile(home.playbookPath, toYaml(bigPlaybook(50)));
    await settle();
    await open().readPlaybook("global");
    const [name] = await statFiles();
    const path = join(home.cacheDir, name ?? "");
    const record = JSON.parse(await readFile(path, "utf8")) as { hash: string };
    for (const damaged of ["{ not json", "null", JSON.stringify({ ...record, hash: "../../etc" }), JSON.stringify({ ...record, path: "/elsewhere" })]) {
      await writeFile(path, damaged);
      expect((await open().readPlaybook("global"))?.bullets).toHaveLength(50);
    }
  });
});
