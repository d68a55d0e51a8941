import {
  compileSanitizer,
  redactDeep,
  redactFor,
  loadMergedPlaybook,
  outcomeLogLayer,
  readOutcomeLog,
  runOperation,
  statsOperation,
} from "@cass-memory/core";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { ServerContext } from "./context.js";
import { MCP_MAX_RESPONSE_BYTES } from "./tools.js";

/** The MCP resources (reference §2.4): read-only JSON views of the memory. */

export interface ResourceSpec {
  uri: string;
  name: string;
  title: string;
  description: string;
  read(ctx: ServerContext): Promise<unknown>;
}

/** Diary entries and outcome records a resource returns at most. */
export const RESOURCE_RECENT_LIMIT = 50;

async function recentOutcomes(ctx: ServerContext): Promise<unknown> {
  const layer = await outcomeLogLayer(ctx.deps);
  const records = (await readOutcomeLog(ctx.deps, layer)).slice(-RESOURCE_RECENT_LIMIT);
  // Records are sanitised when written; a log written before a pattern was added is cleaned again.
  const { sanitize } = compileSanitizer(ctx.deps.config.sanitization);
  return records.map((r) => ({
    ...r,
    ...(r.notes !== undefined ? { notes: sanitize(r.notes) } : {}),
    ...(r.task !== undefined ? { task: sanitize(r.task) } : {}),
  }));
}

async function stats(ctx: ServerContext): Promise<unknown> {
  const data = await runOperation(statsOperation, ctx.deps, {});
  return { ...data, generatedAt: ctx.deps.clock.now().toISOString() };
}

const serveMetrics = async (ctx: ServerContext): Promise<unknown> => ctx.admission.metrics();

export const RESOURCE_SPECS: readonly ResourceSpec[] = [
  {
    uri: "cm://playbook",
    name: "playbook",
    title: "Playbook",
    description: "The merged playbook (global and repository layers, blocked rules filtered out).",
    read: (ctx) => loadMergedPlaybook(ctx.deps),
  },
  {
    uri: "cm://diary",
    name: "diary",
    title: "Diary",
    description: `The ${RESOURCE_RECENT_LIMIT} most recent diary entries (session summaries written by reflect).`,
    read: (ctx) => ctx.deps.store.listDiaries({ limit: RESOURCE_RECENT_LIMIT }),
  },
  {
    uri: "cm://outcomes",
    name: "outcomes",
    title: "Outcomes",
    description: `The last ${RESOURCE_RECENT_LIMIT} recorded task outcomes (notes and task sanitised).`,
    read: recentOutcomes,
  },
  {
    uri: "cm://stats",
    name: "stats",
    title: "Playbook statistics",
    description: "Playbook health: counts by scope/state/kind, score distribution, top and at-risk rules (as `cm stats --json`, plus generatedAt).",
    read: stats,
  },
  {
    uri: "memory://stats",
    name: "memory-stats",
    title: "Playbook statistics",
    description: "Alias of cm://stats.",
    read: stats,
  },
  {
    uri: "cm://serve",
    name: "serve",
    title: "Server admission metrics",
    description: "Admission control of history-searching calls: in flight, queued, limits, rejections.",
    read: serveMetrics,
  },
  {
    uri: "memory://serve",
    name: "memory-serve",
    title: "Server admission metrics",
    description: "Alias of cm://serve.",
    read: serveMetrics,
  },
];

export function registerResources(server: McpServer, ctx: ServerContext): void {
  for (const spec of RESOURCE_SPECS) {
    server.registerResource(
      spec.name,
      spec.uri,
      { title: spec.title, description: spec.description, mimeType: "application/json" },
      async (uri) => ({
        contents: [{ uri: uri.href, mimeType: "application/json", text: cappedText(spec.uri, redactDeep(await spec.read(ctx), (text: string) => redactFor(ctx.deps.config, text))) }],
      }),
    );
  }
}

const size = (text: string) => Buffer.byteLength(text, "utf8");

/**
 * A resource's JSON text within the response limit. A playbook over it keeps its first rules that
 * fit and says so in `truncated` (the tools read single rules); anything else over it is an error.
 */
export function cappedText(uri: string, value: unknown, limit = MCP_MAX_RESPONSE_BYTES): string {
  const text = JSON.stringify(value);
  if (size(text) <= limit) return text;
  const bullets = (value as { bullets?: unknown } | null)?.bullets;
  if (Array.isArray(bullets)) {
    const total = bullets.length;
    const cut = (k: number) =>
      JSON.stringify({
        ...(value as object),
        bullets: bullets.slice(0, k),
        truncated: { total, returned: k, limitBytes: limit, hint: "Use cm_context or memory_search for the rules of a task; `cm playbook export` gives the whole playbook." },
      });
    let lo = 0;
    let hi = total;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (size(cut(mid)) <= limit) lo = mid;
      else hi = mid - 1;
    }
    const result = cut(lo);
    if (size(result) <= limit) return result;
  }
  throw new McpError(ErrorCode.InvalidRequest, `${uri} is ${Math.ceil(size(text) / 1024)} KiB, over the ${limit / 1024} KiB limit of a response.`);
}

export function resourceUris(): string[] {
  return RESOURCE_SPECS.map((r) => r.uri);
}
