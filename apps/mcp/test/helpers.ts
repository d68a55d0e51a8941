import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createTestBullet } from "@cass-memory/core/testing";
import type { Bullet } from "@cass-memory/core";
import { createRuntime, type Runtime } from "@cass-memory/runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { createServerContext, type ServerContext } from "../src/context.js";
import { createCmMcpServer } from "../src/server.js";
import { expect } from "vitest";

export const MCP_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const BIN = join(MCP_DIR, "dist", "cm-mcp.js");

export function assertBuilt(): void {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run 'pnpm build' first.`);
}

/** Variables of the user's own setup that must not leak into a test. */
const ISOLATED = [
  "CASS_MEMORY_HOME",
  "XDG_DATA_HOME",
  "CASS_MEMORY_VERBOSE",
  "CASS_CONTEXT_LOG",
  "CASS_PATH",
  "CM_REFLECTOR_STUBS",
  "OPENAI_API_KEY",
  "OPENAI_BASE_URL",
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_BASE_URL",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "OLLAMA_BASE_URL",
  "OLLAMA_HOST",
  "MCP_HTTP_TOKEN",
  "MCP_HTTP_UNSAFE_NO_TOKEN",
  "MCP_HTTP_HOST",
  "MCP_HTTP_PORT",
  "MCP_CASS_MAX_CONCURRENCY",
  "MCP_CASS_MAX_QUEUE",
  "MCP_CASS_QUEUE_TIMEOUT_MS",
];

/** A process environment with HOME = `home`, no LLM and no session history. */
export function testEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" };
  for (const key of ISOLATED) delete env[key];
  Object.assign(env, extra);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

/** A temporary HOME, outside any git repository (it is also used as the server's cwd). */
export function tempHome(): { home: string; cleanup: () => void } {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "cm-mcp-")));
  return { home, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export async function testRuntime(home: string, extra: Record<string, string | undefined> = {}): Promise<Runtime> {
  return createRuntime({ env: testEnv(home, extra), cwd: home, stderr: () => undefined });
}

/** Writes bullets into the global playbook of `home` (`~/.cass-memory/playbook.yaml`). */
export async function seedPlaybook(home: string, bullets: Array<Partial<Bullet> & Record<string, unknown>>): Promise<Bullet[]> {
  const rt = await testRuntime(home);
  const full = bullets.map((b, i) => createTestBullet({ id: `b-seed-${i}`, ...b }));
  await rt.deps.store.mutatePlaybook("global", (playbook) => {
    playbook.bullets.push(...full);
  });
  return full;
}

export const SEED_BULLETS = [
  { id: "b-pnpm", content: "Use pnpm for installs, never npm", category: "tooling" },
  { id: "b-migrate", content: "Run prisma migrate deploy before starting the API", category: "database" },
  { id: "b-anti", content: "Do not commit generated prisma clients", category: "database", kind: "anti_pattern", isNegative: true, type: "anti-pattern" },
] as const;

export const TOOL_NAMES = ["cm_context", "cm_feedback", "cm_outcome", "memory_search", "memory_reflect", "memory_remember", "memory_history", "trauma_list", "trauma_add"];
export const RESOURCE_URIS = ["cm://playbook", "cm://diary", "cm://outcomes", "cm://stats", "memory://stats", "cm://serve", "memory://serve"];

type CallResult = Awaited<ReturnType<Client["callTool"]>>;

/** The structured content of a successful tool call (fails the test on an error result). */
export function ok(result: CallResult): any {
  if (result.isError) throw new Error(`tool call failed: ${JSON.stringify(result.content)}`);
  const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
  expect(JSON.parse(text)).toEqual(result.structuredContent);
  return result.structuredContent;
}

/** The `{error}` payload of a failed tool call. */
export function failure(result: CallResult): { code: string; message: string; hint?: string; details?: any; retryable?: boolean } {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const text = (result.content as Array<{ type: string; text: string }>)[0]!.text;
  return JSON.parse(text).error;
}

/**
 * Calls every tool and reads every resource through `client`, checking each result's shape.
 * Expects the SEED_BULLETS playbook.
 */
export async function exerciseEverything(client: Client): Promise<void> {
  const info = client.getServerVersion();
  expect(info?.name).toBe("cass-memory");

  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name)).toEqual(TOOL_NAMES);
  const byName = new Map(tools.map((t) => [t.name, t]));
  expect(byName.get("cm_context")?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
  expect(byName.get("memory_reflect")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  expect(byName.get("cm_feedback")?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
  expect(byName.get("cm_context")?.outputSchema).toBeDefined();
  expect(Object.keys(byName.get("cm_outcome")!.inputSchema.properties ?? {})).toEqual(
    expect.arrayContaining(["sessionId", "outcome", "rulesUsed", "notes", "task", "durationSec"]),
  );

  const context = ok(await client.callTool({ name: "cm_context", arguments: { task: "install packages with pnpm" } }));
  expect(context.relevantBullets.map((b: { id: string }) => b.id)).toContain("b-pnpm");

  const feedback = ok(await client.callTool({ name: "cm_feedback", arguments: { bulletId: "b-pnpm", helpful: true, reason: "worked" } }));
  expect(feedback).toMatchObject({ bulletId: "b-pnpm", type: "helpful" });

  const outcome = ok(
    await client.callTool({ name: "cm_outcome", arguments: { sessionId: "s-1", outcome: "success", rulesUsed: ["b-pnpm"], notes: "went well", durationSec: 60 } }),
  );
  expect(outcome).toMatchObject({ applied: 1, missing: [], type: "helpful" });

  const search = ok(await client.callTool({ name: "memory_search", arguments: { query: "prisma", scope: "Both" } }));
  expect(search.playbook.map((b: { id: string }) => b.id)).toEqual(["b-migrate", "b-anti"]);
  expect(search.cass).toEqual([]);

  const reflect = ok(await client.callTool({ name: "memory_reflect", arguments: { dryRun: true, days: 3 } }));
  expect(reflect).toMatchObject({ dryRun: true, sessionsProcessed: 0, deltasApplied: 0 });

  const remembered = ok(await client.callTool({ name: "memory_remember", arguments: { content: "Pin the node version in .nvmrc", category: "tooling" } }));
  expect(remembered.bullet.content).toBe("Pin the node version in .nvmrc");

  const history = ok(await client.callTool({ name: "memory_history", arguments: { bulletId: remembered.bullet.id } }));
  expect(history.events.map((e: { operation: string }) => e.operation)).toEqual(["add"]);
  expect(history.events[0].actor).toBe("mcp");

  const missing = failure(await client.callTool({ name: "cm_feedback", arguments: { bulletId: "b-none", helpful: true } }));
  expect(missing.code).toBe("BULLET_NOT_FOUND");

  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri)).toEqual(RESOURCE_URIS);
  const read = async (uri: string) => {
    const result = await client.readResource({ uri });
    expect(result.contents[0]).toMatchObject({ uri, mimeType: "application/json" });
    return JSON.parse((result.contents[0] as { text: string }).text);
  };
  const playbook = await read("cm://playbook");
  expect(playbook.bullets.map((b: { id: string }) => b.id)).toEqual(expect.arrayContaining(["b-pnpm", "b-migrate", "b-anti", remembered.bullet.id]));
  expect(await read("cm://diary")).toEqual([]);
  const outcomes = await read("cm://outcomes");
  expect(outcomes).toHaveLength(1);
  expect(outcomes[0]).toMatchObject({ sessionId: "s-1", outcome: "success", rulesUsed: ["b-pnpm"], notes: "went well" });
  const stats = await read("cm://stats");
  expect(stats.total).toBe(4);
  expect(typeof stats.generatedAt).toBe("string");
  expect((await read("memory://stats")).total).toBe(4);
  const serve = await read("cm://serve");
  expect(serve).toMatchObject({ enabled: true, limit: 2, maxQueue: 32, queueTimeoutMs: 20000 });
  expect(serve.totalAdmitted).toBeGreaterThanOrEqual(2);
  expect(await read("memory://serve")).toMatchObject({ enabled: true });
}

/** A server over a fresh context for `home`, and an SDK client connected to it in memory. */
export async function connectInMemory(home: string, extraEnv: Record<string, string> = {}): Promise<{ client: Client; ctx: ServerContext }> {
  const ctx = await createServerContext({ env: testEnv(home, extraEnv), cwd: home, runtimeOptions: { stderr: () => undefined } });
  const server = createCmMcpServer(ctx);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "test", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, ctx };
}
