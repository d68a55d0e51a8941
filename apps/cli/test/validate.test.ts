import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

// History from the agents' session files (no cass on PATH), and never an LLM.
const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, CASS_PATH: undefined, CASS_MEMORY_EPISODIC: "native", CASS_MEMORY_LLM: "none" };
const validate = (...args: string[]) => cm(["validate", ...args], { home, env });

/** Writes a Claude Code session (one user turn, one assistant turn, dated now) under the temp HOME. */
function writeSession(name: string, user: string, assistant: string): string {
  const dir = join(home, ".claude", "projects", "-work-app");
  mkdirSync(dir, { recursive: true });
  const now = new Date().toISOString();
  const lines = [
    { type: "user", cwd: "/work/app", sessionId: name, message: { role: "user", content: user }, timestamp: now },
    { type: "assistant", cwd: "/work/app", sessionId: name, message: { role: "assistant", content: [{ type: "text", text: assistant }] }, timestamp: now },
  ];
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return path;
}

const RULE = "Enable the webpack persistent cache for production builds";

describe("cm validate", () => {
  it("with no history: ACCEPT_WITH_CAUTION 0.6, human and JSON", () => {
    const human = validate(RULE);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("Validation Result");
    expect(human.stdout).toContain(`Rule: ${RULE}`);
    expect(human.stdout).toContain("Verdict: ACCEPT_WITH_CAUTION (confidence 0.60)");
    expect(human.stdout).toContain("Reason: No historical evidence found. Proposing as draft.");
    expect(human.stdout).not.toContain("Evidence (history):");

    const json = validate(RULE, "--json");
    expect(json.code).toBe(0);
    const envelope = json.json();
    expect(envelope).toMatchObject({ success: true, command: "validate" });
    expect(envelope.data).toEqual({
      proposedRule: RULE,
      verdict: "ACCEPT_WITH_CAUTION",
      confidence: 0.6,
      reason: "No historical evidence found. Proposing as draft.",
      evidence: [],
      mode: "deterministic",
    });
  });

  it("rejects on three failing sessions about the rule (REJECT 0.9)", () => {
    for (let i = 0; i < 3; i++) writeSession(`fail-${i}`, "turn on the webpack persistent cache for production", `The production build failed with a corrupt webpack persistent cache (attempt ${i + 1}).`);
    const r = validate(RULE, "--json");
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data).toMatchObject({ verdict: "REJECT", confidence: 0.9, reason: "Strong failure signal (3 sessions). Auto-rejecting." });
    expect(data.evidence).toHaveLength(3);
    for (const e of data.evidence) {
      expect(e.outcome).toBe("failure");
      expect(e.session.startsWith(join(home, ".claude", "projects"))).toBe(true);
    }
    const human = validate(RULE);
    expect(human.stdout).toContain("Verdict: REJECT (confidence 0.90)");
    expect(human.stdout).toContain("Evidence (history):");
    expect(human.stdout).toMatch(/- ~\/\.claude\/projects\/-work-app\/fail-\d\.jsonl: .*\(failure\)/);
  });

  it("accepts on five successful sessions (ACCEPT 0.95)", () => {
    for (let i = 0; i < 5; i++) writeSession(`ok-${i}`, "speed up the production build", `Enabled the webpack persistent cache; the production build works now (run ${i + 1}).`);
    const data = validate(RULE, "--json").json().data;
    expect(data).toMatchObject({ verdict: "ACCEPT", confidence: 0.95, reason: "Strong success signal (5 sessions). Auto-accepting." });
    expect(data.evidence.map((e: { outcome: string }) => e.outcome)).toEqual(["success", "success", "success", "success", "success"]);
  });

  it("judges ambiguous evidence from the fixture sessions with the deterministic validator", () => {
    cpSync(join(SESSIONS, "claude_code", "projects"), join(home, ".claude", "projects"), { recursive: true });
    cpSync(join(SESSIONS, "codex", "sessions"), join(home, ".codex", "sessions"), { recursive: true });
    // The fixtures are from 2025: look back far enough to see them.
    mkdirSync(join(home, ".cass-memory"), { recursive: true });
    writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ validationLookbackDays: 100000 }));

    const r = validate("Implement matrix completion with CMA-ES optimization", "--verbose", "--json");
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.verdict).toBe("ACCEPT_WITH_CAUTION");
    expect(data.confidence).toBe(0.5);
    expect(data.mode).toBe("deterministic");
    expect(data.reason).toContain("0 success, 0 failure, 2 unclear of 2 related sessions");
    const sessions = data.evidence.map((e: { session: string }) => e.session).sort();
    expect(sessions).toEqual([
      join(home, ".claude", "projects", "-test-project", "agent-test123.jsonl"),
      join(home, ".codex", "sessions", "2025", "11", "25", "rollout-test.jsonl"),
    ]);
    for (const e of data.evidence) expect(e.snippet.toLowerCase()).toContain("matrix completion");
    expect(data.gate).toMatchObject({ keywords: ["implement", "matrix", "completion", "cma-es", "optimization"], passed: true, suggestedState: "draft", sessionCount: 2 });

    const human = validate("Implement matrix completion with CMA-ES optimization", "--verbose");
    expect(human.stdout).toContain("Verdict: ACCEPT_WITH_CAUTION (confidence 0.50)");
    expect(human.stdout).toContain("Evidence gate:");
    expect(human.stdout).toContain("Sessions: 2 (0 success, 0 failure)");
    expect(human.stdout).toContain("Validator: deterministic");
  });

  it("reports an unavailable history and judges without evidence", () => {
    writeSession("fail-0", "x", "The production build failed with a corrupt webpack persistent cache.");
    const r = cm(["validate", RULE, "--json"], { home, env: { ...env, CASS_MEMORY_EPISODIC: "cass", CASS_PATH: "/nonexistent/bin/cass" } });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data).toMatchObject({ verdict: "ACCEPT_WITH_CAUTION", confidence: 0.6, evidence: [] });
    expect(data.degraded.cass.reason).toBe("NOT_FOUND");
  });

  it("refuses an empty rule with exit 2 (INVALID_INPUT)", () => {
    const json = validate("   ", "--json");
    expect(json.code).toBe(2);
    const envelope = json.json();
    expect(envelope.success).toBe(false);
    expect(envelope.error).toMatchObject({ code: "INVALID_INPUT", message: "Proposed rule text is required", exitCode: 2 });
    expect(envelope.error.hint).toContain("validate");

    const human = validate("");
    expect(human.code).toBe(2);
    expect(human.stdout).toBe("");
    expect(human.stderr).toContain("Proposed rule text is required");
  });

  it("documents itself", () => {
    const help = validate("--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
    expect(help.stdout).toContain("--verbose");
    expect(help.stdout).toContain("--json");
  });
});
