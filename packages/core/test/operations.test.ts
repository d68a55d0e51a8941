import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import { initOperation } from "../src/operations/init.js";
import { markOperation } from "../src/operations/mark.js";
import { playbookAddOperation } from "../src/operations/playbook-add.js";
import { playbookExportOperation } from "../src/operations/playbook-export.js";
import { playbookGetOperation } from "../src/operations/playbook-get.js";
import { playbookImportOperation } from "../src/operations/playbook-import.js";
import { playbookListOperation } from "../src/operations/playbook-list.js";
import { playbookRemoveOperation } from "../src/operations/playbook-remove.js";
import { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource } from "../src/episodic/null-source.js";
import { createFakeEpisodicSource, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

function setup(options: { repo?: boolean } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? false, now: () => "2026-01-01T00:00:00.000Z" });
  return createTestDeps(store);
}


describe("init", () => {
  it("creates the global layer, refuses a second init, and needs --yes to overwrite", async () => {
    const deps = setup();
    const first = await runOperation(initOperation, deps, {});
    expect(first).toMatchObject({ created: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"], existed: [], starter: null });
    const again = await expectAppError(runOperation(initOperation, deps, {}), "ALREADY_EXISTS");
    expect(again.exitCode).toBe(2);
    await expectAppError(runOperation(initOperation, deps, { force: true }), "MISSING_REQUIRED");
    const forced = await runOperation(initOperation, deps, { force: true, yes: true });
    expect(forced.overwritten.length).toBeGreaterThan(0);
  });

  it("reports CONFIG_INVALID for --repo outside a repository", async () => {
    const error = await expectAppError(runOperation(initOperation, setup(), { repo: true }), "CONFIG_INVALID");
    expect(error.exitCode).toBe(3);
    expect(error.hint).toMatch(/git repository/);
  });
});

describe("add → context → mark", () => {
  it("returns an added rule for a task that shares its words, and records feedback", async () => {
    const deps = setup();
    const added = await runOperation(playbookAddOperation, deps, {
      content: "Check JWT expiry and clock skew before debugging 401 errors",
      category: "debugging",
    });
    if (!("bullet" in added)) throw new Error("expected a single add");
    expect(added.bullet).toMatchObject({ kind: "workflow_rule", state: "draft", maturity: "candidate", sourceSessions: ["manual-cli"], sourceAgents: ["unknown"] });
    const withSession = await runOperation(playbookAddOperation, deps, {
      content: "Rotate the session signing secret through the secret manager",
      session: "/home/dev/.codex/sessions/s9.jsonl",
    });
    if (!("bullet" in withSession)) throw new Error("expected a single add");
    expect(withSession.bullet).toMatchObject({ sourceSessions: ["manual-cli", "/home/dev/.codex/sessions/s9.jsonl"], sourceAgents: ["codex"] });

    const ctx = await runOperation(contextOperation, deps, { task: "debug 401 errors after deploy" });
    expect(ctx.relevantBullets.map((b) => b.id)).toEqual([added.bullet.id]);
    expect(ctx.relevantBullets[0]!.relevanceScore).toBeGreaterThan(0);
    expect(ctx.semanticMode).toBe("keyword");

    for (let i = 0; i < 3; i++) {
      await runOperation(markOperation, deps, { bulletId: added.bullet.id, helpful: true, session: `/s/${i}.jsonl` });
    }
    const got = await runOperation(playbookGetOperation, deps, { id: added.bullet.id });
    expect(got.bullet.helpfulCount).toBe(3);
    expect(got.bullet.maturity).toBe("established");
    expect(got.bullet.decayedHelpful).toBeCloseTo(3, 5);
  });

  it("excludes rules that share no word with the task and splits anti-patterns out", async () => {
    const deps = setup();
    await runOperation(playbookAddOperation, deps, { content: "Use pnpm workspaces for the monorepo" });
    await deps.store.mutatePlaybook("global", (pb) => {
      pb.bullets.push({ ...pb.bullets[0]!, id: "b-anti-1", content: "AVOID: caching auth tokens in memory", isNegative: true, kind: "anti_pattern" });
    });
    const ctx = await runOperation(contextOperation, deps, { task: "auth tokens expire too early" });
    expect(ctx.relevantBullets).toEqual([]);
    expect(ctx.antiPatterns.map((b) => b.id)).toEqual(["b-anti-1"]);
  });

  it("rejects an empty task and bad numbers with the original's messages", async () => {
    const deps = setup();
    const empty = await expectAppError(runOperation(contextOperation, deps, { task: "   " }), "INVALID_INPUT");
    expect(empty.message).toBe("task must be a non-empty string.");
    expect(empty.hint).toContain('cm context "fix the login bug" --json');
    const limit = await expectAppError(runOperation(contextOperation, deps, { task: "x y", limit: 0 }), "INVALID_INPUT");
    expect(limit.message).toBe("limit must be >= 1.");
  });

  it("mark needs exactly one direction and an existing bullet", async () => {
    const deps = setup();
    await expectAppError(runOperation(markOperation, deps, { bulletId: "b-x", helpful: true, harmful: true }), "MISSING_REQUIRED");
    const missing = await expectAppError(runOperation(markOperation, deps, { bulletId: "b-nope", helpful: true }), "BULLET_NOT_FOUND");
    expect(missing.message).toContain("b-nope");
    expect(missing.details).toEqual({ bulletId: "b-nope" });
  });

  it("marks a repo bullet in the repo layer, not the global one", async () => {
    const deps = setup({ repo: true });
    await deps.store.mutatePlaybook("repo", (pb) => {
      pb.bullets.push({
        id: "b-repo-1", category: "git", content: "Rebase on main before opening a pull request", scope: "global", source: "learned",
        type: "rule", isNegative: false, kind: "project_convention", state: "active", maturity: "candidate", helpfulCount: 0,
        harmfulCount: 0, feedbackEvents: [], confidenceDecayHalfLifeDays: 90, createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-01T00:00:00.000Z", pinned: false, deprecated: false, sourceSessions: [], sourceAgents: [], tags: [],
      });
    });
    const result = await runOperation(markOperation, deps, { bulletId: "b-repo-1", harmful: true, reason: "OUTDATED" });
    expect(result).toMatchObject({ type: "harmful", newState: "candidate" });
    const repo = await deps.store.readPlaybook("repo");
    expect(repo!.bullets[0]!.feedbackEvents[0]).toMatchObject({ type: "harmful", reason: "outdated" });
    expect(await deps.store.readPlaybook("global")).toBeNull();
  });
});

describe("history in context", () => {
  it("reports degraded cass when no source answers, and no degraded key for a keyword-less task", async () => {
    const deps = { ...setup(), episodic: createNullEpisodicSource() };
    const ctx = await runOperation(contextOperation, deps, { task: "login bug" });
    expect(ctx.degraded?.cass).toEqual(CASS_NOT_FOUND_DEGRADED);
    expect(ctx.historySnippets).toEqual([]);
    const none = await runOperation(contextOperation, deps, { task: "the a an" });
    expect(none.degraded).toBeUndefined();
  });

  it("sanitises and truncates snippets and derives sessionPath/timestamp", async () => {
    const long = `apiKey: ABCDEFGHIJKLMNOPQRSTUVWX1234 login fix\n${"x".repeat(400)}`;
    const episodic = createFakeEpisodicSource({
      hits: [{ source_path: "/h/s1.jsonl", line_number: 3, agent: "claude", snippet: long, created_at: 1735689600000, origin: { kind: "local" } }],
    });
    const deps = { ...setup(), episodic };
    const ctx = await runOperation(contextOperation, deps, { task: "login fix", history: 5, days: 30 });
    expect(episodic.calls[0]).toMatchObject({ query: "login OR fix", limit: 5, days: 30 });
    const snippet = ctx.historySnippets[0]!;
    expect(snippet.snippet).toContain("[API_KEY]");
    expect(snippet.snippet).not.toContain("ABCDEFGHIJKLMNOPQRSTUVWX1234");
    expect(snippet.snippet.endsWith("...")).toBe(true);
    expect(snippet.snippet.length).toBe(303);
    expect(snippet).toMatchObject({ sessionPath: "/h/s1.jsonl", timestamp: "1735689600000" });
  });
});

describe("playbook commands", () => {
  it("batch add is all or nothing: per-item failures are reported and nothing is written", async () => {
    const deps = setup();
    const items = [{ content: "Run the failing test alone first" }, { content: "" }, { content: "Pin tool versions", category: "ci" }];
    const refused = await expectAppError(runOperation(playbookAddOperation, deps, { category: "testing", batch: { source: "-", text: JSON.stringify(items) } }), "INVALID_INPUT");
    expect(refused.message).toBe("1 of 3 rules in stdin are invalid. Nothing was added.");
    expect((refused.details as { failed: Array<{ content: string }> }).failed.map((f) => f.content)).toEqual([""]);
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(0);

    const result = await runOperation(playbookAddOperation, deps, { category: "testing", batch: { source: "-", text: JSON.stringify([items[0], items[2]]) } });
    if (!("summary" in result)) throw new Error("expected a batch result");
    expect(result.summary).toEqual({ total: 2, succeeded: 2, skipped: 0, failed: 0 });
    expect(result.success).toBe(true);
    expect(result.added.map((a) => a.category)).toEqual(["testing", "ci"]);
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(2);

    const bad = await expectAppError(runOperation(playbookAddOperation, deps, { batch: { source: "x.json", text: "{nope" } }), "INVALID_INPUT");
    expect(bad.message).toMatch(/^x\.json: invalid JSON/);
    const unread = await expectAppError(runOperation(playbookAddOperation, deps, { batch: { source: "/no/file", text: null, readError: "ENOENT" } }), "FILE_NOT_FOUND");
    expect(unread.message).toBe("Could not read /no/file: ENOENT");
  });

  it("remove: dry run changes nothing, soft deprecates, hard needs --yes then deletes", async () => {
    const deps = setup();
    const added = await runOperation(playbookAddOperation, deps, { content: "Never force push to shared branches", category: "git" });
    if (!("bullet" in added)) throw new Error("expected a single add");
    const id = added.bullet.id;
    const plan = await runOperation(playbookRemoveOperation, deps, { id, dryRun: true, hard: true });
    expect(plan).toMatchObject({ plan: { action: "delete", applyCommand: `cm playbook remove ${id} --hard --yes` } });
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(1);

    await expectAppError(runOperation(playbookRemoveOperation, deps, { id, hard: true }), "MISSING_REQUIRED");
    expect(await runOperation(playbookRemoveOperation, deps, { id, reason: "obsolete" })).toEqual({ id, action: "deprecated" });
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(0);
    const got = await runOperation(playbookGetOperation, deps, { id });
    expect(got.bullet).toMatchObject({ deprecated: true, deprecationReason: "obsolete" });

    const deleted = await runOperation(playbookRemoveOperation, deps, { id, hard: true, yes: true });
    expect(deleted).toMatchObject({ id, action: "deleted" });
    const err = await expectAppError(runOperation(playbookGetOperation, deps, { id }), "BULLET_NOT_FOUND");
    expect(err.message).toBe(`Bullet '${id}' not found`);
  });

  it("export strips provenance, and import of the export round-trips into another store", async () => {
    const deps = setup();
    await runOperation(playbookAddOperation, deps, { content: "Prefer pathlib over os.path joins", category: "python" });
    const exported = await runOperation(playbookExportOperation, deps, {});
    expect(exported.metadata.exportedBulletCount).toBe(1);
    expect(exported.bullets[0]).not.toHaveProperty("sourceSessions");

    const other = setup();
    const first = await runOperation(playbookImportOperation, other, { file: "/tmp/x.yaml", data: exported });
    expect(first).toMatchObject({ added: 1, skipped: 0, updated: 0, target: "global" });
    const second = await runOperation(playbookImportOperation, other, { file: "/tmp/x.yaml", data: { success: true, data: exported } });
    expect(second).toMatchObject({ added: 0, skipped: 1 });
    const replaced = await runOperation(playbookImportOperation, other, { file: "/tmp/x.yaml", data: exported.bullets, replace: true });
    expect(replaced).toMatchObject({ updated: 1 });

    await expectAppError(runOperation(playbookImportOperation, other, { file: "/tmp/x", data: { nope: 1 } }), "INVALID_INPUT");
    const invalid = await expectAppError(runOperation(playbookImportOperation, other, { file: "/tmp/x", data: [{ id: "b-1" }] }), "VALIDATION_FAILED");
    expect((invalid.details as { errors: string[] }).errors[0]).toMatch(/bullets\[0\]/);
  });
});
