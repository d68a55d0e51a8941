import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifySections, type Bullet, type Store } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { createRuntime, type Runtime, type RuntimeOptions } from "../src/runtime.js";
import { closeAllStores, openStore } from "../src/storage/backend.js";
import { migrateStorage, readProgress, stagingDirs } from "../src/storage/migrate.js";
import { tempDir } from "./helpers.js";

// Issue 18: `storage migrate --to sqlite` copies and verifies a playbook bullet by bullet. These
// tests hold the streamed copy to the whole-section copy (the same database rows), and check that
// an interruption in the middle of the playbook keeps the live store as it was and that a rerun
// completes the migration.

const requireHere = createRequire(import.meta.url);
const storeYamlEntry = requireHere.resolve("@cass-memory/store-yaml");
const storeSqliteEntry = requireHere.resolve("@cass-memory/store-sqlite");
/** The `yaml` library as the earlier cm used it (through store-yaml, which depends on it). */
const YAML = createRequire(storeYamlEntry)("yaml") as { stringify(value: unknown): string };
type SqliteDb = { prepare(sql: string): { all(...args: unknown[]): unknown[] }; close(): void };
const Database = createRequire(storeSqliteEntry)("better-sqlite3") as new (path: string, options?: { readonly?: boolean }) => SqliteDb;

const RULES = 5000;
const T0 = "2025-03-01T10:00:00.000Z";
/** A token in the shape of a GitHub personal access token: the migration redacts it. */
const FAKE_TOKEN = `ghp_${"a1B2c3D4e5F6g7H8i9J0".repeat(2).slice(0, 36)}`;

let root: string;
let cleanup: () => void;
const opened: Array<{ close(): void }> = [];

beforeEach(() => {
  const t = tempDir("cm-migrate-stream-");
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => {
  for (const item of opened.splice(0)) item.close();
  closeAllStores();
  cleanup();
});

/** A playbook written the way the earlier cm wrote it (`yaml.stringify`): folded lines, block scalars, quoting, an anchor. */
function earlierCmPlaybook(count: number): string {
  const shared: string[] = [];
  const bullets: Bullet[] = [];
  for (let i = 0; i < count; i++) {
    const b = createTestBullet({
      id: `b-${i.toString(36)}`,
      category: ["testing", "git", "auth", "deploy"][i % 4] as string,
      content: `Rule ${i}: run the ${["unit", "integration", "smoke"][i % 3]} tests before pushing ${"and check the logs ".repeat(i % 6)}`,
      tags: [`t${i % 10}`],
      helpfulCount: i % 7,
      createdAt: T0,
      updatedAt: T0,
    }) as Bullet & Record<string, unknown>;
    if (i % 7 === 0) b.reasoning = `Seen in session ${i}:\n  the fix worked twice\n\nKeep it unless the API changes.\n`;
    if (i % 11 === 0) b.content = `${b.content}: check the header #${i} first`;
    if (i % 13 === 0) b.content = `Use "strict" mode; it's required by the linter (rule ${i})`;
    if (i % 50 === 0) b.sourceAgents = shared;
    if (i === 4321) b.content = `Authenticate with ${FAKE_TOKEN} when the CI asks`;
    bullets.push(b);
  }
  return YAML.stringify({
    schema_version: 2,
    name: "playbook",
    description: "Auto-generated from cass-memory reflections",
    metadata: { createdAt: T0, totalReflections: 3, totalSessionsProcessed: 4 },
    deprecatedPatterns: [],
    bullets,
  });
}

interface Home {
  home: string;
  globalDir: string;
}

function homeWith(name: string, playbook: string): Home {
  const home = join(root, name);
  const globalDir = join(home, ".cass-memory");
  mkdirSync(globalDir, { recursive: true });
  writeFileSync(join(globalDir, "config.json"), `${JSON.stringify({ maxBulletsInContext: 50 }, null, 2)}\n`);
  writeFileSync(join(globalDir, "playbook.yaml"), playbook);
  return { home, globalDir };
}

async function runtime(h: Home, options: RuntimeOptions = {}): Promise<Runtime> {
  const rt = await createRuntime({ env: { HOME: h.home }, cwd: h.home, stderr: () => {}, ...options });
  opened.push(rt);
  return rt;
}

type Transfer = NonNullable<Store["transfer"]> & Record<string, unknown>;
type SqliteModule = Awaited<ReturnType<NonNullable<RuntimeOptions["loadSqliteStore"]>>>;

/** A SQLite module whose stores' transfers are changed by `wrap`. */
function sqliteWith(wrap: (transfer: Transfer) => Transfer): RuntimeOptions["loadSqliteStore"] {
  return async () => {
    const mod = (await import("@cass-memory/store-sqlite")) as SqliteModule;
    return {
      ...mod,
      createSqliteStore: (options: Parameters<SqliteModule["createSqliteStore"]>[0]) => {
        const store = mod.createSqliteStore(options);
        return { ...store, transfer: wrap(store.transfer as Transfer) };
      },
    } as SqliteModule;
  };
}

/** Without the bullet-by-bullet methods: the migration copies the playbook section whole (as before issue 18). */
const wholeSectionOnly = sqliteWith((transfer) => {
  const { writePlaybookStream: _w, readPlaybookHead: _h, readPlaybookBullets: _b, ...rest } = transfer;
  return rest as Transfer;
});

/** The database's content, without times of writing: every bullet row, the playbook record, the full-text index. */
function databaseContent(path: string): unknown {
  const db = new Database(path, { readonly: true });
  try {
    return {
      playbook: db.prepare("SELECT body, revision FROM playbook").all(),
      bullets: db.prepare("SELECT row, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body FROM bullets ORDER BY pos, row").all(),
      fts: db.prepare("SELECT rowid FROM bullets_fts WHERE bullets_fts MATCH 'strict OR header' ORDER BY rowid").all(),
      files: db.prepare("SELECT name FROM layer_files ORDER BY name").all(),
    };
  } finally {
    db.close();
  }
}

/** Every file below `dir` (path → mtime and content), without staging, locks and caches. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    if (!existsSync(d)) return;
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if ([".cache", "backups", ".migrate-sqlite"].includes(entry.name) || entry.name.endsWith(".lock.d")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = `${statSync(path).mtimeMs}:${readFileSync(path).toString("base64")}`;
    }
  };
  walk(dir);
  return out;
}

async function expectSameAsSource(h: Home): Promise<void> {
  const rt = await runtime(h);
  expect(rt.storage.backend).toBe("sqlite");
  const source = await openStore("yaml", rt.storage.dirs, { logger: rt.deps.logger, parseCache: false });
  opened.push(source);
  const sqliteSource = source.store.transfer as NonNullable<Store["transfer"]>;
  const result = await verifySections(sqliteSource, rt.deps.store.transfer as NonNullable<Store["transfer"]>);
  // The only difference: the token, redacted in the copy.
  expect(result.differences).toHaveLength(1);
  expect(result.differences[0]).toMatchObject({ key: "global/playbook", path: "playbook.bullets[4321].content" });
  const playbook = await rt.deps.store.readPlaybook("global");
  expect(playbook?.bullets).toHaveLength(RULES);
  expect(JSON.stringify(playbook)).not.toContain(FAKE_TOKEN);
}

describe("storage migrate --to sqlite, bullet by bullet (issue 18)", () => {
  it("gives exactly the database the whole-section copy gives for a 5,000-rule earlier-cm playbook", async () => {
    const text = earlierCmPlaybook(RULES);
    expect(text).toContain("&a1 []");
    expect(text).toMatch(/reasoning: \|/);
    const streamed = homeWith("streamed", text);
    const whole = homeWith("whole", text);

    let streamedBullets = 0;
    const counting = sqliteWith((transfer) => ({
      ...transfer,
      writePlaybookStream: async (key: string, layer: string, head: unknown, bullets: Iterable<unknown>) => {
        const counted = (function* () {
          for (const b of bullets) {
            streamedBullets += 1;
            yield b;
          }
        })();
        return (transfer.writePlaybookStream as (...args: unknown[]) => Promise<number>)(key, layer, head, counted);
      },
    }));
    const a = await migrateStorage(await runtime(streamed, { loadSqliteStore: counting }), { to: "sqlite" });
    const b = await migrateStorage(await runtime(whole, { loadSqliteStore: wholeSectionOnly }), { to: "sqlite" });
    // The stream was used for the first and not for the second.
    expect(streamedBullets).toBe(RULES);
    expect(a.streamed).toEqual(["global/playbook"]);
    expect(b.streamed).toBeUndefined();
    for (const result of [a, b]) {
      expect(result).toMatchObject({ status: "migrated", sections: { records: RULES }, verified: { sections: 1 } });
      expect(result.secretsRedacted?.total).toBe(1);
    }
    expect({ ...a, message: "", config: null, installed: null, streamed: null }).toEqual({ ...b, message: "", config: null, installed: null, streamed: null });
    expect(databaseContent(join(streamed.globalDir, "cass-memory.sqlite"))).toEqual(databaseContent(join(whole.globalDir, "cass-memory.sqlite")));
    // The source is left as it was.
    expect(readFileSync(join(streamed.globalDir, "playbook.yaml"), "utf8")).toBe(text);
    await expectSameAsSource(streamed);
  }, 600_000);

  it("an interruption in the middle of the playbook leaves the live store untouched, nothing of the playbook staged, and a rerun completes", async () => {
    const text = earlierCmPlaybook(RULES);
    const h = homeWith("interrupted", text);
    const config = readFileSync(join(h.globalDir, "config.json"), "utf8");
    const before = snapshot(h.globalDir);
    const powerCut = new Error("power cut in the middle of the playbook");
    const cut = sqliteWith((transfer) => ({
      ...transfer,
      writePlaybookStream: async (key: string, layer: string, head: unknown, bullets: Iterable<unknown>) => {
        const half = (function* () {
          let n = 0;
          for (const b of bullets) {
            if (++n > RULES / 2) throw powerCut;
            yield b;
          }
        })();
        return (transfer.writePlaybookStream as (...args: unknown[]) => Promise<number>)(key, layer, head, half);
      },
    }));
    const rt = await runtime(h, { loadSqliteStore: cut });
    await expect(migrateStorage(rt, { to: "sqlite" })).rejects.toBe(powerCut);
    // Live store: as it was, and still on YAML.
    expect(snapshot(h.globalDir)).toEqual(before);
    expect(readFileSync(join(h.globalDir, "config.json"), "utf8")).toBe(config);
    expect(existsSync(join(h.globalDir, "cass-memory.sqlite"))).toBe(false);
    // Staging: the playbook is not marked copied and none of its rows were kept.
    expect((await readProgress(h.globalDir, "sqlite"))?.completed ?? []).not.toContain("global/playbook");
    const staged = await openStore("sqlite", stagingDirs(rt.storage.dirs, "sqlite"), { logger: rt.deps.logger, parseCache: false });
    expect(await staged.store.transfer?.listSections()).not.toContain("global/playbook");
    expect(databaseContent(join(h.globalDir, ".migrate-sqlite", "cass-memory.sqlite"))).toMatchObject({ playbook: [], bullets: [] });
    staged.close();
    closeAllStores();

    const again = await migrateStorage(await runtime(h), { to: "sqlite" });
    expect(again).toMatchObject({ status: "migrated", sections: { records: RULES }, streamed: ["global/playbook"] });
    expect(existsSync(join(h.globalDir, ".migrate-sqlite"))).toBe(false);
    await expectSameAsSource(h);
  }, 600_000);

  it("copies a playbook the stream reader leaves to the whole-file reader (CR line ends) the whole-section way", async () => {
    const text = earlierCmPlaybook(300).replace(/\n/g, "\r\n");
    const h = homeWith("crlf", text);
    let streamCalls = 0;
    const watching = sqliteWith((transfer) => ({
      ...transfer,
      writePlaybookStream: (...args: unknown[]) => {
        streamCalls += 1;
        return (transfer.writePlaybookStream as (...a: unknown[]) => Promise<number>)(...args);
      },
    }));
    const result = await migrateStorage(await runtime(h, { loadSqliteStore: watching }), { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", sections: { records: 300 } });
    expect(result.streamed).toBeUndefined();
    expect(streamCalls).toBe(0);
    const rt = await runtime(h);
    expect((await rt.deps.store.readPlaybook("global"))?.bullets).toHaveLength(300);
  }, 600_000);

  it("rolls back a streamed copy that meets a rule the stream reader does not cover, and copies the section whole", async () => {
    // A flow list in the 200th rule: valid YAML, but outside the fast reader's subset (the library reads it).
    const text = earlierCmPlaybook(400).replace(/(\n  - id: b-5k\n(?: {4}[^\n]*\n)*? {4}tags:)\n {6}- (t\d)\n/, "$1 [ $2, extra ]\n");
    expect(text).toContain("[ t0, extra ]");
    const h = homeWith("midway", text);
    let yielded = 0;
    const watching = sqliteWith((transfer) => ({
      ...transfer,
      writePlaybookStream: (key: string, layer: string, head: unknown, bullets: Iterable<unknown>) =>
        (transfer.writePlaybookStream as (...a: unknown[]) => Promise<number>)(
          key,
          layer,
          head,
          (function* () {
            for (const b of bullets) {
              yielded += 1;
              yield b;
            }
          })(),
        ),
    }));
    const result = await migrateStorage(await runtime(h, { loadSqliteStore: watching }), { to: "sqlite" });
    expect(result).toMatchObject({ status: "migrated", sections: { records: 400 } });
    expect(result.streamed).toBeUndefined();
    // The stream got as far as the rule before the flow list; none of its rows were kept.
    expect(yielded).toBe(200);
    const rt = await runtime(h);
    const playbook = await rt.deps.store.readPlaybook("global");
    expect(playbook?.bullets).toHaveLength(400);
    expect(playbook?.bullets[200]?.tags).toEqual(["t0", "extra"]);
    expect(databaseContent(join(h.globalDir, "cass-memory.sqlite"))).toMatchObject({ bullets: expect.any(Array) });
    expect((databaseContent(join(h.globalDir, "cass-memory.sqlite")) as { bullets: unknown[] }).bullets).toHaveLength(400);
  }, 600_000);

  it("counts a streamed playbook on --dry-run without changing anything", async () => {
    const h = homeWith("dry", earlierCmPlaybook(1200));
    const before = snapshot(h.globalDir);
    const plan = await migrateStorage(await runtime(h), { to: "sqlite", dryRun: true });
    expect(plan).toMatchObject({ status: "planned", sections: { records: 1200 } });
    expect(plan.plan).toEqual([{ key: "global/playbook", kind: "playbook", records: 1200, skipped: 0 }]);
    expect(snapshot(h.globalDir)).toEqual(before);
  }, 600_000);
});
