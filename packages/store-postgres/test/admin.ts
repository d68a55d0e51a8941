import pg from "pg";
import { LISTENER_APPLICATION_NAME } from "../src/listener.js";

/**
 * Server-side views of a test database's connections, for tests outside this package too (the
 * MCP server's end-to-end test imports this file, so `pg` resolves from here).
 */

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Server process ids of the change listeners (LISTEN connections of memoizing stores) connected to the database. */
export async function listenerPids(url: string): Promise<number[]> {
  return withClient(url, async (c) =>
    (await c.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database() ORDER BY pid", [LISTENER_APPLICATION_NAME])).rows.map(
      (r) => Number(r.pid),
    ),
  );
}

/** Ends server processes (pg_terminate_backend), as an administrator or a failover would. */
export async function terminateBackends(url: string, pids: readonly number[]): Promise<void> {
  await withClient(url, async (c) => {
    for (const pid of pids) await c.query("SELECT pg_terminate_backend($1)", [pid]);
  });
}
