// The episodic source contract: one set of vitest cases that every EpisodicSource in this package
// must pass over the same corpus of real agent sessions (fixtures/cass/sessions laid out in a
// temporary HOME at each agent's real location). See source-contract.test.ts for the sources.
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import type { EpisodicSource, HistoryHit } from "@cass-memory/core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
const PI_FILE = "2024-01-15T10-30-00-000Z_abc12345-1234-5678-9abc-def012345678.jsonl";
/** Every copied fixture file gets this mtime, so a file's own clock never makes it look recent. */
const OLD_MTIME = new Date("2025-12-01T00:00:00Z");
/** A window that covers every fixture, however old. */
export const ALL_DAYS = 36_500;
const DAY_MS = 86_400_000;

/** What a source under test gets: the corpus HOME and the environment that points into it. */
export interface ContractCorpus {
  home: string;
  /** HOME plus the agents' location variables, blanked or pointed into the corpus. */
  env: Record<string, string>;
}

/** Fixture files (relative to fixtures/cass/sessions) and where each agent keeps them (relative to HOME). */
const LAYOUT: ReadonlyArray<readonly [string, string]> = [
  ["claude_code/projects/-test-project/agent-test123.jsonl", ".claude/projects/-test-project/agent-test123.jsonl"],
  ["codex/sessions", ".codex/sessions"],
  ["gemini/hash123", ".gemini/tmp/hash123"],
  ["aider/.aider.chat.history.md", "projects/shop/.aider.chat.history.md"],
  ["cline/task1", ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/task1"],
  ["opencode", ".local/share/opencode/storage"],
  [`pi_agent/sessions/--test-project--/${PI_FILE}`, `.pi/agent/sessions/--test-project--/${PI_FILE}`],
  ["chatgpt/conversations-real", ".local/share/cass/chatgpt"],
  ["copilot/cli_prompt_output_unicode.events.jsonl", ".copilot/session-state/cli_prompt_output_unicode.events.jsonl"],
  ["copilot/legacy_history_human.json", ".copilot/history-session-state/legacy_history_human.json"],
  ["amp/thread-001.json", ".local/share/amp/threads/thread-001.json"],
];

/** Session files of the corpus the cases refer to (absolute, under the corpus HOME). */
export interface CorpusFiles {
  claude: string;
  codex: string;
  gemini: string;
  pi: string;
  /** A Claude session written "an hour ago" (the Claude fixture with fresh timestamps, another project). */
  fresh: string;
  /** Every session file copied from the fixtures (all older than a day). */
  old: string[];
}

export function corpusFiles(home: string): CorpusFiles {
  const at = (rel: string): string => path.join(home, rel);
  return {
    claude: at(".claude/projects/-test-project/agent-test123.jsonl"),
    codex: at(".codex/sessions/2025/11/25/rollout-test.jsonl"),
    gemini: at(".gemini/tmp/hash123/chats/session-test.json"),
    pi: at(`.pi/agent/sessions/--test-project--/${PI_FILE}`),
    fresh: at(".claude/projects/-test-fresh/agent-fresh.jsonl"),
    old: [],
  };
}

async function setOldMtimes(target: string): Promise<string[]> {
  const info = await stat(target);
  if (info.isFile()) {
    await utimes(target, OLD_MTIME, OLD_MTIME);
    return [target];
  }
  const out: string[] = [];
  for (const name of await readdir(target)) out.push(...(await setOldMtimes(path.join(target, name))));
  return out;
}

/** Builds the corpus in a new temporary HOME. */
export async function buildCorpus(): Promise<ContractCorpus & { files: CorpusFiles }> {
  const home = await mkdtemp(path.join(tmpdir(), "cass-contract-"));
  const files = corpusFiles(home);
  for (const [from, to] of LAYOUT) {
    const dest = path.join(home, to);
    await mkdir(path.dirname(dest), { recursive: true });
    await cp(path.join(SESSIONS, from), dest, { recursive: true });
    files.old.push(...(await setOldMtimes(dest)));
  }
  // The fresh session: the Claude fixture's records an hour ago, in /test/fresh.
  const hourAgo = Date.now() - 3_600_000;
  const records = (await readFile(path.join(SESSIONS, LAYOUT[0]![0]), "utf8"))
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line, i) => {
      const rec = JSON.parse(line) as Record<string, unknown>;
      rec.timestamp = new Date(hourAgo + i * 1000).toISOString();
      if ("cwd" in rec) rec.cwd = "/test/fresh";
      if ("sessionId" in rec) rec.sessionId = "fresh-session";
      return JSON.stringify(rec);
    });
  await mkdir(path.dirname(files.fresh), { recursive: true });
  await writeFile(files.fresh, `${records.join("\n")}\n`);

  const env: Record<string, string> = {
    HOME: home,
    USERPROFILE: home,
    XDG_DATA_HOME: path.join(home, ".local/share"),
    XDG_CONFIG_HOME: path.join(home, ".config"),
    // Blank: the readers then use their default locations under HOME.
    CLAUDE_CONFIG_DIR: "",
    CODEX_HOME: "",
    GEMINI_HOME: "",
    OPENCODE_STORAGE_ROOT: "",
    CASS_AIDER_DATA_ROOT: "",
    PI_CODING_AGENT_DIR: "",
    APPDATA: "",
  };
  return { home, env, files };
}

// One corpus per test file, shared by every runSourceContract call in it.
let corpusPromise: Promise<ContractCorpus & { files: CorpusFiles }> | undefined;
let cleanupRegistered = false;

function sharedCorpus(): Promise<ContractCorpus & { files: CorpusFiles }> {
  corpusPromise ??= buildCorpus();
  return corpusPromise;
}

/** Queries that must never throw or degrade a source, whatever they hold. */
export const AWKWARD_QUERIES: readonly string[] = [
  '"unbalanced',
  "--help",
  "-",
  "a OR",
  "NOT",
  "*",
  "matrix*",
  "日本語 🚀",
  "$(touch /tmp/x)",
  "`id`; rm -rf ~ | cat",
  "line one\nline two\ttab",
  "x".repeat(2_000),
  "matrix completion ".repeat(111).slice(0, 2_000),
  // Past what one argv string may hold (128 KiB on Linux), and a NUL, which argv cannot hold at all.
  "matrix completion ".repeat(12_000),
  "matrix\u0000completion",
  "\u0000",
];

function isUnder(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function expectWellFormedHit(hit: HistoryHit, home: string, words: readonly string[]): void {
  expect(path.isAbsolute(hit.source_path), hit.source_path).toBe(true);
  expect(isUnder(hit.source_path, home), hit.source_path).toBe(true);
  expect(existsSync(hit.source_path), hit.source_path).toBe(true);
  expect(Number.isInteger(hit.line_number)).toBe(true);
  expect(hit.line_number).toBeGreaterThanOrEqual(1);
  expect(hit.agent).toMatch(/^[a-z][a-z0-9_]*$/);
  expect(typeof hit.snippet).toBe("string");
  const snippet = hit.snippet.toLowerCase();
  expect(
    words.some((w) => snippet.includes(w)),
    `snippet ${JSON.stringify(hit.snippet)} holds none of ${words.join(", ")}`,
  ).toBe(true);
  expect(hit.origin.kind).toBe("local");
  expect(hit.created_at === null || (typeof hit.created_at === "number" && Number.isFinite(hit.created_at))).toBe(true);
  if (hit.workspace !== undefined) expect(typeof hit.workspace).toBe("string");
  if (hit.score !== undefined) expect(Number.isFinite(hit.score)).toBe(true);
}

/**
 * Registers the contract cases for one source. `makeSource` is called once, after the corpus is
 * built; it gets the corpus HOME and the environment that points the agents' locations into it.
 */
export function runSourceContract(name: string, makeSource: (corpus: ContractCorpus) => Promise<EpisodicSource>): void {
  if (!cleanupRegistered) {
    cleanupRegistered = true;
    afterAll(async () => {
      if (corpusPromise === undefined) return;
      const { home } = await corpusPromise;
      await rm(home, { recursive: true, force: true });
    });
  }

  describe(`episodic source contract: ${name}`, () => {
    let source: EpisodicSource;
    let home: string;
    let files: CorpusFiles;

    beforeAll(async () => {
      const corpus = await sharedCorpus();
      home = corpus.home;
      files = corpus.files;
      source = await makeSource({ home: corpus.home, env: { ...corpus.env } });
    });

    it("is available", async () => {
      const health = await source.health();
      expect(health.available).toBe(true);
      expect(health.degraded).toBeUndefined();
      expect(health.name).toBe(source.name);
    });

    it("finds 'matrix completion' in the Claude and Codex sessions, with well-formed hits", async () => {
      const result = await source.search("matrix completion", { limit: 50, days: ALL_DAYS });
      expect(result.degraded).toBeUndefined();
      const agents = new Set(result.hits.map((h) => h.agent));
      expect(agents.has("claude_code")).toBe(true);
      expect(agents.has("codex")).toBe(true);
      const paths = new Set(result.hits.map((h) => h.source_path));
      expect(paths.has(files.claude)).toBe(true);
      expect(paths.has(files.codex)).toBe(true);
      for (const hit of result.hits) expectWellFormedHit(hit, home, ["matrix", "completion"]);
      const claude = result.hits.find((h) => h.source_path === files.claude)!;
      expect(claude.workspace).toBe("/test/project");
      // The Claude fixture's first record (line 1) is the user's "…matrix completion" prompt.
      expect(result.hits.some((h) => h.source_path === files.claude && h.line_number === 1)).toBe(true);
    });

    it("respects limit", async () => {
      const all = await source.search("matrix completion", { limit: 50, days: ALL_DAYS });
      expect(all.hits.length).toBeGreaterThan(2);
      for (const limit of [1, 2]) {
        const result = await source.search("matrix completion", { limit, days: ALL_DAYS });
        expect(result.degraded).toBeUndefined();
        expect(result.hits).toHaveLength(limit);
      }
    });

    it("filters by agent (slug or dashed alias)", async () => {
      const codex = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, agents: ["codex"] });
      expect(codex.degraded).toBeUndefined();
      expect(codex.hits.length).toBeGreaterThan(0);
      expect(codex.hits.every((h) => h.agent === "codex")).toBe(true);

      const claude = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, agents: ["claude-code"] });
      expect(claude.hits.length).toBeGreaterThan(0);
      expect(claude.hits.every((h) => h.agent === "claude_code")).toBe(true);

      const both = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, agents: ["codex", "claude_code"] });
      expect(new Set(both.hits.map((h) => h.agent))).toEqual(new Set(["codex", "claude_code"]));

      const none = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, agents: ["gemini"] });
      expect(none).toEqual({ hits: [] });
    });

    it("filters by workspace", async () => {
      const result = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, workspace: "/test/project" });
      expect(result.degraded).toBeUndefined();
      expect(result.hits.length).toBeGreaterThan(0);
      for (const hit of result.hits) {
        expect(hit.workspace).toBe("/test/project");
        expect(hit.source_path).toBe(files.claude);
      }
      const codex = await source.search("matrix completion", { limit: 50, days: ALL_DAYS, workspace: "/test/soldier/project" });
      expect(codex.hits.length).toBeGreaterThan(0);
      expect(codex.hits.every((h) => h.agent === "codex")).toBe(true);

      expect(await source.search("matrix completion", { limit: 50, days: ALL_DAYS, workspace: "/no/such/workspace" })).toEqual({ hits: [] });
    });

    it("keeps only recent messages with days: 1", async () => {
      const recent = await source.search("matrix completion", { limit: 50, days: 1 });
      expect(recent.degraded).toBeUndefined();
      expect(recent.hits.length).toBeGreaterThan(0);
      for (const hit of recent.hits) {
        expect(hit.source_path).toBe(files.fresh);
        if (typeof hit.created_at === "number") expect(hit.created_at).toBeGreaterThan(Date.now() - DAY_MS);
      }
      // Words only the old fixtures hold find nothing in the last day.
      expect(await source.search("gemini", { limit: 50, days: 1 })).toEqual({ hits: [] });
      expect(await source.search("lifetime", { limit: 50, days: 1 })).toEqual({ hits: [] });
      // …but are there with a wide window.
      expect((await source.search("lifetime", { limit: 50, days: ALL_DAYS })).hits.some((h) => h.source_path === files.pi)).toBe(true);
    });

    it("answers a query with no match with no hits and no degraded", async () => {
      expect(await source.search("zyxwvutsrq", { limit: 10, days: ALL_DAYS })).toEqual({ hits: [] });
      expect(await source.search("zyxwvutsrq", { limit: 10 })).toEqual({ hits: [] });
    });

    it("never throws or degrades on awkward queries", async () => {
      const marker = path.join(home, "pwned");
      const queries = [...AWKWARD_QUERIES, `$(touch ${marker})`, `; touch ${marker}`, `\`touch ${marker}\``];
      for (const query of queries) {
        const result = await source.search(query, { limit: 5, days: ALL_DAYS });
        expect(result.degraded, JSON.stringify(query.slice(0, 60))).toBeUndefined();
        expect(Array.isArray(result.hits)).toBe(true);
        for (const hit of result.hits) expect(isUnder(hit.source_path, home)).toBe(true);
      }
      expect(existsSync(marker)).toBe(false);
    });

    it("lists the sessions of several agents with their paths", async () => {
      const sessions = await source.listSessions({ days: ALL_DAYS });
      const agents = new Set(sessions.map((s) => s.agent));
      for (const agent of ["claude_code", "codex", "gemini", "pi_agent"]) expect(agents.has(agent), agent).toBe(true);
      const paths = sessions.map((s) => s.path);
      for (const file of [files.claude, files.codex, files.gemini, files.pi, files.fresh]) expect(paths).toContain(file);
      expect(new Set(paths).size).toBe(paths.length);
      for (const s of sessions) {
        expect(path.isAbsolute(s.path), s.path).toBe(true);
        expect(isUnder(s.path, home), s.path).toBe(true);
        expect(s.agent).toMatch(/^[a-z][a-z0-9_]*$/);
        if (s.messageCount !== undefined) expect(s.messageCount).toBeGreaterThan(0);
      }
      const claude = sessions.find((s) => s.path === files.claude)!;
      expect(claude).toMatchObject({ agent: "claude_code", workspace: "/test/project" });
    });

    it("lists only the fresh session with days: 1, and filters by agent", async () => {
      const recent = await source.listSessions({ days: 1 });
      expect(recent.map((s) => s.path)).toEqual([files.fresh]);
      const codex = await source.listSessions({ days: ALL_DAYS, agents: ["codex"] });
      expect(codex.length).toBe(2);
      expect(codex.every((s) => s.agent === "codex")).toBe(true);
    });

    it("exports a session as text", async () => {
      const text = await source.export(files.claude, "text");
      expect(text).not.toBeNull();
      expect(text).toContain("matrix completion");
      const markdown = await source.export(files.claude, "markdown");
      expect(markdown).toContain("matrix completion");
    });

    it("expands around a line", async () => {
      const text = await source.expand(files.claude, 1, 2);
      expect(typeof text).toBe("string");
      expect(text!.trim()).not.toBe("");
      expect(text).toContain("matrix completion");
    });

    it("answers null for a session that does not exist", async () => {
      const missing = path.join(home, ".claude/projects/-test-project/missing.jsonl");
      expect(await source.export(missing, "text")).toBeNull();
      expect(await source.export(missing, "markdown")).toBeNull();
      expect(await source.expand(missing, 1, 2)).toBeNull();
    });
  });
}
