import type { LogRecordUpdate, LogUpdateResult } from "../ports.js";

/**
 * The line-level rule of `Store.updateLog`, shared by the stores so that they cannot disagree: a
 * JSON line is handed to `fn` and kept, replaced or deleted; a line that is not JSON is kept as it
 * is; a blank line is dropped.
 */

export type LogLineUpdate = { action: "keep" } | { action: "replace"; line: string } | { action: "remove" } | { action: "drop-blank" };

export function updateLogLine(line: string, fn: LogRecordUpdate): LogLineUpdate {
  if (line.trim() === "") return { action: "drop-blank" };
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    return { action: "keep" };
  }
  const next = fn(record);
  if (next === undefined || next === record) return { action: "keep" };
  if (next === null) return { action: "remove" };
  return { action: "replace", line: JSON.stringify(next) };
}

/**
 * Applies `fn` to the records of a JSONL text. `text` is null when nothing changed (the caller
 * then writes nothing); otherwise the new text, ending with a newline unless it is empty.
 */
export function updateLogText(source: string, fn: LogRecordUpdate): LogUpdateResult & { text: string | null } {
  const out: string[] = [];
  let replaced = 0;
  let removed = 0;
  for (const line of source.split("\n")) {
    const update = updateLogLine(line.endsWith("\r") ? line.slice(0, -1) : line, fn);
    if (update.action === "keep") out.push(line);
    else if (update.action === "replace") {
      out.push(update.line);
      replaced++;
    } else if (update.action === "remove") removed++;
  }
  if (replaced === 0 && removed === 0) return { replaced, removed, text: null };
  return { replaced, removed, text: out.length > 0 ? `${out.join("\n")}\n` : "" };
}
