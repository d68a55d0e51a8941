/**
 * Amp (Sourcegraph): thread JSON files under `$XDG_DATA_HOME/amp` (default `~/.local/share/amp`)
 * and the VS Code-family `globalStorage/sourcegraph.amp` storage. A thread is
 * `{id, title, messages: [{role, text|content, createdAt}]}`; content may also be a block array.
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import {
  ConversationBuilder,
  editorUserDirs,
  envValue,
  fileUriToPath,
  firstMs,
  flattenContent,
  isObject,
  joinFor,
  nonEmpty,
  readJsonDocument,
  str,
  toRefs,
  uniquePaths,
  walkFiles,
  type JsonObject,
} from "./util.js";

const AGENT = "amp" as const;

/** First workspace tree recorded in a thread's environment, if any. */
function workspaceOf(thread: JsonObject): string | null {
  const env = isObject(thread["env"]) ? thread["env"] : null;
  const initial = env !== null && isObject(env["initial"]) ? env["initial"] : null;
  const trees = initial !== null && Array.isArray(initial["trees"]) ? initial["trees"] : [];
  for (const tree of trees) {
    if (!isObject(tree)) continue;
    const uri = nonEmpty(tree["uri"]);
    if (uri !== null) return fileUriToPath(uri);
  }
  return nonEmpty(thread["workspace"]) ?? nonEmpty(thread["cwd"]);
}

export function createAmpReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const xdgData = envValue(ctx.env, "XDG_DATA_HOME");
      const roots: Array<string | null> = [
        xdgData === null ? null : joinFor(ctx.platform, xdgData, "amp"),
        joinFor(ctx.platform, ctx.home, ".local", "share", "amp"),
      ];
      for (const userDir of editorUserDirs(ctx)) roots.push(joinFor(ctx.platform, userDir, "globalStorage", "sourcegraph.amp"));
      return uniquePaths(roots);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 3,
        acceptFile: (name) => name.endsWith(".json") && !name.startsWith("."),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const thread = await readJsonDocument(ref.path);
      if (!isObject(thread) || !Array.isArray(thread["messages"])) return [];
      const builder = new ConversationBuilder();
      for (const message of thread["messages"]) {
        if (builder.full) break;
        if (!isObject(message)) continue;
        const role = str(message["role"]);
        if (role === null) continue;
        const meta = isObject(message["meta"]) ? message["meta"] : {};
        builder.add({
          role,
          author: role === "assistant" ? nonEmpty(message["model"]) : null,
          createdAt: firstMs(message["createdAt"], message["created_at"], message["timestamp"], meta["sentAt"]),
          content: flattenContent(message["text"] ?? message["content"]),
          lineNumber: 1,
        });
      }
      const conversation = builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: nonEmpty(thread["id"]) ?? path.basename(ref.path, ".json"),
        title: nonEmpty(thread["title"]),
        workspace: workspaceOf(thread),
        startedAt: firstMs(thread["created"], thread["createdAt"]),
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
