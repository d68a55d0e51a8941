import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { STALE_PENALTY, contextOperation } from "../src/operations/context.js";
import { forgetOperation } from "../src/operations/forget.js";
import { historyOperation } from "../src/operations/history.js";
import { markOperation } from "../src/operations/mark.js";
import { playbookAddOperation, rememberOperation } from "../src/operations/playbook-add.js";
import { playbookImportOperation } from "../src/operations/playbook-import.js";
import { playbookListOperation } from "../src/operations/playbook-list.js";
import { recallOperation } from "../src/operations/recall.js";
import { undoOperation } from "../src/operations/undo.js";
import { parseEvidenceSpec, verificationFromFlags } from "../src/domain/verification.js";
import { createFakeEpisodicSource, createMemoryFiles, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const WORKSPACE = "/work/app";

function setup(options: { repo?: boolean; files?: Record<string, string> } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? false, now: () => "2026-01-01T00:00:00.000Z" });
  const files = createMemoryFiles(options.files ?? {});
  return { deps: createTestDeps(store, { files }), store, files };
}


async function remember(deps: ReturnType<typeof setup>["deps"], content: string, extra: Record<string, unknown> = {}) {
  const result = await runOperation(rememberOperation, deps, { content, ...extra });
  if (!("bullet" in result)) throw new Error("expected a single add");
  return result.bullet;
}

describe("remember: evidence, verification, validity", () => {
  it("stores evidence, a verification check and a validity window on the rule", async () => {
    const { deps } = setup();
    const bullet = await remember(deps, "Run prisma migrate deploy before starting the API", {
      category: "database",
      evidence: ["ticket:OPS-42:outage after skipped migration", "code:src/db/migrate.ts:42", { type: "doc", uri: "https://example.com/runbook" }],
      verifyFile: "prisma/schema.prisma",
      validTo: "30d",
      tags: ["prisma", "prisma", " deploy "],
    });
    expect(bullet.evidence).toEqual([
      { type: "ticket", uri: "OPS-42", note: "outage after skipped migration" },
      { type: "code", uri: "src/db/migrate.ts:42" },
      { type: "doc", uri: "https://example.com/runbook" },
    ]);
    expect(bullet.verification).toEqual({ type: "file_exists", pattern: "prisma/schema.prisma", mode: "exists" });
    expect(bullet.validTo).toBe("2026-01-31T00:00:00.000Z");
    expect(bullet.tags).toEqual(["prisma", "deploy"]);
  });

  it("rejects bad evidence, bad regexes, conflicting checks and inverted validity windows", async () => {
    const { deps } = setup();
    const e1 = await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", evidence: ["rumor:somewhere"] }), "INVALID_INPUT");
    expect(e1.hint).toMatch(/session, code, artifact/);
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", verifyRegex: "a.ts:(a+)+" }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", verifyRegex: "no-colon" }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", verifyFile: "a", verifyRegex: "b:c" }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", verifyAbsent: true }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", validFrom: "2027-01-01", validTo: "2026-06-01" }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "x rule", validTo: "next tuesday" }), "INVALID_INPUT");
    await expectAppError(runOperation(rememberOperation, deps, { content: "   " }), "MISSING_REQUIRED");
    const listed = await runOperation(playbookListOperation, deps, {});
    expect(listed.bullets).toHaveLength(0);
  });

  it("parses evidence notes only where they cannot be part of the URI", () => {
    expect(parseEvidenceSpec("doc:https://x.dev/a:b")).toEqual({ type: "doc", uri: "https://x.dev/a", note: "b" });
    expect(parseEvidenceSpec("doc:https://x.dev/a")).toEqual({ type: "doc", uri: "https://x.dev/a" });
    expect(parseEvidenceSpec("session:/home/u/.claude/s.jsonl:10-20")).toEqual({ type: "session", uri: "/home/u/.claude/s.jsonl:10-20" });
    expect(verificationFromFlags({ regex: "package.json:\"vitest\": \"\\^4", absent: true })).toEqual({
      type: "regex",
      path: "package.json",
      pattern: '"vitest": "\\^4',
      mode: "absent",
    });
  });

  it("adds to the repo playbook with repo: true, and refuses it outside a repository", async () => {
    const inRepo = setup({ repo: true });
    const result = await runOperation(rememberOperation, inRepo.deps, { content: "Use the repo's make targets", repo: true });
    expect(result).toMatchObject({ target: "repo" });
    expect((await inRepo.store.readPlaybook("repo"))?.bullets).toHaveLength(1);
    await expectAppError(runOperation(rememberOperation, setup().deps, { content: "x", repo: true }), "CONFIG_INVALID");
  });
});

describe("context: verification, expiry, budgets", () => {
  it("marks a rule whose file is gone as stale and ranks it below an otherwise equal rule", async () => {
    const { deps, files } = setup({ files: { [`${WORKSPACE}/src/auth/session.ts`]: "export const secret = rotate();" } });
    const checked = await remember(deps, "Rotate the session signing secret after deploy", { verifyFile: "src/auth/session.ts" });
    const plain = await remember(deps, "Rotate the session signing secret after deploy carefully");
    const input = { task: "rotate session signing secret after deploy", workspace: WORKSPACE };

    const fresh = await runOperation(contextOperation, deps, input);
    expect(fresh.relevantBullets.map((b) => b.id)).toEqual([checked.id, plain.id]);
    expect(fresh.relevantBullets[0]!.stale).toBeUndefined();

    files.files.delete(`${WORKSPACE}/src/auth/session.ts`);
    const after = await runOperation(contextOperation, deps, input);
    expect(after.relevantBullets.map((b) => b.id)).toEqual([plain.id, checked.id]);
    const stale = after.relevantBullets[1]!;
    expect(stale.stale?.reason).toMatch(/src\/auth\/session\.ts no longer exists/);
    expect(stale.finalScore).toBeCloseTo(fresh.relevantBullets[0]!.finalScore * STALE_PENALTY);
    // Nothing was deleted or changed in the playbook.
    const listed = await runOperation(playbookListOperation, deps, {});
    expect(listed.bullets.map((b) => b.id).sort()).toEqual([checked.id, plain.id].sort());
  });

  it("checks regex verifications in both modes", async () => {
    const { deps } = setup({ files: { [`${WORKSPACE}/package.json`]: '{"devDependencies":{"jest":"29"}}' } });
    const wantsVitest = await remember(deps, "Tests run with vitest projects", { verifyRegex: 'package.json:"vitest"' });
    const noJest = await remember(deps, "Tests never use jest globals", { verifyRegex: 'package.json:"jest"', verifyAbsent: true });
    const result = await runOperation(contextOperation, deps, { task: "tests vitest jest", workspace: WORKSPACE });
    const byId = new Map(result.relevantBullets.map((b) => [b.id, b]));
    expect(byId.get(wantsVitest.id)?.stale?.reason).toMatch(/no longer matches package\.json/);
    expect(byId.get(noJest.id)?.stale?.reason).toMatch(/expects it to be absent/);
  });

  it("keeps the limit when stale rules are pushed down: the next best rule takes their place", async () => {
    const { deps } = setup();
    const gone = await remember(deps, "Cache docker layers for the build cache", { verifyFile: "Dockerfile" });
    const second = await remember(deps, "Cache docker build layers");
    const result = await runOperation(contextOperation, deps, { task: "docker build cache layers", workspace: WORKSPACE, limit: 1 });
    expect(result.relevantBullets.map((b) => b.id)).toEqual([second.id]);
    expect(gone.id).not.toBe(second.id);
  });

  it("never shows expired or not-yet-valid rules; list still has them", async () => {
    const { deps } = setup();
    const expired = await remember(deps, "Pin node 18 in CI images", { validTo: "2025-12-31" });
    const future = await remember(deps, "Pin node 24 in CI images", { validFrom: "2026-06-01" });
    const current = await remember(deps, "Pin node 22 in CI images", { validTo: "90d" });
    const result = await runOperation(contextOperation, deps, { task: "pin node version in CI images" });
    expect(result.relevantBullets.map((b) => b.id)).toEqual([current.id]);
    const listed = await runOperation(playbookListOperation, deps, {});
    expect(listed.bullets.map((b) => b.id)).toEqual([current.id]);
    const all = await runOperation(playbookListOperation, deps, { all: true });
    expect(all.bullets.map((b) => b.id)).toEqual([expired.id, future.id, current.id]);
  });

  it("trims to --max-tokens lowest ranked first and says what it removed", async () => {
    const episodic = createFakeEpisodicSource({
      hits: Array.from({ length: 5 }, (_, i) => ({
        source_path: `/s/${i}.jsonl`,
        line_number: i,
        agent: "claude",
        snippet: `webpack build failed ${"x".repeat(200)}`,
        origin: { kind: "local" as const },
      })),
    });
    const { deps: base } = setup();
    const deps = { ...base, episodic };
    for (let i = 0; i < 6; i++) await remember(deps, `Webpack build rule number ${i} ${"detail ".repeat(i * 3)}`);
    const full = await runOperation(contextOperation, deps, { task: "webpack build failed" });
    expect(full.historySnippets).toHaveLength(5);
    expect(full.trimmed).toBeUndefined();
    const budget = 600;
    const trimmed = await runOperation(contextOperation, deps, { task: "webpack build failed", maxTokens: budget });
    expect(trimmed.trimmed).toBeDefined();
    expect(trimmed.trimmed!.estimatedTokens).toBeLessThanOrEqual(budget);
    expect(Math.ceil(JSON.stringify(trimmed).length / 4)).toBe(trimmed.trimmed!.estimatedTokens);
    expect(trimmed.trimmed!.historySnippets).toBe(5);
    // The kept rules are the best ranked ones, in order; the removed ones are the rest.
    const kept = trimmed.relevantBullets.map((b) => b.id);
    expect(kept).toEqual(full.relevantBullets.slice(0, kept.length).map((b) => b.id));
    // `trimmed` counts what was left out (ids are not listed: they would eat the budget).
    expect(trimmed.trimmed!.relevantBullets).toBe(full.relevantBullets.length - kept.length);
    expect(kept.length).toBeGreaterThan(0);
    await expectAppError(runOperation(contextOperation, deps, { task: "webpack", maxTokens: 0 }), "INVALID_INPUT");
  });

  it("--no-history skips the search; --min-score filters weak matches", async () => {
    const episodic = createFakeEpisodicSource();
    const { deps: base } = setup();
    const deps = { ...base, episodic };
    const strong = await remember(deps, "Use webpack persistent cache for webpack builds", { tags: ["webpack"] });
    await remember(deps, "Builds on CI should be reproducible");
    const result = await runOperation(contextOperation, deps, { task: "webpack builds", noHistory: true, minScore: 0.5 });
    expect(episodic.calls).toHaveLength(0);
    expect(result.degraded).toBeUndefined();
    expect(result.relevantBullets.map((b) => b.id)).toEqual([strong.id]);
    await expectAppError(runOperation(contextOperation, deps, { task: "webpack", minScore: -1 }), "INVALID_INPUT");
  });
});

describe("forget → undo → history", () => {
  it("forget blocks and deprecates; undo restores the exact prior state and unblocks; history lists both", async () => {
    const { deps, store } = setup();
    const bullet = await remember(deps, "Use moment.js for date math", { category: "dates" });
    await runOperation(markOperation, deps, { bulletId: bullet.id, helpful: true });
    deps.clock.advance(1000);
    const forgotten = await runOperation(forgetOperation, deps, { bulletId: bullet.id, reason: "moment is deprecated; use date-fns" });
    expect(forgotten).toEqual({ bulletId: bullet.id, action: "forgotten", inverted: false });
    expect((await store.readBlocked("global")).map((e) => e.id)).toEqual([bullet.id]);
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(0);

    deps.clock.advance(1000);
    const undone = await runOperation(undoOperation, deps, { bulletId: bullet.id });
    expect(undone).toMatchObject({
      action: "un-deprecate",
      restoredFromJournal: true,
      unblocked: 1,
      before: { deprecated: true, deprecationReason: "moment is deprecated; use date-fns" },
      after: { deprecated: false, state: "draft", maturity: "candidate" },
    });
    expect(await store.readBlocked("global")).toEqual([]);
    expect((await runOperation(playbookListOperation, deps, {})).bullets.map((b) => b.id)).toEqual([bullet.id]);

    const history = await runOperation(historyOperation, deps, { bulletId: bullet.id });
    expect(history.events.map((e) => [e.operation, e.change])).toEqual([
      ["add", "created"],
      ["feedback", "feedback"],
      ["forget", "deprecated"],
      ["undo", "restored"],
    ]);
    const [created, , forget, undo] = history.events;
    expect(created!.hashBefore).toBeNull();
    expect(forget!.reason).toBe("moment is deprecated; use date-fns");
    expect(forget!.before).toMatchObject({ deprecated: false, state: "draft" });
    expect(undo!.after).toMatchObject({ deprecated: false });
    expect(undo!.hashAfter).toBe(created!.hashAfter);
  });

  it("forget --invert adds the anti-pattern; undo retires it again", async () => {
    const { deps } = setup();
    const bullet = await remember(deps, "Always mock the database in integration tests", { tags: ["testing"] });
    const forgotten = await runOperation(forgetOperation, deps, { bulletId: bullet.id, reason: "Mocks hid a broken migration", invert: true });
    expect(forgotten.inverted).toBe(true);
    const listed = await runOperation(playbookListOperation, deps, {});
    const anti = listed.bullets.find((b) => b.id === forgotten.antiPatternId)!;
    expect(anti).toMatchObject({
      content: "AVOID: Always mock the database in integration tests. Mocks hid a broken migration",
      type: "anti-pattern",
      isNegative: true,
      tags: ["testing", "inverted"],
      sourceSessions: ["forget-command"],
    });
    const undone = await runOperation(undoOperation, deps, { bulletId: bullet.id });
    expect(undone).toMatchObject({ antiPatternDeprecated: anti.id });
    const after = await runOperation(playbookListOperation, deps, {});
    expect(after.bullets.map((b) => b.id)).toEqual([bullet.id]);
  });

  it("forget errors: missing reason, unknown bullet", async () => {
    const { deps } = setup();
    const bullet = await remember(deps, "Some rule");
    const missing = await expectAppError(runOperation(forgetOperation, deps, { bulletId: bullet.id }), "MISSING_REQUIRED");
    expect(missing.details).toMatchObject({ missing: "reason" });
    await expectAppError(runOperation(forgetOperation, deps, { bulletId: "b-nope", reason: "x" }), "BULLET_NOT_FOUND");
  });

  it("undo --feedback removes the last event and brings back a rule that feedback had deprecated", async () => {
    const { deps } = setup();
    const bullet = await remember(deps, "Use global state for everything");
    for (let i = 0; i < 3; i++) await runOperation(markOperation, deps, { bulletId: bullet.id, harmful: true, reason: "caused_bug" });
    const marked = await runOperation(markOperation, deps, { bulletId: bullet.id, harmful: true });
    expect(marked.newState).toBe("deprecated");
    const undone = await runOperation(undoOperation, deps, { bulletId: bullet.id, feedback: true });
    expect(undone).toMatchObject({ action: "undo-feedback", before: { harmfulCount: 4 }, after: { harmfulCount: 3, feedbackEventsCount: 3 } });
    await expectAppError(runOperation(undoOperation, deps, { bulletId: "b-none", feedback: true }), "BULLET_NOT_FOUND");
    const fresh = await remember(deps, "No feedback yet");
    await expectAppError(runOperation(undoOperation, deps, { bulletId: fresh.id, feedback: true }), "INVALID_INPUT");
    await expectAppError(runOperation(undoOperation, deps, { bulletId: fresh.id }), "INVALID_INPUT");
  });

  it("undo --hard needs yes, dry-run changes nothing, and history survives the deletion", async () => {
    const { deps } = setup();
    const bullet = await remember(deps, "Delete me");
    const plan = await runOperation(undoOperation, deps, { bulletId: bullet.id, hard: true, dryRun: true });
    expect(plan).toMatchObject({ plan: { dryRun: true, action: "hard-delete", applyCommand: `cm undo ${bullet.id} --hard --yes` } });
    const refused = await expectAppError(runOperation(undoOperation, deps, { bulletId: bullet.id, hard: true }), "MISSING_REQUIRED");
    expect(refused.details).toMatchObject({ confirmPhrase: "DELETE" });
    expect((await runOperation(playbookListOperation, deps, {})).bullets).toHaveLength(1);
    await runOperation(undoOperation, deps, { bulletId: bullet.id, hard: true, yes: true });
    const history = await runOperation(historyOperation, deps, { bulletId: bullet.id });
    expect(history.location).toBeNull();
    expect(history.events.map((e) => e.change)).toEqual(["created", "deleted"]);
    await expectAppError(runOperation(historyOperation, deps, { bulletId: "b-never" }), "BULLET_NOT_FOUND");
  });

  it("journals imports and marks with their source", async () => {
    const { deps } = setup();
    await runOperation(playbookImportOperation, deps, {
      file: "/tmp/rules.json",
      data: [{ id: "b-imp", content: "Imported rule", category: "general" }],
    });
    await runOperation(markOperation, deps, { bulletId: "b-imp", helpful: true, session: "/s/claude.jsonl" });
    const history = await runOperation(historyOperation, deps, { bulletId: "b-imp" });
    expect(history.events.map((e) => [e.operation, e.source])).toEqual([
      ["import", "/tmp/rules.json"],
      ["feedback", "/s/claude.jsonl"],
    ]);
    expect(history.events[1]!.after).toMatchObject({ helpfulCount: 1, feedbackEvents: 1 });
  });
});

describe("recall", () => {
  it("returns matching rules and anti-patterns best first, plus history", async () => {
    const episodic = createFakeEpisodicSource({
      hits: [{ source_path: "/s/a.jsonl", line_number: 3, agent: "codex", snippet: "fixed the redis timeout", origin: { kind: "local" } }],
    });
    const { deps: base } = setup();
    const deps = { ...base, episodic };
    const rule = await remember(deps, "Set a redis connect timeout", { tags: ["redis"] });
    await remember(deps, "Unrelated frontend rule");
    const result = await runOperation(recallOperation, deps, { query: "redis timeout" });
    expect(result.bullets.map((b) => b.id)).toEqual([rule.id]);
    expect(result.historySnippets.map((s) => s.sessionPath)).toEqual(["/s/a.jsonl"]);
    await expectAppError(runOperation(recallOperation, deps, { query: " " }), "INVALID_INPUT");
    const noHistory = await runOperation(recallOperation, deps, { query: "redis", history: false });
    expect(noHistory.historySnippets).toEqual([]);
  });
});

describe("playbook add keeps its original shape", () => {
  it("reports target global", async () => {
    const { deps } = setup();
    const result = await runOperation(playbookAddOperation, deps, { content: "A rule" });
    expect(result).toMatchObject({ target: "global" });
  });
});
