// Issue 21 item 5 through the real `cm`: `cm add` / `cm mark` killed by SIGKILL at the named crash
// points between the playbook write and its journal events (CM_TEST_CRASH_AT, node-files
// crash-point.ts; docs/adr/0012-journal-crash-safety.md). Afterwards `cm history <id>` shows the
// change when the playbook has it, `cm doctor` reports no gap (on YAML, the interrupted change until
// it is settled), and `cm doctor --fix` or the next write settles it.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const run = (args: string[], env: Record<string, string> = {}) => cm(args, { home, env });

function setUp(backend: "yaml" | "sqlite"): void {
  expect(run(["init", "--json"]).code).toBe(0);
  if (backend === "sqlite") {
    const configPath = join(home, ".cass-memory", "config.json");
    writeFileSync(configPath, JSON.stringify({ storage: { backend: "sqlite" } }, null, 2));
    const migrated = run(["storage", "migrate", "--to", "sqlite", "--json"]);
    expect(migrated.code, migrated.stderr).toBe(0);
  }
}

function bulletIdOf(content: string): string | undefined {
  const list = run(["playbook", "list", "--json"]);
  expect(list.code, list.stderr).toBe(0);
  return (list.json().data.bullets as Array<{ id: string; content: string }>).find((b) => b.content === content)?.id;
}

function journalChecks(args: string[] = []): Array<{ item: string; status: string }> {
  const doctor = run(["doctor", "--json", ...args]);
  const checks = doctor.json().data.checks as Array<{ category: string; item: string; status: string }>;
  return checks.filter((c) => c.category === "Audit Journal").map((c) => ({ item: c.item, status: c.status }));
}

const CASES: Array<{ backend: "yaml" | "sqlite"; point: string; landed: boolean }> = [
  { backend: "yaml", point: "yaml:after-playbook-rename", landed: true },
  { backend: "yaml", point: "yaml:after-journal-append", landed: true },
  { backend: "yaml", point: "yaml:after-intent", landed: false },
  { backend: "sqlite", point: "sqlite:after-playbook-rows", landed: false },
  { backend: "sqlite", point: "sqlite:after-journal-rows", landed: false },
];

describe("cm killed between the playbook write and its journal event", () => {
  it.each(CASES)("$point: history shows what the playbook shows, doctor finds no gap", { timeout: 120_000 }, ({ backend, point, landed }) => {
    setUp(backend);
    const seed = run(["add", "Run the failing test alone before changing code", "--category", "testing", "--json"]);
    expect(seed.code, seed.stderr).toBe(0);
    const seedId = seed.json().data.bullet.id as string;

    const content = "Check JWT expiry and clock skew before debugging 401 responses";
    const killed = run(["add", content, "--category", "debugging", "--json"], { CM_TEST_CRASH_AT: point });
    expect(killed.code, killed.stderr).toBe(null); // killed by a signal
    const id = bulletIdOf(content);
    expect(id !== undefined, "the rule is in the playbook exactly when the write landed").toBe(landed);
    if (id !== undefined) {
      const history = run(["history", id, "--json"]);
      expect(history.code, history.stderr).toBe(0);
      expect((history.json().data.events as Array<{ change: string }>).map((e) => e.change)).toEqual(["created"]);
    }
    const afterKill = journalChecks();
    expect(afterKill.filter((c) => c.item.endsWith("journal coverage"))).toEqual([{ item: "Global journal coverage", status: "pass" }]);
    if (backend === "yaml") {
      expect(afterKill.find((c) => c.item === "Global interrupted change")?.status).toBe("warn");
      const fixed = run(["doctor", "--fix", "--json"]);
      expect(fixed.code === 0 || fixed.code === 1, fixed.stderr).toBe(true);
    }
    expect(journalChecks().filter((c) => c.status !== "pass")).toEqual([]);

    // A mark killed the same way, then the next write: history has exactly what happened.
    const mark = run(["mark", seedId, "--helpful", "--json"], { CM_TEST_CRASH_AT: point });
    expect(mark.code).toBe(null);
    expect(run(["mark", seedId, "--harmful", "--json"]).code).toBe(0);
    const history = run(["history", seedId, "--json"]).json().data.events as Array<{ change: string; after?: { helpfulCount?: number; harmfulCount?: number } }>;
    const list = run(["playbook", "list", "--json"]).json().data.bullets as Array<{ id: string; helpfulCount: number; harmfulCount: number }>;
    const bullet = list.find((b) => b.id === seedId)!;
    expect(bullet.helpfulCount).toBe(landed ? 1 : 0);
    expect(history.map((e) => e.change)).toEqual(landed ? ["created", "feedback", "feedback"] : ["created", "feedback"]);
    expect(journalChecks().filter((c) => c.status !== "pass")).toEqual([]);
  });
});
