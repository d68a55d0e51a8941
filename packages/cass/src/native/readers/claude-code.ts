/**
 * Claude Code: `~/.claude/projects/<cwd slug>/<session>.jsonl` (sub-agents `agent-<id>.jsonl`),
 * one JSON record per line. Only user/assistant records are kept; `summary`,
 * `file-history-snapshot` and other bookkeeping lines are skipped.
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
  str,
  toMs,
  toRefs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "claude_code" as const;

function isSessionFile(name: string): boolean {
  return name.endsWith(".jsonl") || name.endsWith(".claude") || (name.endsWith(".json") && !name.startsWith("."));
}

/** Whether every block of an array content is a tool result (Claude sends those as `user`). */
function isToolResultOnly(content: unknown): boolean {
  return (
    Array.isArray(content) &&
    content.length > 0 &&
    content.every((block) => isObject(block) && block["type"] === "tool_result")
  );
}

interface State {
  builder: ConversationBuilder;
  workspace: string | null;
  sessionId: string | null;
  title: string | null;
  lastMessageId: string | null;
}

function consume(state: State, record: JsonObject, lineNumber: number): void {
  if (state.workspace === null) state.workspace = nonEmpty(record["cwd"]);
  if (state.sessionId === null) state.sessionId = nonEmpty(record["sessionId"]) ?? nonEmpty(record["session_id"]);
  const message = isObject(record["message"]) ? record["message"] : null;
  const type = str(record["type"]);
  const role = str(message?.["role"]) ?? type;
  if (type !== null && type !== "user" && type !== "assistant") return;
  if (role !== "user" && role !== "assistant") return;
  const rawContent = message !== null ? message["content"] : record["content"];
  const content = flattenContent(rawContent);
  const createdAt = toMs(record["timestamp"]);
  const messageId = nonEmpty(message?.["id"]);
  // Claude Code writes one line per content block of a streamed assistant reply; merge them.
  if (role === "assistant" && messageId !== null && messageId === state.lastMessageId) {
    const last = state.builder.last();
    if (last !== undefined && last.role === "assistant") {
      state.builder.appendToLast(content);
      return;
    }
  }
  const toolOnly = role === "user" && isToolResultOnly(rawContent);
  const isMeta = record["isMeta"] === true;
  const added = state.builder.add({
    role: toolOnly ? "tool" : role,
    author: role === "assistant" ? nonEmpty(message?.["model"]) : null,
    createdAt,
    content,
    lineNumber,
    titleCandidate: !isMeta && !content.trimStart().startsWith("<"),
  });
  if (added) state.lastMessageId = role === "assistant" ? messageId : null;
}

export function createClaudeCodeReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const configDir = envValue(ctx.env, "CLAUDE_CONFIG_DIR");
      const roots = [
        configDir === null ? null : joinFor(ctx.platform, configDir, "projects"),
        joinFor(ctx.platform, ctx.home, ".claude", "projects"),
      ];
      if (ctx.platform === "darwin") {
        const support = joinFor(ctx.platform, ctx.home, "Library", "Application Support", "Claude");
        roots.push(joinFor(ctx.platform, support, "claude-code-sessions"));
        roots.push(joinFor(ctx.platform, support, "local-agent-mode-sessions"));
      }
      return uniquePaths(roots);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, { maxDepth: 5, acceptFile: (name) => isSessionFile(name) });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const state: State = {
        builder: new ConversationBuilder(),
        workspace: null,
        sessionId: null,
        title: null,
        lastMessageId: null,
      };
      if (ref.path.endsWith(".json")) {
        // Whole-document variant: an array of records or an object with `messages`.
        const doc = await readJsonDocument(ref.path);
        const records = Array.isArray(doc) ? doc : isObject(doc) && Array.isArray(doc["messages"]) ? doc["messages"] : [];
        if (isObject(doc)) {
          state.title = nonEmpty(doc["title"]);
          state.workspace = nonEmpty(doc["cwd"]) ?? nonEmpty(doc["workspace"]);
          state.sessionId = nonEmpty(doc["sessionId"]) ?? nonEmpty(doc["id"]);
        }
        for (const record of records) {
          if (state.builder.full) break;
          if (isObject(record)) consume(state, record, 1);
        }
      } else {
        for await (const { value, lineNumber } of readJsonl(ref.path)) {
          if (state.builder.full) break;
          consume(state, value, lineNumber);
        }
      }
      const conversation = state.builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: state.sessionId ?? path.basename(ref.path).replace(/\.[^.]+$/, ""),
        title: state.title,
        workspace: state.workspace,
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
