import type { Runtime } from "@cass-memory/runtime";
import type { DashboardStoreInfo } from "./handler.js";

/** What the overview shows about the store: the backend and, for the file-based ones, where it lives. */
export function dashboardStoreInfo(runtime: Pick<Runtime, "storage">): DashboardStoreInfo {
  const { backend, dirs } = runtime.storage;
  if (backend === "yaml") return { backend, playbookPath: dirs.playbookPath };
  if (backend === "sqlite") return { backend, playbookPath: dirs.sqlitePath };
  // PostgreSQL: the URL may hold a password; nothing is shown.
  return { backend };
}
