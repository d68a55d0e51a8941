import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, CLI_DIR, assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
let server: ChildProcess | null = null;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(async () => {
  if (server !== null && server.exitCode === null) {
    const exited = new Promise((resolve) => server!.once("exit", resolve));
    server.kill("SIGTERM");
    await exited;
  }
  server = null;
  cleanup();
});

const baseEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MCP_") && !k.startsWith("CASS_")) env[k] = v;
  return { ...env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none", ...extra };
};

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts `cm serve` and resolves once it listens; stderr is collected. */
async function serve(args: string[], env: Record<string, string> = {}): Promise<{ url: string; stderr: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, "serve", "--port", String(port), ...args], { cwd: home, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  server = child;
  let stderr = "";
  let stdout = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes("listening on")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`cm serve exited with ${code}: ${stderr}`)));
  });
  expect(stdout).toBe("");
  return { url: `http://127.0.0.1:${port}/`, stderr: () => stderr };
}

function seed(): string {
  expect(cm(["init", "--json"], { home }).code).toBe(0);
  const add = cm(["playbook", "add", "Wait for Postgres with pg_isready before running migrations in CI", "--category", "ci", "--json"], { home });
  expect(add.code, add.stderr).toBe(0);
  return add.json().data.bullet?.id ?? add.json().data.id;
}

describe("cm serve", () => {
  it("serves MCP over HTTP: the SDK client gets the same data as cm context --json, and raw JSON-RPC POSTs work", async () => {
    seed();
    const { url } = await serve([]);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toEqual(expect.arrayContaining(["cm_context", "cm_feedback", "cm_outcome", "memory_search", "memory_reflect", "memory_remember", "memory_history"]));
    const task = "postgres migrations fail in CI";
    // The tool's default is the compact view (`cm context --compact --json`); `full: true` is `--json`.
    const viaMcp = await client.callTool({ name: "cm_context", arguments: { task, maxTokens: 100000 } });
    expect(viaMcp.isError).toBeFalsy();
    const env = { CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" };
    const viaCli = cm(["context", task, "--json", "--compact", "--max-tokens", "100000"], { home, env }).json().data;
    expect(viaMcp.structuredContent).toEqual(viaCli);
    expect((viaMcp.structuredContent as { relevantBullets: unknown[] }).relevantBullets).toHaveLength(1);
    const fullViaMcp = await client.callTool({ name: "cm_context", arguments: { task, maxTokens: 100000, full: true } });
    expect(fullViaMcp.structuredContent).toEqual(cm(["context", task, "--json", "--max-tokens", "100000"], { home, env }).json().data);
    await client.close();

    // The original's clients: plain POSTs of JSON-RPC to "/".
    const post = (body: unknown) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} });
    expect(init.status).toBe(200);
    expect(((await init.json()) as any).result.serverInfo.name).toBe("cass-memory");
    const list = (await (await post({ jsonrpc: "2.0", id: 2, method: "tools/list" })).json()) as any;
    expect(list.result.tools.length).toBeGreaterThanOrEqual(7);
    const stats = (await (await post({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "cm://stats" } })).json()) as any;
    expect(JSON.parse(stats.result.contents[0].text).total).toBe(1);
  });

  it("requires the token when MCP_HTTP_TOKEN is set", async () => {
    const { url } = await serve([], { MCP_HTTP_TOKEN: "s3cret-token" });
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
    const headers = { "content-type": "application/json" };
    const anonymous = await fetch(url, { method: "POST", headers, body });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "Unauthorized" } });
    expect((await fetch(url, { method: "POST", headers: { ...headers, authorization: "Bearer wrong" }, body })).status).toBe(401);
    expect((await fetch(url, { method: "POST", headers: { ...headers, authorization: "Bearer s3cret-token" }, body })).status).toBe(200);
  });

  it("refuses a non-loopback bind without a token, and bad flags, with exit 2", () => {
    const open = cm(["serve", "--host", "0.0.0.0", "--port", "18799"], { home, env: { CASS_MEMORY_LLM: "none" } });
    expect(open.code).toBe(2);
    expect(open.stderr).toMatch(/Refusing to bind MCP HTTP server to '0.0.0.0' without auth/);
    expect(cm(["serve", "--port", "70000"], { home }).code).toBe(2);
    expect(cm(["serve", "--stdio", "--port", "9000"], { home }).code).toBe(2);
  });

  it("the cass-memory package's own cm-mcp command is the same stdio server", async () => {
    seed();
    const pkg = JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8")) as { bin: Record<string, string> };
    const launcher = join(CLI_DIR, pkg.bin["cm-mcp"]!);
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [launcher], cwd: home, env: baseEnv(), stderr: "pipe" }));
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("cm_context");
    const stats = await client.readResource({ uri: "cm://stats" });
    expect(JSON.parse((stats.contents[0] as { text: string }).text).total).toBe(1);
    await client.close();
  });

  it("serves MCP over stdio with --stdio", async () => {
    seed();
    const client = new Client({ name: "test", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", "--stdio"], cwd: home, env: baseEnv(), stderr: "pipe" }));
    const result = await client.callTool({ name: "memory_search", arguments: { query: "pg_isready", scope: "playbook" } });
    expect(result.isError).toBeFalsy();
    expect((result.structuredContent as { playbook: Array<{ content: string }> }).playbook[0]!.content).toMatch(/pg_isready/);
    await client.close();
  });
});
