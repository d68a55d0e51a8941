import { extractKeywords } from "../domain/text.js";
import type { DiaryDraft, DiaryWriter, SessionTranscript } from "../ports.js";

/**
 * The diary writer that needs no LLM (reference §7.4 `generateDiaryFast`, extended): it reads the
 * transcript as our episodic sources export it and fills the diary with what plain text heuristics
 * can find — the outcome, the first request, files touched, error lines, decisions and stated
 * preferences. Same text in, same draft out.
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
const TOOL_CALL_LINE = /^\s*\[tool:[^\]]*\]/i;
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
function hasRoles(messages: readonly TranscriptMessage[]): boolean {
  return messages.some((m) => m.role !== "unknown");
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

function clip(text: string, max: number): string {
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

// ---------------------------------------------------------------------------------------------
// Heuristics

/** Words that suggest something went wrong (reference §7.4). */
const FAILURE_PATTERN =
  /\b(?:errors?\b(?!\s+(?:handling|handler|handlers|message|messages|boundary|boundaries|codes?|types?|cases?|classes?))|failed|failing|failure|exceptions?|traceback|cannot find|not found|undefined is not|null reference|(?:syntax|type|runtime) error|crash(?:ed|es)?)\b/i;
/** Words that suggest it worked (reference §7.4). */
const SUCCESS_PATTERN =
  /\b(?:successfully|succeeded|completed|done|fixed|works (?:now|correctly)|resolved|passed|all tests pass(?:ed)?|build (?:successful|succeeded))\b/i;

/** An error line worth recording as a challenge. */
const ERROR_LINE =
  /(?:\b(?:[A-Z][A-Za-z]*)?(?:Error|Exception):(?!:)|(?<![:\w])error(?:\[E\d+\])?:(?!:)|\berror TS\d+|\bFAILED\b|\bFAIL\s|Traceback \(most recent call last\)|\bpanic(?:ked)?\b.*:|\bfatal:|npm ERR!|\bERR_[A-Z_]{3,})/;
/** Lines that produce an error rather than report one. */
const ERROR_PRODUCER = /\b(?:throw|raise|new [A-Z][A-Za-z]*Error\(|console\.(?:error|log)|print\(|logger?\.)/;

const DECISION_PATTERN = /\b(?:decided to|decide to|we decided|going with|go with|instead of|switched to|switching to|chose to|opted (?:to|for)|settled on)\b/i;
/** "instead of" describes a choice only when someone acts: "I used a Map instead of …", "Use pnpm instead of …". */
const INSTEAD_OF = /\binstead of\b/i;
const ACTING = /\b(?:i|we|i'll|we'll|i've|we've|let's|let us|use|uses|used|using|went|chose|choose|switched|moved|replaced|opted|picked|prefer|preferred)\b/i;
const PREFERENCE_PATTERN =
  /\b(?:i (?:prefer|'d prefer|would prefer|'d rather|would rather|like to|always want|never want)|please (?:always|never|don't|do not|avoid|keep|use|stop))\b/i;

/** Common source extensions: a bare `name.ext` with one of these counts as a file. */
const FILE_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|py|pyi|rs|go|java|kt|kts|rb|php|cs|c|h|cc|cpp|hpp|swift|m|scala|sh|bash|zsh|ps1|md|mdx|rst|txt|yaml|yml|toml|ini|cfg|conf|env|lock|sql|css|scss|sass|less|html|htm|vue|svelte|astro|xml|gradle|tf|proto|graphql|gql|dockerfile|makefile";
const PATH_PATTERN = new RegExp(
  `(?<![\\w@:/.-])(?:~|\\.{1,2})?\\/?(?:[\\w@.+-]+\\/)+[\\w@.+-]+\\.[A-Za-z][A-Za-z0-9]{0,9}(?![\\w/])|(?<![\\w@:/.-])[\\w-]+(?:\\.[\\w-]+)*\\.(?:${FILE_EXTENSIONS})(?![\\w/])`,
  "g",
);
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/** Mixed when both kinds of words occur, failure when only failure words do, else success. */
export function sessionStatus(text: string): DiaryDraft["status"] {
  const failure = FAILURE_PATTERN.test(text);
  const success = SUCCESS_PATTERN.test(text);
  if (failure && success) return "mixed";
  if (failure) return "failure";
  return "success";
}

/** Distinct basenames of the file paths a text mentions, first seen first, at most `max`. */
export function mentionedFiles(text: string, max = 5): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const match of text.replace(URL_PATTERN, " ").matchAll(PATH_PATTERN)) {
    const path = match[0].replace(/[.,:;]+$/, "");
    const base = path.split("/").pop() ?? "";
    if (base === "" || /^\d+(?:\.\d+)+$/.test(base) || !/[A-Za-z]/.test(base.replace(/\.[^.]*$/, ""))) continue;
    const key = base.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(base);
    if (out.length >= max) break;
  }
  return out;
}

function firstUserRequest(messages: readonly TranscriptMessage[]): string | null {
  for (const m of messages) {
    if (m.role !== "user") continue;
    const text = collapse(proseLines(m).join(" "));
    if (text.length > 10) return clip(text, 200);
  }
  return null;
}

function distinctLines(candidates: Iterable<string>, max: number): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const candidate of candidates) {
    const text = clip(candidate, 200);
    const key = text.toLowerCase();
    if (text === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(text);
    if (out.length >= max) break;
  }
  return out;
}

function* errorLines(messages: readonly TranscriptMessage[]): Generator<string> {
  for (const m of messages) {
    for (const line of m.lines) {
      const text = line.text.replace(/^\s*\[tool (?:result|error)[^\]]*\]\s*/i, "").trim();
      if (text === "" || TOOL_CALL_LINE.test(text) || ERROR_PRODUCER.test(text) || /[{;]\s*$/.test(text)) continue;
      if (ERROR_LINE.test(text)) yield text;
    }
  }
}

function* sentencesMatching(messages: readonly TranscriptMessage[], pattern: RegExp, roles: readonly TranscriptRole[]): Generator<string> {
  for (const m of messages) {
    if (!roles.includes(m.role)) continue;
    for (const line of proseLines(m)) {
      for (const sentence of splitSentences(line.replace(/^\s*(?:[-*+>]|\d+[.)])\s+/, ""))) {
        if (sentence.endsWith("?") || !pattern.test(sentence)) continue;
        if (pattern === DECISION_PATTERN && !DECISION_PATTERN.test(sentence.replace(INSTEAD_OF, "")) && !ACTING.test(sentence)) continue;
        yield sentence;
      }
    }
  }
}

/** Pieces of contractions ("I'll" → `ll`) that the tokenizer leaves behind. */
const CONTRACTION_PARTS = new Set(["ll", "ve", "re", "don", "doesn", "didn", "isn", "aren", "wasn", "won", "can", "couldn", "shouldn", "wouldn", "haven", "hasn"]);

/** Keywords of the prose, without numbers, dates, times and contraction fragments. */
export function searchAnchors(text: string, max = 10): string[] {
  return extractKeywords(text, max * 4)
    .filter((k) => !/^[\d.:t-]+$/.test(k) && !/^\d{4}-\d{2}/.test(k) && !CONTRACTION_PARTS.has(k))
    .slice(0, max);
}

/** The deterministic diary of one session. */
export function draftDiary(session: Pick<SessionTranscript, "text" | "workspace">): DiaryDraft {
  const text = session.text ?? "";
  const messages = parseTranscript(text);
  // Status reads everything but code (tool output included: that is where failures show);
  // search anchors read what people wrote; file names come from prose and tool calls.
  const narrative = messages.flatMap((m) => m.lines.filter((l) => !l.code && !TOOL_CALL_LINE.test(l.text)).map((l) => l.text)).join("\n");
  const prose = messages.flatMap((m) => (m.role === "system" || m.role === "tool" ? [] : proseLines(m))).join("\n");
  const outsideCode = messages.flatMap((m) => m.lines.filter((l) => !l.code).map((l) => l.text)).join("\n");
  const request = firstUserRequest(messages);
  const fallbackLine = hasRoles(messages)
    ? null
    : (text
        .split("\n")
        .map((l) => collapse(l))
        .find((l) => l.length > 20) ?? null);
  const task = request ?? (fallbackLine !== null ? clip(fallbackLine, 200) : null);
  const talking: TranscriptRole[] = ["user", "assistant", "unknown"];
  return {
    status: sessionStatus(narrative),
    accomplishments: request !== null ? [request] : [],
    decisions: distinctLines(sentencesMatching(messages, DECISION_PATTERN, talking), 3),
    challenges: distinctLines(errorLines(messages), 3),
    preferences: distinctLines(sentencesMatching(messages, PREFERENCE_PATTERN, ["user", "unknown"]), 3),
    keyLearnings: [task !== null ? (request !== null ? `Session: ${task}` : task) : "Coding session"],
    tags: mentionedFiles(outsideCode),
    searchAnchors: searchAnchors(prose),
    ...(session.workspace !== undefined ? { workspace: session.workspace } : {}),
  };
}

/** DiaryWriter without an LLM (kind "deterministic"). */
export function createDeterministicDiaryWriter(): DiaryWriter {
  return {
    kind: "deterministic",
    async write(session) {
      return draftDiary(session);
    },
  };
}
