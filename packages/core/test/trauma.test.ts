import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import {
  MAX_TRAUMA_IMPORT_LINES,
  MAX_TRAUMA_MESSAGE_LENGTH,
  TRAUMA_SCAN_QUERY,
  loadTraumas,
  traumaAddOperation,
  traumaHealOperation,
  traumaImportOperation,
  traumaListOperation,
  traumaRemoveOperation,
  traumaScanOperation,
} from "../src/operations/trauma.js";
import { createFakeEpisodicSource, createTestDeps } from "../src/testing/fakes.js";
import { MEMORY_GLOBAL_DIR, MEMORY_REPO_DIR, createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

function setup(options: { repo?: boolean } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? true });
  const deps = createTestDeps(store);
  return { store, deps };
}

describe("trauma add / list", () => {
  it("appends a snake_case entry to the global registry with the original's defaults", async () => {
    const { store, deps } = setup();
    const { entry } = await runOperation(traumaAddOperation, deps, { pattern: String.raw`git\s+push\s+.*--force` });
    expect(entry).toEqual({
      id: "trauma-00000001",
      severity: "CRITICAL",
      pattern: String.raw`git\s+push\s+.*--force`,
      scope: "global",
      status: "active",
      trigger_event: { session_path: "manual-entry", timestamp: "2026-01-01T00:00:00.000Z", human_message: "Manually added trauma." },
      created_at: "2026-01-01T00:00:00.000Z",
    });
    expect(Object.keys(entry)).toEqual(["id", "severity", "pattern", "scope", "status", "trigger_event", "created_at"]);
    expect((await store.readLog("global", "traumas")).records).toEqual([entry]);
    expect((await store.readLog("repo", "traumas")).records).toEqual([]);
  });

  it("project scope writes to the repository's registry; severity and scope are case-insensitive", async () => {
    const { store, deps } = setup();
    const { entry } = await runOperation(traumaAddOperation, deps, { pattern: "DROP TABLE", severity: "fatal", scope: "Project", message: "dropped prod" });
    expect(entry).toMatchObject({ severity: "FATAL", scope: "project", trigger_event: { human_message: "dropped prod" } });
    expect((await store.readLog("repo", "traumas")).records).toEqual([entry]);
  });

  it("project scope outside a repository is a configuration error with a hint", async () => {
    const { deps } = setup({ repo: false });
    const error = await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "x", scope: "project" }), "CONFIG_INVALID");
    expect(error.message).toBe("Cannot save project-scoped trauma: not in a git repository");
    expect(error.hint).toMatch(/init --repo/);
  });

  it("refuses empty, invalid and catastrophic patterns with INVALID_INPUT (exit 2) and writes nothing", async () => {
    const { store, deps } = setup();
    await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "  " }), "INVALID_INPUT");
    const invalid = await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "(unclosed" }), "INVALID_INPUT");
    expect(invalid.message).toMatch(/^Invalid regex pattern: /);
    expect(invalid.details).toMatchObject({ reason: "invalid" });
    const evil = await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "(a+)+$" }), "INVALID_INPUT");
    expect(evil.exitCode).toBe(2);
    expect(evil.hint).toBeTruthy();
    expect(evil.details).toEqual({ pattern: "(a+)+$", reason: "catastrophic" });
    await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "x", severity: "LOW" }), "INVALID_INPUT");
    await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "x", scope: "everywhere" }), "INVALID_INPUT");
    await expectAppError(runOperation(traumaAddOperation, deps, { pattern: "x", message: "m".repeat(MAX_TRAUMA_MESSAGE_LENGTH + 1) }), "INVALID_INPUT");
    expect((await store.readLog("global", "traumas")).records).toEqual([]);
  });

  it("sanitises secrets in the message", async () => {
    const { deps } = setup();
    const { entry } = await runOperation(traumaAddOperation, deps, { pattern: "x", message: "leaked AKIAIOSFODNN7EXAMPLE in logs" });
    expect(entry.trigger_event.human_message).not.toContain("AKIAIOSFODNN7EXAMPLE");
  });

  it("lists active traumas of both layers and counts healed ones; invalid lines are skipped with a warning", async () => {
    const { store, deps } = setup();
    const a = (await runOperation(traumaAddOperation, deps, { pattern: "one" })).entry;
    const b = (await runOperation(traumaAddOperation, deps, { pattern: "two", scope: "project" })).entry;
    await store.appendLog("global", "traumas", [{ ...a, id: "trauma-healed", status: "healed" }, { id: "broken" }]);
    store.appendRawLogLine("global", "traumas", "not json\n");
    const result = await runOperation(traumaListOperation, deps, {});
    expect(result).toEqual({ traumas: [a, b], healedCount: 1 });
    expect(deps.logger.lines.some((l) => l.level === "warn" && /Skipped 2 invalid/.test(l.message))).toBe(true);
    expect(await loadTraumas(deps)).toHaveLength(3);
  });
});

describe("trauma heal / remove", () => {
  it("heals in place across layers, keeping other lines (and non-JSON lines) as they were", async () => {
    const { store, deps } = setup();
    const a = (await runOperation(traumaAddOperation, deps, { pattern: "one" })).entry;
    const b = (await runOperation(traumaAddOperation, deps, { pattern: "two" })).entry;
    store.appendRawLogLine("global", "traumas", "a hand-written note, not JSON\n");
    await store.appendLog("repo", "traumas", [{ ...a }]);
    const result = await runOperation(traumaHealOperation, deps, { id: a.id });
    expect(result).toEqual({
      updated: 2,
      checkedPaths: [`${MEMORY_GLOBAL_DIR}/traumas.jsonl`, `${MEMORY_REPO_DIR}/traumas.jsonl`],
      updatedPaths: [`${MEMORY_GLOBAL_DIR}/traumas.jsonl`, `${MEMORY_REPO_DIR}/traumas.jsonl`],
    });
    const global = await store.readLog("global", "traumas");
    expect(global).toEqual({ records: [{ ...a, status: "healed" }, b], malformed: 1 });
    // Healing again finds nothing to heal.
    const again = await expectAppError(runOperation(traumaHealOperation, deps, { id: a.id }), "TRAUMA_NOT_FOUND");
    expect(again.message).toBe(`Trauma ${a.id} not found (nothing healed)`);
    expect(again.exitCode).toBe(2);
    expect(again.details).toMatchObject({ traumaId: a.id });
  });

  it("heal --scope global leaves the repository's copy alone", async () => {
    const { store, deps } = setup();
    const a = (await runOperation(traumaAddOperation, deps, { pattern: "one" })).entry;
    await store.appendLog("repo", "traumas", [{ ...a }]);
    const result = await runOperation(traumaHealOperation, deps, { id: a.id, scope: "global" });
    expect(result.checkedPaths).toEqual([`${MEMORY_GLOBAL_DIR}/traumas.jsonl`]);
    expect((await store.readLog("repo", "traumas")).records).toEqual([a]);
  });

  it("remove needs force, then deletes the entry's lines", async () => {
    const { store, deps } = setup();
    const a = (await runOperation(traumaAddOperation, deps, { pattern: "one" })).entry;
    const b = (await runOperation(traumaAddOperation, deps, { pattern: "two" })).entry;
    const refused = await expectAppError(runOperation(traumaRemoveOperation, deps, { id: a.id }), "MISSING_REQUIRED");
    expect(refused.message).toBe("Refusing to remove trauma without --force");
    expect(refused.details).toEqual({ missing: "--force", traumaId: a.id });
    const result = await runOperation(traumaRemoveOperation, deps, { id: a.id, force: true });
    expect(result).toMatchObject({ removed: 1, updatedPaths: [`${MEMORY_GLOBAL_DIR}/traumas.jsonl`] });
    expect((await store.readLog("global", "traumas")).records).toEqual([b]);
    const missing = await expectAppError(runOperation(traumaRemoveOperation, deps, { id: a.id, force: true }), "TRAUMA_NOT_FOUND");
    expect(missing.message).toBe(`Trauma ${a.id} not found (nothing removed)`);
  });
});

describe("trauma import", () => {
  it("imports plain lines, JSON strings and objects; skips bad lines with the original's warnings", async () => {
    const { store, deps } = setup();
    const content = [
      String.raw`rm\s+-rf\s+/`,
      "",
      JSON.stringify(String.raw`DROP\s+DATABASE`),
      JSON.stringify({ pattern: "terraform destroy", note: "x" }),
      JSON.stringify({ nope: 1 }),
      "(unclosed",
      "(a+)+$",
      "   ",
      "42",
    ].join("\n");
    const result = await runOperation(traumaImportOperation, deps, { content, source: "./t.txt", severity: "fatal" });
    expect(result.imported).toBe(4);
    expect(result.warningsCount).toBe(3);
    expect(result.warnings[0]).toBe("Line 5: missing pattern (skipped)");
    expect(result.warnings[1]).toMatch(/^Line 6: invalid regex pattern \(skipped\): /);
    expect(result.warnings[2]).toMatch(/^Line 7: unsafe regex pattern \(skipped\): Pattern can backtrack catastrophically/);
    const { records } = await store.readLog("global", "traumas");
    expect(records.map((r) => (r as { pattern: string }).pattern)).toEqual([String.raw`rm\s+-rf\s+/`, String.raw`DROP\s+DATABASE`, "terraform destroy", "42"]);
    expect(records[0]).toMatchObject({ severity: "FATAL", trigger_event: { session_path: "import", human_message: "Imported from ./t.txt" } });
  });

  it("refuses an import with too many lines", async () => {
    const { deps } = setup();
    await expectAppError(runOperation(traumaImportOperation, deps, { content: "x\n".repeat(MAX_TRAUMA_IMPORT_LINES + 1), source: "big" }), "INVALID_INPUT");
  });
});

describe("context traumaWarning", () => {
  it("warns for an active matching trauma, not for a healed one, and never runs an unsafe pattern", { timeout: 20_000 }, async () => {
    const { store, deps } = setup();
    // Written by hand: an evil pattern first (it must be skipped, not run), then a good one.
    await store.appendLog("global", "traumas", [
      {
        id: "trauma-evil",
        severity: "FATAL",
        pattern: String.raw`(\w+\s?)+$`,
        scope: "global",
        status: "active",
        trigger_event: { session_path: "manual-entry", timestamp: "2026-01-01T00:00:00.000Z" },
        created_at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    const { entry } = await runOperation(traumaAddOperation, deps, { pattern: String.raw`git\s+push\s+.*--force`, message: "overwrote main" });
    const task = `${"word ".repeat(1200)}then git push origin main --force!`;
    const result = await runOperation(contextOperation, deps, { task });
    expect(result.traumaWarning).toEqual({ pattern: entry.pattern, reason: "overwrote main", reference: "manual-entry" });
    await runOperation(traumaHealOperation, deps, { id: entry.id });
    const healed = await runOperation(contextOperation, deps, { task });
    expect(healed.traumaWarning).toBeUndefined();
  });
});

describe("audit --trauma scan", () => {
  it("searches with the apology query, de-duplicates sessions and reports DOOM matches", async () => {
    const store = createMemoryStore({ repo: false });
    const episodic = createFakeEpisodicSource({
      hits: [
        { source_path: "/s/a.jsonl", line_number: 1, agent: "claude", snippet: "sorry, I deleted it", created_at: "2026-01-02T00:00:00.000Z", origin: { kind: "local" } },
        { source_path: "/s/a.jsonl", line_number: 9, agent: "claude", snippet: "another mistake", origin: { kind: "local" } },
        { source_path: "/s/b.jsonl", line_number: 1, agent: "codex", snippet: "an error occurred", origin: { kind: "local" } },
      ],
      exports: {
        "/s/a.jsonl": 'user: clean up\n[tool: Bash] {"command":"cd /x && rm -rf /home/me"}\nassistant: sorry, that deleted your home',
        "/s/b.jsonl": "nothing dangerous here, just an error",
      },
    });
    const deps = createTestDeps(store, { episodic });
    const result = await runOperation(traumaScanOperation, deps, { days: 30 });
    expect(episodic.calls).toEqual([{ query: TRAUMA_SCAN_QUERY, limit: 50, days: 30, workspace: undefined }]);
    expect(result.degraded).toBeUndefined();
    const descriptions = result.candidates.map((c) => c.description);
    expect(descriptions).toEqual(["Recursive deletion of system directories", "Recursive deletion of root subdirectories", "Recursive force deletion (high risk)"]);
    expect(result.candidates[0]).toEqual({
      sessionPath: "/s/a.jsonl",
      matchedPattern: String.raw`^rm\s+(-[rf]+\s+)+/(etc|usr|var|boot|home|root|bin|sbin|lib)`,
      description: "Recursive deletion of system directories",
      evidence: "rm -rf /home",
      context: "Executed: cd /x && rm -rf /home/me",
      timestamp: "2026-01-02T00:00:00.000Z",
    });
  });

  it("reports an unavailable history as degraded instead of failing", async () => {
    const degraded = { available: false as const, reason: "NOT_FOUND" as const, message: "cass binary not found", suggestedFix: ["cargo install coding-agent-search"] };
    const deps = createTestDeps(createMemoryStore({ repo: false }), { episodic: createFakeEpisodicSource({ degraded }) });
    expect(await runOperation(traumaScanOperation, deps, {})).toEqual({ candidates: [], degraded: { cass: degraded } });
    await expectAppError(runOperation(traumaScanOperation, deps, { days: 0 }), "INVALID_INPUT");
  });
});
