import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm as run, gitInit, tempHome, type RunOptions } from "./helpers.js";

/**
 * `cm setup <client> --hooks` and `cm hook`: hooks are installed into a temp HOME / repository,
 * then the command strings are run exactly as written in the client's file (`sh -c <command>`)
 * with the client's hook JSON on stdin, as the client itself would run them.
 */

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const LEARNING = fileURLToPath(new URL("../../../fixtures/learning/", import.meta.url));
const cm = (args: string[], options: RunOptions) => run(args, { ...options, env: { CODEX_HOME: undefined, XDG_CONFIG_HOME: undefined, CASS_MEMORY_LLM: "none", ...options.env } });

/** XDG_CACHE_HOME of the hook commands while a test runs them through a resident process (`cm daemon`). */
let daemonCache: string | null = null;

/** Runs an installed hook command the way a client does: `sh -c`, hook JSON on stdin. */
function runHook(command: string, payload: unknown, options: { cwd?: string; env?: Record<string, string> } = {}) {
  // A generous time limit unless a test sets one: a loaded CI machine must not turn an answer
  // into a (correct) timeout and fail a test about the answer's content.
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_HOOK_TIMEOUT_MS: "20000", ...(daemonCache !== null ? { XDG_CACHE_HOME: daemonCache } : {}), ...options.env };
  for (const key of ["CASS_MEMORY_HOME", "XDG_DATA_HOME", "CASS_MEMORY_VERBOSE", "CASS_MEMORY_NO_EMOJI", "CASS_MEMORY_HOOK_MAX_TOKENS", "CASS_MEMORY_HOOK_CHILD", "CASS_MEMORY_STORAGE"]) {
    if (options.env?.[key] === undefined) delete env[key];
  }
  const r = spawnSync("sh", ["-c", command], {
    cwd: options.cwd ?? home,
    env,
    input: typeof payload === "string" ? payload : JSON.stringify(payload),
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Polls (bounded, 30 s) for the envelope a background reflection writes under the hooks dir. */
async function waitForReflect(): Promise<any> {
  const dir = join(home, ".cass-memory", "hooks", "reflect");
  for (let i = 0; i < 300; i++) {
    const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
    for (const f of files) {
      try {
        return JSON.parse(readFileSync(join(dir, f), "utf8"));
      } catch {
        // still being written
      }
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error("no reflect result appeared");
}

function readJson(path: string): any {
  return JSON.parse(readFileSync(path, "utf8"));
}

/** Our command for an event in a grouped (Claude/Codex/Gemini) or flat (Cursor/Windsurf) hook file. */
function commandFor(config: any, event: string): string {
  const list = config.hooks[event] as any[];
  const commands = list.flatMap((item) => (Array.isArray(item.hooks) ? item.hooks.map((h: any) => h.command) : [item.command])) as string[];
  const ours = commands.filter((c) => / hook [a-z-]+ [a-z-]+$/.test(c));
  expect(ours, `${event}: ${JSON.stringify(list)}`).toHaveLength(1);
  return ours[0]!;
}

const RULES = [
  ["Always run database migrations inside a transaction so a failed migration rolls back cleanly", "database"],
  ["Use parameterized SQL queries for every database access, never string concatenation", "security"],
  ["Run the flaky integration tests with --retries 2 before reporting a failure", "testing"],
  ["Keep React components small: split a component once it passes 200 lines", "architecture"],
] as const;

/** Seeds the global playbook through the CLI; returns the rule ids by category. */
function seedRules(): Record<string, string> {
  const ids: Record<string, string> = {};
  for (const [content, category] of RULES) {
    const r = cm(["playbook", "add", content, "--category", category, "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    ids[category] = data.bullet?.id ?? data.id;
    expect(ids[category], JSON.stringify(data)).toMatch(/^b-/);
  }
  return ids;
}

const TRAUMA_ID = "trauma-0badf00d";
function seedTrauma(): void {
  const dir = join(home, ".cass-memory");
  mkdirSync(dir, { recursive: true });
  const entry = {
    id: TRAUMA_ID,
    severity: "CRITICAL",
    pattern: String.raw`^git\s+push\s+.*--force`,
    scope: "global",
    status: "active",
    trigger_event: { session_path: "manual-entry", timestamp: "2026-01-01T00:00:00.000Z", human_message: "a force push wiped main" },
    created_at: "2026-01-01T00:00:00.000Z",
  };
  const healed = { ...entry, id: "trauma-0000beef", pattern: "^ls\\b", status: "healed" };
  // A pattern that would backtrack catastrophically is never run (core's matcher skips it).
  const catastrophic = { ...entry, id: "trauma-0000dead", pattern: "^(a+)+$" };
  writeFileSync(join(dir, "traumas.jsonl"), [entry, healed, catastrophic].map((e) => JSON.stringify(e)).join("\n") + "\n");
}

/** Claude Code's own settings of a user who already has hooks. */
const USER_CLAUDE_SETTINGS = {
  model: "sonnet",
  hooks: {
    PreToolUse: [{ matcher: "Edit|Write", hooks: [{ type: "command", command: "npx prettier --check ." }] }],
    Notification: [{ hooks: [{ type: "command", command: "notify-send claude" }] }],
  },
};

function claudePayload(event: string, extra: Record<string, unknown>) {
  return { session_id: "0b7d4e22-3c5a-4f0e-9b1d-2a8c7e6f5d40", transcript_path: join(home, ".claude", "projects", "p", "x.jsonl"), cwd: home, hook_event_name: event, ...extra };
}

/** Claude Code's UserPromptSubmit and PreToolUse hooks as installed, run as Claude Code runs them. */
function installedClaudeHooks(): void {
  const ids = seedRules();
  seedTrauma();
  expect(cm(["setup", "claude-code", "--hooks"], { home }).code).toBe(0);
  const settings = readJson(join(home, ".claude", "settings.json"));
  const prompt = commandFor(settings, "UserPromptSubmit");
  const guard = commandFor(settings, "PreToolUse");

  const answer = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "write a database migration for the orders table" }));
  expect(answer.code, answer.stderr).toBe(0);
  expect(answer.stderr).toBe("");
  expect(answer.stdout.length).toBeLessThanOrEqual(800 * 4 + 1);
  const out = JSON.parse(answer.stdout);
  expect(out.hookSpecificOutput.hookEventName).toBe("UserPromptSubmit");
  const context = out.hookSpecificOutput.additionalContext as string;
  expect(context).toContain(`[${ids.database}] Always run database migrations`);
  expect(context).not.toContain(ids.architecture!);
  expect(context).toContain("cm mark <id> --helpful|--harmful");

  // A prompt that matches an active trauma gets the HOT STOVE warning first.
  const warned = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "git push --force origin main, then run the database migration" }));
  expect(warned.code, warned.stderr).toBe(0);
  const warnedContext = JSON.parse(warned.stdout).hookSpecificOutput.additionalContext as string;
  expect(warnedContext.split("\n")[0]).toContain("HOT STOVE");
  expect(warnedContext).toContain(String.raw`^git\s+push\s+.*--force`);
  expect(warnedContext).toContain(`[${ids.database}]`);

  // Inside cm's own background work (reflect, warm-up) hooks answer nothing.
  const nested = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "write a database migration for the orders table" }), { env: { CASS_MEMORY_HOOK_CHILD: "1" } });
  expect(nested.code).toBe(0);
  expect(nested.stdout).toBe("");

  // A small budget (env) is respected on what is printed.
  const small = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "database migration with parameterized SQL queries" }), { env: { CASS_MEMORY_HOOK_MAX_TOKENS: "100" } });
  expect(small.code).toBe(0);
  expect(small.stdout.trim().length).toBeLessThanOrEqual(100 * 4);
  expect(small.stdout).toContain("[b-");

  // ... and so is hooks.maxTokens in config.json.
  const both = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "database migration with parameterized SQL queries" }));
  expect(both.stdout.trim().length).toBeGreaterThan(90 * 4);
  writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ hooks: { maxTokens: 90 } }));
  const viaConfig = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "database migration with parameterized SQL queries" }));
  expect(viaConfig.stdout.trim().length).toBeLessThanOrEqual(90 * 4);
  expect(viaConfig.stdout).toContain("[b-");

  // Nothing relevant, not JSON, empty: nothing printed.
  for (const input of [claudePayload("UserPromptSubmit", { prompt: "what is the weather like in Lisbon" }), "not json {", ""]) {
    const r = runHook(prompt, input);
    expect(r.code, String(input)).toBe(0);
    expect(r.stdout, String(input)).toBe("");
  }

  const deny = runHook(guard, claudePayload("PreToolUse", { tool_name: "Bash", tool_input: { command: "git push origin main --force" } }), { env: { CASS_MEMORY_NO_EMOJI: "1" } });
  expect(deny.code, deny.stderr).toBe(0);
  const decision = JSON.parse(deny.stdout).hookSpecificOutput;
  expect(decision).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
  expect(decision.permissionDecisionReason).toContain("[HOT STOVE]");
  expect(decision.permissionDecisionReason).toContain(String.raw`Pattern: ^git\s+push\s+.*--force`);
  expect(decision.permissionDecisionReason).toContain(TRAUMA_ID);
  for (const payload of [
    claudePayload("PreToolUse", { tool_name: "Bash", tool_input: { command: "git push origin main" } }),
    claudePayload("PreToolUse", { tool_name: "Bash", tool_input: { command: "ls -la" } }), // healed trauma
    claudePayload("PreToolUse", { tool_name: "Edit", tool_input: { file_path: "git push --force" } }),
    claudePayload("PreToolUse", { tool_name: "Bash", tool_input: { command: `${"a".repeat(40)}!` } }),
  ]) {
    const r = runHook(guard, payload);
    expect(r.code).toBe(0);
    expect(r.stdout, JSON.stringify(payload)).toBe("");
  }

  // The hard time limit: the work is made to outlast it (test knob); nothing printed, exit 0.
  const late = runHook(prompt, claudePayload("UserPromptSubmit", { prompt: "database migration" }), {
    env: { CASS_MEMORY_HOOK_TEST_DELAY_MS: "20000", CASS_MEMORY_HOOK_TIMEOUT_MS: "200" },
  });
  expect(late.code).toBe(0);
  expect(late.stdout).toBe("");
  const log = readFileSync(join(home, ".cass-memory", "hooks", "hook-log.jsonl"), "utf8");
  const timeouts = log.split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((e) => e.outcome === "timeout");
  expect(timeouts.length, log).toBeGreaterThan(0);
  // ... and the caches were sent to warm up in the background for the next prompt (once: a
  // warm-up still running is not started twice). A resident process finishes the work itself.
  expect(timeouts.some((e) => e.client === "claude-code" && e.event === "UserPromptSubmit" && typeof e.warmup === "number"), log).toBe(daemonCache === null);
  expect(log).toContain('"outcome":"denied"');
}

/** Windsurf's pre_run_command hook as installed: exit 2 and the reason on stderr for a trauma. */
function windsurfGuard(): void {
  seedTrauma();
  const r = cm(["setup", "windsurf", "--hooks", "--json"], { home });
  expect(r.code, r.stderr).toBe(0);
  const hooks = readJson(join(home, ".codeium", "windsurf", "hooks.json"));
  const command = commandFor(hooks, "pre_run_command");
  const payload = (line: string) => ({ agent_action_name: "pre_run_command", trajectory_id: "t1", execution_id: "e1", timestamp: "2026-11-27T10:00:00Z", tool_info: { command_line: line, cwd: home } });
  const blocked = runHook(command, payload("git push --force"));
  expect(blocked.code).toBe(2);
  expect(blocked.stdout).toBe("");
  expect(blocked.stderr).toContain(TRAUMA_ID);
  const ok = runHook(command, payload("npm run build"));
  expect(ok.code).toBe(0);
  expect(ok.stderr).toBe("");
}

describe("cm setup claude-code --hooks", () => {
  it("installs next to the user's hooks, is idempotent, and uninstall restores the user's file", () => {
    const settingsPath = join(home, ".claude", "settings.json");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const original = `${JSON.stringify(USER_CLAUDE_SETTINGS, null, 2)}\n`;
    writeFileSync(settingsPath, original);

    const r = cm(["setup", "claude-code", "--hooks", "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.path).toBe(join(home, ".claude.json")); // the MCP entry, as before
    expect(data.hooks).toMatchObject({ client: "claude-code", scope: "user", path: settingsPath, action: "updated", warnings: [] });
    expect(data.hooks.entries.map((e: any) => `${e.event}:${e.status}`)).toEqual(["UserPromptSubmit:added", "SessionEnd:added", "PreToolUse:added"]);
    expect(readFileSync(data.hooks.backup, "utf8")).toBe(original);

    const settings = readJson(settingsPath);
    expect(settings.model).toBe("sonnet");
    expect(settings.hooks.Notification).toEqual(USER_CLAUDE_SETTINGS.hooks.Notification);
    expect(settings.hooks.PreToolUse[0]).toEqual(USER_CLAUDE_SETTINGS.hooks.PreToolUse[0]);
    expect(settings.hooks.PreToolUse[1].matcher).toBe("Bash");
    const command = commandFor(settings, "UserPromptSubmit");
    // Absolute node and cm script, so GUI clients without the shell PATH can run it.
    expect(command).toBe(`${process.execPath} ${join(fileURLToPath(new URL("..", import.meta.url)), "dist", "cm.js")} hook claude-code user-prompt-submit`);

    const bytes = readFileSync(settingsPath, "utf8");
    const again = cm(["setup", "claude-code", "--hooks", "--json"], { home });
    expect(again.code, again.stderr).toBe(0);
    expect(again.json().data.hooks.action).toBe("unchanged");
    expect(readFileSync(settingsPath, "utf8")).toBe(bytes);

    const dry = cm(["setup", "claude-code", "--hooks", "--uninstall", "--dry-run"], { home });
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout)).toEqual(USER_CLAUDE_SETTINGS);
    expect(readFileSync(settingsPath, "utf8")).toBe(bytes);

    const un = cm(["setup", "claude-code", "--hooks", "--uninstall", "--json"], { home });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json().data.hooks.action).toBe("removed");
    expect(readJson(settingsPath)).toEqual(USER_CLAUDE_SETTINGS);
    const un2 = cm(["setup", "claude-code", "--hooks", "--uninstall", "--json"], { home });
    expect(un2.json().data.hooks.action).toBe("unchanged");
  });

  it("runs the installed commands: rules within budget, HOT STOVE deny, nothing for safe or bad input, hard timeout", () => installedClaudeHooks());

  it("SessionEnd returns at once and a detached reflect learns from the transcript", async () => {
    expect(cm(["setup", "claude-code", "--hooks"], { home }).code).toBe(0);
    const end = commandFor(readJson(join(home, ".claude", "settings.json")), "SessionEnd");
    const project = join(home, ".claude", "projects", "-work-shop-api");
    mkdirSync(project, { recursive: true });
    const transcript = join(project, "5f1c2a7e-9d41-4b8e-a3c2-6e0f1d2b9a11.jsonl");
    copyFileSync(join(LEARNING, "claude", "-work-shop-api", "5f1c2a7e-9d41-4b8e-a3c2-6e0f1d2b9a11.jsonl"), transcript);

    const r = runHook(end, { ...claudePayload("SessionEnd", { reason: "exit" }), transcript_path: transcript });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("");

    const envelope = await waitForReflect();
    expect(envelope).toMatchObject({ success: true, command: "reflect" });
    expect(envelope.data.sessions).toEqual([expect.objectContaining({ path: transcript, status: "processed" })]);
    const log = readFileSync(join(home, ".cass-memory", "hooks", "hook-log.jsonl"), "utf8");
    expect(log).toContain('"outcome":"reflect-started"');

    // A transcript outside the home directory is not followed.
    const outside = runHook(end, { ...claudePayload("SessionEnd", { reason: "exit" }), transcript_path: "/etc/passwd.jsonl" });
    expect(outside.code).toBe(0);
    expect(outside.stdout).toBe("");
    expect(readFileSync(join(home, ".cass-memory", "hooks", "hook-log.jsonl"), "utf8")).toContain('"reason":"transcript_path does not exist"');
  });

  it("keeps the python trauma_guard.py of 'cm guard --install' in a project and adds no second Bash guard", () => {
    const repo = join(home, "work", "app");
    mkdirSync(join(repo, ".claude"), { recursive: true });
    gitInit(repo);
    const guarded = { hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py" }] }] } };
    writeFileSync(join(repo, ".claude", "settings.json"), JSON.stringify(guarded, null, 2));
    const r = cm(["setup", "claude-code", "--hooks", "--scope", "project", "--json"], { home, cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().data.hooks.entries.find((e: any) => e.event === "PreToolUse")).toMatchObject({ status: "skipped" });
    const settings = readJson(join(repo, ".claude", "settings.json"));
    expect(settings.hooks.PreToolUse).toEqual(guarded.hooks.PreToolUse);
    expect(commandFor(settings, "UserPromptSubmit")).toContain("hook claude-code user-prompt-submit");
  });

  it("refuses an invalid settings file (CONFIG_INVALID, exit 3) and leaves everything untouched", () => {
    mkdirSync(join(home, ".claude"), { recursive: true });
    writeFileSync(join(home, ".claude", "settings.json"), '{ "hooks": ');
    const r = cm(["setup", "claude-code", "--hooks", "--json"], { home });
    expect(r.code).toBe(3);
    expect(r.json().error.code).toBe("CONFIG_INVALID");
    expect(readFileSync(join(home, ".claude", "settings.json"), "utf8")).toBe('{ "hooks": ');
    expect(existsSync(join(home, ".claude.json"))).toBe(false);
    expect(readdirSync(join(home, ".claude"))).toEqual(["settings.json"]);
  });

  it("explains clients without hooks and --uninstall without --hooks (exit 2, nothing written)", () => {
    const vscode = cm(["setup", "vscode", "--hooks", "--scope", "user", "--json"], { home });
    expect(vscode.code).toBe(2);
    expect(vscode.json().error.message).toContain("VS Code");
    const un = cm(["setup", "claude-code", "--uninstall", "--json"], { home });
    expect(un.code).toBe(2);
    expect(readdirSync(home)).not.toContain(".claude.json");
  });
});

describe("cm setup --hooks for the other clients", () => {
  it("gemini: BeforeAgent context, BeforeTool deny, SessionEnd reflection, merged into the MCP settings file", async () => {
    const ids = seedRules();
    seedTrauma();
    const r = cm(["setup", "gemini", "--hooks", "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    const settings = readJson(join(home, ".gemini", "settings.json"));
    expect(settings.mcpServers["cass-memory"]).toBeDefined();
    expect(Object.keys(settings.hooks)).toEqual(["BeforeAgent", "SessionEnd", "BeforeTool"]);
    expect(settings.hooks.BeforeTool[0].matcher).toBe("run_shell_command");
    const base = { session_id: "g1", transcript_path: join(home, ".gemini", "tmp", "x.json"), cwd: home, timestamp: "2026-11-27T10:00:00Z" };

    const ctx = runHook(commandFor(settings, "BeforeAgent"), { ...base, hook_event_name: "BeforeAgent", prompt: "flaky integration tests keep failing" });
    expect(ctx.code, ctx.stderr).toBe(0);
    const out = JSON.parse(ctx.stdout);
    expect(out.hookSpecificOutput.hookEventName).toBe("BeforeAgent");
    expect(out.hookSpecificOutput.additionalContext).toContain(`[${ids.testing}]`);

    const deny = runHook(commandFor(settings, "BeforeTool"), { ...base, hook_event_name: "BeforeTool", tool_name: "run_shell_command", tool_input: { command: "git push --force origin main" } });
    expect(JSON.parse(deny.stdout)).toMatchObject({ decision: "deny", reason: expect.stringContaining(TRAUMA_ID) });
    const safe = runHook(commandFor(settings, "BeforeTool"), { ...base, hook_event_name: "BeforeTool", tool_name: "run_shell_command", tool_input: { command: "npm test" } });
    expect(safe.stdout).toBe("");

    // SessionEnd with a real Gemini CLI session file where Gemini keeps them.
    const chats = join(home, ".gemini", "tmp", "hash123", "chats");
    mkdirSync(chats, { recursive: true });
    const transcript = join(chats, "session-test.json");
    copyFileSync(fileURLToPath(new URL("../../../fixtures/cass/sessions/gemini/hash123/chats/session-test.json", import.meta.url)), transcript);
    const end = runHook(commandFor(settings, "SessionEnd"), { ...base, hook_event_name: "SessionEnd", reason: "exit", transcript_path: transcript });
    expect(end.code, end.stderr).toBe(0);
    expect(end.stdout).toBe("");
    const envelope = await waitForReflect();
    expect(envelope).toMatchObject({ success: true, command: "reflect" });
    expect(envelope.data.sessions).toEqual([expect.objectContaining({ path: transcript, status: "processed" })]);

    expect(cm(["setup", "gemini", "--hooks", "--json"], { home }).json().data.hooks.action).toBe("unchanged");
    expect(cm(["setup", "gemini", "--hooks", "--uninstall"], { home }).code).toBe(0);
    const after = readJson(join(home, ".gemini", "settings.json"));
    expect(after.hooks).toBeUndefined();
    expect(after.mcpServers["cass-memory"]).toBeDefined();
  });

  it("codex: hooks.json with UserPromptSubmit context and PreToolUse deny", () => {
    const ids = seedRules();
    seedTrauma();
    const r = cm(["setup", "codex", "--hooks", "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().data.hooks.notes.join(" ")).toContain("session-end");
    expect(r.json().data.hooks.notes.join(" ")).toContain("cm daemon start");
    const hooks = readJson(join(home, ".codex", "hooks.json"));
    expect(Object.keys(hooks.hooks)).toEqual(["UserPromptSubmit", "PreToolUse"]);
    const base = { session_id: "c1", transcript_path: join(home, ".codex", "sessions", "r.jsonl"), cwd: home, model: "gpt-5", permission_mode: "default" };
    const ctx = runHook(commandFor(hooks, "UserPromptSubmit"), { ...base, hook_event_name: "UserPromptSubmit", prompt: "split this React component, it is too large" });
    expect(JSON.parse(ctx.stdout).hookSpecificOutput.additionalContext).toContain(`[${ids.architecture}]`);
    const deny = runHook(commandFor(hooks, "PreToolUse"), { ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "git push -f --force origin" } });
    expect(JSON.parse(deny.stdout).hookSpecificOutput.permissionDecision).toBe("deny");
  });

  it("cursor: sessionStart answers the most effective rules, beforeShellExecution denies", () => {
    const ids = seedRules();
    seedTrauma();
    const repo = join(home, "work", "web");
    mkdirSync(repo, { recursive: true });
    gitInit(repo);
    const r = cm(["setup", "cursor", "--hooks", "--scope", "project", "--json"], { home, cwd: repo });
    expect(r.code, r.stderr).toBe(0);
    const hooks = readJson(join(repo, ".cursor", "hooks.json"));
    expect(hooks.version).toBe(1);
    const base = { conversation_id: "cv1", generation_id: "g1", workspace_roots: [repo], cursor_version: "2.1.0" };
    const start = runHook(commandFor(hooks, "sessionStart"), { ...base, hook_event_name: "sessionStart" }, { cwd: repo });
    expect(start.code, start.stderr).toBe(0);
    const context = JSON.parse(start.stdout).additional_context as string;
    for (const id of Object.values(ids)) expect(context).toContain(`[${id}]`);
    const deny = runHook(commandFor(hooks, "beforeShellExecution"), { ...base, hook_event_name: "beforeShellExecution", command: "git push --force", cwd: repo }, { cwd: repo });
    expect(JSON.parse(deny.stdout)).toMatchObject({ permission: "deny", agent_message: expect.stringContaining("HOT STOVE") });
  });

  it("windsurf: pre_run_command blocks with exit 2 and the reason on stderr", () => {
    windsurfGuard();

    // Windsurf's MCP file is user-only; project-scope hooks are written alone.
    const repo = join(home, "work", "ws");
    mkdirSync(repo, { recursive: true });
    gitInit(repo);
    const project = cm(["setup", "windsurf", "--hooks", "--scope", "project", "--json"], { home, cwd: repo });
    expect(project.code, project.stderr).toBe(0);
    expect(project.json().data.hooks).toMatchObject({ scope: "project", path: join(repo, ".windsurf", "hooks.json"), action: "created" });
    expect(project.json().data.hooks.notes.join(" ")).toContain("only the hooks were written");
    expect(commandFor(readJson(join(repo, ".windsurf", "hooks.json")), "pre_run_command")).toContain("hook windsurf pre-run-command");
  });
});

describe("cm hook through the resident process (cm daemon)", () => {
  const daemon = (args: string[]) => cm(["daemon", ...args, "--json"], { home, env: { XDG_CACHE_HOME: daemonCache ?? undefined } });
  beforeEach(() => {
    daemonCache = join(home, "xdg-cache");
    const started = daemon(["start"]);
    expect(started.code, started.stderr).toBe(0);
  });
  afterEach(() => {
    daemon(["stop"]);
    daemonCache = null;
  });
  const served = (): number => daemon(["status"]).json().data.commands as number;

  it("answers Claude Code's hooks as a process of their own does, the time limit included", () => {
    installedClaudeHooks();
    expect(served()).toBeGreaterThanOrEqual(10);
  });

  it("passes on a hook's exit code (windsurf's deny)", () => {
    windsurfGuard();
    expect(served()).toBe(2);
  });
});
