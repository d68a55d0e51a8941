import { CASS_NOT_FOUND_DEGRADED, type DegradedInfo } from "@cass-memory/core";
import { type CassErrorInfo, firstLine, parseErrorEnvelope, truncate } from "./parse.js";
import type { RunOutcome } from "./run.js";

/**
 * Turning a failed cass run into core's DegradedInfo. Branches on the envelope's `error.kind`
 * first and uses the exit code only when cass gave no kind (reference/cass-contract.md §3, §6.1);
 * the messages and suggested fixes are the original `cm`'s (reference/original-behaviour.md §6.3).
 */

/** Kinds meaning "there is no index/database to search yet". */
const INDEX_MISSING_KINDS = new Set(["missing-index", "index-missing", "missing-db"]);
/** Catch-all kinds whose message is worth reading for a more specific cause. */
const GENERIC_KINDS = new Set(["unknown", "search", "db-query", "db-error"]);
/** Kinds meaning the archive's full-text tables are gone. */
const FTS_KINDS = new Set(["archive-fts-rebuild"]);

export const INDEX_MISSING_MESSAGE = "cass index is missing; history is disabled until indexed.";
/** `cass index --full` builds the first archive; plain `cass index` is incremental (contract §4.7). */
export const INDEX_MISSING_FIX = ["cass index --full", "cass health"];
export const TIMEOUT_MESSAGE = "cass search timed out; history may be incomplete.";
export const FTS_MESSAGE = "cass FTS table is missing; run 'cass doctor --fix' to recreate it.";
export const FTS_FIX = ["cass doctor --fix", "cass health"];
export const OTHER_FIX = ["cass doctor --fix", "cm doctor", "cass health"];

export function notFoundDegraded(): DegradedInfo {
  return { ...CASS_NOT_FOUND_DEGRADED, suggestedFix: [...(CASS_NOT_FOUND_DEGRADED.suggestedFix ?? [])] };
}

/** The spawn could not find or execute the binary. */
export function isMissingBinary(outcome: RunOutcome): boolean {
  return outcome.kind === "spawn-failed" && (outcome.errno === "ENOENT" || outcome.errno === "EACCES" || outcome.errno === "ENOTDIR");
}

/** POSIX single quoting, so a suggested command is safe to paste whatever the query holds. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function clampInt(value: number | undefined, fallback: number, min: number, max: number): number {
  const n = value !== undefined && Number.isFinite(value) ? Math.trunc(value) : fallback;
  return Math.min(max, Math.max(min, n));
}

export interface SearchContext {
  query: string;
  limit: number;
  days?: number;
}

export function timeoutDegraded(ctx: SearchContext): DegradedInfo {
  return {
    available: false,
    reason: "TIMEOUT",
    message: TIMEOUT_MESSAGE,
    suggestedFix: [
      `cass search ${shellQuote(ctx.query)} --robot --limit ${clampInt(ctx.limit, 5, 1, 5)} --days ${clampInt(ctx.days, 7, 1, 30)}`,
      "cass health",
    ],
  };
}

export function indexMissingDegraded(): DegradedInfo {
  return { available: false, reason: "INDEX_MISSING", message: INDEX_MISSING_MESSAGE, suggestedFix: [...INDEX_MISSING_FIX] };
}

/** Commands quoted in a hint (`Run 'cass index --full' …`), to put first among the fixes. */
function hintCommands(hint: string | undefined): string[] {
  if (hint === undefined) return [];
  const out: string[] = [];
  for (const match of hint.matchAll(/['`](cass [^'`]+)['`]/g)) if (match[1]) out.push(match[1].trim());
  return out;
}

export function otherDegraded(what: string, detail: string, hint?: string): DegradedInfo {
  const fixes = [...new Set([...hintCommands(hint), ...OTHER_FIX])];
  const clean = truncate(detail.replace(/\s+/g, " ").trim(), 300);
  return { available: false, reason: "OTHER", message: clean !== "" ? `${what} failed: ${clean}` : `${what} failed`, suggestedFix: fixes };
}

export type FailureVerdict = { kind: "degraded"; degraded: DegradedInfo } | { kind: "no-results" };

/**
 * Classifies a cass run that did not produce a usable answer. `what` names the command in the
 * OTHER message ("cass search"); `ctx` feeds the TIMEOUT suggestion.
 */
export function classifyFailure(outcome: RunOutcome, what: string, ctx: SearchContext): FailureVerdict {
  const degraded = (d: DegradedInfo): FailureVerdict => ({ kind: "degraded", degraded: d });
  switch (outcome.kind) {
    case "spawn-failed":
      if (isMissingBinary(outcome)) return degraded(notFoundDegraded());
      return degraded(otherDegraded(what, `${outcome.errno}: ${outcome.message}`));
    case "timeout":
      return degraded(timeoutDegraded(ctx));
    case "overflow":
      return degraded(otherDegraded(what, `cass wrote more than ${outcome.limit} bytes to ${outcome.stream}; the process was stopped`));
    case "exited":
      break;
  }

  const envelope: CassErrorInfo | undefined = parseErrorEnvelope(outcome.stderr) ?? parseErrorEnvelope(outcome.stdout);
  const kind = envelope?.kind;
  const code = outcome.code ?? undefined;
  const detail =
    envelope?.message ||
    firstLine(outcome.stderr) ||
    firstLine(outcome.stdout) ||
    (outcome.signal ? `killed by ${outcome.signal}` : `exit code ${String(outcome.code)}`);
  const lower = `${detail}\n${envelope?.hint ?? ""}`.toLowerCase();

  if (kind !== undefined && INDEX_MISSING_KINDS.has(kind)) return degraded(indexMissingDegraded());
  if (kind === "timeout") return degraded(timeoutDegraded(ctx));
  if ((kind !== undefined && FTS_KINDS.has(kind)) || (lower.includes("no such table") && lower.includes("fts"))) {
    return degraded({ available: false, reason: "FTS_TABLE_MISSING", message: FTS_MESSAGE, suggestedFix: [...FTS_FIX] });
  }
  if (kind === undefined || kind === "unknown") {
    // No taxonomy to go by: the exit codes cass has used for these since its first releases.
    if (code === 3) return degraded(indexMissingDegraded());
    if (code === 10) return degraded(timeoutDegraded(ctx));
    // The original treated exit 4 without an envelope as "nothing found".
    if (code === 4) return { kind: "no-results" };
  }
  // The original's message heuristics, for builds without a kind or with a generic one only.
  if (kind === undefined || GENERIC_KINDS.has(kind)) {
    if (lower.includes("index missing") || lower.includes("needs index") || lower.includes("not been initialized")) {
      return degraded(indexMissingDegraded());
    }
    if (lower.includes("timed out") || lower.includes("timeout")) return degraded(timeoutDegraded(ctx));
  }
  return degraded(otherDegraded(what, firstLine(detail) || detail, envelope?.hint));
}
