import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, SEED_BULLETS, assertBuilt, seedPlaybook, tempHome, testEnv } from "./helpers.js";

/**
 * A client that writes its requests and closes stdin at once (scripts, `echo … | cm-mcp`) must
 * still get every answer, and the writes it asked for must be complete: no lost rule, no lock left.
 */

let home: string;
let cleanup: () => void;
beforeAll(() => assertBuilt());
beforeEach(async () => {
  ({ home, cleanup } = tempHome());
  await seedPlaybook(home, [...SEED_BULLETS]);
});
afterEach(() => cleanup());

function lockDirs(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".lock.d"));
}

describe("cm-mcp at end of input", () => {
  it("answers the requests already received, completes their writes and exits 0", async () => {
    const child = spawn(process.execPath, [BIN], { cwd: home, env: testEnv(home) });
    let stdout = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "pipe", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      ...Array.from({ length: 5 }, (_, i) => ({
        jsonrpc: "2.0",
        id: 10 + i,
        method: "tools/call",
        params: { name: "memory_remember", arguments: { content: `Piped rule number ${i}: keep the release notes in sync with the changelog` } },
      })),
      { jsonrpc: "2.0", id: 20, method: "tools/call", params: { name: "cm_context", arguments: { task: "install dependencies with pnpm" } } },
    ];
    // Everything at once, then hang up.
    child.stdin.end(messages.map((m) => JSON.stringify(m)).join("\n") + "\n");
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(0);

    const answers = stdout.trim().split("\n").map((line) => JSON.parse(line) as { id: number; result?: { isError?: boolean } });
    const ids = answers.map((a) => a.id).sort((a, b) => a - b);
    expect(ids).toEqual([1, 10, 11, 12, 13, 14, 20]);
    for (const answer of answers) expect(answer.result?.isError ?? false).toBe(false);

    const playbook = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    for (let i = 0; i < 5; i++) expect(playbook).toContain(`Piped rule number ${i}`);
    expect(lockDirs(join(home, ".cass-memory"))).toEqual([]);
  });
});
