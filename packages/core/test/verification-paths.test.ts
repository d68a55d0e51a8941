import { describe, expect, it } from "vitest";
import { runVerification, verificationFromFlags, workspacePathProblem } from "../src/domain/verification.js";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import { rememberOperation } from "../src/operations/playbook-add.js";
import type { WorkspaceFiles } from "../src/ports.js";
import { createMemoryFiles, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

/** Verification checks may only look inside the workspace (file probing through rules). */

const OUTSIDE = ["/etc/shadow", "../secrets.env", "src/../../x", "a/b/../../../c", "~/.ssh/id_rsa", "\\\\server\\share\\f", "C:\\Windows\\win.ini", "c:/x", "..", "./.."];
const INSIDE = ["src/auth.ts", "./package.json", "src/../src/a.ts", "a/./b", "docs/", ".cass/playbook.yaml", "..hidden/file"];

describe("verification paths", () => {
  it("accepts relative paths that stay inside the workspace and refuses every other kind", () => {
    for (const path of INSIDE) expect(workspacePathProblem(path), path).toBeNull();
    for (const path of OUTSIDE) expect(workspacePathProblem(path), path).not.toBeNull();
    expect(workspacePathProblem("")).toBe("empty");
    expect(workspacePathProblem("a\0b")).toBe("not a file name");
  });

  it("refuses outside paths in --verify-file and --verify-regex with INVALID_INPUT and a hint", async () => {
    for (const path of OUTSIDE) {
      expect(() => verificationFromFlags({ file: path }), path).toThrow(/checks read files inside the workspace only/);
      // <path>:<pattern> splits at the first colon, so a drive letter cannot be written there.
      if (!path.includes(":")) expect(() => verificationFromFlags({ regex: `${path}:root:` }), path).toThrow(/inside the workspace/);
    }
    const deps = createTestDeps(createMemoryStore({ now: () => "2026-01-01T00:00:00.000Z" }));
    const error = await expectAppError(runOperation(rememberOperation, deps, { content: "probe rule", verifyFile: "/etc/shadow" }), "INVALID_INPUT");
    expect(error.hint).toContain("relative to the workspace root");
    // The structured form (MCP memory_remember) is checked the same way.
    await expectAppError(
      runOperation(rememberOperation, deps, { content: "probe rule", verification: { type: "regex", pattern: "^root:", path: "../../etc/passwd", mode: "exists" } }),
      "INVALID_INPUT",
    );
  });

  it("never reads an outside path of a rule written by hand, and answers the same whatever is there", async () => {
    let reads = 0;
    const spy: WorkspaceFiles = {
      exists: async () => (reads++, true),
      readText: async () => (reads++, "root:x:0:0"),
    };
    for (const verification of [
      { type: "file_exists" as const, pattern: "/etc/shadow", mode: "exists" as const },
      { type: "file_exists" as const, pattern: "/etc/shadow", mode: "absent" as const },
      { type: "regex" as const, pattern: "^root:", path: "/etc/passwd", mode: "exists" as const },
    ]) {
      const outcome = await runVerification(verification, spy, "/work/app", "2026-01-01T00:00:00.000Z");
      expect(outcome.ok).toBe(false);
      expect(outcome.reason).toMatch(/inside the workspace only/);
    }
    expect(reads).toBe(0);
  });

  it("context marks such a hand-written rule stale without touching the file system", async () => {
    const store = createMemoryStore({ now: () => "2026-01-01T00:00:00.000Z" });
    const files = createMemoryFiles({ "/etc/shadow": "root:secret" });
    const deps = createTestDeps(store, { files });
    const added = await runOperation(rememberOperation, deps, { content: "Rotate the shadow password database weekly" });
    if (!("bullet" in added)) throw new Error("expected one rule");
    await store.mutatePlaybook("global", (playbook) => {
      const bullet = playbook.bullets.find((b) => b.id === added.bullet.id)!;
      bullet.verification = { type: "file_exists", pattern: "/etc/shadow", mode: "exists" };
    });
    const result = await runOperation(contextOperation, deps, { task: "rotate shadow password database", workspace: "/work/app" });
    expect(result.relevantBullets[0]!.stale?.reason).toMatch(/\/etc\/shadow is not relative to the workspace/);
  });
});
