// Broad discovery walks: what the Aider home walk skips, the bounded walker's visiting order with
// overlapped I/O, and the discovery cache (a walk of a broad root is reused within a TTL, in one
// process and across processes through `<indexDir>/discovery.json`; damaged records are ignored).
import { existsSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { createFakeClock, type FakeClock } from "@cass-memory/core/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import type { SessionFileRef, SessionReader } from "../src/model.js";
import { DEFAULT_DISCOVERY_CACHE_TTL_MS, DISCOVERY_CACHE_NAME, isCachedWalkReader } from "../src/native/discovery-cache.js";
import { createSessionReaders, discoverSessions } from "../src/native/discovery.js";
import { createNativeSource, type NativeEpisodicSource } from "../src/native/native-source.js";
import { createAiderReader } from "../src/native/readers/aider.js";
import { walkFiles } from "../src/native/readers/util.js";
import { discoveryEnv, fakeDiscover, fakeReader, removeDir, tempDir, writeSession, type SpyReader } from "./native-source-helpers.js";

const HISTORY = ".aider.chat.history.md";
const MINUTE = 60_000;

let home: string;
let indexDir: string;
let clock: FakeClock;

beforeEach(() => {
  home = tempDir("cm-walk-cache-");
  indexDir = join(home, ".cass-memory", ".cache", "episodic");
  clock = createFakeClock("2026-03-01T12:00:00Z");
});
afterEach(() => removeDir(home));

/** An Aider history whose one user prompt contains `word`. */
function writeHistory(rel: string, word: string): string {
  const file = join(home, rel, HISTORY);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, `# aider chat started at 2026-02-20 10:00:00\n\n#### how do I fix the ${word} bug\n\nChange the handler.\n`);
  return file;
}

function touch(rel: string, content = ""): void {
  const file = join(home, rel);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, content);
}

describe("the Aider home walk", () => {
  it("does not enter dependency, cache and environment trees, by name or by marker file", async () => {
    const hidden = [
      "projects/web/node_modules/dep",
      "projects/web/bower_components/dep",
      "projects/py/venv/lib",
      "projects/py/env/lib", // a virtualenv called `env`, known by its pyvenv.cfg
      "projects/py/lib/site-packages/pkg",
      "projects/app/Pods/Alamofire",
      "go/pkg/mod/github.com/x",
      "miniconda3/pkgs/numpy", // a conda installation, known by conda-meta
      "projects/rs/cachedir/sub", // tagged with CACHEDIR.TAG
      "projects/goapp/vendor/github.com", // Go vendoring, known by vendor/modules.txt
      "projects/phpapp/vendor/acme", // Composer, known by vendor/autoload.php
      "Library/Application Support/x",
      ".config/tool",
    ];
    for (const rel of hidden) writeHistory(rel, "hidden");
    touch("projects/py/env/pyvenv.cfg", "home = /usr/bin\n");
    mkdirSync(join(home, "miniconda3/conda-meta"), { recursive: true });
    touch("projects/rs/cachedir/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n");
    touch("projects/goapp/vendor/modules.txt", "# github.com/x/y v1.0.0\n");
    touch("projects/phpapp/vendor/autoload.php", "<?php\n");

    const visible = [
      ".", // ~/.aider.chat.history.md
      "projects/web",
      "projects/py",
      "projects/goapp",
      "a/b/c/d/e", // depth 5: the deepest project folder searched
      "src/vendor", // a folder called vendor without vendoring markers
      "work/env", // a folder called env that is not a virtualenv
      "go/src/github.com/me", // a GOPATH checkout (only pkg/mod is skipped)
      "projects/py/env", // a history right inside a skipped tree's top is still seen
    ].map((rel) => writeHistory(rel, "visible"));
    writeHistory("a/b/c/d/e/f", "too-deep");

    const found = (await createAiderReader().discover(home)).map((r) => r.path).sort();
    expect(found).toEqual([...visible].sort());
  });

  it("is the one reader that declares a cached broad walk", () => {
    expect(createSessionReaders().filter(isCachedWalkReader).map((r) => r.agent)).toEqual(["aider"]);
  });
});

describe("walkFiles", () => {
  it("visits directories breadth-first in name order up to maxDirs, as a one-at-a-time walk would", async () => {
    // 40 directories on one level (more than are listed at once), each with one file.
    for (let i = 0; i < 40; i++) touch(`tree/d${String(i).padStart(2, "0")}/s.log`);
    touch("tree/d00/deeper/s.log");
    const found = await walkFiles(join(home, "tree"), { maxDepth: 3, maxDirs: 21, acceptFile: (name) => name === "s.log" });
    // The root and the first 20 directories by name are visited; d00/deeper (next level) is not.
    expect(found).toEqual(Array.from({ length: 20 }, (_, i) => join(home, "tree", `d${String(i).padStart(2, "0")}`, "s.log")));
  });

  it("does not enter the subdirectories of a directory that enterChildren rejects, but matches its files", async () => {
    touch("tree/keep/s.log");
    touch("tree/stop/s.log");
    touch("tree/stop/MARKER");
    touch("tree/stop/below/s.log");
    const found = await walkFiles(join(home, "tree"), {
      maxDepth: 5,
      acceptFile: (name) => name === "s.log",
      enterChildren: (names) => !names.has("MARKER"),
    });
    expect(found).toEqual([join(home, "tree/keep/s.log"), join(home, "tree/stop/s.log")]);
  });
});

/** A reader that declares a broad walk and counts its walks (the fake JSONL format of the helpers). */
function walkingReader(root: string, key = "spy/1"): SpyReader & { walkCacheKey: string; walks: number } {
  const base = fakeReader("aider", root);
  const walk = base.discover.bind(base);
  const reader = Object.assign(base, {
    walkCacheKey: key,
    walks: 0,
    async discover(dir: string): Promise<SessionFileRef[]> {
      reader.walks += 1;
      return walk(dir);
    },
  });
  return reader;
}

function spySource(readers: SessionReader[], opts: { dir?: string | null; ttl?: number } = {}): NativeEpisodicSource {
  return createNativeSource({
    readers,
    discover: fakeDiscover,
    discoveryEnv: discoveryEnv(home),
    indexDir: opts.dir === undefined ? indexDir : opts.dir,
    clock,
    ...(opts.ttl !== undefined ? { discoveryCacheTtlMs: opts.ttl } : {}),
  });
}

async function paths(src: NativeEpisodicSource, query: string): Promise<string[]> {
  const result = await src.search(query, { limit: 50 });
  expect(result.degraded).toBeUndefined();
  return [...new Set(result.hits.map((h) => h.source_path))].sort();
}

describe("discovery cache over the real readers", () => {
  function realSource(): NativeEpisodicSource {
    return createNativeSource({ readers: createSessionReaders(), discover: discoverSessions, discoveryEnv: discoveryEnv(home), indexDir, clock });
  }

  it("finds a history in a new place only after the TTL, while changes to known files show at once", async () => {
    const first = writeHistory("projects/one", "zebrafish");
    const src = realSource();
    expect(await paths(src, "zebrafish")).toEqual([first]);

    // Within the TTL: a new project's history is not found yet…
    const second = writeHistory("projects/two", "zebrafish");
    clock.advance(5 * MINUTE);
    expect(await paths(src, "zebrafish")).toEqual([first]);
    // …but a known history that changed is re-read at once.
    writeFileSync(first, `${readFileSync(first, "utf8")}\n#### and the narwhal bug\n\nSame fix.\n`);
    utimesSync(first, new Date(Date.now() + 5000), new Date(Date.now() + 5000));
    expect(await paths(src, "narwhal")).toEqual([first]);
    // Another process within the TTL reuses the persisted walk.
    expect(await paths(realSource(), "zebrafish")).toEqual([first]);

    clock.advance(DEFAULT_DISCOVERY_CACHE_TTL_MS);
    expect(await paths(src, "zebrafish")).toEqual([first, second].sort());
  });

  it("forgets a known history that was deleted at once", async () => {
    const first = writeHistory("projects/one", "zebrafish");
    const second = writeHistory("projects/two", "zebrafish");
    const src = realSource();
    expect(await paths(src, "zebrafish")).toEqual([first, second].sort());
    rmSync(second);
    expect(await paths(src, "zebrafish")).toEqual([first]);
  });
});

describe("discovery cache", () => {
  let root: string;
  beforeEach(() => {
    root = join(home, "sessions");
    writeSession(join(root, "a.jsonl"), { messages: [{ role: "user", content: "the walrus migration failed" }] });
  });

  const addLater = (): void =>
    writeSession(join(root, "b.jsonl"), { messages: [{ role: "user", content: "the walrus migration again" }] });

  it("walks once per TTL in one process, for searches, listings and health alike", async () => {
    const reader = walkingReader(root);
    const src = spySource([reader]);
    expect(await paths(src, "walrus")).toEqual([join(root, "a.jsonl")]);
    await src.search("walrus", { limit: 5 });
    await src.listSessions({});
    await src.health();
    expect(reader.walks).toBe(1);

    clock.advance(DEFAULT_DISCOVERY_CACHE_TTL_MS - 1);
    await src.search("walrus", { limit: 5 });
    expect(reader.walks).toBe(1);
    clock.advance(1);
    await src.search("walrus", { limit: 5 });
    expect(reader.walks).toBe(2);
  });

  it("writes nothing before the history index exists (a health check), saving the walk once it does", async () => {
    const reader = walkingReader(root);
    const src = spySource([reader]);
    expect((await src.health()).sessions).toBeGreaterThan(0);
    expect(reader.walks).toBe(1);
    expect(existsSync(join(home, ".cass-memory"))).toBe(false);

    // A search brings the index up to date (creating its directory) and saves the remembered walk.
    expect(await paths(src, "walrus")).toEqual([join(root, "a.jsonl")]);
    expect(reader.walks).toBe(1);
    expect(JSON.parse(readFileSync(join(indexDir, DISCOVERY_CACHE_NAME), "utf8"))).toMatchObject({
      walks: [{ reader: "spy/1", root, paths: [join(root, "a.jsonl")] }],
    });
  });

  it("shares one walk between concurrent searches", async () => {
    const reader = walkingReader(root);
    const src = spySource([reader]);
    const results = await Promise.all([1, 2, 3].map(() => src.search("walrus", { limit: 5 })));
    expect(results.map((r) => r.hits.length)).toEqual([1, 1, 1]);
    expect(reader.walks).toBe(1);
  });

  it("leaves readers without a walk key uncached", async () => {
    const plain = fakeReader("claude_code", root);
    const src = spySource([plain]);
    expect(await paths(src, "walrus")).toEqual([join(root, "a.jsonl")]);
    addLater();
    expect(await paths(src, "walrus")).toEqual([join(root, "a.jsonl"), join(root, "b.jsonl")]);
  });

  it("reuses a walk persisted by another process until the TTL, then walks again", async () => {
    await spySource([walkingReader(root)]).search("walrus", { limit: 5 });
    expect(JSON.parse(readFileSync(join(indexDir, DISCOVERY_CACHE_NAME), "utf8"))).toMatchObject({
      walks: [{ reader: "spy/1", root, paths: [join(root, "a.jsonl")] }],
    });
    addLater();

    const later = walkingReader(root);
    clock.advance(3 * MINUTE);
    expect(await paths(spySource([later]), "walrus")).toEqual([join(root, "a.jsonl")]);
    expect(later.walks).toBe(0);

    clock.advance(DEFAULT_DISCOVERY_CACHE_TTL_MS);
    const after = walkingReader(root);
    expect(await paths(spySource([after]), "walrus")).toEqual([join(root, "a.jsonl"), join(root, "b.jsonl")]);
    expect(after.walks).toBe(1);
  });

  it("ignores a persisted walk made under other walk rules", async () => {
    await spySource([walkingReader(root, "spy/1")]).search("walrus", { limit: 5 });
    addLater();
    const changed = walkingReader(root, "spy/2");
    expect(await paths(spySource([changed]), "walrus")).toEqual([join(root, "a.jsonl"), join(root, "b.jsonl")]);
    expect(changed.walks).toBe(1);
  });

  it("walks on every call with a TTL of 0, and on reindex whatever the TTL", async () => {
    const reader = walkingReader(root);
    const src = spySource([reader], { ttl: 0 });
    await src.search("walrus", { limit: 5 });
    await src.search("walrus", { limit: 5 });
    expect(reader.walks).toBe(2);

    const other = walkingReader(root);
    const cached = spySource([other]);
    await cached.search("walrus", { limit: 5 });
    addLater();
    expect(await cached.reindex()).toMatchObject({ sessions: 2 });
    expect(other.walks).toBe(2);
    // The reindex's walk is remembered: the new file is found and no further walk runs.
    expect(await paths(cached, "walrus")).toEqual([join(root, "a.jsonl"), join(root, "b.jsonl")]);
    expect(other.walks).toBe(2);
  });

  it("caches in memory when the index has no directory", async () => {
    const reader = walkingReader(root);
    const src = spySource([reader], { dir: null });
    await src.search("walrus", { limit: 5 });
    await src.search("walrus", { limit: 5 });
    expect(reader.walks).toBe(1);
  });

  const damaged: Array<[string, (file: string) => void]> = [
    ["not JSON", (file) => writeFileSync(file, "{\"format\": \"cass-memory-episodic-disc")],
    ["JSON of another shape", (file) => writeFileSync(file, JSON.stringify([1, 2, 3]))],
    ["another format version", (file) => rewrite(file, (doc) => ({ ...doc, version: 99 }))],
    ["a record whose paths are not a list", (file) => rewrite(file, (doc) => ({ ...doc, walks: [{ ...doc.walks[0], paths: 7 }] }))],
    ["a record whose walk time is a string", (file) => rewrite(file, (doc) => ({ ...doc, walks: [{ ...doc.walks[0], walkedAt: String(doc.walks[0].walkedAt) }] }))],
    ["a record with relative paths", (file) => rewrite(file, (doc) => ({ ...doc, walks: [{ ...doc.walks[0], paths: ["a.jsonl"] }] }))],
    ["a walk time in the future", (file) => rewrite(file, (doc) => ({ ...doc, walks: [{ ...doc.walks[0], walkedAt: doc.walks[0].walkedAt + 3_600_000 }] }))],
    ["a directory in its place", (file) => {
      rmSync(file);
      mkdirSync(file);
    }],
  ];

  function rewrite(file: string, fn: (doc: { version: number; walks: [{ walkedAt: number }] }) => unknown): void {
    writeFileSync(file, JSON.stringify(fn(JSON.parse(readFileSync(file, "utf8")))));
  }

  for (const [what, damage] of damaged) {
    it(`ignores a persisted record that is ${what}, walking again without breaking the search`, async () => {
      await spySource([walkingReader(root)]).search("walrus", { limit: 5 });
      const file = join(indexDir, DISCOVERY_CACHE_NAME);
      damage(file);
      addLater();

      const reader = walkingReader(root);
      const src = spySource([reader]);
      expect(await paths(src, "walrus")).toEqual([join(root, "a.jsonl"), join(root, "b.jsonl")]);
      expect(reader.walks).toBe(1);
      // The new walk is still remembered (in memory at least).
      await src.search("walrus", { limit: 5 });
      expect(reader.walks).toBe(1);
    });
  }

  it("drops a remembered file that no longer exists without failing", async () => {
    writeSession(join(root, "b.jsonl"), { messages: [{ role: "user", content: "the walrus migration again" }] });
    await spySource([walkingReader(root)]).search("walrus", { limit: 5 });
    rmSync(join(root, "b.jsonl"));
    const reader = walkingReader(root);
    expect(await paths(spySource([reader]), "walrus")).toEqual([join(root, "a.jsonl")]);
    expect(reader.walks).toBe(0);
  });
});
