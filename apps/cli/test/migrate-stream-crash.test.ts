import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { BIN, assertBuilt, tempHome } from "./helpers.js";

// Issue 18, end to end: `cm storage migrate --to sqlite` killed (SIGKILL) while it streams the
// rules of a large earlier-cm playbook into the staged database. The live store must be exactly as
// it was (files, config, no database), and the next run must complete the migration with every
// rule, the same rules `playbook export` gave before.

const RULES = 3000;
const T0 = "2025-03-01T10:00:00.000Z";

let home: string;
let cleanup: () => void;
beforeAll(() => assertBuilt());
beforeEach(() => {
  ({ home, cleanup } = tempHome());
});
afterEach(() => cleanup());

const globalDir = (): string => join(home, ".cass-memory");

/** `cm` with a long timeout (a shared machine: a migration of thousands of rules takes a while). */
function run(args: string[], env: Record<string, string> = {}): { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", ...env },
    encoding: "utf8",
    timeout: 600_000,
    maxBuffer: 256 * 1024 * 1024,
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function earlierCmPlaybook(count: number): string {
  const shared: string[] = [];
  const bullets = Array.from({ length: count }, (_, i) => {
    const b: Record<string, unknown> = {
      id: `b-${i.toString(36)}`,
      scope: "global",
      category: ["testing", "git", "auth"][i % 3],
      content: `Rule ${i}: run the tests before pushing ${"and read the logs ".repeat(i % 5)}`,
      type: "rule",
      isNegative: false,
      kind: "workflow_rule",
      state: "active",
      maturity: "candidate",
      helpfulCount: i % 4,
      harmfulCount: 0,
      feedbackEvents: [],
      createdAt: T0,
      updatedAt: T0,
      pinned: false,
      deprecated: false,
      sourceSessions: [],
      sourceAgents: i % 50 === 0 ? shared : [],
      tags: [`t${i % 10}`],
    };
    if (i % 7 === 0) b.reasoning = `Seen in session ${i}:\n  the fix worked twice\n\nKeep it.\n`;
    if (i % 13 === 0) b.content = `Use "strict" mode; it's required: rule #${i}`;
    return b;
  });
  return stringify({ schema_version: 2, name: "playbook", description: "Auto-generated from cass-memory reflections", metadata: { createdAt: T0, totalReflections: 0, totalSessionsProcessed: 0 }, deprecatedPatterns: [], bullets });
}

/** Every file below `dir` (path → mtime and bytes), without the staging directory and locks. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if ([".migrate-sqlite", "backups"].includes(entry.name) || entry.name.endsWith(".lock.d")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = `${statSync(path).mtimeMs}:${readFileSync(path).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

describe("cm storage migrate --to sqlite killed in the middle of the playbook (issue 18)", () => {
  it("leaves the live store untouched, and the next run completes with every rule", () => {
    mkdirSync(globalDir(), { recursive: true });
    writeFileSync(join(globalDir(), "config.json"), `${JSON.stringify({ maxBulletsInContext: 50 }, null, 2)}\n`);
    writeFileSync(join(globalDir(), "playbook.yaml"), earlierCmPlaybook(RULES));
    const exported = run(["playbook", "export", "--json"]);
    expect(exported.code, exported.stderr).toBe(0);
    const before = snapshot(globalDir());

    // Killed once 1,000 rows are inserted, inside the staging transaction.
    const killed = run(["storage", "migrate", "--to", "sqlite", "--json"], { CM_TEST_CRASH_AT: "sqlite:migrate-playbook-rows" });
    expect(killed.signal).toBe("SIGKILL");
    expect(snapshot(globalDir())).toEqual(before);
    expect(existsSync(join(globalDir(), "cass-memory.sqlite"))).toBe(false);
    expect(existsSync(join(globalDir(), ".migrate-sqlite"))).toBe(true);
    const progress = JSON.parse(readFileSync(join(globalDir(), ".migrate-sqlite", "progress.json"), "utf8")) as { completed: string[] };
    expect(progress.completed).not.toContain("global/playbook");
    // Still the YAML store, with every rule.
    const status = run(["storage", "status", "--json"]);
    expect(JSON.parse(status.stdout).data.backend).toBe("yaml");

    const again = run(["storage", "migrate", "--to", "sqlite", "--json"]);
    expect(again.code, again.stderr).toBe(0);
    const result = JSON.parse(again.stdout).data;
    expect(result).toMatchObject({ status: "migrated", to: "sqlite", sections: { records: RULES }, streamed: ["global/playbook"] });
    expect(existsSync(join(globalDir(), ".migrate-sqlite"))).toBe(false);
    // The source file is as it was; the SQLite store gives the same rules.
    expect(readFileSync(join(globalDir(), "playbook.yaml"), "utf8")).toBe(Buffer.from(before["playbook.yaml"]!.split(":")[1]!, "base64").toString("utf8"));
    const after = run(["playbook", "export", "--json"]);
    expect(after.code, after.stderr).toBe(0);
    // (but for the time of the export)
    const rules = (stdout: string): unknown => {
      const data = JSON.parse(stdout).data as { metadata: Record<string, unknown> };
      expect(typeof data.metadata.exportedAt).toBe("string");
      return { ...data, metadata: { ...data.metadata, exportedAt: null } };
    };
    const exportedAfter = rules(after.stdout) as { bullets: unknown[] };
    expect(exportedAfter.bullets).toHaveLength(RULES);
    expect(exportedAfter).toEqual(rules(exported.stdout));
  }, 1_200_000);
});
