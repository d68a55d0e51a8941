import type { FeedbackType } from "../schemas/playbook.js";

/**
 * Inline feedback comments left by agents in code or transcripts (reference §5.14):
 * `// [cass: helpful b-8f3a2c] - saved time`, `# [cass: harmful b-x7k9p1]`, `/* [cass: harmful b-blk456] *\/`.
 */

export interface InlineFeedback {
  type: FeedbackType;
  bulletId: string;
  reason?: string;
  /** 1-based. */
  lineNumber: number;
}

// Ids are the original's `b-…`, and (ours) the starters' `starter-<name>-<slug>`.
const INLINE_FEEDBACK =
  /(?:\/\/|#|\/\*)\s*\[cass:\s*(helpful|harmful)\s+((?:b|starter)-[a-zA-Z0-9]+(?:-[a-zA-Z0-9]+)*)\](?:\s*[-:]?\s*(.+?))?(?:\s*\*\/)?$/;

/** Every inline feedback comment in `text`, at most one per line, in line order. */
export function parseInlineFeedback(text: string): InlineFeedback[] {
  if (typeof text !== "string" || text === "") return [];
  const out: InlineFeedback[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    // Strip a CR so CRLF text parses too (`.` in the pattern does not match "\r").
    const line = lines[i]!.replace(/\r$/, "");
    if (!line.includes("[cass:")) continue;
    const match = INLINE_FEEDBACK.exec(line);
    if (match === null) continue;
    const type = match[1] as FeedbackType;
    const bulletId = match[2]!;
    // The lazy reason group can swallow a bare closing `*/` (e.g. `/* [cass: harmful b-x] */`).
    const reason = (match[3] ?? "").replace(/\s*\*\/\s*$/, "").trim();
    out.push({ type, bulletId, ...(reason !== "" ? { reason } : {}), lineNumber: i + 1 });
  }
  return out;
}
