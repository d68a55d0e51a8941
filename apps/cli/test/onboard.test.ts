import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome, type RunOptions } from "./helpers.js";

const FIXTURE_HOME = fileURLToPath(new URL("../../../fixtures/original-home/home/.cass-memory", import.meta.url));
// Assembled from pieces so that secret scanners do not flag this file.
const AWS_KEY = ["AKIA", "IOSFODNN7EXAMPLE"].join("");
const GH_TOKEN = ["ghp_", "c".repeat(18), "D".repeat(18)].join("");

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
});
afterEach(() => cleanup());

/** The history source is pinned: `native` over the temp HOME (no cass involved), or `none`. */
const opts = (extra: Partial<RunOptions> & { source?: string } = {}): RunOptions => ({
  home,
  ...extra,
  env: { CASS_MEMORY_EPISODIC: extra.source ?? "native", ...extra.env },
});
const globalDir = () => join(home, ".cass-memory");
const statePath = () => join(globalDir(), "onboarding-state.json");
const processedLog = () => join(globalDir(), "reflections", "global.processed.log");

/** A Claude Code session file in the temp HOME, dated now (so it is inside any lookback window). */
function writeClaudeSession(name: string, userText: string, assistantText: string): string {
  const dir = join(home, ".claude", "projects", "-work-app");
  mkdirSync(dir, { recursive: true });
  const ts = new Date().toISOString();
  const line = (role: string, content: unknown, uuid: string) =>
    JSON.stringify({ cwd: "/work/app", sessionId: name, type: role, message: { role, content }, uuid, timestamp: ts });
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, [line("user", userText, `${name}-1`), line("assistant", [{ type: "text", text: assistantText }], `${name}-2`)].join("\n") + "\n");
  return path;
}

describe("cm onboard (no history)", () => {
  it("without a subcommand prints help on stderr and exits 2 (usage error)", () => {
    const r = cm(["onboard"], opts());
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("mark-done");
    expect(r.stdout).toBe("");
  });

  it("status --json: history unavailable, empty playbook, nothing processed, every category a gap", () => {
    const r = cm(["onboard", "status", "--json"], opts());
    expect(r.code).toBe(0);
    const { success, command, data } = r.json();
    expect(success).toBe(true);
    expect(command).toBe("onboard:status");
    expect(data.status).toMatchObject({
      cassAvailable: false,
      historySource: "native",
      totalConversations: 0,
      totalMessages: 0,
      playbookRules: 0,
      needsOnboarding: true,
      onboardingRatio: 0,
    });
    expect(data.progress).toEqual({ sessionsProcessed: 0, rulesExtracted: 0, startedAt: null, lastActivity: null, hasStarted: false });
    expect(data.gapAnalysis.gaps.critical).toHaveLength(10);
    expect(data.gapAnalysis.suggestions).toBe("Your playbook is empty! Start by adding foundational rules across all categories.");
    // A read-only command: nothing is created.
    expect(existsSync(statePath())).toBe(false);
  });

  it("status and gaps in human form", () => {
    cm(["playbook", "add", "Run git fetch before rebasing onto main", "--category", "git"], opts());
    const status = cm(["onboard", "status"], opts());
    expect(status.code).toBe(0);
    expect(status.stdout).toContain("ONBOARDING STATUS");
    expect(status.stdout).toMatch(/Playbook rules:\s+1/);
    expect(status.stdout).toContain("Critical: debugging, testing");
    const gaps = cm(["onboard", "gaps"], opts());
    expect(gaps.code).toBe(0);
    expect(gaps.stdout).toContain("PLAYBOOK GAP ANALYSIS");
    expect(gaps.stdout).toContain("UNDERREPRESENTED (1-2 rules):");
    expect(gaps.stdout).toMatch(/git\s+█░+ 1/);
    const json = cm(["onboard", "gaps", "--json"], opts()).json();
    expect(json.command).toBe("onboard:gaps");
    expect(json.data.gapAnalysis.byCategory.git).toEqual({ count: 1, status: "underrepresented", percentage: 100 });
  });

  it("sample answers an empty list with the degraded report", () => {
    const r = cm(["onboard", "sample", "--json"], opts());
    expect(r.code).toBe(0);
    const { command, data } = r.json();
    expect(command).toBe("onboard:sample");
    expect(data.step).toBe("sample");
    expect(data.sessions).toEqual([]);
    expect(data.totalFound).toBe(0);
    expect(data.sessionsRemaining).toBe(0);
    expect(data.degraded.cass).toMatchObject({ available: false, reason: "NOT_FOUND" });
    const human = cm(["onboard", "sample"], opts());
    expect(human.stdout).toContain("SAMPLED SESSIONS FOR ANALYSIS");
    expect(human.stdout).toContain("History unavailable (native: NOT_FOUND)");
    expect(human.stdout).toContain("No unprocessed sessions found.");
  });

  it("sample with history switched off reports nothing degraded", () => {
    const { data } = cm(["onboard", "sample", "--fill-gaps", "--json"], opts({ source: "none" })).json();
    expect(data.sessions).toEqual([]);
    expect(data).not.toHaveProperty("degraded");
    expect(data.gapAnalysis.totalRules).toBe(0);
    expect(data.status.historySource).toBe("none");
  });

  it("sample validates its flags", () => {
    const limit = cm(["onboard", "sample", "--limit", "0", "--json"], opts());
    expect(limit.code).toBe(2);
    expect(limit.json().error).toMatchObject({ code: "INVALID_INPUT", message: "limit must be >= 1." });
    expect(limit.json().command).toBe("onboard:sample");
    const days = cm(["onboard", "sample", "--days", "abc", "--json"], opts());
    expect(days.code).toBe(2);
    expect(days.json().error.message).toBe("days must be an integer.");
  });

  it("prompt and guided hand out the instructions, categories and examples", () => {
    const prompt = cm(["onboard", "prompt", "--json"], opts()).json();
    expect(prompt.command).toBe("onboard:prompt");
    expect(prompt.data.step).toBe("prompt");
    expect(prompt.data.extractionPrompt.startsWith("# Session Analysis Instructions")).toBe(true);
    expect(prompt.data.categories).toHaveLength(10);
    expect(prompt.data.examples).toHaveLength(6);
    expect(cm(["onboard", "prompt"], opts()).stdout.startsWith("# Session Analysis Instructions")).toBe(true);
    const guided = cm(["onboard", "guided", "--json"], opts()).json();
    expect(guided.command).toBe("onboard:guided");
    expect(guided.data).toMatchObject({ step: "guided", categories: prompt.data.categories, examples: prompt.data.examples });
    const human = cm(["onboard", "guided"], opts());
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("cm onboard sample --json");
    expect(human.stdout).toContain("history not available (native)");
  });

  it("read of a missing session: null content (exit 0), or SESSION_NOT_FOUND with --template (exit 2)", () => {
    const missing = join(home, "nope.jsonl");
    const plain = cm(["onboard", "read", missing, "--json"], opts());
    expect(plain.code).toBe(0);
    expect(plain.json().command).toBe("onboard:read");
    expect(plain.json().data).toMatchObject({ step: "read", sessionPath: missing, sessionContent: null });
    const human = cm(["onboard", "read", missing], opts());
    expect(human.code).toBe(0);
    expect(human.stderr).toContain(`Failed to read session: ${missing}`);
    const template = cm(["onboard", "read", missing, "--template", "--json"], opts());
    expect(template.code).toBe(2);
    expect(template.json()).toMatchObject({ success: false, command: "onboard:read-template", error: { code: "SESSION_NOT_FOUND", message: "Failed to read session" } });
  });

  it("reset needs --yes outside a terminal, then empties the progress", () => {
    cm(["onboard", "mark-done", "/x/s1.jsonl"], opts());
    const refused = cm(["onboard", "reset", "--json"], opts());
    expect(refused.code).toBe(2);
    expect(refused.json()).toMatchObject({
      command: "onboard:reset",
      error: { code: "MISSING_REQUIRED", message: "Confirmation required to reset onboarding progress", hint: "Re-run with --yes" },
    });
    const human = cm(["onboard", "reset"], opts());
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("Confirmation required to reset onboarding progress");
    expect(JSON.parse(readFileSync(statePath(), "utf8")).processedSessions).toHaveLength(1);
    const ok = cm(["onboard", "reset", "--yes", "--json"], opts());
    expect(ok.code).toBe(0);
    expect(ok.json().data).toEqual({ message: "Onboarding progress reset" });
    const state = JSON.parse(readFileSync(statePath(), "utf8"));
    expect(state).toMatchObject({ version: 1, processedSessions: [], stats: { totalSessionsProcessed: 0, totalRulesExtracted: 0 } });
  });
});

describe("cm onboard mark-done and progress", () => {
  it("resolves the path, records it in the state and the processed log (original formats)", () => {
    const cwd = join(home, "work");
    mkdirSync(cwd);
    const r = cm(["onboard", "mark-done", "sessions/../s1.jsonl", "--json"], opts({ cwd }));
    expect(r.code).toBe(0);
    const abs = resolve(cwd, "s1.jsonl");
    expect(r.json()).toMatchObject({
      command: "onboard:mark-done",
      data: { message: "Session marked as processed", sessionPath: abs, rulesExtracted: 0, skipped: true },
    });
    const state = JSON.parse(readFileSync(statePath(), "utf8"));
    expect(state.processedSessions).toEqual([{ path: abs, processedAt: expect.any(String), rulesExtracted: 0, skipped: true }]);
    expect(state.stats).toEqual({ totalSessionsProcessed: 1, totalRulesExtracted: 0 });
    const log = readFileSync(processedLog(), "utf8").split("\n");
    expect(log[0]).toBe('# JSONL format: {"sessionPath":..., "processedAt":...}');
    expect(JSON.parse(log[1] ?? "")).toMatchObject({ sessionPath: abs, deltasGenerated: 0 });
    const human = cm(["onboard", "mark-done", "/x/s2.jsonl"], opts());
    expect(human.stdout).toContain("Marked as processed: /x/s2.jsonl");
    expect(human.stdout).toContain("0 rules extracted - session skipped");
    const blank = cm(["onboard", "mark-done", " ", "--json"], opts());
    expect(blank.code).toBe(2);
    expect(blank.json().error.code).toBe("INVALID_INPUT");
  });

  it("playbook add --session records the rules taken from the session", () => {
    const session = join(home, "sessions", "s9.jsonl");
    expect(cm(["playbook", "add", "Pin the Node version in CI", "--category", "workflow", "--session", session], opts()).code).toBe(0);
    const file = join(home, "rules.json");
    writeFileSync(file, JSON.stringify([{ content: "Run the linter before pushing" }, { content: "Rebase feature branches daily", category: "git" }]));
    expect(cm(["playbook", "add", "--file", file, "--session", session, "--json"], opts()).code).toBe(0);
    const state = JSON.parse(readFileSync(statePath(), "utf8"));
    expect(state.processedSessions).toEqual([{ path: session, processedAt: expect.any(String), rulesExtracted: 3 }]);
    const { data } = cm(["onboard", "status", "--json"], opts()).json();
    expect(data.progress).toMatchObject({ sessionsProcessed: 1, rulesExtracted: 3, hasStarted: true });
    expect(data.status.playbookRules).toBe(3);
  });

  it("loads the onboarding state and processed log the original cm wrote", () => {
    cpSync(FIXTURE_HOME, globalDir(), { recursive: true });
    const { data } = cm(["onboard", "status", "--json"], opts()).json();
    expect(data.progress).toEqual({
      sessionsProcessed: 1,
      rulesExtracted: 0,
      startedAt: "2026-11-22T11:57:12.497Z",
      lastActivity: "2026-11-22T11:57:12.497Z",
      hasStarted: true,
    });
    const before = readFileSync(processedLog(), "utf8");
    expect(cm(["onboard", "mark-done", "/home/dev/.codex/sessions/s2.jsonl"], opts()).code).toBe(0);
    const after = readFileSync(processedLog(), "utf8");
    expect(after.startsWith(before)).toBe(true);
    expect(after.split("\n").filter((l) => l.startsWith("#"))).toHaveLength(1);
    const state = JSON.parse(readFileSync(statePath(), "utf8"));
    expect(state.startedAt).toBe("2026-11-22T11:57:12.497Z");
    expect(state.processedSessions.map((s: { path: string }) => s.path)).toEqual(["/home/dev/.claude/projects/app/s1.jsonl", "/home/dev/.codex/sessions/s2.jsonl"]);
  });
});

describe("cm onboard with real session files (native history)", () => {
  it("samples, reads (secrets redacted), and skips sessions once marked done", () => {
    const s1 = writeClaudeSession("s1", `Please fix the bug: login throws an error with key ${AWS_KEY}`, "Found it: the test fixture used a stale mock.");
    const s2 = writeClaudeSession("s2", "Implement the feature flag for the new dashboard", `Done; pushed using ${GH_TOKEN}.`);

    const sample = cm(["onboard", "sample", "--json"], opts());
    expect(sample.code).toBe(0);
    const data = sample.json().data;
    // cassAvailable is about the cass CLI (the original's field); native history is historyAvailable.
    expect(data.status).toMatchObject({ cassAvailable: false, historySource: "native", historyAvailable: true, totalConversations: 2 });
    expect(data.sessions.map((s: { path: string }) => s.path).sort()).toEqual([s1, s2].sort());
    expect(data).not.toHaveProperty("degraded");
    expect(sample.stdout).not.toContain(AWS_KEY);
    expect(sample.stdout).not.toContain(GH_TOKEN);

    const read = cm(["onboard", "read", s1, "--json"], opts());
    expect(read.code).toBe(0);
    expect(read.json().data.sessionContent).toContain("[AWS_ACCESS_KEY]");
    expect(read.stdout).not.toContain(AWS_KEY);

    const template = cm(["onboard", "read", s2, "--template", "--json"], opts());
    expect(template.code).toBe(0);
    const t = template.json();
    expect(t.command).toBe("onboard:read-template");
    // The agent is the reader's (cass's slug), not the original's guess from the path ("claude").
    expect(t.data.metadata).toMatchObject({ path: s2, agent: "claude_code", workspaceName: "-work-app" });
    expect(t.data.extractionFormat.examples).toHaveLength(6);
    expect(template.stdout).not.toContain(GH_TOKEN);
    const humanTemplate = cm(["onboard", "read", s2, "--template"], opts());
    expect(humanTemplate.stdout).toContain("SESSION ANALYSIS TEMPLATE");
    expect(humanTemplate.stdout).toContain("EXTRACTION INSTRUCTIONS");
    expect(humanTemplate.stdout).not.toContain(GH_TOKEN);

    expect(cm(["onboard", "mark-done", s1], opts()).code).toBe(0);
    const again = cm(["onboard", "sample", "--json"], opts()).json().data;
    expect(again.sessions.map((s: { path: string }) => s.path)).toEqual([s2]);
    expect(again.filtered).toBe(1);
    const all = cm(["onboard", "sample", "--include-processed", "--json"], opts()).json().data;
    expect(all.sessions).toHaveLength(2);
  });
});
