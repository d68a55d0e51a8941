import type { HealthCheck } from "@cass-memory/core";
import { claudeGuardHealth } from "./install.js";

/** The doctor's checks of what is installed in the working directory (reference §1.5.13). */
export async function hostHealthChecks(cwd: string): Promise<HealthCheck[]> {
  try {
    const guard = await claudeGuardHealth({ cwd });
    return guard === null ? [] : [{ category: "Trauma System", item: "Safety Guard", ...guard }];
  } catch (error) {
    return [{ category: "Trauma System", item: "Safety Guard", status: "warn", message: `Could not check the guard: ${error instanceof Error ? error.message : String(error)}` }];
  }
}
