/**
 * Why a session file that discovery found gave no session: looked at only for files whose reader
 * returned nothing, from a bounded prefix of the file (never the whole of a large file).
 */
import { open, stat } from "node:fs/promises";

import { MAX_JSON_BYTES, MAX_LINE_BYTES } from "./readers/util.js";

/** Bytes of a file looked at to explain why it could not be read. */
const SNIFF_BYTES = 256 * 1024;
/** Lines of that prefix tried as JSON. */
const SNIFF_LINES = 200;

const AGENT_NAMES: Record<string, string> = {
  claude_code: "Claude Code",
  codex: "Codex",
  gemini: "Gemini CLI",
  aider: "Aider",
  cline: "Cline",
  opencode: "OpenCode",
  pi_agent: "pi",
  chatgpt: "ChatGPT",
  copilot: "Copilot",
  amp: "Amp",
  generic: "generic transcript",
};

function agentName(agent: string): string {
  return AGENT_NAMES[agent] ?? agent;
}

function mb(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;
}

/** A short, human reason why `path` (found for `agent`) held no readable session. */
export async function explainUnreadable(path: string, agent: string): Promise<string> {
  let size: number;
  let isDirectory = false;
  try {
    const info = await stat(path);
    size = info.size;
    isDirectory = info.isDirectory();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" ? "permission denied" : "the file disappeared or cannot be opened";
  }
  const expected = `no messages in a format the ${agentName(agent)} reader knows`;
  if (isDirectory) return expected;
  if (size === 0) return "empty file";
  let text: string;
  try {
    const handle = await open(path, "r");
    try {
      const buffer = Buffer.alloc(Math.min(size, SNIFF_BYTES));
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      if (buffer.subarray(0, bytesRead).includes(0)) return "binary file, not a transcript";
      text = buffer.subarray(0, bytesRead).toString("utf8");
    } finally {
      await handle.close();
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "EACCES" || code === "EPERM" ? "permission denied" : `cannot be read (${code ?? "I/O error"})`;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const trimmed = text.trimStart();
  if (trimmed === "") return "only blank lines";
  if (trimmed[0] === "{" || trimmed[0] === "[" || /\.(json|jsonl|ndjson)$/i.test(path)) {
    if (size > MAX_JSON_BYTES && !/\.(jsonl|ndjson)$/i.test(path)) return `too large to read as one JSON document (${mb(size)}; the limit is ${mb(MAX_JSON_BYTES)})`;
    if (size <= SNIFF_BYTES) {
      try {
        JSON.parse(trimmed);
        return `valid JSON, but ${expected}`;
      } catch {
        // not one document: look at it line by line
      }
    }
    const lines = text.split("\n").slice(0, SNIFF_LINES);
    // The last line of a cut prefix may be cut too.
    if (size > SNIFF_BYTES) lines.pop();
    // A first line longer than the prefix cannot be judged from it.
    if (lines.every((line) => line.trim() === "")) return size > MAX_LINE_BYTES ? `lines longer than ${mb(MAX_LINE_BYTES)} are skipped` : expected;
    let json = 0;
    let broken = 0;
    for (const line of lines) {
      const t = line.trim();
      if (t === "") continue;
      try {
        JSON.parse(t);
        json++;
      } catch {
        broken++;
      }
    }
    if (json === 0) return "not valid JSON or JSONL";
    if (broken > 0) return `${broken} of ${json + broken} lines looked at are not valid JSON, and the valid ones hold ${expected}`;
    return `valid JSONL, but ${expected}`;
  }
  return expected;
}
