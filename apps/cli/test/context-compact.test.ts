import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import YAML from "yaml";
import { decode } from "@toon-format/toon";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error -- plain ESM script without types: the benchmark's realistic playbook generator.
import { generatePlaybook, generatePlaybookYaml } from "../../../bench/generate-playbook.mjs";
import { assertBuilt, cm, tempHome } from "./helpers.js";

/**
 * `cm context --compact`, `--format toon`, the env default, `--stats` and `--max-tokens` measured
 * on what is printed — against a realistic playbook (rules with feedback histories) in a temp home
 * with no history sources (so `degraded` is the native readers' NOT_FOUND).
 */

let home: string;
let cleanup: () => void;
beforeAll(() => {
  assertBuilt();
  ({ home, cleanup } = tempHome());
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  writeFileSync(join(home, ".cass-memory", "playbook.yaml"), generatePlaybookYaml(200) as string);
});
afterAll(() => cleanup());

const TASK = "debug 401 errors: check JWT expiry and clock skew in the auth service";
const run = (args: string[], env: Record<string, string | undefined> = {}) => cm(args, { home, env });
const tokens = (text: string) => Math.ceil(text.length / 4);

/** Scores decay with time, so two runs differ in their last digits: compare them to 2 decimals. */
function settled(value: unknown): unknown {
  if (typeof value === "number") return Math.round(value * 100) / 100;
  if (Array.isArray(value)) return value.map(settled);
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, settled(v)]));
  return value;
}

function ok(args: string[], env: Record<string, string | undefined> = {}) {
  const r = run(args, env);
  if (r.code !== 0) throw new Error(`cm ${args.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return r;
}

describe("cm context --compact", () => {
  it("--json: each rule reduced to what an agent acts on, ≤ 35% of the full JSON", () => {
    const full = ok(["context", TASK, "--json", "--limit", "10"]);
    const compact = ok(["context", TASK, "--json", "--limit", "10", "--compact"]);
    const f = full.json().data;
    const c = compact.json().data;
    expect(c.relevantBullets.length).toBe(10);
    expect(c.relevantBullets.map((b: { id: string }) => b.id)).toEqual(f.relevantBullets.map((b: { id: string }) => b.id));
    for (const rule of c.relevantBullets) {
      expect(Object.keys(rule)).not.toContain("feedbackEvents");
      expect(Object.keys(rule)).not.toContain("reasoning");
      expect(Object.keys(rule)).not.toContain("createdAt");
      expect(rule.relevanceScore).toBe(Math.round(rule.relevanceScore * 100) / 100);
    }
    expect(full.stdout).toContain("feedbackEvents");
    expect(compact.stdout.length / full.stdout.length).toBeLessThanOrEqual(0.35);
  });

  it("reduces `degraded` to reason + one fix; --verbose adds the searched folders", () => {
    const full = ok(["context", TASK, "--json", "--limit", "1"]).json().data;
    expect(full.degraded.cass.reason).toBe("NOT_FOUND");
    expect(full.degraded.cass.suggestedFix.some((f: string) => f.startsWith("searched: "))).toBe(true);
    const compact = ok(["context", TASK, "--json", "--limit", "1", "--compact"]).json().data;
    expect(compact.degraded).toEqual({ cass: { reason: "NOT_FOUND", fix: full.degraded.cass.suggestedFix[0] } });
    expect(compact.suggestedCassQueries).toBeUndefined();
    const verbose = ok(["context", TASK, "--json", "--limit", "1", "--compact", "--verbose"]).json().data;
    expect(verbose.degraded.cass.searched).toContain(join(home, ".claude", "projects"));
  });

  it("markdown and human compact views list the same rules, shorter than the full views", () => {
    const c = ok(["context", TASK, "--json", "--limit", "5", "--compact"]).json().data;
    const md = ok(["context", TASK, "--format", "markdown", "--limit", "5", "--compact"]).stdout;
    const mdFull = ok(["context", TASK, "--format", "markdown", "--limit", "5"]).stdout;
    for (const b of c.relevantBullets) expect(md).toContain(`**${b.id}**`);
    expect(md).not.toContain("## Suggested searches");
    expect(md).toContain("_History unavailable (cass: NOT_FOUND)");
    expect(md.length).toBeLessThan(mdFull.length);
    const human = ok(["context", TASK, "--limit", "5", "--compact"]).stdout;
    for (const b of c.relevantBullets) expect(human).toContain(`[${b.id}]`);
    expect(human).toContain("RULES (5)");
    expect(human).not.toContain("SUGGESTED SEARCHES");
  });
});

describe("cm context --format toon", () => {
  it("encodes the same envelope as JSON (decoded data equals the JSON data), compact ≤ 25% of full JSON", () => {
    const json = ok(["context", TASK, "--json", "--limit", "10"]);
    const toon = ok(["context", TASK, "--format", "toon", "--limit", "10"]);
    expect(toon.stdout.startsWith("success: true\ncommand: context\n")).toBe(true);
    const decoded = decode(toon.stdout) as Record<string, any>;
    const envelope = json.json();
    expect(Object.keys(decoded)).toEqual(Object.keys(envelope));
    expect(settled(decoded.data)).toEqual(settled(envelope.data));

    const compactJson = ok(["context", TASK, "--json", "--limit", "10", "--compact"]).json();
    const compactToon = ok(["context", TASK, "--format", "toon", "--limit", "10", "--compact"]);
    expect(settled((decode(compactToon.stdout) as Record<string, any>).data)).toEqual(settled(compactJson.data));
    expect(compactToon.stdout.length / json.stdout.length).toBeLessThanOrEqual(0.25);
  });

  it("CM_OUTPUT_FORMAT / TOON_DEFAULT_FORMAT make TOON the default; --json and --format win", () => {
    for (const key of ["CM_OUTPUT_FORMAT", "TOON_DEFAULT_FORMAT"]) {
      const r = ok(["context", TASK, "--limit", "2", "--compact"], { [key]: "toon" });
      expect((decode(r.stdout) as Record<string, any>).data.relevantBullets).toHaveLength(2);
    }
    expect(ok(["context", TASK, "--limit", "2", "--json"], { CM_OUTPUT_FORMAT: "toon" }).json().success).toBe(true);
    expect(ok(["context", TASK, "--limit", "2", "--format", "markdown"], { CM_OUTPUT_FORMAT: "toon" }).stdout).toMatch(/^# Context for: /);
    expect(ok(["stats"], { CM_OUTPUT_FORMAT: "toon" }).stdout).toMatch(/^success: true\ncommand: stats\n/);
    expect(ok(["playbook", "list", "--format", "toon"]).stdout).toMatch(/^success: true\ncommand: "playbook:list"\n/);
  });

  it("reports errors as a TOON error envelope, exit 2", () => {
    const r = run(["context", "   ", "--format", "toon"]);
    expect(r.code).toBe(2);
    const envelope = decode(r.stdout) as Record<string, any>;
    expect(envelope).toMatchObject({ success: false, command: "context", error: { code: "INVALID_INPUT", exitCode: 2 } });
    const env = run(["context", "x", "--limit", "zero"], { CM_OUTPUT_FORMAT: "toon" });
    expect(env.code).toBe(2);
    expect((decode(env.stdout) as Record<string, any>).error.message).toBe("limit must be an integer.");
  });

  it("--stats / TOON_STATS print the JSON and TOON token counts on stderr", () => {
    const r = ok(["context", TASK, "--format", "toon", "--limit", "5", "--stats"]);
    const m = /\[stats\] JSON: (\d+) tokens, TOON: (\d+) tokens \((\d+)% savings\)/.exec(r.stderr);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBeLessThan(Number(m![1]));
    expect(ok(["stats", "--json"], { TOON_STATS: "1" }).stderr).toMatch(/\[stats\] JSON: \d+ tokens, TOON: \d+ tokens/);
    expect(ok(["context", TASK, "--json", "--limit", "5"]).stderr).not.toContain("[stats]");
  });
});

describe("cm context --max-tokens counts what is printed", () => {
  // Rules without feedback: their scores do not decay between runs, so every run prints the same
  // number of characters and a measured size can be asked for again exactly.
  let still: string;
  beforeAll(() => {
    still = realpathSync(mkdtempSync(join(tmpdir(), "cm-cli-budget-")));
    mkdirSync(join(still, ".cass-memory"), { recursive: true });
    const playbook = generatePlaybook(200);
    for (const b of playbook.bullets) Object.assign(b, { helpfulCount: 0, feedbackEvents: [], maturity: "candidate" });
    writeFileSync(join(still, ".cass-memory", "playbook.yaml"), YAML.stringify(playbook));
  });
  afterAll(() => rmSync(still, { recursive: true, force: true }));
  const runStill = (args: string[]) => {
    const r = cm(args, { home: still });
    if (r.code !== 0) throw new Error(`cm ${args.join(" ")} failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
    return r;
  };

  type Shape = { args: string[]; parse: (stdout: string) => { rules: number; estimated: number } };
  const fromEnvelope = (envelope: any) => ({
    rules: envelope.data.relevantBullets.length + envelope.data.antiPatterns.length,
    estimated: envelope.data.trimmed?.estimatedTokens ?? -1,
  });
  const shapes: Record<string, Shape> = {
    json: { args: ["--json"], parse: (s) => fromEnvelope(JSON.parse(s)) },
    "compact json": { args: ["--json", "--compact"], parse: (s) => fromEnvelope(JSON.parse(s)) },
    toon: { args: ["--format", "toon"], parse: (s) => fromEnvelope(decode(s)) },
    "compact toon": { args: ["--format", "toon", "--compact"], parse: (s) => fromEnvelope(decode(s)) },
    "compact markdown": {
      args: ["--format", "markdown", "--compact"],
      parse: (s) => ({ rules: s.split("\n").filter((l) => l.startsWith("- **")).length, estimated: tokens(s) }),
    },
  };

  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: the budget that fits exactly N rules returns N rules`, () => {
      const budget = name === "compact markdown" ? 350 : name.startsWith("compact") ? 700 : 2500;
      const first = runStill(["context", TASK, "--limit", "20", "--no-history", ...shape.args, "--max-tokens", String(budget)]);
      const a = shape.parse(first.stdout);
      expect(tokens(first.stdout)).toBeLessThanOrEqual(budget);
      expect(a.rules).toBeGreaterThanOrEqual(2);
      expect(a.rules).toBeLessThan(20);
      // The size it reports is what it measured (the printed text may be a few characters shorter).
      const exact = a.estimated;
      expect(tokens(first.stdout)).toBeLessThanOrEqual(exact);
      expect(exact - tokens(first.stdout)).toBeLessThanOrEqual(3);
      // That exact budget keeps N rules; one token less keeps N - 1.
      const same = shape.parse(runStill(["context", TASK, "--limit", "20", "--no-history", ...shape.args, "--max-tokens", String(exact)]).stdout);
      expect(same.rules).toBe(a.rules);
      const less = shape.parse(runStill(["context", TASK, "--limit", "20", "--no-history", ...shape.args, "--max-tokens", String(exact - 1)]).stdout);
      expect(less.rules).toBe(a.rules - 1);
    });
  }

  it("--max-tokens 900 with --compact returns several rules, and `trimmed` holds counts", () => {
    const r = ok(["context", TASK, "--json", "--compact", "--max-tokens", "900"]);
    const data = r.json().data;
    expect(data.relevantBullets.length).toBeGreaterThanOrEqual(5);
    expect(tokens(r.stdout)).toBeLessThanOrEqual(900);
    expect(data.trimmed).toEqual({
      maxTokens: 900,
      estimatedTokens: expect.any(Number),
      relevantBullets: expect.any(Number),
      antiPatterns: expect.any(Number),
      historySnippets: expect.any(Number),
    });
    // The full view (≈ 500 tokens a rule) at the same budget still returns one: its bookkeeping costs nothing.
    expect(ok(["context", TASK, "--json", "--no-history", "--max-tokens", "900"]).json().data.relevantBullets.length).toBe(1);
    const verbose = ok(["context", TASK, "--json", "--compact", "--max-tokens", "900", "--verbose"]);
    expect(verbose.stderr).toMatch(/\[context\] --max-tokens left out \d+ rule\(s\): b-bench/);
  });
});

describe("input limits on the CLI", () => {
  it("an oversized task or rule is INVALID_INPUT, exit 2, naming the limit; config inputLimits changes it", () => {
    const task = run(["context", "deploy ".repeat(1300), "--json"]);
    if (task.code !== 2) throw new Error(task.stdout + task.stderr);
    expect(task.code).toBe(2);
    expect(task.json().error).toMatchObject({ code: "INVALID_INPUT", message: "task is 8.9 KiB, over the limit of 8 KiB.", details: { configKey: "inputLimits.taskBytes" } });
    expect(task.json().error.hint).toContain("inputLimits.taskBytes");
    const human = run(["remember", "Always ".repeat(700)]);
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("cm: error: content is 4.8 KiB, over the limit of 4 KiB.");
    expect(human.stderr).toContain("Hint: A rule is one imperative sentence");

    const configPath = join(home, ".cass-memory", "config.json");
    writeFileSync(configPath, JSON.stringify({ inputLimits: { taskBytes: 32 } }));
    try {
      const small = run(["context", "a task description longer than thirty-two bytes", "--json"]);
      expect(small.code).toBe(2);
      expect(small.json().error.details).toMatchObject({ limit: 32 });
      expect(ok(["context", "short task", "--json"]).json().success).toBe(true);
    } finally {
      writeFileSync(configPath, "{}");
    }
  });
});
