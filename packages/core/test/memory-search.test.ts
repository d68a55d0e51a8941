import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { operations } from "../src/operations/index.js";
import { memorySearchOperation } from "../src/operations/memory-search.js";
import type { HistoryHit } from "../src/ports.js";
import { createFakeEpisodicSource, createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const GH_TOKEN = ["g", "h", "p", "_"].join("") + "a".repeat(36);

function hit(overrides: Partial<HistoryHit> = {}): HistoryHit {
  return {
    source_path: "/sessions/a.jsonl",
    line_number: 3,
    agent: "claude",
    snippet: "ran the prisma migration",
    score: 0.9,
    created_at: "2026-01-01T10:00:00.000Z",
    origin: { kind: "local" },
    ...overrides,
  };
}

async function setup(hits: HistoryHit[] = []) {
  const store = createMemoryStore({ repo: false, now: () => "2026-01-01T00:00:00.000Z" });
  await store.mutatePlaybook("global", (p) => {
    p.bullets.push(
      createTestBullet({ id: "b-1", content: "Run prisma migrate before tests", category: "database" }),
      createTestBullet({ id: "b-2", content: "Prefer pnpm", category: "tooling" }),
      createTestBullet({ id: "b-3", content: "Old prisma advice", category: "database", maturity: "deprecated", deprecated: true }),
      createTestBullet({ id: "b-4", content: "Keep commits small", category: "git", scope: "workspace", workspace: "/w" }),
    );
  });
  const episodic = createFakeEpisodicSource({ hits });
  return { deps: createTestDeps(store, { episodic }), episodic };
}

describe("memory_search", () => {
  it("is registered", () => {
    expect(operations).toContain(memorySearchOperation);
  });

  it("matches active rules by content, category or scope (substring, case-insensitive) and searches history", async () => {
    const { deps } = await setup([hit()]);
    const result = await runOperation(memorySearchOperation, deps, { query: "PRISMA" });
    expect(result.playbook).toEqual([
      { id: "b-1", content: "Run prisma migrate before tests", category: "database", scope: "global", maturity: "candidate" },
    ]);
    expect(result.cass).toEqual([
      { path: "/sessions/a.jsonl", agent: "claude", score: 0.9, snippet: "ran the prisma migration", timestamp: "2026-01-01T10:00:00.000Z" },
    ]);
    const byCategory = await runOperation(memorySearchOperation, deps, { query: "tool", scope: "playbook" });
    expect(byCategory.playbook?.map((b) => b.id)).toEqual(["b-2"]);
    const byScope = await runOperation(memorySearchOperation, deps, { query: "workspace", scope: "playbook" });
    expect(byScope.playbook?.map((b) => b.id)).toEqual(["b-4"]);
  });

  it("returns only the keys of the requested scope (case-insensitive) and honours limit", async () => {
    const { deps, episodic } = await setup([hit()]);
    const playbookOnly = await runOperation(memorySearchOperation, deps, { query: "e", scope: "PlayBook", limit: 2 });
    expect(Object.keys(playbookOnly)).toEqual(["playbook"]);
    expect(playbookOnly.playbook).toHaveLength(2);
    expect(episodic.calls).toHaveLength(0);

    const cassOnly = await runOperation(memorySearchOperation, deps, { query: "prisma", scope: "cass", days: 3, agent: "claude", workspace: "/w" });
    expect(Object.keys(cassOnly)).toEqual(["cass"]);
    expect(episodic.calls).toEqual([{ query: "prisma", limit: 10, days: 3, workspace: "/w" }]);
  });

  it("sanitises history snippets and puts them on one line", async () => {
    const { deps } = await setup([hit({ snippet: `prisma\nuses ${GH_TOKEN}`, score: undefined, created_at: null })]);
    const result = await runOperation(memorySearchOperation, deps, { query: "prisma", scope: "cass" });
    expect(result.cass).toEqual([{ path: "/sessions/a.jsonl", agent: "claude", snippet: "prisma uses [GITHUB_PAT]" }]);
  });

  it("reports an unavailable history source as degraded", async () => {
    const store = createMemoryStore({ repo: false });
    const degraded = { available: false as const, reason: "NOT_FOUND" as const, message: "cass not found" };
    const deps = createTestDeps(store, { episodic: createFakeEpisodicSource({ degraded }) });
    const result = await runOperation(memorySearchOperation, deps, { query: "x" });
    expect(result).toEqual({ playbook: [], cass: [], degraded: { cass: degraded } });
  });

  it("validates its input", async () => {
    const { deps } = await setup();
    await expectAppError(runOperation(memorySearchOperation, deps, { query: "  " }), "INVALID_INPUT");
    const scope = await expectAppError(runOperation(memorySearchOperation, deps, { query: "x", scope: "web" }), "INVALID_INPUT");
    expect(scope.message).toBe("scope must be one of: playbook, cass, both.");
    const high = await expectAppError(runOperation(memorySearchOperation, deps, { query: "x", limit: 101 }), "INVALID_INPUT");
    expect(high.message).toBe("limit must be <= 100.");
    await expectAppError(runOperation(memorySearchOperation, deps, { query: "x", limit: 0 }), "INVALID_INPUT");
    await expectAppError(runOperation(memorySearchOperation, deps, { query: "x", days: 1.5 }), "INVALID_INPUT");
    await expectAppError(runOperation(memorySearchOperation, deps, { query: "x", agent: "" }), "INVALID_INPUT");
  });
});
