import { AppError } from "../errors.js";
import { formatZodIssues } from "../operation.js";
import { isCanonicalBulletInOrder, isCanonicalJournalEventInOrder, isCanonicalPlaybookHeadInOrder } from "./bullet-check.js";
import { JournalEventSchema, type JournalEvent } from "./records.js";
import { BlockedEntrySchema, BulletSchema, PlaybookSchema, type BlockedEntry, type Playbook } from "./playbook.js";

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Encoding and validation of stored records, shared by every Store implementation so that they
 * cannot disagree on what is valid (ARCHITECTURE.md §3).
 */

/** Parses JSONL text: one JSON value per non-empty line; `#` lines are comments (processed logs). */
export function parseJsonLines(text: string | undefined): { values: unknown[]; malformed: number } {
  const values: unknown[] = [];
  let malformed = 0;
  for (const raw of (text ?? "").split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    try {
      values.push(JSON.parse(line));
    } catch {
      malformed += 1;
    }
  }
  return { values, malformed };
}

/**
 * Validates a playbook a mutation produced before it is written. Throws VALIDATION_FAILED (and
 * nothing is written) when the change left it invalid.
 */
export function validatePlaybookForWrite(playbook: unknown, path: string): Playbook {
  // Rules that are already what BulletSchema returns (keys in its order) skip it, and so does a
  // top-level record in PlaybookSchema's output form; anything else goes through the schemas one
  // by one (the bullets come last in the record, so a fault in it is the first issue either way).
  // A change to one rule of a large playbook then validates that rule, not every rule. On any
  // fault, the whole playbook is checked as before, so the error is the same.
  if (isPlainRecord(playbook) && Array.isArray(playbook.bullets)) {
    // A head already in the schema's output form is taken as is (copied as the schema would copy
    // it): the schema's first use in a process costs ≈12 ms, mostly building BulletSchema.
    const head = isCanonicalPlaybookHeadInOrder(playbook)
      ? { success: true as const, data: copyHead(playbook) }
      : PlaybookSchema.safeParse({ ...playbook, bullets: [] }, { jitless: true });
    if (head.success) {
      const bullets: unknown[] = [];
      for (const bullet of playbook.bullets as unknown[]) {
        if (isCanonicalBulletInOrder(bullet)) bullets.push(bullet);
        else {
          const one = BulletSchema.safeParse(bullet);
          if (!one.success) break;
          bullets.push(one.data);
        }
      }
      if (bullets.length === playbook.bullets.length) {
        head.data.bullets = bullets as Playbook["bullets"];
        return head.data;
      }
    }
  }
  const checked = PlaybookSchema.safeParse(playbook);
  if (checked.success) return checked.data;
  const issue = checked.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  throw new AppError("VALIDATION_FAILED", `Refusing to write an invalid playbook to ${path}: ${where}${issue?.message ?? "invalid"}`, {
    hint: "The change was not saved; the playbook is unchanged.",
    details: { path },
    cause: checked.error,
  });
}

/** A canonical playbook's head as PlaybookSchema returns it: new objects for it, its metadata and its patterns; no bullets. */
function copyHead(playbook: Record<string, unknown>): Playbook {
  const patterns = playbook.deprecatedPatterns as Array<Record<string, unknown>>;
  return { ...playbook, metadata: { ...(playbook.metadata as Record<string, unknown>) }, deprecatedPatterns: patterns.map((p) => ({ ...p })), bullets: [] } as unknown as Playbook;
}

/**
 * JournalEventSchema.parse for an event about to be written: an event already in the schema's
 * output form is copied as the schema would copy it, without building the schema (≈6 ms on a
 * process's first event); anything else goes through the schema, which throws as before.
 */
export function parseJournalEventForWrite(event: unknown): JournalEvent {
  if (!isCanonicalJournalEventInOrder(event)) return JournalEventSchema.parse(event);
  const copy: JournalEvent = { ...event };
  if (event.before !== undefined) copy.before = { ...event.before };
  if (event.after !== undefined) copy.after = { ...event.after };
  return copy;
}

/**
 * The journal events of one mutation, checked before anything is written (parseJournalEventForWrite
 * for each): VALIDATION_FAILED on the first invalid one, so the store writes nothing.
 */
export function checkJournalEventsForWrite(events: readonly unknown[]): JournalEvent[] {
  return events.map((event) => {
    if (isCanonicalJournalEventInOrder(event)) return parseJournalEventForWrite(event);
    const parsed = JournalEventSchema.safeParse(event);
    if (!parsed.success) {
      throw new AppError("VALIDATION_FAILED", `Invalid journal event: ${formatZodIssues(parsed.error)}`, {
        hint: "The change was not saved; the playbook is unchanged.",
        cause: parsed.error,
      });
    }
    return parsed.data;
  });
}

/** Validates blocked-log entries before they are appended; throws VALIDATION_FAILED on the first bad one. */
export function validateBlockedEntries(entries: readonly unknown[]): BlockedEntry[] {
  return entries.map((entry) => {
    const parsed = BlockedEntrySchema.safeParse(entry);
    if (!parsed.success) {
      throw new AppError("VALIDATION_FAILED", `Invalid blocked entry: ${parsed.error.issues[0]?.message ?? "invalid"}`, {
        hint: "A blocked entry needs a non-empty id and a content string.",
        cause: parsed.error,
      });
    }
    return parsed.data;
  });
}

/** Decodes blocked-log lines, skipping (and counting) the ones that are not valid entries. */
export function decodeBlockedEntries(values: readonly unknown[]): { entries: BlockedEntry[]; invalid: number } {
  const entries: BlockedEntry[] = [];
  let invalid = 0;
  for (const value of values) {
    const parsed = BlockedEntrySchema.safeParse(value);
    if (parsed.success) entries.push(parsed.data);
    else invalid += 1;
  }
  return { entries, invalid };
}
