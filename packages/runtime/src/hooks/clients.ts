import { join } from "node:path";
import { AppError } from "@cass-memory/core";
import { homeDir } from "../paths.js";
import { requireProjectRoot, type SetupScope } from "../setup/clients.js";

/**
 * The agent clients whose lifecycle hooks `cm setup <client> --hooks` installs, and what each hook
 * does. Pure: paths come from an injected environment, nothing is read or written here.
 *
 * Facts about each client (file locations, event names, stdin fields, answer format) are written
 * down with their sources in docs/hooks.md.
 */

type Env = Record<string, string | undefined>;

/** What cm does when a hook fires. */
export type HookAction =
  /** Rank the rules against the user's prompt and answer them as additional context. */
  | "prompt"
  /** No prompt yet (session start): answer the most effective rules as additional context. */
  | "session-start"
  /** Learn from the session's transcript in a detached `cm reflect`. */
  | "session-end"
  /** Deny a shell command that matches an active trauma (HOT STOVE). */
  | "shell-guard";

/** How a client's hook configuration file is shaped. */
export type HookFileFormat =
  /** `{hooks: {Event: [{matcher?, hooks: [{type: "command", command, timeout}]}]}}` (Claude Code, Codex, Gemini CLI). */
  | "grouped"
  /** `{version: 1, hooks: {event: [{command}]}}` (Cursor). */
  | "cursor"
  /** `{hooks: {event: [{command, show_output}]}}` (Windsurf Cascade). */
  | "windsurf";

export interface HookEventSpec {
  /** The client's own event name, as written in its configuration. */
  readonly event: string;
  /** The event argument of `cm hook <client> <event>` (kebab-case of the client's name). */
  readonly arg: string;
  readonly action: HookAction;
  /** Tool matcher for tool events ("Bash", "run_shell_command"). */
  readonly matcher?: string;
}

export interface HookClientSpec {
  readonly client: HookClient;
  readonly label: string;
  readonly format: HookFileFormat;
  readonly scopes: readonly SetupScope[];
  /** Events cm installs, in the order they are written. */
  readonly events: readonly HookEventSpec[];
  /** Timeout written next to each command, in the client's unit (Claude/Codex: s, Gemini: ms); none for Cursor/Windsurf. */
  readonly timeout?: { value: number; unit: "s" | "ms" };
  /** What the user should know after installing (enable flags, trust prompts, what is not covered). */
  notes(scope: SetupScope): string[];
}

export const HOOK_CLIENTS = ["claude-code", "codex", "gemini", "cursor", "windsurf"] as const;
export type HookClient = (typeof HOOK_CLIENTS)[number];

/** Clients `cm setup` knows (MCP) that have no hook system cm can install into. */
export const CLIENTS_WITHOUT_HOOKS: Record<string, string> = {
  vscode:
    "VS Code's agent hooks are a Preview feature whose format depends on the agent harness; cm does not write them yet. Use 'cm setup vscode --agents-md' so the agent is told to call cm, or see docs/hooks.md.",
};

const SPECS: Record<HookClient, HookClientSpec> = {
  "claude-code": {
    client: "claude-code",
    label: "Claude Code",
    format: "grouped",
    scopes: ["user", "project"],
    timeout: { value: 10, unit: "s" },
    events: [
      { event: "UserPromptSubmit", arg: "user-prompt-submit", action: "prompt" },
      { event: "SessionEnd", arg: "session-end", action: "session-end" },
      { event: "PreToolUse", arg: "pre-tool-use", action: "shell-guard", matcher: "Bash" },
    ],
    notes: () => ["Claude Code loads hook changes at the start of a session; review them with /hooks."],
  },
  codex: {
    client: "codex",
    label: "Codex",
    format: "grouped",
    scopes: ["user", "project"],
    timeout: { value: 10, unit: "s" },
    events: [
      { event: "UserPromptSubmit", arg: "user-prompt-submit", action: "prompt" },
      { event: "PreToolUse", arg: "pre-tool-use", action: "shell-guard", matcher: "Bash" },
    ],
    notes: (scope) => [
      "Codex asks you to trust new hooks (/hooks). Older Codex versions also need [features] codex_hooks = true in config.toml.",
      "Codex has no session-end event (its Stop fires after every turn), so learning is not hooked: run 'cm reflect' yourself or from a scheduler.",
      ...(scope === "project" ? ["Codex reads a project's .codex/hooks.json only when the project is trusted."] : []),
    ],
  },
  gemini: {
    client: "gemini",
    label: "Gemini CLI",
    format: "grouped",
    scopes: ["user", "project"],
    timeout: { value: 10_000, unit: "ms" },
    events: [
      { event: "BeforeAgent", arg: "before-agent", action: "prompt" },
      { event: "SessionEnd", arg: "session-end", action: "session-end" },
      { event: "BeforeTool", arg: "before-tool", action: "shell-guard", matcher: "run_shell_command" },
    ],
    notes: () => [
      "Restart Gemini CLI to load the hooks and check them with /hooks panel. If it reports the hooks system disabled, enable it in /settings (Advanced).",
    ],
  },
  cursor: {
    client: "cursor",
    label: "Cursor",
    format: "cursor",
    scopes: ["user", "project"],
    events: [
      { event: "sessionStart", arg: "session-start", action: "session-start" },
      { event: "beforeShellExecution", arg: "before-shell-execution", action: "shell-guard" },
    ],
    notes: () => [
      "Cursor's beforeSubmitPrompt cannot add context, so cm answers the playbook's most effective rules at sessionStart instead of per prompt.",
      "Cursor's stop fires after every agent loop and its transcripts are not files cm reads, so learning is not hooked: run 'cm reflect'.",
    ],
  },
  windsurf: {
    client: "windsurf",
    label: "Windsurf",
    format: "windsurf",
    scopes: ["user", "project"],
    events: [{ event: "pre_run_command", arg: "pre-run-command", action: "shell-guard" }],
    notes: () => [
      "Windsurf's Cascade hooks can block actions but cannot add context, so only the HOT STOVE guard is installed; use 'cm setup windsurf --agents-md' or the MCP server for rules.",
    ],
  },
};

export function isHookClient(value: string): value is HookClient {
  return (HOOK_CLIENTS as readonly string[]).includes(value);
}

/** The hook spec of a client; INVALID_INPUT naming the clients with hooks (and why others have none). */
export function hookClientSpec(client: string): HookClientSpec {
  const name = client.trim().toLowerCase();
  if (isHookClient(name)) return SPECS[name];
  const why = CLIENTS_WITHOUT_HOOKS[name];
  throw new AppError("INVALID_INPUT", why ?? `Unknown hook client "${client}". Clients with hooks: ${HOOK_CLIENTS.join(", ")}.`, {
    hint: why !== undefined ? `Clients with hooks: ${HOOK_CLIENTS.join(", ")}` : `Use one of: ${HOOK_CLIENTS.join(", ")}`,
    details: { field: "client", received: client, allowed: [...HOOK_CLIENTS] },
  });
}

/** Normalises an event name for lookup: `UserPromptSubmit`, `user-prompt-submit`, `user_prompt_submit` are one. */
function eventKey(event: string): string {
  return event.replace(/[-_\s]/g, "").toLowerCase();
}

/** The event spec for `cm hook <client> <event>` (the client's name or cm's kebab-case form), or null. */
export function findHookEvent(spec: HookClientSpec, event: string): HookEventSpec | null {
  const key = eventKey(event);
  return spec.events.find((e) => eventKey(e.event) === key || eventKey(e.arg) === key) ?? extraEvent(spec, key);
}

/**
 * Events `cm hook` answers although `--hooks` does not install them (users may wire them by hand):
 * SessionStart of Claude Code, Codex and Gemini CLI. Per-turn events (Claude's Stop, Codex's Stop,
 * Cursor's stop) are deliberately absent: reflecting after the first turn would mark the session
 * processed and lose the rest of it.
 */
function extraEvent(spec: HookClientSpec, key: string): HookEventSpec | null {
  const extras: Partial<Record<HookClient, HookEventSpec[]>> = {
    "claude-code": [{ event: "SessionStart", arg: "session-start", action: "session-start" }],
    codex: [{ event: "SessionStart", arg: "session-start", action: "session-start" }],
    gemini: [{ event: "SessionStart", arg: "session-start", action: "session-start" }],
  };
  return (extras[spec.client] ?? []).find((e) => eventKey(e.event) === key || eventKey(e.arg) === key) ?? null;
}

export interface HookPathContext {
  env: Env;
  projectRoot: string | null;
}

/** The hook configuration file of a client for a scope. */
export function hookConfigPath(client: HookClient, scope: SetupScope, ctx: HookPathContext): string {
  const home = homeDir(ctx.env);
  if (scope === "project") {
    const root = requireProjectRoot(ctx.projectRoot, client);
    switch (client) {
      case "claude-code":
        return join(root, ".claude", "settings.json");
      case "codex":
        return join(root, ".codex", "hooks.json");
      case "gemini":
        return join(root, ".gemini", "settings.json");
      case "cursor":
        return join(root, ".cursor", "hooks.json");
      case "windsurf":
        return join(root, ".windsurf", "hooks.json");
    }
  }
  switch (client) {
    case "claude-code":
      return join(home, ".claude", "settings.json");
    case "codex": {
      const codexHome = ctx.env.CODEX_HOME?.trim();
      return join(codexHome !== undefined && codexHome !== "" ? codexHome : join(home, ".codex"), "hooks.json");
    }
    case "gemini":
      return join(home, ".gemini", "settings.json");
    case "cursor":
      return join(home, ".cursor", "hooks.json");
    case "windsurf":
      return join(home, ".codeium", "windsurf", "hooks.json");
  }
}
