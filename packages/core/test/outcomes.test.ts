import { describe, expect, it } from "vitest";
import {
  applyImplicitFeedback,
  classifySessionOutcome,
  countTranscriptErrors,
  detectSentiment,
  extractRuleIdsFromTranscript,
  implicitFeedbackEvent,
  scoreImplicitFeedback,
  sentimentTail,
  transcriptHasRetries,
  type OutcomeInput,
} from "../src/learning/outcomes.js";
import { runOperation } from "../src/operation.js";
import {
  applyOutcomeFeedback,
  backfillRulesFromContextLog,
  outcomeApplyOperation,
  outcomeOperation,
  readOutcomeLog,
  recordOutcomes,
} from "../src/operations/outcome.js";
import { defaultConfig } from "../src/schemas/config.js";
import type { Bullet } from "../src/schemas/playbook.js";
import { OutcomeRecordSchema, type ContextLogEntry, type OutcomeRecord } from "../src/schemas/records.js";
import { createFakeClock, createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore, MEMORY_GLOBAL_DIR, MEMORY_REPO_DIR } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const T0 = "2026-03-10T12:00:00.000Z";

// ---------------------------------------------------------------------------------------------
// Domain: scoring (reference §5.7)

type Signals = Parameters<typeof scoreImplicitFeedback>[0];
const many = (n: number): string[] => Array.from({ length: n }, (_, i) => `b-rule${i}x`);

describe("scoreImplicitFeedback", () => {
  const cases: Array<[string, Signals, { type: "helpful" | "harmful"; weight: number; context: string } | null]> = [
    ["success", { outcome: "success" }, { type: "helpful", weight: 1, context: "success" }],
    ["failure", { outcome: "failure" }, { type: "harmful", weight: 1, context: "failure" }],
    ["mixed alone: tiny helpful", { outcome: "mixed" }, { type: "helpful", weight: 0.1, context: "mixed" }],
    ["partial alone: tiny helpful", { outcome: "partial" }, { type: "helpful", weight: 0.1, context: "partial" }],
    ["fast success", { outcome: "success", durationSec: 300 }, { type: "helpful", weight: 1.5, context: "success, fast" }],
    ["a fast failure is not 'fast'", { outcome: "failure", durationSec: 300 }, { type: "harmful", weight: 1, context: "failure" }],
    ["duration 0 is not fast", { outcome: "success", durationSec: 0 }, { type: "helpful", weight: 1, context: "success" }],
    ["600 s is neither fast nor slow", { outcome: "success", durationSec: 600 }, { type: "helpful", weight: 1, context: "success" }],
    ["3600 s is not slow", { outcome: "success", durationSec: 3600 }, { type: "helpful", weight: 1, context: "success" }],
    ["slow success stays helpful", { outcome: "success", durationSec: 3601 }, { type: "helpful", weight: 1, context: "success, slow" }],
    ["slow failure", { outcome: "failure", durationSec: 7200 }, { type: "harmful", weight: 1.3, context: "failure, slow" }],
    ["two errors", { outcome: "failure", errorCount: 2 }, { type: "harmful", weight: 1.7, context: "failure, errors>=2" }],
    ["one error", { outcome: "failure", errorCount: 1 }, { type: "harmful", weight: 1.3, context: "failure, error" }],
    ["zero errors add nothing", { outcome: "failure", errorCount: 0 }, { type: "harmful", weight: 1, context: "failure" }],
    ["retries", { outcome: "failure", hadRetries: true }, { type: "harmful", weight: 1.5, context: "failure, retries" }],
    ["positive sentiment", { outcome: "success", sentiment: "positive" }, { type: "helpful", weight: 1.3, context: "success, sentiment+" }],
    ["negative sentiment", { outcome: "failure", sentiment: "negative" }, { type: "harmful", weight: 1.5, context: "failure, sentiment-" }],
    ["neutral sentiment adds nothing", { outcome: "success", sentiment: "neutral" }, { type: "helpful", weight: 1, context: "success" }],
    [
      "everything helpful stays below the cap",
      { outcome: "success", durationSec: 60, sentiment: "positive" },
      { type: "helpful", weight: 1.8, context: "success, fast, sentiment+" },
    ],
    [
      "harmful weight is clamped to 2",
      { outcome: "failure", durationSec: 9000, errorCount: 5, hadRetries: true, sentiment: "negative" },
      { type: "harmful", weight: 2, context: "failure, slow, errors>=2, retries, sentiment-" },
    ],
    ["failure with some good signals is still harmful (harm >= help)", { outcome: "failure", sentiment: "positive" }, { type: "harmful", weight: 1, context: "failure, sentiment+" }],
    [
      "outside a failure, harm needs a margin of 1.0 (exactly 1.0 counts)",
      { outcome: "mixed", errorCount: 2, durationSec: 4000 },
      { type: "harmful", weight: 1.1, context: "mixed, slow, errors>=2" },
    ],
    ["below the margin and more harm than help: no signal", { outcome: "mixed", errorCount: 2 }, null],
    ["success with many problems: no signal", { outcome: "success", errorCount: 2, hadRetries: true }, null],
    [
      "success, clearly harmful",
      { outcome: "success", errorCount: 3, hadRetries: true, sentiment: "negative", durationSec: 5000 },
      { type: "harmful", weight: 2, context: "success, slow, errors>=2, retries, sentiment-" },
    ],
    ["auto-graded failure naming more than 8 rules: harm not justified", { outcome: "failure", autoGraded: true, rulesUsed: many(9) }, null],
    ["auto-graded failure naming 8 rules", { outcome: "failure", autoGraded: true, rulesUsed: many(8) }, { type: "harmful", weight: 1, context: "failure" }],
    ["reported failure naming 9 rules", { outcome: "failure", rulesUsed: many(9) }, { type: "harmful", weight: 1, context: "failure" }],
    ["auto-graded success naming 9 rules stays helpful", { outcome: "success", autoGraded: true, rulesUsed: many(9) }, { type: "helpful", weight: 1, context: "success" }],
  ];
  it.each(cases)("%s", (_name, signals, expected) => {
    const scored = scoreImplicitFeedback(signals);
    if (expected === null) {
      expect(scored).toBeNull();
      return;
    }
    expect(scored).not.toBeNull();
    expect(scored!.type).toBe(expected.type);
    expect(scored!.decayedValue).toBeCloseTo(expected.weight, 10);
    expect(scored!.context).toBe(expected.context);
  });
});

describe("detectSentiment", () => {
  it.each([
    ["that worked, thanks!", "positive"],
    ["LGTM, ship it", "positive"],
    ["Looks good. Nice work.", "positive"],
    ["this doesn't work, please revert", "negative"],
    ["thanks, but that's wrong. start over", "negative"],
    ["that\u2019s not right", "negative"],
    ["Don't do that again. Roll back the migration", "negative"],
    ["great, but it broke the build", "neutral"],
    ["the greater good", "neutral"],
    ["", "neutral"],
    [undefined, "neutral"],
  ] as const)("%j → %s", (text, expected) => {
    expect(detectSentiment(text)).toBe(expected);
  });
});

describe("transcript heuristics", () => {
  it("extracts rule ids: digit required, lower-cased, de-duplicated, hex-preceded and excluded ids dropped", () => {
    const text = [
      "Following [b-mwtatpn6-yunoxy] and B-ABC123 here.",
      "Words like b-complete are not ids; cb-abc123 is part of a hash; b-abc12 is too short.",
      "Again b-abc123, and b-8f3a2c1.",
    ].join("\n");
    expect(extractRuleIdsFromTranscript(text)).toEqual(["b-mwtatpn6-yunoxy", "b-abc123", "b-8f3a2c1"]);
    expect(extractRuleIdsFromTranscript(text, ["B-ABC123"])).toEqual(["b-mwtatpn6-yunoxy", "b-8f3a2c1"]);
  });

  it("counts error words seen twice and each kind of rejection", () => {
    expect(countTranscriptErrors("Error once, failed once")).toBe(0);
    expect(countTranscriptErrors("Error: a\nerror: b\nfailed\nfailed\nTraceback\nTraceback\npanicked, panic")).toBe(4);
    expect(countTranscriptErrors("User denied the request. Permission denied. The tool call was rejected. The user has rejected it.")).toBe(4);
  });

  it("detects retries", () => {
    expect(transcriptHasRetries("Retrying the install")).toBe(true);
    expect(transcriptHasRetries("I will attempt the build again")).toBe(true);
    expect(transcriptHasRetries("Let me try another way")).toBe(true);
    expect(transcriptHasRetries("Everything passed")).toBe(false);
  });

  it("judges the tone on the last max(2000, 20%) characters", () => {
    const short = `thanks ${"x".repeat(2500)}`;
    expect(sentimentTail(short)).toHaveLength(2000);
    expect(sentimentTail(short)).not.toContain("thanks");
    const long = "y".repeat(20_000);
    expect(sentimentTail(long)).toHaveLength(4000);
    expect(sentimentTail("tiny")).toBe("tiny");
  });
});

describe("classifySessionOutcome", () => {
  const transcript = [
    "**user**: Please fix the flaky login test. Follow b-8f3a2c1 and [b-mwtatpn6-yunoxy].",
    "**assistant**: Running the tests... Error: timeout in login.spec.ts",
    "**assistant**: Still an Error: timeout. Let me try a different approach.",
    "**assistant**: The tool call was rejected.",
    "**assistant**: Permission denied writing /etc/hosts",
    "**assistant**: All tests pass now. // [cass: helpful b-77aa991] - saved time",
    "**user**: That worked, thanks!",
  ].join("\n");

  it("grades a hand-written session", () => {
    const outcome = classifySessionOutcome({
      sessionPath: "/home/dev/.claude/projects/app/s1.jsonl",
      text: transcript,
      status: "mixed",
      excludeIds: ["B-77AA991"],
      nowIso: T0,
    });
    expect(outcome).toEqual({
      sessionId: "/home/dev/.claude/projects/app/s1.jsonl",
      outcome: "mixed",
      rulesUsed: ["b-8f3a2c1", "b-mwtatpn6-yunoxy"],
      errorCount: 3,
      hadRetries: true,
      sentiment: "positive",
      autoGraded: true,
      recordedAt: T0,
    });
    // mixed 0.1/0.1, errors>=2 +0.7, retries +0.5, sentiment+ +0.3: help 0.4 vs harm 1.3 — below the margin.
    expect(scoreImplicitFeedback(outcome!)).toBeNull();
  });

  it("returns null when the session names no rule, and honours given rule ids", () => {
    expect(classifySessionOutcome({ sessionPath: "/s", text: "nothing to see", status: "success" })).toBeNull();
    const given = classifySessionOutcome({ sessionPath: "/s", text: "done", status: "success", ruleIds: ["B-X12345", "b-x12345", "b-y12345"], excludeIds: ["b-y12345"], durationSec: 42 });
    expect(given).toMatchObject({ rulesUsed: ["b-x12345"], durationSec: 42, errorCount: 0, hadRetries: false, sentiment: "neutral" });
    expect(given!.recordedAt).toBeUndefined();
  });
});

describe("applyImplicitFeedback", () => {
  const config = defaultConfig();
  const now = new Date(T0);
  const harmful = implicitFeedbackEvent({ feedback: { type: "harmful", decayedValue: 1, context: "failure" }, timestamp: T0, sessionPath: "/s/1" });

  it("adds the event once, with counters and maturity; a repeat returns null", () => {
    const bullet = createTestBullet({ id: "b-one111" });
    const event = implicitFeedbackEvent({ feedback: { type: "helpful", decayedValue: 1.5, context: "success, fast" }, timestamp: T0, sessionPath: "/s/1" });
    const next = applyImplicitFeedback(bullet, event, now, config)!;
    expect(next.feedbackEvents).toEqual([{ type: "helpful", timestamp: T0, sessionPath: "/s/1", context: "success, fast", decayedValue: 1.5 }]);
    expect(next.helpfulCount).toBe(1);
    expect(next.updatedAt).toBe(T0);
    expect(applyImplicitFeedback(next, { ...event }, now, config)).toBeNull();
    expect(harmful.reason).toBe("other");
  });

  it("retires a rule whose feedback turns it deprecated, but not a pinned one", () => {
    const earlier = (i: number) => ({ type: "harmful" as const, timestamp: `2026-03-10T0${i}:00:00.000Z`, sessionPath: `/s/old${i}`, decayedValue: 1 });
    const base = createTestBullet({ id: "b-two222", feedbackEvents: [earlier(8), earlier(9)], harmfulCount: 2, maturity: "candidate" });
    const next = applyImplicitFeedback(base, harmful, now, config)!;
    expect(next).toMatchObject({ maturity: "deprecated", deprecated: true, state: "retired", harmfulCount: 3 });
    const pinned = applyImplicitFeedback({ ...base, pinned: true } as Bullet, harmful, now, config)!;
    expect(pinned.maturity).toBe("candidate");
    expect(pinned.deprecated).toBeFalsy();
  });
});

// ---------------------------------------------------------------------------------------------
// Operations with the memory store

function setup(options: { repo?: boolean } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? true, now: () => T0 });
  const deps = createTestDeps(store, { clock: createFakeClock(T0) });
  return { store, deps };
}

async function seed(store: ReturnType<typeof createMemoryStore>, layer: "global" | "repo", ids: string[]): Promise<void> {
  await store.mutatePlaybook(layer, (pb) => {
    for (const id of ids) pb.bullets.push(createTestBullet({ id, content: `rule ${id} in ${layer}` }));
  });
}

async function bullet(store: ReturnType<typeof createMemoryStore>, layer: "global" | "repo", id: string): Promise<Bullet | undefined> {
  return (await store.readPlaybook(layer))?.bullets.find((b) => b.id === id);
}

describe("cm outcome (operation)", () => {
  it("applies feedback repo-first, reports missing rules, logs the outcome in .cass/ and journals the change", async () => {
    const { store, deps } = setup();
    await seed(store, "global", ["b-shared1", "b-global1"]);
    await seed(store, "repo", ["b-shared1"]);

    const result = await runOperation(outcomeOperation, deps, {
      status: "Success",
      rules: "b-shared1, b-global1,,b-gone1",
      session: "/s/1.jsonl",
      duration: 100,
    });
    expect(result).toEqual({ applied: 2, missing: ["b-gone1"], type: "helpful", weight: 1.5, sentiment: "neutral" });

    const expectedEvent = { type: "helpful", timestamp: T0, sessionPath: "/s/1.jsonl", context: "success, fast", decayedValue: 1.5 };
    expect((await bullet(store, "repo", "b-shared1"))!.feedbackEvents).toEqual([expectedEvent]);
    expect((await bullet(store, "global", "b-shared1"))!.feedbackEvents).toEqual([]);
    expect((await bullet(store, "global", "b-global1"))!.feedbackEvents).toEqual([expectedEvent]);
    expect((await bullet(store, "global", "b-global1"))!.helpfulCount).toBe(1);

    const logged = await readOutcomeLog(deps, "repo");
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      sessionId: "/s/1.jsonl",
      outcome: "success",
      rulesUsed: ["b-shared1", "b-global1", "b-gone1"],
      durationSec: 100,
      sentiment: "neutral",
      recordedAt: T0,
      path: `${MEMORY_REPO_DIR}/outcomes.jsonl`,
    });
    expect((await store.readLog("global", "outcomes")).records).toEqual([]);

    const repoJournal = await store.readJournal("repo");
    const last = repoJournal[repoJournal.length - 1]!;
    expect(last).toMatchObject({ operation: "feedback", change: "feedback", bulletId: "b-shared1", layer: "repo", source: "/s/1.jsonl" });
    expect(last.runId).toBeUndefined();
    expect((await store.readJournal("global")).filter((e) => e.operation === "feedback").map((e) => e.bulletId)).toEqual(["b-global1"]);
  });

  it("logs in the global directory when there is no repository, and records harmful feedback with reason other", async () => {
    const { store, deps } = setup({ repo: false });
    await seed(store, "global", ["b-g11111"]);
    const result = await runOperation(outcomeOperation, deps, { status: "FAILURE", rules: ["b-g11111"], errors: 3, text: "this doesn't work" });
    expect(result).toEqual({ applied: 1, missing: [], type: "harmful", weight: 2, sentiment: "negative" });
    const b = (await bullet(store, "global", "b-g11111"))!;
    expect(b.harmfulCount).toBe(1);
    expect(b.feedbackEvents[0]).toMatchObject({ type: "harmful", reason: "other", sessionPath: "cli-manual", context: "failure, errors>=2, sentiment-", decayedValue: 2 });
    const logged = await readOutcomeLog(deps, "global");
    expect(logged[0]).toMatchObject({ sessionId: "cli-manual", errorCount: 3, notes: "this doesn't work", path: `${MEMORY_GLOBAL_DIR}/outcomes.jsonl` });
  });

  it("sanitises the notes before logging them", async () => {
    const { store, deps } = setup({ repo: false });
    await seed(store, "global", ["b-g22222"]);
    await runOperation(outcomeOperation, deps, { status: "success", rules: "b-g22222", text: "used token=abcdefghijklmnopqrstuvwxyz0123 to log in" });
    const [record] = await readOutcomeLog(deps, "global");
    expect(record!.notes).toBe("used token=[TOKEN] to log in");
  });

  it("records nothing when the signals cancel out", async () => {
    const { store, deps } = setup({ repo: false });
    await seed(store, "global", ["b-g33333"]);
    const result = await runOperation(outcomeOperation, deps, { status: "mixed", rules: "b-g33333", errors: 1 });
    expect(result).toEqual({ feedbackRecorded: false, rulesProvided: ["b-g33333"] });
    expect((await store.readLog("global", "outcomes")).records).toEqual([]);
    expect((await bullet(store, "global", "b-g33333"))!.feedbackEvents).toEqual([]);
  });

  it("validates its input", async () => {
    const { deps } = setup({ repo: false });
    const bad = await expectAppError(runOperation(outcomeOperation, deps, { status: "done", rules: "b-x12345" }), "INVALID_INPUT");
    expect(bad.message).toBe("status must be one of: success, failure, mixed, partial.");
    expect(bad.details).toMatchObject({ allowed: ["success", "failure", "mixed", "partial"] });
    const none = await expectAppError(runOperation(outcomeOperation, deps, { status: "success", rules: " , " }), "MISSING_REQUIRED");
    expect(none.exitCode).toBe(2);
    const negative = await expectAppError(runOperation(outcomeOperation, deps, { status: "success", rules: "b-x12345", duration: -1 }), "INVALID_INPUT");
    expect(negative.message).toBe("duration must be >= 0.");
    await expectAppError(runOperation(outcomeOperation, deps, { status: "success", rules: "b-x12345", errors: 1.5 }), "INVALID_INPUT");
    await expectAppError(runOperation(outcomeOperation, deps, { status: "success", rules: "b-x12345", sentiment: "happy" }), "INVALID_INPUT");
  });
});

describe("recordOutcomes", () => {
  it("logs a batch, applies it with the run id on journal events and records, and is idempotent when re-applied", async () => {
    const { store, deps } = setup();
    await seed(store, "repo", ["b-r11111"]);
    await seed(store, "global", ["b-g11111"]);
    const inputs: OutcomeInput[] = [
      { sessionId: "/s/a", outcome: "success", rulesUsed: ["b-r11111", "b-g11111"], autoGraded: true, task: "password='hunter22hunter'" },
      { sessionId: "/s/a", outcome: "success", rulesUsed: ["b-r11111"], autoGraded: true },
      { sessionId: "/s/b", outcome: "failure", rulesUsed: ["b-missing9"], autoGraded: true },
    ];
    const result = await recordOutcomes(deps, inputs, { runId: "run-abc" });
    expect(result.applied).toBe(3);
    expect(result.missing).toEqual(["b-missing9"]);
    expect(result.logLayer).toBe("repo");
    expect(result.touched.sort()).toEqual(["b-g11111", "b-r11111"]);
    expect(result.perRecord.map((r) => [r.type, r.applied, r.missing])).toEqual([
      ["helpful", 2, []],
      ["helpful", 1, []],
      ["harmful", 0, ["b-missing9"]],
    ]);
    // Two outcomes of one session in one batch get distinct times (the time is the idempotency key).
    expect(result.records[0]!.recordedAt).toBe(T0);
    expect(result.records[1]!.recordedAt).toBe("2026-03-10T12:00:00.001Z");
    expect(result.records[0]!.task).toBe("password='[CREDENTIAL_REDACTED]'");
    expect(result.records.every((r) => r.runId === "run-abc")).toBe(true);

    const repoBullet = (await bullet(store, "repo", "b-r11111"))!;
    expect(repoBullet.feedbackEvents).toHaveLength(2);
    expect(repoBullet.helpfulCount).toBe(2);
    const journal = [...(await store.readJournal("repo")), ...(await store.readJournal("global"))].filter((e) => e.operation === "feedback");
    expect(journal).toHaveLength(2);
    expect(journal.every((e) => e.runId === "run-abc" && e.source === "/s/a")).toBe(true);

    const again = await applyOutcomeFeedback(deps, result.records);
    expect(again).toMatchObject({ applied: 0, alreadyApplied: 3, missing: ["b-missing9"], touched: [] });
    expect((await bullet(store, "repo", "b-r11111"))!.feedbackEvents).toHaveLength(2);
    const journalAfter = [...(await store.readJournal("repo")), ...(await store.readJournal("global"))].filter((e) => e.operation === "feedback");
    expect(journalAfter).toHaveLength(2);
  });
});

describe("cm outcome-apply (operation)", () => {
  function record(sessionId: string, outcome: OutcomeRecord["outcome"], rulesUsed: string[], recordedAt: string): OutcomeRecord {
    return OutcomeRecordSchema.parse({ sessionId, outcome, rulesUsed, recordedAt, path: `${MEMORY_GLOBAL_DIR}/outcomes.jsonl` });
  }

  async function seeded() {
    const { store, deps } = setup({ repo: false });
    await seed(store, "global", ["b-aaa111", "b-bbb222"]);
    await store.appendLog("global", "outcomes", [
      record("s1", "success", ["b-aaa111"], "2026-03-01T00:00:00.000Z"),
      record("s2", "success", [], "2026-03-02T00:00:00.000Z"),
      record("s1", "failure", ["b-bbb222"], "2026-03-03T00:00:00.000Z"),
    ]);
    store.appendRawLogLine("global", "outcomes", "{ torn line");
    const context: ContextLogEntry[] = [
      { task: "newest", ruleIds: ["b-aaa111"], antiPatternIds: [], session: "s2", timestamp: "2026-03-01T12:00:00.000Z", source: "context" },
      { task: "older", ruleIds: ["b-bbb222"], antiPatternIds: [], session: "s2", timestamp: "2026-02-01T00:00:00.000Z", source: "context" },
      { task: "no rules", ruleIds: [], antiPatternIds: [], session: "s2", timestamp: "2026-03-05T00:00:00.000Z", source: "context" },
    ];
    await store.appendLog("global", "context-log", context);
    return { store, deps };
  }

  it("applies the newest N outcomes", async () => {
    const { store, deps } = await seeded();
    const result = await runOperation(outcomeApplyOperation, deps, { limit: 1 });
    expect(result).toEqual({ applied: 1, missing: [], totalOutcomes: 1, alreadyApplied: 0 });
    expect((await bullet(store, "global", "b-bbb222"))!.feedbackEvents).toMatchObject([{ type: "harmful", sessionPath: "s1", timestamp: "2026-03-03T00:00:00.000Z" }]);
    expect((await bullet(store, "global", "b-aaa111"))!.feedbackEvents).toEqual([]);

    const all = await runOperation(outcomeApplyOperation, deps, {});
    expect(all).toEqual({ applied: 2, missing: [], totalOutcomes: 3, alreadyApplied: 1 });
    const again = await runOperation(outcomeApplyOperation, deps, {});
    expect(again).toEqual({ applied: 0, missing: [], totalOutcomes: 3, alreadyApplied: 3 });
    expect((await bullet(store, "global", "b-aaa111"))!.helpfulCount).toBe(2);
  });

  it("filters by session and back-fills rules from the newest context-log entry of that session", async () => {
    const { store, deps } = await seeded();
    const result = await runOperation(outcomeApplyOperation, deps, { session: "s2" });
    expect(result).toEqual({ applied: 1, missing: [], session: "s2", alreadyApplied: 0 });
    const events = (await bullet(store, "global", "b-aaa111"))!.feedbackEvents;
    expect(events).toEqual([{ type: "helpful", timestamp: "2026-03-02T00:00:00.000Z", sessionPath: "s2", context: "success", decayedValue: 1 }]);
    expect((await bullet(store, "global", "b-bbb222"))!.feedbackEvents).toEqual([]);
  });

  it("reports a session without outcomes as nothing found", async () => {
    const { deps } = await seeded();
    expect(await runOperation(outcomeApplyOperation, deps, { session: "nope" })).toEqual({ session: "nope", outcomesFound: 0, applied: 0, missing: [] });
    await expectAppError(runOperation(outcomeApplyOperation, deps, { limit: 0 }), "INVALID_INPUT");
  });

  it("back-fill marks the outcome auto-graded, so a failure naming more than 8 rules blames none", () => {
    const failure = record("s9", "failure", [], "2026-03-02T00:00:00.000Z");
    const [filled] = backfillRulesFromContextLog([failure], [
      { task: "t", ruleIds: many(9), antiPatternIds: [], session: "s9", timestamp: "2026-03-01T00:00:00.000Z", source: "context" },
    ]);
    expect(filled).toMatchObject({ autoGraded: true, rulesUsed: many(9) });
    expect(scoreImplicitFeedback(filled!)).toBeNull();
  });
});
