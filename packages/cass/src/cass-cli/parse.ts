import { redactSecrets, type HistoryHit, type SessionSummary } from "@cass-memory/core";

/**
 * Defensive parsers for cass's robot-mode output. Every shape the contract lists as old or new is
 * accepted (reference/cass-contract.md §6.2), unknown keys are ignored, and scrubbed or wrongly
 * typed values degrade to "absent" instead of failing the whole payload.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ------------------------------------------------------------------------------------------------
// JSON extraction

export type LooseJson = { ok: true; value: unknown } | { ok: false; error: string };

/** A line that starts like JSON: `{"`, `{}`, or `[` followed by a value start (not `[INFO]`). */
function looksLikeJsonStart(line: string): boolean {
  const t = line.trimStart();
  if (t.startsWith("{")) return /^\{\s*("|\}|$)/.test(t);
  if (t.startsWith("[")) return /^\[\s*(\{|\[|\]|"|-|\d|t|f|n|$)/.test(t);
  return false;
}

function tryParse(text: string): { ok: true; value: unknown } | undefined {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

/**
 * Parses a command's stdout as JSON, tolerating log lines printed before it: the whole text;
 * else from the first line that looks like JSON to the end; else NDJSON (arrays flattened); else
 * the first balanced `{…}`/`[…]` embedded after a prefix.
 */
export function parseLooseJson(raw: string): LooseJson {
  const text = raw.trim();
  if (text === "") return { ok: false, error: "empty output" };
  const whole = tryParse(text);
  if (whole) return whole;

  const lines = text.split(/\r?\n/);
  const start = lines.findIndex(looksLikeJsonStart);
  if (start > 0) {
    const tail = tryParse(lines.slice(start).join("\n"));
    if (tail) return tail;
  }

  const jsonLines = lines.filter(looksLikeJsonStart);
  if (jsonLines.length > 1) {
    const values: unknown[] = [];
    let allParsed = true;
    for (const line of jsonLines) {
      const parsed = tryParse(line.trim());
      if (!parsed) {
        allParsed = false;
        break;
      }
      if (Array.isArray(parsed.value)) values.push(...(parsed.value as unknown[]));
      else values.push(parsed.value);
    }
    if (allParsed) return { ok: true, value: values };
  }

  const embedded = findEmbeddedJson(text);
  if (embedded) return embedded;

  const firstLine = text.split(/\r?\n/, 1)[0] ?? "";
  return { ok: false, error: `output is not JSON: ${truncate(firstLine, 120)}` };
}

function findEmbeddedJson(text: string): { ok: true; value: unknown } | undefined {
  let attempts = 0;
  for (let i = 0; i < text.length && attempts < 50; i++) {
    const ch = text[i];
    if (ch !== "{" && ch !== "[") continue;
    attempts++;
    const end = matchingBracket(text, i);
    if (end < 0) continue;
    const parsed = tryParse(text.slice(i, end + 1));
    if (parsed && (isObject(parsed.value) || Array.isArray(parsed.value))) return parsed;
  }
  return undefined;
}

/** Index of the bracket closing the one at `start` (string-aware), or -1. */
function matchingBracket(text: string, start: number): number {
  const stack: string[] = [];
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === "\\") i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === "{") stack.push("}");
    else if (ch === "[") stack.push("]");
    else if (ch === "}" || ch === "]") {
      if (stack.pop() !== ch) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function firstLine(text: string): string {
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t !== "") return t;
  }
  return "";
}

// ------------------------------------------------------------------------------------------------
// Error envelopes (§3.1-§3.3)

export interface CassErrorInfo {
  /** `error.kind` (kebab-case), `argument_parsing`, or undefined when cass gave none. */
  kind?: string;
  /** `error.code` as printed (normally the exit code). */
  code?: number;
  message: string;
  hint?: string;
  retryable?: boolean;
}

function envelopeFrom(value: unknown): CassErrorInfo | undefined {
  if (!isObject(value)) return undefined;
  const error = value.error;
  // §3.1 standard envelope: {"error": {code, kind, message, hint, retryable}}
  if (isObject(error)) {
    const message = typeof error.message === "string" ? error.message : typeof error.kind === "string" ? error.kind : "";
    return {
      ...(typeof error.kind === "string" ? { kind: error.kind } : {}),
      ...(typeof error.code === "number" ? { code: error.code } : {}),
      message,
      ...(typeof error.hint === "string" ? { hint: error.hint } : {}),
      ...(typeof error.retryable === "boolean" ? { retryable: error.retryable } : {}),
    };
  }
  // §3.2 argument parsing ({status:"error", error:string, kind:"argument_parsing"}) and §3.3 index
  // failure ({success:false, error:string, code, kind}).
  if (typeof error === "string" && (value.status === "error" || value.success === false || typeof value.kind === "string")) {
    const hints = Array.isArray(value.hints) ? value.hints.filter((h): h is string => typeof h === "string") : [];
    const hint = typeof value.hint === "string" ? value.hint : hints[0];
    return {
      ...(typeof value.kind === "string" ? { kind: value.kind } : {}),
      ...(typeof value.code === "number" ? { code: value.code } : {}),
      message: error,
      ...(hint !== undefined ? { hint } : {}),
      ...(typeof value.retryable === "boolean" ? { retryable: value.retryable } : {}),
    };
  }
  return undefined;
}

/** The error envelope in a stream (stderr normally; stdout for `index`), or undefined. */
export function parseErrorEnvelope(stream: string): CassErrorInfo | undefined {
  if (!stream.includes("error")) return undefined;
  const parsed = parseLooseJson(stream);
  if (!parsed.ok) return undefined;
  if (Array.isArray(parsed.value)) {
    for (let i = parsed.value.length - 1; i >= 0; i--) {
      const found = envelopeFrom(parsed.value[i]);
      if (found) return found;
    }
    return undefined;
  }
  return envelopeFrom(parsed.value);
}

// ------------------------------------------------------------------------------------------------
// Scalars

function str(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function int(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === "string" && /^-?\d+$/.test(value.trim())) return Number.parseInt(value, 10);
  return undefined;
}

/** Epoch values below this are taken as seconds (1e11 ms is 1973; 1e11 s is year 5138). */
const SECONDS_CUTOFF = 1e11;

/**
 * A cass time value as epoch milliseconds: integer ms (the contract), integer or fractional
 * seconds (older or remote builds), a string of digits, or an ISO/RFC 3339 string. Scrubbed
 * placeholders (`"[TIMESTAMP]"`) and anything else give undefined.
 */
export function toEpochMs(value: unknown): number | undefined {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) return undefined;
    return value < SECONDS_CUTOFF ? Math.round(value * 1000) : Math.round(value);
  }
  if (typeof value === "string") {
    const t = value.trim();
    if (t === "") return undefined;
    if (/^\d+(\.\d+)?$/.test(t)) return toEpochMs(Number(t));
    if (!/^\d{4}-\d{2}-\d{2}/.test(t)) return undefined;
    const ms = Date.parse(t);
    return Number.isNaN(ms) ? undefined : ms;
  }
  return undefined;
}

export function toIso(value: unknown): string | undefined {
  const ms = toEpochMs(value);
  if (ms === undefined) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** Agent slugs are snake_case (`claude_code`); older tools wrote `claude-code`. */
export function normalizeAgent(agent: string): string {
  return agent.trim().toLowerCase().replace(/-/g, "_");
}

// ------------------------------------------------------------------------------------------------
// search (§4.8)

export interface SearchPayload {
  hits: HistoryHit[];
  /** cass ran out of its own time budget and returned what it had (§3.5). */
  partial: boolean;
  /** Hits that were dropped because they had no `source_path`. */
  skipped: number;
}

/**
 * The hits of a search payload: a bare array (very old builds), `{hits: […]}` (current), or a
 * single hit object. Undefined when the payload is none of these.
 */
export function parseSearchPayload(value: unknown): SearchPayload | undefined {
  let rawHits: unknown[];
  let partial = false;
  if (Array.isArray(value)) rawHits = value;
  else if (isObject(value) && Array.isArray(value.hits)) {
    rawHits = value.hits;
    partial = isPartial(value);
  } else if (isObject(value) && typeof value.source_path === "string") rawHits = [value];
  else return undefined;

  const hits: HistoryHit[] = [];
  let skipped = 0;
  for (const raw of rawHits) {
    const hit = toHistoryHit(raw);
    if (hit) hits.push(hit);
    else skipped++;
  }
  return { hits, partial, skipped };
}

function isPartial(payload: JsonObject): boolean {
  const budget = payload.budget;
  if (isObject(budget) && budget.timed_out === true) return true;
  const meta = payload._meta;
  if (isObject(meta) && (meta.timed_out === true || meta.partial_results === true)) return true;
  const timeout = payload._timeout;
  return isObject(timeout) && (timeout.partial_results === true || timeout.kind === "timeout");
}

/** One cass hit as core's HistoryHit, or undefined when it has no `source_path`. */
export function toHistoryHit(raw: unknown): HistoryHit | undefined {
  if (!isObject(raw)) return undefined;
  const sourcePath = str(raw.source_path) ?? str(raw.path) ?? str(raw.sessionPath);
  if (sourcePath === undefined) return undefined;
  const line = int(raw.line_number);
  // cass does not redact: snippets and titles leave this adapter with secrets redacted (issue 21).
  const snippet = redactSecrets(str(raw.snippet) ?? str(raw.content) ?? "").text;
  const score = typeof raw.score === "number" && Number.isFinite(raw.score) ? raw.score : typeof raw.score === "string" ? Number(raw.score) : undefined;
  const createdMs = toEpochMs(raw.created_at);
  const hit: HistoryHit = {
    source_path: sourcePath,
    // cass may report null (no line); the port needs a number, and line 1 opens the session.
    line_number: line !== undefined && line > 0 ? line : 1,
    agent: str(raw.agent) !== undefined ? normalizeAgent(raw.agent as string) : "unknown",
    snippet,
    origin: originOf(raw),
  };
  const workspace = str(raw.workspace);
  if (workspace !== undefined) hit.workspace = workspace;
  const title = str(raw.title);
  if (title !== undefined) hit.title = redactSecrets(title).text;
  if (score !== undefined && Number.isFinite(score)) hit.score = score;
  if (raw.created_at !== undefined) hit.created_at = createdMs ?? null;
  return hit;
}

function originOf(raw: JsonObject): HistoryHit["origin"] {
  const origin = raw.origin;
  if (isObject(origin) && (origin.kind === "local" || origin.kind === "remote")) {
    const host = str(origin.host);
    return origin.kind === "remote" && host !== undefined ? { kind: "remote", host } : { kind: origin.kind };
  }
  const kind = str(raw.origin_kind);
  const host = str(raw.origin_host);
  if ((kind !== undefined && kind !== "local") || host !== undefined) {
    return host !== undefined ? { kind: "remote", host } : { kind: "remote" };
  }
  return { kind: "local" };
}

// ------------------------------------------------------------------------------------------------
// sessions (§4.9) and timeline (§4.10)

/** `{sessions: […]}` from `cass sessions --json`, or undefined when the payload is not that. */
export function parseSessionsPayload(value: unknown): SessionSummary[] | undefined {
  if (!isObject(value) || !Array.isArray(value.sessions)) return undefined;
  const out: SessionSummary[] = [];
  for (const raw of value.sessions) {
    const summary = toSessionSummary(raw);
    if (summary) out.push(summary);
  }
  return out;
}

/**
 * The sessions of a timeline payload: `groups` as an object keyed by hour/day (current), an
 * array `[{date, sessions}]` (older form), or a flat `sessions[]` (`--group-by none`).
 */
export function parseTimelinePayload(value: unknown): SessionSummary[] | undefined {
  if (!isObject(value)) return undefined;
  const raws: unknown[] = [];
  const groups = value.groups;
  if (Array.isArray(groups)) {
    for (const group of groups) {
      if (isObject(group) && Array.isArray(group.sessions)) raws.push(...group.sessions);
      else if (Array.isArray(group)) raws.push(...group);
    }
  } else if (isObject(groups)) {
    for (const entries of Object.values(groups)) if (Array.isArray(entries)) raws.push(...entries);
  } else if (Array.isArray(value.sessions)) {
    raws.push(...value.sessions);
  } else {
    return undefined;
  }
  const out: SessionSummary[] = [];
  for (const raw of raws) {
    const summary = toSessionSummary(raw);
    if (summary) out.push(summary);
  }
  return out;
}

function toSessionSummary(raw: unknown): SessionSummary | undefined {
  if (!isObject(raw)) return undefined;
  const path = str(raw.path) ?? str(raw.source_path);
  if (path === undefined) return undefined;
  const summary: SessionSummary = { path, agent: str(raw.agent) !== undefined ? normalizeAgent(raw.agent as string) : "unknown" };
  const workspace = str(raw.workspace);
  if (workspace !== undefined) summary.workspace = workspace;
  const start = toIso(raw.started_at ?? raw.start_time ?? raw.startTime ?? raw.created_at);
  if (start !== undefined) summary.startTime = start;
  // `sessions` reports only the file's mtime, which is the session's last activity.
  const end = toIso(raw.ended_at ?? raw.end_time ?? raw.endTime ?? raw.modified);
  if (end !== undefined) summary.endTime = end;
  const count = int(raw.message_count ?? raw.messageCount);
  if (count !== undefined && count >= 0) summary.messageCount = count;
  return summary;
}

// ------------------------------------------------------------------------------------------------
// --version (§4.1), api-version (§4.2), health (§4.4), expand (§4.11)

export function parseVersion(stdout: string): string | undefined {
  const match = /^cass\s+(\d+\.\d+\.\d+[^\s]*)/m.exec(stdout.trim());
  return match?.[1];
}

export interface ApiVersionInfo {
  apiVersion?: number;
  contractVersion?: string;
  crateVersion?: string;
}

export function parseApiVersion(stdout: string): ApiVersionInfo | undefined {
  const parsed = parseLooseJson(stdout);
  if (!parsed.ok || !isObject(parsed.value)) return undefined;
  const v = parsed.value;
  const info: ApiVersionInfo = {};
  const api = int(v.api_version);
  if (api !== undefined) info.apiVersion = api;
  if (typeof v.contract_version === "string" || typeof v.contract_version === "number") info.contractVersion = String(v.contract_version);
  const crate = str(v.crate_version);
  if (crate !== undefined && /^\d/.test(crate)) info.crateVersion = crate;
  return info;
}

export interface HealthPayload {
  healthy: boolean;
  status?: string;
  initialized?: boolean;
  dbExists?: boolean;
  dbOpened?: boolean;
  dbOpenError?: string;
  explanation?: string;
  errors: string[];
  recommendedCommands: string[];
}

export function parseHealthPayload(stdout: string): HealthPayload | undefined {
  const parsed = parseLooseJson(stdout);
  if (!parsed.ok || !isObject(parsed.value)) return undefined;
  const v = parsed.value;
  if (typeof v.healthy !== "boolean" && typeof v.status !== "string") return undefined;
  // `health` calls the block `db`; `status`/`state` call it `database`.
  const db = isObject(v.db) ? v.db : isObject(v.database) ? v.database : undefined;
  const payload: HealthPayload = {
    healthy: v.healthy === true || (v.healthy === undefined && v.status === "healthy"),
    errors: Array.isArray(v.errors) ? v.errors.filter((e): e is string => typeof e === "string") : [],
    recommendedCommands: Array.isArray(v.recommended_commands)
      ? v.recommended_commands.flatMap((c) => (isObject(c) && typeof c.command === "string" ? [c.command] : []))
      : [],
  };
  const status = str(v.status);
  if (status !== undefined) payload.status = status;
  if (typeof v.initialized === "boolean") payload.initialized = v.initialized;
  if (db && typeof db.exists === "boolean") payload.dbExists = db.exists;
  if (db && typeof db.opened === "boolean" && db.open_skipped !== true) payload.dbOpened = db.opened;
  const openError = db ? str(db.open_error) : undefined;
  if (openError !== undefined) payload.dbOpenError = openError;
  const explanation = str(v.explanation);
  if (explanation !== undefined) payload.explanation = explanation;
  return payload;
}

export interface ExpandEntry {
  line: number;
  role: string;
  isTarget: boolean;
  content: string;
}

export function parseExpandPayload(value: unknown): ExpandEntry[] | undefined {
  const rows = Array.isArray(value) ? value : isObject(value) && Array.isArray(value.messages) ? value.messages : undefined;
  if (rows === undefined) return undefined;
  const out: ExpandEntry[] = [];
  for (const row of rows) {
    if (!isObject(row)) continue;
    out.push({
      line: int(row.line ?? row.line_number) ?? 0,
      role: str(row.role) ?? "unknown",
      isTarget: row.is_target === true,
      content: typeof row.content === "string" ? row.content : "",
    });
  }
  return out;
}
