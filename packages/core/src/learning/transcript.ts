/**
 * Reading a transcript as our episodic sources export it: messages with roles, and for each line
 * whether it is code (fenced) or tool traffic. Shared by the deterministic diary writer and reflector.
 */

// ---------------------------------------------------------------------------------------------
// Reading a transcript

export type TranscriptRole = "user" | "assistant" | "system" | "tool" | "unknown";

export interface TranscriptLine {
  /** The line as written (without the role marker when the marker shared its line). */
  text: string;
  /** Inside a fenced code block (``` or ~~~). */
  code: boolean;
  /** A tool call (`[tool: X] …`), tool output, or a line of a tool message. */
  tool: boolean;
}

export interface TranscriptMessage {
  role: TranscriptRole;
  lines: TranscriptLine[];
}

const ROLE_WORDS: Readonly<Record<string, TranscriptRole>> = {
  user: "user",
  human: "user",
  assistant: "assistant",
  model: "assistant",
  system: "system",
  developer: "system",
  tool: "tool",
  unknown: "unknown",
};
const ROLE_ALTERNATION = "user|human|assistant|model|system|developer|tool|unknown";

/** `## 👤 User`, `## Assistant`, `### 🔧 Tool` — the markdown export's message headings. */
const MARKDOWN_HEADING = new RegExp(`^#{1,6}\\s+(?:[^\\p{L}\\p{N}\\s]+\\s*)*(${ROLE_ALTERNATION})\\s*:?\\s*$`, "iu");
/** `=== USER ===` — the text export's message headings. */
const TEXT_HEADING = new RegExp(`^={2,}\\s*(${ROLE_ALTERNATION})\\s*={2,}$`, "i");
/** `**user**: …`, `**Assistant:** …` */
const BOLD_INLINE = new RegExp(`^\\*\\*(${ROLE_ALTERNATION})\\s*(?::\\s*\\*\\*|\\*\\*\\s*:)\\s?(.*)$`, "i");
/** `user: …`, `Assistant: …` */
const PLAIN_INLINE = /^(user|human|assistant|model)\s*:\s?(.*)$/i;
/** `[user] …` — the direct-file export fallback. */
const BRACKET_INLINE = new RegExp(`^\\[(${ROLE_ALTERNATION})\\]\\s?(.*)$`, "i");
const FENCE = /^\s*(```|~~~)/;
export const TOOL_CALL_LINE = /^\s*\[tool:[^\]]*\]/i;
const TOOL_OUTPUT_LINE = /^\s*\[tool (?:result|error)\b[^\]]*\]/i;
/** Blocks that agents inject into user turns and that are not the user speaking. */
const INJECTED_OPEN = /<(system-reminder|command-name|command-message|command-args|local-command-stdout|user-prompt-submit-hook|environment_details)\b[^>]*>/i;

function roleOf(word: string): TranscriptRole {
  return ROLE_WORDS[word.toLowerCase()] ?? "unknown";
}

/**
 * Splits a transcript into messages. Understands the markdown and text exports of our episodic
 * sources (`## 👤 User`, `=== USER ===`), the direct-file fallback (`[user] …`) and common chat
 * renderings (`**user**: …`, `User: …`). A text without any marker is one `unknown` message.
 * Lines carry whether they are code (fenced) or tool traffic.
 */
export function parseTranscript(text: string): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  let current: TranscriptMessage = { role: "unknown", lines: [] };
  let inFence = false;
  let inToolOutput = false;
  let injected: string | null = null;

  const start = (role: TranscriptRole, rest?: string): void => {
    if (current.lines.some((l) => l.text.trim() !== "") || current.role !== "unknown") messages.push(current);
    current = { role, lines: [] };
    inFence = false;
    inToolOutput = false;
    injected = null;
    if (rest !== undefined && rest.trim() !== "") push(rest);
  };

  const push = (line: string): void => {
    if (injected !== null) {
      if (new RegExp(`</${injected}>`, "i").test(line)) injected = null;
      return;
    }
    const open = INJECTED_OPEN.exec(line);
    if (open !== null && !inFence) {
      const name = open[1]!;
      if (!new RegExp(`</${name}>`, "i").test(line.slice(open.index))) injected = name;
      return;
    }
    if (FENCE.test(line)) {
      inFence = !inFence;
      current.lines.push({ text: line, code: true, tool: current.role === "tool" || inToolOutput });
      return;
    }
    if (!inFence && TOOL_OUTPUT_LINE.test(line)) inToolOutput = true;
    const tool = current.role === "tool" || inToolOutput || (!inFence && TOOL_CALL_LINE.test(line));
    current.lines.push({ text: line, code: inFence, tool });
  };

  for (const raw of text.replace(/\r\n?/g, "\n").split("\n")) {
    const trimmed = raw.trim();
    // Export headings are recognised even inside an unclosed fence: they end the message.
    const heading = MARKDOWN_HEADING.exec(trimmed) ?? TEXT_HEADING.exec(trimmed);
    if (heading !== null) {
      start(roleOf(heading[1]!));
      continue;
    }
    if (!inFence && injected === null) {
      const inline = BOLD_INLINE.exec(trimmed) ?? BRACKET_INLINE.exec(trimmed) ?? PLAIN_INLINE.exec(trimmed);
      if (inline !== null) {
        start(roleOf(inline[1]!), inline[2] ?? "");
        continue;
      }
    }
    // The markdown export separates messages with `---`; it is not content.
    if (trimmed === "---" && !inFence) continue;
    push(raw);
  }
  start("unknown");
  const nonEmpty = messages.filter((m) => m.lines.some((l) => l.text.trim() !== ""));
  // Text before the first role marker is the export's header (title, start time), not a message.
  const first = nonEmpty.findIndex((m) => m.role !== "unknown");
  return first > 0 ? nonEmpty.slice(first) : nonEmpty;
}

/** The prose of a message: lines that are neither code nor tool traffic. */
export function proseLines(message: TranscriptMessage): string[] {
  return message.lines.filter((l) => !l.code && !l.tool).map((l) => l.text);
}

/** True when the transcript had role markers (otherwise it is one `unknown` message). */
export function hasRoles(messages: readonly TranscriptMessage[]): boolean {
  return messages.some((m) => m.role !== "unknown");
}

export function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

export function clip(text: string, max: number): string {
  const flat = collapse(text);
  return flat.length > max ? `${flat.slice(0, max - 3).trimEnd()}...` : flat;
}

/** Splits prose into sentences at `.`, `!` or `?` followed by whitespace and a capital/quote/emphasis. */
export function splitSentences(line: string): string[] {
  return line
    .split(/(?<=[.!?])\s+(?=[\p{Lu}"'`*_(\[])/u)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

