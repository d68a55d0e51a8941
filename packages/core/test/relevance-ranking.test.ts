import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { rankBulletsForTask } from "../src/domain/ranking.js";
import { defaultConfig } from "../src/schemas/config.js";
import { createTestBullet } from "../src/testing/fakes.js";
import { createBm25, originalRank, type BenchRule } from "../../../bench/relevance/rankers.mjs";
import { scoreTask, summarize } from "../../../bench/relevance/score.mjs";
import { fnv1a, splitOf } from "../../../bench/relevance/split.mjs";

// The default ranker on the committed relevance benchmark (bench/relevance, issue 8): the split is
// stable and balanced, and the ranker keeps its margin over the baselines. `pnpm bench:relevance`
// reports the full tables; this guards against regressions.

interface Task {
  id: string;
  group: string;
  task: string;
  labels: Record<string, number>;
}

const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../../bench/relevance/${name}`, import.meta.url), "utf8")) as T;
const rules = load<BenchRule[]>("rules.json");
const tasks = load<Task[]>("tasks.json");
const GROUPS = ["paraphrase", "ambiguous", "long", "direct"];

describe("relevance benchmark split", () => {
  it("is a stable hash of the task id", () => {
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(splitOf("p01")).toBe(splitOf("p01"));
    expect(["dev", "heldout"]).toContain(splitOf("x"));
  });

  it("holds out between a third and two thirds of every group", () => {
    for (const g of GROUPS) {
      const inGroup = tasks.filter((t) => t.group === g);
      const held = inGroup.filter((t) => splitOf(t.id) === "heldout").length;
      expect(held / inGroup.length, g).toBeGreaterThan(1 / 3);
      expect(held / inGroup.length, g).toBeLessThan(2 / 3);
    }
  });
});

describe("default ranker on the relevance benchmark", () => {
  const config = defaultConfig();
  const now = new Date("2026-11-23T00:00:00Z");
  const bullets = rules.map((r) =>
    createTestBullet({ id: r.id, content: r.content, category: r.category, tags: [...r.tags], kind: (r.kind ?? "workflow_rule") as never, isNegative: r.isNegative === true, state: "active" }),
  );
  const bm25 = createBm25(rules);
  const evaluate = (rank: (task: string) => string[]) => summarize(tasks.map((t) => ({ group: t.group, scores: scoreTask(rank(t.task), t.labels) })));
  const ours = evaluate((task) => rankBulletsForTask(bullets, task, { now, config, limit: bullets.length, minRelevance: config.minRelevanceScore }).ranked.map((b) => b.id));
  const baseline = evaluate((task) => bm25.search(task));
  const original = evaluate((task) => originalRank(rules, task));

  it("beats BM25 with stemming overall and on paraphrases", () => {
    expect(ours["overall"]!.ndcg10).toBeGreaterThan(baseline["overall"]!.ndcg10 + 0.05);
    expect(ours["paraphrase"]!.ndcg10).toBeGreaterThan(baseline["paraphrase"]!.ndcg10 + 0.1);
  });

  it("beats the original's keyword scoring in every group", () => {
    for (const g of [...GROUPS, "overall"]) expect(ours[g]!.ndcg10, g).toBeGreaterThan(original[g]!.ndcg10);
  });
});
