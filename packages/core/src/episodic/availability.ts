import type { EpisodicHealth } from "../ports.js";

/**
 * Whether the `cass` CLI is installed and runs, from a source's health report: the original's
 * `cassAvailable` (true when `cass --version` works). A cass that is installed but failing (index
 * missing, timeout, …) still counts; history answered by the native readers does not.
 */
export function cassAvailableFrom(health: EpisodicHealth): boolean {
  const parts = health.components ?? [health];
  return parts.some((part) => part.name === "cass" && (part.available || (part.degraded !== undefined && part.degraded.reason !== "NOT_FOUND")));
}
