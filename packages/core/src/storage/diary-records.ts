import { AppError } from "../errors.js";
import { formatZodIssues } from "../operation.js";
import { DiaryEntrySchema, type DiaryEntry } from "../schemas/records.js";

/** Diary ids every store can use as a file or row name: letters, digits, '.', '_' and '-'. */
export const DIARY_ID = /^[A-Za-z0-9._-]+$/;

/**
 * A stored diary entry's text (JSON) decoded, or why it cannot be used; `where` names the record in
 * the warning a store logs before skipping it.
 */
export function decodeDiaryText(text: string, where: string): { entry: DiaryEntry } | { warning: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { warning: `Skipping diary entry ${where}: not valid JSON` };
  }
  const parsed = DiaryEntrySchema.safeParse(value);
  return parsed.success ? { entry: parsed.data } : { warning: `Skipping invalid diary entry ${where}: ${formatZodIssues(parsed.error)}` };
}

/** The diary entry a store writes: validated, with an id usable as a name (VALIDATION_FAILED otherwise). */
export function diaryEntryForWrite(entry: DiaryEntry): DiaryEntry {
  const parsed = DiaryEntrySchema.safeParse(entry);
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", `Invalid diary entry: ${formatZodIssues(parsed.error)}`);
  if (!DIARY_ID.test(parsed.data.id)) {
    throw new AppError("VALIDATION_FAILED", `Invalid diary id "${parsed.data.id}": only letters, digits, '.', '_' and '-' are allowed.`);
  }
  return parsed.data;
}
