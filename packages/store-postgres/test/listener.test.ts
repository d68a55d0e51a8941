import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";
import type { Playbook } from "@cass-memory/core";
import { CHANGE_CHANNEL } from "../src/index.js";
import { closeStores, makeStore, spaceOf, withSql } from "./helpers.js";

/** memoizeReads (cm serve): a LISTEN connection tells the reader about other processes' writes; it reconnects after a drop. */

let root = "";
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cm-pg-listen-"));
});
afterAll(async () => {
  await closeStores();
  await rm(root, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const helpful = (pb: Playbook | null): number => pb?.bullets.find((b) => b.id === "b-1")?.helpfulCount ?? -1;

describe("change listener (memoizeReads)", () => {
  it("serves the memo without a query while listening, sees other stores' writes, and recovers after its connection is ended", async () => {
    const globalDir = join(root, "g", ".cass-memory");
    const writer = makeStore({ globalDir, repoDir: null });
    const reader = makeStore({ globalDir, repoDir: null, memoizeReads: true });
    await writer.mutatePlaybook("global", (pb) => void pb.bullets.push(createTestBullet({ id: "b-1", content: "Keep deploys small", helpfulCount: 0 })));
    const first = await reader.readPlaybook("global");
    expect(helpful(first)).toBe(0);
    const pid = await until("the listener", () => reader.changeListener()?.backendPid ?? undefined);
    expect(reader.changeListener()?.live).toBe(true);
    // Refresh the memo under the live listener, then change the row behind the store's back
    // without a notification: a memo hit asks nothing, so the reader keeps what it had.
    const memo = await reader.readPlaybook("global");
    await withSql((c) => c.query("UPDATE cm_spaces SET revision = revision + 1000 WHERE space = $1", [spaceOf(globalDir)]));
    expect(await reader.readPlaybook("global")).toBe(memo);
    // A notification (any write announces one) makes it look again.
    await withSql((c) => c.query(`NOTIFY ${CHANGE_CHANNEL}, 'x'`));
    await until("the reader to re-read", async () => ((await reader.readPlaybook("global")) !== memo ? true : undefined));

    // Another store's write is seen.
    await writer.mutatePlaybook("global", (pb) => void ((pb.bullets[0] as { helpfulCount: number }).helpfulCount = 1), { bulletIds: ["b-1"] });
    await until("the write to be seen", async () => (helpful(await reader.readPlaybook("global")) === 1 ? true : undefined));
    // The reader's own write is seen by its next read, at once.
    await reader.mutatePlaybook("global", (pb) => void ((pb.bullets[0] as { helpfulCount: number }).helpfulCount = 2), { bulletIds: ["b-1"] });
    expect(helpful(await reader.readPlaybook("global"))).toBe(2);

    // End the listening connection on the server.
    await withSql((c) => c.query("SELECT pg_terminate_backend($1)", [pid]));
    await until("the listener to notice", () => (reader.changeListener()?.backendPid !== pid ? true : undefined));
    // Whether it is down or already back, a write made now is seen by the next read.
    await writer.mutatePlaybook("global", (pb) => void ((pb.bullets[0] as { helpfulCount: number }).helpfulCount = 3), { bulletIds: ["b-1"] });
    expect(helpful(await reader.readPlaybook("global"))).toBe(3);
    // It reconnects by itself, and notifications reach it again.
    const next = await until("the listener to reconnect", () => {
      const state = reader.changeListener();
      return state?.live && state.backendPid !== null && state.backendPid !== pid ? state.backendPid : undefined;
    });
    expect(next).not.toBe(pid);
    await reader.readPlaybook("global");
    await writer.mutatePlaybook("global", (pb) => void ((pb.bullets[0] as { helpfulCount: number }).helpfulCount = 4), { bulletIds: ["b-1"] });
    await until("the write after reconnecting to be seen", async () => (helpful(await reader.readPlaybook("global")) === 4 ? true : undefined));
  });

  it("a store without memoizeReads opens no listener", async () => {
    const store = makeStore({ globalDir: join(root, "plain", ".cass-memory"), repoDir: null });
    expect(store.changeListener()).toBeNull();
  });
});
