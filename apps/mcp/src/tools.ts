import {
  AppError,
  compactContext,
  contextOperation,
  ContextResultSchema,
  contextViewSchema,
  lookupContext,
  measureJson,
  historyOperation,
  markOperation,
  memorySearchOperation,
  outcomeOperation,
  redactDeep,
  redactFor,
  reflectOperation,
  rememberOperation,
  runOperation,
  toAppError,
  traumaAddOperation,
  traumaListOperation,
  type Operation,
  type OperationDeps,
} from "@cass-memory/core";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import type { ServerContext } from "./context.js";

/**
 * The MCP tools: each is a core operation plus declarative metadata (this table). One function,
 * `registerOperationTool`, turns a row into a tool; there is no per-tool code. A tool's structured
 * result is exactly the operation's output — the `data` of the matching `cm … --json` command.
 */

type AnyOperation = Operation<any, any>;
type Args = Record<string, unknown>;

export interface ToolSpec {
  operation: AnyOperation;
  /** Tool name; default: the operation's name. */
  name?: string;
  title: string;
  /** Default: the operation's description. */
  description?: string;
  annotations: Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">>;
  /** Argument name (as the original tool named it) → the operation's input field. */
  rename?: Record<string, string>;
  /** Deprecated argument → the field it stands for; used only when that field is not given. */
  aliases?: Record<string, string>;
  /** Operation input fields not offered to MCP clients (CLI-only plumbing). */
  omit?: readonly string[];
  /** Descriptions of arguments (by argument name), shown to clients in the input schema. */
  describe?: Record<string, string>;
  /** Input values used when the caller leaves a field out. */
  defaults?: (ctx: ServerContext) => Args;
  /** Runs under the cass admission controller: always, or when the predicate says so. */
  admission?: boolean | ((input: Args) => boolean);
  /** The operation needs the learning components (`deps.learning`). */
  learning?: boolean;
  /** Arguments offered to clients besides the operation's input fields (read by `run`, not passed as input). */
  extraArgs?: Record<string, z.ZodType>;
  /** Runs the tool instead of `runOperation`: gets the operation input and the caller's arguments. */
  run?: (deps: OperationDeps, input: Args, args: Args) => Promise<Record<string, unknown>>;
  /** Output schema advertised instead of the operation's (when `run` returns another shape). */
  output?: z.ZodObject;
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const ADDITIVE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;

/** Default `maxTokens` of `cm_context` (compact view): about 30 rules, well under clients' tool-output caps. */
export const CONTEXT_DEFAULT_MAX_TOKENS = 3000;
/** Default `maxTokens` of `cm_context` with `full: true` (a full rule record is ≈ 5 times a compact one). */
export const CONTEXT_FULL_DEFAULT_MAX_TOKENS = 6000;
/** The largest text any tool result may carry (bytes of its JSON); larger results are refused. */
export const MCP_MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * `cm_context`: the compact view by default, trimmed to its budget as the client receives it
 * (the JSON text); `full: true` gives the operation's own result (the `cm context --json` data).
 */
async function runContextTool(deps: OperationDeps, input: Args, args: Args): Promise<Record<string, unknown>> {
  const full = args.full === true;
  const withBudget = { ...input, maxTokens: input.maxTokens ?? (full ? CONTEXT_FULL_DEFAULT_MAX_TOKENS : CONTEXT_DEFAULT_MAX_TOKENS) };
  if (full) return lookupContext(deps, withBudget as never);
  const result = await lookupContext(deps, withBudget as never, { measure: (r) => measureJson(compactContext(r)) });
  return compactContext(result);
}
/** Default `maxSessions` of `memory_reflect` (the original MCP tool's). */
export const REFLECT_DEFAULT_MAX_SESSIONS = 20;

export const TOOL_SPECS: readonly ToolSpec[] = [
  {
    operation: contextOperation,
    title: "Get context for a task",
    annotations: READ_ONLY,
    aliases: { top: "limit" },
    omit: ["currentDir"],
    extraArgs: { full: z.boolean().optional() },
    run: runContextTool,
    output: contextViewSchema(ContextResultSchema),
    describe: {
      full: "Return full rule records (every field, feedback history, reasoning) instead of the compact view; default false.",
      task: "What you are about to do, in a sentence.",
      workspace: "Workspace path for workspace-scoped rules and history (default: the server's working directory).",
      limit: "Maximum number of rules (default: config maxBulletsInContext).",
      top: "Deprecated alias of limit.",
      history: "Maximum number of history snippets.",
      days: "History lookback in days.",
      maxTokens: `Fit the result's JSON text into about this many tokens (≈ 4 characters each), lowest ranked first (default ${CONTEXT_DEFAULT_MAX_TOKENS}; ${CONTEXT_FULL_DEFAULT_MAX_TOKENS} with full).`,
      noHistory: "Skip the session-history search.",
      logContext: "Record this lookup in the context log (used by outcome backfilling).",
      session: "Session id recorded in the context log.",
    },
    defaults: (ctx) => ({ workspace: ctx.cwd }),
    admission: true,
  },
  {
    operation: markOperation,
    title: "Record feedback on a rule",
    annotations: ADDITIVE,
    describe: {
      bulletId: "Id of the rule (b-…).",
      helpful: "The rule helped (exactly one of helpful/harmful).",
      harmful: "The rule was wrong or hurt (exactly one of helpful/harmful).",
      reason: "Why (for harmful: caused_bug, wasted_time, contradicted_requirements, wrong_context, outdated, other, or free text).",
      session: "Session the feedback comes from.",
    },
  },
  {
    operation: outcomeOperation,
    title: "Report a task outcome",
    annotations: ADDITIVE,
    rename: { sessionId: "session", outcome: "status", rulesUsed: "rules", notes: "text", durationSec: "duration" },
    describe: {
      sessionId: "Your session id.",
      outcome: "success | failure | mixed | partial",
      rulesUsed: "Ids of the rules you followed (list, or comma-separated).",
      notes: "Free-text notes; the sentiment is detected from them.",
      task: "The task the outcome is about.",
      durationSec: "Seconds the task took.",
      errors: "Errors met during the task.",
      retries: "Whether you had to retry.",
      sentiment: "positive | negative | neutral (default: detected from notes).",
    },
  },
  {
    operation: memorySearchOperation,
    title: "Search memory",
    annotations: READ_ONLY,
    admission: (input) => String(input.scope ?? "both").trim().toLowerCase() !== "playbook",
  },
  {
    operation: reflectOperation,
    title: "Learn from recent sessions",
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    describe: {
      days: "Sessions of the last n days.",
      maxSessions: `Sessions to process at most (default ${REFLECT_DEFAULT_MAX_SESSIONS}).`,
      dryRun: "Propose changes without applying them.",
      workspace: "Only sessions of this workspace (absolute path).",
      session: "Process this one session file (absolute path).",
      agent: "Only sessions of this agent.",
    },
    defaults: () => ({ maxSessions: REFLECT_DEFAULT_MAX_SESSIONS }),
    admission: true,
    learning: true,
  },
  {
    operation: rememberOperation,
    title: "Remember a rule",
    annotations: ADDITIVE,
    omit: ["batch"],
    describe: {
      content: "The rule, as an imperative sentence.",
      category: "Category (default general).",
      evidence: "Where the rule comes from: `<type>:<uri>[:<note>]` strings or {type, uri, note} objects.",
      verifyFile: "Verification: a file that must exist (relative to the workspace).",
      verifyRegex: "Verification: a regular expression the file must contain.",
      verifyAbsent: "Verification: the file (or regex) must be absent instead.",
      validFrom: "Start of validity: ISO date/time, YYYY-MM-DD or <n>d from now.",
      validTo: "End of validity: ISO date/time, YYYY-MM-DD or <n>d from now.",
      repo: "Add to the repository's .cass/playbook.yaml instead of the global playbook.",
    },
  },
  {
    operation: historyOperation,
    title: "History of a rule",
    annotations: READ_ONLY,
    describe: { bulletId: "Id of the rule (b-…)." },
  },
  {
    operation: traumaListOperation,
    title: "List traumas (dangerous commands)",
    annotations: READ_ONLY,
  },
  {
    operation: traumaAddOperation,
    title: "Register a trauma (dangerous command pattern)",
    annotations: ADDITIVE,
    describe: {
      pattern: "Case-insensitive regex of the dangerous command, e.g. 'git\\s+push\\s+.*--force'. Patterns that could backtrack catastrophically are refused.",
      severity: "CRITICAL (default) or FATAL.",
      scope: "global (default) or project (the repository's .cass/).",
      message: "What happened, shown when the pattern matches.",
    },
  },
];

export function toolName(spec: ToolSpec): string {
  return spec.name ?? spec.operation.name;
}

function objectShape(schema: z.ZodType, what: string): Record<string, z.ZodType> {
  if (!(schema instanceof z.ZodObject)) throw new Error(`${what}: the operation's input is not a zod object`);
  return schema.shape as Record<string, z.ZodType>;
}

/** The input schema clients see: the operation's fields, renamed, with aliases, without omitted ones. */
export function advertisedInputSchema(spec: ToolSpec): z.ZodObject {
  const name = toolName(spec);
  const shape = objectShape(spec.operation.input, name);
  const argOf = new Map(Object.entries(spec.rename ?? {}).map(([arg, field]) => [field, arg]));
  const out: Record<string, z.ZodType> = {};
  const put = (arg: string, schema: z.ZodType): void => {
    const text = spec.describe?.[arg];
    out[arg] = text !== undefined ? schema.describe(text) : schema;
  };
  for (const [field, schema] of Object.entries(shape)) {
    if (spec.omit?.includes(field)) continue;
    put(argOf.get(field) ?? field, schema);
  }
  for (const [alias, field] of Object.entries(spec.aliases ?? {})) {
    const target = shape[field];
    if (target === undefined) throw new Error(`${name}: alias ${alias} names unknown field ${field}`);
    put(alias, target);
  }
  for (const [arg, schema] of Object.entries(spec.extraArgs ?? {})) put(arg, schema);
  return z.object(out);
}

/** Maps a tool call's arguments onto the operation's input: renames, aliases, then defaults. */
export function operationInput(spec: ToolSpec, args: Args, ctx: ServerContext): Args {
  const input: Args = {};
  const aliases = spec.aliases ?? {};
  for (const [arg, value] of Object.entries(args)) {
    if (value === undefined || arg in aliases || (spec.extraArgs !== undefined && arg in spec.extraArgs)) continue;
    input[spec.rename?.[arg] ?? arg] = value;
  }
  for (const [alias, field] of Object.entries(aliases)) {
    if (args[alias] !== undefined && input[field] === undefined) input[field] = args[alias];
  }
  for (const [field, value] of Object.entries(spec.defaults?.(ctx) ?? {})) {
    if (input[field] === undefined) input[field] = value;
  }
  return input;
}

/** The body of an error result: `{error: {code, message, hint?, details?, retryable?}}`. */
export function errorPayload(error: unknown): { error: Record<string, unknown> } {
  const err = toAppError(error);
  return {
    error: {
      code: err.code,
      message: err.message,
      ...(err.hint !== undefined ? { hint: err.hint } : {}),
      ...(err.details !== undefined ? { details: err.details } : {}),
      ...(err.retryable !== undefined ? { retryable: err.retryable } : {}),
    },
  };
}

/**
 * The one place where a tool call's outcome becomes an MCP result. Success: the data as text and
 * as `structuredContent`. Failure: `isError` with the error payload as text only — the SDK's
 * client validates any `structuredContent` against the tool's output schema, even on errors.
 */
export async function callOperationTool(spec: ToolSpec, ctx: ServerContext, args: Args): Promise<CallToolResult> {
  try {
    const input = operationInput(spec, args, ctx);
    const deps = spec.learning ? { ...ctx.deps, learning: await ctx.runtime.learning() } : ctx.deps;
    const run = () => (spec.run !== undefined ? spec.run(deps, input, args) : runOperation(spec.operation, deps, input));
    const limited = typeof spec.admission === "function" ? spec.admission(input) : Boolean(spec.admission);
    // Every string of a result passes the secret detector before it leaves the server (issue 21).
    const redact = (text: string) => redactFor(ctx.deps.config, text);
    const data = redactDeep((await (limited ? ctx.admission.run(run) : run())) as Record<string, unknown>, redact);
    const text = JSON.stringify(data);
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > MCP_MAX_RESPONSE_BYTES) {
      throw new AppError("INVALID_INPUT", `The result of ${toolName(spec)} is ${Math.ceil(bytes / 1024)} KiB, over the ${MCP_MAX_RESPONSE_BYTES / 1024} KiB limit of a tool result; nothing was returned.`, {
        hint: "Ask for less: a lower limit or maxTokens, a narrower query or a shorter time range.",
        details: { limitBytes: MCP_MAX_RESPONSE_BYTES, bytes },
      });
    }
    return { content: [{ type: "text", text }], structuredContent: data };
  } catch (error) {
    const payload = redactDeep(errorPayload(error), (text: string) => redactFor(ctx.deps.config, text));
    if (payload.error.code === "INTERNAL_ERROR") {
      ctx.deps.logger.error(`${toolName(spec)}: ${String(payload.error.message)}`);
      if (error instanceof Error && error.stack) ctx.deps.logger.debug(error.stack);
    }
    return { isError: true, content: [{ type: "text", text: JSON.stringify(payload) }] };
  }
}

interface CompiledTool {
  spec: ToolSpec;
  name: string;
  input: z.ZodObject;
  output: z.ZodObject | undefined;
}

let compiled: CompiledTool[] | undefined;

/** The specs with their schemas built once per process (servers are created per HTTP request). */
function compiledTools(): CompiledTool[] {
  compiled ??= TOOL_SPECS.map((spec) => ({
    spec,
    name: toolName(spec),
    input: advertisedInputSchema(spec),
    output: spec.output ?? (spec.operation.output instanceof z.ZodObject ? spec.operation.output : undefined),
  }));
  return compiled;
}

/** Registers every tool of the table on `server`. */
export function registerOperationTools(server: McpServer, ctx: ServerContext): void {
  for (const tool of compiledTools()) {
    server.registerTool(
      tool.name,
      {
        title: tool.spec.title,
        description: tool.spec.description ?? tool.spec.operation.description,
        inputSchema: tool.input,
        ...(tool.output !== undefined ? { outputSchema: tool.output } : {}),
        annotations: { title: tool.spec.title, ...tool.spec.annotations },
      },
      (args: Args) => callOperationTool(tool.spec, ctx, args),
    );
  }
}

export function toolNames(): string[] {
  return TOOL_SPECS.map(toolName);
}
