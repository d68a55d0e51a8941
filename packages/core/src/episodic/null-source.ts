import type { DegradedInfo, EpisodicSource } from "../ports.js";

/**
 * The degraded report the original `cm` gives when no `cass` binary answers (reference §6.3);
 * agents match on `reason` and show `suggestedFix`.
 */
export const CASS_NOT_FOUND_DEGRADED: DegradedInfo = Object.freeze({
  available: false,
  reason: "NOT_FOUND",
  message:
    "cass binary not found. Falling back to playbook-only mode (history disabled). Install via `cargo install coding-agent-search` or download a release binary: https://github.com/Dicklesworthstone/coding_agent_session_search Then set CASS_PATH or config.cassPath.",
  suggestedFix: ["cargo install coding-agent-search", "cass index"],
}) as DegradedInfo;

/**
 * An episodic source with no history behind it. Every query answers empty and reports `degraded`
 * so callers show why history is missing; it never throws. With `degraded: null` (history switched
 * off on purpose, `episodic: none`) nothing is reported.
 */
export function createNullEpisodicSource(degraded: DegradedInfo | null = CASS_NOT_FOUND_DEGRADED, name = "none"): EpisodicSource {
  const report = (): DegradedInfo | undefined =>
    degraded === null ? undefined : { ...degraded, ...(degraded.suggestedFix ? { suggestedFix: [...degraded.suggestedFix] } : {}) };
  return {
    name,
    async health() {
      const info = report();
      return { available: false, name, ...(info ? { degraded: info } : {}) };
    },
    async search() {
      const info = report();
      return { hits: [], ...(info ? { degraded: info } : {}) };
    },
    async listSessions() {
      return [];
    },
    async export() {
      return null;
    },
    async expand() {
      return null;
    },
  };
}
