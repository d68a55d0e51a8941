import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
const FAKE_CASS = fileURLToPath(new URL("../../../packages/cass/test/fake-cass/cass", import.meta.url));

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

/** Puts the fixture sessions where each agent keeps them on a real machine. */
function layOutFixtureHome(root: string): void {
  cpSync(join(SESSIONS, "claude_code", "projects"), join(root, ".claude", "projects"), { recursive: true });
  cpSync(join(SESSIONS, "codex", "sessions"), join(root, ".codex", "sessions"), { recursive: true });
  cpSync(join(SESSIONS, "gemini"), join(root, ".gemini", "tmp"), { recursive: true });
  cpSync(join(SESSIONS, "pi_agent", "sessions"), join(root, ".pi", "agent", "sessions"), { recursive: true });
}

// No cass on PATH (only node's own directory, which the fake cass's `#!/usr/bin/env node` needs):
// the auto source must answer from the session files themselves.
const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, CASS_PATH: undefined };
const context = (task: string, ...args: string[]) => cm(["context", task, "--json", ...args], { home, env });

describe("history without cass (native session readers)", () => {
  it("context returns snippets from several agents' sessions and no degraded history", () => {
    layOutFixtureHome(home);
    const r = context("implement matrix completion", "--days", "100000");
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.degraded).toBeUndefined();
    const agents = new Set(data.historySnippets.map((h: { agent: string }) => h.agent));
    expect([...agents].sort()).toEqual(["claude_code", "codex"]);
    for (const h of data.historySnippets) {
      expect(h.snippet.toLowerCase()).toMatch(/matrix|completion/);
      expect(h.sessionPath).toBe(h.source_path);
      expect(h.source_path.startsWith(home)).toBe(true);
      expect(Number.isInteger(h.line_number) && h.line_number >= 1).toBe(true);
    }
    // --history bounds the snippets; --no-history skips the search; --days excludes old sessions.
    expect(context("implement matrix completion", "--days", "100000", "--history", "1").json().data.historySnippets).toHaveLength(1);
    expect(context("implement matrix completion", "--days", "100000", "--no-history").json().data.historySnippets).toEqual([]);
    expect(context("implement matrix completion", "--days", "1").json().data.historySnippets).toEqual([]);
  });

  it("never shows secrets from session files in snippets, and recall searches history too", () => {
    const dir = join(home, ".claude", "projects", "-work-api");
    mkdirSync(dir, { recursive: true });
    const aws = "AKIA" + "ABCDEFGHIJKLMNOP";
    const gh = "ghp_" + "a".repeat(36);
    const lines = [
      { type: "user", cwd: "/work/api", sessionId: "s1", message: { role: "user", content: "deploy the billing webhook, it fails with 403" }, timestamp: new Date().toISOString() },
      {
        type: "assistant",
        cwd: "/work/api",
        sessionId: "s1",
        message: { role: "assistant", content: [{ type: "text", text: `The billing webhook used key ${aws} and token ${gh}; rotate them.` }] },
        timestamp: new Date().toISOString(),
      },
    ];
    writeFileSync(join(dir, "s1.jsonl"), lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const r = context("billing webhook fails 403");
    const snippets = r.json().data.historySnippets as Array<{ snippet: string }>;
    expect(snippets.length).toBeGreaterThan(0);
    const text = JSON.stringify(r.json());
    expect(text).not.toContain(aws);
    expect(text).not.toContain(gh);
    expect(text).toContain("[AWS_ACCESS_KEY]");

    const recall = cm(["recall", "billing webhook", "--json"], { home, env });
    expect(recall.json().data.historySnippets.length).toBeGreaterThan(0);
    expect(recall.stdout).not.toContain(gh);
    // The index on disk is ours to keep: it must not be somewhere else in HOME.
    expect(readFileSync(join(home, ".claude", "projects", "-work-api", "s1.jsonl"), "utf8")).toContain(gh);
  });

  it("episodic: none turns history off without reporting a problem; cass without a binary is degraded NOT_FOUND", () => {
    layOutFixtureHome(home);
    const off = cm(["context", "implement matrix completion", "--days", "100000", "--json"], { home, env: { ...env, CASS_MEMORY_EPISODIC: "none" } });
    expect(off.json().data.historySnippets).toEqual([]);
    expect(off.json().data.degraded).toBeUndefined();
    const cassOnly = cm(["context", "implement matrix completion", "--json"], { home, env: { ...env, CASS_MEMORY_EPISODIC: "cass" } });
    expect(cassOnly.code).toBe(0);
    expect(cassOnly.json().data.degraded.cass.reason).toBe("NOT_FOUND");
  });
});

describe("history through cass (the fake cass executable)", () => {
  // episodic: cass, so that a failing cass is reported rather than answered by the native readers.
  const cassEnv = (extra: Record<string, string>) => ({ ...env, CASS_MEMORY_EPISODIC: "cass", CASS_PATH: FAKE_CASS, ...extra });

  it.each([
    ["INDEX_MISSING", { FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-index" }],
    ["FTS_TABLE_MISSING", { FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "db-query", FAKE_CASS_MESSAGE: "no such table: fts_messages" }],
    ["OTHER", { FAKE_CASS_MODE: "garbage" }],
    ["OTHER", { FAKE_CASS_MODE: "crash" }],
    ["NOT_FOUND", { CASS_PATH: "/nonexistent/bin/cass" }],
  ] as const)("reports %s and still answers with the playbook (exit 0)", (reason, extra) => {
    const added = cm(["remember", "Rebuild the search index after upgrading cass", "--json"], { home, env });
    expect(added.code).toBe(0);
    const r = cm(["context", "rebuild search index after upgrade", "--json"], { home, env: cassEnv(extra) });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.relevantBullets.map((b: { content: string }) => b.content)).toEqual(["Rebuild the search index after upgrading cass"]);
    expect(data.historySnippets).toEqual([]);
    expect(data.degraded.cass.reason).toBe(reason);
    expect(data.degraded.cass.suggestedFix.length).toBeGreaterThan(0);
  });

  it("reports TIMEOUT when cass hangs past the context budget", () => {
    const r = cm(["context", "rebuild search index", "--json"], { home, env: cassEnv({ FAKE_CASS_MODE: "hang" }) });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().data.degraded.cass.reason).toBe("TIMEOUT");
  }, 60_000);

  it("returns cass's hits when cass answers", () => {
    const r = cm(["context", "authentication error handling", "--json"], { home, env: cassEnv({}) });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.degraded).toBeUndefined();
    expect(data.historySnippets.length).toBeGreaterThan(0);
    for (const h of data.historySnippets) expect(typeof h.source_path).toBe("string");
  });
});
