/**
 * Generic transcripts for user-configured roots (it has no default roots):
 * - JSONL: one message per line, `{role, content}` or an envelope `{type, message: {role, content}}`
 *   (tool records `{tool_name, tool_input, tool_output}` and OpenAI-style `tool_calls` included);
 * - JSON: an array of such messages or `{title?, messages: [...]}`;
 * - Markdown: messages introduced by role markers (`## User`, `**Assistant:**`, `User: …`); a
 *   file without markers is indexed as one user message.
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  firstMs,
  flattenContent,
  isObject,
  nonEmpty,
  readJsonDocument,
  readJsonl,
  readLines,
  renderToolCall,
  renderToolResult,
  str,
  toRefs,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "generic" as const;
const EXTENSIONS = [".jsonl", ".ndjson", ".json", ".md", ".markdown"];

const ROLE_ALIASES: Record<string, string> = {
  user: "user",
  human: "user",
  you: "user",
  assistant: "assistant",
  ai: "assistant",
  model: "assistant",
  bot: "assistant",
  agent: "assistant",
  system: "system",
  developer: "system",
  tool: "tool",
  function: "tool",
};

function normaliseRole(value: unknown): string | null {
  const role = str(value);
  return role === null ? null : (ROLE_ALIASES[role.trim().toLowerCase()] ?? null);
}

interface State {
  builder: ConversationBuilder;
  externalId: string | null;
  workspace: string | null;
  title: string | null;
  /** The agent the file names (`agent`, `agentSlug`, `agent_slug`), as a slug. */
  agent: string | null;
}

function newState(): State {
  return { builder: new ConversationBuilder(), externalId: null, workspace: null, title: null, agent: null };
}

const AGENT_ALIASES: Record<string, string> = {
  claude: "claude_code",
  claudecode: "claude_code",
  claude_code_cli: "claude_code",
  codex_cli: "codex",
  gemini_cli: "gemini",
  copilot_cli: "copilot",
  github_copilot: "copilot",
  pi: "pi_agent",
  roo_cline: "cline",
  roo_code: "cline",
};

/**
 * An agent name a transcript gives itself, as a slug (`Claude-Code` → `claude_code`), or null when
 * it is not a plausible name (blank, too long, or made of something other than a name's characters).
 */
export function agentSlugFrom(value: unknown): string | null {
  const raw = nonEmpty(value);
  if (raw === null || raw.length > 64) return null;
  const slug = raw
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, "_");
  if (!/^[a-z0-9][a-z0-9_.]*$/.test(slug)) return null;
  // A role word is not an agent name ("agent": "assistant" in some exports).
  if (ROLE_ALIASES[slug] !== undefined) return null;
  return AGENT_ALIASES[slug] ?? slug;
}

function consumeRecord(state: State, record: JsonObject, lineNumber: number): void {
  state.agent ??= agentSlugFrom(record["agentSlug"]) ?? agentSlugFrom(record["agent_slug"]) ?? agentSlugFrom(record["agent"]);
  state.externalId ??= nonEmpty(record["sessionId"]) ?? nonEmpty(record["session_id"]) ?? nonEmpty(record["sessionID"]) ?? nonEmpty(record["conversation_id"]);
  state.workspace ??= nonEmpty(record["workspace"]) ?? nonEmpty(record["cwd"]) ?? nonEmpty(record["directory"]);
  state.title ??= nonEmpty(record["title"]);
  if (Array.isArray(record["messages"])) {
    for (const nested of record["messages"]) {
      if (state.builder.full) return;
      if (isObject(nested)) consumeRecord(state, nested, lineNumber);
    }
    return;
  }
  const envelope = record["message"];
  const message = isObject(envelope) ? envelope : record;
  const toolName = message["tool_name"] ?? record["tool_name"];
  const role = normaliseRole(message["role"]) ?? normaliseRole(record["role"]) ?? normaliseRole(record["type"]) ?? (toolName !== undefined ? "tool" : null);
  if (role === null) return;
  const parts: string[] = [];
  if (typeof envelope === "string") {
    parts.push(envelope);
  } else {
    parts.push(flattenContent(message["content"] ?? message["text"] ?? (message === record ? undefined : record["content"])));
  }
  if (toolName !== undefined) {
    parts.push(renderToolCall(toolName, message["tool_input"] ?? record["tool_input"]));
    const output = message["tool_output"] ?? record["tool_output"];
    if (output !== undefined) parts.push(renderToolResult(output));
  }
  const toolCalls = message["tool_calls"] ?? record["tool_calls"];
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls) {
      if (!isObject(call)) continue;
      const fn = isObject(call["function"]) ? call["function"] : call;
      parts.push(renderToolCall(fn["name"], fn["arguments"] ?? fn["input"]));
    }
  }
  const time = record["time"];
  state.builder.add({
    role,
    author: role === "assistant" ? (nonEmpty(message["model"]) ?? nonEmpty(record["model"])) : null,
    createdAt: firstMs(
      record["timestamp"],
      record["created_at"],
      record["createdAt"],
      isObject(time) ? time["created"] : time,
      message["timestamp"],
    ),
    content: parts.filter((p) => p.trim() !== "").join("\n\n"),
    lineNumber,
  });
}

const ROLE_WORDS = "user|human|you|assistant|ai|model|system|tool";
const HEADING_MARKER = new RegExp(`^#{1,6}\\s+(?:\\*\\*)?(${ROLE_WORDS})(?:\\*\\*)?\\s*:?\\s*$`, "i");
/** Inline markers use fewer words: "Model:" or "Tool:" at a line start is too often ordinary text. */
const INLINE_WORDS = "user|human|assistant|ai|system";
const INLINE_MARKER = new RegExp(`^(?:\\*\\*(${INLINE_WORDS})\\*\\*\\s*:?|\\*\\*(${INLINE_WORDS}):\\*\\*|(${INLINE_WORDS}):)(?:\\s+(.*))?$`, "i");

/** Reads a Markdown transcript into `state`; false when the file turns out to be binary. */
async function readMarkdown(file: string, state: State): Promise<boolean> {
  let role: string | null = null;
  let block: string[] = [];
  let blockLine = 1;
  let sawMarker = false;
  const whole: string[] = [];
  const flush = (): void => {
    if (role !== null) state.builder.add({ role, content: block.join("\n"), lineNumber: blockLine });
    block = [];
  };
  for await (const { text, lineNumber } of readLines(file)) {
    if (text.includes("\u0000")) return false;
    if (state.builder.full) break;
    const heading = HEADING_MARKER.exec(text);
    const inline = heading === null ? INLINE_MARKER.exec(text) : null;
    const word = heading?.[1] ?? inline?.[1] ?? inline?.[2] ?? inline?.[3];
    if (word !== undefined) {
      flush();
      sawMarker = true;
      role = ROLE_ALIASES[word.toLowerCase()]!;
      blockLine = lineNumber;
      const rest = inline?.[4];
      if (rest !== undefined && rest.trim() !== "") block.push(rest);
      continue;
    }
    if (!sawMarker) {
      if (state.title === null && /^#\s+\S/.test(text)) state.title = text.replace(/^#\s+/, "").trim();
      if (whole.length < 20_000) whole.push(text);
      continue;
    }
    block.push(text);
  }
  flush();
  if (!sawMarker) state.builder.add({ role: "user", content: whole.join("\n"), lineNumber: 1 });
  return true;
}

export function createGenericReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(_ctx: DiscoveryEnv): string[] {
      return [];
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 5,
        acceptFile: (name) => !name.startsWith(".") && EXTENSIONS.some((ext) => name.toLowerCase().endsWith(ext)),
        enterDir: (name) => !name.startsWith("."),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const state = newState();
      const lower = ref.path.toLowerCase();
      if (lower.endsWith(".jsonl") || lower.endsWith(".ndjson")) {
        for await (const { value, lineNumber } of readJsonl(ref.path)) {
          if (state.builder.full) break;
          consumeRecord(state, value, lineNumber);
        }
      } else if (lower.endsWith(".json")) {
        const doc = await readJsonDocument(ref.path);
        if (doc === undefined) {
          // Not one JSON document: a JSONL transcript saved as `.json` is read line by line.
          for await (const { value, lineNumber } of readJsonl(ref.path)) {
            if (state.builder.full) break;
            consumeRecord(state, value, lineNumber);
          }
        }
        const records = Array.isArray(doc) ? doc : isObject(doc) ? [doc] : [];
        for (const record of records) {
          if (state.builder.full) break;
          if (isObject(record)) consumeRecord(state, record, 1);
        }
      } else if (!(await readMarkdown(ref.path, state))) {
        return [];
      }
      const conversation = state.builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: state.externalId ?? path.basename(ref.path).replace(/\.[^.]+$/, ""),
        title: state.title,
        workspace: state.workspace,
      });
      if (conversation === null) return [];
      return [state.agent !== null ? { ...conversation, agent: state.agent } : conversation];
    },
  };
}
