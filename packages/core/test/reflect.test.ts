import { describe, expect, it } from "vitest";
import { AppError } from "../src/errors.js";
import { reflectOperation } from "../src/operations/reflect.js";
import { undoRunOperation } from "../src/operations/undo-run.js";
import { markOperation } from "../src/operations/mark.js";
import { whyOperation } from "../src/operations/why.js";
import { playbookAddOperation } from "../src/operations/playbook-add.js";
import { runOperation } from "../src/operation.js";
import type { Delta } from "../src/schemas/records.js";
import type { DiaryWriter, EpisodicSource, LearningComponents, Reflector, SessionSummary, Validator } from "../src/ports.js";
import { createFakeEpisodicSource, createMemoryStore, createTestBullet, createTestDeps } from "../src/testing.js";
import { expectAppError } from "./support.js";
import { defaultConfig } from "../src/schemas/config.js";

const S1 = "/home/u/.claude/projects/-work-api/s1.jsonl";
const S2 = "/home/u/.codex/sessions/2026/11/20/rollout-s2.jsonl";

const TEXT_1 = [
  "[user] The payments tests fail in CI with ECONNREFUSED 127.0.0.1:5432.",
  "[assistant] The postgres service has no health check, so migrations start too early.",
  "[tool] Error: connect ECONNREFUSED 127.0.0.1:5432",
  "[assistant] Fixed the pipeline: it waits with pg_isready now. All tests pass.",
  "// [cass: helpful b-existing-rule1] - transactional migrations made the retry safe",
  "[assistant] Lesson: In CI, wait for the Postgres service with pg_isready before running migrations.",
  "[user] Great, that worked. Thanks!",
].join("\n");

const TEXT_2 = [
  "[user] OrdersList.test.tsx is flaky on CI: Unable to find role row.",
  "[assistant] The fix was to await findAllByRole('row') instead of getAllByRole, so the assertion waits for the data.",
  "[assistant] Never use fixed setTimeout sleeps in React tests to wait for data; await a findBy query instead.",
  "[user] Perfect, ship it.",
].join("\n");

function sessions(): SessionSummary[] {
  return [
    { path: S1, agent: "claude_code", endTime: "2026-11-18T10:00:00.000Z" },
    { path: S2, agent: "codex", endTime: "2026-11-20T10:00:00.000Z" },
  ];
}

function setup(options: { learning?: LearningComponents; episodic?: EpisodicSource } = {}) {
  const store = createMemoryStore({ repo: false });
  const deps = createTestDeps(store, {
    episodic: options.episodic ?? createFakeEpisodicSource({ sessions: sessions(), exports: { [S1]: TEXT_1, [S2]: TEXT_2 } }),
    ...(options.learning !== undefined ? { learning: options.learning } : {}),
  });
  return { store, deps };
}

async function seedRule(deps: ReturnType<typeof setup>["deps"], id: string, content: string) {
  await deps.store.mutatePlaybook("global", (playbook) => {
    playbook.bullets.push(createTestBullet({ id, content, category: "ci" }));
  });
}

/** A scripted "LLM": the components record their calls and answer from a script. */
function scripted(reflections: Record<string, Delta[]>, verdicts: Validator["judge"] = async () => ({ verdict: "ACCEPT", confidence: 0.9, reason: "ok", supporting: [], contradicting: [] })) {
  const calls = { diary: 0, reflect: [] as Array<{ path: string; iteration: number }>, judge: 0 };
  const diaryWriter: DiaryWriter = {
    kind: "llm",
    async write(session) {
      calls.diary++;
      return { status: "success", accomplishments: [`Worked on ${session.path}`], decisions: [], challenges: [], preferences: [], keyLearnings: ["k"], tags: ["ci"], searchAnchors: ["postgres"] };
    },
  };
  const reflector: Reflector = {
    kind: "llm",
    async reflect(input) {
      calls.reflect.push({ path: input.session.path, iteration: input.iteration });
      return input.iteration === 1 ? structuredClone(reflections[input.session.path] ?? []) : [];
    },
  };
  const validator: Validator = {
    kind: "llm",
    async judge(input) {
      calls.judge++;
      return verdicts(input);
    },
  };
  const learning: LearningComponents = { mode: "llm", model: { provider: "test", model: "scripted" }, diaryWriter, reflector, validator };
  return { learning, calls };
}

describe("reflect without an LLM (deterministic components)", () => {
  it("processes new sessions once: diaries, lessons as rules, inline feedback, processed log", async () => {
    const { deps, store } = setup();
    await seedRule(deps, "b-existing-rule1", "Run database migrations inside a single transaction");
    const first = await runOperation(reflectOperation, deps, { days: 30 });
    expect(first.errors).toEqual([]);
    expect(first.mode).toBe("deterministic");
    expect(first.sessionsProcessed).toBe(2);
    expect(first.runId).toMatch(/^run-/);
    expect(first.deltasApplied).toBe((first.global?.applied ?? 0) + (first.repo?.applied ?? 0));
    expect(first.deltasApplied).toBeGreaterThan(0);
    expect(first.message).toBe(`Applied ${first.deltasApplied} changes from 2 sessions`);
    const playbook = (await store.readPlaybook("global"))!;
    const contents = playbook.bullets.map((b) => b.content);
    expect(contents.some((c) => /pg_isready/.test(c))).toBe(true);
    const negative = playbook.bullets.find((b) => /setTimeout/.test(b.content));
    expect(negative?.isNegative).toBe(true);
    // The inline comment became helpful feedback from session 1.
    const existing = playbook.bullets.find((b) => b.id === "b-existing-rule1")!;
    expect(existing.helpfulCount).toBe(1);
    expect(existing.feedbackEvents.at(-1)?.sessionPath).toBe(S1);
    // Diaries saved, sessions recorded as processed.
    expect((await store.listDiaries()).map((d) => d.sessionPath).sort()).toEqual([S1, S2].sort());
    expect((await store.readProcessedSessions("global")).map((r) => r.sessionPath).sort()).toEqual([S1, S2].sort());

    // `why` on a learned rule shows the diary of the session it came from.
    const learned = playbook.bullets.find((b) => /pg_isready/.test(b.content))!;
    const why = await runOperation(whyOperation, deps, { bulletId: learned.id });
    expect(why.sourceSessions).toEqual([{ path: S1, date: "2026-01-01", snippet: expect.stringContaining("") }]);
    expect(why.sourceSessions[0]!.snippet).not.toBeNull();
    expect(why.diaryEntries.length).toBe(2);

    const second = await runOperation(reflectOperation, deps, { days: 30 });
    expect(second.sessionsProcessed).toBe(0);
    expect(second.runId).toBeUndefined();
    expect((await store.readPlaybook("global"))!.bullets.length).toBe(playbook.bullets.length);
  });

  it("dry run writes nothing and returns the deltas", async () => {
    const { deps, store } = setup();
    const result = await runOperation(reflectOperation, deps, { days: 30, dryRun: true });
    expect(result.deltas!.length).toBeGreaterThan(0);
    expect(result.runId).toBeUndefined();
    expect(await store.readPlaybook("global")).toBeNull();
    expect(await store.listDiaries()).toEqual([]);
    expect(await store.readProcessedSessions("global")).toEqual([]);
  });

  it("--session reflects on one file and skips it once processed; --max-sessions bounds the run", async () => {
    const { deps } = setup();
    const one = await runOperation(reflectOperation, deps, { session: S2 });
    expect(one.sessions.map((s) => s.path)).toEqual([S2]);
    const again = await runOperation(reflectOperation, deps, { session: S2 });
    expect(again.sessionsProcessed).toBe(0);
    expect(again.sessions[0]).toMatchObject({ status: "skipped", reason: "already processed" });
    const bounded = await runOperation(reflectOperation, deps, { days: 30, maxSessions: 1 });
    expect(bounded.sessions.map((s) => s.path)).toEqual([S1]);
  });

  it("a session that cannot be read is reported and not marked processed", async () => {
    const episodic = createFakeEpisodicSource({ sessions: sessions(), exports: { [S2]: TEXT_2 } });
    const { deps, store } = setup({ episodic });
    const result = await runOperation(reflectOperation, deps, { days: 30 });
    expect(result.errors).toEqual([expect.stringContaining(`Failed to process ${S1}`)]);
    expect((await store.readProcessedSessions("global")).map((r) => r.sessionPath)).toEqual([S2]);
  });

  it("rejects bad numbers with a hint", async () => {
    const { deps } = setup();
    const error = await expectAppError(runOperation(reflectOperation, deps, { days: 0 }), "INVALID_INPUT");
    expect(error.hint).toContain("--days");
  });
});

describe("cross-agent enrichment", () => {
  it("records other agents' related sessions on the diary and audits it only with consent", async () => {
    const hits = [
      { source_path: "/h/codex-1.jsonl", line_number: 3, agent: "codex", snippet: "postgres pg_isready wait loop in CI fixed it", score: 4.2, origin: { kind: "local" as const } },
      { source_path: "/h/claude-2.jsonl", line_number: 1, agent: "claude_code", snippet: "postgres container health check", score: 3.1, origin: { kind: "local" as const } },
    ];
    const { learning } = scripted({});
    const run = async (crossAgent: Partial<ReturnType<typeof defaultConfig>["crossAgent"]>) => {
      const store = createMemoryStore({ repo: false });
      const config = { ...defaultConfig(), crossAgent: { ...defaultConfig().crossAgent, ...crossAgent } };
      const episodic = createFakeEpisodicSource({ sessions: sessions(), exports: { [S1]: TEXT_1, [S2]: TEXT_2 }, hits });
      const deps = createTestDeps(store, { episodic, learning, config });
      await runOperation(reflectOperation, deps, { session: S1 });
      return { diary: (await store.listDiaries())[0]!, audit: (await store.readLog("global", "privacy-audit")).records };
    };
    const without = await run({});
    expect(without.diary.relatedSessions).toEqual([]);
    expect(without.audit).toEqual([]);
    const withConsent = await run({ enabled: true, consentGiven: true });
    expect(withConsent.diary.relatedSessions).toEqual([{ sessionPath: "/h/codex-1.jsonl", agent: "codex", relevanceScore: 4.2, snippet: "postgres pg_isready wait loop in CI fixed it" }]);
    expect(withConsent.audit).toEqual([
      expect.objectContaining({ event: "cross_agent_enrichment", sourceAgent: "claude", relatedSessionCount: 1, relatedAgents: ["codex"], sourceSessionHash: expect.stringMatching(/^[0-9a-f]{16}$/) }),
    ]);
    expect(JSON.stringify(withConsent.audit)).not.toContain(S1);
    const noAuditLog = await run({ enabled: true, consentGiven: true, auditLog: false });
    expect(noAuditLog.diary.relatedSessions).toHaveLength(1);
    expect(noAuditLog.audit).toEqual([]);
  });
});

describe("reflect with scripted model components", () => {
  it("applies the validated deltas the model proposes, refined wording included, and routes by layer", async () => {
    const store = createMemoryStore({ repo: true });
    const hits = [
      { source_path: "/h/a.jsonl", line_number: 1, agent: "codex", snippet: "fixed the flaky test by awaiting findByRole", origin: { kind: "local" as const } },
      { source_path: "/h/b.jsonl", line_number: 1, agent: "codex", snippet: "error: flaky test timed out waiting for rows", origin: { kind: "local" as const } },
    ];
    const episodic = createFakeEpisodicSource({ sessions: sessions(), exports: { [S1]: TEXT_1, [S2]: TEXT_2 }, hits });
    const { learning, calls } = scripted(
      {
        [S2]: [
          { type: "add", bullet: { content: "Await findByRole for rows that render after a fetch in flaky tests", category: "testing" }, reason: "flaky test", sourceSession: "" },
          { type: "replace", bulletId: "b-repo-rule", newContent: "Use msw for HTTP mocks in component tests, never fake timers" },
          { type: "helpful", bulletId: "b-global-rule" },
        ],
      },
      async (input) =>
        /findByRole/.test(input.rule)
          ? { verdict: "REFINE", confidence: 0.7, reason: "more specific", supporting: ["a"], contradicting: [], refinedRule: "In flaky React tests, await findAllByRole('row') for rows rendered after a fetch" }
          : { verdict: "ACCEPT", confidence: 0.9, reason: "ok", supporting: [], contradicting: [] },
    );
    const deps = createTestDeps(store, { episodic, learning });
    await deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-global-rule", content: "Run the flaky test 20 times before calling it fixed" })));
    await deps.store.mutatePlaybook("repo", (p) => void p.bullets.push(createTestBullet({ id: "b-repo-rule", content: "Use msw for HTTP mocks" })));

    const result = await runOperation(reflectOperation, deps, { session: S2 });
    expect(result.mode).toBe("llm");
    expect(result.model).toEqual({ provider: "test", model: "scripted" });
    expect(calls.reflect).toEqual([
      { path: S2, iteration: 1 },
      { path: S2, iteration: 2 },
    ]);
    expect(calls.judge).toBe(1);
    expect(result.validation).toEqual([expect.objectContaining({ valid: true, verdict: "REFINE" })]);
    const global = (await store.readPlaybook("global"))!;
    const added = global.bullets.find((b) => /findAllByRole/.test(b.content));
    expect(added?.content).toBe("In flaky React tests, await findAllByRole('row') for rows rendered after a fetch");
    expect(added?.sourceSessions).toEqual([S2]);
    expect(global.bullets.find((b) => b.id === "b-global-rule")!.helpfulCount).toBe(1);
    const repo = (await store.readPlaybook("repo"))!;
    expect(repo.bullets.find((b) => b.id === "b-repo-rule")!.content).toBe("Use msw for HTTP mocks in component tests, never fake timers");
    expect(result.global?.applied).toBeGreaterThanOrEqual(2);
    expect(result.repo?.applied).toBe(1);
  });

  it("a failing model falls back to the deterministic components when allowed, and fails the session when not", async () => {
    const failing: Reflector = {
      kind: "llm",
      async reflect() {
        throw new AppError("LLM_BUDGET_EXCEEDED", "LLM budget exceeded: Daily budget exceeded ($0.00 / $0.00)");
      },
    };
    const { learning } = scripted({});
    const { createDeterministicDiaryWriter, createDeterministicReflector, createDeterministicValidator } = await import("../src/index.js");
    const fallback = { diaryWriter: createDeterministicDiaryWriter(), reflector: createDeterministicReflector(), validator: createDeterministicValidator() };

    const withFallback = setup({ learning: { ...learning, reflector: failing, fallback } });
    const ok = await runOperation(reflectOperation, withFallback.deps, { session: S2 });
    expect(ok.errors).toEqual([]);
    expect(ok.fallbacks).toEqual([expect.objectContaining({ component: "reflector", code: "LLM_BUDGET_EXCEEDED" })]);
    // The diary came from the LLM, the rules from the deterministic reflector: not "llm".
    expect(ok.mode).toBe("mixed");
    expect((await withFallback.store.readPlaybook("global"))!.bullets.some((b) => /setTimeout/.test(b.content))).toBe(true);

    // llmFallback "none": the run fails with the LLM's error, and nothing is written (no diary either).
    const strict = setup({ learning: { ...learning, reflector: failing } });
    const failed = runOperation(reflectOperation, strict.deps, { session: S2 });
    await expect(failed).rejects.toMatchObject({ code: "LLM_BUDGET_EXCEEDED", details: { component: "reflector", llmFallback: "none" } });
    await expect(failed).rejects.toThrow(/llmFallback is "none", so the run stopped and nothing was written/);
    expect(await strict.store.readProcessedSessions("global")).toEqual([]);
    expect(await strict.store.readPlaybook("global")).toBeNull();
    expect(await strict.store.listDiaries({ limit: 10 })).toEqual([]);
  });

  it("a canned generic rule is rejected by the evidence gate; a grounded rule with no history is added unvalidated, as a draft", async () => {
    const generic = "Drink plenty of water and take regular breaks to stay productive";
    const grounded = "Add a pg_isready health check to the postgres service before running migrations in CI";
    const { learning, calls } = scripted({
      [S1]: [
        { type: "add", bullet: { content: generic, category: "general" }, reason: "generic life advice", sourceSession: "" },
        { type: "add", bullet: { content: grounded, category: "ci" }, reason: "stated", sourceSession: "" },
      ],
    });
    const { deps, store } = setup({ learning });
    const result = await runOperation(reflectOperation, deps, { session: S1 });
    const byContent = new Map(result.validation.map((v) => [v.content, v]));
    expect(byContent.get(generic)).toMatchObject({ valid: false, verdict: "REJECT" });
    expect(byContent.get(generic)!.reason).toMatch(/Not grounded in its session/);
    expect(byContent.get(grounded)).toMatchObject({ valid: true, unvalidated: true });
    expect(byContent.get(grounded)!.reason).toMatch(/nothing to validate it against: added unvalidated, as a draft candidate/);
    // No history to weigh: the validator was not asked, and the report says so rather than "accepted".
    expect(calls.judge).toBe(0);
    const bullets = (await store.readPlaybook("global"))!.bullets;
    expect(bullets.map((b) => b.content)).toContain(grounded);
    expect(bullets.map((b) => b.content)).not.toContain(generic);
    expect(bullets.find((b) => b.content === grounded)).toMatchObject({ maturity: "candidate" });
  });

  it("after a failed LLM stage every later stage is listed as switched, and the mode says deterministic", async () => {
    const failingDiary: DiaryWriter = {
      kind: "llm",
      async write() {
        throw new AppError("LLM_API_ERROR", "connection refused");
      },
    };
    const { learning } = scripted({ [S2]: [{ type: "add", bullet: { content: "Never call the model reflector here", category: "testing" }, reason: "", sourceSession: "" }] });
    const { createDeterministicDiaryWriter, createDeterministicReflector, createDeterministicValidator } = await import("../src/index.js");
    const fallback = { diaryWriter: createDeterministicDiaryWriter(), reflector: createDeterministicReflector(), validator: createDeterministicValidator() };
    const { deps } = setup({ learning: { ...learning, diaryWriter: failingDiary, fallback } });
    const result = await runOperation(reflectOperation, deps, { session: S2 });
    expect(result.fallbacks.map((f) => f.component)).toEqual(["diaryWriter", "reflector"]);
    expect(result.fallbacks[0]).toMatchObject({ code: "LLM_API_ERROR", reason: "connection refused" });
    expect(result.fallbacks[1]!.reason).toMatch(/not tried: the LLM diaryWriter failed earlier in this run/);
    // No LLM call answered anything in this run.
    expect(result.mode).toBe("deterministic");
    // The scripted LLM reflector's rule was never asked for.
    expect(result.validation.some((v) => /model reflector/.test(v.content))).toBe(false);
  });

  it("merges become an add plus deprecations into it", async () => {
    const { learning } = scripted({
      [S1]: [{ type: "merge", bulletIds: ["b-m1", "b-m2"], mergedContent: "Wait for Postgres with pg_isready before migrating in CI", reason: "same rule twice" }],
    });
    const { deps, store } = setup({ learning });
    await deps.store.mutatePlaybook("global", (p) => {
      p.bullets.push(createTestBullet({ id: "b-m1", content: "Wait for the database in CI" }));
      p.bullets.push(createTestBullet({ id: "b-m2", content: "Use pg_isready before migrations" }));
    });
    await runOperation(reflectOperation, deps, { session: S1 });
    const bullets = (await store.readPlaybook("global"))!.bullets;
    const merged = bullets.find((b) => b.content.startsWith("Wait for Postgres"))!;
    expect(merged).toBeDefined();
    for (const id of ["b-m1", "b-m2"]) {
      const source = bullets.find((b) => b.id === id)!;
      expect(source.deprecated).toBe(true);
      expect(source.replacedBy).toBe(merged.id);
    }
  });

  it("two reflections at once never process a session twice", async () => {
    const { deps, store } = setup();
    const [a, b] = await Promise.all([runOperation(reflectOperation, deps, { days: 30 }), runOperation(reflectOperation, deps, { days: 30 })]);
    expect(a.sessionsProcessed + b.sessionsProcessed).toBe(2);
    expect((await store.readProcessedSessions("global")).length).toBe(2);
  });
});

describe("undo --run", () => {
  it("restores the playbook to what it would be without the run, keeping later unrelated edits", async () => {
    const { learning } = scripted({
      [S1]: [
        { type: "add", bullet: { content: "Give database service containers a health check in GitHub Actions", category: "ci" }, reason: "", sourceSession: "" },
        { type: "helpful", bulletId: "b-keep-1" },
        { type: "replace", bulletId: "b-keep-2", newContent: "Pin the postgres image to a major version (postgres:16) in CI" },
        { type: "deprecate", bulletId: "b-keep-3", reason: "superseded by the health check" },
      ],
    });
    const { deps, store } = setup({ learning });
    await deps.store.mutatePlaybook("global", (p) => {
      p.bullets.push(createTestBullet({ id: "b-keep-1", content: "Run migrations in one transaction", helpfulCount: 1, feedbackEvents: [{ type: "helpful", timestamp: "2026-01-01T00:00:00.000Z" }] }));
      p.bullets.push(createTestBullet({ id: "b-keep-2", content: "Pin the postgres image" }));
      p.bullets.push(createTestBullet({ id: "b-keep-3", content: "Sleep 10 seconds before migrating in CI" }));
    });
    const before = structuredClone((await store.readPlaybook("global"))!.bullets);

    const run = await runOperation(reflectOperation, deps, { session: S1 });
    expect(run.runId).toBeDefined();
    deps.clock.advance(60_000);
    // Later, unrelated edits: new feedback on a rule the run also touched, and a new rule.
    await runOperation(markOperation, deps, { bulletId: "b-keep-1", helpful: true, session: "/later/session.jsonl" });
    const later = await runOperation(playbookAddOperation, deps, { content: "Cache the pnpm store between CI runs", category: "ci" });

    const reverted = await runOperation(undoRunOperation, deps, { runId: run.runId! });
    expect(reverted.conflicts).toEqual([]);
    const after = (await store.readPlaybook("global"))!.bullets;
    const laterId = (later as { bullet?: { id: string } }).bullet?.id ?? after.find((b) => /pnpm store/.test(b.content))!.id;
    expect(after.map((b) => b.id).sort()).toEqual([...before.map((b) => b.id), laterId].sort());
    for (const original of before) {
      const now = after.find((b) => b.id === original.id)!;
      expect(now.content).toBe(original.content);
      expect(Boolean(now.deprecated)).toBe(Boolean(original.deprecated));
      if (original.id === "b-keep-1") {
        // The run's helpful event is gone; the later mark stays.
        expect(now.feedbackEvents.map((e) => e.sessionPath ?? null)).toEqual([null, "/later/session.jsonl"]);
        expect(now.helpfulCount).toBe(2);
      } else {
        expect(now.feedbackEvents).toEqual(original.feedbackEvents);
        expect(now.maturity).toBe(original.maturity);
      }
    }
    await expectAppError(runOperation(undoRunOperation, deps, { runId: run.runId! }), "INVALID_INPUT");
    await expectAppError(runOperation(undoRunOperation, deps, { runId: "run-nope" }), "INVALID_INPUT");
  });

  it("keeps a field that changed again after the run and reports the conflict; --dry-run changes nothing", async () => {
    const { learning } = scripted({ [S1]: [{ type: "replace", bulletId: "b-c1", newContent: "Wait for Postgres with pg_isready" }] });
    const { deps, store } = setup({ learning });
    await deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-c1", content: "Wait for the database" })));
    const run = await runOperation(reflectOperation, deps, { session: S1 });
    await deps.store.mutatePlaybook("global", (p) => {
      p.bullets.find((b) => b.id === "b-c1")!.content = "Edited by hand later";
    });
    const dry = await runOperation(undoRunOperation, deps, { runId: run.runId!, dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.conflicts).toEqual([expect.objectContaining({ bulletId: "b-c1", field: "content" })]);
    const reverted = await runOperation(undoRunOperation, deps, { runId: run.runId! });
    expect(reverted.conflicts).toHaveLength(1);
    expect((await store.readPlaybook("global"))!.bullets[0]!.content).toBe("Edited by hand later");
  });
});
