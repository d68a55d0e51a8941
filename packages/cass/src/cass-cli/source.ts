import { homedir } from "node:os";
import type {
  DegradedInfo,
  EpisodicHealth,
  EpisodicSearchOptions,
  EpisodicSearchResult,
  EpisodicSource,
  Logger,
  SessionSummary,
} from "@cass-memory/core";
import {
  classifyFailure,
  indexMissingDegraded,
  isMissingBinary,
  notFoundDegraded,
  otherDegraded,
  type SearchContext,
  timeoutDegraded,
} from "./classify.js";
import { exportSessionDirectly, isMostlyUnknown } from "./export-fallback.js";
import {
  type ExpandEntry,
  firstLine,
  normalizeAgent,
  parseApiVersion,
  parseErrorEnvelope,
  parseExpandPayload,
  parseHealthPayload,
  parseLooseJson,
  parseSearchPayload,
  parseSessionsPayload,
  parseTimelinePayload,
  parseVersion,
  toEpochMs,
} from "./parse.js";
import { type RunOutcome, runCass } from "./run.js";

/**
 * The `cass` CLI adapter: core's EpisodicSource over the coding-agent-search binary
 * (reference/cass-contract.md). Every call spawns `cass` with an argv (never a shell), an explicit
 * `--limit`, `--color=never`, `--` before user text, and a clean robot-mode environment. Failures
 * of cass never throw: search reports them as `degraded`, the other calls answer empty/null.
 */

export interface CassCliTimeouts {
  /** Default search deadline when the caller gives no `timeoutMs` (the original's 30 s). */
  searchMs?: number;
  /** `--version`, `api-version` and `health` (default 5 s each). */
  healthMs?: number;
  /** `export` (default 60 s). */
  exportMs?: number;
  /** `expand` (default 15 s). */
  expandMs?: number;
  /** `sessions` / `timeline` (default 30 s). */
  sessionsMs?: number;
}

export interface CassCliSourceOptions {
  /** The binary: a name looked up on PATH (`cass`) or a path; a leading `~/` is expanded. */
  cassPath: string;
  /** Base environment of the child (default `process.env`); cleaned for robot mode. */
  env?: Readonly<Record<string, string | undefined>>;
  timeouts?: CassCliTimeouts;
  /** Cap on stdout per call (default 50 MiB, the original's maxBuffer). */
  maxStdoutBytes?: number;
  /** Cap on stderr per call (default 4 MiB). */
  maxStderrBytes?: number;
  logger?: Logger;
  /**
   * Where else to look when `cassPath` cannot be executed. Default: `~/.cargo/bin/cass`,
   * `~/.local/bin/cass`, `/usr/local/bin/cass` (the original's candidates). Pass `[]` to disable.
   */
  fallbackPaths?: readonly string[];
  /** Current time in ms (for filtering sessions client-side on older builds). */
  now?: () => number;
}

/** What detection found: the binary that answers, its version and API version. */
export type CassDetection =
  | { available: true; path: string; version?: string; apiVersion?: number }
  | { available: false; degraded: DegradedInfo };

export interface CassCliSource extends EpisodicSource {
  /** Presence, version and API gate (cached per instance; a failure is retried after 30 s). */
  detect(): Promise<CassDetection>;
}

/** The API version this adapter understands (`cass api-version --json`). */
export const SUPPORTED_CASS_API_VERSION = 1;

const DEFAULTS = {
  searchMs: 30_000,
  healthMs: 5_000,
  exportMs: 60_000,
  expandMs: 15_000,
  sessionsMs: 30_000,
  maxStdoutBytes: 50 * 1024 * 1024,
  maxStderrBytes: 4 * 1024 * 1024,
} as const;

const FAILED_DETECTION_TTL_MS = 30_000;
const COLOR = "--color=never";
/** `timeline` without a window covers 7 days; "all sessions" asks for ten years. */
const ALL_DAYS = 3650;

const noopLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

type ListAttempt = { kind: "ok"; sessions: SessionSummary[] } | { kind: "unsupported" } | { kind: "failed"; message: string };

export function createCassCliSource(options: CassCliSourceOptions): CassCliSource {
  const name = "cass";
  const logger = options.logger ?? noopLogger;
  const baseEnv = options.env ?? process.env;
  const home = baseEnv.HOME || homedir();
  const primaryPath = expandHome(options.cassPath.trim() === "" ? "cass" : options.cassPath.trim(), home);
  const fallbackPaths = (options.fallbackPaths ?? [`${home}/.cargo/bin/cass`, `${home}/.local/bin/cass`, "/usr/local/bin/cass"]).map((p) => expandHome(p, home));
  const timeouts = { ...DEFAULTS, ...definedOnly(options.timeouts ?? {}) };
  const maxStdoutBytes = options.maxStdoutBytes ?? DEFAULTS.maxStdoutBytes;
  const maxStderrBytes = options.maxStderrBytes ?? DEFAULTS.maxStderrBytes;
  const now = options.now ?? Date.now;
  const env = robotEnv(baseEnv);

  const run = (file: string, args: string[], timeoutMs: number): Promise<RunOutcome> => {
    logger.debug(`[cass] ${args[0] ?? ""} (timeout ${timeoutMs} ms)`);
    return runCass(file, args, { env, timeoutMs, maxStdoutBytes, maxStderrBytes });
  };

  // -------------------------------------------------------------------------------------------
  // Detection (cached)

  let detection: { promise: Promise<CassDetection>; settled?: CassDetection; at: number } | undefined;

  const detect = (): Promise<CassDetection> => {
    if (detection && !(detection.settled?.available === false && now() - detection.at > FAILED_DETECTION_TTL_MS)) {
      return detection.promise;
    }
    const entry: { promise: Promise<CassDetection>; settled?: CassDetection; at: number } = { promise: detectOnce(), at: now() };
    entry.promise.then((d) => {
      entry.settled = d;
      entry.at = now();
    });
    detection = entry;
    return entry.promise;
  };

  async function detectOnce(): Promise<CassDetection> {
    const candidates = [...new Set([primaryPath, ...fallbackPaths])];
    let broken: { path: string; outcome: RunOutcome } | undefined;
    for (const path of candidates) {
      // The version probe and the API probe run side by side; both need the binary anyway.
      const [version, api] = await Promise.all([
        run(path, ["--version"], timeouts.healthMs),
        run(path, ["api-version", "--json", COLOR], timeouts.healthMs),
      ]);
      if (isMissingBinary(version)) continue;
      if (version.kind !== "exited" || version.code !== 0) {
        broken ??= { path, outcome: version };
        continue;
      }
      const found: CassDetection = { available: true, path };
      const parsedVersion = parseVersion(version.stdout);
      if (parsedVersion !== undefined) found.version = parsedVersion;
      if (api.kind === "exited" && api.code === 0) {
        const info = parseApiVersion(api.stdout);
        if (info?.apiVersion !== undefined) {
          if (info.apiVersion !== SUPPORTED_CASS_API_VERSION) {
            return {
              available: false,
              degraded: {
                available: false,
                reason: "OTHER",
                message: `cass api_version ${info.apiVersion} is not supported (this cm understands api_version ${SUPPORTED_CASS_API_VERSION}); history is disabled.`,
                suggestedFix: ["cass api-version --json", "cargo install coding-agent-search"],
              },
            };
          }
          found.apiVersion = info.apiVersion;
        }
      } else {
        // Builds older than api-version (or that fail it) are still usable.
        logger.debug(`[cass] api-version unavailable (${describe(api)}); continuing without the API gate`);
      }
      if (path !== primaryPath) logger.debug(`[cass] using ${path}`);
      return found;
    }
    if (broken) {
      if (broken.outcome.kind === "timeout") {
        return {
          available: false,
          degraded: {
            available: false,
            reason: "TIMEOUT",
            message: `cass did not answer 'cass --version' within ${timeouts.healthMs} ms; history is disabled.`,
            suggestedFix: ["cass --version", "cass health"],
          },
        };
      }
      return { available: false, degraded: otherDegraded("cass --version", describe(broken.outcome)) };
    }
    return { available: false, degraded: notFoundDegraded() };
  }

  // -------------------------------------------------------------------------------------------
  // health

  async function health(): Promise<EpisodicHealth> {
    const d = await detect();
    if (!d.available) return { available: false, name, degraded: d.degraded };
    const base = { name, ...(d.version !== undefined ? { version: d.version } : {}) };
    const unavailable = (degraded: DegradedInfo): EpisodicHealth => ({ available: false, ...base, degraded });

    const outcome = await run(d.path, ["health", "--json", COLOR], timeouts.healthMs);
    if (outcome.kind === "spawn-failed") {
      return unavailable(isMissingBinary(outcome) ? notFoundDegraded() : otherDegraded("cass health", describe(outcome)));
    }
    if (outcome.kind === "timeout") {
      return unavailable({
        available: false,
        reason: "TIMEOUT",
        message: `cass health did not answer within ${outcome.timeoutMs} ms; history may be unavailable.`,
        suggestedFix: ["cass health --json", "cass doctor --fix"],
      });
    }
    if (outcome.kind === "overflow") return unavailable(otherDegraded("cass health", describe(outcome)));

    // Exit 1 with the payload on stdout is how cass says "not healthy" (contract §3.4).
    const payload = parseHealthPayload(outcome.stdout);
    if (payload) {
      if (payload.healthy) return { available: true, ...base };
      if (payload.initialized === false || payload.status === "not_initialized" || payload.dbExists === false) {
        return unavailable(indexMissingDegraded());
      }
      if (payload.dbExists === true && payload.dbOpened === false && payload.dbOpenError !== undefined) {
        return unavailable(otherDegraded("cass health", `database cannot be opened (${payload.dbOpenError})`, payload.recommendedCommands.map((c) => `'${c}'`).join(" ")));
      }
      // Stale, rebuilding or partly degraded archives still answer searches.
      logger.debug(`[cass] health status ${payload.status ?? "unknown"}; search still available`);
      return { available: true, ...base };
    }
    if (outcome.code === 0) return { available: true, ...base };
    const envelope = parseErrorEnvelope(outcome.stderr);
    if (outcome.code === 2 && (envelope === undefined || envelope.kind === "argument_parsing")) {
      // A build whose health has no --json: presence is all we can tell.
      logger.debug("[cass] health --json not understood; assuming available");
      return { available: true, ...base };
    }
    const verdict = classifyFailure(outcome, "cass health", { query: "", limit: 5 });
    return verdict.kind === "no-results" ? { available: true, ...base } : unavailable(verdict.degraded);
  }

  // -------------------------------------------------------------------------------------------
  // search

  async function search(query: string, opts: EpisodicSearchOptions): Promise<EpisodicSearchResult> {
    const q = argvQuery(query);
    if (q === "") return { hits: [] };
    const limit = Number.isFinite(opts.limit) && opts.limit >= 1 ? Math.floor(opts.limit) : 1;
    const days = opts.days !== undefined && Number.isFinite(opts.days) && opts.days >= 1 ? Math.floor(opts.days) : undefined;
    const args = ["search", "--robot", "--limit", String(limit)];
    if (days !== undefined) args.push("--days", String(days));
    for (const agent of [...new Set((opts.agents ?? []).map(normalizeAgent).filter((a) => a !== ""))]) args.push("--agent", agent);
    if (opts.workspace !== undefined && opts.workspace.trim() !== "") args.push("--workspace", opts.workspace);
    // cass's argument normaliser does not honour `--` fully: keep a query off the flag namespace.
    args.push(COLOR, "--", q.startsWith("-") ? ` ${q}` : q);
    const timeoutMs = opts.timeoutMs !== undefined && opts.timeoutMs > 0 ? opts.timeoutMs : timeouts.searchMs;
    const ctx: SearchContext = { query: q, limit, ...(days !== undefined ? { days } : {}) };

    let outcome: RunOutcome;
    const known = detection?.settled;
    if (known?.available) {
      outcome = await run(known.path, args, timeoutMs);
    } else if (known && now() - (detection?.at ?? 0) <= FAILED_DETECTION_TTL_MS) {
      return { hits: [], degraded: known.degraded };
    } else {
      // First call: detect and search at once so detection adds no latency.
      const [d, first] = await Promise.all([detect(), run(primaryPath, args, timeoutMs)]);
      if (!d.available) return { hits: [], degraded: d.degraded };
      outcome = d.path === primaryPath ? first : await run(d.path, args, timeoutMs);
    }

    if (outcome.kind === "exited" && outcome.code === 0) {
      const parsed = parseLooseJson(outcome.stdout);
      if (!parsed.ok) return { hits: [], degraded: otherDegraded("cass search", `unreadable output (${parsed.error})`) };
      const payload = parseSearchPayload(parsed.value);
      if (!payload) {
        const envelope = parseErrorEnvelope(outcome.stdout);
        const detail = envelope?.message ?? "unexpected output (no hits array)";
        return { hits: [], degraded: otherDegraded("cass search", detail, envelope?.hint) };
      }
      if (payload.skipped > 0) logger.debug(`[cass] ignored ${payload.skipped} hit(s) without a source_path`);
      const hits = payload.hits.slice(0, limit);
      return payload.partial ? { hits, degraded: timeoutDegraded(ctx) } : { hits };
    }
    const verdict = classifyFailure(outcome, "cass search", ctx);
    if (verdict.kind === "no-results") return { hits: [] };
    logger.debug(`[cass] search degraded: ${verdict.degraded.reason}`);
    return { hits: [], degraded: verdict.degraded };
  }

  // -------------------------------------------------------------------------------------------
  // listSessions

  async function attemptList(path: string, args: string[], parse: (value: unknown) => SessionSummary[] | undefined): Promise<ListAttempt> {
    const outcome = await run(path, args, timeouts.sessionsMs);
    if (outcome.kind !== "exited") return { kind: "failed", message: describe(outcome) };
    if (outcome.code === 0) {
      const parsed = parseLooseJson(outcome.stdout);
      if (!parsed.ok) return { kind: "failed", message: parsed.error };
      const sessions = parse(parsed.value);
      // A build without the subcommand may have "recovered" the argv into something else.
      return sessions ? { kind: "ok", sessions } : { kind: "unsupported" };
    }
    const envelope = parseErrorEnvelope(outcome.stderr);
    if (outcome.code === 2 && (envelope === undefined || envelope.kind === "argument_parsing")) return { kind: "unsupported" };
    return { kind: "failed", message: envelope?.message ?? describe(outcome) };
  }

  async function listSessions(opts: { days?: number; workspace?: string; agents?: string[] }): Promise<SessionSummary[]> {
    const d = await detect();
    if (!d.available) {
      logger.debug(`[cass] sessions unavailable: ${d.degraded.reason}`);
      return [];
    }
    const days = opts.days !== undefined && Number.isFinite(opts.days) && opts.days >= 1 ? Math.floor(opts.days) : undefined;
    const workspace = opts.workspace !== undefined && opts.workspace.trim() !== "" ? opts.workspace : undefined;
    const agents = new Set((opts.agents ?? []).map(normalizeAgent).filter((a) => a !== ""));
    const base = ["sessions", "--json", "--limit", "0", ...(workspace !== undefined ? ["--workspace", workspace] : [])];

    let attempt = await attemptList(d.path, [...base, ...(days !== undefined ? [`--since=-${days}d`] : []), COLOR], parseSessionsPayload);
    let filterByTime = false;
    let fromTimeline = false;
    if (attempt.kind === "unsupported" && days !== undefined) {
      // `sessions` before v0.6.23 has no --since: filter on the reported mtime instead.
      attempt = await attemptList(d.path, [...base, COLOR], parseSessionsPayload);
      filterByTime = true;
    }
    // `timeline` is what the original listed sessions with: tried too when `sessions` failed.
    if (attempt.kind !== "ok") {
      if (attempt.kind === "failed") logger.debug(`[cass] sessions failed (${attempt.message}); trying timeline`);
      filterByTime = false;
      const args = ["timeline", "--json", "--since", `${days ?? ALL_DAYS}d`];
      for (const agent of agents) args.push("--agent", agent);
      attempt = await attemptList(d.path, [...args, COLOR], parseTimelinePayload);
      fromTimeline = true;
    }
    if (attempt.kind !== "ok") {
      const message = attempt.kind === "failed" ? attempt.message : "cass has neither `sessions` nor `timeline`";
      logger.warn(`[cass] Timeline query failed; session counts may be incomplete. ${message}`);
      return [];
    }

    const cutoff = days !== undefined ? now() - days * 86_400_000 : undefined;
    const seen = new Set<string>();
    const out: SessionSummary[] = [];
    for (const s of attempt.sessions) {
      if (seen.has(s.path)) continue;
      if (agents.size > 0 && !agents.has(normalizeAgent(s.agent))) continue;
      // Timeline entries carry no workspace: those are kept, the others must match.
      if (workspace !== undefined && s.workspace !== undefined && !sameWorkspace(s.workspace, workspace)) continue;
      if (filterByTime && cutoff !== undefined) {
        const last = toEpochMs(s.endTime ?? s.startTime);
        if (last !== undefined && last < cutoff) continue;
      }
      seen.add(s.path);
      out.push(s);
    }
    if (fromTimeline) out.sort((a, b) => (toEpochMs(b.startTime) ?? 0) - (toEpochMs(a.startTime) ?? 0));
    return out;
  }

  // -------------------------------------------------------------------------------------------
  // export / expand

  async function exportSession(sessionPath: string, format: "markdown" | "text" | "json"): Promise<string | null> {
    if (sessionPath.trim() === "") return null;
    const d = await detect();
    let why: string;
    if (d.available) {
      const outcome = await run(d.path, ["export", "--format", format, COLOR, "--", safePathArg(sessionPath)], timeouts.exportMs);
      if (outcome.kind === "exited" && outcome.code === 0 && outcome.stdout.trim() !== "" && !isMostlyUnknown(outcome.stdout)) {
        return outcome.stdout;
      }
      why = outcome.kind === "exited" && outcome.code === 0 ? "cass export gave no usable text" : describe(outcome);
    } else {
      why = `cass unavailable (${d.degraded.reason})`;
    }
    logger.debug(`[cass] export fell back to reading the file directly: ${why}`);
    const direct = await exportSessionDirectly(sessionPath, format);
    if (direct === null && d.available) logger.warn(`[cass] Export failed for ${sessionPath}: ${why}`);
    return direct;
  }

  async function expand(sessionPath: string, line: number, context: number): Promise<string | null> {
    if (sessionPath.trim() === "" || !Number.isInteger(line) || line < 1) return null;
    const around = Number.isInteger(context) && context >= 0 ? context : 3;
    const d = await detect();
    if (!d.available) return null;
    const outcome = await run(d.path, ["expand", "-n", String(line), "-C", String(around), "--json", COLOR, "--", safePathArg(sessionPath)], timeouts.expandMs);
    if (outcome.kind !== "exited" || outcome.code !== 0) {
      logger.debug(`[cass] expand failed: ${describe(outcome)}`);
      return null;
    }
    const parsed = parseLooseJson(outcome.stdout);
    if (parsed.ok) {
      const entries = parseExpandPayload(parsed.value);
      if (entries !== undefined) return entries.length > 0 ? renderExpand(entries) : null;
    }
    const text = outcome.stdout.trim();
    return text !== "" ? text : null;
  }

  return {
    name,
    detect,
    health,
    search,
    listSessions,
    export: exportSession,
    expand,
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers

/** The child's environment: robot mode stays JSON, no update prompt. */
function robotEnv(base: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) if (value !== undefined) env[key] = value;
  // Either one silently switches cass to another structured format (toon).
  delete env.CASS_OUTPUT_FORMAT;
  delete env.TOON_DEFAULT_FORMAT;
  env.CODING_AGENT_SEARCH_NO_UPDATE_PROMPT = "1";
  return env;
}

function expandHome(path: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return `${home}${path.slice(1)}`;
  return path;
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === "number" && Number.isFinite(v) && v > 0)) as Partial<T>;
}

/** Longest query handed to cass: far below Linux's 128 KiB limit on one argument (E2BIG). */
const MAX_QUERY_CHARS = 8_192;

/**
 * The query as one argv string. A NUL byte cannot be passed in argv at all (spawn refuses it), so
 * it becomes a space; a query longer than {@link MAX_QUERY_CHARS} is cut at a word boundary.
 */
function argvQuery(query: string): string {
  let q = query.replace(/\0/g, " ").trim();
  if (q.length > MAX_QUERY_CHARS) {
    const space = q.lastIndexOf(" ", MAX_QUERY_CHARS);
    let cut = space > MAX_QUERY_CHARS / 2 ? space : MAX_QUERY_CHARS;
    // Never leave half a surrogate pair at the end.
    const code = q.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut--;
    q = q.slice(0, cut).trim();
  }
  return q;
}

/** A path that starts with `-` would be read as a flag by cass's normaliser. */
function safePathArg(path: string): string {
  return path.startsWith("-") ? `./${path}` : path;
}

function sameWorkspace(a: string, b: string): boolean {
  const strip = (p: string): string => (p.length > 1 ? p.replace(/[\\/]+$/, "") : p);
  return strip(a) === strip(b);
}

/** One line about how a run ended, for logs and OTHER messages (never the payload itself). */
function describe(outcome: RunOutcome): string {
  switch (outcome.kind) {
    case "spawn-failed":
      return `${outcome.errno}: ${outcome.message}`;
    case "timeout":
      return `no answer within ${outcome.timeoutMs} ms`;
    case "overflow":
      return `more than ${outcome.limit} bytes on ${outcome.stream}`;
    case "exited": {
      const envelope = parseErrorEnvelope(outcome.stderr);
      const detail = envelope?.message ?? firstLine(outcome.stderr);
      const status = outcome.signal ? `killed by ${outcome.signal}` : `exit ${String(outcome.code)}`;
      return detail !== "" ? `${status}: ${detail}` : status;
    }
  }
}

function renderExpand(entries: ExpandEntry[]): string {
  return entries.map((e) => `[line ${e.line}] ${e.role}${e.isTarget ? " (match)" : ""}\n${e.content}`).join("\n\n");
}
