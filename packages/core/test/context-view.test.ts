import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { contextOperation, lookupContext, type ContextResult } from "../src/operations/context.js";
import { compactContext, estimateTokens, fitContextToBudget, measureJson, CompactContextSchema } from "../src/operations/context-view.js";
import { markOperation } from "../src/operations/mark.js";
import { rememberOperation } from "../src/operations/playbook-add.js";
import { createFakeEpisodicSource, createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";

function setup(episodic = createFakeEpisodicSource()) {
  const store = createMemoryStore({ repo: false, now: () => "2026-01-01T00:00:00.000Z" });
  const deps = { ...createTestDeps(store), episodic };
  return { deps, store };
}

type Deps = ReturnType<typeof setup>["deps"];

async function remember(deps: Deps, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const { kind, ...rest } = extra;
  const result = await runOperation(rememberOperation, deps, { content, ...rest });
  if (!("bullet" in result)) throw new Error("expected a single add");
  const id = result.bullet.id;
  if (kind !== undefined) {
    await deps.store.mutatePlaybook("global", (pb) => {
      const b = pb.bullets.find((x) => x.id === id)!;
      b.kind = kind as typeof b.kind;
    });
  }
  return id;
}

/** A playbook like a used one: rules with feedback histories. */
async function seeded(deps: Deps, rules = 8): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < rules; i++) {
    const id = await remember(deps, `When the webpack build fails in CI, clear the persistent cache (${i}) and rerun with --verbose`, {
      category: i % 2 === 0 ? "build" : "ci",
    });
    for (let k = 0; k < 6; k++) {
      await runOperation(markOperation, deps, { bulletId: id, helpful: true, reason: `helped on build ${k}`, session: `/s/${i}-${k}.jsonl` });
    }
    ids.push(id);
  }
  return ids;
}

const SNIPPETS = Array.from({ length: 4 }, (_, i) => ({
  source_path: `/home/u/.claude/projects/app/s${i}.jsonl`,
  line_number: 10 + i,
  agent: "claude_code",
  snippet: `webpack build failed: cache corrupted, cleared it (${i})`,
  origin: { kind: "local" as const },
  workspace: "/home/u/app",
  title: "fix the build",
  score: 3.2,
  created_at: 1767225600000,
}));

describe("compactContext", () => {
  it("keeps what an agent acts on and drops the rest", async () => {
    const { deps } = setup(createFakeEpisodicSource({ hits: SNIPPETS }));
    const ids = await seeded(deps, 3);
    const anti = await remember(deps, "Never delete the webpack cache folder by hand during a build", { kind: "anti_pattern" });
    const full = await runOperation(contextOperation, deps, { task: "webpack build fails in CI" });
    const compact = compactContext(full);
    expect(CompactContextSchema.parse(compact)).toEqual(compact);

    expect(compact.relevantBullets.map((b) => b.id).sort()).toEqual([...ids].sort());
    const rule = compact.relevantBullets[0]!;
    // `remember` makes workflow rules; six helpful marks promote a candidate.
    expect(Object.keys(rule).sort()).toEqual(["category", "content", "effectiveScore", "finalScore", "id", "kind", "lastHelpful", "maturity", "relevanceScore"]);
    const source = full.relevantBullets.find((b) => b.id === rule.id)!;
    expect(rule).toMatchObject({ kind: source.kind, maturity: source.maturity, content: source.content, category: source.category });
    expect(source.maturity).not.toBe("candidate");
    for (const score of [rule.relevanceScore, rule.effectiveScore, rule.finalScore]) expect(Math.round(score * 100) / 100).toBe(score);
    expect(rule.lastHelpful).toBe(full.relevantBullets[0]!.lastHelpful);

    expect(compact.antiPatterns).toHaveLength(1);
    expect(compact.antiPatterns[0]).toMatchObject({ id: anti, kind: "anti_pattern" });
    expect(compact.antiPatterns[0]!.lastHelpful).toBeUndefined(); // "Never" is the default

    expect(compact.historySnippets[0]).toEqual({
      path: "/home/u/.claude/projects/app/s0.jsonl:10",
      agent: "claude_code",
      snippet: "webpack build failed: cache corrupted, cleared it (0)",
    });
    expect(compact.deprecatedWarnings).toBeUndefined();
    expect(compact.semanticMode).toBeUndefined();
    expect(compact.suggestedCassQueries?.length).toBeGreaterThan(0);
  });

  it("shows a stale rule's reason and a non-default maturity", () => {
    const base: ContextResult = {
      task: "t",
      relevantBullets: [
        {
          id: "b-1",
          content: "c",
          category: "x",
          maturity: "proven",
          kind: "workflow_rule",
          relevanceScore: 0.123456,
          effectiveScore: 2.499,
          finalScore: 0.7777,
          lastHelpful: "Never",
          reasoning: "r",
          stale: { reason: "file a.ts no longer exists", checkedAt: "2026-01-01T00:00:00.000Z" },
        },
      ],
      antiPatterns: [],
      historySnippets: [],
      deprecatedWarnings: ["Task matches deprecated pattern \"x\""],
      suggestedCassQueries: [],
      semanticMode: "semantic",
    };
    expect(compactContext(base)).toEqual({
      task: "t",
      relevantBullets: [
        { id: "b-1", content: "c", category: "x", kind: "workflow_rule", maturity: "proven", relevanceScore: 0.12, effectiveScore: 2.5, finalScore: 0.78, stale: "file a.ts no longer exists" },
      ],
      antiPatterns: [],
      historySnippets: [],
      deprecatedWarnings: ["Task matches deprecated pattern \"x\""],
      semanticMode: "semantic",
    });
  });

  it("reduces `degraded` to the reason and one fix; the searched folders only when verbose", async () => {
    const degraded = {
      available: false as const,
      reason: "NOT_FOUND" as const,
      message: "No session history: cass is not installed and no agent session files were found. A long explanation.",
      suggestedFix: ["cargo install coding-agent-search", "cass index", "Work with a supported agent", "searched: /home/u/.claude/projects", "searched: /home/u/.codex/sessions"],
    };
    const { deps } = setup(createFakeEpisodicSource({ degraded }));
    await seeded(deps, 1);
    const full = await runOperation(contextOperation, deps, { task: "webpack build fails" });
    expect(full.degraded?.cass?.suggestedFix).toHaveLength(5);
    const compact = compactContext(full);
    expect(compact.degraded).toEqual({ cass: { reason: "NOT_FOUND", fix: "cargo install coding-agent-search" } });
    // The `cass search …` suggestions need cass, which is what is missing.
    expect(compact.suggestedCassQueries).toBeUndefined();
    expect(compactContext(full, { verbose: true }).degraded?.cass?.searched).toEqual(["/home/u/.claude/projects", "/home/u/.codex/sessions"]);
    expect(JSON.stringify(compact.degraded).length).toBeLessThan(JSON.stringify(full.degraded).length / 3);
  });

  it("is at most 35% of the full JSON for rules with feedback histories", async () => {
    const { deps } = setup(createFakeEpisodicSource({ hits: SNIPPETS }));
    await seeded(deps, 8);
    const full = await runOperation(contextOperation, deps, { task: "webpack build fails in CI" });
    expect(full.relevantBullets).toHaveLength(8);
    const fullBytes = JSON.stringify(full, null, 2).length;
    const compactBytes = JSON.stringify(compactContext(full), null, 2).length;
    expect(compactBytes / fullBytes).toBeLessThanOrEqual(0.35);
  });
});

describe("fitContextToBudget", () => {
  const pretty = (r: ContextResult) => estimateTokens(JSON.stringify(compactContext(r), null, 2));

  async function fullResult() {
    const { deps } = setup(createFakeEpisodicSource({ hits: SNIPPETS }));
    await seeded(deps, 8);
    await remember(deps, "Never delete the webpack cache folder by hand during a CI build", { kind: "anti_pattern" });
    return { deps, full: await runOperation(contextOperation, deps, { task: "webpack build fails in CI" }) };
  }

  it("leaves a result that fits alone", async () => {
    const { full } = await fullResult();
    const copy = structuredClone(full);
    expect(fitContextToBudget(copy, pretty(full), pretty)).toBeNull();
    expect(copy).toEqual(full);
  });

  it("returns exactly as many rules as the budget holds, counting the report it adds", async () => {
    const { full } = await fullResult();
    expect(full.relevantBullets.length + full.antiPatterns.length).toBe(9);
    for (const budget of [150, 300, 450, 600]) {
      const r = structuredClone(full);
      const removed = fitContextToBudget(r, budget, pretty);
      expect(removed).not.toBeNull();
      const t = r.trimmed!;
      // What is measured is the whole result, the report included, and it fits.
      expect(pretty(r)).toBe(t.estimatedTokens);
      expect(t.estimatedTokens).toBeLessThanOrEqual(budget);
      expect(t.historySnippets).toBe(4);
      expect(t.relevantBullets + r.relevantBullets.length).toBe(full.relevantBullets.length);
      expect(t.antiPatterns + r.antiPatterns.length).toBe(full.antiPatterns.length);
      expect(removed!.relevantBullets).toHaveLength(t.relevantBullets);
      // Minimal: with the budget one token smaller something more goes, with exactly this size nothing more.
      const same = structuredClone(full);
      fitContextToBudget(same, t.estimatedTokens, pretty);
      expect(same.relevantBullets.length + same.antiPatterns.length).toBe(r.relevantBullets.length + r.antiPatterns.length);
      const kept = r.relevantBullets.length + r.antiPatterns.length;
      if (kept > 0) {
        const tighter = structuredClone(full);
        fitContextToBudget(tighter, t.estimatedTokens - 1, pretty);
        expect(tighter.relevantBullets.length + tighter.antiPatterns.length).toBe(kept - 1);
      }
      // The kept rules are the best ranked ones, in order.
      expect(r.relevantBullets.map((b) => b.id)).toEqual(full.relevantBullets.slice(0, r.relevantBullets.length).map((b) => b.id));
    }
  });

  it("a small budget still returns several compact rules (the report is counts, not ids)", async () => {
    const { full } = await fullResult();
    const r = structuredClone(full);
    fitContextToBudget(r, 900, pretty);
    expect(r.relevantBullets.length).toBeGreaterThanOrEqual(4);
    expect(Object.values(r.trimmed!).every((v) => typeof v === "number")).toBe(true);
  });

  it("removes everything when even the empty result is over budget, and says by how much", async () => {
    const { full } = await fullResult();
    const r = structuredClone(full);
    fitContextToBudget(r, 10, measureJson);
    expect(r.relevantBullets).toEqual([]);
    expect(r.antiPatterns).toEqual([]);
    expect(r.historySnippets).toEqual([]);
    expect(r.trimmed!.estimatedTokens).toBeGreaterThan(10);
    expect(r.trimmed!.estimatedTokens).toBe(measureJson(r));
  });

  it("lookupContext trims by the front end's measure, reports the removed ids aside and logs what it returns", async () => {
    const { deps, store } = setup(createFakeEpisodicSource({ hits: SNIPPETS }));
    await seeded(deps, 8);
    let removed: { relevantBullets: string[] } | undefined;
    const r = await lookupContext(
      deps,
      { task: "webpack build fails in CI", maxTokens: 500, logContext: true },
      { measure: pretty, onTrimmed: (ids) => (removed = ids) },
    );
    expect(pretty(r)).toBeLessThanOrEqual(500);
    expect(removed!.relevantBullets.length).toBe(r.trimmed!.relevantBullets);
    expect(removed!.relevantBullets.some((id) => r.relevantBullets.some((b) => b.id === id))).toBe(false);
    const log = await store.readLog("global", "context-log");
    expect(log.records.at(-1)).toMatchObject({ ruleIds: r.relevantBullets.map((b) => b.id) });
    await expect(lookupContext(deps, { task: "x", maxTokens: 1.5 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(lookupContext(deps, { task: 42 as unknown as string })).rejects.toMatchObject({ code: "INVALID_INPUT" });
  });
});
