import * as z from "zod";
import { buildCassQuery, rankBulletsForTask } from "../domain/ranking.js";
import { warmLexicalIndex } from "../domain/lexical-cache.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { defineOperation } from "../operation.js";
import type { DegradedInfo } from "../ports.js";
import {
  CONTEXT_HISTORY_TIMEOUT_MS,
  DegradedSchema,
  HistorySnippetSchema,
  ScoredBulletSchema,
  toSnippet,
  type HistorySnippet,
} from "./context.js";
import { loadMergedPlaybook, requireNonEmpty, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const RecallInputSchema = lazySchema(() => z.object({
  query: z.string(),
  limit: z.number().optional(),
  /** Also search past sessions (default true). */
  history: z.boolean().optional(),
  days: z.number().optional(),
  workspace: z.string().optional(),
}));

export const RecallResultSchema = lazySchema(() => z.object({
  query: z.string(),
  /** Matching rules and anti-patterns together, best first (`isNegative`/`kind` tell them apart). */
  bullets: z.array(ScoredBulletSchema),
  historySnippets: z.array(HistorySnippetSchema),
  degraded: z.object({ cass: DegradedSchema.optional() }).optional(),
}));
export type RecallResult = z.output<typeof RecallResultSchema>;

export const DEFAULT_RECALL_LIMIT = 10;

/**
 * `cm recall "<query>"`: searches what the memory knows about something — playbook rules (ranked
 * like `context`, anti-patterns included in the same list) and past sessions.
 */
export const recallOperation = defineOperation({
  name: "memory_recall",
  command: "recall",
  description: "Search the playbook (and past sessions) for what is known about a topic.",
  input: RecallInputSchema,
  output: RecallResultSchema,
  async run(deps, input): Promise<RecallResult> {
    const query = requireNonEmpty("query", input.query, `Example: ${deps.cliName} recall "database migrations"`);
    const limit = requirePositiveInt("limit", input.limit, DEFAULT_RECALL_LIMIT);
    const days = requirePositiveInt("days", input.days, deps.config.sessionLookbackDays);
    const playbook = await loadMergedPlaybook(deps);
    await warmLexicalIndex(playbook.bullets, deps.lexicalCache, deps.logger);
    const ranked = rankBulletsForTask(playbook.bullets, query, {
      now: deps.clock.now(),
      config: deps.config,
      ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
      limit,
      minRelevance: Math.max(deps.config.minRelevanceScore, Number.MIN_VALUE),
    });

    let historySnippets: HistorySnippet[] = [];
    let degraded: DegradedInfo | undefined;
    const cassQuery = input.history === false ? "" : buildCassQuery(ranked.keywords);
    if (cassQuery !== "") {
      const sanitizer = compileSanitizer(deps.config.sanitization);
      const found = await deps.episodic.search(cassQuery, {
        limit,
        days,
        ...(input.workspace !== undefined ? { workspace: input.workspace } : {}),
        timeoutMs: CONTEXT_HISTORY_TIMEOUT_MS,
      });
      historySnippets = found.hits.slice(0, limit).map((hit) => toSnippet(hit, sanitizer.sanitize));
      degraded = found.degraded;
    }
    return { query, bullets: ranked.ranked, historySnippets, ...(degraded ? { degraded: { cass: degraded } } : {}) };
  },
});
