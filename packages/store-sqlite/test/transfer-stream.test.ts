import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createEmptyPlaybook, type Bullet, type Playbook } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { DATABASE_FILE, type SqliteStore } from "../src/index.js";
import type { SqlitePlaybookStreams } from "../src/transfer.js";
import { closeStores, makeStore, tempDir, withDb } from "./helpers.js";

// The playbook section written and read bullet by bullet (`cm storage migrate`, issue 18): the
// same rows as writing the section whole, in one transaction (nothing kept when it fails).

const NOW = "2026-01-02T03:04:05.678Z";
const rule = (i: number, extra: Record<string, unknown> = {}): Bullet =>
  createTestBullet({ id: `b-${i}`, category: ["git", "testing"][i % 2] as string, content: `rule ${i}: check the header`, tags: [`t${i % 3}`], createdAt: NOW, updatedAt: NOW, ...extra });

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-sqlite-stream-"));
});
afterEach(async () => {
  closeStores();
  await cleanup();
});

function storeIn(name: string): { store: SqliteStore; streams: SqlitePlaybookStreams; path: string } {
  const globalDir = join(dir, name);
  const store = makeStore({ globalDir, repoDir: null });
  return { store, streams: store.transfer as unknown as SqlitePlaybookStreams, path: join(globalDir, DATABASE_FILE) };
}

function rows(path: string): unknown {
  return withDb(path, "global", (db) => ({
    playbook: db.prepare("SELECT body, revision FROM playbook").all(),
    bullets: db.prepare("SELECT row, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body FROM bullets ORDER BY pos").all(),
    fts: db.prepare("SELECT rowid FROM bullets_fts WHERE bullets_fts MATCH 'header' ORDER BY rowid").all(),
  }));
}

describe("SQLite transfer: the playbook bullet by bullet", () => {
  const playbook: Playbook = { ...createEmptyPlaybook(NOW, "global"), name: "streamed", bullets: Array.from({ length: 1200 }, (_, i) => rule(i)) };

  it("writes the rows writeSection writes, and reads back the bullets and the record in order", async () => {
    const whole = storeIn("whole");
    await whole.store.transfer!.writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook });
    const streamed = storeIn("streamed");
    const { bullets, ...head } = playbook;
    expect(await streamed.streams.writePlaybookStream("global/playbook", "global", { ...head, bullets: [] }, bullets.values())).toBe(1200);
    expect(rows(streamed.path)).toEqual(rows(whole.path));

    const read: Bullet[] = [];
    for await (const b of streamed.streams.readPlaybookBullets("global", 100)) read.push(b);
    expect({ ...(await streamed.streams.readPlaybookHead("global")), bullets: read }).toEqual(await streamed.store.transfer!.readSection("global/playbook").then((s) => (s as { playbook: Playbook }).playbook));
    expect(read).toHaveLength(1200);
  });

  it("keeps the earlier playbook when the bullets fail part-way (a throwing source, an invalid bullet)", async () => {
    const s = storeIn("failing");
    await s.store.transfer!.writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook: { ...playbook, bullets: playbook.bullets.slice(0, 3) } });
    const before = rows(s.path);
    const stop = new Error("source gone");
    function* throwing(): Generator<Bullet> {
      yield* playbook.bullets.slice(0, 700);
      throw stop;
    }
    await expect(s.streams.writePlaybookStream("global/playbook", "global", playbook, throwing())).rejects.toBe(stop);
    expect(rows(s.path)).toEqual(before);
    const invalid = [...playbook.bullets.slice(0, 10), { ...rule(10), id: "" }];
    await expect(s.streams.writePlaybookStream("global/playbook", "global", playbook, invalid)).rejects.toMatchObject({ code: "VALIDATION_FAILED", message: expect.stringContaining("bullets.10") });
    expect(rows(s.path)).toEqual(before);
  });
});
