/**
 * Codex CLI: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl` (default `~/.codex`), plus the
 * legacy single-document `rollout-*.json`. Rollout lines are `{timestamp, type, payload}`;
 * `session_meta` carries the workspace (cwd).
 *
 * Current Codex writes each user prompt and assistant reply twice (a `response_item` message and
 * an `event_msg` user_message/agent_message, in either order); the reader keeps one copy.
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  envValue,
  flattenContent,
  isObject,
  joinFor,
  nonEmpty,
  readJsonDocument,
  readJsonl,
  renderToolCall,
  renderToolResult,
  str,
  toMs,
  toRefs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "codex" as const;
/** How many recent messages are checked for the duplicate copy of a prompt or reply. */
const DEDUPE_WINDOW = 6;

/** Context Codex injects as user messages (environment, AGENTS.md, instructions). */
function isInjectedContext(text: string): boolean {
  const head = text.trimStart();
  return (
    head.startsWith("<environment_context>") ||
    head.startsWith("<user_instructions>") ||
    head.startsWith("<user_shell_command>") ||
    head.startsWith("# AGENTS.md instructions")
  );
}

interface State {
  builder: ConversationBuilder;
  workspace: string | null;
  sessionId: string | null;
  startedAt: number | null;
}

function normaliseRole(role: string): string {
  if (role === "developer") return "system";
  if (role === "function") return "tool";
  return role;
}

function addMessage(state: State, role: string, content: string, createdAt: number | null, lineNumber: number, author: string | null = null): void {
  const text = content.trim();
  if (text === "") return;
  let finalRole = normaliseRole(role);
  if (finalRole === "user" && isInjectedContext(text)) finalRole = "system";
  if (finalRole === "user" || finalRole === "assistant") {
    const recent = state.builder.messages.slice(-DEDUPE_WINDOW);
    if (recent.some((m) => m.role === finalRole && m.author === author && m.content === text)) return;
  }
  state.builder.add({ role: finalRole, author, createdAt, content: text, lineNumber });
}

/** A `response_item` payload (also the items of legacy `.json` rollouts). */
function consumeItem(state: State, item: JsonObject, createdAt: number | null, lineNumber: number): void {
  const type = str(item["type"]) ?? (item["role"] !== undefined ? "message" : null);
  switch (type) {
    case "message": {
      const role = str(item["role"]);
      if (role === null) return;
      const parts: string[] = [];
      const body = flattenContent(item["content"]);
      if (body.trim() !== "") parts.push(body);
      if (isObject(item["function_call"])) {
        const call = item["function_call"];
        parts.push(renderToolCall(call["name"], call["arguments"]));
      }
      if (role === "function" || role === "tool") {
        addMessage(state, "tool", renderToolResult(item["content"], { name: item["name"] }), createdAt, lineNumber);
        return;
      }
      addMessage(state, role, parts.join("\n\n"), createdAt, lineNumber);
      return;
    }
    case "function_call":
    case "custom_tool_call":
    case "local_shell_call": {
      const args = item["arguments"] ?? item["input"] ?? item["action"];
      addMessage(state, "assistant", renderToolCall(item["name"] ?? type, args), createdAt, lineNumber);
      return;
    }
    case "function_call_output":
    case "custom_tool_call_output": {
      const output = item["output"];
      // Outputs are often a JSON string `{"output": "...", "metadata": {...}}`.
      let body: unknown = output;
      if (typeof output === "string" && output.trimStart().startsWith("{")) {
        try {
          const parsed: unknown = JSON.parse(output);
          if (isObject(parsed) && parsed["output"] !== undefined) body = parsed["output"];
        } catch {
          body = output;
        }
      } else if (isObject(output) && output["content"] !== undefined) {
        body = output["content"];
      }
      addMessage(state, "tool", renderToolResult(body), createdAt, lineNumber);
      return;
    }
    case "reasoning": {
      const summary = flattenContent(item["summary"]);
      addMessage(state, "assistant", summary, createdAt, lineNumber, "reasoning");
      return;
    }
    default:
      return;
  }
}

function consumeEvent(state: State, payload: JsonObject, createdAt: number | null, lineNumber: number): void {
  switch (str(payload["type"])) {
    case "user_message":
      addMessage(state, "user", str(payload["message"]) ?? "", createdAt, lineNumber);
      return;
    case "agent_message":
      addMessage(state, "assistant", str(payload["message"]) ?? "", createdAt, lineNumber);
      return;
    case "agent_reasoning":
      addMessage(state, "assistant", str(payload["text"]) ?? "", createdAt, lineNumber, "reasoning");
      return;
    case "tool_call":
      addMessage(state, "assistant", renderToolCall(payload["name"], payload["input"] ?? payload["arguments"]), createdAt, lineNumber);
      return;
    case "tool_result":
      addMessage(state, "tool", renderToolResult(payload["output"] ?? payload["content"], { name: payload["name"] }), createdAt, lineNumber);
      return;
    default:
      return;
  }
}

function consumeLine(state: State, record: JsonObject, lineNumber: number): void {
  const createdAt = toMs(record["timestamp"]);
  const payload = isObject(record["payload"]) ? record["payload"] : null;
  switch (str(record["type"])) {
    case "session_meta": {
      if (payload === null) return;
      state.workspace ??= nonEmpty(payload["cwd"]);
      state.sessionId ??= nonEmpty(payload["id"]);
      state.startedAt ??= toMs(payload["timestamp"]) ?? createdAt;
      return;
    }
    case "response_item":
      if (payload !== null) consumeItem(state, payload, createdAt, lineNumber);
      return;
    case "event_msg":
      if (payload !== null) consumeEvent(state, payload, createdAt, lineNumber);
      return;
    case "message":
    case "function_call":
    case "function_call_output":
    case "reasoning":
      // Early rollouts wrote bare response items, one per line.
      consumeItem(state, record, createdAt, lineNumber);
      return;
    default:
      return;
  }
}

/** `YYYY/MM/DD/rollout-…` relative to the nearest `sessions` directory, without extension. */
function externalIdFor(file: string): string {
  const parts = file.split(/[\\/]/);
  const idx = parts.lastIndexOf("sessions");
  const rel = idx >= 0 && idx < parts.length - 1 ? parts.slice(idx + 1).join("/") : path.basename(file);
  return rel.replace(/\.jsonl?$/, "");
}

export function createCodexReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const codexHome = envValue(ctx.env, "CODEX_HOME");
      return uniquePaths([
        codexHome === null ? null : joinFor(ctx.platform, codexHome, "sessions"),
        joinFor(ctx.platform, ctx.home, ".codex", "sessions"),
      ]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 5,
        acceptFile: (name) => name.startsWith("rollout-") && (name.endsWith(".jsonl") || name.endsWith(".json")),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const state: State = { builder: new ConversationBuilder(), workspace: null, sessionId: null, startedAt: null };
      if (ref.path.endsWith(".json")) {
        // Legacy: {session: {id, timestamp, instructions}, items: [response items]}.
        const doc = await readJsonDocument(ref.path);
        if (isObject(doc)) {
          const session = isObject(doc["session"]) ? doc["session"] : null;
          state.sessionId = nonEmpty(session?.["id"]) ?? nonEmpty(doc["id"]);
          state.startedAt = toMs(session?.["timestamp"]) ?? toMs(doc["timestamp"]);
          state.workspace = nonEmpty(session?.["cwd"]) ?? nonEmpty(doc["cwd"]);
          const items = Array.isArray(doc["items"]) ? doc["items"] : [];
          for (const item of items) {
            if (state.builder.full) break;
            if (isObject(item)) consumeItem(state, item, toMs(item["timestamp"]), 1);
          }
        }
      } else {
        for await (const { value, lineNumber } of readJsonl(ref.path)) {
          if (state.builder.full) break;
          consumeLine(state, value, lineNumber);
        }
      }
      const conversation = state.builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: externalIdFor(ref.path),
        workspace: state.workspace,
        startedAt: state.startedAt,
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
