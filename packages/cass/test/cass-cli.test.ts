import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CASS_NOT_FOUND_DEGRADED, type DegradedReason, type Logger } from "@cass-memory/core";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { classifyFailure } from "../src/cass-cli/classify.js";
import { type CassCliSourceOptions, createCassCliSource } from "../src/index.js";

const FAKE = fileURLToPath(new URL("./fake-cass/cass", import.meta.url));
const FIXTURES = fileURLToPath(new URL("../../../fixtures/cass/", import.meta.url));
const CLAUDE = `${FIXTURES}sessions/claude_code/projects/-test-project/agent-test123.jsonl`;
const GEMINI = `${FIXTURES}sessions/gemini/hash123/chats/session-test.json`;
const KINDS = JSON.parse(readFileSync(`${FIXTURES}robot/error_envelope_kinds.json`, "utf8")).kinds as Record<string, { exit_codes: number[] }>;
/** created_at of the search golden's hit (integer epoch ms). */
const GOLDEN_CREATED_AT = 1764619673394;

interface Call {
  argv: string[];
  env: Record<string, string | null>;
}

let tmp: string;
let setups = 0;

beforeAll(() => {
  chmodSync(FAKE, 0o755);
});

beforeEach(() => {
  tmp = mkdtempSync(join(tmpdir(), "cass-cli-"));
});

afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, debug() {}, info() {}, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) };
}

/** A source over the fake binary; `fake` sets FAKE_CASS_* variables. */
function setup(fake: Record<string, string> = {}, extra: Partial<CassCliSourceOptions> = {}) {
  const log = join(tmp, `calls-${++setups}.jsonl`);
  const logger = recordingLogger();
  const source = createCassCliSource({
    cassPath: FAKE,
    env: { ...process.env, FAKE_CASS_LOG: log, ...fake },
    fallbackPaths: [],
    logger,
    ...extra,
  });
  const calls = (): Call[] =>
    existsSync(log)
      ? readFileSync(log, "utf8")
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as Call)
      : [];
  const callsOf = (command: string): Call[] => calls().filter((c) => (command === "--version" ? c.argv.includes("--version") : c.argv[0] === command));
  return { source, calls, callsOf, logger };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie nobody has reaped yet still answers kill(0); it is dead all the same.
    const state = /\)\s+([A-Za-z])\s/.exec(readFileSync(`/proc/${pid}/stat`, "utf8"))?.[1];
    return state !== "Z" && state !== "X";
  } catch {
    return true;
  }
}

async function waitUntilDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !isAlive(pid);
}

// -------------------------------------------------------------------------------------------------

describe("detection and health", () => {
  it("reports an available cass with the version parsed from `cass 0.6.25 (<sha> <date>)`", async () => {
    const { source } = setup();
    expect(source.name).toBe("cass");
    expect(await source.health()).toEqual({ available: true, name: "cass", version: "0.6.25" });
    expect(await source.detect()).toEqual({ available: true, path: FAKE, version: "0.6.25", apiVersion: 1 });
  });

  it("detects once per source instance", async () => {
    const { source, callsOf } = setup();
    await source.health();
    await source.health();
    await source.search("auth", { limit: 2 });
    expect(callsOf("--version")).toHaveLength(1);
    expect(callsOf("api-version")).toHaveLength(1);
    expect(callsOf("health")).toHaveLength(2);
  });

  it("reports the original's NOT_FOUND when the binary does not exist", async () => {
    const { source } = setup({}, { cassPath: join(tmp, "no-such-cass") });
    const health = await source.health();
    expect(health).toEqual({ available: false, name: "cass", degraded: CASS_NOT_FOUND_DEGRADED });
    expect(await source.search("auth bug", { limit: 5 })).toEqual({ hits: [], degraded: CASS_NOT_FOUND_DEGRADED });
    expect(await source.listSessions({ days: 7 })).toEqual([]);
    expect(await source.expand(CLAUDE, 2, 1)).toBeNull();
  });

  it("treats a file that is not executable (EACCES) as a missing binary", async () => {
    const notExecutable = join(tmp, "cass");
    writeFileSync(notExecutable, "#!/bin/sh\necho cass 0.6.25\n", { mode: 0o644 });
    const { source } = setup({}, { cassPath: notExecutable });
    const result = await source.search("auth", { limit: 3 });
    expect(result.hits).toEqual([]);
    expect(result.degraded?.reason).toBe("NOT_FOUND");
    expect(result.degraded?.suggestedFix).toEqual(["cargo install coding-agent-search", "cass index"]);
  });

  it("finds cass at a fallback location when the configured path is missing", async () => {
    const { source } = setup({}, { cassPath: join(tmp, "missing"), fallbackPaths: [FAKE] });
    expect(await source.detect()).toMatchObject({ available: true, path: FAKE });
    const result = await source.search("hello", { limit: 2 });
    expect(result.degraded).toBeUndefined();
    expect(result.hits).toHaveLength(1);
  });

  it("maps `health --json` exiting 1 with a not_initialized payload to INDEX_MISSING", async () => {
    const { source } = setup({ FAKE_CASS_HEALTH: "not_initialized" });
    expect(await source.health()).toEqual({
      available: false,
      name: "cass",
      version: "0.6.25",
      degraded: {
        available: false,
        reason: "INDEX_MISSING",
        message: "cass index is missing; history is disabled until indexed.",
        suggestedFix: ["cass index --full", "cass health"],
      },
    });
  });

  it("keeps a rebuilding (exit 1, initialized) archive available", async () => {
    const { source } = setup({ FAKE_CASS_HEALTH: "rebuilding" });
    expect(await source.health()).toEqual({ available: true, name: "cass", version: "0.6.25" });
  });

  it("reports a database that cannot be opened as OTHER", async () => {
    const { source } = setup({ FAKE_CASS_HEALTH: "db-open-error" });
    const health = await source.health();
    expect(health.available).toBe(false);
    expect(health.degraded?.reason).toBe("OTHER");
    expect(health.degraded?.message).toContain("database disk image is malformed");
  });

  it("maps a health error envelope (missing-db) through the classifier", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-db", FAKE_CASS_MODE_ON: "health" });
    expect((await source.health()).degraded?.reason).toBe("INDEX_MISSING");
  });

  it("refuses an api_version other than 1", async () => {
    const { source, callsOf } = setup({ FAKE_CASS_API_VERSION: "2" });
    const health = await source.health();
    expect(health.available).toBe(false);
    expect(health.degraded?.reason).toBe("OTHER");
    expect(health.degraded?.message).toContain("api_version 2");
    const result = await source.search("auth", { limit: 2 });
    expect(result.hits).toEqual([]);
    expect(result.degraded?.message).toContain("api_version 2");
    // Once the gate has failed, later searches do not run cass at all.
    await source.search("auth", { limit: 2 });
    expect(callsOf("search").length).toBeLessThanOrEqual(1);
  });

  it("accepts an old build without `api-version`", async () => {
    const { source } = setup({ FAKE_CASS_BUILD: "ancient" });
    expect(await source.detect()).toEqual({ available: true, path: FAKE, version: "0.1.41" });
    expect((await source.health()).available).toBe(true);
  });

  it("reports TIMEOUT when `--version` hangs, and kills it", async () => {
    const pidFile = join(tmp, "pids.json");
    const { source } = setup(
      { FAKE_CASS_MODE: "hang", FAKE_CASS_MODE_ON: "--version", FAKE_CASS_PID_FILE: pidFile },
      { timeouts: { healthMs: 400 } },
    );
    const health = await source.health();
    expect(health.degraded?.reason).toBe("TIMEOUT");
    const pids = JSON.parse(readFileSync(pidFile, "utf8")) as { pid: number; grandchild: number };
    expect(await waitUntilDead(pids.pid)).toBe(true);
    expect(await waitUntilDead(pids.grandchild)).toBe(true);
  });
});

// -------------------------------------------------------------------------------------------------

describe("search", () => {
  it("maps the golden hit to core's HistoryHit", async () => {
    const { source } = setup();
    const result = await source.search("hello", { limit: 2 });
    expect(result).toEqual({
      hits: [
        {
          source_path: "/repo/.aider.chat.history.md",
          line_number: 2,
          agent: "aider",
          workspace: "/repo",
          title: "Aider Chat: coding_agent_session_search",
          snippet: "fixed the token refresh **bug** in auth middleware",
          score: 1.3554823398590088,
          created_at: GOLDEN_CREATED_AT,
          origin: { kind: "local" },
        },
      ],
    });
  });

  it("parses the bare-array shape of very old builds the same way", async () => {
    const object = await setup().source.search("hello", { limit: 2 });
    const array = await setup({ FAKE_CASS_SEARCH_SHAPE: "array" }).source.search("hello", { limit: 2 });
    expect(array).toEqual(object);
    expect(array.hits).toHaveLength(1);
  });

  it("parses the pre-budget payload (unscrubbed real snippet)", async () => {
    const { source } = setup({ FAKE_CASS_SEARCH_FIXTURE: "pre-budget" });
    const { hits, degraded } = await source.search("hello", { limit: 2 });
    expect(degraded).toBeUndefined();
    expect(hits[0]?.snippet).toContain("**hello** world");
    expect(hits[0]?.source_path).toBe("/data/projects/coding_agent_session_search/.aider.chat.history.md");
  });

  it("accepts `--fields minimal` hits (no snippet, title or workspace)", async () => {
    const { source } = setup({ FAKE_CASS_SEARCH_FIXTURE: "minimal" });
    const { hits } = await source.search("matrix", { limit: 3 });
    expect(hits).toEqual([
      { source_path: "/home/fake/.claude/projects/-test-project/agent-test123.jsonl", line_number: 1, agent: "claude_code", snippet: "", origin: { kind: "local" } },
      { source_path: "/home/fake/.claude/projects/-test-project/agent-test123.jsonl", line_number: 2, agent: "claude_code", snippet: "", origin: { kind: "local" } },
    ]);
  });

  it("takes the snippet from `content` when `snippet` is absent", async () => {
    const { source } = setup({ FAKE_CASS_DROP_FIELDS: "snippet" });
    const { hits } = await source.search("hello", { limit: 2 });
    expect(hits[0]?.snippet).toBe("We fixed the token refresh bug in the auth middleware and added a regression test.");
  });

  it("answers zero hits without degraded info", async () => {
    const { source } = setup({ FAKE_CASS_SEARCH_FIXTURE: "zero-hits" });
    expect(await source.search("nothing matches", { limit: 5 })).toEqual({ hits: [] });
  });

  it("tolerates a fully scrubbed golden (placeholder strings where numbers belong)", async () => {
    const { source } = setup({ FAKE_CASS_DESCRUB: "0" });
    const { hits, degraded } = await source.search("hello", { limit: 2 });
    expect(degraded).toBeUndefined();
    expect(hits[0]).toMatchObject({ source_path: "[REPO]/.aider.chat.history.md", snippet: "[RESULT_SNIPPET]", created_at: GOLDEN_CREATED_AT });
  });

  it.each([
    ["keep", GOLDEN_CREATED_AT],
    ["seconds", 1764619673000],
    ["iso", GOLDEN_CREATED_AT],
    ["digits", GOLDEN_CREATED_AT],
    ["null", null],
    ["scrubbed", null],
    ["missing", undefined],
  ])("reads created_at given as %s", async (variant, expected) => {
    const { source } = setup({ FAKE_CASS_CREATED_AT: variant });
    const { hits } = await source.search("hello", { limit: 2 });
    expect(hits).toHaveLength(1);
    expect(hits[0]?.created_at).toBe(expected);
    expect("created_at" in (hits[0] ?? {})).toBe(variant !== "missing");
  });

  it("returns partial results (budget.timed_out) with a TIMEOUT note", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "partial" });
    const result = await source.search("hello", { limit: 2, days: 7 });
    expect(result.hits).toHaveLength(1);
    expect(result.degraded).toEqual({
      available: false,
      reason: "TIMEOUT",
      message: "cass search timed out; history may be incomplete.",
      suggestedFix: ["cass search 'hello' --robot --limit 2 --days 7", "cass health"],
    });
  });

  it("does not call cass for an empty query", async () => {
    const { source, callsOf } = setup();
    expect(await source.search("   ", { limit: 5 })).toEqual({ hits: [] });
    expect(callsOf("search")).toHaveLength(0);
  });

  describe("error envelopes", () => {
    const expectedReason = (kind: string): DegradedReason => {
      if (["missing-index", "index-missing", "missing-db"].includes(kind)) return "INDEX_MISSING";
      if (kind === "timeout") return "TIMEOUT";
      if (kind === "archive-fts-rebuild") return "FTS_TABLE_MISSING";
      return "OTHER";
    };

    it("maps every kind of the taxonomy to a degraded reason", () => {
      const kinds = Object.keys(KINDS);
      expect(kinds).toHaveLength(86);
      for (const kind of kinds) {
        const code = KINDS[kind]?.exit_codes[0] ?? 9;
        const stderr = JSON.stringify({ error: { code, kind, message: `fake ${kind} failure`, hint: null, retryable: false } }, null, 2);
        const verdict = classifyFailure({ kind: "exited", code, signal: null, stdout: "", stderr }, "cass search", { query: "auth", limit: 3 });
        expect(verdict.kind).toBe("degraded");
        const degraded = verdict.kind === "degraded" ? verdict.degraded : undefined;
        expect({ kind, reason: degraded?.reason }).toEqual({ kind, reason: expectedReason(kind) });
        expect(degraded?.available).toBe(false);
        expect(degraded?.suggestedFix?.length).toBeGreaterThan(0);
      }
    });

    it.each([["missing-index"], ["missing-db"], ["timeout"], ["archive-fts-rebuild"], ["index-busy"], ["not-found"], ["config"]])(
      "turns a %s envelope from cass into the matching reason",
      async (kind) => {
        const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: kind });
        const result = await source.search("auth", { limit: 3 });
        expect(result.hits).toEqual([]);
        expect(result.degraded?.reason).toBe(expectedReason(kind));
      },
    );

    it("gives the original's INDEX_MISSING report for missing-index", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-index" });
      expect((await source.search("auth", { limit: 3 })).degraded).toEqual({
        available: false,
        reason: "INDEX_MISSING",
        message: "cass index is missing; history is disabled until indexed.",
        suggestedFix: ["cass index --full", "cass health"],
      });
    });

    it("recognises the FTS message of older builds", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "db-query", FAKE_CASS_MESSAGE: "no such table: fts_messages" });
      expect((await source.search("auth", { limit: 3 })).degraded).toEqual({
        available: false,
        reason: "FTS_TABLE_MISSING",
        message: "cass FTS table is missing; run 'cass doctor --fix' to recreate it.",
        suggestedFix: ["cass doctor --fix", "cass health"],
      });
    });

    it("reports other kinds with cass's message and its hinted command first", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "index-busy", FAKE_CASS_MESSAGE: "An index rebuild is already running" });
      const { degraded } = await source.search("auth", { limit: 3 });
      expect(degraded).toEqual({
        available: false,
        reason: "OTHER",
        message: "cass search failed: An index rebuild is already running",
        suggestedFix: ["cass doctor --fix", "cm doctor", "cass health"],
      });
    });

    it("suggests a smaller search on TIMEOUT", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "timeout" });
      const { degraded } = await source.search("auth token", { limit: 20, days: 90 });
      expect(degraded?.reason).toBe("TIMEOUT");
      expect(degraded?.suggestedFix).toEqual(["cass search 'auth token' --robot --limit 5 --days 30", "cass health"]);
    });

    it("reads the argument-parsing envelope (error is a string) as OTHER", async () => {
      const { source } = setup({ FAKE_CASS_BUILD: "ancient", FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "usage", FAKE_CASS_MESSAGE: "bad flag" });
      expect((await source.search("x", { limit: 1 })).degraded?.message).toBe("cass search failed: bad flag");
    });
  });

  describe("exit codes without an envelope", () => {
    it.each([
      [3, "INDEX_MISSING"],
      [10, "TIMEOUT"],
      [7, "OTHER"],
      [9, "OTHER"],
    ])("exit %i → %s", async (code, reason) => {
      const { source } = setup({ FAKE_CASS_MODE: "exit", FAKE_CASS_EXIT_CODE: String(code), FAKE_CASS_STDERR: "something went wrong" });
      const result = await source.search("auth", { limit: 3 });
      expect(result.hits).toEqual([]);
      expect(result.degraded?.reason).toBe(reason);
    });

    it("treats exit 4 without an envelope as no results, as the original did", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "exit", FAKE_CASS_EXIT_CODE: "4" });
      expect(await source.search("auth", { limit: 3 })).toEqual({ hits: [] });
    });

    it("uses the original's message heuristics on plain-text errors", async () => {
      const { source } = setup({ FAKE_CASS_MODE: "exit", FAKE_CASS_EXIT_CODE: "1", FAKE_CASS_STDERR: "Error: index missing, run cass index" });
      expect((await source.search("auth", { limit: 3 })).degraded?.reason).toBe("INDEX_MISSING");
    });
  });

  it("reports a crash (non-zero exit, garbage output) as OTHER with the first stderr line", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "crash" });
    const { hits, degraded } = await source.search("auth", { limit: 3 });
    expect(hits).toEqual([]);
    expect(degraded?.reason).toBe("OTHER");
    expect(degraded?.message).toBe("cass search failed: thread 'main' panicked at src/lib.rs:42:7:");
  });

  it("reports unparseable JSON on exit 0 as OTHER", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "garbage" });
    const { hits, degraded } = await source.search("auth", { limit: 3 });
    expect(hits).toEqual([]);
    expect(degraded?.reason).toBe("OTHER");
    expect(degraded?.message).toMatch(/^cass search failed: unreadable output/);
  });

  it("reports empty output on exit 0 as OTHER", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "empty" });
    expect((await source.search("auth", { limit: 3 })).degraded?.reason).toBe("OTHER");
  });

  it("kills a hanging search and its process group, and reports TIMEOUT", async () => {
    const pidFile = join(tmp, "pids.json");
    const { source } = setup({ FAKE_CASS_MODE: "hang", FAKE_CASS_PID_FILE: pidFile });
    const result = await source.search("auth", { limit: 3, days: 7, timeoutMs: 500 });
    expect(result.hits).toEqual([]);
    expect(result.degraded?.reason).toBe("TIMEOUT");
    expect(result.degraded?.message).toBe("cass search timed out; history may be incomplete.");
    const pids = JSON.parse(readFileSync(pidFile, "utf8")) as { pid: number; grandchild: number };
    expect(await waitUntilDead(pids.pid)).toBe(true);
    expect(await waitUntilDead(pids.grandchild)).toBe(true);
  });

  it("uses timeouts.searchMs when the caller gives no timeout", async () => {
    const { source } = setup({ FAKE_CASS_MODE: "hang" }, { timeouts: { searchMs: 400 } });
    expect((await source.search("auth", { limit: 3 })).degraded?.reason).toBe("TIMEOUT");
  });

  it.each([
    ["overflow", "stdout"],
    ["stderr-overflow", "stderr"],
  ])("stops cass when %s exceeds its cap and reports OTHER", async (mode, stream) => {
    const { source } = setup({ FAKE_CASS_MODE: mode }, { maxStdoutBytes: 64 * 1024, maxStderrBytes: 64 * 1024 });
    const { hits, degraded } = await source.search("auth", { limit: 3 });
    expect(hits).toEqual([]);
    expect(degraded?.reason).toBe("OTHER");
    expect(degraded?.message).toContain(`more than ${64 * 1024} bytes to ${stream}`);
  });

  describe("argv hygiene", () => {
    it("passes every option explicitly, `--` before the query, and a clean environment", async () => {
      const { source, callsOf } = setup({ CASS_OUTPUT_FORMAT: "toon", TOON_DEFAULT_FORMAT: "toon" });
      await source.search("auth bug", { limit: 3, days: 7, agents: ["Claude-Code", "codex"], workspace: "/repo" });
      const [call] = callsOf("search");
      expect(call?.argv).toEqual([
        "search",
        "--robot",
        "--limit",
        "3",
        "--days",
        "7",
        "--agent",
        "claude_code",
        "--agent",
        "codex",
        "--workspace",
        "/repo",
        "--color=never",
        "--",
        "auth bug",
      ]);
      expect(call?.env).toEqual({ CODING_AGENT_SEARCH_NO_UPDATE_PROMPT: "1", CASS_OUTPUT_FORMAT: null, TOON_DEFAULT_FORMAT: null });
    });

    it.each([["foo; rm -rf /tmp/x"], ["$(touch PWNED)"], ["`touch PWNED`"], ["a && touch PWNED | cat > PWNED"], ["it's \"quoted\" \\ text"]])(
      "hands %s to cass as one literal argument",
      async (query) => {
        const q = query.replaceAll("PWNED", join(tmp, "pwned"));
        const { source, callsOf } = setup();
        await source.search(q, { limit: 1 });
        const argv = callsOf("search")[0]?.argv ?? [];
        expect(argv.slice(-2)).toEqual(["--", q]);
        expect(argv).toContain("--limit");
        expect(existsSync(join(tmp, "pwned"))).toBe(false);
      },
    );

    it("keeps a query that starts with a dash out of the flag namespace", async () => {
      const { source, callsOf } = setup();
      await source.search("-rf --json", { limit: 1 });
      expect(callsOf("search")[0]?.argv.slice(-2)).toEqual(["--", " -rf --json"]);
    });

    it("always passes --limit (at least 1) and --color=never to every subcommand", async () => {
      const { source, calls } = setup();
      await source.search("auth", { limit: 0 });
      await source.health();
      await source.listSessions({ days: 7 });
      await source.expand(CLAUDE, 2, 1);
      await source.export(CLAUDE, "text");
      const all = calls();
      expect(all.find((c) => c.argv[0] === "search")?.argv).toEqual(expect.arrayContaining(["--limit", "1"]));
      for (const call of all.filter((c) => !c.argv.includes("--version"))) expect(call.argv).toContain("--color=never");
      expect(all.find((c) => c.argv.includes("--version"))?.argv).toEqual(["--version"]);
    });
  });
});

// -------------------------------------------------------------------------------------------------

describe("listSessions", () => {
  it("uses `sessions --json --limit 0 --since=-Nd` and maps the entries", async () => {
    const { source, callsOf } = setup();
    const sessions = await source.listSessions({ days: 7 });
    expect(callsOf("sessions")[0]?.argv).toEqual(["sessions", "--json", "--limit", "0", "--since=-7d", "--color=never"]);
    expect(sessions.map((s) => [s.agent, s.path, s.workspace, s.messageCount])).toEqual([
      ["claude_code", CLAUDE, "/test-project", 2],
      ["codex", `${FIXTURES}sessions/codex/sessions/2025/11/25/rollout-test.jsonl`, "/repo", 3],
    ]);
    for (const s of sessions) expect(s.endTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it("passes --workspace and filters agents", async () => {
    const { source, callsOf } = setup();
    const sessions = await source.listSessions({ workspace: "/repo", agents: ["Gemini"] });
    expect(callsOf("sessions")[0]?.argv).toEqual(["sessions", "--json", "--limit", "0", "--workspace", "/repo", "--color=never"]);
    expect(sessions.map((s) => s.agent)).toEqual(["gemini"]);
  });

  it("filters by mtime itself when `sessions` has no --since (builds before v0.6.23)", async () => {
    const { source, callsOf } = setup({ FAKE_CASS_BUILD: "mid" });
    const sessions = await source.listSessions({ days: 7 });
    expect(callsOf("sessions").map((c) => c.argv)).toEqual([
      ["sessions", "--json", "--limit", "0", "--since=-7d", "--color=never"],
      ["sessions", "--json", "--limit", "0", "--color=never"],
    ]);
    expect(sessions.map((s) => s.agent)).toEqual(["claude_code", "codex"]);
  });

  it.each([["object"], ["array"], ["none"]])("falls back to `timeline --json --since Nd` on builds without `sessions` (groups as %s)", async (shape) => {
    const { source, callsOf } = setup({ FAKE_CASS_BUILD: "old", FAKE_CASS_TIMELINE_SHAPE: shape });
    const sessions = await source.listSessions({ days: 7, agents: ["claude-code", "codex"] });
    expect(callsOf("timeline")[0]?.argv).toEqual(["timeline", "--json", "--since", "7d", "--agent", "claude_code", "--agent", "codex", "--color=never"]);
    expect(sessions.map((s) => s.agent)).toEqual(["claude_code", "codex"]);
    for (const s of sessions) {
      expect(s.startTime).toMatch(/Z$/);
      expect(s.endTime).toMatch(/Z$/);
      expect(Date.parse(s.endTime ?? "") - Date.parse(s.startTime ?? "")).toBe(3_600_000);
    }
  });

  it("asks `timeline` (as the original did) when `sessions` fails", async () => {
    const { source, callsOf } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-db", FAKE_CASS_MODE_ON: "sessions" });
    const sessions = await source.listSessions({ days: 7 });
    expect(callsOf("sessions")).toHaveLength(1);
    expect(callsOf("timeline")[0]?.argv).toEqual(["timeline", "--json", "--since", "7d", "--color=never"]);
    expect(sessions.map((s) => s.agent)).toEqual(["claude_code", "codex"]);
  });

  it("answers [] and warns when cass fails", async () => {
    const { source, logger } = setup({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-db", FAKE_CASS_MODE_ON: "sessions,timeline" });
    expect(await source.listSessions({ days: 7 })).toEqual([]);
    expect(logger.warnings.join("\n")).toContain("[cass] Timeline query failed; session counts may be incomplete.");
  });
});

// -------------------------------------------------------------------------------------------------

describe("export", () => {
  it("returns cass's text export", async () => {
    const { source, callsOf } = setup();
    const text = await source.export(CLAUDE, "text");
    expect(callsOf("export")[0]?.argv).toEqual(["export", "--format", "text", "--color=never", "--", CLAUDE]);
    expect(text).toContain("=== USER ===\n\nHelp me implement smartedgar matrix completion");
  });

  it("returns cass's JSON export verbatim", async () => {
    const { source } = setup();
    const json = JSON.parse((await source.export(CLAUDE, "json")) ?? "null") as unknown[];
    expect(json).toHaveLength(3);
  });

  it("reads the file directly when cass refuses it (plain-text error, exit 9)", async () => {
    const { source } = setup();
    expect(await source.export(GEMINI, "text")).toBe("[user] Gemini hello\n[model] Hello from Gemini!");
  });

  it("reads the file directly when cass cannot tell the roles apart", async () => {
    const { source } = setup({ FAKE_CASS_EXPORT: "unknown" });
    const text = await source.export(`${FIXTURES}sessions/message_grouping/claude_session.jsonl`, "markdown");
    expect(text).toMatch(/^\[user\] Read the README file and check the project structure\n/);
    expect(text).not.toContain("=== UNKNOWN ===");
  });

  it("reads the file directly when cass is not installed", async () => {
    const { source } = setup({}, { cassPath: join(tmp, "missing") });
    expect(await source.export(CLAUDE, "text")).toContain("[user] Help me implement smartedgar matrix completion");
  });

  it("answers null for a session that does not exist", async () => {
    const { source, logger } = setup();
    expect(await source.export(join(tmp, "gone.jsonl"), "markdown")).toBeNull();
    expect(logger.warnings.some((w) => w.includes("Export failed"))).toBe(true);
  });
});

describe("expand", () => {
  it("renders the messages around a line", async () => {
    const { source, callsOf } = setup();
    const text = await source.expand(CLAUDE, 2, 1);
    expect(callsOf("expand")[0]?.argv).toEqual(["expand", "-n", "2", "-C", "1", "--json", "--color=never", "--", CLAUDE]);
    expect(text).toBe(
      [
        "[line 1] user\nHelp me implement smartedgar matrix completion",
        "[line 2] assistant (match)\nI'll help you implement matrix completion using CMA-ES optimization.\n[Tool: Read - Read the solver implementation]",
        "[line 3] summary\n",
      ].join("\n\n"),
    );
  });

  it("answers null on cass errors (file-not-found envelope, crash) and bad lines", async () => {
    expect(await setup().source.expand(join(tmp, "gone.jsonl"), 2, 1)).toBeNull();
    expect(await setup({ FAKE_CASS_MODE: "crash", FAKE_CASS_MODE_ON: "expand" }).source.expand(CLAUDE, 2, 1)).toBeNull();
    const { source, callsOf } = setup();
    expect(await source.expand(CLAUDE, 0, 1)).toBeNull();
    expect(callsOf("expand")).toHaveLength(0);
  });
});
