import { AppError } from "../errors.js";
import type { TraumaEntry } from "../schemas/records.js";
import { backtrackingProblem } from "./regex-safety.js";

/**
 * The trauma registry's regexes ("hot stove", reference §5.10): the built-in DOOM patterns, a
 * static safety check for user-supplied patterns, and bounded matching.
 *
 * A trauma pattern is a JavaScript regular expression compiled case-insensitive and multiline (as
 * the original did). Patterns come from users, from hand-edited `traumas.jsonl` files and from the
 * earlier `cm`, so none is trusted: before a pattern is ever run it is parsed and checked for the
 * shapes that make a backtracking engine take exponential or high-polynomial time
 * (`checkTraumaPattern`); unsafe ones are refused when added and skipped when matching. Matching
 * looks at no more than the first TRAUMA_MATCH_MAX_CHARS characters of the text.
 *
 * The shapes refused as "catastrophic" are those of `backtrackingProblem` (regex-safety.ts).
 */

export const MAX_TRAUMA_PATTERN_LENGTH = 512;
/** Matching reads at most this many characters (UTF-16 code units) of a task or command. */
export const TRAUMA_MATCH_MAX_CHARS = 16 * 1024;
/** `scanForDoomPatterns` reads at most this many characters of a session. */
export const DOOM_SCAN_MAX_CHARS = 1024 * 1024;
/** Characters of text kept on each side of a DOOM match as its context. */
export const DOOM_CONTEXT_CHARS = 100;

export type DoomCategory = "filesystem" | "database" | "infrastructure" | "git" | "system";

export interface DoomPattern {
  category: DoomCategory;
  description: string;
  /** Regex source, matched case-insensitive and multiline. */
  pattern: string;
}

/** The 25 built-in patterns of destructive commands (reference §5.10), in the original's order. */
export const DOOM_PATTERNS: readonly DoomPattern[] = [
  { category: "filesystem", pattern: String.raw`^rm\s+(-[rf]+\s+)+/(etc|usr|var|boot|home|root|bin|sbin|lib)`, description: "Recursive deletion of system directories" },
  { category: "filesystem", pattern: String.raw`^rm\s+(-[rf]+\s+)+/[^t]`, description: "Recursive deletion of root subdirectories" },
  { category: "filesystem", pattern: String.raw`^rm\s+(-[rf]+\s+)+~`, description: "Recursive deletion of home directory" },
  { category: "filesystem", pattern: String.raw`^rm\s+(-[rf]+\s+)+`, description: "Recursive force deletion (high risk)" },
  { category: "database", pattern: String.raw`DROP\s+DATABASE`, description: "Drop database" },
  { category: "database", pattern: String.raw`DROP\s+SCHEMA`, description: "Drop schema" },
  { category: "database", pattern: String.raw`TRUNCATE\s+TABLE`, description: "Truncate table" },
  { category: "database", pattern: String.raw`DELETE\s+FROM\s+[\w.\[\]"'\x60]+\s*(;|$|--|/\*)`, description: "Unbounded delete from table" },
  { category: "infrastructure", pattern: String.raw`^terraform\s+destroy`, description: "Terraform destroy" },
  { category: "infrastructure", pattern: String.raw`^kubectl\s+delete\s+(node|namespace|pv|pvc)\b`, description: "Kubernetes core resource deletion" },
  { category: "infrastructure", pattern: String.raw`^helm\s+uninstall.*--all`, description: "Helm uninstall all" },
  { category: "infrastructure", pattern: String.raw`^docker\s+system\s+prune\s+-a`, description: "Docker system prune all" },
  { category: "git", pattern: String.raw`^git\s+push\s+.*--force($|\s)`, description: "Git force push" },
  { category: "git", pattern: String.raw`^git\s+push\s+.*-f($|\s)`, description: "Git force push (short flag)" },
  { category: "git", pattern: String.raw`^git\s+reset\s+--hard`, description: "Git hard reset" },
  { category: "git", pattern: String.raw`^git\s+clean\s+-[a-z]*f`, description: "Git clean force" },
  { category: "git", pattern: String.raw`^git\s+checkout\s+--\s+`, description: "Git checkout discard changes" },
  { category: "git", pattern: String.raw`^git\s+restore\s+(?!--staged)`, description: "Git restore discard changes" },
  { category: "system", pattern: String.raw`^aws\s+.*terminate-instances`, description: "AWS terminate instances" },
  { category: "system", pattern: String.raw`^gcloud.*delete.*--quiet`, description: "GCloud quiet delete" },
  { category: "system", pattern: String.raw`^mkfs`, description: "Format filesystem" },
  { category: "system", pattern: String.raw`^fdisk`, description: "Partition modification" },
  { category: "system", pattern: String.raw`^dd\b.*of=/dev/`, description: "Direct disk write" },
  { category: "system", pattern: String.raw`^chmod\s+-R`, description: "Recursive permission change" },
  { category: "system", pattern: String.raw`^chown\s+-R`, description: "Recursive ownership change" },
];

export type TraumaPatternCheck = { ok: true } | { ok: false; reason: "invalid" | "too_long" | "catastrophic"; message: string };

/**
 * Decides whether a pattern may be stored and run: refuses empty patterns, patterns longer than
 * MAX_TRAUMA_PATTERN_LENGTH, invalid regexes (compiled case-insensitive, never run) and patterns of
 * the catastrophic shapes described at the top of this module.
 */
export function checkTraumaPattern(pattern: string): TraumaPatternCheck {
  if (pattern.length > MAX_TRAUMA_PATTERN_LENGTH) {
    return { ok: false, reason: "too_long", message: `Pattern is ${pattern.length} characters long; the limit is ${MAX_TRAUMA_PATTERN_LENGTH}.` };
  }
  if (pattern.trim() === "") return { ok: false, reason: "invalid", message: "Invalid regex pattern: the pattern is empty." };
  try {
    new RegExp(pattern, "im");
  } catch (error) {
    return { ok: false, reason: "invalid", message: `Invalid regex pattern: ${error instanceof Error ? error.message : String(error)}` };
  }
  let why: string | null;
  try {
    why = backtrackingProblem(pattern);
  } catch {
    return { ok: false, reason: "invalid", message: "Invalid regex pattern: it could not be analysed." };
  }
  if (why !== null) return { ok: false, reason: "catastrophic", message: `Pattern can backtrack catastrophically: ${why}.` };
  return { ok: true };
}

/** How to write a pattern that passes the check (the hint of the INVALID_INPUT error). */
export const TRAUMA_PATTERN_HINT =
  "Write a plain regex for the command, e.g. 'git\\s+push\\s+.*--force' or 'DROP\\s+TABLE\\s+users'. " +
  "Avoid repeating a group that contains + or * (like (a+)+), alternatives that can match the same text inside a repeated group " +
  "(like (a|ab)+), and unbounded quantifiers over the same characters in a row (like \\s*\\s* or .*x.*); " +
  "escape . ( ) [ ] { } + * ? | ^ $ with a backslash to match them literally.";

/** Throws INVALID_INPUT (exit 2) with a hint when `pattern` may not be used; nothing is run. */
export function assertTraumaPattern(pattern: string): void {
  const check = checkTraumaPattern(pattern);
  if (check.ok) return;
  throw new AppError("INVALID_INPUT", check.message, {
    hint: TRAUMA_PATTERN_HINT,
    details: { pattern: pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern, reason: check.reason },
  });
}

const CACHE_LIMIT = 512;
const compiled = new Map<string, RegExp | null>();

/**
 * The pattern compiled case-insensitive and multiline, or null when it is invalid or unsafe
 * (`checkTraumaPattern`). Results are cached per pattern.
 */
export function compileTraumaRegex(pattern: string): RegExp | null {
  const cached = compiled.get(pattern);
  if (cached !== undefined) return cached;
  const regex = checkTraumaPattern(pattern).ok ? new RegExp(pattern, "im") : null;
  if (compiled.size >= CACHE_LIMIT) compiled.clear();
  compiled.set(pattern, regex);
  return regex;
}

export interface TraumaMatch {
  entry: TraumaEntry;
  /** The matched text. */
  match: string;
}

/**
 * The first active entry whose pattern matches `text` (its first TRAUMA_MATCH_MAX_CHARS
 * characters). Healed entries and invalid or unsafe patterns are skipped, never run.
 */
export function findTraumaMatch(entries: readonly TraumaEntry[], text: string): TraumaMatch | undefined {
  const bounded = text.length > TRAUMA_MATCH_MAX_CHARS ? text.slice(0, TRAUMA_MATCH_MAX_CHARS) : text;
  for (const entry of entries) {
    if (entry.status !== "active") continue;
    const regex = compileTraumaRegex(entry.pattern);
    if (regex === null) continue;
    const m = regex.exec(bounded);
    if (m !== null) return { entry, match: m[0] };
  }
  return undefined;
}

export interface DoomMatch {
  pattern: string;
  description: string;
  category: DoomCategory;
  /** The matched text. */
  evidence: string;
  /**
   * Up to DOOM_CONTEXT_CHARS characters either side of the match, trimmed; for a command found in
   * a tool call, `Executed: <the whole command>` (at most 500 characters).
   */
  context: string;
}

/** At most this many shell commands are taken from one text. */
const MAX_COMMANDS = 5_000;
const COMMAND_FIELD = /"(?:command|cmd|CommandLine|commandLine)"\s*:\s*"((?:[^"\\]|\\.){1,20000})"/g;

/**
 * The shell commands written in tool calls of a session text (`"command": "…"` fields of the
 * arguments, as session readers render them), JSON-unescaped.
 */
export function extractShellCommands(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(COMMAND_FIELD)) {
    try {
      out.push(JSON.parse(`"${m[1]}"`) as string);
    } catch {
      out.push(m[1]!);
    }
    if (out.length >= MAX_COMMANDS) break;
  }
  return out;
}

/**
 * The simple commands of a shell command line (split at newlines, `&&`, `||`, `;` and `|`, with a
 * leading `(`/`{` and `sudo`/`exec`/`time`/`nohup`/`command` removed), so that `^`-anchored
 * patterns see `cd x && rm -rf /`'s `rm`. A heuristic: quoting is not honoured.
 */
export function splitShellCommand(command: string): string[] {
  return command
    .split(/\r?\n|&&|\|\||;|\|/)
    .map((s) => s.trim().replace(/^[({]\s*/, "").replace(/^(?:sudo|exec|time|nohup|command)\s+/, "").trim())
    .filter((s) => s !== "");
}

const doomRegexes = DOOM_PATTERNS.map((d) => ({ ...d, regex: new RegExp(d.pattern, "im") }));

/**
 * Every built-in DOOM pattern found in a session text (its first DOOM_SCAN_MAX_CHARS characters),
 * at most once each: first in the commands of its tool calls, else anywhere in the text.
 */
export function scanForDoomPatterns(text: string): DoomMatch[] {
  const bounded = text.length > DOOM_SCAN_MAX_CHARS ? text.slice(0, DOOM_SCAN_MAX_CHARS) : text;
  const segments = extractShellCommands(bounded).flatMap((command) =>
    splitShellCommand(command.length > TRAUMA_MATCH_MAX_CHARS ? command.slice(0, TRAUMA_MATCH_MAX_CHARS) : command).map((segment) => ({ command, segment })),
  );
  const found: DoomMatch[] = [];
  for (const d of doomRegexes) {
    const base = { pattern: d.pattern, description: d.description, category: d.category };
    let hit: DoomMatch | undefined;
    for (const { command, segment } of segments) {
      const m = d.regex.exec(segment);
      if (m === null) continue;
      const full = command.trim();
      hit = { ...base, evidence: m[0], context: `Executed: ${full.length > 500 ? `${full.slice(0, 500)}…` : full}` };
      break;
    }
    if (hit === undefined) {
      const m = d.regex.exec(bounded);
      if (m !== null) {
        const start = Math.max(0, m.index - DOOM_CONTEXT_CHARS);
        const end = Math.min(bounded.length, m.index + m[0].length + DOOM_CONTEXT_CHARS);
        hit = { ...base, evidence: m[0], context: bounded.slice(start, end).trim() };
      }
    }
    if (hit !== undefined) found.push(hit);
  }
  return found;
}
