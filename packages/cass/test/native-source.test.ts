import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { buildCassQuery, extractKeywords } from "@cass-memory/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import type { SessionReader } from "../src/model.js";
import { createSessionReaders, discoverSessions } from "../src/native/discovery.js";
import { MANIFEST_NAME } from "../src/native/index-store.js";
import { createNativeSource, type NativeEpisodicSource } from "../src/native/native-source.js";
import {
  discoveryEnv,
  fakeDiscover,
  fakeReader,
  removeDir,
  tempDir,
  writeSession,
} from "./native-source-helpers.js";

const DAY = 86_400_000;
const NOW = Date.parse("2026-03-01T12:00:00Z");
const clock = { now: () => new Date(NOW) };

let home: string;
let claudeRoot: string;
let codexRoot: string;
let indexDir: string;

beforeEach(() => {
  home = tempDir("cm-native-");
  claudeRoot = join(home, "claude");
  codexRoot = join(home, "codex");
  indexDir = join(home, "index");
});
afterEach(() => removeDir(home));

function source(readers: SessionReader[], dir: string | null = indexDir): NativeEpisodicSource {
  return createNativeSource({ readers, discover: fakeDiscover, discoveryEnv: discoveryEnv(home), indexDir: dir, clock });
}

/** The corpus most tests search: four Claude sessions and one Codex session. */
function writeCorpus() {
  const files = {
    react: join(claudeRoot, "react.jsonl"),
    db: join(claudeRoot, "db.jsonl"),
    auth: join(claudeRoot, "auth.jsonl"),
    chatter: join(claudeRoot, "chatter.jsonl"),
    codex: join(codexRoot, "2026/02/rollout-1.jsonl"),
  };
  const t = NOW - 2 * DAY;
  writeSession(files.react, {
    workspace: "/w/web",
    title: "Hook cleanup",
    messages: [
      { role: "user", content: "The component leaks subscriptions", ts: t },
      { role: "assistant", content: "Return a cleanup function from useEffect so the subscription is removed on unmount.", ts: t + 1000 },
    ],
  });
  writeSession(files.db, {
    workspace: "/w/api",
    title: "Migration",
    messages: [
      { role: "user", content: "Add the user_id column to the orders table in the migration", ts: t },
      { role: "assistant", content: "I added orders.user_id with an index and backfilled it.", ts: t + 1000 },
    ],
  });
  writeSession(files.auth, {
    workspace: "/w/api/auth",
    title: "401 after refresh",
    messages: [
      { role: "user", content: "Users get an error after the access token expires", ts: t },
      { role: "assistant", content: "The refresh token rotation failed: tokens were refreshed twice. Fixed the auth interceptor.", ts: t + 1000 },
      { role: "user", content: "Great, that error is gone", ts: t + 2000 },
    ],
  });
  writeSession(files.chatter, {
    workspace: "/w/web",
    title: "Chatter",
    messages: [
      { role: "user", content: "It is what it is and that is that, and the error was there and then it was not there.", ts: t },
      { role: "assistant", content: "There was an error, and then there was an error again, and the error went away.", ts: t + 1000 },
    ],
  });
  writeSession(files.codex, {
    workspace: "/w/cli",
    title: "Codex run",
    messages: [{ role: "user", content: "Port the effect system to snake_case config keys", ts: t }],
  });
  return files;
}

describe("native source: ranking", () => {
  it("ranks by BM25 with identifier splitting, stemming and stop words", async () => {
    const files = writeCorpus();
    const src = source([fakeReader("claude_code", claudeRoot), fakeReader("codex", codexRoot)]);

    // Core's keyword pipeline lower-cases "useEffect": the whole-word token still matches.
    const query = buildCassQuery(extractKeywords("why does my useEffect cleanup not run"));
    expect(query).toContain("useeffect");
    const react = await src.search(query, { limit: 5 });
    expect(react.degraded).toBeUndefined();
    expect(react.hits[0]?.source_path).toBe(files.react);
    expect(react.hits[0]?.line_number).toBe(3);

    // A camelCase part matches too ("effect" is inside useEffect), stems join "refreshed"/"refresh".
    const effect = await src.search("effect", { limit: 5 });
    expect(effect.hits.map((h) => h.source_path).sort()).toEqual([files.codex, files.react].sort());
    const refresh = await src.search("refreshing OR tokens", { limit: 5 });
    expect(refresh.hits[0]?.source_path).toBe(files.auth);
    expect(refresh.hits[0]?.line_number).toBe(3);

    // snake_case: the whole identifier and its parts.
    const snake = await src.search("user_id", { limit: 5 });
    expect(snake.hits[0]?.source_path).toBe(files.db);

    // A rare term outweighs a common one repeated many times (idf and tf saturation).
    const mixed = await src.search("error OR interceptor", { limit: 10 });
    expect(mixed.hits[0]?.source_path).toBe(files.auth);
    expect(mixed.hits[0]?.snippet).toContain("interceptor");

    // Stop words alone are no query; an unknown word finds nothing.
    expect((await src.search("the OR and OR is", { limit: 5 })).hits).toEqual([]);
    expect((await src.search("kubernetes", { limit: 5 })).hits).toEqual([]);

    // Exclusion and wildcards.
    const all = await src.search("interceptor OR error", { limit: 10 });
    expect(all.hits.some((h) => h.snippet.includes("rotation"))).toBe(true);
    for (const q of ["interceptor OR error NOT rotation", "interceptor OR error -rotation"]) {
      const without = await src.search(q, { limit: 10 });
      expect(without.hits).toHaveLength(all.hits.length - 1);
      expect(without.hits.some((h) => h.snippet.includes("rotation"))).toBe(false);
    }
    const prefix = await src.search("migr*", { limit: 5 });
    expect(prefix.hits[0]?.source_path).toBe(files.db);
  });

  it("returns hits shaped like cass's", async () => {
    const files = writeCorpus();
    const src = source([fakeReader("claude_code", claudeRoot), fakeReader("codex", codexRoot)]);
    const { hits } = await src.search("interceptor", { limit: 1 });
    expect(hits).toHaveLength(1);
    const hit = hits[0]!;
    expect(hit).toMatchObject({
      source_path: files.auth,
      line_number: 3,
      agent: "claude_code",
      workspace: "/w/api/auth",
      title: "401 after refresh",
      created_at: NOW - 2 * DAY + 1000,
      origin: { kind: "local" },
    });
    expect(hit.snippet).toBe("The refresh token rotation failed: tokens were refreshed twice. Fixed the auth interceptor.");
    expect(hit.score).toBeGreaterThan(0);
  });

  it("cuts long messages to a window around the best matches, keeping newlines", async () => {
    const filler = "lorem ipsum dolor sit amet ".repeat(60);
    const body = `${filler}\nThe flaky test in checkout.spec.ts fails because the mock clock\nis never restored.\n${filler}`;
    const file = join(claudeRoot, "long.jsonl");
    writeSession(file, { messages: [{ role: "assistant", content: body, ts: NOW }] });
    const src = source([fakeReader("claude_code", claudeRoot)]);
    const { hits } = await src.search("flaky OR clock OR restored", { limit: 1 });
    const snippet = hits[0]!.snippet;
    expect(snippet.length).toBeLessThanOrEqual(402);
    expect(snippet.startsWith("…")).toBe(true);
    expect(snippet.endsWith("…")).toBe(true);
    expect(snippet).toContain("flaky test in checkout.spec.ts fails because the mock clock\nis never restored.");
  });
});

describe("native source: filters and limit", () => {
  it("filters by days (message time), agent and workspace prefix", async () => {
    const recent = join(claudeRoot, "recent.jsonl");
    const old = join(claudeRoot, "old.jsonl");
    const codex = join(codexRoot, "c.jsonl");
    const sibling = join(claudeRoot, "sibling.jsonl");
    writeSession(recent, { workspace: "/w/proj/sub", messages: [{ role: "user", content: "deploy pipeline broke", ts: NOW - 1 * DAY }] });
    writeSession(old, { workspace: "/w/proj", messages: [{ role: "user", content: "deploy pipeline broke again", ts: NOW - 30 * DAY }] });
    writeSession(codex, { workspace: "/w/proj", messages: [{ role: "user", content: "deploy pipeline fixed", ts: NOW - 2 * DAY }] });
    writeSession(sibling, { workspace: "/w/project2", messages: [{ role: "user", content: "deploy pipeline elsewhere", ts: NOW - 1 * DAY }] });
    const src = source([fakeReader("claude_code", claudeRoot), fakeReader("codex", codexRoot)]);
    const paths = async (opts: Parameters<NativeEpisodicSource["search"]>[1]): Promise<string[]> =>
      (await src.search("deploy pipeline", opts)).hits.map((h) => h.source_path).sort();

    expect(await paths({ limit: 10 })).toEqual([codex, old, recent, sibling].sort());
    expect(await paths({ limit: 10, days: 7 })).toEqual([codex, recent, sibling].sort());
    expect(await paths({ limit: 10, agents: ["codex"] })).toEqual([codex]);
    expect(await paths({ limit: 10, agents: ["claude-code"] })).toEqual([old, recent, sibling].sort());
    expect(await paths({ limit: 10, workspace: "/w/proj" })).toEqual([codex, old, recent].sort());
    expect(await paths({ limit: 10, workspace: "/w/proj/" , days: 7, agents: ["claude_code"] })).toEqual([recent]);

    const sessions = await src.listSessions({ days: 7, workspace: "/w/proj" });
    expect(sessions.map((s) => s.path)).toEqual([recent, codex]);
    expect(sessions[0]).toMatchObject({ agent: "claude_code", workspace: "/w/proj/sub", messageCount: 1, startTime: new Date(NOW - DAY).toISOString() });
    expect((await src.listSessions({ agents: ["codex"] })).map((s) => s.path)).toEqual([codex]);
  });

  it("bounds the number of hits", async () => {
    for (let i = 0; i < 15; i++) {
      writeSession(join(claudeRoot, `s${String(i).padStart(2, "0")}.jsonl`), { messages: [{ role: "user", content: `retry budget exhausted ${i}`, ts: NOW - i * 1000 }] });
    }
    const src = source([fakeReader("claude_code", claudeRoot)]);
    expect((await src.search("retry budget", { limit: 3 })).hits).toHaveLength(3);
    expect((await src.search("retry budget", { limit: 0 })).hits).toHaveLength(10);
    expect((await src.search("retry budget", { limit: Number.NaN })).hits).toHaveLength(10);
    expect((await src.search("retry budget", { limit: 1e9 })).hits).toHaveLength(15);
    // Equal scores: newest first.
    expect((await src.search("retry budget", { limit: 1 })).hits[0]?.source_path).toBe(join(claudeRoot, "s00.jsonl"));
  });
});

describe("native source: large posting lists", () => {
  it("indexes thousands of messages of one session and finds each of them", async () => {
    const messages = Array.from({ length: 3000 }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `common marker number${i}`, ts: NOW - i * 1000 }));
    const file = join(claudeRoot, "big.jsonl");
    writeSession(file, { messages });
    const reader = fakeReader("claude_code", claudeRoot);
    const src = source([reader]);
    const all = await src.search("common", { limit: 5000 });
    expect(all.hits).toHaveLength(1000);
    expect(new Set(all.hits.map((h) => h.line_number)).size).toBe(1000);
    for (const i of [0, 1, 777, 2999]) {
      const { hits } = await src.search(`number${i}`, { limit: 5 });
      expect(hits.map((h) => [h.line_number, h.snippet])).toEqual([[i + 2, `common marker number${i}`]]);
    }
    // Reopened from disk by another instance: same answers.
    const again = source([fakeReader("claude_code", claudeRoot)]);
    expect((await again.search("number2999", { limit: 5 })).hits[0]?.line_number).toBe(3001);
  });
});

describe("native source: persistent index", () => {
  it("does not re-read unchanged files, re-reads changed ones and drops deleted ones", async () => {
    const files = writeCorpus();
    const claude = fakeReader("claude_code", claudeRoot);
    const codex = fakeReader("codex", codexRoot);
    const src = source([claude, codex]);
    await src.search("error", { limit: 5 });
    expect(claude.reads).toHaveLength(4);
    expect(codex.reads).toHaveLength(1);

    // Same instance and a new instance (a new process) both reuse the index.
    await src.search("migration", { limit: 5 });
    await src.listSessions({});
    const claude2 = fakeReader("claude_code", claudeRoot);
    const codex2 = fakeReader("codex", codexRoot);
    const fresh = source([claude2, codex2]);
    expect((await fresh.search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
    expect(claude.reads).toHaveLength(4);
    expect(claude2.reads).toHaveLength(0);
    expect(codex2.reads).toHaveLength(0);

    // A changed file is read again (alone) and its new text is found; its old text is not.
    writeSession(files.db, { workspace: "/w/api", messages: [{ role: "user", content: "Switch the orders table to partitioning", ts: NOW }] }, NOW);
    const partition = await fresh.search("partitioning", { limit: 5 });
    expect(partition.hits.map((h) => h.source_path)).toEqual([files.db]);
    expect(claude2.reads).toEqual([files.db]);
    expect((await fresh.search("backfilled", { limit: 5 })).hits).toEqual([]);

    // A deleted file disappears without any read.
    rmSync(files.auth);
    const afterDelete = await fresh.search("interceptor OR partitioning", { limit: 5 });
    expect(afterDelete.hits.map((h) => h.source_path)).toEqual([files.db]);
    expect(claude2.reads).toEqual([files.db]);

    // A new file is picked up.
    const added = join(claudeRoot, "added.jsonl");
    writeSession(added, { messages: [{ role: "user", content: "interceptor rewrite", ts: NOW }] });
    expect((await fresh.search("interceptor", { limit: 5 })).hits.map((h) => h.source_path)).toEqual([added]);
    expect(claude2.reads).toEqual([files.db, added]);
  });

  it("gives the same answers after many incremental updates as a fresh build", async () => {
    const files: string[] = [];
    for (let i = 0; i < 12; i++) {
      const file = join(claudeRoot, `s${i}.jsonl`);
      files.push(file);
      writeSession(file, { workspace: `/w/p${i % 3}`, messages: [{ role: "user", content: `cache invalidation topic ${i} alpha`, ts: NOW - i * DAY }] });
    }
    const reader = fakeReader("claude_code", claudeRoot);
    const src = source([reader]);
    await src.search("cache", { limit: 50 });
    // Change files one by one: first into the delta, later enough to compact the base.
    for (let round = 0; round < 8; round++) {
      const i = (round * 5) % 12;
      writeSession(files[i]!, { workspace: `/w/p${i % 3}`, messages: [{ role: "user", content: `cache invalidation round ${round} beta`, ts: NOW - round * 1000 }] }, NOW - round * 1000);
      await src.search("cache", { limit: 50 });
    }
    rmSync(files[11]!);
    const queries = ["cache", "alpha", "beta", "round OR topic", "invalidation"];
    const incremental = [];
    for (const q of queries) incremental.push(await src.search(q, { limit: 50, workspace: "/w/p1" }), await src.search(q, { limit: 50 }));
    const rebuilt = source([fakeReader("claude_code", claudeRoot)], join(home, "index2"));
    const fromScratch = [];
    for (const q of queries) fromScratch.push(await rebuilt.search(q, { limit: 50, workspace: "/w/p1" }), await rebuilt.search(q, { limit: 50 }));
    expect(incremental).toEqual(fromScratch);
    expect(incremental[0]!.hits.length).toBe(4);
    expect(incremental[1]!.hits.length).toBe(11);
    expect(JSON.parse(readFileSync(join(indexDir, MANIFEST_NAME), "utf8")).segments.length).toBeLessThanOrEqual(2);
  });

  it("rebuilds a corrupt or foreign index instead of failing", async () => {
    const files = writeCorpus();
    const reader = fakeReader("claude_code", claudeRoot);
    const src = source([reader]);
    await src.search("migration", { limit: 5 });
    expect(reader.reads).toHaveLength(4);

    writeFileSync(join(indexDir, MANIFEST_NAME), "{ not json");
    const a = fakeReader("claude_code", claudeRoot);
    expect((await source([a]).search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
    expect(a.reads).toHaveLength(4);
    expect(JSON.parse(readFileSync(join(indexDir, MANIFEST_NAME), "utf8")).segments.length).toBeGreaterThan(0);

    // A truncated segment.
    for (const name of readdirSync(indexDir).filter((n) => n.endsWith(".bin"))) {
      truncateSync(join(indexDir, name), Math.floor(statSync(join(indexDir, name)).size / 2));
    }
    const b = fakeReader("claude_code", claudeRoot);
    expect((await source([b]).search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
    expect(b.reads).toHaveLength(4);

    // A manifest of another version.
    const manifest = JSON.parse(readFileSync(join(indexDir, MANIFEST_NAME), "utf8"));
    writeFileSync(join(indexDir, MANIFEST_NAME), JSON.stringify({ ...manifest, version: 999 }));
    const c = fakeReader("claude_code", claudeRoot);
    expect((await source([c]).search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
    expect(c.reads).toHaveLength(4);

    // Garbage in place of a segment with a valid-looking manifest.
    for (const name of readdirSync(indexDir).filter((n) => n.endsWith(".bin"))) writeFileSync(join(indexDir, name), "x".repeat(100));
    const d = fakeReader("claude_code", claudeRoot);
    expect((await source([d]).search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
    expect(d.reads).toHaveLength(4);
  });

  it("survives two builders at once in one process", async () => {
    const files = writeCorpus();
    const [r1, r2] = [fakeReader("claude_code", claudeRoot, { delayMs: 5 }), fakeReader("claude_code", claudeRoot, { delayMs: 7 })];
    const [x, y] = await Promise.all([source([r1]).search("migration", { limit: 5 }), source([r2]).search("interceptor", { limit: 5 })]);
    expect(x.hits[0]?.source_path).toBe(files.db);
    expect(y.hits[0]?.source_path).toBe(files.auth);
    const check = fakeReader("claude_code", claudeRoot);
    expect((await source([check]).search("useeffect", { limit: 5 })).hits[0]?.source_path).toBe(files.react);
    expect(check.reads).toEqual([]);
  });

  it("survives two builder processes at once", async () => {
    const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));
    expect(existsSync(dist), "build @cass-memory/cass first (pnpm build)").toBe(true);
    const files = writeCorpus();
    for (let i = 0; i < 40; i++) {
      writeSession(join(claudeRoot, `bulk${i}.jsonl`), { messages: [{ role: "user", content: `bulk session ${i} about sharding`, ts: NOW - i * 1000 }] });
    }
    const script = join(home, "build.mjs");
    writeFileSync(
      script,
      `import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
const { createNativeSource } = await import(${JSON.stringify(new URL("../dist/index.js", import.meta.url).href)});
const root = ${JSON.stringify(claudeRoot)};
const reader = {
  agent: "claude_code",
  defaultRoots: () => [root],
  async discover(dir) {
    return readdirSync(dir).filter((n) => n.endsWith(".jsonl")).map((n) => {
      const p = join(dir, n); const s = statSync(p);
      return { agent: "claude_code", path: p, mtimeMs: s.mtimeMs, size: s.size };
    });
  },
  async read(ref) {
    const lines = readFileSync(ref.path, "utf8").split("\\n");
    const messages = [];
    lines.forEach((line, i) => {
      try { const r = JSON.parse(line); if (!r.meta) messages.push({ idx: messages.length, role: r.role, author: null, createdAt: r.ts ?? null, content: r.content, lineNumber: i + 1 }); } catch {}
    });
    await new Promise((r) => setTimeout(r, 2));
    return [{ agent: "claude_code", externalId: null, title: null, workspace: null, sourcePath: ref.path, startedAt: null, endedAt: null, messages }];
  },
};
const discover = async (readers, ctx) => { const out = []; for (const r of readers) for (const root of r.defaultRoots(ctx)) for (const ref of await r.discover(root)) out.push({ reader: r, ref }); return out; };
const src = createNativeSource({ readers: [reader], discover, discoveryEnv: { home: ${JSON.stringify(home)}, env: {}, platform: "linux" }, indexDir: ${JSON.stringify(indexDir)} });
const res = await src.search(process.argv[2], { limit: 5 });
process.stdout.write(JSON.stringify(res.hits.map((h) => h.source_path)));
`,
    );
    const run = (query: string): Promise<{ code: number | null; out: string; err: string }> =>
      new Promise((resolvePromise) => {
        const child = spawn(process.execPath, [script, query], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (d) => (out += d));
        child.stderr.on("data", (d) => (err += d));
        child.on("close", (code) => resolvePromise({ code, out, err }));
      });
    const [p, q] = await Promise.all([run("migration"), run("interceptor")]);
    expect(p.err).toBe("");
    expect(q.err).toBe("");
    expect(JSON.parse(p.out)[0]).toBe(files.db);
    expect(JSON.parse(q.out)[0]).toBe(files.auth);
    // Whichever process won, the index is complete and valid: nothing needs reading.
    const check = fakeReader("claude_code", claudeRoot);
    const hits = (await source([check]).search("sharding", { limit: 100 })).hits;
    expect(hits).toHaveLength(40);
    expect(check.reads).toEqual([]);
  });

  it("indexes what it can within the time budget and finishes on later calls", async () => {
    for (let i = 0; i < 30; i++) {
      writeSession(join(claudeRoot, `s${i}.jsonl`), { messages: [{ role: "user", content: `quota exceeded ${i}`, ts: NOW - i * DAY }] }, NOW - i * DAY);
    }
    const reader = fakeReader("claude_code", claudeRoot, { delayMs: 15 });
    const src = source([reader]);
    const first = await src.search("quota", { limit: 100, timeoutMs: 100 });
    expect(first.degraded?.reason).toBe("TIMEOUT");
    expect(first.hits.length).toBeGreaterThan(0);
    expect(first.hits.length).toBeLessThan(30);
    // Newest sessions are indexed first.
    expect(first.hits.map((h) => h.source_path)).toContain(join(claudeRoot, "s0.jsonl"));
    const done = await src.search("quota", { limit: 100 });
    expect(done.degraded).toBeUndefined();
    expect(done.hits).toHaveLength(30);
    expect(reader.reads).toHaveLength(30);
  });

  it("works without an index directory, and when the directory cannot be created", async () => {
    const files = writeCorpus();
    // The fallback directories go to the OS temporary directory: keep them inside this test's home.
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = home;
    try {
      expect((await source([fakeReader("claude_code", claudeRoot)], null).search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
      const blocker = join(home, "file");
      writeFileSync(blocker, "");
      const src = source([fakeReader("claude_code", claudeRoot)], join(blocker, "index"));
      expect((await src.search("migration", { limit: 5 })).hits[0]?.source_path).toBe(files.db);
      expect(readdirSync(home).filter((n) => n.startsWith("cm-episodic-"))).toHaveLength(2);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
  });
});

describe("native source: health, export, expand", () => {
  it("reports no session files as unavailable, with the locations searched", async () => {
    const src = source([fakeReader("claude_code", claudeRoot), fakeReader("codex", codexRoot)]);
    const health = await src.health();
    expect(health.available).toBe(false);
    expect(health.name).toBe("native");
    expect(health.degraded?.reason).toBe("NOT_FOUND");
    expect(health.degraded?.message).toMatch(/No agent session files found/);
    expect(health.degraded?.suggestedFix).toEqual(expect.arrayContaining([`searched: ${claudeRoot}`, `searched: ${codexRoot}`]));
    // Searching simply finds nothing.
    expect(await src.search("anything", { limit: 5 })).toEqual({ hits: [] });
    expect(await src.listSessions({})).toEqual([]);

    writeCorpus();
    const ok = await src.health();
    expect(ok).toMatchObject({ available: true, name: "native", sessions: 5, agents: { claude_code: 4, codex: 1 } });
    expect(ok.degraded).toBeUndefined();
  });

  it("exports a conversation as markdown, text and json, and expands around a line", async () => {
    const files = writeCorpus();
    const src = source([fakeReader("claude_code", claudeRoot)]);
    const md = await src.export(files.auth, "markdown");
    expect(md).toContain("# 401 after refresh");
    expect(md).toContain(`*Started: ${new Date(NOW - 2 * DAY).toISOString().slice(0, 10)}`);
    expect(md).toContain("## 👤 User\n\nUsers get an error after the access token expires");
    expect(md).toContain("## 🤖 Assistant\n\nThe refresh token rotation failed");
    const text = await src.export(files.auth, "text");
    expect(text).toBe(
      "=== USER ===\n\nUsers get an error after the access token expires\n\n" +
        "=== ASSISTANT ===\n\nThe refresh token rotation failed: tokens were refreshed twice. Fixed the auth interceptor.\n\n" +
        "=== USER ===\n\nGreat, that error is gone\n\n",
    );
    const json = JSON.parse((await src.export(files.auth, "json"))!);
    expect(json).toHaveLength(3);
    expect(json[0]).toEqual({ role: "user", content: "Users get an error after the access token expires", timestamp: NOW - 2 * DAY });

    const expanded = await src.expand(files.auth, 3, 1);
    expect(expanded).toBe(
      "[line 2] user\nUsers get an error after the access token expires\n\n" +
        "[line 3] assistant (match)\nThe refresh token rotation failed: tokens were refreshed twice. Fixed the auth interceptor.\n\n" +
        "[line 4] user\nGreat, that error is gone",
    );
    // A line between messages picks the next message; past the end, the last.
    expect((await src.expand(files.auth, 1, 0))?.startsWith("[line 2] user (match)")).toBe(true);
    expect((await src.expand(files.auth, 99, 0))?.startsWith("[line 4] user (match)")).toBe(true);

    expect(await src.export(join(home, "missing.jsonl"), "markdown")).toBeNull();
    expect(await src.expand(join(home, "missing.jsonl"), 1, 2)).toBeNull();
    expect(await src.expand(files.auth, 0, 2)).toBeNull();
  });
});

describe("native source over the real readers and fixtures", () => {
  const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));

  it("finds Claude Code and Codex sessions laid out in a home directory", async () => {
    const claudeFile = join(home, ".claude/projects/-test-project/agent-test123.jsonl");
    const codexFile = join(home, ".codex/sessions/2025/11/25/rollout-test.jsonl");
    mkdirSync(join(claudeFile, ".."), { recursive: true });
    mkdirSync(join(codexFile, ".."), { recursive: true });
    copyFileSync(join(SESSIONS, "claude_code/projects/-test-project/agent-test123.jsonl"), claudeFile);
    copyFileSync(join(SESSIONS, "codex/sessions/2025/11/25/rollout-test.jsonl"), codexFile);

    const src = createNativeSource({
      readers: createSessionReaders(),
      discover: discoverSessions,
      discoveryEnv: discoveryEnv(home),
      indexDir,
      clock,
    });
    expect(await src.health()).toMatchObject({ available: true, sessions: 2, agents: { claude_code: 1, codex: 1 } });

    const { hits, degraded } = await src.search("matrix OR completion", { limit: 10 });
    expect(degraded).toBeUndefined();
    expect(new Set(hits.map((h) => h.agent))).toEqual(new Set(["claude_code", "codex"]));
    const claude = hits.find((h) => h.agent === "claude_code" && h.line_number === 2);
    expect(claude).toMatchObject({ source_path: claudeFile, workspace: "/test/project", created_at: Date.parse("2025-11-12T18:31:32.217Z") });
    expect(claude?.snippet).toContain("matrix completion using CMA-ES");
    const codex = hits.find((h) => h.agent === "codex");
    expect(codex).toMatchObject({ source_path: codexFile, workspace: "/test/soldier/project" });

    expect((await src.search("cma-es", { limit: 10, agents: ["codex"] })).hits.every((h) => h.agent === "codex")).toBe(true);
    expect((await src.search("smartedgar", { limit: 10 })).hits.map((h) => h.source_path)).toEqual([claudeFile]);
    expect((await src.search("matrix", { limit: 10, days: 30 })).hits).toEqual([]);

    const sessions = await src.listSessions({});
    expect(sessions.map((s) => s.path).sort()).toEqual([claudeFile, codexFile].sort());
    expect(await src.export(claudeFile, "markdown")).toContain("Help me implement smartedgar matrix completion");
    expect(await src.expand(codexFile, 4, 0)).toContain("(match)");
  });
});
