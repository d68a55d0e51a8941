import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createEmptyPlaybook } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { describe, expect, it } from "vitest";
import { createYamlStore, toYaml } from "../src/index.js";
import { STAT_SETTLED_MS } from "../src/parse-cache.js";
import { testLogger, useTempHome } from "./helpers.js";

// A stat record also says whether the parse cache file of its hash is ASCII, so that reads by the
// record decode it as Latin-1 without checking every byte again.

const home = useTempHome("cm-stat-ascii-");

const NOW = "2026-01-01T00:00:00.000Z";
const settle = () => new Promise((resolve) => setTimeout(resolve, STAT_SETTLED_MS + 200));
const open = () => createYamlStore({ globalDir: home.globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });

function playbook(content: (i: number) => string) {
  return {
    ...createEmptyPlaybook(NOW, "global"),
    bullets: Array.from({ length: 30 }, (_, i) => createTestBullet({ id: `b-ascii-${i}`, category: "perf", content: content(i), createdAt: NOW, updatedAt: NOW })),
  };
}

const statRecord = async () => {
  const [name] = (await readdir(home.cacheDir)).filter((n) => n.endsWith(".stat.json"));
  return { path: join(home.cacheDir, name ?? ""), record: JSON.parse(await readFile(join(home.cacheDir, name ?? ""), "utf8")) as Record<string, unknown> };
};
const cacheFile = async () => join(home.cacheDir, (await readdir(home.cacheDir)).find((n) => /\.v1\.[0-9a-f]{64}\.json$/.test(n)) ?? "");

describe("parse cache: the stat record's ASCII flag", () => {
  it("is recorded for an ASCII cache file and then trusted by reads through the record", async () => {
    await writeFile(home.playbookPath, toYaml(playbook((i) => `Rule ${i}: measure before optimising`)));
    await open().readPlaybook("global");
    await settle();
    const expected = await open().readPlaybook("global");
    expect((await statRecord()).record.ascii).toBe(true);
    expect(await open().readPlaybook("global")).toEqual(expected);
    // Proof that the check is skipped: a cache file changed to hold UTF-8 now reads as Latin-1.
    const file = await cacheFile();
    await writeFile(file, (await readFile(file, "utf8")).replace("Rule 3: measure", "Rule 3: mesuré"));
    expect((await open().readPlaybook("global"))?.bullets[3]?.content).toBe("Rule 3: mesurÃ© before optimising");
  });

  it("is not recorded for a cache file with other characters, whose texts are served exactly", async () => {
    const text = (i: number) => `Règle ${i}: mesurer avant d'optimiser ✓ 測定`;
    await writeFile(home.playbookPath, toYaml(playbook(text)));
    await open().readPlaybook("global");
    await settle();
    await open().readPlaybook("global");
    expect((await statRecord()).record.ascii).toBeUndefined();
    const read = await open().readPlaybook("global");
    expect(read?.bullets.map((b) => b.content)).toEqual(Array.from({ length: 30 }, (_, i) => text(i)));
  });

  it("is added to a record written without it (a parse, or an older cm) once a read finds the file ASCII", async () => {
    await writeFile(home.playbookPath, toYaml(playbook((i) => `Rule ${i}: keep the benchmark script`)));
    await settle();
    // The first read parses the YAML (no cache file was read): the record has no flag.
    const expected = await open().readPlaybook("global");
    const before = (await statRecord()).record;
    expect(before.ascii).toBeUndefined();
    // A read through the record checks the cache file and adds the flag; later reads trust it.
    expect(await open().readPlaybook("global")).toEqual(expected);
    expect((await statRecord()).record).toEqual({ ...before, ascii: true });
    expect(await open().readPlaybook("global")).toEqual(expected);
  });
});
