import { request as httpRequest } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createServerContext } from "../src/context.js";
import { BAD_REQUEST_BODY, PAYLOAD_TOO_LARGE_BODY, UNAUTHORIZED_BODY, resolveHttpOptions, startHttpServer, type HttpServerHandle } from "../src/http.js";
import { RESOURCE_URIS, SEED_BULLETS, TOOL_NAMES, exerciseEverything, ok, seedPlaybook, tempHome, testEnv } from "./helpers.js";

let home: string;
let cleanup: () => void;
const handles: HttpServerHandle[] = [];
const clients: Client[] = [];

beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  for (const h of handles.splice(0)) await h.close();
  cleanup();
});

async function start(options: { token?: string; host?: string; env?: Record<string, string> } = {}): Promise<{ handle: HttpServerHandle; logs: string[] }> {
  const logs: string[] = [];
  const handle = await startHttpServer({
    host: options.host ?? "127.0.0.1",
    port: 0,
    env: testEnv(home, options.env),
    cwd: home,
    runtimeOptions: { stderr: () => undefined },
    log: (line) => logs.push(line),
    ...(options.token !== undefined ? { token: options.token } : {}),
  });
  handles.push(handle);
  return { handle, logs };
}

async function sdkClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "http-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request with full control over the headers (fetch does not allow setting Host). */
function raw(url: string, options: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: options.method ?? "POST", headers: options.headers ?? {} }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(options.body);
  });
}

const PING = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
const JSON_CT = { "content-type": "application/json" };

describe("cm-mcp over Streamable HTTP", () => {
  it("serves every tool and resource to the SDK client", async () => {
    const { handle, logs } = await start();
    expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    expect(logs[0]).toContain(`MCP HTTP server listening on ${handle.url}`);
    expect(logs.join("\n")).toContain("Auth: off");
    expect(logs.join("\n")).toContain(`Tools: ${TOOL_NAMES.join(", ")}`);
    const client = await sdkClient(handle.url);
    await exerciseEverything(client);
  });

  it("accepts any path", async () => {
    const { handle } = await start();
    const client = await sdkClient(`${handle.url}mcp`);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOL_NAMES.length);
  });

  it("works for raw JSON-RPC POSTs to / as the original's clients send them", async () => {
    const { handle } = await start();
    const post = async (message: unknown) => {
      const res = await fetch(handle.url, { method: "POST", headers: JSON_CT, body: JSON.stringify(message) });
      const text = await res.text();
      return { status: res.status, type: res.headers.get("content-type"), json: text === "" ? null : JSON.parse(text) };
    };
    const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } });
    expect(init.status).toBe(200);
    expect(init.type).toContain("application/json");
    expect(init.json).toMatchObject({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", serverInfo: { name: "cass-memory" } } });
    expect(init.json.result.capabilities).toMatchObject({ tools: {}, resources: {} });
    const bare = await post({ jsonrpc: "2.0", id: "a", method: "initialize" });
    expect(bare.json).toMatchObject({ id: "a", result: { serverInfo: { name: "cass-memory" } } });

    expect(await post({ jsonrpc: "2.0", method: "notifications/initialized" })).toEqual({ status: 202, type: null, json: null });
    expect((await post({ jsonrpc: "2.0", method: "initialized" })).status).toBe(202);

    const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" });
    expect(list.json.result.tools.map((t: { name: string }) => t.name)).toEqual(TOOL_NAMES);

    const call = await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "cm_context", arguments: { task: "install with pnpm" } } });
    expect(call.status).toBe(200);
    const wrapped = call.json.result;
    const data = JSON.parse(wrapped.content[0].text);
    expect(wrapped.content[0].type).toBe("text");
    expect(data.relevantBullets.map((b: { id: string }) => b.id)).toContain("b-pnpm");
    expect(wrapped.structuredContent).toEqual(data);

    const failed = await post({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "cm_feedback", arguments: { bulletId: "b-none", helpful: true } } });
    expect(failed.status).toBe(200);
    expect(failed.json.result.isError).toBe(true);
    expect(JSON.parse(failed.json.result.content[0].text).error.code).toBe("BULLET_NOT_FOUND");

    const list2 = await post({ jsonrpc: "2.0", id: 5, method: "resources/list" });
    expect(list2.json.result.resources.map((r: { uri: string }) => r.uri)).toEqual(RESOURCE_URIS);
    const read = await post({ jsonrpc: "2.0", id: 6, method: "resources/read", params: { uri: "cm://stats" } });
    expect(JSON.parse(read.json.result.contents[0].text)).toMatchObject({ total: 3 });

    const unsupported = await post({ jsonrpc: "2.0", id: 7, method: "no/such" });
    expect(unsupported.json).toMatchObject({ id: 7, error: { code: -32601 } });
    expect(await post({ jsonrpc: "2.0", id: 8, method: "ping" })).toMatchObject({ status: 200, json: { id: 8, result: {} } });
  });

  it("answers 405 to other methods, 400 to unparseable JSON and 413 to bodies over 5 MB", async () => {
    const { handle } = await start();
    const get = await raw(handle.url, { method: "GET" });
    expect(get.status).toBe(405);
    expect(get.body).toBe("");
    expect((await raw(handle.url, { method: "DELETE" })).status).toBe(405);
    const bad = await raw(handle.url, { headers: JSON_CT, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual(JSON.parse(BAD_REQUEST_BODY));
    expect(JSON.parse(bad.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "cm_context", arguments: { task: "x".repeat(5 * 1024 * 1024 + 10) } } });
    const tooLarge = await raw(handle.url, { headers: JSON_CT, body: big });
    expect(tooLarge.status).toBe(413);
    expect(JSON.parse(tooLarge.body)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "Payload too large" } });
    expect(tooLarge.body).toBe(PAYLOAD_TOO_LARGE_BODY);
    // The server is still fine afterwards.
    expect((await raw(handle.url, { headers: JSON_CT, body: PING })).status).toBe(200);
  });

  it("requires the token when one is set: 401 without or with a wrong one, Bearer or X-MCP-Token accepted", async () => {
    const { handle, logs } = await start({ env: { MCP_HTTP_TOKEN: "  s3cret-token  " } });
    expect(handle.auth).toBe(true);
    expect(logs.join("\n")).toContain("Auth: on");
    const none = await raw(handle.url, { headers: JSON_CT, body: PING });
    expect(none.status).toBe(401);
    expect(none.body).toBe(UNAUTHORIZED_BODY);
    expect(JSON.parse(none.body)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Unauthorized" } });
    expect((await raw(handle.url, { headers: { ...JSON_CT, authorization: "Bearer wrong" }, body: PING })).status).toBe(401);
    expect((await raw(handle.url, { headers: { ...JSON_CT, "x-mcp-token": "s3cret-tokenX" }, body: PING })).status).toBe(401);
    expect((await raw(handle.url, { headers: { ...JSON_CT, authorization: "Basic s3cret-token" }, body: PING })).status).toBe(401);
    expect((await raw(handle.url, { headers: { ...JSON_CT, authorization: "bEaReR    s3cret-token  " }, body: PING })).status).toBe(200);
    expect((await raw(handle.url, { headers: { ...JSON_CT, "x-mcp-token": "s3cret-token" }, body: PING })).status).toBe(200);

    await expect(sdkClient(handle.url)).rejects.toThrow();
    const bearer = await sdkClient(handle.url, { Authorization: "Bearer s3cret-token" });
    expect(ok(await bearer.callTool({ name: "memory_search", arguments: { query: "pnpm", scope: "playbook" } })).playbook).toHaveLength(1);
    const header = await sdkClient(handle.url, { "X-MCP-Token": "s3cret-token" });
    expect((await header.listTools()).tools).toHaveLength(TOOL_NAMES.length);
  });

  it("refuses a non-loopback bind without a token, unless explicitly overridden", async () => {
    await expect(startHttpServer({ host: "0.0.0.0", port: 0, env: testEnv(home), cwd: home, log: () => undefined })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: "Refusing to bind MCP HTTP server to '0.0.0.0' without auth. Set MCP_HTTP_TOKEN or use --host 127.0.0.1.",
    });
    expect(() => resolveHttpOptions({ host: "192.168.1.20", port: 8765, env: {} })).toThrow(/Refusing to bind/);
    for (const loopback of ["localhost", " LOCALHOST ", "127.0.0.2", "::1"]) {
      expect(resolveHttpOptions({ host: loopback, env: {} }).token).toBeUndefined();
    }
    const unsafe = resolveHttpOptions({ host: "192.168.1.20", env: { MCP_HTTP_UNSAFE_NO_TOKEN: "1" } });
    expect(unsafe.warnings.join("\n")).toContain("WITHOUT auth");
    const withToken = resolveHttpOptions({ host: "0.0.0.0", env: { MCP_HTTP_TOKEN: "t" } });
    expect(withToken).toMatchObject({ host: "0.0.0.0", port: 8765, token: "t" });
    expect(withToken.warnings.join("\n")).toContain("every network interface");
    expect(resolveHttpOptions({ host: "0.0.0.0", env: { MCP_HTTP_TOKEN: "t", NODE_ENV: "development" } }).warnings).toEqual([]);
    expect(() => resolveHttpOptions({ host: " ", env: {} })).toThrow("host must be a non-empty string.");
    expect(() => resolveHttpOptions({ port: 70000, env: {} })).toThrow(/port must be an integer between 1 and 65535/);
    expect(() => resolveHttpOptions({ env: { MCP_HTTP_PORT: "http" } })).toThrow(/MCP_HTTP_PORT must be an integer/);
    expect(resolveHttpOptions({ env: { MCP_HTTP_PORT: "9000", MCP_HTTP_HOST: "localhost" } })).toMatchObject({ host: "localhost", port: 9000 });
  });

  it("rejects foreign Host and Origin headers (DNS rebinding) with 403", async () => {
    const { handle } = await start();
    const port = handle.port;
    const evilHost = await raw(handle.url, { headers: { ...JSON_CT, host: `evil.example:${port}` }, body: PING });
    expect(evilHost.status).toBe(403);
    expect(JSON.parse(evilHost.body).error.message).toContain("Host");
    const evilOrigin = await raw(handle.url, { headers: { ...JSON_CT, origin: "https://evil.example" }, body: PING });
    expect(evilOrigin.status).toBe(403);
    expect((await raw(handle.url, { headers: { ...JSON_CT, origin: "null" }, body: PING })).status).toBe(403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) {
      expect((await raw(handle.url, { headers: { ...JSON_CT, host }, body: PING })).status).toBe(200);
    }
    expect((await raw(handle.url, { headers: { ...JSON_CT, origin: `http://localhost:${port}` }, body: PING })).status).toBe(200);
    expect((await raw(handle.url, { headers: { ...JSON_CT, origin: "http://127.0.0.1:3000" }, body: PING })).status).toBe(200);
  });

  it("skips the Host/Origin checks on a non-loopback bind with a token (clients use names it cannot know)", async () => {
    const { handle } = await start({ host: "0.0.0.0", token: "tok" });
    const url = `http://127.0.0.1:${handle.port}/`;
    const headers = { ...JSON_CT, authorization: "Bearer tok", host: "memory.internal.example", origin: "https://agents.example" };
    expect((await raw(url, { headers, body: PING })).status).toBe(200);
    expect((await raw(url, { headers: { ...headers, authorization: "Bearer nope" }, body: PING })).status).toBe(401);
  });

  it("answers 10 concurrent cm_context calls (queued by admission control)", async () => {
    const { handle } = await start();
    const client = await sdkClient(handle.url);
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.callTool({ name: "cm_context", arguments: { task: `install with pnpm, attempt ${i}` } })),
    );
    for (const [i, result] of results.entries()) {
      const data = ok(result);
      expect(data.task).toBe(`install with pnpm, attempt ${i}`);
      expect(data.relevantBullets.map((b: { id: string }) => b.id)).toContain("b-pnpm");
    }
    const metrics = handle.context.admission.metrics();
    expect(metrics.totalAdmitted).toBe(10);
    expect(metrics.maxObservedInFlight).toBeLessThanOrEqual(2);
    expect(metrics.totalRejectedQueueFull + metrics.totalRejectedTimeout).toBe(0);
  });

  it("shares one runtime across requests and servers of a context", async () => {
    const context = await createServerContext({ env: testEnv(home), cwd: home, runtimeOptions: { stderr: () => undefined } });
    const a = await startHttpServer({ port: 0, context, log: () => undefined });
    const b = await startHttpServer({ port: 0, context, log: () => undefined });
    handles.push(a, b);
    expect(a.context.runtime).toBe(b.context.runtime);
    const clientA = await sdkClient(a.url);
    const clientB = await sdkClient(b.url);
    ok(await clientA.callTool({ name: "cm_feedback", arguments: { bulletId: "b-pnpm", helpful: true } }));
    ok(await clientB.callTool({ name: "cm_feedback", arguments: { bulletId: "b-pnpm", helpful: true } }));
    const history = ok(await clientA.callTool({ name: "memory_history", arguments: { bulletId: "b-pnpm" } }));
    expect(history.events.filter((e: { operation: string }) => e.operation === "feedback")).toHaveLength(2);
  });
});
