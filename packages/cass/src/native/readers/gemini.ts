/**
 * Gemini CLI: `$GEMINI_HOME` (default `~/.gemini/tmp`)`/<projectHash>/chats/session-*.json`, one
 * JSON document per session. Gemini records no working directory, so the workspace is guessed
 * from absolute paths mentioned in the messages (null when nothing plausible is found).
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
  renderToolCall,
  str,
  toMs,
  toRefs,
  uniquePaths,
  walkFiles,
} from "./util.js";

const AGENT = "gemini" as const;

const ROLE_BY_TYPE: Record<string, string> = {
  user: "user",
  model: "assistant",
  gemini: "assistant",
  assistant: "assistant",
};

/** `/home/<u>/<dir>`, `/Users/<u>/<dir>` or `C:\Users\<u>\<dir>` prefixes of paths in the text. */
const HOME_PATH = /(?:^|[\s"'`(=:])((?:\/home|\/Users)\/[^\s/"'`)]+\/[^\s/"'`):,;]+|[A-Za-z]:\\Users\\[^\s\\"'`)]+\\[^\s\\"'`):,;]+)/g;

/** The project directory most often mentioned under a home directory, if any. */
export function guessWorkspace(texts: string[]): string | null {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const match of text.matchAll(HOME_PATH)) {
      const candidate = match[1]!.replace(/[.]+$/, "");
      if (candidate.split(/[\\/]/).pop()!.startsWith(".")) continue;
      counts.set(candidate, (counts.get(candidate) ?? 0) + 1);
    }
  }
  let best: string | null = null;
  let bestCount = 0;
  for (const [candidate, count] of counts) {
    if (count > bestCount) {
      best = candidate;
      bestCount = count;
    }
  }
  return best;
}

export function createGeminiReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const geminiHome = envValue(ctx.env, "GEMINI_HOME");
      return uniquePaths([geminiHome, joinFor(ctx.platform, ctx.home, ".gemini", "tmp")]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      // Walking to depth 4 covers both `<root>/<hash>/chats` and `<root>/tmp/<hash>/chats`.
      const files = await walkFiles(root, {
        maxDepth: 4,
        acceptFile: (name, full) =>
          name.startsWith("session-") && name.endsWith(".json") && path.basename(path.dirname(full)) === "chats",
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const doc = await readJsonDocument(ref.path);
      if (!isObject(doc) || !Array.isArray(doc["messages"])) return [];
      const builder = new ConversationBuilder();
      const texts: string[] = [];
      for (const message of doc["messages"]) {
        if (builder.full) break;
        if (!isObject(message)) continue;
        const role = ROLE_BY_TYPE[str(message["type"]) ?? str(message["role"]) ?? ""];
        if (role === undefined) continue;
        const parts = [flattenContent(message["content"] ?? message["parts"])];
        if (Array.isArray(message["toolCalls"])) {
          for (const call of message["toolCalls"]) {
            if (isObject(call)) parts.push(renderToolCall(call["name"], call["args"]));
          }
        }
        const content = parts.filter((p) => p.trim() !== "").join("\n\n");
        texts.push(content);
        builder.add({
          role,
          author: role === "assistant" ? nonEmpty(message["model"]) : null,
          createdAt: toMs(message["timestamp"]),
          content,
          lineNumber: 1,
        });
      }
      const conversation = builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: nonEmpty(doc["sessionId"]) ?? path.basename(ref.path, ".json"),
        workspace: guessWorkspace(texts),
        startedAt: toMs(doc["startTime"]),
        endedAt: toMs(doc["lastUpdated"]),
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
