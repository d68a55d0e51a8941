import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { extractKeywords, tokenize } from "../src/domain/text.js";
import { BULLET_KINDS } from "../src/schemas/playbook.js";
import { ndcgAt, recallAt, reciprocalRank, scoreTask, summarize } from "../../../bench/relevance/score.mjs";

// Integrity of the relevance benchmark's data (bench/relevance/*.json, issue 8) and of its scorer.

interface Rule {
  id: string;
  content: string;
  category: string;
  tags: string[];
  kind?: string;
  isNegative?: boolean;
}
interface Task {
  id: string;
  group: string;
  task: string;
  labels: Record<string, number>;
}

const load = <T>(name: string): T => JSON.parse(readFileSync(new URL(`../../../bench/relevance/${name}`, import.meta.url), "utf8")) as T;
const rules = load<Rule[]>("rules.json");
const tasks = load<Task[]>("tasks.json");
const ruleById = new Map(rules.map((r) => [r.id, r]));
const GROUPS = ["paraphrase", "ambiguous", "long", "direct"];
const inGroup = (group: string) => tasks.filter((t) => t.group === group);

/** How many of the task's keywords are tokens of the rule's content. */
function sharedKeywords(task: string, ruleId: string): number {
  const tokens = new Set(tokenize(ruleById.get(ruleId)!.content));
  return extractKeywords(task, 1_000).filter((k) => tokens.has(k)).length;
}
const solving = (t: Task) => Object.keys(t.labels).filter((id) => t.labels[id] === 3);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe("relevance benchmark: rules.json", () => {
  it("has at least 200 rules with unique, non-empty ids and distinct contents", () => {
    expect(rules.length).toBeGreaterThanOrEqual(200);
    expect(new Set(rules.map((r) => r.id)).size).toBe(rules.length);
    expect(new Set(rules.map((r) => r.content.trim().toLowerCase())).size).toBe(rules.length);
    for (const r of rules) expect(r.id, JSON.stringify(r)).toMatch(/^[a-z0-9][a-z0-9-]*$/);
  });

  it("gives every rule a content, a category and tags, and only valid kinds", () => {
    for (const r of rules) {
      expect(r.content.trim().length, r.id).toBeGreaterThan(30);
      expect(r.category.trim(), r.id).not.toBe("");
      expect(Array.isArray(r.tags) && r.tags.length > 0 && r.tags.every((t) => typeof t === "string" && t.trim() !== ""), r.id).toBe(true);
      if (r.kind !== undefined) expect(BULLET_KINDS, r.id).toContain(r.kind);
      if (r.isNegative !== undefined) expect(typeof r.isNegative, r.id).toBe("boolean");
    }
  });

  it("spreads over many categories and includes anti-patterns", () => {
    expect(new Set(rules.map((r) => r.category)).size).toBeGreaterThanOrEqual(15);
    expect(rules.filter((r) => r.isNegative === true || r.kind === "anti_pattern").length).toBeGreaterThanOrEqual(10);
  });
});

describe("relevance benchmark: tasks.json", () => {
  it("has at least 80 tasks with unique ids, in the four groups, at least 20 per group", () => {
    expect(tasks.length).toBeGreaterThanOrEqual(80);
    expect(new Set(tasks.map((t) => t.id)).size).toBe(tasks.length);
    for (const t of tasks) expect(GROUPS, t.id).toContain(t.group);
    for (const g of GROUPS) expect(inGroup(g).length, g).toBeGreaterThanOrEqual(20);
  });

  it("labels only existing rules, with integer grades 0..3", () => {
    for (const t of tasks) {
      expect(t.task.trim(), t.id).not.toBe("");
      const entries = Object.entries(t.labels);
      expect(entries.length, t.id).toBeGreaterThan(0);
      for (const [id, grade] of entries) {
        expect(ruleById.has(id), `${t.id} labels unknown rule ${id}`).toBe(true);
        expect(Number.isInteger(grade) && grade >= 0 && grade <= 3, `${t.id}: ${id} = ${grade}`).toBe(true);
      }
    }
  });

  it("gives every task at least one rule graded 2 or 3", () => {
    for (const t of tasks) expect(Object.values(t.labels).some((g) => g >= 2), t.id).toBe(true);
  });

  it("keeps paraphrase tasks lexically far from their solving rules, unlike direct tasks", () => {
    const paraphrase = inGroup("paraphrase").flatMap((t) => solving(t).map((id) => sharedKeywords(t.task, id)));
    const direct = inGroup("direct").flatMap((t) => solving(t).map((id) => sharedKeywords(t.task, id)));
    expect(Math.max(...paraphrase)).toBeLessThanOrEqual(3);
    expect(mean(paraphrase)).toBeLessThan(1.5);
    expect(mean(direct)).toBeGreaterThan(2.5);
  });

  it("makes long tasks long (agent reports) and the others short", () => {
    for (const t of tasks) {
      if (t.group === "long") expect(t.task.length, t.id).toBeGreaterThanOrEqual(300);
      else expect(t.task.length, t.id).toBeLessThanOrEqual(200);
    }
  });
});

describe("relevance benchmark: scorer", () => {
  const labels = { a: 3, b: 2, c: 1 };

  it("scores a perfect ranking 1 on every metric and an empty one 0", () => {
    expect(scoreTask(["a", "b", "c"], labels)).toEqual({ ndcg10: 1, recall5: 1, mrr: 1 });
    expect(scoreTask([], labels)).toEqual({ ndcg10: 0, recall5: 0, mrr: 0 });
  });

  it("computes graded nDCG, recall of grade ≥ 2 and reciprocal rank by hand-checked values", () => {
    const ranking = ["c", "x", "a", "b"];
    // DCG = 1/log2(2) + 7/log2(4) + 3/log2(5); ideal = 7 + 3/log2(3) + 1/log2(4).
    expect(ndcgAt(ranking, labels, 10)).toBeCloseTo(5.79202967 / 9.39278926, 6);
    expect(ndcgAt(ranking, labels, 1)).toBeCloseTo(1 / 7, 6);
    expect(recallAt(ranking, labels, 2)).toBe(0);
    expect(recallAt(ranking, labels, 3)).toBe(0.5);
    expect(recallAt(ranking, labels, 5)).toBe(1);
    expect(reciprocalRank(ranking, labels)).toBeCloseTo(1 / 3, 10);
    expect(reciprocalRank(["c", "x"], labels)).toBe(0);
  });

  it("rejects rankings with duplicate ids", () => {
    expect(() => scoreTask(["a", "a"], labels)).toThrow(/duplicate/);
  });

  it("averages per group and overall, each task weighing the same", () => {
    const s = summarize([
      { group: "g1", scores: { ndcg10: 1, recall5: 1, mrr: 1 } },
      { group: "g1", scores: { ndcg10: 0, recall5: 0.5, mrr: 0 } },
      { group: "g2", scores: { ndcg10: 0.5, recall5: 0, mrr: 0.25 } },
    ]);
    expect(s["g1"]).toEqual({ n: 2, ndcg10: 0.5, recall5: 0.75, mrr: 0.5 });
    expect(s["g2"]).toEqual({ n: 1, ndcg10: 0.5, recall5: 0, mrr: 0.25 });
    expect(s["overall"]!.n).toBe(3);
    expect(s["overall"]!.ndcg10).toBeCloseTo(0.5, 10);
    expect(s["overall"]!.recall5).toBeCloseTo(0.5, 10);
    expect(s["overall"]!.mrr).toBeCloseTo(1.25 / 3, 10);
  });
});
