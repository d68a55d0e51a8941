import { readFile, stat } from "node:fs/promises";
import { extname, resolve } from "node:path";

/**
 * Reading a session file directly when `cass export` is missing or unhelpful (the original's
 * fallback, reference/original-behaviour.md §6.4). Text and markdown give one `[role] text` line
 * per record; json gives the parsed records as a JSON array. Returns null when there is nothing
 * usable (missing, larger than {@link EXPORT_FALLBACK_MAX_BYTES}, or an unsupported extension).
 */

export const EXPORT_FALLBACK_MAX_BYTES = 10 * 1024 * 1024;

/** True when cass's text export could not tell roles apart (>50% of >3 lines are UNKNOWN). */
export function isMostlyUnknown(output: string): boolean {
  const lines = output.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  if (lines.length <= 3) return false;
  const unknown = lines.filter((l) => l === "=== UNKNOWN ===").length;
  return unknown / lines.length > 0.5;
}

export async function exportSessionDirectly(sessionPath: string, format: "markdown" | "text" | "json"): Promise<string | null> {
  const file = resolve(sessionPath);
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > EXPORT_FALLBACK_MAX_BYTES) return null;
    const content = await readFile(file, "utf8");
    const ext = extname(file).toLowerCase();
    if (ext === ".md") return format === "json" ? null : content;
    let records: unknown[] | null = null;
    if (ext === ".jsonl") {
      records = content
        .split(/\r?\n/)
        .map((l) => l.trim())
        .filter((l) => l !== "")
        .map((line) => {
          try {
            return JSON.parse(line) as unknown;
          } catch {
            return line;
          }
        });
    } else if (ext === ".json") {
      try {
        const parsed = JSON.parse(content) as unknown;
        if (Array.isArray(parsed)) records = parsed;
        else if (isRecord(parsed) && Array.isArray(parsed.messages)) records = parsed.messages;
      } catch {
        return null;
      }
    }
    if (records === null || records.length === 0) return null;
    if (format === "json") return JSON.stringify(records, null, 2);
    const lines = records.map(formatRecord).filter((l): l is string => l !== null);
    return lines.length > 0 ? lines.join("\n") : null;
  } catch {
    return null;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Text of a content value: a string, an array of parts, or an object with text/content/message. */
function coerceText(raw: unknown, depth = 0): string | null {
  if (depth > 6 || raw === null || raw === undefined) return null;
  if (typeof raw === "string") return raw.trim() === "" ? null : raw;
  if (Array.isArray(raw)) {
    const parts = raw.map((p) => coerceText(p, depth + 1)).filter((p): p is string => p !== null);
    return parts.length > 0 ? parts.join("\n") : null;
  }
  if (isRecord(raw)) {
    // {type:"input_text"|"output_text"|"text", text}, nested {content}, or {message}.
    if (typeof raw.text === "string") return raw.text.trim() === "" ? null : raw.text;
    if (raw.content !== undefined) return coerceText(raw.content, depth + 1);
    if (raw.message !== undefined) return coerceText(raw.message, depth + 1);
  }
  return null;
}

function formatRecord(entry: unknown): string | null {
  if (typeof entry === "string") return entry.trim() === "" ? null : entry;
  if (!isRecord(entry)) return null;
  if (entry.type === "session_meta") return null;
  const payload = entry.payload;
  // Codex: {type:"response_item", payload:{type:"message", role, content}}
  if (entry.type === "response_item" && isRecord(payload) && payload.type === "message") {
    const text = coerceText(payload.content);
    if (text === null) return null;
    return typeof payload.role === "string" ? `[${payload.role}] ${text}` : text;
  }
  const text = coerceText(entry.content ?? entry.text ?? entry.message ?? payload);
  if (text === null) return null;
  const message = entry.message;
  const speaker =
    (typeof entry.role === "string" && entry.role) ||
    (isRecord(message) && typeof message.role === "string" && message.role) ||
    (typeof entry.type === "string" && entry.type) ||
    (typeof entry.agent === "string" && entry.agent) ||
    "";
  return speaker !== "" ? `[${speaker}] ${text}` : text;
}
