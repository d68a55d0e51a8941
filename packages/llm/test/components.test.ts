import { describe, expect, it } from "vitest";
import {
  compileSanitizer,
  createEmptyPlaybook,
  type DiaryEntry,
  type EvidenceGateResult,
  type Playbook,
  type ReflectionInput,
  type SessionTranscript,
} from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { LlmAuditor, LlmDiaryWriter, LlmReflector, LlmValidator, type LlmComponentDeps } from "../src/components.js";
import { createLlmLearning } from "../src/learning.js";
import { DIARY_TRANSCRIPT_MAX_CHARS, truncateMiddle } from "../src/prompts.js";
import { harness, promptText, scriptedModel, testConfig, testSettings, type Step } from "./helpers.js";

// Secret-looking values assembled at run time so that scanners do not flag this file.
const AWS_KEY = ["AK", "IA", "IOSFODNN7", "EXAMPLE"].join("");
const GH_TOKEN = ["gh", "p_", "a".repeat(36)].join("");

function deps(steps: Step[], overrides: Partial<LlmComponentDeps> = {}) {
  const h = harness();
  const model = scriptedModel(steps);
  const d: LlmComponentDeps = {
    model,
    settings: testSettings(),
    ledger: h.ledger,
    clock: h.clock,
    logger: h.logger,
    sleep: h.sleep,
    sanitizer: compileSanitizer(),
    ...overrides,
  };
  return { ...h, model, deps: d };
}

const session: SessionTranscript = {
  path: "/home/me/.claude/projects/app/s1.jsonl",
  agent: "claude_code",
  workspace: "/home/me/app",
  text: "user: the build fails\nassistant: ran pnpm build; fixed tsconfig paths in packages/core/tsconfig.json",
};

function playbook(): Playbook {
  const pb = createEmptyPlaybook("2026-01-01T00:00:00.000Z");
  pb.bullets.push(
    createTestBullet({ id: "b-aaa", category: "build", content: "Run pnpm build before vitest", helpfulCount: 4, harmfulCount: 1 }),
    createTestBullet({ id: "b-bbb", category: "testing", content: "Use vitest --project to run one package" }),
    createTestBullet({ id: "b-ccc", category: "testing", content: "Run a single vitest project with --project" }),
    createTestBullet({ id: "b-old", category: "git", content: "Old deprecated rule", deprecated: true, maturity: "deprecated" }),
  );
  return pb;
}

function diary(): DiaryEntry {
  return {
    id: "diary-1",
    sessionPath: session.path,
    timestamp: "2026-03-10T12:00:00.000Z",
    agent: "claude_code",
    status: "success",
    accomplishments: ["Fixed tsconfig paths"],
    decisions: [],
    challenges: [`Leaked key ${AWS_KEY} in .env`],
    preferences: [],
    keyLearnings: ["Build before testing"],
    relatedSessions: [],
    tags: ["build"],
    searchAnchors: [],
  };
}

function reflection(overrides: Partial<ReflectionInput> = {}): ReflectionInput {
  return { session, diary: diary(), playbook: playbook(), history: [], iteration: 1, maxIterations: 3, previous: [], ...overrides };
}

const addDelta = (content: string) => ({
  type: "add",
  bullet: {
    content,
    category: "Build",
    kind: "workflow_rule",
    type: null,
    isNegative: null,
    scope: "global",
    workspace: null,
    searchPointer: null,
    tags: ["pnpm", "Build"],
  },
  reason: "the session failed until it built first",
  sourceSession: null,
});

describe("LlmDiaryWriter", () => {
  it("returns the scripted diary and asks with the diary schema", async () => {
    const reply = {
      status: "mixed",
      accomplishments: ["Fixed tsconfig paths in packages/core/tsconfig.json", " "],
      decisions: ["Kept NodeNext resolution"],
      challenges: ["tsc: Cannot find module '@cass-memory/core'"],
      preferences: [],
      keyLearnings: ["Run pnpm build before tsc in a fresh clone"],
      tags: ["TypeScript", "pnpm", "typescript"],
    };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const draft = await new LlmDiaryWriter(d).write(session);
    expect(draft).toEqual({
      status: "mixed",
      accomplishments: ["Fixed tsconfig paths in packages/core/tsconfig.json"],
      decisions: ["Kept NodeNext resolution"],
      challenges: ["tsc: Cannot find module '@cass-memory/core'"],
      preferences: [],
      keyLearnings: ["Run pnpm build before tsc in a fresh clone"],
      tags: ["typescript", "pnpm"],
      workspace: "/home/me/app",
    });
    const format = model.doGenerateCalls[0]?.responseFormat;
    expect(format && "schema" in format ? format.schema : undefined).toMatchObject({
      required: ["status", "accomplishments", "decisions", "challenges", "preferences", "keyLearnings", "tags"],
    });
    expect(promptText(model)).toContain("fixed tsconfig paths");
    expect(promptText(model)).toContain("Agent: claude_code");
  });

  it("never sends secrets from the transcript", async () => {
    const reply = { status: "success", accomplishments: [], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [] };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    await new LlmDiaryWriter(d).write({ ...session, text: `export AWS_ACCESS_KEY_ID=${AWS_KEY}\ngit push https://${GH_TOKEN}@github.com/x/y` });
    const sent = promptText(model);
    expect(sent).not.toContain(AWS_KEY);
    expect(sent).not.toContain(GH_TOKEN);
    expect(sent).toContain("[AWS_ACCESS_KEY]");
    expect(sent).toContain("[GITHUB_PAT]");
  });

  it("cuts long transcripts in the middle to 50,000 characters", async () => {
    const reply = { status: "success", accomplishments: [], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [] };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const text = "HEAD-MARK " + "x".repeat(80_000) + " TAIL-MARK";
    await new LlmDiaryWriter(d).write({ ...session, text });
    const sent = promptText(model);
    expect(sent).toContain("HEAD-MARK");
    expect(sent).toContain("TAIL-MARK");
    expect(sent).toContain("characters omitted");
    expect(sent.length).toBeLessThan(DIARY_TRANSCRIPT_MAX_CHARS + 5_000);
  });
});

describe("LlmReflector", () => {
  it("returns the deltas the model proposes, without nulls, with the session set", async () => {
    const reply = {
      deltas: [
        addDelta("Run 'pnpm build' before 'vitest run': tests import dist/"),
        { type: "helpful", bulletId: "b-aaa", sourceSession: null, context: "built first, tests passed" },
        { type: "harmful", bulletId: "b-bbb", sourceSession: "/made/up/path", reason: "outdated", context: null },
        { type: "replace", bulletId: "b-bbb", newContent: "Run one package's tests with 'npx vitest run --project <name>'", reason: null },
        { type: "deprecate", bulletId: "b-ccc", reason: "duplicate", replacedBy: "b-bbb" },
        { type: "merge", bulletIds: ["b-bbb", "b-ccc"], mergedContent: "Use 'vitest run --project <name>' for one package", reason: null },
      ],
    };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const deltas = await new LlmReflector(d).reflect(reflection());
    expect(deltas).toEqual([
      {
        type: "add",
        bullet: {
          content: "Run 'pnpm build' before 'vitest run': tests import dist/",
          category: "build",
          kind: "workflow_rule",
          scope: "global",
          tags: ["pnpm", "build"],
        },
        reason: "the session failed until it built first",
        sourceSession: session.path,
      },
      { type: "helpful", bulletId: "b-aaa", sourceSession: session.path, context: "built first, tests passed" },
      { type: "harmful", bulletId: "b-bbb", sourceSession: session.path, reason: "outdated" },
      { type: "replace", bulletId: "b-bbb", newContent: "Run one package's tests with 'npx vitest run --project <name>'" },
      { type: "deprecate", bulletId: "b-ccc", reason: "duplicate", replacedBy: "b-bbb" },
      { type: "merge", bulletIds: ["b-bbb", "b-ccc"], mergedContent: "Use 'vitest run --project <name>' for one package" },
    ]);
    const format = model.doGenerateCalls[0]?.responseFormat;
    expect(format && "schema" in format ? JSON.stringify(format.schema) : "").toContain('"deltas"');
  });

  it("shows the playbook by category with counts, the diary and the history, all sanitised", async () => {
    const { deps: d, model } = deps([JSON.stringify({ deltas: [] })]);
    await new LlmReflector(d).reflect(
      reflection({
        history: [
          {
            source_path: "/other/s2.jsonl",
            line_number: 3,
            agent: "codex",
            snippet: `token: ${"t".repeat(30)} and ${GH_TOKEN}`,
            origin: { kind: "local" },
          },
        ],
      }),
    );
    const sent = promptText(model);
    expect(sent).toContain("### build\n- [b-aaa] Run pnpm build before vitest (4+ / 1-)");
    expect(sent).toContain("### testing");
    expect(sent).not.toContain("b-old");
    expect(sent).toContain("Fixed tsconfig paths");
    expect(sent).toContain("[codex] /other/s2.jsonl");
    expect(sent).not.toContain(AWS_KEY);
    expect(sent).not.toContain(GH_TOKEN);
    expect(sent).not.toContain("t".repeat(30));
    expect(sent).toContain("pass 1 of 3");
  });

  it("gives a rule without a category the category 'general' and redacts delta texts", async () => {
    const base = addDelta(`Never commit .env (it held ${AWS_KEY})`);
    const rule = { ...base, bullet: { ...base.bullet, category: " " } };
    const { deps: d } = deps([JSON.stringify({ deltas: [rule] })]);
    const [delta] = await new LlmReflector(d).reflect(reflection());
    expect(delta?.type === "add" && delta.bullet).toMatchObject({ category: "general", content: "Never commit .env (it held [AWS_ACCESS_KEY])" });
  });

  it("drops unknown ids, repeats of earlier passes and deltas beyond 20", async () => {
    const many = Array.from({ length: 25 }, (_, i) => addDelta(`Rule number ${i} about packages/x${i}.ts`));
    const reply = {
      deltas: [
        { type: "helpful", bulletId: "b-nope", sourceSession: null, context: null },
        { type: "merge", bulletIds: ["b-aaa", "b-ghost"], mergedContent: "x", reason: null },
        addDelta("Already proposed rule"),
        addDelta("Rule number 0 about packages/x0.ts"),
        ...many,
      ],
    };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const previous = [{ type: "add" as const, bullet: { content: "Already  proposed rule", category: "build" }, reason: "", sourceSession: session.path }];
    const deltas = await new LlmReflector(d).reflect(reflection({ iteration: 2, previous }));
    expect(deltas).toHaveLength(20);
    expect(deltas.every((delta) => delta.type === "add")).toBe(true);
    const contents = deltas.map((delta) => (delta.type === "add" ? delta.bullet.content : ""));
    expect(contents).not.toContain("Already proposed rule");
    expect(contents.filter((c) => c === "Rule number 0 about packages/x0.ts")).toHaveLength(1);
    const sent = promptText(model);
    expect(sent).toContain("pass 2 of 3");
    expect(sent).toContain("add [build] Already proposed rule");
  });
});

describe("LlmValidator", () => {
  const gate: EvidenceGateResult = {
    passed: true,
    suggestedState: "draft",
    reason: "ambiguous evidence",
    sessionCount: 3,
    successCount: 2,
    failureCount: 1,
    evidence: [
      { session: "/s/a.jsonl", snippet: "pnpm build then vitest: all tests pass", outcome: "success" },
      { session: "/s/b.jsonl", snippet: `vitest failed: Cannot find dist; key ${AWS_KEY}`, outcome: "failure" },
    ],
  };

  it("returns the verdict, clamps confidence and passes the refinement", async () => {
    const reply = {
      verdict: "REFINE",
      confidence: 1.7,
      reason: "Holds for workspace packages only",
      supporting: ["/s/a.jsonl: built first, passed"],
      contradicting: [],
      suggestedRefinement: "Run 'pnpm build' before 'vitest run' in this monorepo: tests import dist/",
    };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const judgement = await new LlmValidator(d).judge({ rule: "Build before testing", gate });
    expect(judgement).toEqual({
      verdict: "REFINE",
      confidence: 1,
      reason: "Holds for workspace packages only",
      supporting: ["/s/a.jsonl: built first, passed"],
      contradicting: [],
      refinedRule: "Run 'pnpm build' before 'vitest run' in this monorepo: tests import dist/",
    });
    const sent = promptText(model);
    expect(sent).toContain("Build before testing");
    expect(sent).toContain("[success] /s/a.jsonl: pnpm build then vitest");
    expect(sent).toContain("Sessions: 3; with success signals: 2; with failure signals: 1.");
    expect(sent).not.toContain(AWS_KEY);
    const format = model.doGenerateCalls[0]?.responseFormat;
    expect(format && "schema" in format ? format.schema : undefined).toMatchObject({
      required: ["verdict", "confidence", "reason", "supporting", "contradicting", "suggestedRefinement"],
    });
  });

  it("omits refinedRule when the model gives none", async () => {
    const reply = { verdict: "ACCEPT", confidence: 0.8, reason: "ok", supporting: [], contradicting: [], suggestedRefinement: null };
    const { deps: d } = deps([JSON.stringify(reply)]);
    const judgement = await new LlmValidator(d).judge({ rule: "Build before testing", gate });
    expect(judgement).toEqual({ verdict: "ACCEPT", confidence: 0.8, reason: "ok", supporting: [], contradicting: [] });
  });

  it("rejects an unknown verdict as malformed and retries", async () => {
    const bad = { verdict: "MAYBE", confidence: 0.5, reason: "?", supporting: [], contradicting: [], suggestedRefinement: null };
    const good = { ...bad, verdict: "REJECT" };
    const { deps: d, model } = deps([JSON.stringify(bad), JSON.stringify(good)]);
    const judgement = await new LlmValidator(d).judge({ rule: "r", gate });
    expect(judgement.verdict).toBe("REJECT");
    expect(model.doGenerateCalls).toHaveLength(2);
  });
});

describe("LlmAuditor", () => {
  it("returns findings for known rules with a status", async () => {
    const reply = {
      results: [
        { ruleId: "b-aaa", status: "violated", evidence: "ran vitest before pnpm build; tests failed" },
        { ruleId: "b-bbb", status: null, evidence: "" },
        { ruleId: "b-ghost", status: "followed", evidence: "invented" },
        { ruleId: "b-ccc", status: "followed", evidence: "used --project core" },
      ],
      summary: "One violation.",
    };
    const { deps: d, model } = deps([JSON.stringify(reply)]);
    const rules = [
      { id: "b-aaa", content: "Run pnpm build before vitest" },
      { id: "b-bbb", content: "Use vitest --project" },
      { id: "b-ccc", content: "Run a single project" },
    ];
    const result = await new LlmAuditor(d).audit({ session, rules });
    expect(result).toEqual({
      findings: [
        { ruleId: "b-aaa", status: "violated", evidence: "ran vitest before pnpm build; tests failed" },
        { ruleId: "b-ccc", status: "followed", evidence: "used --project core" },
      ],
      summary: "One violation.",
    });
    expect(promptText(model)).toContain("- [b-aaa] Run pnpm build before vitest");
  });

  it("cuts the session to max(5000, 30000 − rules length)", async () => {
    const { deps: d, model } = deps([JSON.stringify({ results: [], summary: null })]);
    const rules = Array.from({ length: 300 }, (_, i) => ({ id: `b-${i}`, content: "r".repeat(100) }));
    await new LlmAuditor(d).audit({ session: { ...session, text: "S".repeat(40_000) }, rules });
    const sent = promptText(model);
    const transcript = sent.slice(sent.indexOf("<transcript>"), sent.indexOf("</transcript>"));
    expect(transcript.length).toBeLessThan(5_100);
    expect(transcript.length).toBeGreaterThan(4_900);
  });
});

describe("createLlmLearning", () => {
  it("is unavailable with the reason when CASS_MEMORY_LLM=none", () => {
    const h = harness();
    const result = createLlmLearning({ config: testConfig(), env: { CASS_MEMORY_LLM: "none" }, ledger: h.ledger, clock: h.clock, logger: h.logger });
    expect(result).toMatchObject({ available: false, reason: "LLM disabled by CASS_MEMORY_LLM=none" });
  });

  it("is unavailable without a key for the configured provider (no silent fallback)", () => {
    const h = harness();
    const result = createLlmLearning({
      config: testConfig({ provider: "anthropic", model: "claude-sonnet-5" }),
      env: { OPENAI_API_KEY: "sk-other" },
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
    });
    expect(result).toMatchObject({ available: false, reason: "ANTHROPIC_API_KEY environment variable not found" });
  });

  it("builds a real provider model when configured", () => {
    const h = harness();
    const result = createLlmLearning({
      config: testConfig({ provider: "ollama", model: "llama3.2:3b" }),
      env: {},
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
    });
    expect(result).toMatchObject({ available: true, provider: "ollama", model: "llama3.2:3b", local: true });
  });

  it("wires an injected model into all four components with config sanitisation and budget", async () => {
    const h = harness();
    const diaryReply = { status: "success", accomplishments: ["did SECRET-PROJECT-42 work"], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [] };
    const model = scriptedModel([JSON.stringify(diaryReply)]);
    const result = createLlmLearning({
      config: testConfig({
        provider: "anthropic",
        model: "claude-sonnet-5",
        sanitization: { enabled: true, extraPatterns: ["SECRET-PROJECT-\\d+", "(a+)+"], auditLog: false, auditLevel: "info" },
      }),
      env: {},
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      model,
      sleep: h.sleep,
    });
    if (!result.available) throw new Error(result.reason);
    expect(result.components.diaryWriter.kind).toBe("llm");
    expect(result.components.reflector.kind).toBe("llm");
    expect(result.components.validator.kind).toBe("llm");
    expect(result.components.auditor.kind).toBe("llm");
    expect(h.logger.lines.some((l) => l.level === "warn" && l.message.includes("(a+)+"))).toBe(true);

    const draft = await result.components.diaryWriter.write({ ...session, text: "working on SECRET-PROJECT-42 today" });
    expect(promptText(model)).not.toContain("SECRET-PROJECT-42");
    expect(promptText(model)).toContain("[REDACTED]");
    expect(draft.accomplishments).toEqual(["did [REDACTED] work"]);
    expect(h.costEntries()).toEqual([expect.objectContaining({ provider: "anthropic", model: "claude-sonnet-5", tokensIn: 100, tokensOut: 50 })]);
  });

  it("a $0 daily budget blocks the components before any model call", async () => {
    const h = harness();
    const model = scriptedModel(["{}"]);
    const result = createLlmLearning({
      config: testConfig({ provider: "openai", model: "gpt-4o-mini", budget: { dailyLimit: 0, monthlyLimit: 20, warningThreshold: 80, currency: "USD" } }),
      env: {},
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      model,
    });
    if (!result.available) throw new Error(result.reason);
    await expect(result.components.diaryWriter.write(session)).rejects.toMatchObject({ code: "LLM_BUDGET_EXCEEDED" });
    await expect(result.components.validator.judge({ rule: "r", gate: { passed: true, suggestedState: "draft", reason: "", sessionCount: 0, successCount: 0, failureCount: 0, evidence: [] } })).rejects.toMatchObject({ code: "LLM_BUDGET_EXCEEDED" });
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});

describe("truncateMiddle", () => {
  it("keeps short text and cuts long text to the limit", () => {
    expect(truncateMiddle("abc", 10)).toBe("abc");
    const cut = truncateMiddle("a".repeat(500) + "b".repeat(500), 200);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.startsWith("a")).toBe(true);
    expect(cut.endsWith("b")).toBe(true);
    expect(cut).toContain("800 characters omitted");
  });
});
