import type { TestProject } from "vitest/node";
import { startTestServer } from "./postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string;
  }
}

/** One PostgreSQL server for the whole test run of this package, stopped (and its data removed) at the end. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestServer();
  project.provide("pgUrl", server.url);
  return () => server.stop();
}
