import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmptyPlaybook, isAppError, type Layer, type Playbook, type StoreTransfer } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { DATABASE_FILE, type SqliteStore } from "../src/index.js";
import { closeStores, makeStore, tempDir, withDb } from "./helpers.js";

const NOW = "2026-01-02T03:04:05.678Z";
const bullet = (id: string, content: string) => createTestBullet({ id, category: "general", content, createdAt: NOW, updatedAt: NOW });

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let repoDir = "";
const open = (extra: Record<string, unknown> = {}): SqliteStore => makeStore({ globalDir, repoDir, ...extra });
const dbPath = (layer: Layer = "global") => join(layer === "global" ? globalDir : repoDir, DATABASE_FILE);

function transferOf(store: SqliteStore): StoreTransfer {
  if (!store.transfer) throw new Error("no transfer");
  return store.transfer;
}

function playbookWith(...bullets: ReturnType<typeof bullet>[]): Playbook {
  return { ...createEmptyPlaybook(NOW, "global"), bullets };
}

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-sqlite-transfer-"));
  globalDir = join(dir, "home", ".cass-memory");
  repoDir = join(dir, "repo", ".cass");
});
afterEach(async () => {
  closeStores();
  await cleanup();
});

describe("SQLite store transfer", () => {
  it("keeps the full-text index in step with the bullets a playbook section writes and replaces", async () => {
    const store = open();
    await store.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-old", "Prefer zebra migrations")));
    const first = playbookWith(bullet("b-1", "Validate walrus tokens early"), bullet("b-2", "Cache the walrus lookups"));
    await transferOf(store).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: first });
    expect((await store.searchBulletCandidates("global", "walrus", 10)).map((c) => c.bullet.id).sort()).toEqual(["b-1", "b-2"]);
    expect(await store.searchBulletCandidates("global", "zebra", 10)).toEqual([]);

    await transferOf(store).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: playbookWith(bullet("b-3", "Name the penguin fixtures")) });
    expect(await store.searchBulletCandidates("global", "walrus", 10)).toEqual([]);
    expect((await store.searchBulletCandidates("global", "penguin", 10)).map((c) => c.bullet.id)).toEqual(["b-3"]);
    await transferOf(store).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: null });
    expect(await store.searchBulletCandidates("global", "penguin", 10)).toEqual([]);
    withDb(dbPath(), "global", (db) => {
      // Raises when the external-content index and the bullets table disagree.
      db.prepare("INSERT INTO bullets_fts (bullets_fts, rank) VALUES ('integrity-check', 1)").run();
      expect(db.prepare("SELECT count(*) FROM bullets").pluck().get()).toBe(0);
    });
  });

  it("writes a section in one transaction: a failure part-way leaves the previous rows", async () => {
    const store = open();
    await store.appendLog("global", "outcomes", [{ kept: 1 }, { kept: 2 }]);
    withDb(dbPath(), "global", (db) =>
      db.exec("CREATE TRIGGER fail_boom BEFORE INSERT ON logs WHEN new.line LIKE '%boom%' BEGIN SELECT RAISE(ABORT, 'boom'); END;"),
    );
    let caught: unknown;
    try {
      await transferOf(store).writeSection({ key: "global/log/outcomes", kind: "log", layer: "global", log: "outcomes", records: [{ fine: true }, { boom: true }], skipped: 0 });
    } catch (error) {
      caught = error;
    }
    expect(isAppError(caught), String(caught)).toBe(true);
    expect((await store.readLog("global", "outcomes")).records).toEqual([{ kept: 1 }, { kept: 2 }]);
  });

  it("never reuses a playbook revision after a removal, so memoizing readers see the new playbook", async () => {
    const reader = open({ memoizeReads: true });
    const writer = open();
    await writer.mutatePlaybook("global", (pb) => void pb.bullets.push(bullet("b-1", "first")));
    expect((await reader.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-1"]);
    await transferOf(writer).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: null });
    await transferOf(writer).writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: playbookWith(bullet("b-2", "second")) });
    expect((await reader.readPlaybook("global"))?.bullets.map((b) => b.id)).toEqual(["b-2"]);
  });

  it("reports the layer's files as present after writing them, and the playbook as absent after a removal", async () => {
    const store = open();
    const transfer = transferOf(store);
    await transfer.writeSection({ key: "repo/playbook", kind: "playbook", layer: "repo", playbook: { ...createEmptyPlaybook(NOW, "repo"), bullets: [] } });
    await transfer.writeSection({ key: "repo/blocked", kind: "blocked", layer: "repo", blocked: [], toxic: [], skipped: 0 });
    expect((await store.layerStatus("repo")).present).toEqual(["playbook.yaml", "blocked.log"]);
    await transfer.writeSection({ key: "global/log/usage", kind: "log", layer: "global", log: "usage", records: [{ n: 1 }], skipped: 0 });
    expect((await store.layerStatus("global")).present).toEqual(["usage.jsonl"]);
    await transfer.writeSection({ key: "repo/playbook", kind: "playbook", layer: "repo", playbook: null });
    expect((await store.layerStatus("repo")).present).toEqual(["blocked.log"]);
  });

  it("does not create a database for an empty section", async () => {
    const store = open();
    await transferOf(store).writeSection({ key: "repo/log/traumas", kind: "log", layer: "repo", log: "traumas", records: [], skipped: 0 });
    await transferOf(store).writeSection({ key: "onboarding", kind: "onboarding", state: null });
    expect(existsSync(dbPath("repo"))).toBe(false);
    expect(existsSync(dbPath("global"))).toBe(false);
    expect(await transferOf(store).listSections()).toEqual([]);
  });

  it("counts undecodable journal rows, cost lines and a damaged cost total in skipped", async () => {
    const store = open();
    await store.costs.record({ provider: "p", model: "m", tokensIn: 1, tokensOut: 1, cost: 0.5, timestamp: NOW });
    await store.mutatePlaybook("global", (pb, tx) => {
      pb.bullets.push(bullet("b-1", "one"));
      tx.journal([{ id: "ev-1", timestamp: NOW, operation: "add", change: "created", bulletId: "b-1", layer: "global", actor: "t", hashBefore: null, hashAfter: null }]);
    });
    withDb(dbPath(), "global", (db) => {
      db.prepare("INSERT INTO cost_entries (month, line) VALUES ('2026-01', '{ torn')").run();
      db.prepare("UPDATE documents SET text = 'damaged' WHERE name = 'cost/total.json'").run();
      db.prepare("INSERT INTO journal (bullet_id, timestamp, event) VALUES (NULL, NULL, '{\"id\": 1}')").run();
    });
    const costs = await transferOf(store).readSection("costs");
    expect(costs).toMatchObject({ kind: "costs", totals: null, skipped: 2 });
    expect(costs.kind === "costs" ? Object.values(costs.months).flat() : []).toHaveLength(1);
    const journal = await transferOf(store).readSection("global/journal");
    expect(journal).toMatchObject({ kind: "journal", skipped: 1 });
    expect(journal.kind === "journal" ? journal.events.map((e) => e.id) : []).toEqual(["ev-1"]);
  });
});
