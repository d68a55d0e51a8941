import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

function addRule(content: string): string {
  const r = cm(["playbook", "add", content, "--category", "testing", "--json"], { home });
  expect(r.code).toBe(0);
  return r.json().data.bullet.id as string;
}

function getRule(id: string): { helpfulCount: number; harmfulCount: number; feedbackEvents: Array<Record<string, unknown>> } {
  const r = cm(["playbook", "get", id, "--json"], { home });
  expect(r.code).toBe(0);
  return r.json().data.bullet;
}

const outcomesLog = (): string => join(home, ".cass-memory", "outcomes.jsonl");

function readOutcomes(): Array<Record<string, unknown>> {
  return readFileSync(outcomesLog(), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("cm outcome", () => {
  it("records implicit feedback on the rules and logs the outcome", () => {
    const id = addRule("Run the focused test file before the whole suite");
    const r = cm(["outcome", "SUCCESS", `${id},b-nothere1`, "--duration", "60", "--text", "that worked, thanks", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("outcome");
    expect(env.effect).toBeUndefined();
    expect(env.data).toEqual({ applied: 1, missing: ["b-nothere1"], type: "helpful", weight: 1.8, sentiment: "positive" });

    const rule = getRule(id);
    expect(rule.helpfulCount).toBe(1);
    expect(rule.feedbackEvents[0]).toMatchObject({ type: "helpful", sessionPath: "cli-manual", context: "success, fast, sentiment+", decayedValue: 1.8 });
    const [logged] = readOutcomes();
    expect(logged).toMatchObject({ sessionId: "cli-manual", outcome: "success", rulesUsed: [id, "b-nothere1"], durationSec: 60, notes: "that worked, thanks" });
    expect(logged!.recordedAt).toBe(rule.feedbackEvents[0]!.timestamp);
  });

  it("prints the human summary", () => {
    const id = addRule("Check the lockfile before upgrading dependencies");
    const r = cm(["outcome", "failure", `${id},b-nothere2`, "--errors", "2", "--session", "/tmp/s1.jsonl"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Recorded implicit harmful feedback (1.70) for 1 rule(s)");
    expect(r.stdout).toContain("Skipped missing rules: b-nothere2");
    expect(getRule(id).feedbackEvents[0]).toMatchObject({ type: "harmful", reason: "other", sessionPath: "/tmp/s1.jsonl" });
  });

  it("answers a signal that cancels out with a soft success and records nothing", () => {
    const id = addRule("Prefer small commits");
    const r = cm(["outcome", "mixed", id, "--errors", "1", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.success).toBe(true);
    expect(env.effect).toBe(false);
    expect(env.reason).toBe("No implicit signal strong enough to record feedback");
    expect(env.data).toEqual({ feedbackRecorded: false, rulesProvided: [id] });
    expect(existsSync(outcomesLog())).toBe(false);
    expect(getRule(id).feedbackEvents).toEqual([]);
  });

  it("rejects a bad status (exit 2, the valid values), empty rules and bad numbers", () => {
    const bad = cm(["outcome", "finished", "b-abc123", "--json"], { home });
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "INVALID_INPUT", message: "status must be one of: success, failure, mixed, partial." });
    expect(bad.json().error.details.allowed).toEqual(["success", "failure", "mixed", "partial"]);

    const empty = cm(["outcome", "success", ",", "--json"], { home });
    expect(empty.code).toBe(2);
    expect(empty.json().error.code).toBe("MISSING_REQUIRED");

    const duration = cm(["outcome", "success", "b-abc123", "--duration", "-5", "--json"], { home });
    expect(duration.code).toBe(2);
    expect(duration.json().error.message).toBe("duration must be >= 0.");

    const human = cm(["outcome", "finished", "b-abc123"], { home });
    expect(human.code).toBe(2);
    expect(human.stderr).toContain("status must be one of: success, failure, mixed, partial.");
  });
});

describe("cm outcome-apply", () => {
  it("re-applies logged outcomes idempotently and filters by session", () => {
    const id = addRule("Rebuild before running the CLI tests");
    expect(cm(["outcome", "success", id, "--session", "s-1", "--json"], { home }).code).toBe(0);

    const all = cm(["outcome-apply", "--json"], { home });
    expect(all.code).toBe(0);
    expect(all.json().data).toEqual({ applied: 0, missing: [], totalOutcomes: 1, alreadyApplied: 1 });
    expect(getRule(id).helpfulCount).toBe(1);

    const one = cm(["outcome-apply", "--session", "s-1"], { home });
    expect(one.code).toBe(0);
    expect(one.stdout).toContain("Applied outcome feedback for session s-1: 0 updates (1 already recorded)");

    const none = cm(["outcome-apply", "--session", "s-404", "--json"], { home });
    expect(none.code).toBe(0);
    expect(none.json()).toMatchObject({ effect: false, reason: "No outcomes found for session s-404", data: { session: "s-404", outcomesFound: 0, applied: 0, missing: [] } });

    const limit = cm(["outcome-apply", "--limit", "0", "--json"], { home });
    expect(limit.code).toBe(2);
    expect(limit.json().error.code).toBe("INVALID_INPUT");
  });

  it("fills in the rules of an outcome logged without any from the context log of its session", () => {
    const id = addRule("Always check JWT expiry before debugging 401 errors");
    const ctx = cm(["context", "debug 401 errors", "--log-context", "--session", "sess-42", "--json"], { home });
    expect(ctx.code).toBe(0);
    expect(ctx.json().data.relevantBullets.map((b: { id: string }) => b.id)).toEqual([id]);

    appendFileSync(outcomesLog(), `${JSON.stringify({ sessionId: "sess-42", outcome: "success", rulesUsed: [], recordedAt: "2026-01-02T00:00:00.000Z", path: outcomesLog() })}\n`);
    const r = cm(["outcome-apply", "--session", "sess-42", "--json"], { home });
    expect(r.code).toBe(0);
    expect(r.json().data).toEqual({ applied: 1, missing: [], session: "sess-42", alreadyApplied: 0 });
    expect(getRule(id).feedbackEvents).toEqual([
      { type: "helpful", timestamp: "2026-01-02T00:00:00.000Z", sessionPath: "sess-42", context: "success", decayedValue: 1 },
    ]);
  });
});

describe("cm usage", () => {
  const pad = (n: number): string => String(n).padStart(2, "0");
  function seedCosts(day: number, month: number, total: number): void {
    const now = new Date();
    const dir = join(home, ".cass-memory", "cost");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "total.json"),
      JSON.stringify({
        allTime: total,
        lastUpdated: now.toISOString(),
        currentMonth: { month: now.toISOString().slice(0, 7), cost: month },
        currentDay: { day: `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`, cost: day },
      }),
    );
  }

  it("reports zeros without cost files", () => {
    const r = cm(["usage", "--json"], { home });
    expect(r.code).toBe(0);
    expect(r.json().data).toEqual({ today: 0, month: 0, total: 0, dailyLimit: 1, monthlyLimit: 20, blocked: { daily: false, monthly: false } });
  });

  it("reads the totals and renders 30-character bars", () => {
    seedCosts(0.25, 5, 12.5);
    const json = cm(["usage", "--json"], { home });
    expect(json.json().data).toEqual({ today: 0.25, month: 5, total: 12.5, dailyLimit: 1, monthlyLimit: 20, blocked: { daily: false, monthly: false } });

    const human = cm(["usage"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("LLM Usage Statistics");
    expect(human.stdout).toContain("Today:    $0.2500 / $1.00 (25.0%)");
    expect(human.stdout).toContain("Month:    $5.0000 / $20.00 (25.0%)");
    expect(human.stdout).toContain("All-time: $12.5000");
    const daily = human.stdout.split("\n").find((line) => line.startsWith("Daily:"))!;
    expect(daily.slice("Daily:   ".length)).toBe(`${"█".repeat(8)}${"░".repeat(22)}`);
    expect(human.stdout).toContain("under 'budget'");
  });

  it("explains a $0 limit (blocked) and a negative one (no limit)", () => {
    seedCosts(0.1, 0.1, 0.1);
    writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ budget: { dailyLimit: 0, monthlyLimit: -1 } }));
    const json = cm(["usage", "--json"], { home });
    expect(json.json().data).toMatchObject({ dailyLimit: 0, monthlyLimit: -1, blocked: { daily: true, monthly: false } });
    const human = cm(["usage"], { home });
    expect(human.stdout).toContain("$0.00 limit: LLM calls are blocked");
    expect(human.stdout).toContain("Monthly: (no limit set)");
    expect(human.stdout).toContain("Daily budget is $0.00: LLM calls are blocked.");
  });

  it("warns when a limit is reached", () => {
    seedCosts(1.5, 1.5, 1.5);
    const human = cm(["usage"], { home });
    expect(human.stdout).toContain("Daily budget limit reached! LLM calls will be blocked.");
    expect(human.stdout).not.toContain("Monthly budget limit reached");
  });

  it("has help with examples", () => {
    for (const command of ["usage", "outcome", "outcome-apply"]) {
      const r = cm([command, "--help"], { home });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Examples:");
      expect(r.stdout).toContain("-j, --json");
    }
  });
});
