import { extractKeywords, hashContent, jaccardOfSets, tokenize, tokenSet } from "../domain/text.js";
import type { Reflector, ReflectionInput } from "../ports.js";
import type { Playbook } from "../schemas/playbook.js";
import type { Delta } from "../schemas/records.js";
import { parseTranscript, splitSentences, type TranscriptRole } from "./transcript.js";

/**
 * The reflector that needs no LLM: it proposes a playbook rule for every lesson the session states
 * in so many words — "Lesson: …", "TIL …", "Next time, …", "The fix was to …", "Always …",
 * "Never …", "Prefer X over Y" — and nothing else. Code, tool output, questions and chatter are
 * never turned into rules. Negative lessons become anti-patterns. Deterministic: the same session,
 * diary and playbook give the same deltas.
 */

/** At most this many rules are proposed per session. */
export const MAX_LESSONS_PER_SESSION = 10;
/** Lines longer than this are prose dumps, logs or minified text, not stated lessons. */
export const MAX_LESSON_LINE_CHARS = 300;
/** Shorter lessons carry too little to be a rule (the validator's threshold too, reference §5.8). */
export const MIN_LESSON_CHARS = 15;
/** A lesson this similar (token Jaccard) to an existing bullet is already known (reference §5.5). */
export const LESSON_DUPLICATE_SIMILARITY = 0.85;

export interface Lesson {
  /** The rule as it would be stored. */
  content: string;
  /** Never/Avoid/Don't: an anti-pattern. */
  negative: boolean;
  /** 1 labelled ("Lesson: …"), 2 hindsight ("Next time, …", "The fix was to …"), 3 a bare directive. */
  strength: 1 | 2 | 3;
  /** The cleaned line it came from. */
  source: string;
  /** Who said it: a transcript role, or `diary`. */
  origin: TranscriptRole | "diary";
}

// ---------------------------------------------------------------------------------------------
// Cleaning a line

const COMMENT_OR_PROMPT = /^(?:\/\/|\/\*|\*\/|<!--|#!|\$\s|>>>\s|\.\.\.\s|%\s)/;
const LOG_OR_TRACE =
  /^(?:at\s+[\w$.<>[\]]+\s*\(|at\s+\S+:\d+|File "|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\[\d{1,2}:\d{2}|(?:INFO|WARN|WARNING|ERROR|DEBUG|TRACE|FATAL)\b[\s:\]]|\w+Error:|npm (?:ERR|WARN)|\s*\d+\s*\|)/;
const LEADING_MARKER = /^(?:>\s*|[-*+•‣◦]\s+|\d+[.)]\s+|[a-z][.)]\s+|#{1,6}\s+|\[[ xX]\]\s+)/;
const LEADING_SYMBOLS = /^[^\p{L}\p{N}`"'(]+/u;
const CODE_SHAPED =
  /(?:[;{}]\s*$|=>|->\s*\w+\s*[{:]|::\w|\(\)\s*[;{]|^\s*(?:const|let|var|function|def|class|import|from|return|fn|pub|impl|package|#include|SELECT|INSERT|UPDATE|DELETE)\b\s*[\w{(*]|^\s*[\w.]+\s*=\s*\S|^\s*<\/?[a-z][\w-]*[\s>])/;
const CODE_CHARS = /[{}[\];=<>|&$\\]/g;

/** Emphasis markers removed so `**Lesson:** …` and `*Never* …` read as plain text. */
function stripEmphasis(text: string): string {
  return text
    .replace(/\*\*|__/g, "")
    .replace(/(^|[\s(])[*_]([^*_\n]+?)[*_](?=[\s).,:;!?]|$)/g, "$1$2");
}

/** The line without list/quote/heading markers, emphasis and leading emoji; null when it is not prose. */
export function cleanLessonLine(raw: string): string | null {
  let line = raw.replace(/[’‘]/g, "'").trim();
  if (line === "" || line.length > MAX_LESSON_LINE_CHARS) return null;
  if (COMMENT_OR_PROMPT.test(line) || LOG_OR_TRACE.test(line) || /^\[tool\b/i.test(line)) return null;
  for (let i = 0; i < 4; i++) {
    const next = line.replace(LEADING_MARKER, "");
    if (next === line) break;
    line = next.trim();
  }
  line = stripEmphasis(line).replace(LEADING_SYMBOLS, "").trim();
  if (line === "" || COMMENT_OR_PROMPT.test(line) || LOG_OR_TRACE.test(line)) return null;
  return line;
}

/** True for text that reads like code rather than a sentence. */
export function looksLikeCode(text: string): boolean {
  // Inline code in backticks is fine inside a sentence: judge the words around it.
  const outsideBackticks = text.replace(/`[^`]*`/g, "code");
  if (CODE_SHAPED.test(outsideBackticks)) return true;
  const symbols = outsideBackticks.match(CODE_CHARS)?.length ?? 0;
  return outsideBackticks.length > 0 && symbols / outsideBackticks.length > 0.06;
}

// ---------------------------------------------------------------------------------------------
// Recognising a lesson

const LABEL =
  /^(?:(?:so|and|but)\s+)?(?:lessons? learned|(?:the )?(?:real |key |main |big )?lessons?(?: here)?|rules? of thumb|(?:the )?rule(?: here)? is|rule|(?:what )?(?:i |we )?learned|learning|key learnings?|(?:key )?takeaways?|notes? (?:to self|for later|for next time)|til|(?:pro[- ]?)?tip)\s*[:\-–—]\s*(.+)$/i;
/** A line that introduces a list of lessons: "Lessons learned:", "**Takeaways**", "What I learned:". */
const LIST_HEADER =
  /^(?:lessons?(?: learned)?|(?:key )?takeaways?|what (?:i|we) learned(?: today)?|key learnings?|learnings|rules? of thumb|notes? (?:to self|for (?:later|next time))|tips|things to remember)\s*:?\s*$/i;
/** A list item: "- …", "* …", "1. …". */
const LIST_ITEM = /^\s*(?:[-*+•]|\d+[.)])\s+\S/;
const TIL_PLAIN = /^(?:til,?|(?:today )?(?:i|we)(?:'ve)? (?:just )?learned)\s+(?:that\s+)?(.+)$/i;
const HINDSIGHT = /^(?:in the future|next time|going forward|from now on|in future)\s*,?\s+(.+)$/i;
const FIX_WAS = /^the (?:real )?(?:fix|solution|trick|key|workaround|answer|right approach|lesson) (?:here )?(?:was|is) to\s+(.+)$/i;
const FLUFF = /^(?:so|also|and|but|ok(?:ay)?|note|important|hint|nb|n\.b\.|reminder|remember|heads[- ]up|caution|warning)\s*[,:\-–—!]\s*/i;
/** "And please never …", "Also always …": a conjunction before a directive. */
const CONJUNCTION = /^(?:and|but|also|so|plus)\s+(?=(?:please|always|never|don'?t|do not|avoid|make sure)\b)/i;
/** "I prefer X over Y" from a user is the rule "Prefer X over Y". */
const STATED_PREFERENCE = /^(?:i|we)\s+(?:really\s+)?(?:prefer|'d prefer|would prefer)\s+(.+?)\s+(over|to|rather than|instead of)\s+(.+)$/i;
/** "For big tables, always …", "When the API is paginated, never …": a directive with its condition. */
const CONDITIONAL_DIRECTIVE = /^(?:for|when|if|in|on|before|after|with|whenever|during)\b[^,;]{3,80},\s*((?:always|never|avoid|don'?t|do not|make sure)\b.+)$/i;
/** "Please always …" from a user is the same directive. */
const PLEASE = /^please\s+(?=(?:always|never|don'?t|do not|avoid|make sure|remember to|be sure to)\b)/i;
const MODAL = /^(?:i|we|you)(?:'ll|'d better|\s+will|\s+should|\s+must|\s+need to|\s+have to|\s+ought to|\s+want to)\s+/i;

const NEGATIVE_START = /^(?:never|avoid|don'?t|do not|stop)\b/i;
const DIRECTIVE =
  /^(?:(?:always|never|avoid|prefer|don'?t|do not|make sure|be sure to|remember to)\b|use\s+.+\s+(?:instead of|rather than)\s+\S)/i;
/** "Always returns …", "Never throws …": a description of code, not an instruction. */
const DESCRIPTIVE = /^(?:always|never)\s+[a-z]+s\b(?<!ss|us|is)/i;
const FORGET = /^(?:don'?t|do not) forget to\s+(.+)$/i;

/** Conversation, not a rule: "Never mind", "Don't worry", "Always happy to help". */
const CHATTER =
  /^(?:never\s+(?:mind|heard|seen|been|had|used|knew|thought|got|did|was|were|saw|said|ever)\b|(?:don'?t|do not)\s+(?:worry|hesitate|know|think|see|have|want|need|mind|understand|recall|remember|believe|care|like|seem|get|feel|be\s+(?:afraid|sorry|shy))\b|always\s+(?:happy|glad|here|good|nice|welcome|fun|been|was|were|is|are|the case)\b)/i;
/** "Don't do that again": a directive whose object is only a pronoun. */
const VAGUE = /^(?:always|never|don'?t|do not|avoid|make sure to|remember to)\s+(?:\w+\s+)?(?:that|this|it|those|these|them)\b(.*)$/i;
const TRIGGER_WORDS = new Set(["always", "never", "don", "avoid", "prefer", "make", "sure", "remember", "use", "instead", "rather", "stop"]);

function capitalise(text: string): string {
  return text.length === 0 ? text : text.charAt(0).toUpperCase() + text.slice(1);
}

/** Whitespace collapsed, wrapping quotes and a final `.`/`!` removed, first letter upper-case. */
function finish(text: string): string {
  let out = text.replace(/\s+/g, " ").trim();
  out = out.replace(/^["'“‘](.*)["'”’]$/, "$1").trim();
  out = out.replace(/[.!]+$/, "").trim();
  return capitalise(out);
}

function substantial(content: string): boolean {
  if (content.length < MIN_LESSON_CHARS || content.length > MAX_LESSON_LINE_CHARS) return false;
  if (content.includes("?")) return false;
  if (content.split(/\s+/).length < 3) return false;
  if (looksLikeCode(content)) return false;
  const keywords = extractKeywords(content, 20).filter((k) => !TRIGGER_WORDS.has(k));
  return keywords.length >= 2;
}

/** A directive sentence as a lesson, or null (chatter, vague, not a directive). */
function directive(sentence: string): { content: string; negative: boolean } | null {
  const forget = FORGET.exec(sentence);
  if (forget !== null) return { content: `Remember to ${forget[1]!}`, negative: false };
  if (!DIRECTIVE.test(sentence) || CHATTER.test(sentence) || DESCRIPTIVE.test(sentence)) return null;
  const vague = VAGUE.exec(sentence);
  if (vague !== null && vague[1]!.trim().split(/\s+/).filter(Boolean).length < 3) return null;
  if (/^prefer\b/i.test(sentence) && sentence.split(/\s+/).length < 4) return null;
  return { content: sentence, negative: NEGATIVE_START.test(sentence) };
}

/** The body of a labelled or hindsight lesson: modal lead-in removed, polarity detected. */
function body(text: string): { content: string; negative: boolean } | null {
  let rest = text.trim().replace(/^(?:that|to)\s+/i, "").replace(MODAL, "").replace(PLEASE, "");
  if (rest === "") return null;
  const forget = FORGET.exec(rest);
  if (forget !== null) rest = `Remember to ${forget[1]!}`;
  if (CHATTER.test(rest)) return null;
  return { content: rest, negative: NEGATIVE_START.test(rest) };
}

/** The lesson a cleaned sentence states, or null. */
export function lessonFromSentence(sentence: string): Pick<Lesson, "content" | "negative" | "strength"> | null {
  let s = sentence.trim().replace(FLUFF, "").trim().replace(CONJUNCTION, "").replace(PLEASE, "");
  s = s.replace(/^["'“‘]/, "").replace(/["'”’]$/, "").trim();
  if (s === "" || s.includes("?")) return null;
  let found: { content: string; negative: boolean } | null = null;
  let strength: Lesson["strength"] = 3;
  const label = LABEL.exec(s) ?? TIL_PLAIN.exec(s);
  const hindsight = label === null ? (HINDSIGHT.exec(s) ?? FIX_WAS.exec(s)) : null;
  if (label !== null) {
    found = body(label[1]!);
    strength = 1;
  } else if (hindsight !== null) {
    found = body(hindsight[1]!);
    strength = 2;
  } else {
    const preference = STATED_PREFERENCE.exec(s);
    const conditional = CONDITIONAL_DIRECTIVE.exec(s);
    if (preference !== null) {
      found = { content: `Prefer ${preference[1]!} ${preference[2]!.toLowerCase()} ${preference[3]!}`, negative: false };
    } else if (conditional !== null && directive(conditional[1]!) !== null) {
      found = { content: s, negative: NEGATIVE_START.test(conditional[1]!) };
    } else {
      found = directive(s);
    }
  }
  if (found === null) return null;
  const content = finish(found.content);
  if (!substantial(content)) return null;
  return { content, negative: found.negative, strength };
}

type FoundLesson = Pick<Lesson, "content" | "negative" | "strength" | "source">;

/**
 * The lessons stated in one line of prose. A labelled line ("Lesson: …") gives its first sentence
 * as a labelled lesson; every other sentence is read on its own ("Also, never …").
 */
export function lessonsInLine(raw: string): FoundLesson[] {
  const line = cleanLessonLine(raw);
  if (line === null || looksLikeCode(line)) return [];
  const out: FoundLesson[] = [];
  for (const sentence of splitSentences(line)) {
    const lesson = lessonFromSentence(sentence);
    if (lesson !== null) out.push({ ...lesson, source: line });
  }
  return out;
}

/** An item of a lessons list ("Lessons learned:" followed by "- …"): a labelled lesson. */
export function lessonFromListItem(raw: string): FoundLesson | null {
  const line = cleanLessonLine(raw);
  if (line === null || looksLikeCode(line)) return null;
  const stated = lessonFromSentence(line);
  if (stated !== null) return { ...stated, strength: 1, source: line };
  const first = splitSentences(line)[0] ?? line;
  const lesson = lessonFromSentence(`Lesson: ${first}`);
  return lesson === null ? null : { ...lesson, strength: 1, source: line };
}

const SPEAKING_ROLES: ReadonlySet<TranscriptRole> = new Set(["user", "assistant", "unknown"]);

/** A weaker lesson this much covered by the words of the session's labelled lessons repeats them. */
export const REDUNDANT_COVERAGE = 0.5;

/**
 * Every lesson stated in a transcript (user and assistant prose only: system prompts, tool traffic
 * and code are skipped) and in extra lines such as a diary's key learnings, strongest first, then
 * in order of appearance. Items of a list introduced by "Lessons learned:", "Takeaways:" … are
 * labelled lessons. Exact duplicates (content hash) are removed, and so is a weaker lesson whose
 * words are mostly those of the labelled ones (the summary restates "the fix was …").
 */
export function findLessons(text: string, extra: readonly string[] = []): Lesson[] {
  const found: Lesson[] = [];
  for (const message of parseTranscript(text)) {
    if (!SPEAKING_ROLES.has(message.role)) continue;
    let inList = false;
    for (const line of message.lines) {
      if (line.code || line.tool) {
        inList = false;
        continue;
      }
      const trimmed = line.text.trim();
      if (trimmed === "") continue;
      const cleaned = cleanLessonLine(trimmed);
      if (cleaned !== null && LIST_HEADER.test(cleaned.replace(/[:.]\s*$/, "").trim())) {
        inList = true;
        continue;
      }
      if (inList && LIST_ITEM.test(line.text)) {
        const lesson = lessonFromListItem(line.text);
        if (lesson !== null) found.push({ ...lesson, origin: message.role });
        continue;
      }
      inList = false;
      for (const lesson of lessonsInLine(line.text)) found.push({ ...lesson, origin: message.role });
    }
  }
  for (const line of extra) for (const lesson of lessonsInLine(line)) found.push({ ...lesson, origin: "diary" });
  const seen = new Set<string>();
  const unique = found.filter((l) => {
    const hash = hashContent(l.content);
    if (seen.has(hash)) return false;
    seen.add(hash);
    return true;
  });
  const labelledWords = new Set(unique.filter((l) => l.strength === 1).flatMap((l) => [...tokenSet(l.content)]));
  const kept = unique.filter((l) => {
    if (l.strength === 1 || labelledWords.size === 0) return true;
    const words = [...tokenSet(l.content)];
    const covered = words.filter((w) => labelledWords.has(w)).length;
    return words.length === 0 || covered / words.length < REDUNDANT_COVERAGE;
  });
  // Array.prototype.sort is stable: equal strengths keep their order of appearance.
  return kept.sort((a, b) => a.strength - b.strength);
}

// ---------------------------------------------------------------------------------------------
// Category and tags

interface CategoryRule {
  category: string;
  /** Words matched against the rule's tokens: `test*` is a prefix (`tests`, `testing`), others exact. */
  words: readonly string[];
  /** Phrases matched as whole words in the lower-cased text. */
  phrases?: readonly string[];
}

/** Checked in order; the category with most matches wins, ties go to the earlier one. */
const CATEGORY_RULES: readonly CategoryRule[] = [
  { category: "testing", words: ["test*", "vitest", "jest", "pytest", "mocha", "spec", "specs", "mock*", "fixture*", "coverage", "assert*", "e2e", "snapshot*", "flaky", "stub*"] },
  { category: "git", words: ["git", "commit*", "branch*", "rebase*", "stash*", "cherry-pick", "checkout", "gitignore", ".gitignore"], phrases: ["pull request", "merge conflict", "force push", "force-push", "working tree", "working copy"] },
  { category: "security", words: ["secret*", "password*", "credential*", "token", "tokens", "auth", "oauth", "authenticat*", "authoriz*", "xss", "csrf", "injection", "sanitiz*", "sanitis*", "vulnerab*", "permission*", "encrypt*", "cve"], phrases: ["api key", "api keys"] },
  { category: "performance", words: ["perf", "performance", "slow*", "latency", "cache*", "caching", "memory", "optimi*", "profil*", "benchmark*", "throughput", "n+1", "bottleneck*"] },
  { category: "debugging", words: ["debug*", "traceback*", "breakpoint*", "stacktrace*", "repro", "reproduce*", "bisect*", "logging"], phrases: ["stack trace", "root cause", "error message"] },
  { category: "database", words: ["database*", "db", "sql", "query", "queries", "migration*", "migrate*", "postgres*", "mysql", "sqlite", "mongo*", "redis", "transaction*", "orm", "prisma"] },
  { category: "api", words: ["api", "apis", "endpoint*", "rest", "graphql", "http", "https", "request*", "response*", "webhook*", "grpc", "paginat*"], phrases: ["status code", "rate limit"] },
  { category: "ci", words: ["ci", "pipeline*", "jenkins", "circleci", "deploy*"], phrases: ["github actions", "gitlab ci", "ci workflow"] },
  { category: "typescript", words: ["typescript", "tsc", "tsconfig", "tsconfig.json", "ts", "tsx", "types", "typing*", "zod"] },
  { category: "python", words: ["python*", "pip", "venv", "virtualenv", "django", "flask", "fastapi", "pandas", "poetry", "py", "pyproject.toml", "uv"] },
  { category: "frontend", words: ["react", "vue", "svelte", "angular", "css", "html", "component*", "dom", "browser*", "tailwind", "jsx", "ui", "hook", "hooks", "frontend", "next.js", "nextjs"] },
  { category: "tooling", words: ["npm", "pnpm", "yarn", "bun", "webpack", "vite", "eslint", "prettier", "lint*", "formatter", "build*", "tsup", "turbo", "cargo", "makefile", "docker*", "cli", "bundler", "package.json", "lockfile*"] },
  { category: "documentation", words: ["readme*", "docs", "documentation", "docstring*", "jsdoc", "changelog*", "comment", "comments"] },
];

/** A category for a rule from the words it uses; `general` when nothing fits. */
export function guessCategory(rule: string): string {
  const tokens = tokenize(rule).flatMap((t) => [t, ...t.split(/[._\-+]+/).filter((p) => p.length >= 2 && p !== t)]);
  const lower = ` ${rule.toLowerCase().replace(/[^a-z0-9+#.\- ]+/g, " ").replace(/\s+/g, " ")} `;
  let best = "general";
  let bestScore = 0;
  for (const candidate of CATEGORY_RULES) {
    let score = 0;
    for (const word of candidate.words) {
      const hit = word.endsWith("*") ? tokens.some((t) => t.startsWith(word.slice(0, -1))) : tokens.includes(word);
      if (hit) score++;
    }
    for (const phrase of candidate.phrases ?? []) if (lower.includes(` ${phrase} `)) score++;
    if (score > bestScore) {
      best = candidate.category;
      bestScore = score;
    }
  }
  return best;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The tags (e.g. file names from the diary) that the rule mentions. */
export function tagsMentioned(rule: string, tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const tag of tags) {
    const t = tag.trim();
    if (t.length < 2 || out.includes(t)) continue;
    if (new RegExp(`(?<![\\w-])${escapeRegExp(t)}(?![\\w-])`, "i").test(rule)) out.push(t);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The reflector

function knownContent(playbook: Playbook, previous: readonly Delta[]): { hashes: Set<string>; tokenSets: Array<Set<string>> } {
  const texts = [
    ...playbook.bullets.map((b) => b.content),
    ...previous.flatMap((d) => (d.type === "add" ? [d.bullet.content] : d.type === "replace" ? [d.newContent] : [])),
  ];
  return { hashes: new Set(texts.map(hashContent)), tokenSets: texts.map(tokenSet) };
}

function clipQuote(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}

/** The add deltas the deterministic reflector proposes for one session (iteration 1 only). */
export function reflectDeterministically(input: ReflectionInput): Delta[] {
  if (input.iteration !== 1) return [];
  const diaryLines = [...(input.diary.keyLearnings ?? []), ...(input.diary.preferences ?? [])];
  const lessons = findLessons(input.session.text ?? "", diaryLines);
  const known = knownContent(input.playbook, input.previous);
  const accepted: Array<Set<string>> = [];
  const deltas: Delta[] = [];
  for (const lesson of lessons) {
    if (deltas.length >= MAX_LESSONS_PER_SESSION) break;
    const hash = hashContent(lesson.content);
    if (known.hashes.has(hash)) continue;
    const tokens = tokenSet(lesson.content);
    const similar = (other: Set<string>) => jaccardOfSets(tokens, other) >= LESSON_DUPLICATE_SIMILARITY;
    if (known.tokenSets.some(similar) || accepted.some(similar)) continue;
    accepted.push(tokens);
    const tags = tagsMentioned(lesson.content, input.diary.tags ?? []);
    const where = lesson.origin === "diary" ? "the session's diary" : lesson.origin === "unknown" ? "the session" : `${lesson.origin === "assistant" ? "an" : "a"} ${lesson.origin} message`;
    deltas.push({
      type: "add",
      bullet: {
        content: lesson.content,
        category: guessCategory(lesson.content),
        ...(tags.length > 0 ? { tags } : {}),
        ...(lesson.negative ? { isNegative: true, kind: "anti_pattern" as const, type: "anti-pattern" as const } : {}),
      },
      reason: `Lesson stated in ${where}: "${clipQuote(lesson.source)}"`,
      sourceSession: input.session.path,
    });
  }
  return deltas;
}

/** Reflector without an LLM (kind "deterministic"). */
export function createDeterministicReflector(): Reflector {
  return {
    kind: "deterministic",
    async reflect(input) {
      return reflectDeterministically(input);
    },
  };
}
