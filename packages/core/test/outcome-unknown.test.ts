import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { outcomeOperation } from "../src/operations/outcome.js";
import { rememberOperation } from "../src/operations/playbook-add.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

describe("cm outcome with rule ids that do not exist", () => {
  it("refuses an outcome naming no known rule and records nothing; records one naming some", async () => {
    const store = createMemoryStore({ now: () => "2026-01-01T00:00:00.000Z" });
    const deps = createTestDeps(store);
    const added = await runOperation(rememberOperation, deps, { content: "Run the migrations in one transaction" });
    if (!("bullet" in added)) throw new Error("expected one rule");

    const error = await expectAppError(runOperation(outcomeOperation, deps, { status: "success", rules: "b-typo1,b-typo2", text: "worked great" }), "BULLET_NOT_FOUND");
    expect(error.message).toBe("No rule with any of these ids exists: b-typo1, b-typo2. Nothing was recorded.");
    expect(error.hint).toContain("playbook list");
    expect((await store.readLog("global", "outcomes")).records).toEqual([]);

    const partial = await runOperation(outcomeOperation, deps, { status: "success", rules: `${added.bullet.id},b-typo1`, text: "worked great" });
    expect(partial).toMatchObject({ applied: 1, missing: ["b-typo1"] });
    expect((await store.readLog("global", "outcomes")).records).toHaveLength(1);
  });
});
