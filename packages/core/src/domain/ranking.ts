import type { Config } from "../schemas/config.js";
import { isActiveBullet, isAntiPattern, isOutsideValidity, type Bullet, type DeprecatedPattern } from "../schemas/playbook.js";
import { formatLastHelpful, getEffectiveScore } from "./scoring.js";
import { extractKeywords, tokenize } from "./text.js";
import type { OmitKnown } from "./types.js";

/**
 * Context ranking for `cm context` (reference §5.12): keyword relevance × effective score over the
 * active bullets, plus the history query and follow-up search suggestions. This is the hot path of
 * every agent call, so each bullet is lower-cased once, tokenised only when a keyword occurrence is
 * ambiguous, and output objects are built only for the bullets that are returned.
 */

export type ScoredBullet = OmitKnown<Bullet, "embedding"> & {
  relevanceScore: number;
  effectiveScore: number;
  finalScore: number;
  lastHelpful: string;
  reasoning: string;
};

export interface RankOptions {
  now: Date;
  config: Config;
  /** Canonical workspace path; workspace-scoped bullets are kept only when theirs equals it exactly. */
  workspace?: string;
  limit: number;
  minRelevance: number;
}

export interface RankResult {
  rules: ScoredBullet[];
  antiPatterns: ScoredBullet[];
  /** Rules and anti-patterns together, best first (what `rules` and `antiPatterns` were split from). */
  ranked: ScoredBullet[];
  keywords: string[];
}

const TOKEN_MATCH = 3;
const SUBSTRING_MATCH = 1;
const TAG_MATCH = 5;

/** Lower-cased, de-duplicated keywords (first occurrence order). */
function normalizeKeywords(keywords: readonly string[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const k of keywords) {
    const lower = k.toLowerCase();
    if (lower === "" || seen.has(lower)) continue;
    seen.add(lower);
    out.push(lower);
  }
  return out;
}

const enum Side {
  /** Start/end of text or a character that cannot belong to a token. */
  Clean,
  /** [a-z0-9]: the tokenizer's greedy match runs through it, so this occurrence is not a whole token. */
  Alnum,
  /** One of `._-+#`: whether it joins depends on what follows, so only the tokenizer can tell. */
  Joiner,
}

function sideOf(code: number): Side {
  if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) return Side.Alnum;
  if (code === 46 || code === 95 || code === 45 || code === 43 || code === 35) return Side.Joiner;
  return Side.Clean;
}

/**
 * Whether `keyword` (itself a token, so starting with [a-z0-9]) occurs in `lower` as a whole token:
 * "token" when an occurrence is bounded by non-token characters, "substring" when every occurrence
 * runs into letters/digits, "unknown" when some occurrence touches a joiner (the caller must
 * tokenise), "absent" when it does not occur.
 */
function tokenOccurrence(lower: string, keyword: string): "token" | "unknown" | "substring" | "absent" {
  let result: "unknown" | "substring" | "absent" = "absent";
  // A token never ends between two letters/digits, but it can end after a trailing `+`/`#`
  // ("c#a" tokenises as "c#"), so a letter after such a keyword is a joiner-like ambiguity.
  const endsAlnum = sideOf(keyword.charCodeAt(keyword.length - 1)) === Side.Alnum;
  for (let i = lower.indexOf(keyword); i !== -1; i = lower.indexOf(keyword, i + 1)) {
    const end = i + keyword.length;
    const before = i === 0 ? Side.Clean : sideOf(lower.charCodeAt(i - 1));
    let after = end === lower.length ? Side.Clean : sideOf(lower.charCodeAt(end));
    if (after === Side.Alnum && !endsAlnum) after = Side.Joiner;
    if (before === Side.Clean && after === Side.Clean) return "token";
    if (before !== Side.Alnum && after !== Side.Alnum) result = "unknown";
    else if (result === "absent") result = "substring";
  }
  return result;
}

/** Relevance over already-normalised keywords. */
function relevanceOf(content: string, tags: readonly string[] | undefined, keywords: readonly string[]): number {
  if (!content || keywords.length === 0) return 0;
  const lower = content.toLowerCase();
  let score = 0;
  let tokens: Set<string> | undefined;
  for (const k of keywords) {
    const occurrence = tokenOccurrence(lower, k);
    if (occurrence === "token") score += TOKEN_MATCH;
    else if (occurrence === "substring") score += SUBSTRING_MATCH;
    else if (occurrence === "unknown") {
      tokens ??= new Set(tokenize(lower));
      score += tokens.has(k) ? TOKEN_MATCH : SUBSTRING_MATCH;
    }
  }
  if (tags !== undefined && tags.length > 0) {
    for (const k of keywords) {
      for (const tag of tags) {
        if (tag.toLowerCase() === k) {
          score += TAG_MATCH;
          break;
        }
      }
    }
  }
  return score;
}

/**
 * Keyword relevance of a bullet: per distinct keyword +3 when it equals a content token, else +1
 * when it is a substring of the content; +5 more when it equals a tag (case-insensitive).
 */
export function scoreBulletRelevance(bullet: Pick<Bullet, "content" | "tags">, keywords: readonly string[]): number {
  return relevanceOf(bullet.content, bullet.tags, normalizeKeywords(keywords));
}

/** Whether a bullet may appear for the given workspace (global bullets always; workspace ones on exact match). */
function inWorkspace(bullet: Bullet, workspace: string | undefined): boolean {
  if (bullet.scope !== "workspace") return true;
  return workspace !== undefined && bullet.workspace === workspace;
}

/** Ranks the bullets for a task and splits the top `limit` into rules and anti-patterns. */
export function rankBulletsForTask(bullets: readonly Bullet[], task: string, opts: RankOptions): RankResult {
  const keywords = extractKeywords(task);
  const normalized = normalizeKeywords(keywords);
  const candidates: Array<{ bullet: Bullet; relevance: number; effective: number; final: number; order: number }> = [];

  for (let i = 0; i < bullets.length; i++) {
    const bullet = bullets[i]!;
    if (!isActiveBullet(bullet) || !inWorkspace(bullet, opts.workspace)) continue;
    if ((bullet.validTo !== undefined || bullet.validFrom !== undefined) && isOutsideValidity(bullet, opts.now)) continue;
    const relevance = relevanceOf(bullet.content, bullet.tags, normalized);
    if (!(relevance >= opts.minRelevance)) continue;
    const effective = getEffectiveScore(bullet, opts.now, opts.config);
    candidates.push({ bullet, relevance, effective, final: relevance * Math.max(0.1, effective), order: i });
  }

  candidates.sort((a, b) => b.final - a.final || b.relevance - a.relevance || a.order - b.order);
  const limit = Math.max(0, Math.floor(opts.limit));
  const rules: ScoredBullet[] = [];
  const antiPatterns: ScoredBullet[] = [];
  const ranked: ScoredBullet[] = [];
  for (const c of candidates.slice(0, limit)) {
    const { embedding: _embedding, ...rest } = c.bullet;
    const scored: ScoredBullet = {
      ...rest,
      relevanceScore: c.relevance,
      effectiveScore: c.effective,
      finalScore: c.final,
      lastHelpful: formatLastHelpful(c.bullet, opts.now),
      reasoning: bulletReasoning(c.bullet),
    };
    (isAntiPattern(c.bullet) ? antiPatterns : rules).push(scored);
    ranked.push(scored);
  }
  return { rules, antiPatterns, ranked, keywords };
}

const REASONING_MAX = 200;

function truncateReasoning(text: string): string {
  if (text.length <= REASONING_MAX) return text;
  const sentenceEnd = text.search(/[.!?]/);
  if (sentenceEnd > 0 && sentenceEnd < REASONING_MAX - 3) return text.slice(0, sentenceEnd + 1);
  const cut = text.slice(0, REASONING_MAX);
  const lastSpace = cut.lastIndexOf(" ");
  if (lastSpace > REASONING_MAX * 0.7) return `${cut.slice(0, lastSpace)}...`;
  return `${cut.slice(0, REASONING_MAX - 3)}...`;
}

/**
 * Why a rule exists: its `reasoning` (≤ 200 chars: first sentence or a word-boundary cut + "..."),
 * else `From <agent> session on <M/D/YYYY>`, else "No reasoning available".
 * Deviation: the original formatted the date in the machine's local time zone; we use UTC so the
 * output does not depend on where it runs.
 */
export function bulletReasoning(bullet: Pick<Bullet, "reasoning" | "sourceAgents" | "createdAt">): string {
  const reasoning = bullet.reasoning?.trim();
  if (reasoning) return truncateReasoning(reasoning);
  const agent = bullet.sourceAgents?.[0];
  const created = bullet.createdAt;
  if (agent || created) {
    let date = "unknown date";
    const ms = created ? Date.parse(created) : Number.NaN;
    if (Number.isFinite(ms)) {
      const d = new Date(ms);
      date = `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${d.getUTCFullYear()}`;
    }
    return `From ${agent || "unknown"} session on ${date}`;
  }
  return "No reasoning available";
}

// ---------------------------------------------------------------------------------------------
// History query and suggestions

export const MAX_CASS_QUERY_TERMS = 8;
const TRACKER_ID = /^(?:bd|br)-[a-z0-9]+(?:[.-][a-z0-9]+)+$/i;

/**
 * The cass query for a task's keywords: up to 8 keywords of ≥ 2 chars that are not all digits, not
 * issue-tracker ids (`bd-…`, `br-…`) and contain no `.`, `/` or `\`; joined with " OR ". "" when none.
 */
export function buildCassQuery(keywords: readonly string[]): string {
  const terms = keywords
    .filter((k) => k.length >= 2 && !/^\d+$/.test(k) && !TRACKER_ID.test(k) && !/[./\\]/.test(k))
    .slice(0, MAX_CASS_QUERY_TERMS);
  return terms.join(" OR ");
}

const PROBLEM_TERMS = ["error", "fix", "bug", "issue", "problem", "fail", "debug"];
const MAX_SUGGESTIONS = 5;

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Up to five ready-to-run `cass search '<q>' --days N` commands for digging deeper (reference §5.12 item 7). */
export function suggestCassQueries(task: string, keywords: readonly string[]): string[] {
  const out: string[] = [];
  const add = (query: string, days: number): void => {
    if (out.length >= MAX_SUGGESTIONS) return;
    const command = `cass search ${shellQuote(query)} --days ${days}`;
    if (!out.includes(command)) out.push(command);
  };
  const [first, second, third] = keywords;
  if (keywords.length >= 2) add(keywords.slice(0, 3).join(" "), 30);
  if (first !== undefined) {
    const lowerTask = task.toLowerCase();
    const hasProblem = PROBLEM_TERMS.some((t) => lowerTask.includes(t));
    add(`${first} ${hasProblem ? "fix" : "error"}`, 60);
    add(first, 90);
  }
  if (first !== undefined && second !== undefined) add(`${first} ${second}`, 60);
  if (third !== undefined) add(third, 90);
  return out;
}

/**
 * Matcher for a deprecated pattern: `/…/` or text with regex syntax is a case-insensitive regex
 * (skipped when longer than 256 chars, nested-quantified or invalid); anything else a
 * case-insensitive substring.
 */
export function deprecatedPatternMatcher(pattern: string): (text: string) => boolean {
  if (!pattern) return () => false;
  const wrapped = pattern.length > 2 && pattern.startsWith("/") && pattern.endsWith("/");
  const looksLikeRegex = /\\/.test(pattern) || /[()[\]|?*+^$]/.test(pattern);
  if (!wrapped && !looksLikeRegex) {
    const needle = pattern.toLowerCase();
    return (text) => text.toLowerCase().includes(needle);
  }
  const body = wrapped ? pattern.slice(1, -1) : pattern;
  if (body.length > 256 || /\([^)]*[*+][^)]*\)[*+?]/.test(body)) return () => false;
  try {
    const regex = new RegExp(body, "i");
    return (text) => regex.test(text);
  } catch {
    return () => false;
  }
}

/** `Task matches deprecated pattern "<p>"[ - use <r> instead][ (Reason: <reason>)]` per matching pattern. */
export function deprecatedPatternWarnings(
  task: string,
  patterns: ReadonlyArray<Pick<DeprecatedPattern, "pattern"> & { replacement?: string | undefined; reason?: string | undefined }>,
): string[] {
  const out: string[] = [];
  for (const p of patterns) {
    if (!p?.pattern || !deprecatedPatternMatcher(p.pattern)(task)) continue;
    const replacement = p.replacement ? ` - use ${p.replacement} instead` : "";
    const reason = p.reason ? ` (Reason: ${p.reason})` : "";
    out.push(`Task matches deprecated pattern "${p.pattern}"${replacement}${reason}`);
  }
  return out;
}
