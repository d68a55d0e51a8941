/**
 * GitHub Copilot CLI: event logs under `~/.copilot/session-state` (JSONL, one event per line,
 * e.g. `{session_id, cwd, type: "user.message"|"assistant.message", prompt|output, timestamp}` or
 * the `{type, data: {content}}` form) and legacy `~/.copilot/history-session-state` JSON
 * (`{history|chatMessages: [{role, content|result, time}], workspacePath}`).
 *
 * The VS Code Copilot Chat extension's storage and the old `gh copilot` directories are not read:
 * their on-disk chat format is not documented in the contract this follows.
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  flattenContent,
  isObject,
  joinFor,
  nonEmpty,
  readJsonDocument,
  readJsonl,
  renderToolCall,
  renderToolResult,
  str,
  firstMs,
  toRefs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "copilot" as const;

const USER_EVENTS = new Set(["user.message", "userpromptsubmitted", "user_prompt_submitted", "user"]);
const ASSISTANT_EVENTS = new Set(["assistant.message", "assistantresponse", "assistant_response", "assistant"]);
const TOOL_EVENTS = new Set(["tool.execution_complete", "tool.result", "tool_result"]);

function roleOf(role: string | null): string | null {
  if (role === null) return null;
  if (role === "human") return "user";
  if (role === "ai" || role === "copilot") return "assistant";
  return role;
}

function eventText(event: JsonObject): string {
  const data = isObject(event["data"]) ? event["data"] : {};
  return flattenContent(
    event["prompt"] ?? event["output"] ?? event["result"] ?? event["content"] ?? event["text"] ?? data["content"] ?? data["prompt"] ?? data["output"],
  );
}

async function readEvents(ref: SessionFileRef): Promise<NormalizedConversation[]> {
  const builder = new ConversationBuilder();
  let sessionId: string | null = null;
  let workspace: string | null = null;
  for await (const { value, lineNumber } of readJsonl(ref.path)) {
    if (builder.full) break;
    const data = isObject(value["data"]) ? value["data"] : {};
    sessionId ??= nonEmpty(value["session_id"]) ?? nonEmpty(value["sessionId"]) ?? nonEmpty(data["sessionId"]);
    workspace ??= nonEmpty(value["cwd"]) ?? nonEmpty(data["cwd"]);
    const type = (str(value["type"]) ?? "").toLowerCase();
    const createdAt = firstMs(value["timestamp"], data["timestamp"]);
    if (USER_EVENTS.has(type)) {
      builder.add({ role: "user", createdAt, content: eventText(value), lineNumber });
    } else if (ASSISTANT_EVENTS.has(type)) {
      const parts = [eventText(value)];
      if (Array.isArray(data["toolRequests"])) {
        for (const request of data["toolRequests"]) {
          if (isObject(request)) parts.push(renderToolCall(request["name"], request["arguments"]));
        }
      }
      builder.add({ role: "assistant", createdAt, content: parts.filter((p) => p.trim() !== "").join("\n\n"), lineNumber });
    } else if (TOOL_EVENTS.has(type)) {
      const result = isObject(data["result"]) ? data["result"]["content"] : (data["result"] ?? value["result"] ?? value["output"]);
      builder.add({ role: "tool", createdAt, content: renderToolResult(result, { name: data["toolName"] }), lineNumber });
    }
  }
  const conversation = builder.build({
    agent: AGENT,
    sourcePath: ref.path,
    externalId: sessionId ?? path.basename(ref.path).replace(/(\.events)?\.jsonl$/, ""),
    workspace,
  });
  return conversation === null ? [] : [conversation];
}

async function readLegacy(ref: SessionFileRef): Promise<NormalizedConversation[]> {
  const doc = await readJsonDocument(ref.path);
  if (!isObject(doc)) return [];
  const history = Array.isArray(doc["history"]) ? doc["history"] : Array.isArray(doc["chatMessages"]) ? doc["chatMessages"] : null;
  if (history === null) return [];
  const builder = new ConversationBuilder();
  for (const entry of history) {
    if (builder.full) break;
    if (!isObject(entry)) continue;
    const role = roleOf(str(entry["role"]));
    if (role === null) continue;
    const parts = [flattenContent(entry["content"] ?? entry["result"] ?? entry["text"])];
    if (Array.isArray(entry["tool_calls"])) {
      for (const call of entry["tool_calls"]) {
        if (!isObject(call)) continue;
        const fn = isObject(call["function"]) ? call["function"] : call;
        parts.push(renderToolCall(fn["name"], fn["arguments"]));
      }
    }
    builder.add({
      role,
      createdAt: firstMs(entry["time"], entry["timestamp"]),
      content: parts.filter((p) => p.trim() !== "").join("\n\n"),
      lineNumber: 1,
    });
  }
  const conversation = builder.build({
    agent: AGENT,
    sourcePath: ref.path,
    externalId: nonEmpty(doc["sessionId"]) ?? nonEmpty(doc["id"]) ?? path.basename(ref.path, ".json"),
    workspace: nonEmpty(doc["workspacePath"]) ?? nonEmpty(doc["cwd"]),
    startedAt: firstMs(doc["startTime"]),
  });
  return conversation === null ? [] : [conversation];
}

export function createCopilotReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      return uniquePaths([
        joinFor(ctx.platform, ctx.home, ".copilot", "session-state"),
        joinFor(ctx.platform, ctx.home, ".copilot", "history-session-state"),
      ]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 2,
        acceptFile: (name) => (name.endsWith(".jsonl") || name.endsWith(".json")) && !name.startsWith("."),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      return ref.path.endsWith(".jsonl") ? readEvents(ref) : readLegacy(ref);
    },
  };
}
