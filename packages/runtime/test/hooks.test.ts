import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppError } from "@cass-memory/core";
import { checkTranscriptPath, spawnReflect } from "../src/hooks/background.js";
import { findHookEvent, HOOK_CLIENTS, hookClientSpec, hookConfigPath, type HookClient } from "../src/hooks/clients.js";
import { isCmHookCommand, planHookConfig } from "../src/hooks/config.js";
import { hookCommand, runnableWarnings, setupHooks, shellQuote } from "../src/hooks/install.js";
import { CHARS_PER_TOKEN, denyAnswer, parseHookRequest, renderHookContext } from "../src/hooks/protocol.js";
import { tempDir } from "./helpers.js";

let root: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir("cm-hooks-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => cleanup());

const NODE = "/usr/bin/node";
const CM = "/opt/cm/dist/cm.js";

function plan(client: HookClient, text: string | null, uninstall = false) {
  const spec = hookClientSpec(client);
  return planHookConfig({ spec, text, path: "/x/settings.json", uninstall, commandFor: (e) => hookCommand(NODE, CM, spec.client, e, "linux") });
}

/** A user's Claude Code settings with their own hooks and other keys. */
const USER_SETTINGS = {
  model: "opus",
  permissions: { allow: ["Bash(ls:*)"] },
  hooks: {
    PreToolUse: [{ matcher: "Edit", hooks: [{ type: "command", command: "prettier --check" }] }],
    Stop: [{ hooks: [{ type: "command", command: "say done" }] }],
  },
};

describe("hook configuration planning", () => {
  it("adds cm's entries next to the user's own, keeps everything else, and a second run changes nothing", () => {
    const text = `${JSON.stringify(USER_SETTINGS, null, 2)}\n`;
    const first = plan("claude-code", text);
    expect(first.action).toBe("updated");
    const written = JSON.parse(first.content);
    expect(written.model).toBe("opus");
    expect(written.permissions).toEqual(USER_SETTINGS.permissions);
    expect(written.hooks.Stop).toEqual(USER_SETTINGS.hooks.Stop);
    expect(written.hooks.PreToolUse[0]).toEqual(USER_SETTINGS.hooks.PreToolUse[0]);
    expect(written.hooks.PreToolUse[1]).toEqual({
      matcher: "Bash",
      hooks: [{ type: "command", command: `${NODE} ${CM} hook claude-code pre-tool-use`, timeout: 10 }],
    });
    expect(written.hooks.UserPromptSubmit[0].hooks[0].command).toBe(`${NODE} ${CM} hook claude-code user-prompt-submit`);
    expect(written.hooks.SessionEnd[0].hooks[0].command).toBe(`${NODE} ${CM} hook claude-code session-end`);
    expect(first.entries.map((e) => [e.event, e.status])).toEqual([
      ["UserPromptSubmit", "added"],
      ["SessionEnd", "added"],
      ["PreToolUse", "added"],
    ]);

    const second = plan("claude-code", first.content);
    expect(second.action).toBe("unchanged");
    expect(second.content).toBe(first.content);
    expect(second.entries.every((e) => e.status === "unchanged")).toBe(true);

    const removed = plan("claude-code", first.content, true);
    expect(removed.action).toBe("removed");
    expect(JSON.parse(removed.content)).toEqual(USER_SETTINGS);
  });

  it("replaces entries written by another cm path instead of adding a second set", () => {
    const old = JSON.stringify({ hooks: { UserPromptSubmit: [{ hooks: [{ type: "command", command: "/old/node /old/cm.js hook claude-code user-prompt-submit", timeout: 10 }] }] } });
    const next = plan("claude-code", old);
    const written = JSON.parse(next.content);
    expect(written.hooks.UserPromptSubmit).toHaveLength(1);
    expect(written.hooks.UserPromptSubmit[0].hooks[0].command).toContain(CM);
    expect(next.entries.find((e) => e.event === "UserPromptSubmit")?.status).toBe("updated");
  });

  it("keeps the python trauma_guard.py of 'cm guard --install' as the Bash guard and does not add a second one", () => {
    const guarded = {
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py" }] }] },
    };
    const result = plan("claude-code", JSON.stringify(guarded));
    const written = JSON.parse(result.content);
    expect(written.hooks.PreToolUse).toEqual(guarded.hooks.PreToolUse);
    expect(result.entries.find((e) => e.event === "PreToolUse")).toMatchObject({ status: "skipped" });
    expect(written.hooks.UserPromptSubmit).toHaveLength(1);
    // With ours already there (installed before the python guard), ours is taken out.
    const both = structuredClone(guarded) as { hooks: { PreToolUse: unknown[] } };
    both.hooks.PreToolUse.push({ matcher: "Bash", hooks: [{ type: "command", command: `${NODE} ${CM} hook claude-code pre-tool-use` }] });
    const cleaned = JSON.parse(plan("claude-code", JSON.stringify(both)).content);
    expect(cleaned.hooks.PreToolUse).toEqual(guarded.hooks.PreToolUse);
  });

  it("writes each client's own file shape", () => {
    const cursor = JSON.parse(plan("cursor", null).content);
    expect(cursor).toEqual({
      version: 1,
      hooks: {
        sessionStart: [{ command: `${NODE} ${CM} hook cursor session-start` }],
        beforeShellExecution: [{ command: `${NODE} ${CM} hook cursor before-shell-execution` }],
      },
    });
    const windsurf = JSON.parse(plan("windsurf", null).content);
    expect(windsurf).toEqual({ hooks: { pre_run_command: [{ command: `${NODE} ${CM} hook windsurf pre-run-command`, show_output: false }] } });
    const gemini = JSON.parse(plan("gemini", JSON.stringify({ mcpServers: { x: { command: "y" } } })).content);
    expect(gemini.mcpServers).toEqual({ x: { command: "y" } });
    expect(gemini.hooks.BeforeTool).toEqual([
      {
        matcher: "run_shell_command",
        hooks: [
          {
            name: "cass-memory-before-tool",
            type: "command",
            command: `${NODE} ${CM} hook gemini before-tool`,
            timeout: 10_000,
            description: "cass-memory: HOT STOVE guard for shell commands",
          },
        ],
      },
    ]);
    expect(Object.keys(gemini.hooks)).toEqual(["BeforeAgent", "SessionEnd", "BeforeTool"]);
    const codex = JSON.parse(plan("codex", null).content);
    expect(Object.keys(codex.hooks)).toEqual(["UserPromptSubmit", "PreToolUse"]);
  });

  it("refuses files it cannot rewrite losslessly", () => {
    for (const text of ["{ not json", '{"hooks": {}, // comment\n}', "[]", '{"hooks": []}', '{"hooks": {"UserPromptSubmit": {}}}']) {
      expect(() => plan("claude-code", text), text).toThrowError(AppError);
      try {
        plan("claude-code", text);
      } catch (error) {
        expect((error as AppError).code).toBe("CONFIG_INVALID");
      }
    }
  });

  it("recognises only cm's hook commands for the right client", () => {
    expect(isCmHookCommand(`${NODE} ${CM} hook claude-code session-end`, "claude-code")).toBe(true);
    expect(isCmHookCommand(`'/opt/my node/node' '/opt/my cm/cm.js' hook codex pre-tool-use`, "codex")).toBe(true);
    expect(isCmHookCommand(`/usr/bin/node /usr/lib/node_modules/cass-memory/dist/cm.cjs hook codex pre-tool-use`, "codex")).toBe(true);
    expect(isCmHookCommand(`/usr/bin/node /opt/other/xcm.cjs hook codex pre-tool-use`, "codex")).toBe(false);
    expect(isCmHookCommand("cm hook gemini before-agent", "gemini")).toBe(true);
    expect(isCmHookCommand(`${NODE} ${CM} hook claude-code session-end`, "codex")).toBe(false);
    expect(isCmHookCommand("my-tool hook claude-code session-end", "claude-code")).toBe(false);
    expect(isCmHookCommand("prettier --check", "claude-code")).toBe(false);
  });

  it("knows every client's files per scope", () => {
    const env = { HOME: "/h" };
    expect(hookConfigPath("claude-code", "user", { env, projectRoot: null })).toBe("/h/.claude/settings.json");
    expect(hookConfigPath("claude-code", "project", { env, projectRoot: "/r" })).toBe("/r/.claude/settings.json");
    expect(hookConfigPath("codex", "user", { env: { ...env, CODEX_HOME: "/c" }, projectRoot: null })).toBe("/c/hooks.json");
    expect(hookConfigPath("gemini", "project", { env, projectRoot: "/r" })).toBe("/r/.gemini/settings.json");
    expect(hookConfigPath("cursor", "user", { env, projectRoot: null })).toBe("/h/.cursor/hooks.json");
    expect(hookConfigPath("windsurf", "user", { env, projectRoot: null })).toBe("/h/.codeium/windsurf/hooks.json");
    expect(hookConfigPath("windsurf", "project", { env, projectRoot: "/r" })).toBe("/r/.windsurf/hooks.json");
    expect(() => hookClientSpec("vscode")).toThrowError(/Preview/);
    expect(HOOK_CLIENTS).toContain("claude-code");
  });
});

describe("hook protocol", () => {
  const claude = hookClientSpec("claude-code");
  const prompt = findHookEvent(claude, "UserPromptSubmit")!;
  const guard = findHookEvent(claude, "pre-tool-use")!;

  it("reads each client's payload", () => {
    expect(parseHookRequest("claude-code", prompt, { session_id: "s", cwd: "/p", hook_event_name: "UserPromptSubmit", prompt: " fix it " })).toEqual({
      action: "prompt",
      cwd: "/p",
      sessionId: "s",
      prompt: "fix it",
    });
    expect(parseHookRequest("claude-code", guard, { tool_name: "Edit", tool_input: { file_path: "x" } })).toBeNull();
    expect(parseHookRequest("claude-code", guard, { tool_name: "Bash", tool_input: { command: "ls" } })?.command).toBe("ls");
    const gemini = hookClientSpec("gemini");
    expect(parseHookRequest("gemini", findHookEvent(gemini, "BeforeTool")!, { tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } })?.command).toBe("rm -rf /");
    const cursor = hookClientSpec("cursor");
    expect(parseHookRequest("cursor", findHookEvent(cursor, "beforeShellExecution")!, { command: "ls", workspace_roots: ["/w"] })).toMatchObject({ command: "ls", cwd: "/w" });
    const windsurf = hookClientSpec("windsurf");
    expect(parseHookRequest("windsurf", findHookEvent(windsurf, "pre_run_command")!, { tool_info: { command_line: "ls", cwd: "/w" } })?.command).toBe("ls");
    expect(parseHookRequest("claude-code", prompt, "just a string")).toBeNull();
    // VS Code running Claude Code's hook file: its UserPromptSubmit cannot take context.
    expect(parseHookRequest("claude-code", prompt, { sessionId: "s", hookEventName: "UserPromptSubmit", cwd: "/p", prompt: "fix it" })).toBeNull();
    expect(parseHookRequest("claude-code", prompt, { prompt: "   " })).toBeNull();
  });

  it("answers a deny in each client's format", () => {
    expect(JSON.parse(denyAnswer("claude-code", guard, "no").stdout)).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no" },
    });
    expect(JSON.parse(denyAnswer("gemini", findHookEvent(hookClientSpec("gemini"), "BeforeTool")!, "no").stdout)).toEqual({ decision: "deny", reason: "no" });
    expect(JSON.parse(denyAnswer("cursor", findHookEvent(hookClientSpec("cursor"), "beforeShellExecution")!, "no").stdout)).toEqual({
      permission: "deny",
      user_message: "no",
      agent_message: "no",
    });
    expect(denyAnswer("windsurf", findHookEvent(hookClientSpec("windsurf"), "pre_run_command")!, "no")).toEqual({ stdout: "", stderr: "no", exitCode: 2 });
  });

  it("fits the printed context in the token budget, highest ranked rules first", () => {
    const rules = Array.from({ length: 30 }, (_, i) => ({ id: `b-${i}`, content: `Rule number ${i} `.repeat(8), antiPattern: i === 1 }));
    for (const maxTokens of [60, 120, 300, 800]) {
      const r = renderHookContext({ client: "claude-code", event: prompt, rules, heading: "Rules:", cliName: "cm", maxTokens });
      expect(r.chars).toBeLessThanOrEqual(maxTokens * CHARS_PER_TOKEN);
      if (r.answer === null) continue;
      expect(r.answer.stdout.length).toBe(r.chars);
      const text = JSON.parse(r.answer.stdout).hookSpecificOutput.additionalContext as string;
      expect(r.ids).toEqual(rules.slice(0, r.ids.length).map((x) => x.id));
      for (const id of r.ids) expect(text).toContain(`[${id}]`);
      if (r.ids.length > 1) expect(text).toContain("[b-1] AVOID:");
      expect(text).toContain("cm mark <id> --helpful|--harmful");
    }
    const none = renderHookContext({ client: "claude-code", event: prompt, rules: [], heading: "Rules:", cliName: "cm", maxTokens: 800 });
    expect(none.answer).toBeNull();
  });
});

describe("hook I/O helpers", () => {
  it("follows only regular .jsonl/.json transcripts inside the home directory", () => {
    const home = join(root, "home");
    const dir = join(home, ".claude", "projects", "p");
    mkdirSync(dir, { recursive: true });
    const good = join(dir, "s.jsonl");
    writeFileSync(good, "{}\n");
    const outside = join(root, "outside.jsonl");
    writeFileSync(outside, "{}\n");
    symlinkSync(outside, join(dir, "link.jsonl"));
    mkdirSync(join(dir, "d.jsonl"));
    const env = { HOME: home };
    expect(checkTranscriptPath(good, env)).toEqual({ ok: true, path: good });
    expect(checkTranscriptPath("relative/s.jsonl", env).ok).toBe(false);
    expect(checkTranscriptPath(outside, env)).toMatchObject({ ok: false, reason: expect.stringContaining("outside") });
    expect(checkTranscriptPath(join(dir, "link.jsonl"), env)).toMatchObject({ ok: false, reason: expect.stringContaining("outside") });
    expect(checkTranscriptPath(join(dir, "missing.jsonl"), env)).toMatchObject({ ok: false, reason: expect.stringContaining("does not exist") });
    expect(checkTranscriptPath(join(dir, "d.jsonl"), env)).toMatchObject({ ok: false, reason: expect.stringContaining("regular file") });
    expect(checkTranscriptPath(join(home, ".ssh", "id_rsa"), env)).toMatchObject({ ok: false, reason: expect.stringContaining(".jsonl") });
  });

  it("starts one detached reflection per transcript and sends its output to the hooks dir", async () => {
    const home = join(root, "home");
    mkdirSync(home, { recursive: true });
    // Stands in for cm.js: prints its arguments as JSON, then stays alive for a while.
    const script = join(root, "fake-cm.js");
    writeFileSync(script, "process.stdout.write(JSON.stringify(process.argv.slice(2)) + '\\n'); setTimeout(() => {}, 5000);\n");
    const env = { HOME: home, PATH: process.env.PATH };
    const first = spawnReflect({ node: process.execPath, cmScript: script, transcript: "/t/a.jsonl", client: "claude-code", env });
    expect(first.started).toBe(true);
    if (!first.started) return;
    try {
      const second = spawnReflect({ node: process.execPath, cmScript: script, transcript: "/t/a.jsonl", client: "claude-code", env });
      expect(second).toMatchObject({ started: false, reason: expect.stringContaining("already running"), pid: first.pid });
      let out = "";
      for (let i = 0; i < 100 && out === ""; i++) {
        out = readFileSync(first.output, "utf8");
        if (out === "") await new Promise((r) => setTimeout(r, 50));
      }
      expect(JSON.parse(out)).toEqual(["reflect", "--session", "/t/a.jsonl", "--json"]);
      expect(first.output.startsWith(join(home, ".cass-memory", "hooks", "reflect"))).toBe(true);
    } finally {
      process.kill(first.pid);
    }
  });

  it("quotes paths for sh and warns when the command as written cannot run", () => {
    expect(shellQuote("/usr/bin/node", "linux")).toBe("/usr/bin/node");
    expect(shellQuote("/opt/my dir/it's/cm.js", "linux")).toBe(`'/opt/my dir/it'\\''s/cm.js'`);
    const script = join(root, "cm.js");
    writeFileSync(script, "");
    const node = join(root, "node");
    writeFileSync(node, "");
    chmodSync(node, 0o644);
    expect(runnableWarnings(process.execPath, script, "linux")).toEqual([]);
    expect(runnableWarnings(node, script, "linux")[0]).toContain("not executable");
    expect(runnableWarnings(process.execPath, join(root, "gone.js"), "linux")[0]).toContain("does not exist");
  });

  it("setupHooks writes, backs up, is idempotent and uninstalls to the user's file", async () => {
    const home = join(root, "home");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const path = join(home, ".claude", "settings.json");
    const original = `${JSON.stringify(USER_SETTINGS, null, 2)}\n`;
    writeFileSync(path, original);
    const script = join(root, "cm.js");
    writeFileSync(script, "");
    const options = { client: "claude-code", env: { HOME: home }, cwd: root, node: process.execPath, cmScript: script, now: () => 1234 };
    const first = await setupHooks(options);
    expect(first).toMatchObject({ action: "updated", path, backup: `${path}.backup.1234`, warnings: [] });
    expect(readFileSync(`${path}.backup.1234`, "utf8")).toBe(original);
    const second = await setupHooks(options);
    expect(second.action).toBe("unchanged");
    const dry = await setupHooks({ ...options, uninstall: true, dryRun: true });
    expect(dry.action).toBe("removed");
    expect(JSON.parse(readFileSync(path, "utf8")).hooks.UserPromptSubmit).toHaveLength(1);
    const removed = await setupHooks({ ...options, uninstall: true });
    expect(removed.action).toBe("removed");
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(USER_SETTINGS);
    writeFileSync(path, "{ broken");
    await expect(setupHooks(options)).rejects.toMatchObject({ code: "CONFIG_INVALID" });
    expect(readFileSync(path, "utf8")).toBe("{ broken");
  });
});
