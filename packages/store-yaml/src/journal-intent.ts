import { readFile, rename, truncate, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { JournalEventSchema } from "@cass-memory/core";
import type { JournalEvent, Logger } from "@cass-memory/core";
import { appendJsonl, atomicWriteFile } from "@cass-memory/node-files";
import { sha256Hex } from "./parse-cache.js";

/**
 * The journal intent (docs/adr/0012-journal-crash-safety.md). A playbook mutation that produces
 * journal events writes them first to `events.pending.json` beside the journal (atomically, with
 * the SHA-256 of the playbook file before and after the change), then renames the new playbook into
 * place, then appends the events to `events.jsonl`, then deletes the intent. Whoever finds an intent
 * later (the next mutation under the lock, `readJournal`, `cm doctor`) settles it from the files:
 *
 * - some of its events are already in the journal, the journal ends in a torn fragment of one of
 *   them, or the playbook file has the `after` hash → the playbook write happened: complete (append
 *   the events that are missing, after cutting the torn fragment);
 * - the playbook file has the `before` hash (or is still absent) → it did not: discard;
 * - anything else (the playbook was replaced by hand since) → unresolved: set aside for the user.
 *
 * `events.jsonl` itself keeps its format: every line is an ordinary journal event.
 */

export const INTENT_FILE = "events.pending.json";
export const INTENT_FORMAT = 1;

export interface JournalIntent {
  format: number;
  /** When the intent was written. */
  createdAt: string;
  /** The playbook file this intent belongs to. */
  playbook: string;
  /** SHA-256 (hex) of the playbook file's bytes before the change; null when it did not exist. */
  before: string | null;
  /** SHA-256 (hex) of the playbook file's bytes the change writes. */
  after: string;
  events: JournalEvent[];
}

export type IntentOutcome =
  | { kind: "complete"; missing: JournalEvent[]; present: number; keepBytes: number | null; why: string }
  | { kind: "discard"; why: string }
  | { kind: "unresolved"; why: string };

export type IntentRead = { intent: JournalIntent } | { invalid: string } | null;

export function intentPathFor(journalPath: string): string {
  return join(dirname(journalPath), INTENT_FILE);
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Bytes of a file, or null when it does not exist. */
export async function readBytesOrNull(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw error;
  }
}

/** The intent at `path`: null when there is none, `{invalid}` when it cannot be read as one. */
export async function readIntent(path: string): Promise<IntentRead> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    return { invalid: error instanceof Error ? error.message : String(error) };
  }
  try {
    const value = JSON.parse(text) as Partial<JournalIntent> | null;
    if (value === null || typeof value !== "object" || value.format !== INTENT_FORMAT) return { invalid: "unknown intent format" };
    if (typeof value.after !== "string" || (value.before !== null && typeof value.before !== "string") || !Array.isArray(value.events)) {
      return { invalid: "missing before/after/events" };
    }
    const events: JournalEvent[] = [];
    for (const event of value.events) {
      const parsed = JournalEventSchema.safeParse(event);
      if (!parsed.success) return { invalid: "an event does not validate" };
      events.push(parsed.data);
    }
    return { intent: { ...(value as JournalIntent), events } };
  } catch (error) {
    return { invalid: `not JSON (${error instanceof Error ? error.message : String(error)})` };
  }
}

/** Writes the intent atomically (temp file, fsync, rename): it is either all there or absent. */
export async function writeIntent(path: string, intent: JournalIntent): Promise<void> {
  await atomicWriteFile(path, JSON.stringify(intent));
}

/**
 * Decides an intent from the playbook file's hash (null: absent) and the journal's bytes (null:
 * absent). Only the journal's last lines can hold the intent's events: everything that appends to
 * the journal holds the playbook's lock and settles an intent first.
 */
export function judgeIntent(intent: JournalIntent, playbookHash: string | null, journal: Buffer | null): IntentOutcome {
  const lines = intent.events.map((event) => JSON.stringify(event));
  let end = journal === null ? 0 : journal.length;
  let keepBytes: number | null = null;
  if (journal !== null && end > 0 && journal[end - 1] !== 0x0a) {
    const cut = journal.lastIndexOf(0x0a) + 1;
    const fragment = journal.subarray(cut).toString("utf8");
    if (lines.some((line) => line.startsWith(fragment))) keepBytes = cut;
    end = cut;
  }
  // The intent's events, if appended, are among the last `events.length` complete lines.
  const ids = new Set(intent.events.map((event) => event.id));
  const present = new Set<string>();
  if (journal !== null && end > 0) {
    const tail = journal.subarray(0, end).toString("utf8").split("\n");
    let seen = 0;
    for (let i = tail.length - 1; i >= 0 && seen < intent.events.length; i--) {
      const line = tail[i]!.trim();
      if (line === "") continue;
      seen++;
      try {
        const id = (JSON.parse(line) as { id?: unknown } | null)?.id;
        if (typeof id === "string" && ids.has(id)) present.add(id);
      } catch {
        // a malformed line is not one of ours
      }
    }
  }
  const missing = intent.events.filter((event) => !present.has(event.id));
  if (present.size > 0 || keepBytes !== null) {
    return { kind: "complete", missing, present: present.size, keepBytes, why: "the journal append had started, so the playbook write happened" };
  }
  if (playbookHash === intent.after) return { kind: "complete", missing, present: 0, keepBytes, why: "the playbook holds the change" };
  if (playbookHash === intent.before) return { kind: "discard", why: "the playbook write did not happen" };
  return { kind: "unresolved", why: "the playbook was replaced since (it matches neither the state before nor after the change)" };
}

export interface SettleResult {
  outcome: IntentOutcome | { kind: "invalid"; why: string } | null;
  /** Where an unresolved or unreadable intent was moved. */
  setAside?: string;
}

async function moveAside(path: string): Promise<string> {
  const target = `${path}.unresolved.${Date.now()}`;
  await rename(path, target);
  return target;
}

/**
 * Settles the intent beside `journalPath`, if any. The caller holds the playbook's lock. Complete:
 * cut a torn fragment, append the missing events (fsync), delete the intent. Discard: delete it.
 * Unresolved or unreadable: move it to `events.pending.json.unresolved.<epoch-ms>` (never deleted;
 * `cm doctor` reports it).
 */
export async function settleIntent(playbookPath: string, journalPath: string, logger: Logger): Promise<SettleResult> {
  const intentPath = intentPathFor(journalPath);
  const read = await readIntent(intentPath);
  if (read === null) return { outcome: null };
  if ("invalid" in read) {
    const aside = await moveAside(intentPath);
    logger.warn(`Set aside an unreadable journal intent (${read.invalid}) as ${aside}`);
    return { outcome: { kind: "invalid", why: read.invalid }, setAside: aside };
  }
  const playbook = await readBytesOrNull(playbookPath);
  const journal = await readBytesOrNull(journalPath);
  const outcome = judgeIntent(read.intent, playbook === null ? null : sha256Hex(playbook), journal);
  if (outcome.kind === "complete") {
    if (outcome.keepBytes !== null) await truncate(journalPath, outcome.keepBytes);
    if (outcome.missing.length > 0) await appendJsonl(journalPath, outcome.missing, { sync: true });
    await unlink(intentPath);
    logger.info(`Completed the journal of an interrupted change: ${outcome.missing.length} event(s) appended to ${journalPath}`);
    return { outcome };
  }
  if (outcome.kind === "discard") {
    await unlink(intentPath);
    logger.debug(`Discarded the journal intent of a change that was never written (${intentPath})`);
    return { outcome };
  }
  const aside = await moveAside(intentPath);
  logger.warn(`A journal intent could not be settled (${outcome.why}); kept as ${aside}. Run 'cm doctor' for details.`);
  return { outcome, setAside: aside };
}

/**
 * The journal's events as they will be once a pending intent is settled (read-only; no lock):
 * the events of an intent whose playbook write happened are included, a torn fragment of them is
 * not counted as malformed.
 */
export async function pendingView(
  playbookPath: string,
  journalPath: string,
  journal: Buffer | null,
): Promise<{ extra: JournalEvent[]; tornFragment: boolean }> {
  let read: IntentRead;
  try {
    read = await readIntent(intentPathFor(journalPath));
  } catch {
    return { extra: [], tornFragment: false };
  }
  if (read === null || "invalid" in read) return { extra: [], tornFragment: false };
  const playbook = await readBytesOrNull(playbookPath).catch(() => null);
  const outcome = judgeIntent(read.intent, playbook === null ? null : sha256Hex(playbook), journal);
  if (outcome.kind !== "complete") return { extra: [], tornFragment: false };
  return { extra: outcome.missing, tornFragment: outcome.keepBytes !== null };
}
