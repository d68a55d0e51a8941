import { compactContext, contextOperation, memorySearchOperation, runOperation } from "@cass-memory/core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ServerContext } from "../src/context.js";
import { CONTEXT_DEFAULT_MAX_TOKENS, CONTEXT_FULL_DEFAULT_MAX_TOKENS, TOOL_SPECS, advertisedInputSchema, operationInput } from "../src/tools.js";
import { SEED_BULLETS, connectInMemory, exerciseEverything, failure, ok, seedPlaybook, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
let ctx: ServerContext;
let client: Client;

async function connect(extraEnv: Record<string, string> = {}): Promise<void> {
  ({ client, ctx } = await connectInMemory(home, extraEnv));
}

beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});

afterEach(async () => {
  await client?.close();
  cleanup();
});

describe("MCP server (in-memory transport)", () => {
  it("initializes, lists, calls every tool and reads every resource", async () => {
    await connect();
    expect(client.getInstructions()).toContain("cm_context");
    await exerciseEverything(client);
  });

  it("gives cm_context the compact view of the operation's result, and the operation's own result with full: true", async () => {
    await connect();
    const task = "run the prisma migration and install with pnpm";
    const viaTool = ok(await client.callTool({ name: "cm_context", arguments: { task, limit: 5 } }));
    const direct = await runOperation(contextOperation, ctx.runtime.deps, { task, limit: 5, workspace: home, maxTokens: CONTEXT_FULL_DEFAULT_MAX_TOKENS });
    expect(viaTool).toEqual(JSON.parse(JSON.stringify(compactContext(direct))));
    expect(viaTool.relevantBullets.length + viaTool.antiPatterns.length).toBeGreaterThan(1);
    expect(viaTool.relevantBullets[0].feedbackEvents).toBeUndefined();
    const full = ok(await client.callTool({ name: "cm_context", arguments: { task, limit: 5, full: true } }));
    expect(full).toEqual(JSON.parse(JSON.stringify(direct)));
    expect(full.relevantBullets[0].feedbackEvents).toEqual([]);

    const search = ok(await client.callTool({ name: "memory_search", arguments: { query: "pnpm", scope: "playbook" } }));
    expect(search).toEqual(await runOperation(memorySearchOperation, ctx.runtime.deps, { query: "pnpm", scope: "playbook" }));
  });

  it("accepts the deprecated `top` as limit, and limit wins over it", async () => {
    await connect();
    const task = "run the prisma migration and install with pnpm";
    const viaTop = ok(await client.callTool({ name: "cm_context", arguments: { task, top: 1 } }));
    expect(viaTop.relevantBullets.length + viaTop.antiPatterns.length).toBe(1);
    const both = ok(await client.callTool({ name: "cm_context", arguments: { task, top: 1, limit: 3 } }));
    expect(both.relevantBullets.length + both.antiPatterns.length).toBe(3);
  });

  it("trims cm_context to the default token budget of its view unless the caller sets one", async () => {
    const long = "deploy the service with the release checklist and verify the health endpoint afterwards ".repeat(6);
    await seedPlaybook(home, Array.from({ length: 120 }, (_, i) => ({ id: `b-long-${i}`, content: `${long} (${i})`, category: "deploy" })));
    await connect();
    const trimmed = ok(await client.callTool({ name: "cm_context", arguments: { task: "deploy the service", limit: 100 } }));
    expect(trimmed.trimmed).toMatchObject({ maxTokens: CONTEXT_DEFAULT_MAX_TOKENS, estimatedTokens: Math.ceil(JSON.stringify(trimmed).length / 4) });
    expect(JSON.stringify(trimmed).length / 4).toBeLessThanOrEqual(CONTEXT_DEFAULT_MAX_TOKENS);
    expect(trimmed.relevantBullets.length + trimmed.trimmed.relevantBullets).toBe(100);
    const full = ok(await client.callTool({ name: "cm_context", arguments: { task: "deploy the service", limit: 100, full: true } }));
    expect(full.trimmed).toMatchObject({ maxTokens: CONTEXT_FULL_DEFAULT_MAX_TOKENS });
    expect(JSON.stringify(full).length / 4).toBeLessThanOrEqual(CONTEXT_FULL_DEFAULT_MAX_TOKENS);
    expect(full.relevantBullets[0].createdAt).toBeDefined();
    const larger = ok(await client.callTool({ name: "cm_context", arguments: { task: "deploy the service", limit: 100, maxTokens: 100_000 } }));
    expect(larger.trimmed).toBeUndefined();
    expect(larger.relevantBullets.length).toBeGreaterThan(trimmed.relevantBullets.length);
  });

  it("maps the original cm_outcome arguments onto the outcome operation", async () => {
    await connect();
    const harmful = ok(
      await client.callTool({ name: "cm_outcome", arguments: { sessionId: "s-9", outcome: "failure", rulesUsed: ["b-migrate", "b-unknown"], task: "deploy" } }),
    );
    expect(harmful).toMatchObject({ applied: 1, missing: ["b-unknown"], type: "harmful" });
    const { records } = await ctx.runtime.deps.store.readLog("global", "outcomes");
    expect(records).toEqual([expect.objectContaining({ sessionId: "s-9", outcome: "failure", task: "deploy" })]);
    const bad = failure(await client.callTool({ name: "cm_outcome", arguments: { sessionId: "s-9", outcome: "great", rulesUsed: ["b-pnpm"] } }));
    expect(bad).toMatchObject({ code: "INVALID_INPUT" });
    expect(bad.message).toContain("status must be one of");
  });

  it("returns operation errors as isError results carrying {error: {code, message, hint?, details?}}", async () => {
    await connect();
    const notFound = failure(await client.callTool({ name: "memory_history", arguments: { bulletId: "b-none" } }));
    expect(notFound).toMatchObject({ code: "BULLET_NOT_FOUND", details: { bulletId: "b-none" } });
    expect(notFound.hint).toContain("playbook list");
    const both = failure(await client.callTool({ name: "cm_feedback", arguments: { bulletId: "b-pnpm", helpful: true, harmful: true } }));
    expect(both.code).toBe("MISSING_REQUIRED");
    const scope = failure(await client.callTool({ name: "memory_search", arguments: { query: "x", scope: "web" } }));
    expect(scope).toMatchObject({ code: "INVALID_INPUT", message: "scope must be one of: playbook, cass, both." });
    const limit = failure(await client.callTool({ name: "memory_search", arguments: { query: "x", limit: 500 } }));
    expect(limit.message).toBe("limit must be <= 100.");
    // Argument types are checked by the SDK against the advertised schema first.
    const wrongType = await client.callTool({ name: "cm_context", arguments: { task: 42 } });
    expect(wrongType.isError).toBe(true);
    const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
    expect(unknown.isError).toBe(true);
  });

  it("keeps CLI-only plumbing out of the tools' input schemas", async () => {
    await connect();
    const { tools } = await client.listTools();
    const props = (name: string) => Object.keys(tools.find((t) => t.name === name)!.inputSchema.properties ?? {});
    expect(props("cm_context")).not.toContain("currentDir");
    expect(props("cm_context")).toContain("top");
    expect(props("memory_remember")).not.toContain("batch");
    expect(props("cm_outcome")).not.toContain("status");
    // A field that is not offered is not passed through either.
    const spec = TOOL_SPECS.find((s) => s.operation.name === "memory_remember")!;
    expect(Object.keys(advertisedInputSchema(spec).shape)).not.toContain("batch");
    expect(operationInput(TOOL_SPECS[0]!, { task: "t", top: 2, full: true }, ctx)).toEqual({ task: "t", limit: 2, workspace: home });
    expect(props("cm_context")).toContain("full");
  });

  it("reports history-search busy errors as retryable tool errors", async () => {
    // One slot, one queue place: with both taken, a history-searching call is refused at once.
    await connect({ MCP_CASS_MAX_CONCURRENCY: "1", MCP_CASS_MAX_QUEUE: "1", MCP_CASS_QUEUE_TIMEOUT_MS: "60000" });
    let release!: () => void;
    const blocker = ctx.admission.run(() => new Promise<void>((resolve) => (release = resolve)));
    const queued = ctx.admission.run(async () => "queued ran");
    const busy = failure(await client.callTool({ name: "cm_context", arguments: { task: "anything" } }));
    expect(busy).toMatchObject({ code: "CASS_SEARCH_FAILED", retryable: true, details: { retryable: true, reason: "queue_full", limit: 1, maxQueue: 1 } });
    expect(busy.message).toBe("cass search server busy: admission queue is full; retry shortly");
    // The playbook-only search is not admission-limited.
    ok(await client.callTool({ name: "memory_search", arguments: { query: "pnpm", scope: "playbook" } }));
    release();
    await blocker;
    await expect(queued).resolves.toBe("queued ran");
    const metrics = JSON.parse(((await client.readResource({ uri: "cm://serve" })).contents[0] as { text: string }).text);
    expect(metrics).toMatchObject({ totalRejectedQueueFull: 1, totalAdmitted: 2, limit: 1, maxQueue: 1, inFlight: 0, queued: 0 });
  });
});
