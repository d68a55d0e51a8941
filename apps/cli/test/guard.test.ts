import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

/**
 * `cm guard --install | --git` and the scripts they install, exercised as Claude Code and git run
 * them: the installed command is executed with real PreToolUse JSON on stdin, and real commits
 * are made through the installed pre-commit hook.
 */

let home: string;
let project: string;
let cleanup: () => void;

beforeAll(() => assertBuilt());
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  project = join(home, "proj");
  mkdirSync(join(project, ".claude"), { recursive: true });
  gitInit(project);
});
afterEach(() => cleanup());

interface TraumaLine {
  id: string;
  pattern: string;
  status?: "active" | "healed";
  message?: string;
}

/** Writes traumas.jsonl the way the earlier cm did (snake_case entries), plus a comment and a broken line. */
function writeTraumas(path: string, traumas: TraumaLine[]): void {
  mkdirSync(join(path, ".."), { recursive: true });
  const lines = traumas.map((t) =>
    JSON.stringify({
      id: t.id,
      severity: "CRITICAL",
      pattern: t.pattern,
      scope: "global",
      status: t.status ?? "active",
      trigger_event: { session_path: "/sessions/incident.jsonl", timestamp: "2026-10-01T10:00:00.000Z", ...(t.message ? { human_message: t.message } : {}) },
      created_at: "2026-10-01T10:00:00.000Z",
    }),
  );
  writeFileSync(path, ["# traumas", "{not json", ...lines].join("\n") + "\n");
}

const globalTraumas = () => join(home, ".cass-memory", "traumas.jsonl");

/** Runs a hook command exactly as written in settings.json, the way Claude Code does (sh -c). */
function runHook(command: string, input: string, env: Record<string, string> = {}) {
  return spawnSync("sh", ["-c", command], {
    cwd: project,
    input,
    encoding: "utf8",
    timeout: 20_000,
    env: { ...process.env, HOME: home, CLAUDE_PROJECT_DIR: project, CASS_MEMORY_HOME: "", XDG_DATA_HOME: "", ...env },
  });
}

function bashEvent(command: string, tool = "Bash"): string {
  return JSON.stringify({
    session_id: "abc123",
    transcript_path: join(home, ".claude", "projects", "p", "abc123.jsonl"),
    cwd: project,
    hook_event_name: "PreToolUse",
    tool_name: tool,
    tool_input: { command, description: "run it" },
  });
}

function installedCommand(): string {
  const settings = JSON.parse(readFileSync(join(project, ".claude", "settings.json"), "utf8"));
  const group = settings.hooks.PreToolUse.find((g: { matcher: string }) => g.matcher === "Bash");
  return group.hooks[0].command as string;
}

describe("cm guard --install (Claude Code)", () => {
  it("writes the script and the PreToolUse entry, and a second run changes nothing", () => {
    const first = cm(["guard", "--install", "--json"], { home, cwd: project });
    expect(first.code).toBe(0);
    const data = first.json().data;
    expect(data).toMatchObject({ message: "Trauma guard installed successfully.", alreadyInstalled: false, scriptWritten: true });
    expect(data.scriptPath).toBe(join(project, ".claude", "hooks", "trauma_guard.py"));
    expect(statSync(data.scriptPath).mode & 0o777).toBe(0o755);
    expect(readFileSync(data.scriptPath, "utf8").startsWith("#!/usr/bin/env python3\n")).toBe(true);
    expect(installedCommand()).toBe("$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py");

    const settingsBefore = readFileSync(join(project, ".claude", "settings.json"), "utf8");
    const second = cm(["guard", "--install", "--json"], { home, cwd: project });
    expect(second.json().data).toMatchObject({ message: "Trauma guard already installed.", alreadyInstalled: true, scriptWritten: false });
    expect(readFileSync(join(project, ".claude", "settings.json"), "utf8")).toBe(settingsBefore);
  });

  it("keeps the user's settings and hooks, backs the file up, and works from a subdirectory", () => {
    const settingsPath = join(project, ".claude", "settings.json");
    const original = { model: "opus", hooks: { PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "lint.sh" }] }], Stop: [{ hooks: [{ type: "command", command: "notify.sh" }] }] } };
    writeFileSync(settingsPath, JSON.stringify(original, null, 4) + "\n");
    mkdirSync(join(project, "src", "deep"), { recursive: true });
    const r = cm(["guard", "--install", "--json"], { home, cwd: join(project, "src", "deep") });
    expect(r.code).toBe(0);
    const after = JSON.parse(readFileSync(settingsPath, "utf8"));
    expect(after.model).toBe("opus");
    expect(after.hooks.Stop).toEqual(original.hooks.Stop);
    expect(after.hooks.PreToolUse[0]).toEqual(original.hooks.PreToolUse[0]);
    expect(after.hooks.PreToolUse).toHaveLength(2);
    expect(readFileSync(settingsPath, "utf8")).toContain('\n    "hooks"'); // the file's 4-space indentation is kept
    const backup = r.json().data.backup as string;
    expect(JSON.parse(readFileSync(backup, "utf8"))).toEqual(original);
  });

  it("replaces the Node shell guard of 'cm setup claude-code --hooks' instead of adding a second guard", () => {
    expect(cm(["setup", "claude-code", "--hooks", "--scope", "project", "--json"], { home, cwd: project }).code).toBe(0);
    const settingsPath = join(project, ".claude", "settings.json");
    const before = JSON.parse(readFileSync(settingsPath, "utf8"));
    expect(JSON.stringify(before.hooks.PreToolUse)).toContain("pre-tool-use");
    expect(cm(["guard", "--install", "--json"], { home, cwd: project }).code).toBe(0);
    const after = JSON.parse(readFileSync(settingsPath, "utf8"));
    expect(after.hooks.PreToolUse).toEqual([{ matcher: "Bash", hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py" }] }]);
    // The other lifecycle hooks stay.
    expect(after.hooks.UserPromptSubmit).toEqual(before.hooks.UserPromptSubmit);
  });

  it("refuses a settings file that is not JSON and writes nothing (exit 3)", () => {
    const settingsPath = join(project, ".claude", "settings.json");
    writeFileSync(settingsPath, '{ "hooks": { "PreToolUse": [ }');
    const r = cm(["guard", "--install", "--json"], { home, cwd: project });
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe("CONFIG_INVALID");
    expect(r.json().error.message).toContain("Could not parse");
    expect(readFileSync(settingsPath, "utf8")).toBe('{ "hooks": { "PreToolUse": [ }');
    expect(existsSync(join(project, ".claude", "hooks", "trauma_guard.py"))).toBe(false);
  });

  it("needs a .claude directory (exit 4) and one of --install/--git (exit 2)", () => {
    const elsewhere = join(home, "plain");
    mkdirSync(elsewhere);
    const noClaude = cm(["guard", "--install", "--json"], { home, cwd: elsewhere });
    expect(noClaude.code).toBe(4);
    expect(noClaude.json().error).toMatchObject({ code: "FILE_NOT_FOUND", message: "No .claude directory found. Is this a Claude Code project?" });
    const none = cm(["guard", "--json"], { home, cwd: project });
    expect(none.code).toBe(2);
    expect(none.json().error).toMatchObject({ code: "MISSING_REQUIRED", message: "Missing required flag: --install or --git" });
    expect(none.json().error.hint).toContain("--install");
  });
});

describe("the installed trauma_guard.py", () => {
  beforeEach(() => {
    expect(cm(["guard", "--install"], { home, cwd: project }).code).toBe(0);
  });

  it("denies a Bash command that matches an active global trauma, naming HOT STOVE, the pattern and the id", () => {
    writeTraumas(globalTraumas(), [
      { id: "trauma-0a1b2c3d", pattern: "rm\\s+-rf\\s+/", message: "wiped the staging box" },
      { id: "trauma-healed01", pattern: "git\\s+push", status: "healed" },
    ]);
    const r = runHook(installedCommand(), bashEvent("cd /srv && rm -rf /var/lib/app"));
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe("PreToolUse");
    expect(out.hookSpecificOutput.permissionDecision).toBe("deny");
    const reason = out.hookSpecificOutput.permissionDecisionReason as string;
    expect(reason).toContain("HOT STOVE");
    expect(reason).toContain("🔥");
    expect(reason).toContain("Pattern: rm\\s+-rf\\s+/");
    expect(reason).toContain("trauma-0a1b2c3d");
    expect(reason).toContain("Reason: wiped the staging box");
    expect(reason).toContain("cm trauma heal trauma-0a1b2c3d");

    // A healed trauma blocks nothing; neither does a safe command.
    expect(runHook(installedCommand(), bashEvent("git push origin main")).stdout).toBe("");
    expect(runHook(installedCommand(), bashEvent("ls -la")).stdout).toBe("");
  });

  it("uses the repository's .cass/traumas.jsonl too, and plain text with CASS_MEMORY_NO_EMOJI", () => {
    writeTraumas(join(project, ".cass", "traumas.jsonl"), [{ id: "trauma-feedf00d", pattern: "DROP\\s+DATABASE" }]);
    const r = runHook(installedCommand(), bashEvent('psql -c "drop database orders"'), { CASS_MEMORY_NO_EMOJI: "1" });
    const reason = JSON.parse(r.stdout).hookSpecificOutput.permissionDecisionReason as string;
    expect(reason.startsWith("[HOT STOVE] VISCERAL SAFETY INTERVENTION")).toBe(true);
    expect(reason).not.toContain("🔥");
    expect(reason).toContain("trauma-feedf00d");
    expect(reason).toContain("Reason: CRITICAL incident");
  });

  it("prints nothing for other tools, non-JSON input, empty input and missing registries (exit 0)", () => {
    writeTraumas(globalTraumas(), [{ id: "trauma-0a1b2c3d", pattern: "rm\\s+-rf" }]);
    for (const input of [bashEvent("rm -rf build", "Write"), "not json at all", "", "[1,2,3]", JSON.stringify({ tool_name: "Bash", tool_input: { command: 42 } })]) {
      const r = runHook(installedCommand(), input);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe("");
    }
    const noRegistry = runHook(installedCommand(), bashEvent("rm -rf build"), { HOME: join(home, "nobody") });
    expect(noRegistry.status).toBe(0);
    expect(noRegistry.stdout).toBe("");
  });

  it("reads the traumas from the SQLite store when that is the backend in use (and ignores the stale jsonl)", () => {
    expect(cm(["init", "--json"], { home, cwd: project }).code).toBe(0);
    const before = cm(["trauma", "add", "terraform\\s+destroy", "--message", "lost the staging stack", "--json"], { home, cwd: project }).json().data.entry.id as string;
    expect(cm(["storage", "migrate", "--to", "sqlite", "--json"], { home, cwd: project }).code).toBe(0);
    const after = cm(["trauma", "add", "kubectl\\s+delete\\s+namespace", "--json"], { home, cwd: project }).json().data.entry.id as string;
    expect(cm(["trauma", "heal", before, "--json"], { home, cwd: project }).code).toBe(0);
    // The YAML-era traumas.jsonl still says the first one is active; the database says healed.
    expect(readFileSync(globalTraumas(), "utf8")).toContain(before);

    const denied = runHook(installedCommand(), bashEvent("kubectl delete namespace prod"));
    expect(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason).toContain(after);
    expect(runHook(installedCommand(), bashEvent("terraform destroy -auto-approve")).stdout).toBe("");
  });

  it("skips a pattern that could backtrack catastrophically instead of hanging, and still applies the others", () => {
    writeTraumas(globalTraumas(), [
      { id: "trauma-evil0001", pattern: "(a+)+$" },
      { id: "trauma-evil0002", pattern: "(\\w+\\s?)*!" },
      { id: "trauma-good0003", pattern: "terraform\\s+destroy" },
    ]);
    const hostile = `${"a".repeat(40)}b`;
    const quiet = runHook(installedCommand(), bashEvent(hostile));
    expect(quiet.status).toBe(0);
    expect(quiet.stdout).toBe("");
    const blocked = runHook(installedCommand(), bashEvent(`${hostile} && terraform destroy -auto-approve`));
    expect(JSON.parse(blocked.stdout).hookSpecificOutput.permissionDecisionReason).toContain("trauma-good0003");
  });
});

describe("cm guard --git (pre-commit)", () => {
  const gitIn = (args: string[], env: Record<string, string> = {}) =>
    spawnSync("git", ["-c", "user.email=dev@example.com", "-c", "user.name=Dev", ...args], {
      cwd: project,
      encoding: "utf8",
      env: { ...process.env, HOME: home, CASS_MEMORY_HOME: "", XDG_DATA_HOME: "", ...env },
    });

  it("blocks a commit whose added lines match an active trauma and lets others through", () => {
    const r = cm(["guard", "--git", "--json"], { home, cwd: project });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data).toMatchObject({ message: "Git pre-commit trauma guard installed successfully.", alreadyInstalled: false });
    expect(data.hookPath).toBe(join(project, ".git", "hooks", "pre-commit"));
    expect(statSync(data.guardScriptPath).mode & 0o777).toBe(0o755);
    writeTraumas(globalTraumas(), [{ id: "trauma-c0ffee00", pattern: "git\\s+push\\s+--force", message: "lost a day of work" }]);

    writeFileSync(join(project, "safe.sh"), "echo hello\n");
    expect(gitIn(["add", "safe.sh"]).status).toBe(0);
    expect(gitIn(["commit", "-q", "-m", "safe"]).status).toBe(0);

    writeFileSync(join(project, "deploy.sh"), "echo deploying\ngit push --force origin main\n");
    expect(gitIn(["add", "deploy.sh"]).status).toBe(0);
    const blocked = gitIn(["commit", "-q", "-m", "deploy"]);
    expect(blocked.status).not.toBe(0);
    expect(blocked.stderr).toContain("HOT STOVE: COMMIT BLOCKED");
    expect(blocked.stderr).toContain("trauma-c0ffee00");
    expect(blocked.stderr).toContain("git commit --no-verify");
    expect(gitIn(["log", "--oneline"]).stdout.trim().split("\n")).toHaveLength(1);

    // Healing the trauma (status healed) lets the same commit through.
    writeTraumas(globalTraumas(), [{ id: "trauma-c0ffee00", pattern: "git\\s+push\\s+--force", status: "healed" }]);
    expect(gitIn(["commit", "-q", "-m", "deploy"]).status).toBe(0);
  });

  it("puts its lines first in an existing hook (kept, backed up) and installs once", () => {
    const hookPath = join(project, ".git", "hooks", "pre-commit");
    writeFileSync(hookPath, "#!/bin/sh\necho existing-hook-ran\nexit 0\n", { mode: 0o755 });
    const first = cm(["guard", "--git", "--json"], { home, cwd: project }).json().data;
    const text = readFileSync(hookPath, "utf8");
    expect(text.startsWith("#!/bin/sh\n# cass-memory trauma guard")).toBe(true);
    expect(text).toContain("echo existing-hook-ran\nexit 0\n");
    expect(readFileSync(first.backup, "utf8")).toBe("#!/bin/sh\necho existing-hook-ran\nexit 0\n");
    const second = cm(["guard", "--git", "--json"], { home, cwd: project }).json().data;
    expect(second).toMatchObject({ alreadyInstalled: true, message: "Git pre-commit trauma guard already installed." });
    expect(readFileSync(hookPath, "utf8")).toBe(text);

    // The guard runs even though the old hook ends with exit 0.
    writeTraumas(globalTraumas(), [{ id: "trauma-0badf00d", pattern: "TRUNCATE\\s+TABLE" }]);
    writeFileSync(join(project, "m.sql"), "truncate table users;\n");
    gitIn(["add", "m.sql"]);
    const blocked = gitIn(["commit", "-q", "-m", "m"]);
    expect(blocked.status).not.toBe(0);
    expect(blocked.stderr).toContain("trauma-0badf00d");
  });

  it("refuses outside a repository (exit 4)", () => {
    const plain = join(home, "plain");
    mkdirSync(plain);
    const r = cm(["guard", "--git", "--json"], { home, cwd: plain, env: { GIT_CEILING_DIRECTORIES: home } });
    expect(r.code).toBe(4);
    expect(r.json().error).toMatchObject({ code: "FILE_NOT_FOUND", message: "Not in a git repository." });
    expect(readdirSync(plain)).toEqual([]);
  });
});

describe("cm doctor's Safety Guard check", () => {
  const safetyGuard = () => {
    const checks = cm(["doctor", "--json"], { home, cwd: project }).json().data.checks as Array<{ category: string; item: string; status: string; message: string }>;
    return checks.find((c) => c.category === "Trauma System" && c.item === "Safety Guard");
  };

  it("warns when .claude/ has no guard, passes once installed, fails when the script is broken", () => {
    expect(safetyGuard()).toMatchObject({ status: "warn" });
    expect(safetyGuard()!.message).toContain("cm guard --install");
    cm(["guard", "--install"], { home, cwd: project });
    expect(safetyGuard()).toMatchObject({ status: "pass" });
    writeFileSync(join(project, ".claude", "hooks", "trauma_guard.py"), "def broken(:\n");
    expect(safetyGuard()).toMatchObject({ status: "fail" });
  });

  it("is absent where there is no .claude/ directory", () => {
    const plain = join(home, "plain");
    mkdirSync(plain);
    const checks = cm(["doctor", "--json"], { home, cwd: plain }).json().data.checks as Array<{ item: string }>;
    expect(checks.some((c) => c.item === "Safety Guard")).toBe(false);
  });
});
