import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectInMemory, failure, ok, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
let client: Client;

beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  ({ client } = await connectInMemory(home));
});

afterEach(async () => {
  await client.close();
  cleanup();
});

describe("MCP trauma tools", () => {
  it("advertises trauma_list as read-only and trauma_add as additive", async () => {
    const { tools } = await client.listTools();
    const list = tools.find((t) => t.name === "trauma_list");
    const add = tools.find((t) => t.name === "trauma_add");
    expect(list?.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(add?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(Object.keys((add?.inputSchema as { properties: object }).properties)).toEqual(["pattern", "severity", "scope", "message"]);
  });

  it("adds a trauma to the global registry and lists it", async () => {
    expect(ok(await client.callTool({ name: "trauma_list", arguments: {} }))).toEqual({ traumas: [], healedCount: 0 });
    const added = ok(await client.callTool({ name: "trauma_add", arguments: { pattern: "DROP\\s+TABLE\\s+users", message: "dropped users", severity: "FATAL" } }));
    expect(added.entry).toMatchObject({ severity: "FATAL", pattern: "DROP\\s+TABLE\\s+users", scope: "global", status: "active", trigger_event: { session_path: "manual-entry", human_message: "dropped users" } });
    const file = readFileSync(join(home, ".cass-memory", "traumas.jsonl"), "utf8");
    expect(JSON.parse(file.trim())).toEqual(added.entry);
    expect(ok(await client.callTool({ name: "trauma_list", arguments: {} }))).toEqual({ traumas: [added.entry], healedCount: 0 });
  });

  it("refuses a catastrophic pattern with INVALID_INPUT and a hint", async () => {
    const error = failure(await client.callTool({ name: "trauma_add", arguments: { pattern: "(\\w+\\s?)+$" } }));
    expect(error.code).toBe("INVALID_INPUT");
    expect(error.hint).toBeTruthy();
    expect(error.details).toMatchObject({ reason: "catastrophic" });
    expect(ok(await client.callTool({ name: "trauma_list", arguments: {} })).traumas).toEqual([]);
  });
});
