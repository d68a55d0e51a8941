import type { HookAction, HookClient, HookEventSpec } from "./clients.js";

/**
 * The wire protocol of each client's hooks: what cm reads from the JSON on stdin and what it prints
 * back. Pure functions over parsed values; docs/hooks.md lists the sources for every field.
 */

/** At most this much of stdin is read; a larger payload is answered with nothing. */
export const HOOK_STDIN_MAX_BYTES = 1024 * 1024;
/** The prompt text ranked is cut to this many characters. */
export const HOOK_PROMPT_MAX_CHARS = 4_000;
export const DEFAULT_HOOK_MAX_TOKENS = 800;
export const DEFAULT_HOOK_TIMEOUT_MS = 1_500;
/** Characters per token used for the budget (the same estimate as `cm context --max-tokens`). */
export const CHARS_PER_TOKEN = 4;

/** What a hook invocation asks of cm, independent of the client. */
export interface HookRequest {
  action: HookAction;
  /** The directory the client runs in (its project). */
  cwd?: string;
  /** prompt: the user's prompt. */
  prompt?: string;
  /** session-end: the transcript file. */
  transcriptPath?: string;
  /** shell-guard: the shell command about to run. */
  command?: string;
  sessionId?: string;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function obj(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The tool name a client's guard event carries for its shell tool (null: the event is shell-only). */
const SHELL_TOOL: Partial<Record<HookClient, string>> = {
  "claude-code": "Bash",
  codex: "Bash",
  gemini: "run_shell_command",
};

/**
 * Reads the request out of a client's hook payload. Returns null when there is nothing for cm to
 * do (another tool, no prompt, no command, a payload that is not an object).
 */
export function parseHookRequest(client: HookClient, event: HookEventSpec, payload: unknown): HookRequest | null {
  const input = obj(payload);
  if (input === undefined) return null;
  const cwd = str(input.cwd) ?? (Array.isArray(input.workspace_roots) ? str(input.workspace_roots[0]) : undefined);
  const sessionId = str(input.session_id) ?? str(input.conversation_id) ?? str(input.trajectory_id);
  const base: HookRequest = { action: event.action, ...(cwd !== undefined ? { cwd } : {}), ...(sessionId !== undefined ? { sessionId } : {}) };
  switch (event.action) {
    case "prompt": {
      // VS Code runs Claude Code's hook files too, with camelCase `hookEventName` and no
      // `hook_event_name`; its UserPromptSubmit ignores additional context, so skip the work.
      if (client === "claude-code" && input.hook_event_name === undefined && typeof input.hookEventName === "string") return null;
      const prompt = str(input.prompt)?.trim();
      return prompt ? { ...base, prompt } : null;
    }
    case "session-start":
      return base;
    case "session-end": {
      const transcriptPath = str(input.transcript_path);
      return transcriptPath !== undefined ? { ...base, transcriptPath } : null;
    }
    case "shell-guard": {
      let command: string | undefined;
      if (client === "cursor") command = str(input.command);
      else if (client === "windsurf") command = str(obj(input.tool_info)?.command_line);
      else {
        const tool = SHELL_TOOL[client];
        if (tool !== undefined && input.tool_name !== tool) return null;
        command = str(obj(input.tool_input)?.command);
      }
      return command !== undefined ? { ...base, command } : null;
    }
  }
}

/** What to print and how to exit. */
export interface HookAnswer {
  stdout: string;
  stderr?: string;
  exitCode: 0 | 2;
}

/** Additional context in the client's protocol (prompt and session-start events). */
export function contextAnswer(client: HookClient, event: HookEventSpec, text: string): HookAnswer {
  if (client === "cursor") return { stdout: JSON.stringify({ additional_context: text }), exitCode: 0 };
  return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event.event, additionalContext: text } }), exitCode: 0 };
}

/** A deny in the client's protocol (shell-guard events). */
export function denyAnswer(client: HookClient, event: HookEventSpec, reason: string): HookAnswer {
  switch (client) {
    case "claude-code":
    case "codex":
      return {
        stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: event.event, permissionDecision: "deny", permissionDecisionReason: reason } }),
        exitCode: 0,
      };
    case "gemini":
      return { stdout: JSON.stringify({ decision: "deny", reason }), exitCode: 0 };
    case "cursor":
      return { stdout: JSON.stringify({ permission: "deny", user_message: reason, agent_message: reason }), exitCode: 0 };
    case "windsurf":
      // Cascade blocks a pre-hook that exits 2 and shows stderr to the agent.
      return { stdout: "", stderr: reason, exitCode: 2 };
  }
}

/** One rule as the hook shows it. */
export interface HookRule {
  id: string;
  content: string;
  antiPattern?: boolean;
}

export interface RenderOptions {
  client: HookClient;
  event: HookEventSpec;
  rules: readonly HookRule[];
  /** First line(s), e.g. a trauma warning. */
  warning?: string;
  /** Heading for the rule list. */
  heading: string;
  /** Program name for the feedback line. */
  cliName: string;
  maxTokens: number;
  /** One rule's content is cut to this many characters. */
  maxRuleChars?: number;
}

export interface RenderedContext {
  answer: HookAnswer | null;
  ids: string[];
  /** Characters printed (stdout). */
  chars: number;
  /** Estimated tokens printed (chars / 4, rounded up). */
  tokens: number;
  /** Rules left out to stay within the budget. */
  omitted: number;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1).trimEnd()}…` : flat;
}

/**
 * The additional context: the warning, a heading, one `[id] content` line per rule (highest ranked
 * first, anti-patterns marked AVOID) and how to give feedback, as many rules as fit in the budget
 * measured on what is printed (the client's JSON included). Nothing to say → null answer.
 */
export function renderHookContext(options: RenderOptions): RenderedContext {
  const budget = Math.max(0, Math.floor(options.maxTokens)) * CHARS_PER_TOKEN;
  const maxRule = options.maxRuleChars ?? 400;
  const lines = options.rules.map((r) => `[${r.id}] ${r.antiPattern ? "AVOID: " : ""}${clip(r.content, maxRule)}`);
  const build = (count: number): string => {
    const parts: string[] = [];
    if (options.warning) parts.push(options.warning);
    if (count > 0) {
      parts.push(options.heading, ...lines.slice(0, count));
      parts.push(`Feedback: ${options.cliName} mark <id> --helpful|--harmful`);
    }
    return parts.join("\n");
  };
  const none: RenderedContext = { answer: null, ids: [], chars: 0, tokens: 0, omitted: options.rules.length };
  if (!options.warning && lines.length === 0) return none;
  let best: { answer: HookAnswer; count: number } | null = null;
  for (let count = lines.length; count >= 0; count--) {
    if (count === 0 && !options.warning) break;
    const answer = contextAnswer(options.client, options.event, build(count));
    if (answer.stdout.length <= budget) {
      best = { answer, count };
      break;
    }
  }
  if (best === null) return none;
  const chars = best.answer.stdout.length;
  return {
    answer: best.answer,
    ids: options.rules.slice(0, best.count).map((r) => r.id),
    chars,
    tokens: Math.ceil(chars / CHARS_PER_TOKEN),
    omitted: options.rules.length - best.count,
  };
}

/** The HOT STOVE reason text (the earlier cm's trauma_guard.py wording). */
export function hotStoveReason(trauma: { id: string; pattern: string; reason: string; reference: string }, cliName: string, noEmoji: boolean): string {
  const banner = noEmoji ? "[HOT STOVE] VISCERAL SAFETY INTERVENTION" : "🔥 HOT STOVE: VISCERAL SAFETY INTERVENTION 🔥";
  return [
    banner,
    "",
    "BLOCKED: This pattern matches a registered TRAUMA.",
    `Pattern: ${trauma.pattern}`,
    `Reason: ${trauma.reason}`,
    `Reference: ${trauma.reference}`,
    `Trauma id: ${trauma.id}`,
    "",
    `If you MUST run this, heal it first with: ${cliName} trauma heal ${trauma.id}`,
  ].join("\n");
}
