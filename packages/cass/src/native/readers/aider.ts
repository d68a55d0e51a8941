/**
 * Aider: `<project>/.aider.chat.history.md` (found up to depth 5 under the roots) and
 * `~/.aider.chat.history.md`; `CASS_AIDER_DATA_ROOT` replaces the home directory as the root.
 *
 * Roles follow what Aider itself writes (its `io.py`), not cass's parser: `#### ` lines are the
 * user's prompts, `> ` lines are tool/command output and confirmations (role "tool"), and other
 * text is the assistant's reply. Each `# aider chat started at <time>` header starts a new
 * conversation. The file has no per-message times: a session's start comes from its header and
 * the last session ends at the file's mtime (a file without headers uses the mtime for both).
 */
import path from "node:path";

import type { DiscoveryEnv, NormalizedConversation, SessionFileRef, SessionReader } from "../../model.js";
import { ConversationBuilder, envValue, readLines, toRefs, uniquePaths, walkFiles } from "./util.js";

const AGENT = "aider" as const;
const FILE_NAME = ".aider.chat.history.md";
const SESSION_HEADER = /^# aider chat started at (.+)$/;
/** Directories never worth descending into when searching a broad root such as HOME. */
const SKIPPED_DIRS = new Set([
  "Library",
  "AppData",
  "Applications",
  "target",
  "dist",
  "build",
  "venv",
  "__pycache__",
  "snap",
]);

type Kind = "user" | "tool" | "assistant";

/** Local wall-clock header time (`2024-05-01 10:00:00`) → ms. */
function headerTime(text: string): number | null {
  const parsed = Date.parse(text.trim().replace(" ", "T"));
  return Number.isNaN(parsed) ? null : parsed;
}

export function createAiderReader(): SessionReader {
  return {
    agent: AGENT,
    defaultRoots(ctx: DiscoveryEnv): string[] {
      return uniquePaths([envValue(ctx.env, "CASS_AIDER_DATA_ROOT") ?? ctx.home]);
    },
    async discover(root: string): Promise<SessionFileRef[]> {
      const files = await walkFiles(root, {
        maxDepth: 5,
        maxDirs: 20_000,
        acceptFile: (name) => name === FILE_NAME,
        enterDir: (name) => !name.startsWith(".") && !SKIPPED_DIRS.has(name),
      });
      return toRefs(AGENT, files);
    },
    async read(ref: SessionFileRef): Promise<NormalizedConversation[]> {
      const workspace = path.dirname(ref.path);
      const title = `Aider Chat: ${path.basename(workspace)}`;
      const sessions: Array<{ builder: ConversationBuilder; startedAt: number | null; header: string | null }> = [];
      let current = { builder: new ConversationBuilder(), startedAt: null as number | null, header: null as string | null };
      let kind: Kind | null = null;
      let block: string[] = [];
      let blockLine = 0;

      const flush = (): void => {
        if (kind !== null) current.builder.add({ role: kind, content: block.join("\n"), lineNumber: blockLine });
        kind = null;
        block = [];
      };

      for await (const { text, lineNumber } of readLines(ref.path)) {
        // A NUL byte means this is not a Markdown history.
        if (text.includes("\u0000")) return [];
        const header = SESSION_HEADER.exec(text);
        if (header !== null) {
          flush();
          if (current.builder.messages.length > 0) sessions.push(current);
          current = { builder: new ConversationBuilder(), startedAt: headerTime(header[1]!), header: header[1]!.trim() };
          continue;
        }
        if (current.builder.full) continue;
        let lineKind: Kind | null;
        let body = text;
        if (text.startsWith("####")) {
          lineKind = "user";
          body = text.replace(/^####\s?/, "");
        } else if (text.startsWith(">")) {
          lineKind = "tool";
          body = text.replace(/^>\s?/, "");
        } else if (text.trim() === "") {
          lineKind = null;
        } else {
          lineKind = "assistant";
        }
        if (lineKind === null) {
          if (kind !== null) block.push("");
          continue;
        }
        if (lineKind !== kind) {
          flush();
          kind = lineKind;
          blockLine = lineNumber;
        }
        block.push(body);
      }
      flush();
      if (current.builder.messages.length > 0) sessions.push(current);

      const out: NormalizedConversation[] = [];
      sessions.forEach((session, i) => {
        const isLast = i === sessions.length - 1;
        const startedAt = session.startedAt ?? (session.header === null ? Math.round(ref.mtimeMs) : null);
        const endedAt = isLast ? Math.round(ref.mtimeMs) : (sessions[i + 1]!.startedAt ?? startedAt);
        const conversation = session.builder.build({
          agent: AGENT,
          sourcePath: ref.path,
          externalId: session.header,
          title,
          workspace,
          startedAt,
          endedAt,
        });
        if (conversation !== null) out.push(conversation);
      });
      return out;
    },
  };
}
