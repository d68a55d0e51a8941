import { spawn, spawnSync } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, SEED_BULLETS, assertBuilt, exerciseEverything, seedPlaybook, tempHome, testEnv } from "./helpers.js";

let home: string;
let cleanup: () => void;

beforeAll(() => assertBuilt());
beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});
afterEach(() => cleanup());

describe("cm-mcp over stdio (built binary)", () => {
  it("serves every tool and resource, with nothing but protocol messages on stdout", async () => {
    // Verbose diagnostics on: they must all go to stderr.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN],
      cwd: home,
      env: testEnv(home, { CASS_MEMORY_VERBOSE: "1" }),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    const protocolErrors: Error[] = [];
    client.onerror = (error) => protocolErrors.push(error);
    await client.connect(transport);
    try {
      await exerciseEverything(client);
    } finally {
      await client.close();
    }
    expect(protocolErrors).toEqual([]);
    expect(stderr).toContain("cass-memory MCP server");
    expect(stderr).toContain("on stdio");
  });

  it("exits 0 when the client closes stdin", async () => {
    const child = spawn(process.execPath, [BIN], { cwd: home, env: testEnv(home) });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    // Wait for the server to be ready, then hang up.
    await new Promise<void>((resolve) => child.stderr.once("data", () => resolve()));
    child.stdin.end();
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);
    expect(stdout).toBe("");
    expect(stderr).toContain("on stdio");
  });

  it("prints help and version on stdout, and rejects unknown options with exit code 2", () => {
    const run = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { cwd: home, env: testEnv(home), encoding: "utf8", input: "" });
    const help = run(["--help"]);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: cm-mcp");
    expect(help.stdout).toContain("--http");
    const version = run(["--version"]);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    const unknown = run(["--bogus"]);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--bogus'");
    const badPort = run(["--http", "--port", "70000"]);
    expect(badPort.status).toBe(2);
    expect(badPort.stderr).toContain("--port must be an integer between 1 and 65535");
  });

  it("refuses a non-loopback HTTP bind without a token (exit 2)", () => {
    const r = spawnSync(process.execPath, [BIN, "--http", "--host", "0.0.0.0", "--port", "1"], { cwd: home, env: testEnv(home), encoding: "utf8", input: "" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("Refusing to bind MCP HTTP server to '0.0.0.0' without auth. Set MCP_HTTP_TOKEN or use --host 127.0.0.1.");
    expect(r.stdout).toBe("");
  });
});
