import { createTestBullet } from "@cass-memory/core/testing";
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createYamlStore, toYaml } from "../src/index.js";
import { tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let cacheDir = "";
let playbookPath = "";
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-cache-"));
  globalDir = join(dir, ".cass-memory");
  cacheDir = join(globalDir, ".cache");
  playbookPath = join(globalDir, "playbook.yaml");
  await mkdir(globalDir, { recursive: true });
});
afterEach(async () => {
  await cleanup();
});

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
  return createYamlStore({ globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });
}

describe("parse cache", () => {
  it("writes one cache file per playbook, keyed by content, and serves hits without parsing", async () => {
    await writeFile(playbookPath, toYaml(bigPlaybook(50)));
    const first = await open().readPlaybook("global");
    const files = await readdir(cacheDir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^playbook-[0-9a-f]{16}\.v1\.[0-9a-f]{64}\.json$/);
    // Poison the cached copy: a hit must return it (proving no YAML parse happened).
    const cacheFile = join(cacheDir, files[0] ?? "");
    const record = JSON.parse(await readFile(cacheFile, "utf8")) as { playbook: { description: string } };
    expect(record.playbook).toEqual(first);
    record.playbook.description = "served from cache";
    await writeFile(cacheFile, JSON.stringify(record));
    expect((await open().readPlaybook("global"))?.description).toBe("served from cache");
  });

  it("misses when the file changes and replaces the old cache file", async () => {
    await writeFile(playbookPath, toYaml(bigPlaybook(50)));
    await open().readPlaybook("global");
    const oldFiles = await readdir(cacheDir);
    await writeFile(playbookPath, toYaml(bigPlaybook(51)));
    expect((await open().readPlaybook("global"))?.bullets).toHaveLength(51);
    const newFiles = await readdir(cacheDir);
    expect(newFiles).toHaveLength(1);
    expect(newFiles).not.toEqual(oldFiles);
  });

  it("is primed by a mutation so the next read hits", async () => {
    await writeFile(playbookPath, toYaml(bigPlaybook(50)));
    await open().mutatePlaybook("global", (pb) => void (pb.description = "mutated"));
    const files = await readdir(cacheDir);
    expect(files).toHaveLength(1);
    const record = JSON.parse(await readFile(join(cacheDir, files[0] ?? ""), "utf8")) as { playbook: { description: string } };
    expect(record.playbook.description).toBe("mutated");
  });

  it("ignores a damaged cache file and never fails the command when the cache cannot be written", async () => {
    await writeFile(playbookPath, toYaml(bigPlaybook(50)));
    await open().readPlaybook("global");
    const [name] = await readdir(cacheDir);
    await writeFile(join(cacheDir, name ?? ""), "{ not json");
    expect((await open().readPlaybook("global"))?.bullets).toHaveLength(50);
    // .cache is a file: the cache cannot be used at all
    const other = join(dir, "other");
    await mkdir(other);
    await writeFile(join(other, ".cache"), "not a directory");
    await writeFile(join(other, "playbook.yaml"), toYaml(bigPlaybook(50)));
    const s = createYamlStore({ globalDir: other, repoDir: null, logger: testLogger(), parseCache: { minBytes: 1024 } });
    expect((await s.readPlaybook("global"))?.bullets).toHaveLength(50);
  });

  it("does not cache small files or corrupt files", async () => {
    await writeFile(playbookPath, toYaml(bigPlaybook(1)));
    await createYamlStore({ globalDir, repoDir: null, logger: testLogger() }).readPlaybook("global");
    await writeFile(playbookPath, toYaml(bigPlaybook(50)) + "bullets: [duplicate key\n");
    await expect(open().readPlaybook("global")).rejects.toMatchObject({ code: "PLAYBOOK_CORRUPT" });
    await expect(readdir(cacheDir)).rejects.toMatchObject({ code: "ENOENT" });
  });
});
