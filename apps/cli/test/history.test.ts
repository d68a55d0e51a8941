import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));

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

// No cass on PATH: the auto source must answer from the session files themselves.
const env = { PATH: "/usr/bin:/bin", CASS_PATH: undefined };
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
