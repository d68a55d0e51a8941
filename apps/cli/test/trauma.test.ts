import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
// No cass anywhere: history comes from the native session readers.
const env = { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, CASS_PATH: undefined, CASS_MEMORY_EPISODIC: "native", CASS_MEMORY_LLM: "none" };

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const run = (args: string[], extra: { cwd?: string; env?: Record<string, string | undefined> } = {}) =>
  cm(args, { home, ...(extra.cwd !== undefined ? { cwd: extra.cwd } : {}), env: { ...env, ...extra.env } });
const registry = () => join(home, ".cass-memory", "traumas.jsonl");
const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter((l) => l !== "");

function gitRepo(): string {
  const repo = join(home, "repo");
  mkdirSync(repo, { recursive: true });
  spawnSync("git", ["init", "-q"], { cwd: repo });
  return repo;
}

describe("cm trauma add / list", () => {
  it("adds an entry in the original's snake_case format and lists it", () => {
    const add = run(["trauma", "add", String.raw`git\s+push\s+.*--force`, "--message", "force-pushed over main", "--json"]);
    expect(add.code).toBe(0);
    const env1 = add.json();
    expect(env1).toMatchObject({ success: true, command: "trauma add" });
    const entry = env1.data.entry;
    expect(entry.id).toMatch(/^trauma-[0-9a-f]{8}$/);
    // Field names and nesting of reference §4.7.
    const stored = lines(registry()).map((l) => JSON.parse(l));
    expect(stored).toEqual([entry]);
    expect(Object.keys(stored[0])).toEqual(["id", "severity", "pattern", "scope", "status", "trigger_event", "created_at"]);
    expect(Object.keys(stored[0].trigger_event)).toEqual(["session_path", "timestamp", "human_message"]);
    expect(stored[0]).toMatchObject({ severity: "CRITICAL", scope: "global", status: "active", trigger_event: { session_path: "manual-entry", human_message: "force-pushed over main" } });

    const list = run(["trauma", "list", "--json"]);
    expect(list.code).toBe(0);
    expect(list.json()).toMatchObject({ success: true, command: "trauma list", data: { traumas: [entry], healedCount: 0 } });
    const human = run(["trauma", "ls"]);
    expect(human.stdout).toContain("ACTIVE TRAUMAS (1)");
    expect(human.stdout).toContain(`[CRITICAL] ${entry.id}`);
    expect(human.stdout).toContain("Reason:  force-pushed over main");
    const humanAdd = run(["trauma", "add", "DROP TABLE", "--severity", "FATAL"]);
    expect(humanAdd.stdout).toMatch(/Added trauma trauma-[0-9a-f]{8}/);
    expect(humanAdd.stdout).toContain("The safety guard will now block this pattern.");
  });

  it("an empty registry lists nothing", () => {
    const r = run(["trauma", "list"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("No active traumas found. (Safe... for now.)");
  });

  it("refuses catastrophic and invalid patterns with exit 2, a hint and details; writes nothing", () => {
    const evil = run(["trauma", "add", "(a+)+$", "--json"]);
    expect(evil.code).toBe(2);
    const e = evil.json();
    expect(e).toMatchObject({ success: false, command: "trauma", error: { code: "INVALID_INPUT", exitCode: 2, details: { pattern: "(a+)+$", reason: "catastrophic" } } });
    expect(e.error.hint).toMatch(/escape/);
    const invalid = run(["trauma", "add", "(unclosed", "--json"]);
    expect(invalid.code).toBe(2);
    expect(invalid.json().error.message).toMatch(/^Invalid regex pattern: /);
    const human = run(["trauma", "add", String.raw`\s*\s*$`]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("Pattern can backtrack catastrophically");
    expect(human.stderr).toContain("Hint:");
    expect(run(["trauma", "add", "x", "--severity", "LOW", "--json"]).json().error.code).toBe("INVALID_INPUT");
    expect(existsSync(registry())).toBe(false);
  });

  it("project scope writes .cass/traumas.jsonl in the repository, and needs one", () => {
    const outside = run(["trauma", "add", "x", "--scope", "project", "--json"]);
    expect(outside.code).toBe(3);
    expect(outside.json().error).toMatchObject({ code: "CONFIG_INVALID", message: "Cannot save project-scoped trauma: not in a git repository" });
    const repo = gitRepo();
    const ok = run(["trauma", "add", "terraform\\s+destroy", "--scope", "project", "--json"], { cwd: repo });
    expect(ok.code).toBe(0);
    expect(lines(join(repo, ".cass", "traumas.jsonl")).map((l) => JSON.parse(l).id)).toEqual([ok.json().data.entry.id]);
    expect(run(["trauma", "list", "--json"], { cwd: repo }).json().data.traumas).toHaveLength(1);
  });

  it("`cm trauma` alone prints help on stderr and fails like the other command groups", () => {
    const r = run(["trauma"]);
    expect(r.code).not.toBe(0);
    expect(r.code).toBe(run(["privacy"]).code);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("heal");
    expect(run(["--help"]).stdout).toContain("Safety:    trauma list|add|heal|remove|import, guard --install|--git, audit --trauma");
  });
});

describe("cm trauma heal / remove", () => {
  it("heal rewrites the entry in place, keeps hand-written lines; unknown ids exit 2", () => {
    const id = run(["trauma", "add", "one", "--json"]).json().data.entry.id as string;
    const other = run(["trauma", "add", "two", "--json"]).json().data.entry.id as string;
    writeFileSync(registry(), `${readFileSync(registry(), "utf8")}this line is not JSON\n`);
    const heal = run(["trauma", "heal", id, "--json"]);
    expect(heal.code).toBe(0);
    expect(heal.json()).toMatchObject({ command: "trauma heal", data: { updated: 1, checkedPaths: [registry()], updatedPaths: [registry()] } });
    const after = lines(registry());
    expect(after[2]).toBe("this line is not JSON");
    expect(JSON.parse(after[0]!)).toMatchObject({ id, status: "healed" });
    expect(JSON.parse(after[1]!)).toMatchObject({ id: other, status: "active" });
    expect(run(["trauma", "list", "--json"]).json().data).toMatchObject({ healedCount: 1 });

    const again = run(["trauma", "heal", id, "--json"]);
    expect(again.code).toBe(2);
    expect(again.json()).toMatchObject({ command: "trauma", error: { code: "TRAUMA_NOT_FOUND", message: `Trauma ${id} not found (nothing healed)` } });
    const human = run(["trauma", "heal", other]);
    expect(human.stdout).toContain(`Healed trauma ${other} (1 entry)`);
  });

  it("remove needs --force, then confirmation; --yes removes", () => {
    const id = run(["trauma", "add", "one", "--json"]).json().data.entry.id as string;
    const noForce = run(["trauma", "remove", id, "--json"]);
    expect(noForce.code).toBe(2);
    expect(noForce.json().error).toMatchObject({ code: "MISSING_REQUIRED", message: "Refusing to remove trauma without --force" });

    // No terminal to confirm on: a soft success that changes nothing.
    const declined = run(["trauma", "remove", id, "--force", "--json"]);
    expect(declined.code).toBe(0);
    expect(declined.json()).toMatchObject({
      success: true,
      command: "trauma remove",
      data: { removed: 0, checkedPaths: [], updatedPaths: [] },
      effect: false,
      reason: "User did not confirm removal",
    });
    const declinedHuman = run(["trauma", "rm", id, "--force"]);
    expect(declinedHuman.code).toBe(0);
    expect(declinedHuman.stdout).toBe("");
    expect(lines(registry())).toHaveLength(1);

    const removed = run(["trauma", "rm", id, "--force", "--yes", "--json"]);
    expect(removed.code).toBe(0);
    expect(removed.json()).toMatchObject({ command: "trauma remove", data: { removed: 1, updatedPaths: [registry()] } });
    expect(readFileSync(registry(), "utf8")).toBe("");
    const missing = run(["trauma", "remove", id, "--force", "--yes", "--json"]);
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("TRAUMA_NOT_FOUND");
  });
});

describe("cm trauma import", () => {
  it("imports good lines and reports skipped ones as top-level warnings", () => {
    const file = join(home, "traumas.txt");
    writeFileSync(file, [String.raw`rm\s+-rf\s+/`, JSON.stringify("DROP DATABASE"), JSON.stringify({ pattern: "mkfs" }), JSON.stringify({ x: 1 }), "(unclosed", "(a|ab)+$", ""].join("\n"));
    const r = run(["trauma", "import", file, "--severity", "fatal", "--json"]);
    expect(r.code).toBe(0);
    const out = r.json();
    expect(out).toMatchObject({ success: true, command: "trauma import", data: { imported: 3, warningsCount: 3 } });
    expect(Object.keys(out.data)).toEqual(["imported", "warningsCount"]);
    expect(out.warnings[0]).toBe("Line 4: missing pattern (skipped)");
    expect(out.warnings[1]).toMatch(/^Line 5: invalid regex pattern \(skipped\): /);
    expect(out.warnings[2]).toMatch(/^Line 6: unsafe regex pattern \(skipped\): /);
    const stored = lines(registry()).map((l) => JSON.parse(l));
    expect(stored.map((s) => s.pattern)).toEqual([String.raw`rm\s+-rf\s+/`, "DROP DATABASE", "mkfs"]);
    expect(stored[0]).toMatchObject({ severity: "FATAL", trigger_event: { session_path: "import", human_message: `Imported from ${file}` } });
    const human = run(["trauma", "import", file]);
    expect(human.stdout).toContain("Imported 3 trauma entries");
    expect(human.stdout).toContain("Warnings (3):");
  });

  it("a missing file is FILE_NOT_FOUND (exit 4)", () => {
    const r = run(["trauma", "import", join(home, "nope.txt"), "--json"]);
    expect(r.code).toBe(4);
    expect(r.json().error).toMatchObject({ code: "FILE_NOT_FOUND", message: `File not found: ${join(home, "nope.txt")}` });
  });
});

describe("cm context and traumas", () => {
  it("warns with traumaWarning and the stderr banner", () => {
    run(["trauma", "add", String.raw`git\s+push\s+.*--force`, "--message", "overwrote main"]);
    const r = run(["context", "git push origin main --force", "--json", "--no-history"]);
    expect(r.code).toBe(0);
    expect(r.json().data.traumaWarning).toEqual({ pattern: String.raw`git\s+push\s+.*--force`, reason: "overwrote main", reference: "manual-entry" });
    expect(r.stderr).toContain("CRITICAL WARNING: VISCERAL SAFETY INTERVENTION");
    expect(r.stderr).toContain("DO NOT PROCEED WITHOUT EXTREME CAUTION.");
    const safe = run(["context", "git status", "--json", "--no-history"]);
    expect(safe.json().data.traumaWarning).toBeUndefined();
    expect(safe.stderr).not.toContain("VISCERAL");
  });

  it("an evil pattern written into the registry by hand never hangs cm context", { timeout: 60_000 }, () => {
    mkdirSync(join(home, ".cass-memory"), { recursive: true });
    const evil = {
      id: "trauma-deadbeef",
      severity: "FATAL",
      pattern: String.raw`^(\w+\s?)+$`,
      scope: "global",
      status: "active",
      trigger_event: { session_path: "manual-entry", timestamp: "2026-01-01T00:00:00.000Z", human_message: "by hand" },
      created_at: "2026-01-01T00:00:00.000Z",
    };
    writeFileSync(registry(), `${JSON.stringify(evil)}\n`);
    // Run by a backtracking engine, this pattern takes hours on this task; finishing is the proof.
    const task = `${"aaaa ".repeat(1000)}!`;
    const r = run(["context", task, "--json", "--no-history"]);
    expect(r.code).toBe(0);
    expect(r.json().data.traumaWarning).toBeUndefined();
    expect(run(["trauma", "list", "--json"]).json().data.traumas).toEqual([evil]);
  });
});

describe("cm audit --trauma", () => {
  function writeSession(): string {
    const dir = join(home, ".claude", "projects", "-work-app");
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "disaster.jsonl");
    const base = { cwd: "/work/app", sessionId: "disaster", version: "2.0.37" };
    const records = [
      { ...base, type: "user", uuid: "u1", timestamp: "2025-11-20T10:00:00.000Z", message: { role: "user", content: "clean the build output please" } },
      {
        ...base,
        type: "assistant",
        uuid: "a1",
        timestamp: "2025-11-20T10:00:05.000Z",
        message: { role: "assistant", content: [{ type: "text", text: "Cleaning up." }, { type: "tool_use", id: "t1", name: "Bash", input: { command: "cd /work/app && rm -rf /home/dev/app", description: "clean" } }] },
      },
      { ...base, type: "assistant", uuid: "a2", timestamp: "2025-11-20T10:00:09.000Z", message: { role: "assistant", content: "I am so sorry: that deleted your home directory. Then I ran git push origin main --force to fix it." } },
    ];
    writeFileSync(path, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    return path;
  }

  it("finds DOOM patterns in real session files read natively; the fixtures alone give none", { timeout: 60_000 }, () => {
    cpSync(join(SESSIONS, "claude_code", "projects"), join(home, ".claude", "projects"), { recursive: true });
    const clean = run(["audit", "--trauma", "--days", "100000", "--json"]);
    expect(clean.code).toBe(0);
    expect(clean.json()).toMatchObject({ success: true, command: "audit", data: { candidates: [] } });

    const path = writeSession();
    const r = run(["audit", "--trauma", "--days", "100000", "--json"]);
    expect(r.code).toBe(0);
    const candidates = r.json().data.candidates as Array<Record<string, string>>;
    const system = candidates.find((c) => c.description === "Recursive deletion of system directories");
    expect(system).toMatchObject({ sessionPath: path, evidence: "rm -rf /home", context: "Executed: cd /work/app && rm -rf /home/dev/app" });
    expect(candidates.map((c) => c.description)).toContain("Recursive force deletion (high risk)");
    const human = run(["audit", "--trauma", "--days", "100000"]);
    expect(human.stdout).toContain("[TRAUMA CANDIDATE]");
    expect(human.stdout).toContain('trauma add "<pattern>" --severity CRITICAL --message "..."');
  });

  it("with no history at all it reports nothing (and with cass missing, degraded) instead of failing", () => {
    const none = run(["audit", "--trauma"]);
    expect(none.code).toBe(0);
    expect(none.stdout).toContain("No potential traumas found (or maybe you hid them well).");
    const cass = run(["audit", "--trauma", "--json"], { env: { CASS_MEMORY_EPISODIC: "cass", CASS_PATH: "/nonexistent/bin/cass" } });
    expect(cass.code).toBe(0);
    expect(cass.json().data).toMatchObject({ candidates: [], degraded: { cass: { available: false, reason: "NOT_FOUND" } } });
  });
});
