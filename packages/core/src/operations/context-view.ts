import * as z from "zod";
import type { ContextResult } from "./context.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * The token-lean views of a `cm context` result, shared by the CLI (`--compact`) and the MCP
 * server (`cm_context`'s default), and the token-budget trimming both use. Pure: the front ends
 * pass in how they measure what they print.
 */

/** Rough token count of printed text: about four characters per token. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The default `kind` of a bullet (left out of the compact view). */
const DEFAULT_KIND = "stack_pattern";
/** The default `maturity` of a bullet (left out of the compact view). */
const DEFAULT_MATURITY = "candidate";

/** A rule as an agent acts on it: no feedback history, timestamps, provenance or reasoning. */
export const CompactRuleSchema = lazySchema(() => z.object({
  id: z.string(),
  content: z.string(),
  category: z.string(),
  /** Only when not the default `stack_pattern` (e.g. `anti_pattern`, `workflow_rule`). */
  kind: z.string().optional(),
  /** Only when not the default `candidate`. */
  maturity: z.string().optional(),
  relevanceScore: z.number(),
  effectiveScore: z.number(),
  finalScore: z.number(),
  /** Only when the rule was ever marked helpful ("3 days ago"). */
  lastHelpful: z.string().optional(),
  /** Why the rule's verification check failed, when it did. */
  stale: z.string().optional(),
}));
export type CompactRule = z.output<typeof CompactRuleSchema>;

export const CompactSnippetSchema = lazySchema(() => z.object({
  /** `<session file>:<line>`. */
  path: z.string(),
  agent: z.string(),
  snippet: z.string(),
}));
export type CompactSnippet = z.output<typeof CompactSnippetSchema>;

export const CompactDegradedSchema = lazySchema(() => z.object({
  reason: z.enum(["NOT_FOUND", "INDEX_MISSING", "FTS_TABLE_MISSING", "TIMEOUT", "OTHER"]),
  /** The first suggested fix. */
  fix: z.string().optional(),
  /** The folders the native readers looked in (only with `verbose`). */
  searched: z.array(z.string()).optional(),
}));

/** What `maxTokens` left out: counts per list (the ids are not part of the result). */
export const TrimmedSchema = lazySchema(() => z.object({
  maxTokens: z.number(),
  /** Tokens of the result as measured by the front end (≈ characters ÷ 4 of what it prints). */
  estimatedTokens: z.number(),
  relevantBullets: z.number(),
  antiPatterns: z.number(),
  historySnippets: z.number(),
}));
export type Trimmed = z.output<typeof TrimmedSchema>;

export const CompactContextSchema = lazySchema(() => z.object({
  task: z.string(),
  relevantBullets: z.array(CompactRuleSchema),
  antiPatterns: z.array(CompactRuleSchema),
  historySnippets: z.array(CompactSnippetSchema),
  /** Only when non-empty. */
  deprecatedWarnings: z.array(z.string()).optional(),
  /** Only when non-empty and history search works (the queries need `cass`). */
  suggestedCassQueries: z.array(z.string()).optional(),
  degraded: z.object({ cass: CompactDegradedSchema.optional() }).optional(),
  /** Only when semantic search was used. */
  semanticMode: z.literal("semantic").optional(),
  semanticError: z.string().optional(),
  traumaWarning: z.object({ pattern: z.string(), reason: z.string(), reference: z.string() }).optional(),
  trimmed: TrimmedSchema.optional(),
}));
export type CompactContext = z.output<typeof CompactContextSchema>;

export interface CompactOptions {
  /** Keep the searched folders of a `degraded` report. */
  verbose?: boolean;
}

function round2(n: number): number {
  return Number.isFinite(n) ? Math.round(n * 100) / 100 : n;
}

type FullRule = ContextResult["relevantBullets"][number];

export function compactRule(b: FullRule): CompactRule {
  const kind = typeof b.kind === "string" && b.kind !== DEFAULT_KIND ? b.kind : undefined;
  const maturity = typeof b.maturity === "string" && b.maturity !== DEFAULT_MATURITY ? b.maturity : undefined;
  return {
    id: b.id,
    content: b.content,
    category: b.category,
    ...(kind !== undefined ? { kind } : {}),
    ...(maturity !== undefined ? { maturity } : {}),
    relevanceScore: round2(b.relevanceScore),
    effectiveScore: round2(b.effectiveScore),
    finalScore: round2(b.finalScore),
    ...(b.lastHelpful !== "" && b.lastHelpful !== "Never" ? { lastHelpful: b.lastHelpful } : {}),
    ...(b.stale !== undefined ? { stale: b.stale.reason } : {}),
  };
}

const SEARCHED_PREFIX = "searched: ";

/**
 * The compact view of a context result: every rule reduced to what an agent acts on, history
 * snippets to `path:line`, agent and text, `degraded` to its reason and one fix, empty lists and
 * default values left out. `trimmed` and `traumaWarning` are kept as they are.
 */
export function compactContext(result: ContextResult, options: CompactOptions = {}): CompactContext {
  const cass = result.degraded?.cass;
  let degraded: CompactContext["degraded"];
  if (cass !== undefined) {
    const fixes = cass.suggestedFix ?? [];
    const fix = fixes.find((f) => !f.startsWith(SEARCHED_PREFIX));
    const searched = fixes.filter((f) => f.startsWith(SEARCHED_PREFIX)).map((f) => f.slice(SEARCHED_PREFIX.length));
    degraded = {
      cass: {
        reason: cass.reason,
        ...(fix !== undefined ? { fix } : {}),
        ...(options.verbose && searched.length > 0 ? { searched } : {}),
      },
    };
  }
  return {
    task: result.task,
    relevantBullets: result.relevantBullets.map(compactRule),
    antiPatterns: result.antiPatterns.map(compactRule),
    historySnippets: result.historySnippets.map((h) => ({ path: `${h.sessionPath}:${h.line_number}`, agent: h.agent, snippet: h.snippet })),
    ...(result.deprecatedWarnings.length > 0 ? { deprecatedWarnings: result.deprecatedWarnings } : {}),
    ...(result.suggestedCassQueries.length > 0 && cass === undefined ? { suggestedCassQueries: result.suggestedCassQueries } : {}),
    ...(degraded !== undefined ? { degraded } : {}),
    ...(result.semanticMode === "semantic" ? { semanticMode: "semantic" as const } : {}),
    ...(result.semanticError !== undefined ? { semanticError: result.semanticError } : {}),
    ...(result.traumaWarning !== undefined ? { traumaWarning: result.traumaWarning } : {}),
    ...(result.trimmed !== undefined ? { trimmed: result.trimmed } : {}),
  };
}

/** The ids `fitContextToBudget` removed (for diagnostics: they are not part of the result). */
export interface TrimmedIds {
  relevantBullets: string[];
  antiPatterns: string[];
  historySnippets: number;
}

type Removal = { list: "historySnippets" } | { list: "relevantBullets" | "antiPatterns"; id: string };

/**
 * The order in which items go when a result is over budget: history snippets from the last, then
 * rules and anti-patterns from the lowest final score up (each list is best first).
 */
function removalOrder(result: ContextResult): Removal[] {
  const order: Removal[] = result.historySnippets.map(() => ({ list: "historySnippets" as const }));
  let r = result.relevantBullets.length - 1;
  let a = result.antiPatterns.length - 1;
  while (r >= 0 || a >= 0) {
    const rule = r >= 0 ? result.relevantBullets[r] : undefined;
    const anti = a >= 0 ? result.antiPatterns[a] : undefined;
    if (rule === undefined || (anti !== undefined && anti.finalScore < rule.finalScore)) {
      order.push({ list: "antiPatterns", id: anti!.id });
      a--;
    } else {
      order.push({ list: "relevantBullets", id: rule.id });
      r--;
    }
  }
  return order;
}

/**
 * Makes `result` fit `maxTokens` as the front end measures it (`measure`: the tokens of the result
 * as printed — compact or full, JSON or TOON or markdown, envelope included). Removes the fewest
 * items in `removalOrder` (found by bisection, each candidate measured whole), then records the
 * counts in `result.trimmed`; the report itself is part of what is measured, and its
 * `estimatedTokens` is the measured size of the final result. When even an empty result is over
 * budget (a long task), everything is removed and `estimatedTokens` shows by how much.
 * Returns the removed ids, or null when nothing had to go.
 */
export function fitContextToBudget(
  result: ContextResult,
  maxTokens: number,
  measure: (result: ContextResult) => number,
): TrimmedIds | null {
  delete result.trimmed;
  if (measure(result) <= maxTokens) return null;
  const order = removalOrder(result);
  const original = {
    relevantBullets: result.relevantBullets,
    antiPatterns: result.antiPatterns,
    historySnippets: result.historySnippets,
  };

  const apply = (k: number): void => {
    const counts = { relevantBullets: 0, antiPatterns: 0, historySnippets: 0 };
    for (const step of order.slice(0, k)) counts[step.list]++;
    result.relevantBullets = original.relevantBullets.slice(0, original.relevantBullets.length - counts.relevantBullets);
    result.antiPatterns = original.antiPatterns.slice(0, original.antiPatterns.length - counts.antiPatterns);
    result.historySnippets = original.historySnippets.slice(0, original.historySnippets.length - counts.historySnippets);
    result.trimmed = { maxTokens, estimatedTokens: 0, ...counts };
    // The estimate includes its own digits: settle it (a few rounds are enough for a number).
    for (let i = 0; i < 3; i++) result.trimmed.estimatedTokens = measure(result);
  };
  const fits = (k: number): boolean => {
    apply(k);
    return result.trimmed!.estimatedTokens <= maxTokens;
  };

  // Smallest k in [1, order.length] that fits; everything goes when none does.
  let lo = 1;
  let hi = order.length;
  if (order.length === 0 || !fits(hi)) {
    apply(order.length);
  } else {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (fits(mid)) hi = mid;
      else lo = mid + 1;
    }
    apply(lo);
  }

  const removed: TrimmedIds = { relevantBullets: [], antiPatterns: [], historySnippets: 0 };
  const t = result.trimmed!;
  removed.historySnippets = t.historySnippets;
  removed.relevantBullets = original.relevantBullets.slice(original.relevantBullets.length - t.relevantBullets).map((b) => b.id).reverse();
  removed.antiPatterns = original.antiPatterns.slice(original.antiPatterns.length - t.antiPatterns).map((b) => b.id).reverse();
  return removed;
}

/** The default measure: the result's JSON text (as an MCP tool result carries it). */
export function measureJson(value: unknown): number {
  return estimateTokens(JSON.stringify(value));
}

/**
 * Either view of a context result, key by key (an object schema, as MCP tool output schemas must
 * be): what `cm_context` returns, compact by default or full on request.
 */
export function contextViewSchema(full: z.ZodObject): z.ZodObject {
  const a = full.shape as Record<string, z.ZodType>;
  const b = CompactContextSchema.shape as Record<string, z.ZodType>;
  const shape: Record<string, z.ZodType> = {};
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[key];
    const y = b[key];
    shape[key] = x !== undefined && y !== undefined ? z.union([x, y]) : (x ?? y)!.optional();
  }
  return z.object(shape);
}
