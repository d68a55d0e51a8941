/**
 * Pi coding agent: `$PI_CODING_AGENT_DIR` (default `~/.pi/agent`)`/sessions/--<cwd>--/<ts>_<uuid>.jsonl`,
 * plus Oh My Pi at `~/.omp/agent/sessions`. Lines are typed: `session` (id, cwd, modelId),
 * `message` (user / assistant / toolResult), `model_change`, `thinking_level_change`.
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
  readJsonl,
  renderToolResult,
  str,
  toMs,
  toRefs,
  uniquePaths,
  walkFiles,
} from "./util.js";

const AGENT = "pi_agent" as const;

export function createPiAgentReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      const piDir = envValue(ctx.env, "PI_CODING_AGENT_DIR");
      return uniquePaths([
        piDir === null ? null : joinFor(ctx.platform, piDir, "sessions"),
        joinFor(ctx.platform, ctx.home, ".pi", "agent", "sessions"),
        joinFor(ctx.platform, ctx.home, ".omp", "agent", "sessions"),
      ]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, { maxDepth: 3, acceptFile: (name) => name.endsWith(".jsonl") });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const builder = new ConversationBuilder();
      let sessionId: string | null = null;
      let workspace: string | null = null;
      let startedAt: number | null = null;
      let model: string | null = null;
      for await (const { value, lineNumber } of readJsonl(ref.path)) {
        if (builder.full) break;
        switch (str(value["type"])) {
          case "session":
            sessionId ??= nonEmpty(value["id"]);
            workspace ??= nonEmpty(value["cwd"]);
            startedAt ??= toMs(value["timestamp"]);
            model = nonEmpty(value["modelId"]) ?? model;
            break;
          case "model_change":
            model = nonEmpty(value["modelId"]) ?? model;
            break;
          case "message": {
            const message = isObject(value["message"]) ? value["message"] : null;
            if (message === null) break;
            const role = str(message["role"]);
            const createdAt = toMs(message["timestamp"]) ?? toMs(value["timestamp"]);
            if (role === "toolResult") {
              builder.add({
                role: "tool",
                createdAt,
                content: renderToolResult(message["content"], { name: message["toolName"], isError: message["isError"] === true }),
                lineNumber,
              });
            } else if (role === "user" || role === "assistant" || role === "system") {
              builder.add({
                role,
                author: role === "assistant" ? (nonEmpty(message["model"]) ?? model) : null,
                createdAt,
                content: flattenContent(message["content"]),
                lineNumber,
              });
            }
            break;
          }
          default:
            break;
        }
      }
      const conversation = builder.build({
        agent: AGENT,
        sourcePath: ref.path,
        externalId: sessionId ?? path.basename(ref.path, ".jsonl"),
        workspace,
        startedAt,
      });
      return conversation === null ? [] : [conversation];
    },
  };
}
