import { AppError } from "../errors.js";
import { sha256Hex } from "../domain/sha256.js";
import { OnboardingStateSchema, ProcessedSessionSchema, type OnboardingState, type ProcessedSession } from "../schemas/records.js";

/**
 * Encoding of the onboarding state file (reference §4.8) and the processed-sessions logs (§4.5),
 * shared by every Store implementation so that they read and write the same bytes.
 */

export const ONBOARDING_STATE_VERSION = 1;
/** `<globalDir>/onboarding-state.json`. */
export const ONBOARDING_STATE_FILE = "onboarding-state.json";
/** Processed logs live in `<globalDir>/reflections/`. */
export const PROCESSED_LOG_DIR = "reflections";
/** First line of a processed log the original creates (its readers skip `#` lines). */
export const PROCESSED_LOG_HEADER = '# JSONL format: {"sessionPath":..., "processedAt":...}';
/** The log of sessions processed without `--workspace`. */
export const GLOBAL_PROCESSED_LOG = "global";

const LOG_NAME = /^(global|ws-[0-9a-f]{8})$/;

/** An empty state, as a first write or `onboard reset` creates it. */
export function createOnboardingState(nowIso: string): OnboardingState {
  return {
    version: ONBOARDING_STATE_VERSION,
    startedAt: nowIso,
    lastUpdatedAt: nowIso,
    processedSessions: [],
    stats: { totalSessionsProcessed: 0, totalRulesExtracted: 0 },
  };
}

/**
 * The state stored in a file's text, or null when the text is not a valid version-1 state (the
 * original then starts afresh; it never fails on a damaged state file).
 */
export function decodeOnboardingState(text: string): OnboardingState | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  if ((raw as { version?: unknown }).version !== ONBOARDING_STATE_VERSION) return null;
  const parsed = OnboardingStateSchema.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/**
 * Recomputes the stats from the processed sessions and validates the state before it is written.
 * Throws VALIDATION_FAILED (nothing is written) when a mutation left it invalid.
 */
export function finalizeOnboardingState(state: unknown, path: string): OnboardingState {
  const checked = OnboardingStateSchema.safeParse(state);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
    throw new AppError("VALIDATION_FAILED", `Refusing to write an invalid onboarding state to ${path}: ${where}${issue?.message ?? "invalid"}`, {
      hint: "The change was not saved; the onboarding state is unchanged.",
      details: { path },
      cause: checked.error,
    });
  }
  const out = checked.data;
  out.stats = {
    ...out.stats,
    totalSessionsProcessed: out.processedSessions.length,
    totalRulesExtracted: out.processedSessions.reduce((sum, s) => sum + s.rulesExtracted, 0),
  };
  return out;
}

/** Pretty JSON, as the original writes the file. */
export function encodeOnboardingState(state: OnboardingState): string {
  return JSON.stringify(state, null, 2);
}

/** True for `global` and `ws-<8 lowercase hex>`. */
export function isProcessedLogName(log: string): boolean {
  return LOG_NAME.test(log);
}

export function requireProcessedLogName(log: string): string {
  if (!isProcessedLogName(log)) {
    throw new AppError("INVALID_INPUT", `Invalid processed log name '${log}': expected 'global' or 'ws-<8 hex>'.`, {
      details: { field: "log", received: log },
    });
  }
  return log;
}

/** `<log>.processed.log`, relative to the reflections directory. */
export function processedLogFileName(log: string): string {
  return `${requireProcessedLogName(log)}.processed.log`;
}

/** The log of a workspace: `ws-` + the first 8 hex of the SHA-256 of its absolute path; `global` without one. */
export function processedLogNameFor(workspace?: string): string {
  const ws = workspace?.trim();
  return ws ? `ws-${sha256Hex(ws).slice(0, 8)}` : GLOBAL_PROCESSED_LOG;
}

/**
 * Validates records before they are appended; throws VALIDATION_FAILED (nothing written) when one
 * is invalid. Returns the JSONL lines (without newlines).
 */
export function encodeProcessedSessions(records: readonly unknown[]): string[] {
  return records.map((record, index) => {
    const parsed = ProcessedSessionSchema.safeParse(record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AppError("VALIDATION_FAILED", `Invalid processed-session record #${index + 1}: ${issue?.path.map(String).join(".") ?? ""} ${issue?.message ?? "invalid"}`.trim(), {
        details: { index },
        cause: parsed.error,
      });
    }
    return JSON.stringify(parsed.data);
  });
}

/**
 * Reads a processed log: JSON lines, plus the legacy tab-separated lines
 * `diaryId<TAB>sessionPath<TAB>processedAt<TAB>deltasProposed[<TAB>deltasApplied]` (diary id `-`
 * means none). `#` lines are comments. Records come back in file order (not de-duplicated).
 */
export function decodeProcessedLog(text: string | undefined): { records: ProcessedSession[]; malformed: number } {
  const records: ProcessedSession[] = [];
  let malformed = 0;
  for (const raw of (text ?? "").split("\n")) {
    const line = raw.replace(/\r$/, "");
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    let candidate: unknown;
    if (trimmed.startsWith("{")) {
      try {
        candidate = JSON.parse(trimmed);
      } catch {
        malformed++;
        continue;
      }
    } else if (line.includes("\t")) {
      const [id, sessionPath, processedAt, deltas] = line.split("\t");
      if (!sessionPath) {
        malformed++;
        continue;
      }
      const count = Number.parseInt(deltas ?? "0", 10);
      candidate = {
        sessionPath,
        processedAt: processedAt?.trim() ?? "",
        ...(id && id.trim() !== "" && id.trim() !== "-" ? { diaryId: id.trim() } : {}),
        deltasGenerated: Number.isFinite(count) ? count : 0,
      };
    } else {
      malformed++;
      continue;
    }
    const parsed = ProcessedSessionSchema.safeParse(candidate);
    if (parsed.success) records.push(parsed.data);
    else malformed++;
  }
  return { records, malformed };
}

/**
 * A session path in the form it is recorded: trimmed, made absolute against `baseDir` when it is
 * relative (front ends pass their working directory), `.`/`..` segments and repeated slashes
 * removed. Windows drive paths are only trimmed. Empty input gives "".
 */
export function normalizeSessionPath(raw: string, baseDir?: string): string {
  const trimmed = (raw ?? "").trim();
  if (trimmed === "") return "";
  if (/^[A-Za-z]:[\\/]/.test(trimmed) || trimmed.startsWith("\\\\")) return trimmed;
  const joined = trimmed.startsWith("/") || !baseDir ? trimmed : `${baseDir.replace(/\/+$/, "")}/${trimmed}`;
  const absolute = joined.startsWith("/");
  const parts: string[] = [];
  for (const segment of joined.split("/")) {
    if (segment === "" || segment === ".") continue;
    if (segment === "..") {
      if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
      else if (!absolute) parts.push("..");
      continue;
    }
    parts.push(segment);
  }
  const body = parts.join("/");
  return absolute ? `/${body}` : body || ".";
}
