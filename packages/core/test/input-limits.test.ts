import { describe, expect, it } from "vitest";
import { DEFAULT_INPUT_LIMITS, inputLimitsOf, utf8Bytes } from "../src/domain/input-limits.js";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import { markOperation } from "../src/operations/mark.js";
import { memorySearchOperation } from "../src/operations/memory-search.js";
import { playbookAddOperation, rememberOperation } from "../src/operations/playbook-add.js";
import { defaultConfig } from "../src/schemas/config.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";

function setup(inputLimits?: Record<string, number>) {
  const store = createMemoryStore({ repo: false, now: () => "2026-01-01T00:00:00.000Z" });
  const config = { ...defaultConfig(), ...(inputLimits ? { inputLimits } : {}) };
  return { deps: createTestDeps(store, { config }), store };
}

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string; hint?: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as never;
  }
  throw new Error("expected a rejection");
}

describe("input limits", () => {
  it("counts UTF-8 bytes like TextEncoder", () => {
    for (const text of ["", "abc", "é", "€uro", "😀 ok", "\ud800 lone", "a\u0800b"]) {
      expect(utf8Bytes(text)).toBe(new TextEncoder().encode(text).length);
    }
  });

  it("defaults apply; configured values override them; invalid values fall back", () => {
    expect(inputLimitsOf(undefined)).toEqual(DEFAULT_INPUT_LIMITS);
    expect(inputLimitsOf({ inputLimits: { taskBytes: 100 } })).toEqual({ ...DEFAULT_INPUT_LIMITS, taskBytes: 100 });
    expect(inputLimitsOf({ inputLimits: { taskBytes: -1, ruleBytes: 1.5 } as never })).toEqual(DEFAULT_INPUT_LIMITS);
  });

  it("rejects a task over 8 KiB with INVALID_INPUT naming the limit and the config key", async () => {
    const { deps } = setup();
    const ok = await runOperation(contextOperation, deps, { task: `fix the build ${"x".repeat(8 * 1024 - 20)}` });
    expect(ok.task.length).toBeGreaterThan(8000);
    const err = await rejection(runOperation(contextOperation, deps, { task: "fix ".repeat(2100) }));
    expect(err.code).toBe("INVALID_INPUT");
    expect(err.message).toBe("task is 8.2 KiB, over the limit of 8 KiB.");
    expect(err.hint).toContain("inputLimits.taskBytes");
    expect(err.details).toMatchObject({ field: "task", limit: 8192, configKey: "inputLimits.taskBytes" });
    // Multi-byte text is measured in bytes, not characters.
    expect((await rejection(runOperation(contextOperation, deps, { task: "€".repeat(3000) }))).code).toBe("INVALID_INPUT");
    const small = setup({ taskBytes: 16 });
    expect((await rejection(runOperation(contextOperation, small.deps, { task: "a task that is longer than sixteen bytes" }))).details).toMatchObject({ limit: 16 });
  });

  it("rejects rule text over 4 KiB and long categories before writing; batch items fail one by one", async () => {
    const { deps, store } = setup();
    const err = await rejection(runOperation(rememberOperation, deps, { content: "Always ".repeat(700) }));
    expect(err).toMatchObject({ code: "INVALID_INPUT", details: { field: "content", limit: 4096 } });
    expect(err.hint).toContain("inputLimits.ruleBytes");
    const cat = await rejection(runOperation(playbookAddOperation, deps, { content: "Run the tests", category: "c".repeat(200) }));
    expect(cat).toMatchObject({ code: "INVALID_INPUT", details: { field: "category", limit: 128 } });
    expect((await store.readPlaybook("global"))?.bullets ?? []).toEqual([]);

    // A batch is all or nothing: the over-limit item stops the whole file.
    const batch = await rejection(
      runOperation(playbookAddOperation, deps, {
        batch: { source: "rules.json", text: JSON.stringify([{ content: "Run the tests first" }, { content: "x".repeat(5000) }]) },
      }),
    );
    expect(batch).toMatchObject({ code: "INVALID_INPUT", message: "1 of 2 rules in rules.json are invalid. Nothing was added." });
    expect((batch.details as { failed: unknown }).failed).toEqual([{ content: "x".repeat(200), error: "content is 4.9 KiB, over the limit of 4 KiB. (config inputLimits.ruleBytes)" }]);
    expect((await store.readPlaybook("global"))?.bullets ?? []).toEqual([]);
  });

  it("rejects long feedback reasons and search queries", async () => {
    const { deps } = setup();
    const added = await runOperation(rememberOperation, deps, { content: "Run the tests first" });
    if (!("bullet" in added)) throw new Error("expected a single add");
    const reason = await rejection(runOperation(markOperation, deps, { bulletId: added.bullet.id, helpful: true, reason: "r".repeat(3000) }));
    expect(reason).toMatchObject({ code: "INVALID_INPUT", details: { field: "reason", limit: 2048 } });
    const query = await rejection(runOperation(memorySearchOperation, deps, { query: "q".repeat(3000), scope: "playbook" }));
    expect(query).toMatchObject({ code: "INVALID_INPUT", details: { field: "query" } });
  });
});
