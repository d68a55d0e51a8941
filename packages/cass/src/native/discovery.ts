/**
 * The reader registry and session discovery: runs each agent's reader over its default roots
 * plus any roots the user configured, de-duplicating roots and files.
 */
import path from "node:path";

import { AGENT_SLUGS, type AgentSlug, type DiscoveryEnv, type SessionFileRef, type SessionReader } from "../model.js";
import { createAiderReader } from "./readers/aider.js";
import { createAmpReader } from "./readers/amp.js";
import { createChatGptReader } from "./readers/chatgpt.js";
import { createClaudeCodeReader } from "./readers/claude-code.js";
import { createClineReader } from "./readers/cline.js";
import { createCodexReader } from "./readers/codex.js";
import { createCopilotReader } from "./readers/copilot.js";
import { createGeminiReader } from "./readers/gemini.js";
import { createGenericReader } from "./readers/generic.js";
import { createOpenCodeReader } from "./readers/opencode.js";
import { createPiAgentReader } from "./readers/pi-agent.js";
import { expandHome } from "./readers/util.js";

/**
 * One reader per supported agent, the generic reader last. Cursor is not among them: it keeps
 * chats in SQLite (`state.vscdb`), and this package has no SQLite driver.
 */
export function createSessionReaders(): SessionReader[] {
  return [
    createClaudeCodeReader(),
    createCodexReader(),
    createGeminiReader(),
    createAiderReader(),
    createClineReader(),
    createOpenCodeReader(),
    createPiAgentReader(),
    createChatGptReader(),
    createCopilotReader(),
    createAmpReader(),
    createGenericReader(),
  ];
}

/** Normalises a configured agent key (`claude-code` → `claude_code`); null when unknown. */
export function normalizeAgentKey(key: string): AgentSlug | null {
  const slug = key.trim().toLowerCase().replace(/-/g, "_");
  if (slug === "copilot_cli") return "copilot";
  if (slug === "pi") return "pi_agent";
  return (AGENT_SLUGS as readonly string[]).includes(slug) ? (slug as AgentSlug) : null;
}

/**
 * Finds every session file: for each reader, its default roots then the extra roots configured
 * for its agent (keys may use `-` or `_`). A file found by several roots or readers is reported
 * once, by the first reader that found it (specific readers precede the generic one).
 */
export async function discoverSessions(
  readers: SessionReader[],
  ctx: DiscoveryEnv,
  extraRoots: Record<string, string[]> = {},
): Promise<Array<{ reader: SessionReader; ref: SessionFileRef }>> {
  const extras = new Map<AgentSlug, string[]>();
  for (const [key, roots] of Object.entries(extraRoots)) {
    const slug = normalizeAgentKey(key);
    if (slug === null || !Array.isArray(roots)) continue;
    extras.set(slug, [...(extras.get(slug) ?? []), ...roots.filter((r): r is string => typeof r === "string" && r.trim() !== "")]);
  }
  // Every (reader, root) pair is walked at once: most roots do not exist, and walking them one
  // after the other left the process waiting on one file-system call at a time (≈15 ms per call
  // of `cm context` without cass). The results are then taken in reader and root order, as before.
  const walks: Array<{ reader: SessionReader; refs: Promise<SessionFileRef[] | null> }> = [];
  for (const reader of readers) {
    const seenRoots = new Set<string>();
    const roots = [...reader.defaultRoots(ctx), ...(extras.get(reader.agent) ?? [])];
    for (const rawRoot of roots) {
      const root = path.resolve(expandHome(rawRoot.trim(), ctx.home));
      if (seenRoots.has(root)) continue;
      seenRoots.add(root);
      walks.push({ reader, refs: discoverRoot(reader, root) });
    }
  }
  const found: Array<{ reader: SessionReader; ref: SessionFileRef }> = [];
  const seenFiles = new Set<string>();
  for (const { reader, refs } of walks) {
    for (const ref of (await refs) ?? []) {
      const key = path.resolve(ref.path);
      if (seenFiles.has(key)) continue;
      seenFiles.add(key);
      found.push({ reader, ref });
    }
  }
  return found;
}

/** A reader's files under one root; null when the walk failed (the root is skipped, as unreadable). */
async function discoverRoot(reader: SessionReader, root: string): Promise<SessionFileRef[] | null> {
  try {
    return await reader.discover(root);
  } catch {
    return null;
  }
}
