import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prng } from "../../../packages/runtime/test/durability/prng.mjs";
import { startHttpServer, type HttpServerHandle } from "../src/http.js";
import { TOOL_NAMES, SEED_BULLETS, seedPlaybook, tempHome, testEnv } from "./helpers.js";

/**
 * Fuzzing the HTTP endpoint with random JSON-RPC: unknown methods, wrong argument types, huge and
 * deeply nested values, broken JSON. The server never answers 500, every answer is JSON-RPC (or an
 * empty 202 for notifications), and it keeps serving. Fixed seed; counts in docs/benchmarks.md.
 */

export const MCP_FUZZ_SEED = 7_2026;
export const MCP_FUZZ_RUNS = 300;

let home: string;
let cleanup: () => void;
let handle: HttpServerHandle;
beforeAll(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
  handle = await startHttpServer({ host: "127.0.0.1", port: 0, env: testEnv(home, { CASS_MEMORY_LLM: "none" }), cwd: home, runtimeOptions: { stderr: () => undefined }, log: () => undefined });
});
afterAll(async () => {
  await handle.close();
  cleanup();
});

const METHODS = ["initialize", "ping", "tools/list", "tools/call", "resources/list", "resources/read", "prompts/list", "nope/never", "", "notifications/initialized"];
const URIS = ["cm://playbook", "cm://stats", "cm://diary", "cm://nope", "file:///etc/passwd", ""];

describe("fuzzed JSON-RPC over HTTP", () => {
  it(`${MCP_FUZZ_RUNS} random requests: never a 500, always JSON-RPC, still serving`, async () => {
    const random = prng(MCP_FUZZ_SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const nested = (depth: number): unknown => (depth === 0 ? "x" : random() < 0.5 ? [nested(depth - 1)] : { k: nested(depth - 1) });
    const value = (): unknown =>
      pick<() => unknown>([
        () => "",
        () => "install dependencies with pnpm",
        () => "x".repeat(Math.floor(random() * 20_000)),
        () => -1,
        () => 0,
        () => 3.5,
        () => 1e308,
        () => null,
        () => true,
        () => [],
        () => ["b-pnpm", 42],
        () => ({}),
        () => nested(1 + Math.floor(random() * 200)),
        () => "\u0000\u001b]52;c;evil\u0007",
      ])();
    const statuses = new Map<number, number>();
    const problems: string[] = [];
    for (let run = 0; run < MCP_FUZZ_RUNS; run++) {
      const method = pick(METHODS);
      const params: Record<string, unknown> = {};
      if (method === "tools/call") {
        params.name = random() < 0.9 ? pick(TOOL_NAMES) : value();
        const args: Record<string, unknown> = {};
        for (const key of ["task", "content", "bulletId", "helpful", "harmful", "query", "limit", "days", "maxTokens", "full", "pattern", "scope", "category", "reason", "sessionId", "outcome", "rulesUsed", "id"]) {
          if (random() < 0.3) args[key] = value();
        }
        params.arguments = random() < 0.9 ? args : value();
      } else if (method === "resources/read") params.uri = random() < 0.8 ? pick(URIS) : value();
      else if (method === "initialize") params.protocolVersion = value();
      const message: Record<string, unknown> = { jsonrpc: random() < 0.95 ? "2.0" : value(), method, params };
      if (!method.startsWith("notifications/")) message.id = random() < 0.9 ? run : value();
      let body = JSON.stringify(message);
      if (random() < 0.05) body = body.slice(0, Math.floor(body.length / 2)); // broken JSON
      if (random() < 0.03) body = `[${body},${body}]`; // a batch
      const response = await fetch(handle.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body });
      const text = await response.text();
      statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      const shown = `${method} ${body.slice(0, 120)}`;
      if (response.status >= 500) {
        problems.push(`${shown} → ${response.status} ${text.slice(0, 200)}`);
        continue;
      }
      if (response.status === 202 && text === "") continue;
      try {
        const parsed = JSON.parse(text) as unknown;
        const answers = Array.isArray(parsed) ? parsed : [parsed];
        for (const a of answers as Array<Record<string, unknown>>) {
          if (a.jsonrpc !== "2.0" || (!("result" in a) && !("error" in a))) problems.push(`${shown} → not JSON-RPC: ${text.slice(0, 200)}`);
        }
      } catch {
        problems.push(`${shown} → ${response.status} not JSON: ${text.slice(0, 200)}`);
      }
    }
    if (process.env.CM_FUZZ_REPORT) writeFileSync(process.env.CM_FUZZ_REPORT, `${JSON.stringify({ seed: MCP_FUZZ_SEED, runs: MCP_FUZZ_RUNS, statuses: Object.fromEntries(statuses), problems: problems.length })}\n`);
    expect(problems).toEqual([]);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(MCP_FUZZ_RUNS / 2);
    // Broken and too-deep bodies were sent and answered 400.
    expect(statuses.get(400) ?? 0).toBeGreaterThan(5);
    // Still serving.
    const ping = await fetch(handle.url, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify({ jsonrpc: "2.0", id: "last", method: "ping" }) });
    expect(ping.status).toBe(200);
  }, 600_000);
});
