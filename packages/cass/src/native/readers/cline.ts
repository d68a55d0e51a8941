/**
 * Cline / Roo Code: VS Code-family `globalStorage/{saoudrizwan.claude-dev,rooveterinaryinc.roo-cline}`
 * task directories, either as immediate children of the storage root or under `tasks/<taskId>/`.
 * Each task dir holds `ui_messages.json` (preferred), `api_conversation_history.json` and
 * `task_metadata.json` (title and workspace when present).
 *
 * A ref points at the task's `ui_messages.json` (or `api_conversation_history.json` when there is
 * no UI log), so its mtime follows the conversation.
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  editorUserDirs,
  fileInfo,
  flattenContent,
  isObject,
  joinFor,
  nonEmpty,
  readJsonDocument,
  renderToolCall,
  str,
  toMs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "cline" as const;
const EXTENSION_IDS = ["saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline"];
const UI_FILE = "ui_messages.json";
const API_FILE = "api_conversation_history.json";
const META_FILE = "task_metadata.json";
/** Cline puts the task's working directory into the environment details it sends. */
const CWD_PATTERN = /Current Working Directory \(([^)\n]+)\)/;

interface UiMessage {
  role: string;
  content: string;
}

/** Maps a real Cline UI record (`{type: "say"|"ask", say|ask, text}`) to a message, or null. */
function fromClineUi(record: JsonObject): UiMessage | null {
  const type = str(record["type"]);
  const text = str(record["text"]) ?? "";
  if (type === "say") {
    switch (str(record["say"])) {
      case "task":
      case "user_feedback":
        return { role: "user", content: text };
      case "text":
      case "completion_result":
        return { role: "assistant", content: text };
      case "command_output":
      case "tool":
      case "browser_action_result":
      case "mcp_server_response":
        return { role: "tool", content: text === "" ? "" : `[tool result] ${text}` };
      case "error":
        return { role: "system", content: text };
      default:
        return null;
    }
  }
  if (type === "ask") {
    switch (str(record["ask"])) {
      case "followup":
      case "plan_mode_respond":
      case "act_mode_respond": {
        let content = text;
        try {
          const parsed: unknown = JSON.parse(text);
          if (isObject(parsed)) content = str(parsed["question"]) ?? str(parsed["response"]) ?? text;
        } catch {
          content = text;
        }
        return { role: "assistant", content };
      }
      case "command":
        return { role: "assistant", content: renderToolCall("execute_command", text) };
      case "tool": {
        try {
          const parsed: unknown = JSON.parse(text);
          if (isObject(parsed)) {
            const { tool, ...rest } = parsed;
            return { role: "assistant", content: renderToolCall(tool, rest) };
          }
        } catch {
          // fall through
        }
        return { role: "assistant", content: renderToolCall("tool", text) };
      }
      case "use_mcp_server":
        return { role: "assistant", content: renderToolCall("mcp", text) };
      default:
        return null;
    }
  }
  return null;
}

/** Simple shape (`{role|type, content|text}`) with role user/assistant/system/tool. */
function fromSimple(record: JsonObject): UiMessage | null {
  const role = str(record["role"]) ?? str(record["type"]);
  if (role === null || !["user", "assistant", "system", "tool"].includes(role)) return null;
  return { role, content: flattenContent(record["content"] ?? record["text"]) };
}

export function createClineReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const roots: string[] = [];
      for (const userDir of editorUserDirs(ctx)) {
        for (const ext of EXTENSION_IDS) roots.push(joinFor(ctx.platform, userDir, "globalStorage", ext));
      }
      return uniquePaths(roots);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      // Root may be the storage dir (tasks at depth 1 or under tasks/ at depth 2) or a task dir.
      const files = await walkFiles(root, {
        maxDepth: 2,
        acceptFile: (name) => name === UI_FILE || name === API_FILE,
      });
      const byDir = new Map<string, string[]>();
      for (const file of files) {
        const dir = path.dirname(file);
        byDir.set(dir, [...(byDir.get(dir) ?? []), file]);
      }
      const refs: SessionFileRef[] = [];
      for (const [dir, names] of byDir) {
        const primary = names.find((f) => path.basename(f) === UI_FILE) ?? names[0]!;
        const info = await fileInfo(primary);
        if (info === null || !info.isFile) continue;
        let mtimeMs = info.mtimeMs;
        for (const other of [...names, path.join(dir, META_FILE)]) {
          if (other === primary) continue;
          const o = await fileInfo(other);
          if (o !== null && o.mtimeMs > mtimeMs) mtimeMs = o.mtimeMs;
        }
        refs.push({ agent: AGENT, path: primary, mtimeMs, size: info.size });
      }
      return refs.sort((a, b) => (a.path < b.path ? -1 : 1));
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const dir = path.dirname(ref.path);
      const meta = await readJsonDocument(path.join(dir, META_FILE));
      let workspace: string | null = null;
      let title: string | null = null;
      if (isObject(meta)) {
        title = nonEmpty(meta["title"]) ?? nonEmpty(meta["task"]);
        workspace = nonEmpty(meta["rootPath"]) ?? nonEmpty(meta["cwd"]) ?? nonEmpty(meta["workspace"]);
      }
      let builder = new ConversationBuilder();
      let sourcePath = path.join(dir, UI_FILE);
      const ui = await readJsonDocument(sourcePath);
      if (Array.isArray(ui)) {
        for (const record of ui) {
          if (builder.full) break;
          if (!isObject(record)) continue;
          if (workspace === null && typeof record["text"] === "string") {
            workspace = CWD_PATTERN.exec(record["text"])?.[1]?.trim() ?? null;
          }
          const message = record["role"] !== undefined ? fromSimple(record) : (fromClineUi(record) ?? fromSimple(record));
          if (message === null) continue;
          builder.add({ ...message, createdAt: toMs(record["ts"] ?? record["timestamp"]), lineNumber: 1 });
        }
      }
      if (builder.messages.length === 0) {
        builder = new ConversationBuilder();
        sourcePath = path.join(dir, API_FILE);
        const api = await readJsonDocument(sourcePath);
        if (Array.isArray(api)) {
          for (const record of api) {
            if (builder.full) break;
            if (!isObject(record)) continue;
            const message = fromSimple(record);
            if (message === null) continue;
            if (workspace === null) workspace = CWD_PATTERN.exec(message.content)?.[1]?.trim() ?? null;
            builder.add({ ...message, createdAt: toMs(record["ts"] ?? record["timestamp"]), lineNumber: 1 });
          }
        }
      }
      const conversation = builder.build({
        agent: AGENT,
        sourcePath,
        externalId: path.basename(dir),
        title,
        workspace,
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
