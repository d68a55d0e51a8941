import { extractKeywords } from "../domain/text.js";
import type { DiaryDraft, DiaryWriter, SessionTranscript } from "../ports.js";
import { findLessons, lessonsInLine, looksLikeCode } from "./deterministic-reflector.js";
import {
  TOOL_CALL_LINE,
  clip,
  collapse,
  parseTranscript,
  proseLines,
  splitSentences,
  type TranscriptMessage,
  type TranscriptRole,
} from "./transcript.js";

export { TOOL_CALL_LINE, parseTranscript, proseLines, splitSentences } from "./transcript.js";
export type { TranscriptLine, TranscriptMessage, TranscriptRole } from "./transcript.js";

/**
 * The diary writer that needs no LLM (reference §7.4 `generateDiaryFast`, extended): it reads the
 * transcript as our episodic sources export it and fills the diary with what plain text heuristics
 * can find: the outcome (read from the last exchanges), what was done (the agent's own report of
 * its work), the problems met (stated causes, then error lines), decisions, stated preferences and
 * the lessons the session states. A field with nothing to say stays empty: no placeholder text.
 * Same text in, same draft out.
 */

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

// ---------------------------------------------------------------------------------------------
// The outcome, read from the end of the session

/** How many of the last user/assistant messages decide the outcome. */
export const OUTCOME_TAIL_MESSAGES = 3;

/** Work left undone or broken at the end: "could not", "still fails", "reverted", "leave it". */
const UNRESOLVED =
  /\b(?:could(?:n'?t| not)|can(?:'?t|not)|unable to|did(?:n'?t| not) (?:work|help|happen|pass|fix|find|succeed|manage)|does(?:n'?t| not) work|not (?:fixed|working|resolved)|still (?:fails?|failing|broken|there|happens|crash(?:es)?|red|flaky|hangs?|leaks?|times? out)|reverted|rolled back|gave up|give up|no luck|blocked (?:on|by)|leave it (?:marked|for now|as is)|leave it\b|ugh|expired|(?:deploy|build|tests?|migration) (?:failed|did not)|failed\b)/i;
/** Work reported done or working at the end. */
const RESOLVED =
  /\b(?:successfully|succeeded|completed|done\b|fixed|works(?: now| correctly)?|working now|resolved|pass(?:es|ed)?\b|green\b|clean\b|merged|no (?:errors?|problems|failures|timeouts)|builds? (?:and|now|succeeded)|now (?:builds|works|passes|runs|parses)|faster|progress|back to|great|perfect|thanks|thank you|nice|looks good|lgtm|👍|✅)/i;

/** A sentence's signals; a sentence that says something is unresolved does not also count as resolved. */
function signals(sentence: string): { unresolved: boolean; resolved: boolean } {
  const unresolved = UNRESOLVED.test(sentence);
  return { unresolved, resolved: !unresolved && RESOLVED.test(sentence) };
}

/**
 * The session's outcome from its last exchanges: the last few user/assistant messages (prose only)
 * and the last tool output. Work reported unresolved and nothing resolved → failure; both →
 * mixed; resolved → success. When the end says neither, the whole text decides (`sessionStatus`).
 */
export function sessionOutcome(messages: readonly TranscriptMessage[], fallbackText: string): DiaryDraft["status"] {
  // Exchanges are messages with words in them: a message holding only tool traffic or code is not one.
  const talking = messages.filter((m) => (m.role === "user" || m.role === "assistant" || m.role === "unknown") && proseLines(m).some((l) => l.trim() !== ""));
  // The opening request states the task ("make the build pass"), not the outcome.
  const tail = (talking.length > 1 && talking[0]!.role === "user" ? talking.slice(1) : talking).slice(-OUTCOME_TAIL_MESSAGES);
  let unresolved = false;
  let resolved = false;
  for (const message of tail) {
    for (const line of proseLines(message)) {
      for (const sentence of splitSentences(line)) {
        const s = signals(sentence);
        unresolved ||= s.unresolved;
        resolved ||= s.resolved;
      }
    }
  }
  // The last tool output (a green test run, a successful build, or a failing one).
  const lastTool = [...messages].reverse().find((m) => m.lines.some((l) => l.tool));
  const out = lastTool === undefined ? "" : lastTool.lines.filter((l) => l.tool).map((l) => l.text).join("\n");
  const toolFailed = FAILURE_PATTERN.test(out.replace(/\b0 (?:failed|errors?)\b|\bno (?:errors?|failures?)\b/gi, ""));
  if (!unresolved && SUCCESS_PATTERN.test(out) && !toolFailed) resolved = true;
  if (unresolved && resolved) return "mixed";
  if (unresolved) return "failure";
  if (resolved) return "success";
  // The end says neither: problems described earlier were the task, not the outcome. Only a
  // failing last tool run, or a transcript without exchanges, is judged on its words.
  if (toolFailed) return "failure";
  return talking.length === 0 ? sessionStatus(fallbackText) : "success";
}

// ---------------------------------------------------------------------------------------------
// What was done, what got in the way

/** The agent reporting its own work: "Added …", "I moved …", "Done: …", "Fixed by …". */
const WORK_REPORT =
  /^(?:done[:,]\s*|(?:i|we)(?:'ve| have)?\s+(?:now\s+)?|(?:now\s+))?(?:added|moved|changed|replaced|rewrote|rewritten|renamed|removed|deleted|fixed|installed|configured|converted|updated|wrote|created|implemented|refactored|resolved|rebased|split|batched|reverted|migrated|upgraded|enabled|disabled|extracted|introduced|set up|switched|rotated|cleaned up)\b/i;

/** Sentences in which the agent reports work it did, latest last, at most `max`. */
function* workReports(messages: readonly TranscriptMessage[]): Generator<string> {
  for (const m of messages) {
    if (m.role !== "assistant" && m.role !== "unknown") continue;
    for (const line of proseLines(m)) {
      const stripped = line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "").trim();
      if (stripped === "" || looksLikeCode(stripped)) continue;
      for (const sentence of splitSentences(stripped)) {
        if (sentence.endsWith("?") || sentence.length < 12) continue;
        if (WORK_REPORT.test(sentence)) yield sentence.replace(/[.!]+$/, "");
      }
    }
  }
}

/** A sentence that states a problem or its cause. */
const PROBLEM =
  /\b(?:because|the (?:problem|issue|cause|bug|culprit) (?:is|was)|root cause|turned out|it (?:fails|failed|breaks|broke|hangs|crashes)|(?:is|are|was|were) (?:stale|missing|wrong|broken|expired|out of date)|broke\b|leaks?\b|times? out|catastrophic|silently|not found|cannot|can't|could not|couldn't|fails? (?:on|under|with|when|after))\b/i;

function* problemSentences(messages: readonly TranscriptMessage[], lessons: readonly string[]): Generator<string> {
  const heads = lessons.map((l) => l.toLowerCase().slice(0, 40));
  for (const m of messages) {
    if (m.role !== "assistant" && m.role !== "unknown") continue;
    for (const line of proseLines(m)) {
      const stripped = line.replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "").trim();
      if (stripped === "" || looksLikeCode(stripped)) continue;
      for (const sentence of splitSentences(stripped)) {
        if (sentence.endsWith("?") || sentence.length < 20 || sentence.length > 300) continue;
        if (!PROBLEM.test(sentence) || WORK_REPORT.test(sentence) || signals(sentence).resolved) continue;
        // A stated lesson is not a problem ("Lesson: …", "Never …").
        const lower = sentence.toLowerCase();
        if (lessonsInLine(sentence).length > 0 || heads.some((h) => lower.includes(h))) continue;
        yield sentence.replace(/[.!]+$/, "");
      }
    }
  }
}

/** Error lines that read as a message (not code): a fallback for challenges. */
function* readableErrorLines(messages: readonly TranscriptMessage[]): Generator<string> {
  for (const text of errorLines(messages)) {
    if (text.length <= 200 && !looksLikeCode(text.replace(/^[\w.]*(?:Error|Exception)\s*(?:\[\w+\])?:/, ""))) yield text;
  }
}

/** The last `max` distinct items (in order), for reports where the end matters most. */
function lastDistinct(items: Iterable<string>, max: number): string[] {
  const all = distinctLines(items, 1_000);
  return all.slice(-max);
}

/** The deterministic diary of one session. */
export function draftDiary(session: Pick<SessionTranscript, "text" | "workspace">): DiaryDraft {
  const text = session.text ?? "";
  const messages = parseTranscript(text);
  // The whole-text fallback of the outcome reads everything but code (tool output included: that
  // is where failures show); search anchors read what people wrote; file names come from prose
  // and tool calls.
  const narrative = messages.flatMap((m) => m.lines.filter((l) => !l.code && !TOOL_CALL_LINE.test(l.text)).map((l) => l.text)).join("\n");
  const prose = messages.flatMap((m) => (m.role === "system" || m.role === "tool" ? [] : proseLines(m))).join("\n");
  const outsideCode = messages.flatMap((m) => m.lines.filter((l) => !l.code).map((l) => l.text)).join("\n");
  const talking: TranscriptRole[] = ["user", "assistant", "unknown"];
  const lessons = findLessons(text).map((l) => l.content);
  const problems = distinctLines(problemSentences(messages, lessons), 3);
  const challenges = problems.length >= 3 ? problems : distinctLines([...problems, ...readableErrorLines(messages)], 3);
  return {
    status: messages.length === 0 ? sessionStatus(text) : sessionOutcome(messages, narrative),
    accomplishments: lastDistinct(workReports(messages), 4),
    decisions: distinctLines(sentencesMatching(messages, DECISION_PATTERN, talking), 3),
    challenges,
    preferences: distinctLines(sentencesMatching(messages, PREFERENCE_PATTERN, ["user", "unknown"]), 3),
    keyLearnings: lessons.slice(0, 5),
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
