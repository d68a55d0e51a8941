import { afterEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "@cass-memory/core/testing";
import { PgDatabase } from "../src/database.js";
import { testUrl } from "./helpers.js";

/** The connection layer: how many transactions run at once, and on which connections. */

const opened: PgDatabase[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((db) => db.close()));
});

function database(concurrentTransactions?: number): PgDatabase {
  const db = new PgDatabase({
    url: testUrl(),
    schema: "cass_memory",
    logger: createMemoryLogger(),
    lockTimeoutMs: 10_000,
    connectTimeoutMs: 5_000,
    ...(concurrentTransactions !== undefined ? { concurrentTransactions } : {}),
  });
  opened.push(db);
  return db;
}

/** The server process of a read that takes a while (so that parallel reads overlap). */
const slowPid = (db: PgDatabase): Promise<number> =>
  db.read(async (sql) => Number((await sql.query("SELECT pg_backend_pid() AS pid, pg_sleep(0.05)")).rows[0]?.pid));

describe("PostgreSQL connections", () => {
  it("runs a one-shot command's parallel reads one after another on one connection", async () => {
    const db = database();
    const pids = await Promise.all([slowPid(db), slowPid(db), slowPid(db), db.query("SELECT pg_backend_pid()", []).then((rows) => Number(rows[0]?.[0]))]);
    expect(new Set(pids).size).toBe(1);
  });

  it("opens more connections when more transactions may run at once", async () => {
    const db = database(4);
    const pids = await Promise.all([slowPid(db), slowPid(db), slowPid(db), slowPid(db)]);
    expect(new Set(pids).size).toBeGreaterThan(1);
  });

  it("a transaction started inside another one's function does not wait for its turn (no deadlock)", async () => {
    const db = database();
    const space = `t:turns-${process.pid}`;
    const [outer, inner] = await db.write(space, async (sql) => {
      const pid = Number((await sql.query("SELECT pg_backend_pid() AS pid")).rows[0]?.pid);
      return [pid, await slowPid(db)];
    });
    expect(inner).not.toBe(outer);
    // The turn was given back: later transactions run.
    expect(await slowPid(db)).toBeGreaterThan(0);
  });

  it("a failed transaction gives its turn back", async () => {
    const db = database();
    await expect(db.read(async (sql) => sql.query("SELECT * FROM no_such_table"))).rejects.toThrow(/no_such_table/);
    await expect(db.query("SELECT no_such_column FROM cm_spaces", [])).rejects.toThrow(/no_such_column/);
    expect(await slowPid(db)).toBeGreaterThan(0);
  });
});
