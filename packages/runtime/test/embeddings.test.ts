import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { contextOperation, defaultConfig, runOperation, type Config, type Embedder } from "@cass-memory/core";
import { createMemoryLogger, createTestBullet, createTestEmbedder } from "@cass-memory/core/testing";
import {
  EMBEDDING_CACHE_VERSION,
  asEmbeddingModule,
  createEmbedderLoader,
  createEmbeddingCache,
  embeddingCachePath,
  embeddingLoaderOf,
  type EmbeddingModule,
} from "../src/embeddings.js";
import { createRuntime } from "../src/runtime.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir("cm-embeddings-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => cleanup());

const clock = { now: () => new Date("2026-03-04T05:06:07.000Z") };

function cache(globalDir = join(root, "g")) {
  const logger = createMemoryLogger();
  return { cache: createEmbeddingCache({ globalDir, clock, logger }), logger, path: embeddingCachePath(globalDir) };
}

function readJson(path: string): Record<string, unknown> {
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
}

describe("embedding cache file (embeddings/bullets.json)", () => {
  it("writes the original's layout and finds vectors by content hash", async () => {
    const { cache: c, path } = cache();
    expect(path).toBe(join(root, "g", "embeddings", "bullets.json"));
    expect(await c.get("m1", ["h1"])).toEqual(new Map());
    await c.put("m1", [
      { id: "b-1", contentHash: "h1", embedding: [0.5, 0.25] },
      { id: "b-2", contentHash: "h2", embedding: [1, 0] },
    ]);
    expect(readJson(path)).toEqual({
      version: EMBEDDING_CACHE_VERSION,
      model: "m1",
      bullets: {
        "b-1": { contentHash: "h1", embedding: [0.5, 0.25], computedAt: "2026-03-04T05:06:07.000Z" },
        "b-2": { contentHash: "h2", embedding: [1, 0], computedAt: "2026-03-04T05:06:07.000Z" },
      },
    });
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(await c.get("m1", ["h2", "h3"])).toEqual(new Map([["h2", [1, 0]]]));
    // A second process (a new cache object) reads the same file.
    expect(await cache().cache.get("m1", ["h1"])).toEqual(new Map([["h1", [0.5, 0.25]]]));
  });

  it("stores vectors with 8 significant digits", async () => {
    const { cache: c, path } = cache();
    await c.put("m1", [{ id: "b-1", contentHash: "h1", embedding: [0.123456789012345, -1e-12, 3] }]);
    expect((readJson(path).bullets as Record<string, { embedding: number[] }>)["b-1"]!.embedding).toEqual([0.12345679, -1e-12, 3]);
  });

  it("replaces an entry whose bullet changed and keeps the others", async () => {
    const { cache: c, path } = cache();
    await c.put("m1", [{ id: "b-1", contentHash: "h1", embedding: [1] }, { id: "b-2", contentHash: "h2", embedding: [2] }]);
    await c.put("m1", [{ id: "b-1", contentHash: "h1b", embedding: [3] }]);
    const bullets = readJson(path).bullets as Record<string, { contentHash: string }>;
    expect(Object.fromEntries(Object.entries(bullets).map(([id, e]) => [id, e.contentHash]))).toEqual({ "b-1": "h1b", "b-2": "h2" });
    expect(await c.get("m1", ["h1", "h1b"])).toEqual(new Map([["h1b", [3]]]));
  });

  it("ignores and then discards a cache of another model or version", async () => {
    const { cache: c, path } = cache();
    await c.put("m1", [{ id: "b-1", contentHash: "h1", embedding: [1] }]);
    expect(await c.get("m2", ["h1"])).toEqual(new Map());
    await c.put("m2", [{ id: "b-2", contentHash: "h2", embedding: [2] }]);
    expect(readJson(path)).toMatchObject({ model: "m2", bullets: { "b-2": { contentHash: "h2" } } });
    expect(Object.keys(readJson(path).bullets as object)).toEqual(["b-2"]);

    writeFile(path, JSON.stringify({ version: "0.9", model: "m2", bullets: { "b-9": { contentHash: "h9", embedding: [9], computedAt: "" } } }));
    expect(await c.get("m2", ["h9"])).toEqual(new Map());
  });

  it("reads an original-format file, skipping malformed entries", async () => {
    const { cache: c, path } = cache();
    writeFile(
      path,
      JSON.stringify({
        version: "1.0",
        model: "Xenova/all-MiniLM-L6-v2",
        bullets: {
          "b-ok": { contentHash: "aa", embedding: [0.1, 0.2], computedAt: "2025-12-01T00:00:00.000Z" },
          "b-bad": { contentHash: "bb", embedding: ["x"] },
          "b-none": null,
        },
      }),
    );
    expect(await c.get("Xenova/all-MiniLM-L6-v2", ["aa", "bb"])).toEqual(new Map([["aa", [0.1, 0.2]]]));
  });

  it("moves a file that is not a cache aside before writing a new one", async () => {
    const { cache: c, path, logger } = cache();
    writeFile(path, "{ not json");
    expect(await c.get("m1", ["h1"])).toEqual(new Map());
    await c.put("m1", [{ id: "b-1", contentHash: "h1", embedding: [1] }]);
    expect(readJson(path)).toMatchObject({ model: "m1" });
    const backups = readdirSync(join(root, "g", "embeddings")).filter((f) => f.startsWith("bullets.json.corrupt."));
    expect(backups).toHaveLength(1);
    expect(readFileSync(join(root, "g", "embeddings", backups[0]!), "utf8")).toBe("{ not json");
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("moved it to"))).toBe(true);
  });

  it("concurrent writers do not lose each other's entries (the file's lock)", async () => {
    const writers = Array.from({ length: 8 }, (_, i) => cache().cache.put("m1", [{ id: `b-${i}`, contentHash: `h${i}`, embedding: [i] }]));
    await Promise.all(writers);
    const { path } = cache();
    expect(Object.keys(readJson(path).bullets as object).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `b-${i}`).sort());
    expect(existsSync(`${path}.lock.d`)).toBe(false);
  });
});

describe("embedder loader", () => {
  const config: Config = { ...defaultConfig(), semanticSearchEnabled: true };

  it("loads the module on first use only, keeps a success and retries after a failure", async () => {
    let loads = 0;
    let fail = true;
    const embedder = createTestEmbedder();
    const module: EmbeddingModule = {
      createEmbedder: async () => {
        loads++;
        if (fail) throw new Error("not yet");
        return embedder;
      },
    };
    const load = createEmbedderLoader({ config, env: {}, logger: createMemoryLogger(), load: async () => module });
    expect(loads).toBe(0);
    await expect(load()).rejects.toThrow("not yet");
    fail = false;
    expect(await load()).toBe(embedder);
    expect(await load()).toBe(embedder);
    expect(loads).toBe(2);
  });

  it("uses the front end's loadLlm when it provides createEmbedder, and says so when it does not", async () => {
    const embedder = createTestEmbedder();
    const viaLlm = embeddingLoaderOf({ loadLlm: async () => ({ createLlmLearning: () => undefined, createEmbedder: async () => embedder }) });
    expect(await (await viaLlm.load!()).createEmbedder(config, {})).toBe(embedder);
    const old = embeddingLoaderOf({ loadLlm: async () => ({ createLlmLearning: () => undefined }) });
    await expect(old.load!()).rejects.toMatchObject({ code: "SEMANTIC_SEARCH_UNAVAILABLE" });
    expect(() => asEmbeddingModule(null)).toThrow(/cannot build embedders/);
    expect(embeddingLoaderOf({})).toEqual({});
  });

  it("the default loader builds the configured embedder from @cass-memory/llm (xenova without transformers: unavailable)", async () => {
    const load = createEmbedderLoader({ config, env: {}, logger: createMemoryLogger() });
    await expect(load()).rejects.toMatchObject({ code: "SEMANTIC_SEARCH_UNAVAILABLE", message: expect.stringContaining("@huggingface/transformers is not installed") });
  });
});

describe("createRuntime wiring", () => {
  it("gives operations a lazy embedder and the file cache; cm context runs in semantic mode", async () => {
    const home = join(root, "home");
    writeFile(join(home, ".cass-memory", "config.json"), JSON.stringify({ semanticSearchEnabled: true }));
    let loads = 0;
    const embedder: Embedder = createTestEmbedder({ model: "fake-model" });
    const rt = await createRuntime({
      env: { HOME: home },
      cwd: root,
      stderr: () => {},
      loadEmbeddings: async () => {
        loads++;
        return { createEmbedder: async () => embedder };
      },
    });
    expect(loads).toBe(0);
    await rt.deps.store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(createTestBullet({ id: "b-1", content: "Run smoke tests after every deploy" }));
    });
    const result = await runOperation(contextOperation, rt.deps, { task: "deploy the api", noHistory: true });
    expect(result.semanticMode).toBe("semantic");
    expect(loads).toBe(1);
    const file = readJson(join(home, ".cass-memory", "embeddings", "bullets.json"));
    expect(file).toMatchObject({ version: "1.0", model: "fake-model", bullets: { "b-1": { contentHash: expect.any(String) } } });
  });

  it("does not load anything when semantic search is off", async () => {
    const home = join(root, "home");
    let loads = 0;
    const rt = await createRuntime({
      env: { HOME: home },
      cwd: root,
      stderr: () => {},
      loadEmbeddings: async () => {
        loads++;
        return { createEmbedder: async () => createTestEmbedder() };
      },
    });
    const result = await runOperation(contextOperation, rt.deps, { task: "deploy the api", noHistory: true });
    expect(result.semanticMode).toBe("keyword");
    expect(loads).toBe(0);
    expect(existsSync(join(home, ".cass-memory", "embeddings", "bullets.json"))).toBe(false);
  });
});
