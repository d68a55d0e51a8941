import { describe, expect, it } from "vitest";
import { createDeterministicValidator } from "../src/learning/deterministic-validator.js";
import {
  EVIDENCE_SEARCH_LIMIT,
  GATE_AMBIGUOUS_REASON,
  GATE_NO_EVIDENCE_REASON,
  GATE_NO_KEYWORDS_REASON,
  classifySnippetOutcome,
  runEvidenceGate,
  validateDelta,
} from "../src/learning/evidence-gate.js";
import { runOperation } from "../src/operation.js";
import { validateOperation } from "../src/operations/validate.js";
import { operations } from "../src/operations/index.js";
import type {
  DegradedInfo,
  EpisodicSearchOptions,
  EpisodicSource,
  HistoryHit,
  LearningComponents,
  ValidationInput,
  Validator,
  ValidatorJudgement,
} from "../src/ports.js";
import { defaultConfig } from "../src/schemas/config.js";
import type { Delta } from "../src/schemas/records.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { expectAppError } from "./support.js";

// ---------------------------------------------------------------------------------------------
// Fakes

/** An episodic source that answers every search with the hits it was given, and records the calls. */
function scriptedHistory(hits: HistoryHit[], degraded?: DegradedInfo): EpisodicSource & { calls: Array<{ query: string; options: EpisodicSearchOptions }> } {
  const calls: Array<{ query: string; options: EpisodicSearchOptions }> = [];
  return {
    name: "scripted",
    calls,
    async health() {
      return { available: degraded === undefined, name: "scripted" };
    },
    async search(query, options) {
      calls.push({ query, options });
      return degraded !== undefined ? { hits: [], degraded } : { hits: hits.slice(0, options.limit) };
    },
    async listSessions() {
      return [];
    },
    async export() {
      return null;
    },
    async expand() {
      return null;
    },
  };
}

function hit(session: string, snippet: string): HistoryHit {
  return { source_path: session, line_number: 1, agent: "claude_code", snippet, origin: { kind: "local" } };
}

const successes = (n: number, prefix = "ok") => Array.from({ length: n }, (_, i) => hit(`/s/${prefix}-${i}.jsonl`, "Ran the migrations in a transaction and it worked; fixed the deadlock."));
const failures = (n: number, prefix = "bad") => Array.from({ length: n }, (_, i) => hit(`/s/${prefix}-${i}.jsonl`, "The migration failed with a lock timeout"));
const neutral = (n: number, prefix = "meh") => Array.from({ length: n }, (_, i) => hit(`/s/${prefix}-${i}.jsonl`, "Looked at the migration files"));

/** A validator that answers with a fixed judgement (or throws) and records what it was asked. */
function recordingValidator(answer: Partial<ValidatorJudgement> | Error, kind: "llm" | "deterministic" = "llm"): Validator & { calls: ValidationInput[] } {
  const calls: ValidationInput[] = [];
  return {
    kind,
    calls,
    async judge(input) {
      calls.push(input);
      if (answer instanceof Error) throw answer;
      return { verdict: "ACCEPT", confidence: 0.9, reason: "scripted", supporting: [], contradicting: [], ...answer };
    },
  };
}

const RULE = "Run database migrations inside a transaction";
const NOT_FOUND: DegradedInfo = { available: false, reason: "NOT_FOUND", message: "cass not found", suggestedFix: ["install cass"] };

function gateDeps(hits: HistoryHit[], degraded?: DegradedInfo) {
  const episodic = scriptedHistory(hits, degraded);
  return { episodic, config: defaultConfig() };
}

function addDelta(content: string): Extract<Delta, { type: "add" }> {
  return { type: "add", bullet: { content, category: "database" }, reason: "from a session", sourceSession: "/s/new.jsonl" };
}

// ---------------------------------------------------------------------------------------------

describe("classifySnippetOutcome", () => {
  it("uses the reference's success and failure phrases, success first", () => {
    expect(classifySnippetOutcome("I fixed the import and it works now")).toBe("success");
    expect(classifySnippetOutcome("Deployed successfully")).toBe("success");
    expect(classifySnippetOutcome("success: 3 files")).toBe("success");
    expect(classifySnippetOutcome("the issue is resolved")).toBe("success");
    expect(classifySnippetOutcome("a successful deploy")).toBe("unknown");
    expect(classifySnippetOutcome("build failed with exit code 2")).toBe("failure");
    expect(classifySnippetOutcome("Error: x is undefined")).toBe("failure");
    expect(classifySnippetOutcome("the call threw a parse error")).toBe("failure");
    expect(classifySnippetOutcome("it crashed twice")).toBe("failure");
    expect(classifySnippetOutcome("there is a bug in the parser")).toBe("failure");
    expect(classifySnippetOutcome("it doesn't work on Windows")).toBe("failure");
    expect(classifySnippetOutcome("it crashed, then I fixed the cause")).toBe("success");
    expect(classifySnippetOutcome("reading the docs")).toBe("unknown");
  });
});

describe("runEvidenceGate", () => {
  it("searches the rule's keywords with limit 20 over validationLookbackDays", async () => {
    const deps = gateDeps([]);
    deps.config = { ...deps.config, validationLookbackDays: 30 };
    await runEvidenceGate(deps, RULE, { timeoutMs: 1234 });
    expect(deps.episodic.calls).toEqual([{ query: "run database migrations inside transaction", options: { limit: EVIDENCE_SEARCH_LIMIT, days: 30, timeoutMs: 1234 } }]);
  });

  it("no keywords: passes as draft without searching", async () => {
    const deps = gateDeps(successes(9));
    const gate = await runEvidenceGate(deps, "the and of it");
    expect(gate).toMatchObject({ passed: true, suggestedState: "draft", reason: GATE_NO_KEYWORDS_REASON, sessionCount: 0, evidence: [] });
    expect(deps.episodic.calls).toEqual([]);
  });

  it("no sessions: passes as draft", async () => {
    const gate = await runEvidenceGate(gateDeps([]), RULE);
    expect(gate).toEqual({ passed: true, suggestedState: "draft", reason: GATE_NO_EVIDENCE_REASON, sessionCount: 0, successCount: 0, failureCount: 0, evidence: [] });
  });

  it("five success sessions and no failure: passes as active", async () => {
    const gate = await runEvidenceGate(gateDeps([...successes(5), ...neutral(2)]), RULE);
    expect(gate).toMatchObject({ passed: true, suggestedState: "active", reason: "Strong success signal (5 sessions). Auto-accepting.", sessionCount: 7, successCount: 5, failureCount: 0 });
  });

  it("four successes are not enough", async () => {
    const gate = await runEvidenceGate(gateDeps(successes(4)), RULE);
    expect(gate).toMatchObject({ passed: true, suggestedState: "draft", reason: GATE_AMBIGUOUS_REASON, successCount: 4 });
  });

  it("three failure sessions and no success: does not pass", async () => {
    const gate = await runEvidenceGate(gateDeps([...failures(3), ...neutral(1)]), RULE);
    expect(gate).toMatchObject({ passed: false, suggestedState: "draft", reason: "Strong failure signal (3 sessions). Auto-rejecting.", failureCount: 3, successCount: 0, sessionCount: 4 });
  });

  it("mixed signals: ambiguous draft", async () => {
    const gate = await runEvidenceGate(gateDeps([...successes(6), ...failures(1)]), RULE);
    expect(gate).toMatchObject({ passed: true, suggestedState: "draft", reason: GATE_AMBIGUOUS_REASON, successCount: 6, failureCount: 1, sessionCount: 7 });
  });

  it("counts each session once, a success snippet speaking for it", async () => {
    const hits = [hit("/s/a.jsonl", "the migration failed with a lock"), hit("/s/a.jsonl", "fixed the lock by wrapping it in a transaction"), hit("/s/a.jsonl", "more"), ...failures(2)];
    const gate = await runEvidenceGate(gateDeps(hits), RULE);
    expect(gate.sessionCount).toBe(3);
    expect(gate.successCount).toBe(1);
    expect(gate.failureCount).toBe(2);
    expect(gate.evidence.find((e) => e.session === "/s/a.jsonl")).toEqual({ session: "/s/a.jsonl", snippet: "fixed the lock by wrapping it in a transaction", outcome: "success" });
    // Three failure sessions would auto-reject, but this one also holds a success.
    expect(gate.passed).toBe(true);
  });

  it("leaves out excluded sessions (a rule is not its own evidence)", async () => {
    const gate = await runEvidenceGate(gateDeps([...successes(5), ...failures(1)]), RULE, { excludeSessions: ["/s/bad-0.jsonl"] });
    expect(gate).toMatchObject({ suggestedState: "active", sessionCount: 5, failureCount: 0 });
  });

  it("a degraded search counts as no evidence and says so", async () => {
    const gate = await runEvidenceGate(gateDeps(failures(5), NOT_FOUND), RULE);
    expect(gate).toMatchObject({ passed: true, suggestedState: "draft", reason: GATE_NO_EVIDENCE_REASON, sessionCount: 0, degraded: NOT_FOUND });
  });

  it("a source that throws is reported as degraded, not as a crash", async () => {
    const episodic = scriptedHistory([]);
    episodic.search = async () => {
      throw new Error("socket closed");
    };
    const gate = await runEvidenceGate({ episodic, config: defaultConfig() }, RULE);
    expect(gate.passed).toBe(true);
    expect(gate.degraded).toMatchObject({ available: false, reason: "OTHER", message: "History search failed: socket closed" });
  });

  it("sanitises snippets before returning them", async () => {
    const key = "AKIA" + "ABCDEFGHIJKLMNOP";
    const gate = await runEvidenceGate(gateDeps([hit("/s/k.jsonl", `migration used ${key} and failed with a timeout`)]), RULE);
    expect(gate.evidence[0]!.snippet).toBe("migration used [AWS_ACCESS_KEY] and failed with a timeout");
    expect(JSON.stringify(gate)).not.toContain(key);
  });
});

describe("validateDelta", () => {
  it("passes non-add deltas, disabled validation and short content without checks", async () => {
    const validator = recordingValidator({ verdict: "REJECT" });
    const deps = gateDeps(failures(5));
    const helpful: Delta = { type: "helpful", bulletId: "b-1" };
    expect(await validateDelta(deps, helpful, validator)).toMatchObject({ valid: true, delta: helpful });
    expect(await validateDelta({ ...deps, config: { ...deps.config, validationEnabled: false } }, addDelta(RULE), validator)).toMatchObject({ valid: true });
    const short = await validateDelta(deps, addDelta("Use migrations"), validator);
    expect(short.valid).toBe(true);
    expect(short.reason).toContain("too short");
    expect(short.gate).toBeUndefined();
    expect(validator.calls).toEqual([]);
    expect(deps.episodic.calls).toEqual([]);
  });

  it("rejects on a strong failure signal and accepts on a strong success signal without the validator", async () => {
    const validator = recordingValidator({ verdict: "REJECT" });
    const rejected = await validateDelta(gateDeps(failures(3)), addDelta(RULE), validator);
    expect(rejected).toMatchObject({ valid: false, verdict: "REJECT", reason: "Strong failure signal (3 sessions). Auto-rejecting." });
    const accepted = await validateDelta(gateDeps(successes(5)), addDelta(RULE), validator);
    expect(accepted).toMatchObject({ valid: true, verdict: "ACCEPT", reason: "Strong success signal (5 sessions). Auto-accepting." });
    expect(accepted.gate!.suggestedState).toBe("active");
    expect(validator.calls).toEqual([]);
  });

  it("keeps a rule without supporting sessions as a draft without asking the validator", async () => {
    const validator = recordingValidator({ verdict: "REJECT" });
    const none = await validateDelta(gateDeps([]), addDelta(RULE), validator);
    // Nothing in the window: kept, but said to be unvalidated (a draft candidate), with the window named.
    expect(none).toMatchObject({ valid: true, unvalidated: true });
    expect(none.reason).toMatch(/No other session in the last \d+ days mentions it.*added unvalidated, as a draft candidate/);
    expect(none.gate!.reason).toBe(GATE_NO_EVIDENCE_REASON);
    expect(none.verdict).toBeUndefined();
    const onlyFailures = await validateDelta(gateDeps([...failures(2), ...neutral(1)]), addDelta(RULE), validator);
    expect(onlyFailures.valid).toBe(true);
    expect(onlyFailures.reason).toBe("No supporting sessions (2 failure, 1 unclear). Added unvalidated, as a draft candidate.");
    expect(onlyFailures.unvalidated).toBe(true);
    const degraded = await validateDelta(gateDeps(successes(3), NOT_FOUND), addDelta(RULE), validator);
    expect(degraded.valid).toBe(true);
    expect(degraded.gate!.degraded).toEqual(NOT_FOUND);
    expect(validator.calls).toEqual([]);
  });

  it("asks the validator when the evidence is ambiguous; ACCEPT, ACCEPT_WITH_CAUTION and REFINE keep the rule", async () => {
    for (const verdict of ["ACCEPT", "ACCEPT_WITH_CAUTION", "REFINE", "REJECT"] as const) {
      const validator = recordingValidator({ verdict, reason: `said ${verdict}` });
      const result = await validateDelta(gateDeps([...successes(2), ...failures(1)]), addDelta(RULE), validator);
      expect(result.valid, verdict).toBe(verdict !== "REJECT");
      expect(result.verdict).toBe(verdict);
      expect(result.reason).toBe(`said ${verdict}`);
      expect(validator.calls).toHaveLength(1);
      expect(validator.calls[0]!.rule).toBe(RULE);
      expect(validator.calls[0]!.gate).toMatchObject({ successCount: 2, failureCount: 1, reason: GATE_AMBIGUOUS_REASON });
    }
  });

  it("a refined rule replaces the add's content (and only when the rule is kept)", async () => {
    const delta = addDelta(RULE);
    const refined = await validateDelta(gateDeps([...successes(2), ...failures(1)]), delta, recordingValidator({ verdict: "REFINE", refinedRule: "Run each migration in its own transaction" }));
    expect(refined.delta).toEqual({ ...delta, bullet: { ...delta.bullet, content: "Run each migration in its own transaction" } });
    expect(delta.bullet.content).toBe(RULE);
    const rejected = await validateDelta(gateDeps([...successes(1), ...failures(2)]), delta, recordingValidator({ verdict: "REJECT", refinedRule: "Something else entirely" }));
    expect(rejected.delta).toBe(delta);
  });

  it("works with the deterministic validator", async () => {
    const validator = createDeterministicValidator();
    expect((await validateDelta(gateDeps([...successes(3), ...failures(1)]), addDelta(RULE), validator)).valid).toBe(true);
    const rejected = await validateDelta(gateDeps([...successes(1), ...failures(2)]), addDelta(RULE), validator);
    expect(rejected).toMatchObject({ valid: false, verdict: "REJECT" });
  });
});

describe("validate operation", () => {
  function depsWith(hits: HistoryHit[], extra: { degraded?: DegradedInfo; learning?: LearningComponents } = {}) {
    return createTestDeps(createMemoryStore(), {
      episodic: scriptedHistory(hits, extra.degraded),
      ...(extra.learning !== undefined ? { learning: extra.learning } : {}),
    });
  }

  function learningWith(validator: Validator, fallback?: Validator): LearningComponents {
    const unused = {
      diaryWriter: { kind: "llm" as const, write: async () => Promise.reject(new Error("unused")) },
      reflector: { kind: "llm" as const, reflect: async () => Promise.reject(new Error("unused")) },
    };
    return {
      mode: validator.kind,
      ...unused,
      validator,
      ...(fallback !== undefined ? { fallback: { ...unused, validator: fallback } } : {}),
    };
  }

  it("is registered", () => {
    expect(operations).toContain(validateOperation);
    expect(validateOperation.command).toBe("validate");
  });

  it("rejects an empty rule with INVALID_INPUT and a hint", async () => {
    const error = await expectAppError(runOperation(validateOperation, depsWith([]), { rule: "   " }), "INVALID_INPUT");
    expect(error.message).toBe("Proposed rule text is required");
    expect(error.hint).toContain('cm validate "');
  });

  it("strong failure → REJECT 0.9 with the evidence", async () => {
    const result = await runOperation(validateOperation, depsWith(failures(3)), { rule: RULE });
    expect(result).toMatchObject({ proposedRule: RULE, verdict: "REJECT", confidence: 0.9, reason: "Strong failure signal (3 sessions). Auto-rejecting.", mode: "deterministic" });
    expect(result.evidence).toHaveLength(3);
    expect(result.evidence.every((e) => e.outcome === "failure")).toBe(true);
    expect(validateOperation.output.parse(result)).toEqual(result);
  });

  it("strong success → ACCEPT 0.95", async () => {
    const result = await runOperation(validateOperation, depsWith(successes(6)), { rule: RULE });
    expect(result).toMatchObject({ verdict: "ACCEPT", confidence: 0.95, reason: "Strong success signal (6 sessions). Auto-accepting." });
  });

  it("no sessions or no keywords → ACCEPT_WITH_CAUTION 0.6 with the gate's reason", async () => {
    const none = await runOperation(validateOperation, depsWith([]), { rule: RULE });
    expect(none).toEqual({ proposedRule: RULE, verdict: "ACCEPT_WITH_CAUTION", confidence: 0.6, reason: GATE_NO_EVIDENCE_REASON, evidence: [], mode: "deterministic" });
    const noKeywords = await runOperation(validateOperation, depsWith(successes(9)), { rule: "do it when it is there" });
    expect(noKeywords).toMatchObject({ verdict: "ACCEPT_WITH_CAUTION", confidence: 0.6, reason: GATE_NO_KEYWORDS_REASON });
  });

  it("a degraded history is reported and judged as no evidence", async () => {
    const result = await runOperation(validateOperation, depsWith(failures(5), { degraded: NOT_FOUND }), { rule: RULE });
    expect(result).toMatchObject({ verdict: "ACCEPT_WITH_CAUTION", confidence: 0.6, degraded: { cass: NOT_FOUND } });
  });

  it("ambiguous evidence without learning components: the deterministic validator judges", async () => {
    const result = await runOperation(validateOperation, depsWith([...successes(3), ...failures(1), ...neutral(1)]), { rule: RULE });
    expect(result.verdict).toBe("ACCEPT_WITH_CAUTION");
    expect(result.confidence).toBe(0.65);
    expect(result.reason).toContain("3 success, 1 failure, 1 unclear of 5 related sessions");
    expect(result.mode).toBe("deterministic");
    expect(result.evidence.map((e) => e.outcome).sort()).toEqual(["failure", "success", "success", "success", "unknown"]);
    const rejected = await runOperation(validateOperation, depsWith([...successes(1), ...failures(2)]), { rule: RULE });
    expect(rejected.verdict).toBe("REJECT");
  });

  it("ambiguous evidence with an LLM validator: its verdict; REFINE becomes ACCEPT_WITH_CAUTION at 80% confidence", async () => {
    const hits = [...successes(2), ...failures(2)];
    const llm = recordingValidator({ verdict: "REFINE", confidence: 0.75, reason: "too broad", refinedRule: "Run schema migrations inside a transaction" });
    const refined = await runOperation(validateOperation, depsWith(hits, { learning: learningWith(llm) }), { rule: RULE });
    expect(refined).toMatchObject({ verdict: "ACCEPT_WITH_CAUTION", confidence: 0.6, reason: "too broad", refinedRule: "Run schema migrations inside a transaction", mode: "llm" });
    expect(llm.calls[0]!.gate.sessionCount).toBe(4);

    const accept = await runOperation(validateOperation, depsWith(hits, { learning: learningWith(recordingValidator({ verdict: "ACCEPT", confidence: 0.82 })) }), { rule: RULE });
    expect(accept).toMatchObject({ verdict: "ACCEPT", confidence: 0.82, mode: "llm" });
    expect(accept.refinedRule).toBeUndefined();
    const reject = await runOperation(validateOperation, depsWith(hits, { learning: learningWith(recordingValidator({ verdict: "REJECT", confidence: 0.7 })) }), { rule: RULE });
    expect(reject).toMatchObject({ verdict: "REJECT", confidence: 0.7 });
  });

  it("the gate's own verdicts never call the LLM validator", async () => {
    const llm = recordingValidator({ verdict: "REJECT" });
    await runOperation(validateOperation, depsWith(successes(5), { learning: learningWith(llm) }), { rule: RULE });
    await runOperation(validateOperation, depsWith(failures(3), { learning: learningWith(llm) }), { rule: RULE });
    await runOperation(validateOperation, depsWith([], { learning: learningWith(llm) }), { rule: RULE });
    expect(llm.calls).toEqual([]);
  });

  it("a failing LLM validator falls back to the deterministic one when configured, else the error propagates", async () => {
    const hits = [...successes(2), ...failures(1)];
    const broken = recordingValidator(new Error("LLM budget exceeded: Daily budget exceeded ($1.00 / $1.00)"));
    const deps = depsWith(hits, { learning: learningWith(broken, createDeterministicValidator()) });
    const result = await runOperation(validateOperation, deps, { rule: RULE });
    expect(result).toMatchObject({ verdict: "ACCEPT_WITH_CAUTION", mode: "deterministic", fallback: { reason: "LLM budget exceeded: Daily budget exceeded ($1.00 / $1.00)" } });
    expect(broken.calls).toHaveLength(1);
    expect(deps.logger.lines.some((m) => m.level === "warn" && m.message.includes("deterministic components"))).toBe(true);

    const noFallback = depsWith(hits, { learning: learningWith(recordingValidator(new Error("connection refused"))) });
    await expect(runOperation(validateOperation, noFallback, { rule: RULE })).rejects.toThrow("connection refused");
  });

  it("verbose adds the gate's figures", async () => {
    const result = await runOperation(validateOperation, depsWith([...successes(2), ...failures(1)]), { rule: RULE, verbose: true });
    expect(result.gate).toEqual({
      keywords: ["run", "database", "migrations", "inside", "transaction"],
      passed: true,
      suggestedState: "draft",
      reason: GATE_AMBIGUOUS_REASON,
      sessionCount: 3,
      successCount: 2,
      failureCount: 1,
    });
    expect((await runOperation(validateOperation, depsWith([]), { rule: RULE })).gate).toBeUndefined();
  });
});
