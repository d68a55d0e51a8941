import * as z from "zod";
import { requireWithinLimit } from "../domain/input-limits.js";
import { compileSanitizer } from "../domain/sanitize.js";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { DegradedInfo } from "../ports.js";
import { isActiveBullet } from "../schemas/playbook.js";
import { CONTEXT_HISTORY_TIMEOUT_MS, DegradedSchema, toSnippet } from "./context.js";
import { loadMergedPlaybook, requireNonEmpty, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `memory_search` (the original MCP server's tool, reference §2.3): a plain lookup in the playbook
 * (substring match over content, category and scope) and/or in past sessions. Unlike `recall`, the
 * playbook branch does not rank: it answers "which rules mention X", in playbook order.
 */

export const MEMORY_SEARCH_SCOPES = ["playbook", "cass", "both"] as const;
export type MemorySearchScope = (typeof MEMORY_SEARCH_SCOPES)[number];
export const MEMORY_SEARCH_DEFAULT_LIMIT = 10;
export const MEMORY_SEARCH_MAX_LIMIT = 100;

export const MemorySearchInputSchema = lazySchema(() => z.object({
  query: z.string().describe("Text to look for (case-insensitive)."),
  scope: z.string().optional().describe("Where to search: playbook | cass | both (default both; case-insensitive)."),
  limit: z.number().optional().describe(`Maximum results per scope, 1..${MEMORY_SEARCH_MAX_LIMIT} (default ${MEMORY_SEARCH_DEFAULT_LIMIT}).`),
  days: z.number().optional().describe("Only sessions of the last n days (history search)."),
  agent: z.string().optional().describe("Only sessions of this agent (history search)."),
  workspace: z.string().optional().describe("Only sessions of this workspace (history search)."),
}));
export type MemorySearchInput = z.input<typeof MemorySearchInputSchema>;

export const MemorySearchPlaybookHitSchema = lazySchema(() => z.object({
  id: z.string(),
  content: z.string(),
  category: z.string(),
  scope: z.string(),
  maturity: z.string(),
}));

export const MemorySearchCassHitSchema = lazySchema(() => z.object({
  path: z.string(),
  agent: z.string(),
  score: z.number().optional(),
  /** Sanitised, on one line, at most 300 characters. */
  snippet: z.string(),
  timestamp: z.string().optional(),
}));

export const MemorySearchResultSchema = lazySchema(() => z.object({
  /** Present when the scope includes the playbook. */
  playbook: z.array(MemorySearchPlaybookHitSchema).optional(),
  /** Present when the scope includes past sessions. */
  cass: z.array(MemorySearchCassHitSchema).optional(),
  /** Beyond the original: why the history search returned nothing (source missing, timeout…). */
  degraded: z.object({ cass: DegradedSchema.optional() }).optional(),
}));
export type MemorySearchResult = z.output<typeof MemorySearchResultSchema>;

function parseScope(raw: string | undefined): MemorySearchScope {
  if (raw === undefined) return "both";
  const value = raw.trim().toLowerCase();
  const match = MEMORY_SEARCH_SCOPES.find((s) => s === value);
  if (match === undefined) {
    throw new AppError("INVALID_INPUT", `scope must be one of: ${MEMORY_SEARCH_SCOPES.join(", ")}.`, {
      details: { field: "scope", received: raw, allowed: [...MEMORY_SEARCH_SCOPES] },
    });
  }
  return match;
}

export const memorySearchOperation = defineOperation({
  name: "memory_search",
  command: "search",
  description:
    "Search the playbook (rules whose content, category or scope contain the query) and/or past agent sessions. scope: playbook | cass | both.",
  input: MemorySearchInputSchema,
  output: MemorySearchResultSchema,
  async run(deps, input): Promise<MemorySearchResult> {
    const query = requireNonEmpty("query", input.query);
    requireWithinLimit("query", query, "queryBytes", deps.config, "Search for a few words.");
    const scope = parseScope(input.scope);
    const limit = requirePositiveInt("limit", input.limit, MEMORY_SEARCH_DEFAULT_LIMIT);
    if (limit > MEMORY_SEARCH_MAX_LIMIT) {
      throw new AppError("INVALID_INPUT", `limit must be <= ${MEMORY_SEARCH_MAX_LIMIT}.`, {
        details: { field: "limit", received: input.limit, max: MEMORY_SEARCH_MAX_LIMIT },
      });
    }
    const days = input.days === undefined ? undefined : requirePositiveInt("days", input.days, 0);
    const agent = input.agent === undefined ? undefined : requireNonEmpty("agent", input.agent);
    const workspace = input.workspace === undefined ? undefined : requireNonEmpty("workspace", input.workspace);
    const needle = query.toLowerCase();
    const result: MemorySearchResult = {};

    if (scope !== "cass") {
      const playbook = await loadMergedPlaybook(deps);
      const hits: NonNullable<MemorySearchResult["playbook"]> = [];
      for (const b of playbook.bullets) {
        if (hits.length >= limit) break;
        if (!isActiveBullet(b)) continue;
        if (!`${b.content} ${b.category} ${b.scope}`.toLowerCase().includes(needle)) continue;
        hits.push({ id: b.id, content: b.content, category: b.category, scope: b.scope, maturity: b.maturity });
      }
      result.playbook = hits;
    }

    if (scope !== "playbook") {
      const sanitizer = compileSanitizer(deps.config.sanitization);
      const found = await deps.episodic.search(query, {
        limit,
        ...(days !== undefined ? { days } : {}),
        ...(agent !== undefined ? { agents: [agent] } : {}),
        ...(workspace !== undefined ? { workspace } : {}),
        timeoutMs: CONTEXT_HISTORY_TIMEOUT_MS,
      });
      result.cass = found.hits.slice(0, limit).map((hit) => {
        const s = toSnippet(hit, sanitizer.sanitize);
        return {
          path: s.source_path,
          agent: s.agent,
          ...(typeof hit.score === "number" ? { score: hit.score } : {}),
          snippet: s.snippet,
          ...(s.timestamp !== undefined ? { timestamp: s.timestamp } : {}),
        };
      });
      const degraded: DegradedInfo | undefined = found.degraded;
      if (degraded) result.degraded = { cass: degraded };
    }
    return result;
  },
});
