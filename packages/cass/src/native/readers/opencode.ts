/**
 * OpenCode JSON storage: `$OPENCODE_STORAGE_ROOT` or `~/.local/share/opencode/storage`
 * (`$XDG_DATA_HOME/opencode/storage`; macOS also `~/Library/Application Support/opencode/storage`)
 * with `session/<projectID>/<sessionID>.json`, `message/<sessionID>/<messageID>.json` and
 * `part/<messageID>/<partID>.json`. A ref is the session JSON; its mtime also follows the
 * session's message directory.
 *
 * Newer OpenCode keeps sessions in SQLite (`opencode.db`); reading that needs a SQLite driver this
 * package does not have, so only the JSON storage is read.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  envValue,
  fileInfo,
  isObject,
  joinFor,
  nonEmpty,
  readJsonDocument,
  renderToolCall,
  renderToolResult,
  str,
  toMs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "opencode" as const;

async function listJson(dir: string): Promise<string[]> {
  try {
    const names = await readdir(dir);
    return names
      .filter((n) => n.endsWith(".json"))
      .sort()
      .map((n) => path.join(dir, n));
  } catch {
    return [];
  }
}

/** The storage root (parent of `session/`) for a session file. */
function storageRootOf(sessionFile: string): string | null {
  let dir = path.dirname(sessionFile);
  for (let i = 0; i < 3; i += 1) {
    if (path.basename(dir) === "session") return path.dirname(dir);
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return null;
}

function renderPart(part: JsonObject): string {
  switch (str(part["type"])) {
    case "text":
      return part["synthetic"] === true ? "" : (str(part["text"]) ?? "");
    case "tool": {
      const state = isObject(part["state"]) ? part["state"] : {};
      const call = renderToolCall(part["tool"], state["input"]);
      const output = state["output"] ?? state["error"];
      return output === undefined ? call : `${call}\n${renderToolResult(output, { isError: state["status"] === "error" })}`;
    }
    case "file":
      return `[file] ${str(part["filename"]) ?? str(part["url"]) ?? ""}`.trim();
    default:
      return "";
  }
}

export function createOpenCodeReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const xdgData = envValue(ctx.env, "XDG_DATA_HOME");
      const roots = [
        envValue(ctx.env, "OPENCODE_STORAGE_ROOT"),
        xdgData === null ? null : joinFor(ctx.platform, xdgData, "opencode", "storage"),
        joinFor(ctx.platform, ctx.home, ".local", "share", "opencode", "storage"),
      ];
      if (ctx.platform === "darwin") {
        roots.push(joinFor(ctx.platform, ctx.home, "Library", "Application Support", "opencode", "storage"));
      }
      return uniquePaths(roots);
    },
    async discover(configuredRoot: string): Promise<SessionFileRef[]> {
      // Accept the storage dir itself or its parent (`~/.local/share/opencode`).
      let root = configuredRoot;
      if ((await fileInfo(path.join(root, "session"))) === null) root = path.join(configuredRoot, "storage");
      const sessionDir = path.join(root, "session");
      // Session files sit at `session/<projectID>/<sessionID>.json`.
      const files = await walkFiles(sessionDir, {
        maxDepth: 1,
        acceptFile: (name, _full, depth) => depth === 2 && name.endsWith(".json"),
      });
      const refs: SessionFileRef[] = [];
      for (const file of files) {
        const info = await fileInfo(file);
        if (info === null || !info.isFile) continue;
        const messageDir = path.join(root, "message", path.basename(file, ".json"));
        const dirInfo = await fileInfo(messageDir);
        const mtimeMs = Math.max(info.mtimeMs, dirInfo?.mtimeMs ?? 0);
        refs.push({ agent: AGENT, path: file, mtimeMs, size: info.size });
      }
      return refs;
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const session = await readJsonDocument(ref.path);
      if (!isObject(session)) return [];
      const sessionId = nonEmpty(session["id"]) ?? path.basename(ref.path, ".json");
      const storage = storageRootOf(ref.path);
      if (storage === null) return [];
      const messages: Array<{ record: JsonObject; file: string }> = [];
      for (const file of await listJson(path.join(storage, "message", sessionId))) {
        const record = await readJsonDocument(file);
        if (isObject(record)) messages.push({ record, file });
      }
      const created = (m: JsonObject): number => toMs(isObject(m["time"]) ? m["time"]["created"] : undefined) ?? 0;
      messages.sort((a, b) => created(a.record) - created(b.record) || (a.file < b.file ? -1 : 1));

      const builder = new ConversationBuilder();
      for (const { record, file } of messages) {
        if (builder.full) break;
        const role = str(record["role"]);
        if (role === null) continue;
        const messageId = nonEmpty(record["id"]) ?? path.basename(file, ".json");
        const texts: string[] = [];
        for (const partFile of await listJson(path.join(storage, "part", messageId))) {
          const part = await readJsonDocument(partFile);
          if (isObject(part)) texts.push(renderPart(part));
        }
        if (texts.every((t) => t.trim() === "") && typeof record["content"] === "string") texts.push(record["content"]);
        builder.add({
          role,
          author: role === "assistant" ? nonEmpty(record["modelID"]) : null,
          createdAt: toMs(isObject(record["time"]) ? record["time"]["created"] : undefined),
          content: texts.filter((t) => t.trim() !== "").join("\n\n"),
          lineNumber: 1,
        });
      }
      const time = isObject(session["time"]) ? session["time"] : {};
      const conversation = builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: sessionId,
        title: nonEmpty(session["title"]),
        workspace: nonEmpty(session["directory"]),
        startedAt: toMs(time["created"]),
        endedAt: toMs(time["updated"]),
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
