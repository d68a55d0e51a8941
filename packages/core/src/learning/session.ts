import { AppError } from "../errors.js";
import { redactDeep } from "../domain/secrets.js";
import { redactFor } from "../operations/secret-guard.js";
import { agentFromSessionPath } from "../domain/curator.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { sha256Hex } from "../domain/sha256.js";
import { extractKeywords } from "../domain/text.js";
import type { DiaryDraft, DiaryWriter, OperationDeps, SessionTranscript } from "../ports.js";
import { DiaryEntrySchema, type DiaryEntry } from "../schemas/records.js";

/** Reading a session for the learning pipeline and turning a diary writer's draft into a stored entry. */

/** Sessions longer than this are cut in the middle (head and tail kept): the ends hold the task and the result. */
export const MAX_TRANSCRIPT_CHARS = 400_000;
/** Below this many characters a session holds nothing to learn from (reference §7.5 step 4). */
export const MIN_TRANSCRIPT_CHARS = 50;

/** Keeps the first and last halves of an over-long text, marking the cut. */
export function truncateMiddle(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor((max - 40) / 2);
  return `${text.slice(0, half)}\n\n[... ${text.length - 2 * half} characters omitted ...]\n\n${text.slice(text.length - half)}`;
}

/**
 * The session's text from the episodic source, sanitised and capped. Throws SESSION_NOT_FOUND when
 * the source cannot read it.
 */
export async function loadTranscript(
  deps: Pick<OperationDeps, "episodic" | "config" | "cliName">,
  path: string,
  meta: { agent?: string; workspace?: string } = {},
): Promise<SessionTranscript> {
  const raw = await deps.episodic.export(path, "text");
  if (raw === null) {
    throw new AppError("SESSION_NOT_FOUND", `Could not read session ${path}`, {
      hint: `Check that the file exists and is a session file of a supported agent ('${deps.cliName} doctor' lists the readers).`,
      details: { sessionPath: path },
    });
  }
  const text = truncateMiddle(compileSanitizer(deps.config.sanitization).sanitize(raw), MAX_TRANSCRIPT_CHARS);
  // The agent is the one the source's reader read the session as; a path hint only when it cannot say.
  const described = meta.agent !== undefined && meta.agent !== "" ? null : await deps.episodic.describe?.(path).catch(() => null);
  const agent = meta.agent !== undefined && meta.agent !== "" ? meta.agent : (described?.agent ?? agentFromSessionPath(path));
  return { path, agent, ...(meta.workspace !== undefined ? { workspace: meta.workspace } : {}), text };
}

/** The original's diary id: `diary-` + 16 hex of SHA-256 over the normalised `<path>-<content>` (reference §4.4). */
export function diaryIdFor(sessionPath: string, content: string): string {
  const normalised = `${sessionPath}-${content}`.toLowerCase().replace(/\s+/g, " ").trim();
  return `diary-${sha256Hex(normalised).slice(0, 16)}`;
}

/** A stored diary entry from a writer's draft: id, path, agent and time added; lists cleaned. */
export function diaryEntryFromDraft(session: SessionTranscript, draft: DiaryDraft, nowIso: string): DiaryEntry {
  const clean = (items: readonly string[] | undefined, max = 20): string[] => {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const item of items ?? []) {
      const text = String(item).replace(/\s+/g, " ").trim();
      if (text === "" || seen.has(text)) continue;
      seen.add(text);
      out.push(text.length > 500 ? `${text.slice(0, 497)}...` : text);
      if (out.length >= max) break;
    }
    return out;
  };
  const workspace = draft.workspace ?? session.workspace;
  return DiaryEntrySchema.parse({
    id: diaryIdFor(session.path, session.text),
    sessionPath: session.path,
    timestamp: nowIso,
    agent: session.agent,
    ...(workspace !== undefined ? { workspace } : {}),
    ...(draft.duration !== undefined ? { duration: draft.duration } : {}),
    status: draft.status,
    accomplishments: clean(draft.accomplishments),
    decisions: clean(draft.decisions),
    challenges: clean(draft.challenges),
    preferences: clean(draft.preferences),
    keyLearnings: clean(draft.keyLearnings),
    relatedSessions: [],
    tags: clean(draft.tags, 12),
    searchAnchors: clean(draft.searchAnchors ?? extractKeywords([...draft.keyLearnings, ...draft.accomplishments].join(" ")), 12),
  });
}

/** Runs the diary writer on a session and returns the entry (not saved). */
export async function writeDiaryEntry(
  deps: Pick<OperationDeps, "clock"> & Partial<Pick<OperationDeps, "config">>,
  writer: DiaryWriter,
  session: SessionTranscript,
): Promise<DiaryEntry> {
  const draft = await writer.write(session);
  const entry = diaryEntryFromDraft(session, draft, deps.clock.now().toISOString());
  // The transcript was redacted, but a writer (an LLM) may still produce a secret: redact again.
  const config = deps.config;
  return config ? redactDeep(entry, (text) => redactFor(config, text)) : entry;
}
