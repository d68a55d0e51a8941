import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
let ws: string;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  ws = join(home, "ws");
  mkdirSync(join(ws, "src", "auth"), { recursive: true });
});
afterEach(() => cleanup());

const run = (args: string[]) => cm(args, { home, cwd: ws });
const remember = (...args: string[]) => {
  const r = run(["remember", ...args, "--json"]);
  if (r.code !== 0) throw new Error(`remember failed: ${r.stdout}${r.stderr}`);
  return r.json().data.bullet as { id: string } & Record<string, unknown>;
};

describe("cm remember + context verification", () => {
  it("a rule whose verified file was deleted shows as stale, below an otherwise equal rule", () => {
    writeFileSync(join(ws, "src", "auth", "keys.ts"), "export const key = rotate();\n");
    const checked = remember("Rotate the session signing key on deploy", "--verify-file", "src/auth/keys.ts", "--evidence", "ticket:SEC-12:logout loop after deploy");
    const plain = remember("Rotate the session signing key on deploy too");
    expect(checked.evidence).toEqual([{ type: "ticket", uri: "SEC-12", note: "logout loop after deploy" }]);
    expect(checked.verification).toEqual({ type: "file_exists", pattern: "src/auth/keys.ts", mode: "exists" });

    const task = "rotate session signing key deploy";
    const before = run(["context", task, "--json", "--no-history"]).json().data;
    expect(before.relevantBullets.map((b: { id: string }) => b.id)).toEqual([checked.id, plain.id]);

    rmSync(join(ws, "src", "auth", "keys.ts"));
    const r = run(["context", task, "--json", "--no-history"]);
    expect(r.code).toBe(0);
    const after = r.json().data;
    expect(after.relevantBullets.map((b: { id: string }) => b.id)).toEqual([plain.id, checked.id]);
    expect(after.relevantBullets[1].stale.reason).toBe("file src/auth/keys.ts no longer exists");
    expect(after.relevantBullets[0].stale).toBeUndefined();
    expect(after.degraded).toBeUndefined();

    const human = run(["context", task, "--no-history"]);
    expect(human.stdout).toContain("stale: file src/auth/keys.ts no longer exists");
  });

  it("rejects bad provenance flags with INVALID_INPUT and a hint, adding nothing", () => {
    const bad = run(["remember", "Some rule", "--evidence", "rumor:x", "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "INVALID_INPUT" });
    expect(bad.json().error.hint).toMatch(/Types: session, code/);
    const regex = run(["remember", "Some rule", "--verify-regex", "a.ts:(a+)+", "--json"]);
    expect(regex.json().error.code).toBe("INVALID_INPUT");
    const human = run(["remember", "Some rule", "--valid-to", "someday"]);
    expect(human.code).toBe(2);
    expect(human.stderr).toMatch(/validTo must be a date/);
    expect(run(["ls", "--json"]).json().data.bullets).toEqual([]);
  });

  it("expired rules stay out of context and list, but list --all shows them; --max-tokens trims and reports", () => {
    const expired = remember("Pin the CI image to node 18", "--valid-to", "2020-01-01");
    const current = remember("Pin the CI image to node 22 for webpack builds");
    const ctx = run(["context", "pin CI image node", "--json", "--no-history"]).json().data;
    expect(ctx.relevantBullets.map((b: { id: string }) => b.id)).toEqual([current.id]);
    expect(run(["ls", "--json"]).json().data.bullets.map((b: { id: string }) => b.id)).toEqual([current.id]);
    expect(run(["playbook", "list", "--all", "--json"]).json().data.bullets.map((b: { id: string }) => b.id)).toEqual([expired.id, current.id]);

    const trimmed = run(["context", "pin CI image node", "--json", "--no-history", "--max-tokens", "150"]).json().data;
    expect(trimmed.relevantBullets).toEqual([]);
    // `trimmed` counts what was left out (the printed envelope alone is over 150 tokens here).
    expect(trimmed.trimmed).toMatchObject({ maxTokens: 150, relevantBullets: 1, antiPatterns: 0, historySnippets: 0 });
    const bad = run(["context", "x", "--max-tokens", "ten", "--json"]);
    expect(bad.code).toBe(2);
    expect(bad.json().error.code).toBe("INVALID_INPUT");
  });

  it("remember --repo writes the repository's playbook", () => {
    gitInit(ws);
    const r = run(["remember", "Use make targets, not raw docker commands", "--repo", "--json"]);
    expect(r.json().data).toMatchObject({ target: "repo", targetPath: join(ws, ".cass", "playbook.yaml") });
    expect(readFileSync(join(ws, ".cass", "playbook.yaml"), "utf8")).toContain("Use make targets");
    expect(readFileSync(join(ws, ".cass", "events.jsonl"), "utf8")).toContain('"operation":"add"');
  });
});

describe("cm forget / undo / history", () => {
  it("forget then undo: history lists both events in order and the blocked log no longer holds the rule", () => {
    const rule = remember("Use moment.js for date math");
    const forgot = run(["forget", rule.id, "--reason", "moment is in maintenance mode", "--json"]);
    expect(forgot.code).toBe(0);
    expect(forgot.json()).toMatchObject({ command: "forget", data: { bulletId: rule.id, action: "forgotten", inverted: false } });
    const blocked = join(home, ".cass-memory", "blocked.log");
    expect(readFileSync(blocked, "utf8")).toContain(rule.id);

    const undone = run(["undo", rule.id, "--json"]);
    expect(undone.json()).toMatchObject({ command: "undo", data: { action: "un-deprecate", unblocked: 1, restoredFromJournal: true } });
    expect(readFileSync(blocked, "utf8")).not.toContain(rule.id);

    const history = run(["history", rule.id, "--json"]);
    expect(history.json().command).toBe("history");
    const events = history.json().data.events as Array<{ operation: string; change: string; timestamp: string }>;
    expect(events.map((e) => e.operation)).toEqual(["add", "forget", "undo"]);
    expect(events.map((e) => e.change)).toEqual(["created", "deprecated", "restored"]);
    expect([...events.map((e) => e.timestamp)].sort()).toEqual(events.map((e) => e.timestamp));

    const human = run(["history", rule.id]);
    expect(human.stdout).toMatch(/HISTORY: .*\n[\s\S]*forget[\s\S]*undo/);
  });

  it("error paths: forget without reason, unknown ids, hard undo without --yes", () => {
    const rule = remember("Keep me");
    const noReason = run(["forget", rule.id, "--json"]);
    expect(noReason.code).toBe(2);
    expect(noReason.json().error).toMatchObject({ code: "MISSING_REQUIRED", details: { missing: "reason" } });
    expect(run(["forget", "b-nope", "--reason", "x", "--json"]).json().error.code).toBe("BULLET_NOT_FOUND");
    const notDeprecated = run(["undo", rule.id, "--json"]);
    expect(notDeprecated.json().error).toMatchObject({ code: "INVALID_INPUT", message: `Bullet ${rule.id} is not deprecated` });
    const hard = run(["undo", rule.id, "--hard", "--json"]);
    expect(hard.code).toBe(2);
    expect(hard.json().error).toMatchObject({ code: "MISSING_REQUIRED", details: { confirmPhrase: "DELETE" } });
    expect(run(["history", "b-never", "--json"]).json().error.code).toBe("BULLET_NOT_FOUND");
    const plan = run(["undo", rule.id, "--hard", "--dry-run"]);
    expect(plan.stdout).toContain("DRY RUN - No changes will be made");
    const gone = run(["undo", rule.id, "--hard", "--yes", "--json"]);
    expect(gone.json().data).toMatchObject({ action: "hard-delete", after: { deleted: true } });
    expect(run(["history", rule.id, "--json"]).json().data.events.map((e: { change: string }) => e.change)).toEqual(["created", "deleted"]);
  });

  it("recall finds rules (and reports unavailable history) and validates its query", () => {
    const rule = remember("Set a redis connect timeout of 2s", "--tag", "redis");
    const r = run(["recall", "redis timeout", "--json"]);
    expect(r.json()).toMatchObject({ command: "recall", data: { query: "redis timeout", degraded: { cass: { reason: "NOT_FOUND" } } } });
    expect(r.json().data.bullets.map((b: { id: string }) => b.id)).toEqual([rule.id]);
    const empty = run(["recall", "  ", "--json"]);
    expect(empty.code).toBe(2);
    expect(empty.json().error.code).toBe("INVALID_INPUT");
    expect(run(["recall", "redis"]).stdout).toContain("RECALL: redis");
  });
});
