import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { startHttpServer } from "../src/http.js";
import { SEED_BULLETS, seedPlaybook, tempHome, testEnv } from "./helpers.js";

/** Closing the HTTP server (SIGTERM/SIGINT) lets requests already running finish and answers them. */

let home: string;
let cleanup: () => void;
beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});
afterEach(() => cleanup());

describe("HTTP server shutdown", () => {
  it("answers and completes writes that are in flight when close() is called, and refuses new connections", async () => {
    const handle = await startHttpServer({ host: "127.0.0.1", port: 0, env: testEnv(home), cwd: home, runtimeOptions: { stderr: () => undefined }, log: () => undefined });
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const remember = (i: number) =>
      fetch(handle.url, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "memory_remember", arguments: { content: `Rule sent before shutdown number ${i}` } } }),
      });
    // Shut the server down once the three requests have reached it, while they run.
    let seen = 0;
    const arrived = new Promise<void>((resolve) => handle.server.on("request", () => ++seen === 3 && resolve()));
    const inFlight = [remember(1), remember(2), remember(3)];
    await arrived;
    const closing = handle.close();
    const responses = await Promise.all(inFlight);
    for (const response of responses) {
      expect(response.status).toBe(200);
      expect(((await response.json()) as { result: { isError?: boolean } }).result.isError ?? false).toBe(false);
    }
    await closing;
    const playbook = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    for (const i of [1, 2, 3]) expect(playbook).toContain(`Rule sent before shutdown number ${i}`);
    await expect(remember(4)).rejects.toThrow();
  });
});
