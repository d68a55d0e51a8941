/**
 * ChatGPT: the macOS app's plaintext v1 store
 * (`~/Library/Application Support/com.openai.chat/conversations-<uuid>/*.json`) and the files
 * `cass import chatgpt` writes (`$XDG_DATA_HOME/cass/chatgpt`, default `~/.local/share/cass/chatgpt`).
 * A file holds one conversation `{id|conversation_id, title, mapping}` or, as in a web export's
 * `conversations.json`, an array of them. The encrypted v2/v3 stores
 * (`conversations-v2-*`, `conversations-v3-*`, `.data` files) are skipped: they need a key.
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
  str,
  toMs,
  toRefs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "chatgpt" as const;

function isEncryptedStore(name: string): boolean {
  return /^conversations-v\d+-/.test(name);
}

/** Text of a ChatGPT `content` object (`parts`, or `text` for code/execution output). */
function contentText(content: unknown): string {
  if (!isObject(content)) return flattenContent(content);
  const type = str(content["content_type"]);
  if (type === "thoughts" || type === "reasoning_recap" || type === "user_editable_context") return "";
  if (Array.isArray(content["parts"])) return flattenContent(content["parts"]);
  return str(content["text"]) ?? str(content["result"]) ?? "";
}

/** Message nodes in conversation order: the active branch when `current_node` is known. */
function orderedNodes(conv: JsonObject): JsonObject[] {
  const mapping = isObject(conv["mapping"]) ? conv["mapping"] : {};
  const current = str(conv["current_node"]);
  if (current !== null && isObject(mapping[current])) {
    const chain: JsonObject[] = [];
    const seen = new Set<string>();
    let id: string | null = current;
    while (id !== null && !seen.has(id) && isObject(mapping[id])) {
      seen.add(id);
      const node: JsonObject = mapping[id] as JsonObject;
      chain.push(node);
      id = str(node["parent"]);
    }
    return chain.reverse();
  }
  const nodes = Object.values(mapping).filter(isObject);
  const time = (n: JsonObject): number => {
    const message = isObject(n["message"]) ? n["message"] : {};
    return toMs(message["create_time"]) ?? Number.MAX_SAFE_INTEGER;
  };
  // Stable sort keeps the mapping's own order for messages without a time.
  return nodes.map((n, i) => ({ n, i })).sort((a, b) => time(a.n) - time(b.n) || a.i - b.i).map(({ n }) => n);
}

function readConversation(conv: JsonObject, sourcePath: string): NormalizedConversation | null {
  if (!isObject(conv["mapping"])) return null;
  const builder = new ConversationBuilder();
  for (const node of orderedNodes(conv)) {
    if (builder.full) break;
    const message = isObject(node["message"]) ? node["message"] : null;
    if (message === null) continue;
    const author = isObject(message["author"]) ? message["author"] : {};
    const role = str(author["role"]);
    if (role === null) continue;
    const metadata = isObject(message["metadata"]) ? message["metadata"] : {};
    if (metadata["is_visually_hidden_from_conversation"] === true) continue;
    builder.add({
      role,
      author: role === "assistant" ? nonEmpty(metadata["model_slug"]) : role === "tool" ? nonEmpty(author["name"]) : null,
      createdAt: toMs(message["create_time"]),
      content: contentText(message["content"]),
      lineNumber: 1,
    });
  }
  return builder.build({
    agent: AGENT,
    sourcePath,
    externalId: nonEmpty(conv["id"]) ?? nonEmpty(conv["conversation_id"]) ?? path.basename(sourcePath, ".json"),
    title: nonEmpty(conv["title"]),
    startedAt: toMs(conv["create_time"]),
    endedAt: toMs(conv["update_time"]),
  });
}

export function createChatGptReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const roots: Array<string | null> = [];
      if (ctx.platform === "darwin") {
        roots.push(joinFor(ctx.platform, ctx.home, "Library", "Application Support", "com.openai.chat"));
      }
      const xdgData = envValue(ctx.env, "XDG_DATA_HOME");
      if (xdgData !== null) roots.push(joinFor(ctx.platform, xdgData, "cass", "chatgpt"));
      if (ctx.platform !== "win32") roots.push(joinFor(ctx.platform, ctx.home, ".local", "share", "cass", "chatgpt"));
      return uniquePaths(roots);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 2,
        acceptFile: (name) => name.endsWith(".json") && !name.startsWith("."),
        enterDir: (name) => !isEncryptedStore(name),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const doc = await readJsonDocument(ref.path);
      const items = Array.isArray(doc) ? doc : [doc];
      const out: NormalizedConversation[] = [];
      for (const item of items) {
        if (!isObject(item)) continue;
        const conversation = readConversation(item, ref.path);
        if (conversation !== null) out.push(conversation);
      }
      return out;
    },
  };
}
