import { describe, expect, it } from "vitest";
import {
  CATEGORY_KEYWORDS,
  RULE_CATEGORIES,
  analyzePlaybookGaps,
  detectCategories,
  gapSearchQueries,
  scoreSessionForGaps,
} from "../src/domain/gap-analysis.js";
import { createNullEpisodicSource } from "../src/episodic/null-source.js";
import { runOperation } from "../src/operation.js";
import {
  DEFAULT_SAMPLE_QUERIES,
  onboardGapsOperation,
  onboardGuidedOperation,
  onboardMarkDoneOperation,
  onboardPromptOperation,
  onboardReadOperation,
  onboardReadTemplateOperation,
  onboardResetOperation,
  onboardSampleOperation,
  onboardStatusOperation,
} from "../src/operations/onboard.js";
import { decodeProcessedLog, normalizeSessionPath, processedLogNameFor } from "../src/operations/onboard-records.js";
import { playbookAddOperation } from "../src/operations/playbook-add.js";
import type { DegradedInfo, EpisodicSource, HistoryHit, SessionSummary } from "../src/ports.js";
import type { Bullet } from "../src/schemas/playbook.js";
import { createFakeEpisodicSource, createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore, type MemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const NOW = "2026-03-04T05:06:07.000Z";
// Assembled from pieces so that secret scanners do not flag this file.
const AWS_KEY = ["AKIA", "IOSFODNN7EXAMPLE"].join("");
const GH_TOKEN = ["ghp_", "a".repeat(18), "B".repeat(18)].join("");

function hit(path: string, snippet: string, extra: Partial<HistoryHit> = {}): HistoryHit {
  return { source_path: path, line_number: 1, agent: "claude", snippet, origin: { kind: "local" }, ...extra };
}

interface Setup {
  store: MemoryStore;
  deps: ReturnType<typeof createTestDeps>;
}

function setup(episodic: EpisodicSource = createFakeEpisodicSource(), cliName = "cm"): Setup {
  const store = createMemoryStore({ now: () => NOW });
  const deps = createTestDeps(store, { episodic, cliName });
  deps.clock.set(NOW);
  return { store, deps };
}

async function addRules(store: MemoryStore, bullets: Bullet[]): Promise<void> {
  await store.mutatePlaybook("global", (pb) => void pb.bullets.push(...bullets));
}

function rules(category: string, n: number, extra: Partial<Bullet> = {}): Bullet[] {
  return Array.from({ length: n }, (_, i) => createTestBullet({ id: `b-${category}-${i}`, category, content: `${category} rule number ${i}`, ...extra }));
}

/** A source that records the options of every search and can answer search with a degraded report. */
function recordingSource(base: EpisodicSource, searchDegraded?: DegradedInfo) {
  const options: Array<{ query: string; limit: number; days?: number; agents?: string[]; workspace?: string }> = [];
  const source: EpisodicSource = {
    ...base,
    name: "recording",
    async search(query, opts) {
      options.push({ query, ...opts });
      if (searchDegraded) return { hits: [], degraded: searchDegraded };
      return base.search(query, opts);
    },
  };
  return { source, options };
}

describe("gap analysis", () => {
  it("counts active rules per standard category, with the original's statuses and suggestions", () => {
    const bullets = [
      ...rules("debugging", 1),
      ...rules("testing", 2),
      ...rules("git", 3),
      ...rules("workflow", 11),
      ...rules("general", 3),
      createTestBullet({ id: "b-dep", category: "security", content: "old", deprecated: true }),
      createTestBullet({ id: "b-ret", category: "security", content: "old", state: "retired" }),
    ];
    const g = analyzePlaybookGaps(bullets);
    expect(g.totalRules).toBe(20);
    expect(Object.keys(g.byCategory)).toEqual([...RULE_CATEGORIES]);
    expect(g.byCategory.debugging).toEqual({ count: 1, status: "underrepresented", percentage: 5 });
    expect(g.byCategory.testing).toMatchObject({ count: 2, status: "underrepresented" });
    expect(g.byCategory.git).toMatchObject({ count: 3, status: "adequate", percentage: 15 });
    expect(g.byCategory.workflow).toMatchObject({ count: 11, status: "well-covered" });
    expect(g.byCategory.security).toEqual({ count: 0, status: "critical", percentage: 0 });
    expect(g.gaps.critical).toEqual(["architecture", "documentation", "integration", "collaboration", "security", "performance"]);
    expect(g.gaps.underrepresented).toEqual(["debugging", "testing"]);
    expect(g.wellCovered).toEqual(["workflow"]);
    expect(g.suggestions).toBe(
      "Focus on architecture, documentation, integration, collaboration, security, performance - you have no rules in these areas. Consider adding more debugging, testing rules.",
    );
  });

  it("has the empty-playbook and full-coverage suggestions", () => {
    expect(analyzePlaybookGaps([]).suggestions).toBe("Your playbook is empty! Start by adding foundational rules across all categories.");
    const full = RULE_CATEGORIES.flatMap((c) => rules(c, 3));
    const g = analyzePlaybookGaps(full);
    expect(g.gaps).toEqual({ critical: [], underrepresented: [] });
    expect(g.suggestions).toBe("Your playbook has good coverage across all categories.");
  });

  it("detects at most three categories, the most keywords first", () => {
    expect(detectCategories("")).toEqual([]);
    expect(detectCategories("nothing relevant here")).toEqual([]);
    const text = "The vitest fixture and the mock assert failed; coverage dropped. Also a git commit. The cache was slow.";
    const found = detectCategories(text);
    expect(found[0]).toBe("testing");
    expect(found).toHaveLength(3);
    expect(found).toContain("performance");
  });

  it("builds gap queries from the first three keywords, empty categories first, at most five", () => {
    const g = analyzePlaybookGaps([...rules("debugging", 1), ...RULE_CATEGORIES.filter((c) => c !== "debugging" && c !== "git" && c !== "security").flatMap((c) => rules(c, 3))]);
    expect(gapSearchQueries(g)).toEqual([
      CATEGORY_KEYWORDS.git.slice(0, 3).join(" "),
      CATEGORY_KEYWORDS.security.slice(0, 3).join(" "),
      CATEGORY_KEYWORDS.debugging.slice(0, 3).join(" "),
    ]);
    expect(gapSearchQueries(analyzePlaybookGaps([]))).toHaveLength(5);
  });

  it("scores a session +3 per empty, +2 per thin and +1 per adequate category it touches", () => {
    const g = analyzePlaybookGaps([...rules("testing", 1), ...rules("performance", 4)]);
    const s = scoreSessionForGaps("git commit and rebase; the vitest mock; the cache was slow", g);
    expect(s.matchedCategories.sort()).toEqual(["git", "performance", "testing"]);
    expect(s.score).toBe(3 + 2 + 1);
    expect(s.reason).toContain("git (0 rules)");
    expect(s.reason).toContain("testing (1 rule)");
    expect(scoreSessionForGaps("lorem ipsum", g)).toEqual({ score: 0, matchedCategories: [], reason: "No category patterns detected" });
  });
});

describe("session-path and processed-log helpers", () => {
  it("normalises session paths", () => {
    expect(normalizeSessionPath("  /a/./b//c/../s.jsonl ")).toBe("/a/b/s.jsonl");
    expect(normalizeSessionPath("s.jsonl", "/work/dir/")).toBe("/work/dir/s.jsonl");
    expect(normalizeSessionPath("../s.jsonl", "/work/dir")).toBe("/work/s.jsonl");
    expect(normalizeSessionPath("   ")).toBe("");
    expect(normalizeSessionPath("C:\\Users\\me\\s.jsonl")).toBe("C:\\Users\\me\\s.jsonl");
  });

  it("names workspace logs by the SHA-256 of the path", () => {
    expect(processedLogNameFor()).toBe("global");
    expect(processedLogNameFor("/home/dev/app")).toMatch(/^ws-[0-9a-f]{8}$/);
    expect(processedLogNameFor("/home/dev/app")).not.toBe(processedLogNameFor("/home/dev/other"));
  });

  it("decodes JSON and legacy tab-separated lines, counting damaged ones", () => {
    const text = ["# header", "-\t/s1\t2025-01-01T00:00:00.000Z\t2\t0", '{"sessionPath":"/s2","processedAt":"2025-01-02T00:00:00.000Z"}', "garbage", '{"sessionPath":1}', ""].join("\n");
    expect(decodeProcessedLog(text)).toEqual({
      records: [
        { sessionPath: "/s1", processedAt: "2025-01-01T00:00:00.000Z", deltasGenerated: 2 },
        { sessionPath: "/s2", processedAt: "2025-01-02T00:00:00.000Z", deltasGenerated: 0 },
      ],
      malformed: 2,
    });
  });
});

describe("onboard status / gaps", () => {
  it("without a history source: not available, no counts, the install recommendation", async () => {
    const { deps } = setup(createNullEpisodicSource());
    const r = await runOperation(onboardStatusOperation, deps, {});
    expect(r.status).toEqual({
      cassAvailable: false,
      historySource: "none",
      historyAvailable: false,
      totalConversations: 0,
      totalMessages: 0,
      playbookRules: 0,
      needsOnboarding: true,
      onboardingRatio: 0,
      recommendation: "Install cass first to enable historical session analysis",
    });
    expect(r.progress).toEqual({ sessionsProcessed: 0, rulesExtracted: 0, startedAt: null, lastActivity: null, hasStarted: false });
    expect(r.gapAnalysis.gaps.critical).toHaveLength(10);
  });

  it("counts conversations and messages from the source's sessions of the last year", async () => {
    const sessions: SessionSummary[] = [
      { path: "/s/1.jsonl", agent: "claude", messageCount: 10 },
      { path: "/s/2.jsonl", agent: "codex", messageCount: 5 },
      { path: "/s/3.jsonl", agent: "codex" },
    ];
    const base = createFakeEpisodicSource({ sessions });
    const asked: unknown[] = [];
    const source: EpisodicSource = { ...base, listSessions: async (o) => (asked.push(o), base.listSessions(o)) };
    const { deps, store } = setup(source, "cass-memory");
    await addRules(store, [...rules("testing", 4), createTestBullet({ id: "b-gone", deprecated: true })]);
    const r = await runOperation(onboardStatusOperation, deps, {});
    expect(asked).toEqual([{ days: 365 }]);
    // `cassAvailable` is about the cass CLI: a source that is not cass answering leaves it false.
    expect(r.status).toMatchObject({
      cassAvailable: false,
      historySource: "fake",
      historyAvailable: true,
      totalConversations: 3,
      totalMessages: 15,
      playbookRules: 4,
      needsOnboarding: true,
      onboardingRatio: 133.33,
      recommendation: "Your playbook has few rules. Run `cass-memory onboard guided` to add more",
    });
    const gaps = await runOperation(onboardGapsOperation, deps, {});
    expect(gaps.gapAnalysis.byCategory.testing).toMatchObject({ count: 4, status: "adequate", percentage: 100 });
  });

  it("recommends by playbook size, and points other sources at doctor", async () => {
    const { deps, store } = setup();
    expect((await runOperation(onboardStatusOperation, deps, {})).status.recommendation).toBe("Your playbook is empty! Run `cm onboard guided` to start extracting rules");
    await addRules(store, rules("git", 12));
    let status = (await runOperation(onboardStatusOperation, deps, {})).status;
    expect(status.recommendation).toBe("Consider running `cm onboard sample` to find more patterns");
    expect(status.needsOnboarding).toBe(true);
    await addRules(store, rules("testing", 38));
    status = (await runOperation(onboardStatusOperation, deps, {})).status;
    expect(status.recommendation).toBe("Your playbook looks healthy. Use `cm context` for task-specific rules");
    expect(status.needsOnboarding).toBe(false);
    const native = setup(createNullEpisodicSource(undefined, "native")).deps;
    expect((await runOperation(onboardStatusOperation, native, {})).status.recommendation).toBe(
      "Session history is not available from the 'native' source; run `cm doctor` to see why",
    );
  });
});

describe("onboard sample", () => {
  const hits = [
    hit("/h/.claude/projects/app/a.jsonl", `fix the bug: error in login, key ${AWS_KEY}`, { score: 9, workspace: "/h/app" }),
    hit("/h/.claude/projects/app/b.jsonl", `implement feature flag, pushed with ${GH_TOKEN}`, { score: 4 }),
    hit("/h/.codex/sessions/c.jsonl", "refactor the module boundary", { agent: "codex" }),
    hit("/h/.claude/projects/app/a.jsonl", "a second hit in session a: test"),
    hit("/h/.codex/sessions/d.jsonl", "write documentation for the readme"),
  ];

  it("runs the default queries (limit 5 each, 90 days), de-duplicates sessions and redacts snippets", async () => {
    const { source, options } = recordingSource(createFakeEpisodicSource({ hits }));
    const { deps } = setup(source);
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(options.map((o) => o.query)).toEqual([...DEFAULT_SAMPLE_QUERIES]);
    expect(options.every((o) => o.limit === 5 && o.days === 90)).toBe(true);
    expect(r.step).toBe("sample");
    expect(r.sessions.map((s) => s.path)).toEqual([
      "/h/.claude/projects/app/a.jsonl",
      "/h/.claude/projects/app/b.jsonl",
      "/h/.codex/sessions/c.jsonl",
      "/h/.codex/sessions/d.jsonl",
    ]);
    expect(r.totalFound).toBe(4);
    expect(r.filtered).toBe(0);
    expect(r.sessionsRemaining).toBe(4);
    expect(r.sessions[0]).toMatchObject({ agent: "claude", workspace: "/h/app", score: 9 });
    expect(r.sessions[2]).toMatchObject({ agent: "codex", workspace: "/h/.codex/sessions", score: 0 });
    expect(r.sessions[0]).not.toHaveProperty("gapScore");
    expect(r).not.toHaveProperty("gapAnalysis");
    expect(r).not.toHaveProperty("degraded");
    const text = JSON.stringify(r);
    expect(text).not.toContain(AWS_KEY);
    expect(text).not.toContain(GH_TOKEN);
    expect(r.sessions[0]?.snippet).toContain("[AWS_ACCESS_KEY]");
    expect(r.sessions[1]?.snippet).toContain("[GITHUB_PAT]");
  });

  it("passes workspace, agent and days, runs three queries at a time and stops at twice the limit", async () => {
    const { source, options } = recordingSource(createFakeEpisodicSource({ hits }));
    const { deps } = setup(source);
    const r = await runOperation(onboardSampleOperation, deps, { limit: 1, days: 14, workspace: "/h/app", agent: "claude" });
    // The first batch of three queries already finds more than 2 × 1 sessions.
    expect(options).toHaveLength(3);
    expect(options[0]).toMatchObject({ limit: 5, days: 14, workspace: "/h/app", agents: ["claude"] });
    expect(r.sessions).toHaveLength(1);
    expect(r.totalFound).toBeGreaterThanOrEqual(2);
  });

  it("skips sessions already processed unless asked to include them", async () => {
    const { deps } = setup(createFakeEpisodicSource({ hits }));
    await runOperation(onboardMarkDoneOperation, deps, { path: "/h/.codex/sessions/c.jsonl" });
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(r.sessions.map((s) => s.path)).not.toContain("/h/.codex/sessions/c.jsonl");
    expect(r.totalFound).toBe(4);
    expect(r.filtered).toBe(1);
    expect(r.progress).toMatchObject({ sessionsProcessed: 1, rulesExtracted: 0, hasStarted: true, startedAt: NOW, lastActivity: NOW });
    const all = await runOperation(onboardSampleOperation, deps, { includeProcessed: true });
    expect(all.sessions.map((s) => s.path)).toContain("/h/.codex/sessions/c.jsonl");
    expect(all.filtered).toBe(0);
  });

  it("--fill-gaps searches for the empty and thin categories and puts the best candidates first", async () => {
    const gapHits = [
      hit("/s/perf.jsonl", "the page was slow; latency and cache misses"),
      hit("/s/git.jsonl", "git commit then rebase onto the branch; debug the error"),
      hit("/s/sec.jsonl", `security review of the auth secret handling ${AWS_KEY}`),
    ];
    const { source, options } = recordingSource(createFakeEpisodicSource({ hits: gapHits }));
    const { deps, store } = setup(source);
    // Everything adequate except git and security (empty) and debugging (thin).
    await addRules(store, [...rules("debugging", 1), ...RULE_CATEGORIES.filter((c) => !["git", "security", "debugging"].includes(c)).flatMap((c) => rules(c, 3))]);
    const r = await runOperation(onboardSampleOperation, deps, { fillGaps: true });
    expect(options.map((o) => o.query)).toEqual(["git commit branch", "security auth secret", "debug error exception"]);
    expect(r.gapAnalysis?.gaps.critical).toEqual(["git", "security"]);
    expect(r.sessions.map((s) => s.path)).toEqual(["/s/git.jsonl", "/s/sec.jsonl"]);
    expect(r.sessions[0]).toMatchObject({ gapScore: 5, matchedCategories: ["git", "debugging"] });
    expect(r.sessions[0]?.gapReason).toBe("Contains git (0 rules), debugging (1 rule) patterns");
    // security (empty) +3, and "review" makes it adequate-covered collaboration too: +1.
    expect(r.sessions[1]?.gapScore).toBe(4);
    expect(r.sessions[1]?.snippet).not.toContain(AWS_KEY);
  });

  it("--fill-gaps with nothing missing falls back to five broad queries", async () => {
    const { source, options } = recordingSource(createFakeEpisodicSource({ hits: [] }));
    const { deps, store } = setup(source);
    await addRules(store, RULE_CATEGORIES.flatMap((c) => rules(c, 3)));
    const r = await runOperation(onboardSampleOperation, deps, { fillGaps: true });
    expect(options.map((o) => o.query)).toEqual(DEFAULT_SAMPLE_QUERIES.slice(0, 5));
    expect(r.sessions).toEqual([]);
    expect(r.gapAnalysis?.suggestions).toBe("Your playbook has good coverage across all categories.");
  });

  it("without history answers empty with the source's degraded report and searches nothing", async () => {
    const { source, options } = recordingSource(createNullEpisodicSource());
    const { deps } = setup(source);
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(options).toEqual([]);
    expect(r.sessions).toEqual([]);
    expect(r.totalFound).toBe(0);
    expect(r.degraded?.cass).toMatchObject({ available: false, reason: "NOT_FOUND" });
    expect(r.status.cassAvailable).toBe(false);
  });

  it("with history switched off (episodic: none) answers empty and reports nothing", async () => {
    const { deps } = setup(createNullEpisodicSource(null, "none"));
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(r.sessions).toEqual([]);
    expect(r).not.toHaveProperty("degraded");
    expect(r.status.recommendation).toBe(
      "Session history is switched off (history source 'none'); enable it in the configuration to analyse past sessions",
    );
  });

  it("reports a degraded search (e.g. a timeout) of an available source", async () => {
    const timeout: DegradedInfo = { available: false, reason: "TIMEOUT", message: "search timed out" };
    const { source } = recordingSource(createFakeEpisodicSource({ hits }), timeout);
    const { deps } = setup(source);
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(r.degraded).toEqual({ cass: timeout });
    expect(r.sessions).toEqual([]);
  });

  it("survives a source whose search throws", async () => {
    const base = createFakeEpisodicSource({ hits });
    const { deps } = setup({ ...base, search: async () => Promise.reject(new Error("boom")) });
    const r = await runOperation(onboardSampleOperation, deps, {});
    expect(r.sessions).toEqual([]);
  });

  it("validates its flags", async () => {
    const { deps } = setup();
    expect((await expectAppError(runOperation(onboardSampleOperation, deps, { limit: 0 }), "INVALID_INPUT")).message).toBe("limit must be >= 1.");
    expect((await expectAppError(runOperation(onboardSampleOperation, deps, { days: 1.5 }), "INVALID_INPUT")).message).toBe("days must be an integer.");
    await expectAppError(runOperation(onboardSampleOperation, deps, { agent: "  " }), "INVALID_INPUT");
    await expectAppError(runOperation(onboardSampleOperation, deps, { workspace: "" }), "INVALID_INPUT");
  });
});

describe("onboard read", () => {
  const path = "/home/dev/.claude/projects/my-app/s1.jsonl";
  const session = [
    "# Session",
    "",
    "**user**: the vitest run fails with a mock error in the login test",
    `**assistant**: found the bug; rotating the key ${AWS_KEY} and the PAT ${GH_TOKEN}`,
    "**assistant**: always run migrations inside a transaction before deploying",
  ].join("\n");

  it("returns the session as sanitised markdown with the extraction prompt", async () => {
    const base = createFakeEpisodicSource({ exports: { [path]: session } });
    const formats: string[] = [];
    const { deps } = setup({ ...base, export: async (p, f) => (formats.push(f), base.export(p, f)) });
    const r = await runOperation(onboardReadOperation, deps, { path: `  ${path} ` });
    expect(formats).toEqual(["markdown"]);
    expect(r.step).toBe("read");
    expect(r.sessionPath).toBe(path);
    expect(r.sessionContent).toContain("[AWS_ACCESS_KEY]");
    expect(r.sessionContent).toContain("[GITHUB_PAT]");
    expect(JSON.stringify(r)).not.toContain(AWS_KEY);
    expect(JSON.stringify(r)).not.toContain(GH_TOKEN);
    expect(r.extractionPrompt.startsWith("# Session Analysis Instructions")).toBe(true);
  });

  it("gives null content for a session the source cannot read (or that makes it throw)", async () => {
    expect((await runOperation(onboardReadOperation, setup().deps, { path: "/nope.jsonl" })).sessionContent).toBeNull();
    const base = createFakeEpisodicSource();
    const throwing = setup({ ...base, export: async () => Promise.reject(new Error("io")) }).deps;
    expect((await runOperation(onboardReadOperation, throwing, { path: "/x.jsonl" })).sessionContent).toBeNull();
    await expectAppError(runOperation(onboardReadOperation, setup().deps, { path: " " }), "INVALID_INPUT");
  });

  it("--template: metadata, topics, related rules, gaps, focus, format, and the sanitised session", async () => {
    const { deps, store } = setup(createFakeEpisodicSource({ exports: { [path]: session } }));
    await addRules(store, [
      createTestBullet({ id: "b-mig", category: "workflow", content: "Run migrations inside a transaction" }),
      createTestBullet({ id: "b-other", category: "workflow", content: "Prefer pnpm workspaces for monorepos" }),
      ...rules("testing", 1),
    ]);
    const t = await runOperation(onboardReadTemplateOperation, deps, { path });
    expect(t.metadata).toEqual({
      path,
      agent: "claude",
      workspace: "/home/dev/.claude/projects/my-app",
      workspaceName: "my-app",
      messageCount: 4,
      topicHints: expect.any(Array),
    });
    expect(t.metadata.topicHints[0]).toBe("testing");
    expect(t.context.relatedRules).toEqual([{ id: "b-mig", content: "Run migrations inside a transaction", similarity: 1 }]);
    expect(t.context.playbookGaps.critical).toContain("debugging");
    expect(t.context.playbookGaps.underrepresented).toEqual(["testing", "workflow"]);
    expect(t.context.suggestedFocus).toContain("no rules yet");
    expect(t.extractionFormat.schema).toEqual({ content: "string", category: "string" });
    expect(t.extractionFormat.categories).toEqual([...RULE_CATEGORIES]);
    expect(t.extractionFormat.examples).toHaveLength(6);
    expect(t.sessionContent).toContain("[AWS_ACCESS_KEY]");
    expect(JSON.stringify(t)).not.toContain(AWS_KEY);
    expect(JSON.stringify(t)).not.toContain(GH_TOKEN);
  });

  it("--template of an unreadable session is SESSION_NOT_FOUND", async () => {
    const e = await expectAppError(runOperation(onboardReadTemplateOperation, setup().deps, { path: "/missing.jsonl" }), "SESSION_NOT_FOUND");
    expect(e.message).toBe("Failed to read session");
    expect(e.details).toEqual({ sessionPath: "/missing.jsonl" });
  });
});

describe("onboard prompt / guided", () => {
  it("hand out the prompt, the ten categories and six examples, with the program's name", async () => {
    const { deps } = setup(createFakeEpisodicSource(), "cass-memory");
    const p = await runOperation(onboardPromptOperation, deps, {});
    expect(p.step).toBe("prompt");
    expect(p.categories).toEqual([...RULE_CATEGORIES]);
    expect(p.examples).toHaveLength(6);
    for (const e of p.examples) expect(RULE_CATEGORIES as readonly string[]).toContain(e.category);
    expect(p.extractionPrompt.startsWith("# Session Analysis Instructions")).toBe(true);
    expect(p.extractionPrompt).toContain("cass-memory playbook add --file rules.json");
    expect(p.extractionPrompt).not.toMatch(/(^|\s)cm /);
    const g = await runOperation(onboardGuidedOperation, deps, {});
    expect(g).toMatchObject({ step: "guided", categories: p.categories, examples: p.examples, extractionPrompt: p.extractionPrompt });
    expect(g.status.historySource).toBe("fake");
  });
});

describe("onboard mark-done / reset", () => {
  it("marks a session processed (skipped, 0 rules) and appends it to the global processed log", async () => {
    const { deps, store } = setup();
    const r = await runOperation(onboardMarkDoneOperation, deps, { path: " /h/x/./s1.jsonl " });
    expect(r).toEqual({ message: "Session marked as processed", sessionPath: "/h/x/s1.jsonl", rulesExtracted: 0, skipped: true });
    const state = await store.readOnboardingState();
    expect(state?.processedSessions).toEqual([{ path: "/h/x/s1.jsonl", processedAt: NOW, rulesExtracted: 0, skipped: true }]);
    expect(state?.stats).toEqual({ totalSessionsProcessed: 1, totalRulesExtracted: 0 });
    expect(await store.readProcessedSessions("global")).toEqual([{ sessionPath: "/h/x/s1.jsonl", processedAt: NOW, deltasGenerated: 0 }]);
    // Marking it again keeps one entry.
    await runOperation(onboardMarkDoneOperation, deps, { path: "/h/x/s1.jsonl" });
    expect((await store.readOnboardingState())?.processedSessions).toHaveLength(1);
    await expectAppError(runOperation(onboardMarkDoneOperation, deps, { path: "" }), "INVALID_INPUT");
  });

  it("keeps the rule count of a session rules were already taken from", async () => {
    const { deps, store } = setup();
    await runOperation(playbookAddOperation, deps, { content: "Always pin the Node version in CI", session: "/h/s2.jsonl" });
    const r = await runOperation(onboardMarkDoneOperation, deps, { path: "/h/s2.jsonl" });
    expect(r).toMatchObject({ rulesExtracted: 1, skipped: false });
    expect((await store.readOnboardingState())?.processedSessions).toEqual([{ path: "/h/s2.jsonl", processedAt: NOW, rulesExtracted: 1 }]);
  });

  it("reset needs confirmation, then empties the progress", async () => {
    const { deps, store } = setup();
    await runOperation(onboardMarkDoneOperation, deps, { path: "/h/s1.jsonl" });
    const e = await expectAppError(runOperation(onboardResetOperation, deps, {}), "MISSING_REQUIRED");
    expect(e.message).toBe("Confirmation required to reset onboarding progress");
    expect(e.hint).toBe("Re-run with --yes");
    expect((await store.readOnboardingState())?.processedSessions).toHaveLength(1);
    deps.clock.set("2026-03-05T00:00:00.000Z");
    expect(await runOperation(onboardResetOperation, deps, { yes: true })).toEqual({ message: "Onboarding progress reset" });
    expect(await store.readOnboardingState()).toEqual({
      version: 1,
      startedAt: "2026-03-05T00:00:00.000Z",
      lastUpdatedAt: "2026-03-05T00:00:00.000Z",
      processedSessions: [],
      stats: { totalSessionsProcessed: 0, totalRulesExtracted: 0 },
    });
    expect((await runOperation(onboardStatusOperation, deps, {})).progress.hasStarted).toBe(false);
  });
});

describe("playbook add --session records onboarding progress", () => {
  it("counts the rules taken from each session, single and batch", async () => {
    const { deps, store } = setup();
    await runOperation(playbookAddOperation, deps, { content: "Rule one", session: "/h/s1.jsonl" });
    await runOperation(playbookAddOperation, deps, { content: "Rule two", session: "/h/s1.jsonl" });
    await runOperation(playbookAddOperation, deps, {
      session: "/h/s2.jsonl",
      batch: { source: "rules.json", text: JSON.stringify([{ content: "A" }, { content: "B", category: "git" }]) },
    });
    await runOperation(playbookAddOperation, deps, { content: "No session" });
    const state = await store.readOnboardingState();
    expect(state?.processedSessions).toEqual([
      { path: "/h/s1.jsonl", processedAt: NOW, rulesExtracted: 2 },
      { path: "/h/s2.jsonl", processedAt: NOW, rulesExtracted: 2 },
    ]);
    expect(state?.stats).toEqual({ totalSessionsProcessed: 2, totalRulesExtracted: 4 });
    const status = await runOperation(onboardStatusOperation, deps, {});
    expect(status.progress).toMatchObject({ sessionsProcessed: 2, rulesExtracted: 4, hasStarted: true });
  });

  it("a marked-done session stops being 'skipped' once rules come from it", async () => {
    const { deps, store } = setup();
    await runOperation(onboardMarkDoneOperation, deps, { path: "/h/s1.jsonl" });
    await runOperation(playbookAddOperation, deps, { content: "Rule from s1", session: "/h/s1.jsonl" });
    expect((await store.readOnboardingState())?.processedSessions).toEqual([{ path: "/h/s1.jsonl", processedAt: NOW, rulesExtracted: 1 }]);
  });

  it("does not record anything without a session or when no rule was added", async () => {
    const { deps, store } = setup();
    await runOperation(playbookAddOperation, deps, { content: "Rule" });
    await runOperation(playbookAddOperation, deps, { session: "/h/s.jsonl", batch: { source: "x", text: "[]" } });
    expect(await store.readOnboardingState()).toBeNull();
  });

  it("keeps the added rule when the onboarding state cannot be written, with a warning", async () => {
    const store = createMemoryStore({ now: () => NOW });
    const broken = { ...store, mutateOnboardingState: async () => Promise.reject(new Error("disk full")) };
    const deps = createTestDeps(broken);
    const r = await runOperation(playbookAddOperation, deps, { content: "Still added", session: "/h/s.jsonl" });
    expect("bullet" in r && r.bullet.content).toBe("Still added");
    expect((await store.readPlaybook("global"))?.bullets.map((b) => b.content)).toEqual(["Still added"]);
    expect(deps.logger.lines.some((l) => l.level === "warn" && l.message.includes("disk full"))).toBe(true);
  });
});
