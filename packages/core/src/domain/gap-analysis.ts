import * as z from "zod";
import { isActiveBullet } from "./bullet-state.js";
import type { Bullet } from "../schemas/playbook.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * Playbook gap analysis (reference §5.11): how many active rules each of the ten standard
 * categories holds, which categories are empty or thin, and keyword heuristics that guess the
 * categories a piece of session text is about (to pick sessions that fill the gaps).
 */

/** The standard rule categories, in the order they are reported. */
export const RULE_CATEGORIES = [
  "debugging",
  "testing",
  "architecture",
  "workflow",
  "documentation",
  "integration",
  "collaboration",
  "git",
  "security",
  "performance",
] as const;
export type RuleCategory = (typeof RULE_CATEGORIES)[number];

/**
 * Words that suggest a category. Matching is a case-insensitive substring test, so stems such as
 * `optimiz` also catch `optimize`/`optimization`. The first three words of each list are the
 * search query used to look for sessions about that category (`onboard sample --fill-gaps`), so
 * they are plain words a session transcript is likely to contain.
 */
export const CATEGORY_KEYWORDS: Readonly<Record<RuleCategory, readonly string[]>> = {
  debugging: [
    "debug",
    "error",
    "exception",
    "stack trace",
    "traceback",
    "crash",
    "bug",
    "breakpoint",
    "root cause",
    "reproduce",
    "regression",
    "segfault",
    "panic",
  ],
  testing: [
    "test",
    "assert",
    "mock",
    "fixture",
    "coverage",
    "snapshot",
    "flaky",
    "vitest",
    "jest",
    "pytest",
    "e2e",
    "stub",
    "unit test",
  ],
  architecture: [
    "architecture",
    "refactor",
    "module",
    "interface",
    "abstraction",
    "dependency",
    "layer",
    "design",
    "coupling",
    "boundary",
    "component",
    "monolith",
  ],
  workflow: [
    "workflow",
    "build",
    "deploy",
    "pipeline",
    "release",
    "npm run",
    "automation",
    "checklist",
    "makefile",
    "continuous integration",
    "github actions",
    "task runner",
  ],
  documentation: [
    "documentation",
    "readme",
    "docs",
    "docstring",
    "changelog",
    "comment",
    "jsdoc",
    "tutorial",
    "usage example",
    "guide",
    "man page",
  ],
  integration: [
    "api",
    "endpoint",
    "http",
    "webhook",
    "request",
    "response",
    "json",
    "graphql",
    "sdk",
    "payload",
    "rate limit",
    "third-party",
    "grpc",
  ],
  collaboration: [
    "review",
    "handoff",
    "teammate",
    "pull request",
    "reviewer",
    "feedback",
    "coordinate",
    "pairing",
    "ownership",
    "discussion",
    "consensus",
    "another agent",
  ],
  git: [
    "git",
    "commit",
    "branch",
    "rebase",
    "merge",
    "cherry-pick",
    "stash",
    "bisect",
    "checkout",
    "submodule",
    "force push",
    "worktree",
  ],
  security: [
    "security",
    "auth",
    "secret",
    "credential",
    "token",
    "password",
    "permission",
    "encrypt",
    "vulnerab",
    "injection",
    "xss",
    "csrf",
    "sanitiz",
  ],
  performance: [
    "performance",
    "slow",
    "latency",
    "cache",
    "memory leak",
    "profil",
    "benchmark",
    "optimiz",
    "throughput",
    "bottleneck",
    "n+1",
    "allocation",
  ],
};

export const CATEGORY_STATUSES = ["critical", "underrepresented", "adequate", "well-covered"] as const;
export type CategoryStatus = (typeof CATEGORY_STATUSES)[number];

export const CategoryAnalysisSchema = lazySchema(() => z.object({
  count: z.number().int().min(0),
  status: z.enum(CATEGORY_STATUSES),
  percentage: z.number(),
}));
export type CategoryAnalysis = z.output<typeof CategoryAnalysisSchema>;

export const PlaybookGapAnalysisSchema = lazySchema(() => z.object({
  totalRules: z.number().int().min(0),
  byCategory: z.record(z.string(), CategoryAnalysisSchema),
  gaps: z.object({ critical: z.array(z.string()), underrepresented: z.array(z.string()) }),
  wellCovered: z.array(z.string()),
  suggestions: z.string(),
}));
export type PlaybookGapAnalysis = z.output<typeof PlaybookGapAnalysisSchema>;

/** 0 rules → critical, 1–2 → underrepresented, 3–10 → adequate, more → well-covered. */
export function categoryStatus(count: number): CategoryStatus {
  if (count <= 0) return "critical";
  if (count < 3) return "underrepresented";
  if (count <= 10) return "adequate";
  return "well-covered";
}

/** The original's suggestion sentences (agents may show them verbatim). */
export function gapSuggestions(gaps: { critical: readonly string[]; underrepresented: readonly string[] }, totalRules: number): string {
  if (totalRules === 0) return "Your playbook is empty! Start by adding foundational rules across all categories.";
  if (gaps.critical.length === 0 && gaps.underrepresented.length === 0) return "Your playbook has good coverage across all categories.";
  const parts: string[] = [];
  if (gaps.critical.length > 0) parts.push(`Focus on ${gaps.critical.join(", ")} - you have no rules in these areas.`);
  if (gaps.underrepresented.length > 0) parts.push(`Consider adding more ${gaps.underrepresented.join(", ")} rules.`);
  return parts.join(" ");
}

/**
 * Counts the active rules per standard category (exact, case-sensitive category names; rules in
 * other categories count towards the total only).
 */
export function analyzePlaybookGaps(bullets: readonly Bullet[]): PlaybookGapAnalysis {
  const active = bullets.filter((b) => isActiveBullet(b));
  const counts = new Map<string, number>();
  for (const b of active) counts.set(b.category, (counts.get(b.category) ?? 0) + 1);
  const totalRules = active.length;
  const byCategory: Record<string, CategoryAnalysis> = {};
  const critical: string[] = [];
  const underrepresented: string[] = [];
  const wellCovered: string[] = [];
  for (const category of RULE_CATEGORIES) {
    const count = counts.get(category) ?? 0;
    const status = categoryStatus(count);
    byCategory[category] = { count, status, percentage: totalRules > 0 ? (count / totalRules) * 100 : 0 };
    if (status === "critical") critical.push(category);
    else if (status === "underrepresented") underrepresented.push(category);
    else if (status === "well-covered") wellCovered.push(category);
  }
  return {
    totalRules,
    byCategory,
    gaps: { critical, underrepresented },
    wellCovered,
    suggestions: gapSuggestions({ critical, underrepresented }, totalRules),
  };
}

/**
 * The (at most three) categories a text is most likely about: each category scores one point per
 * keyword the text contains; ties keep the standard category order.
 */
export function detectCategories(text: string): RuleCategory[] {
  const lower = text.toLowerCase();
  const scored: Array<{ category: RuleCategory; score: number }> = [];
  for (const category of RULE_CATEGORIES) {
    let score = 0;
    for (const keyword of CATEGORY_KEYWORDS[category]) if (lower.includes(keyword)) score++;
    if (score > 0) scored.push({ category, score });
  }
  return scored
    .sort((a, b) => b.score - a.score)
    .slice(0, 3)
    .map((s) => s.category);
}

/** At most this many gap-targeted queries are run by `onboard sample --fill-gaps`. */
export const MAX_GAP_QUERIES = 5;

/** Search queries for the empty categories first, then the thin ones: each category's first three keywords. */
export function gapSearchQueries(analysis: PlaybookGapAnalysis): string[] {
  const queries: string[] = [];
  for (const category of [...analysis.gaps.critical, ...analysis.gaps.underrepresented]) {
    const keywords = CATEGORY_KEYWORDS[category as RuleCategory];
    if (keywords && keywords.length > 0) queries.push(keywords.slice(0, 3).join(" "));
  }
  return queries.slice(0, MAX_GAP_QUERIES);
}

export interface SessionGapScore {
  /** +3 per detected empty category, +2 per thin one, +1 per adequate one. */
  score: number;
  matchedCategories: RuleCategory[];
  reason: string;
}

/** How much a session (judged by a snippet of it) could help fill the playbook's gaps. */
export function scoreSessionForGaps(text: string, analysis: PlaybookGapAnalysis): SessionGapScore {
  const detected = detectCategories(text);
  if (detected.length === 0) return { score: 0, matchedCategories: [], reason: "No category patterns detected" };
  let score = 0;
  const matchedCategories: RuleCategory[] = [];
  const reasons: string[] = [];
  for (const category of detected) {
    const entry = analysis.byCategory[category];
    if (!entry) continue;
    if (entry.status === "critical") {
      score += 3;
      matchedCategories.push(category);
      reasons.push(`${category} (0 rules)`);
    } else if (entry.status === "underrepresented") {
      score += 2;
      matchedCategories.push(category);
      reasons.push(`${category} (${entry.count} rule${entry.count === 1 ? "" : "s"})`);
    } else if (entry.status === "adequate") {
      score += 1;
      matchedCategories.push(category);
    }
  }
  const reason = reasons.length > 0 ? `Contains ${reasons.join(", ")} patterns` : "Contains patterns in well-covered categories";
  return { score, matchedCategories, reason };
}
