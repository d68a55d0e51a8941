import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAppError, verifySections, type Layer, type Store } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { loadConfig } from "../src/config.js";
import { createRuntime, type Runtime, type RuntimeOptions } from "../src/runtime.js";
import { closeAllStores, openStore } from "../src/storage/backend.js";
import { migrateStorage, readProgress, stagingDirs, type MigrateProgressEvent } from "../src/storage/migrate.js";
import { storageStatus } from "../src/storage/status.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let home: string;
let globalDir: string;
let repo: string;
let cleanup: () => void;
const runtimes: Runtime[] = [];

beforeEach(() => {
  const t = tempDir("cm-storage-");
  root = t.path;
  cleanup = t.cleanup;
  home = join(root, "home");
  globalDir = join(home, ".cass-memory");
  repo = join(root, "repo");
  mkdirSync(join(repo, ".git"), { recursive: true });
  mkdirSync(globalDir, { recursive: true });
  writeFile(join(globalDir, "config.json"), JSON.stringify({ maxBulletsInContext: 50 }, null, 2));
});
afterEach(() => {
  for (const rt of runtimes.splice(0)) rt.close();
  closeAllStores();
  cleanup();
});

const T0 = "2025-03-01T10:00:00.000Z";

async function runtime(env: Record<string, string> = {}, options: RuntimeOptions = {}): Promise<Runtime> {
  const rt = await createRuntime({ env: { HOME: home, ...env }, cwd: repo, stderr: () => {}, ...options });
  runtimes.push(rt);
  return rt;
}

function writeConfig(value: unknown): void {
  writeFile(join(globalDir, "config.json"), JSON.stringify(value, null, 2));
}

function readConfig(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(globalDir, "config.json"), "utf8")) as Record<string, unknown>;
}

/** Puts something in every kind of section, in both layers, through the store's own methods. */
async function populate(store: Store, bullets = 5): Promise<void> {
  for (const layer of ["global", "repo"] as const) {
    await store.mutatePlaybook(layer, (playbook, tx) => {
      for (let i = 0; i < bullets; i++) {
        playbook.bullets.push(createTestBullet({ id: `b-${layer}-${i}`, content: `${layer} rule ${i}: run the tests before pushing`, helpfulCount: i, tags: [layer] }));
      }
      tx.journal([{ id: `e-${layer}`, timestamp: T0, operation: "playbook:add", change: "add", bulletId: `b-${layer}-0`, layer, actor: "test", hashBefore: null, hashAfter: "0123456789abcdef" }]);
    });
    await store.appendBlocked(layer, [{ id: `x-${layer}`, content: "never force-push main", reason: "harmful", forgottenAt: T0 } as never]);
    await store.appendLog(layer, "outcomes", [{ sessionId: `s-${layer}`, outcome: "success", recordedAt: T0 }]);
  }
  await store.writeDiary({ id: "diary-0001", sessionPath: "/s/a.jsonl", timestamp: T0, agent: "claude", status: "success", accomplishments: ["x"], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [], searchAnchors: [], relatedSessions: [] } as never);
  await store.appendProcessedSessions("global", [{ sessionPath: "/s/a.jsonl", processedAt: T0, diaryId: "diary-0001", deltasGenerated: 1 }]);
  await store.mutateOnboardingState(() => undefined, { nowIso: T0 });
  await store.costs.record({ provider: "anthropic", model: "m", tokensIn: 1, tokensOut: 1, cost: 0.02, timestamp: T0 });
}

/** Every file below `dir` (path → content and mtime), without caches, locks, backups and staging. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if ([".cache", "backups", ".migrate-yaml", ".migrate-sqlite"].includes(entry.name) || entry.name.endsWith(".lock.d")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = `${statSync(path).mtimeMs}:${readFileSync(path).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

/** Opens a store of `backend` over the live directories (as a process using that backend would). */
async function storeOf(rt: Runtime, backend: "yaml" | "sqlite"): Promise<Store> {
  const opened = await openStore(backend, rt.storage.dirs, { logger: rt.deps.logger, parseCache: false });
  runtimes.push({ close: opened.close } as Runtime);
  return opened.store;
}

async function expectSameData(a: Store, b: Store): Promise<void> {
  const result = await verifySections(a.transfer!, b.transfer!);
  expect(result.differences).toEqual([]);
  expect(result.keys.length).toBeGreaterThan(10);
}

describe("storage configuration", () => {
  it("defaults to yaml with the database in the global directory; a relative or ~ path is resolved", () => {
    expect(loadConfig({ globalDir, repoRoot: null, env: { HOME: home } }).config.storage).toEqual({ backend: "yaml", path: join(globalDir, "cass-memory.sqlite") });
    writeConfig({ storage: { backend: "sqlite", path: "data/memory.db" } });
    expect(loadConfig({ globalDir, repoRoot: null, env: { HOME: home } }).config.storage).toEqual({ backend: "sqlite", path: join(globalDir, "data", "memory.db") });
    writeConfig({ storage: { backend: "sqlite", path: "~/db/m.sqlite" } });
    expect(loadConfig({ globalDir, repoRoot: null, env: { HOME: home } }).config.storage.path).toBe(join(home, "db", "m.sqlite"));
  });

  it("lets CASS_MEMORY_STORAGE and CASS_MEMORY_STORAGE_PATH override config.json", () => {
    writeConfig({ storage: { backend: "yaml", path: "/elsewhere/x.sqlite" } });
    const { config } = loadConfig({ globalDir, repoRoot: null, env: { HOME: home, CASS_MEMORY_STORAGE: " SQLite " } });
    expect(config.storage).toEqual({ backend: "sqlite", path: "/elsewhere/x.sqlite" });
    const both = loadConfig({ globalDir, repoRoot: null, env: { HOME: home, CASS_MEMORY_STORAGE: "sqlite", CASS_MEMORY_STORAGE_PATH: "~/m.sqlite" } });
    expect(both.config.storage).toEqual({ backend: "sqlite", path: join(home, "m.sqlite") });
  });

  it("rejects an unknown CASS_MEMORY_STORAGE with CONFIG_INVALID and a hint (a tolerant load reports it)", () => {
    let caught: unknown;
    try {
      loadConfig({ globalDir, repoRoot: null, env: { HOME: home, CASS_MEMORY_STORAGE: "mongodb" } });
    } catch (error) {
      caught = error;
    }
    expect(isAppError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: "CONFIG_INVALID", hint: expect.stringContaining("CASS_MEMORY_STORAGE=sqlite") });
    writeConfig({ storage: { backend: "sqlite" } });
    const tolerant = loadConfig({ globalDir, repoRoot: null, env: { HOME: home, CASS_MEMORY_STORAGE: "mongodb" }, tolerateInvalid: true });
    expect(tolerant.config.storage.backend).toBe("sqlite");
    expect(tolerant.problems.join("\n")).toContain("CASS_MEMORY_STORAGE");
  });

  it("rejects an unknown storage.backend in config.json", () => {
    writeConfig({ storage: { backend: "mongo" } });
    expect(() => loadConfig({ globalDir, repoRoot: null, env: { HOME: home } })).toThrow(/storage/);
  });

  it("ignores storage in a repository's config, with a warning", () => {
    writeFile(join(repo, ".cass", "config.json"), JSON.stringify({ storage: { backend: "sqlite", path: "/tmp/evil.sqlite" }, maxBulletsInContext: 7 }));
    const { config, warnings } = loadConfig({ globalDir, repoRoot: repo, env: { HOME: home } });
    expect(config.storage).toEqual({ backend: "yaml", path: join(globalDir, "cass-memory.sqlite") });
    expect(config.maxBulletsInContext).toBe(7);
    expect(warnings.join("\n")).toMatch(/Ignoring 'storage'/);
  });
});

describe("createRuntime picks the store of storage.backend", () => {
  it("uses the YAML store by default and never loads the SQLite module", async () => {
    let loads = 0;
    const rt = await runtime({}, { loadSqliteStore: async () => (loads++, import("@cass-memory/store-sqlite")) });
    await rt.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-1" })));
    expect(rt.storage.backend).toBe("yaml");
    expect(rt.deps.store.locations.globalPlaybook).toBe(join(globalDir, "playbook.yaml"));
    expect(existsSync(join(globalDir, "playbook.yaml"))).toBe(true);
    expect(loads).toBe(0);
  });

  it("uses the SQLite store (through the loader) for sqlite, and close() releases it", async () => {
    let loads = 0;
    const rt = await runtime({ CASS_MEMORY_STORAGE: "sqlite" }, { loadSqliteStore: async () => (loads++, import("@cass-memory/store-sqlite")) });
    expect(loads).toBe(1);
    await rt.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-1" })));
    expect(rt.deps.store.locations.globalPlaybook).toBe(join(globalDir, "cass-memory.sqlite"));
    expect(existsSync(join(globalDir, "cass-memory.sqlite"))).toBe(true);
    expect(existsSync(join(globalDir, "playbook.yaml"))).toBe(false);
    expect(existsSync(join(globalDir, "cass-memory.sqlite-wal"))).toBe(true);
    rt.close();
    rt.close();
    expect(existsSync(join(globalDir, "cass-memory.sqlite-wal"))).toBe(false);
    const again = await runtime({ CASS_MEMORY_STORAGE: "sqlite" });
    expect((await again.deps.store.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-1"]);
  });

  it("warns when the backend in use has no data for a layer the other backend has", async () => {
    const yaml = await runtime();
    await yaml.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-1" })));
    const lines: string[] = [];
    await runtime({ CASS_MEMORY_STORAGE: "sqlite" }, { stderr: (l) => lines.push(l) });
    expect(lines.join("\n")).toMatch(/global layer's data is only in yaml.*cm storage migrate --to sqlite/);
  });
});

describe("migrateStorage", () => {
  it("moves everything yaml → sqlite → yaml losslessly, leaving the source untouched and backing up stale files", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    const yamlGlobal = snapshot(globalDir);
    const yamlRepo = snapshot(join(repo, ".cass"));

    const result = await migrateStorage(yaml, { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", from: "yaml", to: "sqlite", layers: ["global", "repo"], resumed: false, config: { updated: true } });
    expect(result.sections.copied).toBe(result.sections.total);
    expect(result.verified?.sections).toBeGreaterThanOrEqual(result.sections.total);
    expect(result.backups).toEqual([]);
    expect(readConfig().storage).toEqual({ backend: "sqlite" });
    // Every YAML file is byte-for-byte and time-for-time as before (only config.json was switched).
    const { "config.json": _configBefore, ...yamlData } = yamlGlobal;
    const { "config.json": configAfter, ...globalAfter } = snapshot(globalDir);
    expect(configAfter).not.toBe(_configBefore);
    expect(globalAfter).toMatchObject(yamlData);
    expect(snapshot(join(repo, ".cass"))).toMatchObject(yamlRepo);
    expect(existsSync(stagingDirs(yaml.storage.dirs, "sqlite").globalDir)).toBe(false);
    expect(existsSync(join(repo, ".cass", ".migrate-sqlite"))).toBe(false);

    const sqlite = await runtime();
    expect(sqlite.storage.backend).toBe("sqlite");
    await expectSameData(await storeOf(sqlite, "yaml"), sqlite.deps.store);
    expect((await sqlite.deps.store.readPlaybook("repo"))?.bullets).toHaveLength(5);

    // A change on sqlite, then back to yaml: the stale YAML files are moved aside, never deleted.
    await sqlite.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-new", content: "added on sqlite" })));
    const back = await migrateStorage(sqlite, { to: "yaml" });
    expect(back).toMatchObject({ status: "migrated", from: "sqlite", to: "yaml" });
    expect(back.backups.map((b) => b.layer)).toEqual(["global", "repo"]);
    const globalBackup = back.backups[0]!;
    expect(globalBackup.files).toContain("playbook.yaml");
    expect(readFileSync(join(globalBackup.dir, "playbook.yaml"), "utf8")).not.toContain("b-new");
    expect(readConfig().storage).toEqual({ backend: "yaml" });
    const yamlAgain = await runtime();
    expect((await yamlAgain.deps.store.readPlaybook("global"))?.bullets.map((b) => b.id)).toContain("b-new");
    await expectSameData(await storeOf(yamlAgain, "sqlite"), yamlAgain.deps.store);
  });

  it("answers a migration to the backend in use that has data with a no-op", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store, 1);
    const before = snapshot(globalDir);
    const result = await migrateStorage(yaml, { to: "yaml" });
    expect(result).toMatchObject({ status: "unchanged", layers: [], config: { updated: false } });
    expect(result.message).toMatch(/Already using yaml/);
    expect(snapshot(globalDir)).toEqual(before);
  });

  it("migrates when storage.backend was switched first (the target has no data yet)", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store, 3);
    writeConfig({ ...readConfig(), storage: { backend: "sqlite" } });
    const switched = await runtime();
    expect(await switched.deps.store.readPlaybook("global")).toBeNull();
    const result = await migrateStorage(switched, { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", from: "yaml", to: "sqlite", layers: ["global", "repo"], config: { updated: false } });
    const after = await runtime();
    await expectSameData(await storeOf(after, "yaml"), after.deps.store);
    // Now the database has data: a second run is a no-op.
    expect((await migrateStorage(after, { to: "sqlite" })).status).toBe("unchanged");
  });

  it("plans without changing anything on --dry-run", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store, 4);
    const before = { global: snapshot(globalDir), repo: snapshot(join(repo, ".cass")) };
    const result = await migrateStorage(yaml, { to: "sqlite", dryRun: true });
    expect(result.status).toBe("planned");
    expect(result.plan?.find((s) => s.key === "global/playbook")?.records).toBe(4);
    expect(result.sections.copied).toBe(result.plan?.length);
    expect({ global: snapshot(globalDir), repo: snapshot(join(repo, ".cass")) }).toEqual(before);
    expect(existsSync(join(globalDir, ".migrate-sqlite"))).toBe(false);
    expect(readConfig().storage).toBeUndefined();
  });

  it("resumes an interrupted run after the sections it had copied", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    const stop = new Error("interrupted");
    let copies = 0;
    const interrupt = (event: MigrateProgressEvent): void => {
      if (event.phase === "copy" && ++copies === 3) throw stop;
    };
    await expect(migrateStorage(yaml, { to: "sqlite", onProgress: interrupt })).rejects.toBe(stop);
    expect((await readProgress(globalDir, "sqlite"))?.completed).toHaveLength(3);
    expect(readConfig().storage).toBeUndefined();
    const status = await storageStatus(yaml);
    expect(status.migration.unfinished).toMatchObject([{ to: "sqlite", from: "yaml", completed: 3 }]);

    const copied: string[] = [];
    const resumed = await migrateStorage(yaml, { to: "sqlite", onProgress: (e) => void (e.phase === "copy" && copied.push(e.key)) });
    expect(resumed).toMatchObject({ status: "migrated", resumed: true, sections: { alreadyCompleted: 3 } });
    expect(copied).toHaveLength(resumed.sections.total - 3);
    const after = await runtime();
    await expectSameData(await storeOf(after, "yaml"), after.deps.store);
  });

  it("copies again what an interrupted run's staging lost (found by verification)", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    let copies = 0;
    const interrupt = (event: MigrateProgressEvent): void => {
      if (event.phase === "copy" && ++copies === 12) throw new Error("interrupted");
    };
    await expect(migrateStorage(yaml, { to: "sqlite", onProgress: interrupt })).rejects.toThrow("interrupted");
    const progress = await readProgress(globalDir, "sqlite");
    expect(progress?.completed).toEqual(expect.arrayContaining(["repo/playbook"]));
    // The repository's staged database disappears; the progress still lists its sections as copied.
    const { rmSync } = await import("node:fs");
    rmSync(join(repo, ".cass", ".migrate-sqlite"), { recursive: true, force: true });
    const result = await migrateStorage(yaml, { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", resumed: true });
    const after = await runtime();
    await expectSameData(await storeOf(after, "yaml"), after.deps.store);
    expect((await after.deps.store.readPlaybook("repo"))?.bullets).toHaveLength(5);
  });

  it("fails without switching when the copy does not verify, naming the differing sections", async () => {
    const lossy: RuntimeOptions["loadSqliteStore"] = async () => {
      const mod = await import("@cass-memory/store-sqlite");
      return {
        ...mod,
        createSqliteStore: (options) => {
          const store = mod.createSqliteStore(options);
          const transfer = store.transfer!;
          // A broken store: drops the first record of every log it is given.
          return { ...store, transfer: { ...transfer, writeSection: (section) => transfer.writeSection(section.kind === "log" ? { ...section, records: section.records.slice(1) } : section) } };
        },
      };
    };
    const yaml = await runtime({}, { loadSqliteStore: lossy });
    await populate(yaml.deps.store);
    const config = readFileSync(join(globalDir, "config.json"), "utf8");
    const error = await migrateStorage(yaml, { to: "sqlite" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "INTERNAL_ERROR", message: expect.stringContaining("Verification failed") });
    const differences = (error as { details: { differences: Array<{ key: string; path: string }> } }).details.differences;
    expect(differences.map((d) => d.key).sort()).toEqual(["global/log/outcomes", "repo/log/outcomes"]);
    expect(differences[0]?.path).toBe("records[0]");
    expect(readFileSync(join(globalDir, "config.json"), "utf8")).toBe(config);
    expect(existsSync(join(globalDir, "cass-memory.sqlite"))).toBe(false);
    expect((await readProgress(globalDir, "sqlite"))?.completed).not.toContain("global/log/outcomes");
  });

  it("starts over when the source changed since the interrupted run", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    let copies = 0;
    await expect(
      migrateStorage(yaml, {
        to: "sqlite",
        onProgress: (e) => {
          if (e.phase === "copy" && ++copies === 2) throw new Error("interrupted");
        },
      }),
    ).rejects.toThrow("interrupted");
    await yaml.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-late", content: "added after the interruption" })));
    const result = await migrateStorage(yaml, { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", resumed: false, restarted: expect.stringContaining("changed"), sections: { alreadyCompleted: 0 } });
    const after = await runtime();
    expect((await after.deps.store.readPlaybook("global"))?.bullets.map((b) => b.id)).toContain("b-late");
  });

  it("refuses to switch when another process writes to the source meanwhile", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    const other = await runtime();
    let wrote = false;
    const error = await migrateStorage(yaml, {
      to: "sqlite",
      onProgress: async (e) => {
        if (e.phase === "copy" && e.key === "global/playbook" && !wrote) {
          wrote = true;
          await other.deps.store.mutatePlaybook("global", (p) => void p.bullets.push(createTestBullet({ id: "b-racing", content: "written during the migration" })));
        }
      },
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "LOCK_ACQUISITION_FAILED", message: expect.stringContaining("wrote to the yaml store") });
    expect(readConfig().storage).toBeUndefined();
    expect(existsSync(join(globalDir, "cass-memory.sqlite"))).toBe(false);
    // The next run starts over from the current data, the racing write included.
    const result = await migrateStorage(yaml, { to: "sqlite" });
    expect(result.restarted).toBeDefined();
    const after = await runtime();
    expect((await after.deps.store.readPlaybook("global"))?.bullets.map((b) => b.id)).toContain("b-racing");
  });

  it("holds a named lock: a second migration at the same time is refused", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store, 1);
    const error = await yaml.deps.store.exclusive("storage-migrate", () => migrateStorage(yaml, { to: "sqlite" }).catch((e: unknown) => e));
    expect(error).toMatchObject({ code: "LOCK_ACQUISITION_FAILED", details: { lock: "storage-migrate" } });
    expect(readConfig().storage).toBeUndefined();
  });

  it("puts everything back when installing fails, keeping config, source and the staged copy", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store);
    // A stale database in the repository (from an earlier migration) must be moved aside, but its
    // backups directory cannot be created: the global layer is installed first, then this fails.
    const stale = await runtime({ CASS_MEMORY_STORAGE: "sqlite" });
    await stale.deps.store.mutatePlaybook("repo", (p) => void p.bullets.push(createTestBullet({ id: "b-stale" })));
    stale.close();
    writeFileSync(join(repo, ".cass", "backups"), "a file where a directory is needed");
    const staleDb = readFileSync(join(repo, ".cass", "cass-memory.sqlite"));
    const before = { global: snapshot(globalDir), repo: snapshot(join(repo, ".cass")), config: readFileSync(join(globalDir, "config.json"), "utf8") };

    const error = await migrateStorage(yaml, { to: "sqlite" }).catch((e: unknown) => e);
    expect(isAppError(error)).toBe(true);
    expect((error as Error).message).toMatch(/Could not install the sqlite data.*put back/);
    expect(readFileSync(join(globalDir, "config.json"), "utf8")).toBe(before.config);
    expect(existsSync(join(globalDir, "cass-memory.sqlite"))).toBe(false);
    expect(readFileSync(join(repo, ".cass", "cass-memory.sqlite")).equals(staleDb)).toBe(true);
    expect(snapshot(globalDir)).toEqual(before.global);
    expect(snapshot(join(repo, ".cass"))).toEqual(before.repo);
    const progress = await readProgress(globalDir, "sqlite");
    expect(progress?.completed.length).toBeGreaterThan(0);

    // Fixed: the rerun reuses the copied sections, then installs.
    const { rmSync } = await import("node:fs");
    rmSync(join(repo, ".cass", "backups"));
    const result = await migrateStorage(yaml, { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", resumed: true });
    expect(result.sections.copied).toBe(0);
    expect(result.backups).toMatchObject([{ layer: "repo", files: ["cass-memory.sqlite"] }]);
    const after = await runtime();
    expect((await after.deps.store.readPlaybook("repo"))?.bullets.map((b) => b.id)).not.toContain("b-stale");
  });
});

describe("storageStatus", () => {
  it("reports the backend and why, each backend's data per layer, and later writes to the old backend", async () => {
    const yaml = await runtime();
    await populate(yaml.deps.store, 2);
    let status = await storageStatus(yaml);
    expect(status).toMatchObject({ backend: "yaml", source: "default", sqlitePath: join(globalDir, "cass-memory.sqlite") });
    const global = status.layers.find((l) => l.layer === "global")!;
    expect(global.yaml).toMatchObject({ present: true, bullets: 2, path: join(globalDir, "playbook.yaml") });
    expect(global.yaml.files).toEqual(expect.arrayContaining(["playbook.yaml", "events.jsonl", "blocked.log", "outcomes.jsonl", "diary/diary-0001.json", "onboarding-state.json"]));
    expect(global.sqlite).toMatchObject({ present: false, bullets: null });
    expect(status.migration).toEqual({ unfinished: [], last: null });

    await migrateStorage(yaml, { to: "sqlite" });
    const sqlite = await runtime();
    status = await storageStatus(sqlite);
    expect(status).toMatchObject({ backend: "sqlite", source: "config" });
    for (const layer of ["global", "repo"] as Layer[]) {
      const l = status.layers.find((x) => x.layer === layer)!;
      expect(l.sqlite).toMatchObject({ present: true, bullets: 2, schemaVersion: expect.any(Number) });
      expect(l.otherBackendData).toBe(true);
    }
    expect(status.migration.last).toMatchObject({ from: "yaml", to: "sqlite", sourceChangedSince: false });
    expect(status.hints.join("\n")).toMatch(/yaml data is not used/);

    // A process still on yaml writes: status says the yaml data changed after the migration.
    await yaml.deps.store.appendLog("global", "outcomes", [{ sessionId: "late" }]);
    status = await storageStatus(sqlite);
    expect(status.migration.last?.sourceChangedSince).toBe(true);
    expect(status.hints.join("\n")).toMatch(/changed after the migration/);

    const env = await runtime({ CASS_MEMORY_STORAGE: "yaml" });
    expect(await storageStatus(env)).toMatchObject({ backend: "yaml", source: "env", reason: "CASS_MEMORY_STORAGE=yaml" });
  });
});
