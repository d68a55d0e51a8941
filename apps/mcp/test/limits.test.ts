import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MCP_MAX_RESPONSE_BYTES } from "../src/tools.js";
import { SEED_BULLETS, connectInMemory, failure, ok, seedPlaybook, tempHome } from "./helpers.js";

/** Size caps of the MCP server: every tool result and resource, and the inputs the operations take. */

let home: string;
let cleanup: () => void;
let client: Client;

async function connect(): Promise<void> {
  ({ client } = await connectInMemory(home));
}

beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});

afterEach(async () => {
  await client?.close();
  cleanup();
});

/** 100 rules of ~3.5 KB each (written to the file directly: `remember` would refuse them). */
async function seedLarge(): Promise<void> {
  await seedPlaybook(
    home,
    Array.from({ length: 100 }, (_, i) => ({ id: `b-big-${i}`, content: `Use pnpm workspaces for package ${i}: ${"details ".repeat(440)}`, category: "tooling" })),
  );
}

describe("MCP response caps", () => {
  it("refuses a tool result over 256 KiB with INVALID_INPUT saying how to ask for less", async () => {
    await seedLarge();
    await connect();
    const big = await client.callTool({ name: "memory_search", arguments: { query: "pnpm", scope: "playbook", limit: 100 } });
    expect(big.isError).toBe(true);
    expect(big.structuredContent).toBeUndefined();
    const err = failure(big);
    expect(err.code).toBe("INVALID_INPUT");
    expect(err.message).toMatch(/^The result of memory_search is \d+ KiB, over the 256 KiB limit of a tool result/);
    expect(err.hint).toContain("lower limit");
    expect(err.details).toMatchObject({ limitBytes: MCP_MAX_RESPONSE_BYTES });
    expect(err.details.bytes).toBeGreaterThan(MCP_MAX_RESPONSE_BYTES);
    // A smaller request answers.
    const small = ok(await client.callTool({ name: "memory_search", arguments: { query: "pnpm", scope: "playbook", limit: 10 } }));
    expect(small.playbook).toHaveLength(10);
    // cm_context stays within its token budget however large the rules are.
    const context = await client.callTool({ name: "cm_context", arguments: { task: "use pnpm workspaces", limit: 100, maxTokens: 1_000_000 } });
    expect(context.isError).toBe(true);
    expect(failure(context).code).toBe("INVALID_INPUT");
    const fits = ok(await client.callTool({ name: "cm_context", arguments: { task: "use pnpm workspaces", limit: 100 } }));
    expect(fits.relevantBullets.length).toBeGreaterThan(0);
    expect(fits.trimmed.relevantBullets).toBeGreaterThan(0);
  });

  it("cuts the playbook resource to the rules that fit, with a `truncated` marker", async () => {
    await seedLarge();
    await connect();
    const read = await client.readResource({ uri: "cm://playbook" });
    const text = (read.contents[0] as { text: string }).text;
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MCP_MAX_RESPONSE_BYTES);
    const playbook = JSON.parse(text);
    expect(playbook.truncated).toMatchObject({ total: 103, limitBytes: MCP_MAX_RESPONSE_BYTES });
    expect(playbook.bullets).toHaveLength(playbook.truncated.returned);
    expect(playbook.truncated.returned).toBeGreaterThan(50);
    expect(playbook.truncated.returned).toBeLessThan(103);
    expect(playbook.truncated.hint).toContain("memory_search");
  });

  it("leaves a small playbook resource whole", async () => {
    await connect();
    const read = await client.readResource({ uri: "cm://playbook" });
    const playbook = JSON.parse((read.contents[0] as { text: string }).text);
    expect(playbook.truncated).toBeUndefined();
    expect(playbook.bullets).toHaveLength(SEED_BULLETS.length);
  });
});

describe("MCP input caps (enforced by the operations)", () => {
  it("rejects an oversized task, rule, category and feedback reason with INVALID_INPUT naming the limit", async () => {
    await connect();
    const task = failure(await client.callTool({ name: "cm_context", arguments: { task: "deploy ".repeat(1300) } }));
    expect(task).toMatchObject({ code: "INVALID_INPUT", message: "task is 8.9 KiB, over the limit of 8 KiB.", details: { field: "task", limit: 8192, configKey: "inputLimits.taskBytes" } });
    expect(task.hint).toContain("inputLimits.taskBytes");

    const rule = failure(await client.callTool({ name: "memory_remember", arguments: { content: "Always ".repeat(700) } }));
    expect(rule).toMatchObject({ code: "INVALID_INPUT", details: { field: "content", limit: 4096 } });
    const category = failure(await client.callTool({ name: "memory_remember", arguments: { content: "Run tests", category: "c".repeat(300) } }));
    expect(category).toMatchObject({ code: "INVALID_INPUT", details: { field: "category", limit: 128 } });
    const reason = failure(await client.callTool({ name: "cm_feedback", arguments: { bulletId: "b-pnpm", helpful: true, reason: "r".repeat(4000) } }));
    expect(reason).toMatchObject({ code: "INVALID_INPUT", details: { field: "reason" } });
    const query = failure(await client.callTool({ name: "memory_search", arguments: { query: "q".repeat(4000), scope: "playbook" } }));
    expect(query).toMatchObject({ code: "INVALID_INPUT", details: { field: "query" } });

    // Nothing was written.
    const search = ok(await client.callTool({ name: "memory_search", arguments: { query: "Run tests", scope: "playbook" } }));
    expect(search.playbook).toEqual([]);
  });
});
