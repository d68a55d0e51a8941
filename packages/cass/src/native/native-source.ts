/**
 * The native episodic source ("native"): history search over coding agents' own session files,
 * in process, with no `cass` installed. Session files are found by the injected discovery over
 * the injected readers, indexed into a persistent BM25 index (see index-store.ts), and searched
 * at message level. Hits have the shape of cass's.
 *
 * Nothing here throws to the caller: an index that cannot be built or read makes `search` answer
 * empty with `degraded` (reason OTHER), and missing session files are simply no history.
 */
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";

import type {
  Clock,
  DegradedInfo,
  EpisodicHealth,
  EpisodicSearchOptions,
  EpisodicSearchResult,
  EpisodicSource,
  HistoryHit,
  Logger,
  SessionInfo,
  SessionSummary,
  UnreadableSessions,
} from "@cass-memory/core";

import type { DiscoveryEnv, NormalizedConversation, NormalizedMessage, SessionReader } from "../model.js";
import { bm25Idf, bm25TermScore } from "./bm25.js";
import { normalizeAgentKey } from "./discovery.js";
import { DEFAULT_DISCOVERY_CACHE_TTL_MS, DISCOVERY_CACHE_NAME, WalkCache } from "./discovery-cache.js";
import { IndexStore, MANIFEST_NAME, type FoundSession, type IndexSnapshot, type LiveSegment } from "./index-store.js";
import type { Segment } from "./segment.js";
import { makeSnippet } from "./snippet.js";
import { explainUnreadable } from "./unreadable.js";
import { WordCache, parseQuery, type ParsedQuery } from "./tokenize.js";

/** The discovery function the source drives (`discoverSessions` from ./discovery.js). */
export type DiscoverSessionsFn = (
  readers: SessionReader[],
  ctx: DiscoveryEnv,
  extraRoots?: Record<string, string[]>,
) => Promise<FoundSession[]>;

export interface NativeSourceOptions {
  /** One reader per supported agent (`createSessionReaders()`). */
  readers: readonly SessionReader[];
  /** Finds the session files (`discoverSessions`). */
  discover: DiscoverSessionsFn;
  /** Home directory, environment and platform the default roots are derived from. */
  discoveryEnv: DiscoveryEnv;
  /** Extra roots per agent key (`claude_code`, `codex`, … ; `-` or `_`). */
  extraRoots?: Record<string, string[]>;
  /**
   * Where the index lives (e.g. `~/.cass-memory/.cache/episodic`). null keeps it in a private
   * temporary directory removed when the process exits.
   */
  indexDir: string | null;
  /** For `days` windows and the discovery cache's TTL (default: the system clock). */
  clock?: Clock;
  /**
   * How long the result of a broad discovery walk (Aider's walk of the home directory) is reused
   * before the root is walked again, in ms (default ten minutes; 0 walks on every call). Known
   * session files are stat-ed on every call whatever this is; a history file in a new place can
   * take this long to be found. Walk results are kept in memory and in `<indexDir>/discovery.json`
   * (see discovery-cache.ts); `reindex()` always walks.
   */
  discoveryCacheTtlMs?: number;
  logger?: Logger;
  /** Reported as the source's name (default "native"). */
  name?: string;
}

export interface NativeHealth extends EpisodicHealth {
  /** Sessions that could be read from the files found now (files not yet indexed are not counted). */
  sessions: number;
  /** Readable sessions per agent slug (the agent the reader, or the transcript itself, names). */
  agents: Record<string, number>;
  /** Session files found now, readable or not. */
  files: number;
  /** The locations searched (default roots of every reader plus the configured ones). */
  roots: string[];
}

export interface ReindexResult {
  /** Session files indexed. */
  sessions: number;
  /** Messages indexed. */
  messages: number;
}

export interface NativeEpisodicSource extends EpisodicSource {
  health(): Promise<NativeHealth>;
  describe(sessionPath: string): Promise<SessionInfo | null>;
  /** Brings the index up to date now, with no time budget, walking broad roots again (no discovery cache). */
  reindex(): Promise<ReindexResult>;
}

/** Hits per search when the caller asks for a non-positive or non-numeric limit. */
export const DEFAULT_SEARCH_LIMIT = 10;
/** Hits per search are never more than this. */
export const MAX_SEARCH_LIMIT = 1_000;
/** Share of a search's time budget that may go to reading session files into the index. */
const READ_BUDGET_SHARE = 0.6;
/** Most dictionary terms one wildcard expands to. */
const MAX_WILDCARD_TERMS = 64;
const DAY_MS = 86_400_000;
/** How long a health check may spend reading session files into the index before it answers. */
const HEALTH_INDEX_BUDGET_MS = 5_000;
/** Unreadable files explained one by one (the rest are only counted). */
const MAX_UNREADABLE_LISTED = 20;

const noopLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const systemClock: Clock = { now: () => new Date() };

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** `claude-code`, `Claude_Code`, `claude_code` → `claude_code`; aliases as discovery knows them. */
function normalizeAgent(agent: string): string {
  return normalizeAgentKey(agent) ?? agent.trim().toLowerCase().replace(/-/g, "_");
}

function stripSlashes(p: string): string {
  return p.length > 1 ? p.replace(/[\\/]+$/, "") : p;
}

/** True when `workspace` is `prefix` or lies under it (path-boundary aware). */
function workspaceMatches(workspace: string | null, prefix: string): boolean {
  if (workspace === null) return false;
  const ws = stripSlashes(workspace);
  const pre = stripSlashes(prefix);
  if (ws === pre) return true;
  if (!ws.startsWith(pre)) return false;
  const next = ws.charAt(pre.length);
  return next === "/" || next === "\\" || pre === "/" || pre.endsWith("\\");
}

function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return join(home, p.slice(2));
  return p;
}

function toIso(ms: number | null | undefined): string | undefined {
  return typeof ms === "number" && Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

interface Filters {
  cutoff: number | null;
  agents: Set<string> | null;
  workspace: string | null;
}

function makeFilters(now: number, opts: { days?: number; agents?: string[]; workspace?: string }): Filters {
  const days = typeof opts.days === "number" && Number.isFinite(opts.days) && opts.days > 0 ? opts.days : null;
  const agents = (opts.agents ?? []).filter((a) => typeof a === "string" && a.trim() !== "").map(normalizeAgent);
  const workspace = typeof opts.workspace === "string" && opts.workspace.trim() !== "" ? opts.workspace.trim() : null;
  return {
    cutoff: days === null ? null : now - days * DAY_MS,
    agents: agents.length > 0 ? new Set(agents) : null,
    workspace,
  };
}

/** The time a conversation counts as for `days` when a message has no time of its own. */
function convTime(segment: Segment, c: number): number {
  const conv = segment.convs[c]!;
  return conv.endedAt ?? conv.startedAt ?? segment.files[conv.file]!.mtimeMs;
}

/** Per conversation of a segment: 0 superseded, 1 live but filtered out, 2 live and wanted. */
function conversationStates(ls: LiveSegment, filters: Filters): Uint8Array {
  const { segment, masked } = ls;
  const states = new Uint8Array(segment.convs.length);
  segment.convs.forEach((conv, c) => {
    if (masked[conv.file]) return;
    let wanted = true;
    if (filters.agents !== null && !filters.agents.has(normalizeAgent(conv.agent))) wanted = false;
    if (wanted && filters.workspace !== null && !workspaceMatches(conv.workspace, filters.workspace)) wanted = false;
    states[c] = wanted ? 2 : 1;
  });
  return states;
}

interface Scored {
  seg: number;
  doc: number;
  score: number;
  time: number;
}

/** Higher score first; then newer, then path and line for a stable order. */
function better(a: Scored, b: Scored, segs: readonly LiveSegment[]): boolean {
  if (a.score !== b.score) return a.score > b.score;
  const ta = Number.isFinite(a.time) ? a.time : -Infinity;
  const tb = Number.isFinite(b.time) ? b.time : -Infinity;
  if (ta !== tb) return ta > tb;
  const sa = segs[a.seg]!.segment;
  const sb = segs[b.seg]!.segment;
  const pa = sa.convs[sa.docConv[a.doc]!]!.sourcePath;
  const pb = sb.convs[sb.docConv[b.doc]!]!.sourcePath;
  if (pa !== pb) return pa < pb;
  return sa.docLine[a.doc]! < sb.docLine[b.doc]!;
}

/** Query tokens with their weights, wildcards expanded against the dictionaries. */
function expandTerms(snap: IndexSnapshot, parsed: ParsedQuery): Map<string, number> {
  const weights = new Map<string, number>();
  const add = (token: string, weight: number): void => {
    weights.set(token, Math.max(weights.get(token) ?? 0, weight));
  };
  for (const q of parsed.terms) {
    if (q.match === "exact") {
      add(q.token, q.weight);
      continue;
    }
    const sizes = new Map<string, number>();
    for (const { segment } of snap.segments) {
      const found = q.match === "prefix" ? segment.prefixTerms(q.token) : segment.substringTerms(q.token);
      for (const i of found) {
        const t = segment.term(i);
        sizes.set(t, (sizes.get(t) ?? 0) + segment.postingBytes(i));
      }
    }
    [...sizes.entries()]
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, MAX_WILDCARD_TERMS)
      .forEach(([t]) => add(t, q.weight));
  }
  return weights;
}

/** BM25 over the live messages; returns the best `limit` wanted ones. */
function rank(snap: IndexSnapshot, weights: ReadonlyMap<string, number>, excluded: readonly string[], filters: Filters, limit: number): Scored[] {
  const N = snap.liveDocs;
  if (N === 0 || weights.size === 0) return [];
  const avgdl = snap.liveTokens / N;
  const segs = snap.segments;
  const states = segs.map((ls) => conversationStates(ls, filters));
  const scores: Array<Float64Array | null> = segs.map(() => null);
  const touched: number[][] = segs.map(() => []);

  const blocked: Array<Set<number>> = segs.map(() => new Set<number>());
  for (const token of excluded) {
    segs.forEach(({ segment }, s) => {
      const i = segment.findTerm(token);
      if (i >= 0) segment.postings(i, (doc) => blocked[s]!.add(doc));
    });
  }

  const docs: number[] = [];
  const tfs: number[] = [];
  const owners: number[] = [];
  for (const [token, weight] of weights) {
    docs.length = 0;
    tfs.length = 0;
    owners.length = 0;
    let df = 0;
    segs.forEach(({ segment }, s) => {
      const i = segment.findTerm(token);
      if (i < 0) return;
      const st = states[s]!;
      segment.postings(i, (doc, tf) => {
        const state = st[segment.docConv[doc]!]!;
        if (state === 0) return;
        df++;
        if (state === 2) {
          docs.push(doc);
          tfs.push(tf);
          owners.push(s);
        }
      });
    });
    if (docs.length === 0) continue;
    const idf = bm25Idf(N, df) * weight;
    for (let k = 0; k < docs.length; k++) {
      const s = owners[k]!;
      const doc = docs[k]!;
      const segment = segs[s]!.segment;
      let arr = scores[s];
      if (arr === null || arr === undefined) {
        arr = new Float64Array(segment.docCount);
        scores[s] = arr;
      }
      if (arr[doc] === 0) touched[s]!.push(doc);
      arr[doc]! += bm25TermScore(idf, tfs[k]!, segment.docLen[doc]!, avgdl);
    }
  }

  const top: Scored[] = [];
  segs.forEach(({ segment }, s) => {
    const arr = scores[s];
    if (arr === null || arr === undefined) return;
    for (const doc of touched[s]!) {
      const score = arr[doc]!;
      if (!(score > 0) || blocked[s]!.has(doc)) continue;
      const own = segment.docTime[doc]!;
      const time = Number.isFinite(own) ? own : convTime(segment, segment.docConv[doc]!);
      if (filters.cutoff !== null && !(time >= filters.cutoff)) continue;
      const item: Scored = { seg: s, doc, score, time };
      if (top.length === limit && !better(item, top[top.length - 1]!, segs)) continue;
      // Binary insertion into the sorted top list.
      let lo = 0;
      let hi = top.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (better(item, top[mid]!, segs)) hi = mid;
        else lo = mid + 1;
      }
      top.splice(lo, 0, item);
      if (top.length > limit) top.pop();
    }
  });
  return top;
}

function roleHeading(role: string): string {
  switch (role) {
    case "user":
      return "👤 User";
    case "assistant":
      return "🤖 Assistant";
    case "system":
      return "⚙️ System";
    case "tool":
      return "🔧 Tool";
    default:
      return role === "" ? "Unknown" : role.charAt(0).toUpperCase() + role.slice(1);
  }
}

function formatStarted(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** Renders conversations as cass's `export` does (markdown, text, or a JSON array of messages). */
export function renderConversations(conversations: readonly NormalizedConversation[], format: "markdown" | "text" | "json"): string {
  if (format === "json") {
    const out = conversations.flatMap((c) =>
      c.messages.map((m) => ({
        role: m.role,
        content: m.content,
        ...(typeof m.createdAt === "number" && Number.isFinite(m.createdAt) ? { timestamp: m.createdAt } : {}),
        ...(m.author ? { author: m.author } : {}),
      })),
    );
    return `${JSON.stringify(out, null, 2)}\n`;
  }
  if (format === "text") {
    return conversations
      .flatMap((c) => c.messages.map((m) => `=== ${(m.role || "unknown").toUpperCase()} ===\n\n${m.content}\n\n`))
      .join("");
  }
  return conversations
    .map((c) => {
      const lines = [`# ${c.title ?? "Session"}`, ""];
      if (typeof c.startedAt === "number" && Number.isFinite(c.startedAt)) lines.push(`*Started: ${formatStarted(c.startedAt)}*`, "");
      lines.push("---", "");
      for (const m of c.messages) lines.push(`## ${roleHeading(m.role)}`, "", m.content, "", "---", "");
      return lines.join("\n");
    })
    .join("\n");
}

/**
 * The messages around `line` (the message starting there, else the next one after it, else the
 * last), `context` messages each side, as `[line N] role` blocks; the target is marked "(match)".
 */
export function renderExpand(messages: readonly NormalizedMessage[], line: number, context: number): string | null {
  if (messages.length === 0) return null;
  let target = messages.findIndex((m) => m.lineNumber === line);
  if (target < 0) target = messages.findIndex((m) => m.lineNumber >= line);
  if (target < 0) target = messages.length - 1;
  const from = Math.max(0, target - context);
  const to = Math.min(messages.length, target + context + 1);
  return messages
    .slice(from, to)
    .map((m, k) => `[line ${m.lineNumber}] ${m.role || "unknown"}${from + k === target ? " (match)" : ""}\n${m.content}`)
    .join("\n\n");
}

/** Readable sessions per agent and the files that held none, reading the files without an index. */
async function countDirectly(
  found: readonly FoundSession[],
  deadline: number,
): Promise<{ sessions: number; agents: Record<string, number>; bad: Array<{ path: string; agent: string }>; pending: number }> {
  const agents: Record<string, number> = {};
  const bad: Array<{ path: string; agent: string }> = [];
  let sessions = 0;
  let read = 0;
  const ordered = [...found].sort((a, b) => b.ref.mtimeMs - a.ref.mtimeMs);
  for (const { reader, ref } of ordered) {
    if (read > 0 && Date.now() > deadline) break;
    read++;
    let conversations: NormalizedConversation[] = [];
    try {
      conversations = (await reader.read(ref)) ?? [];
    } catch {
      conversations = [];
    }
    const useful = conversations.filter((c) => Array.isArray(c?.messages) && c.messages.length > 0);
    if (useful.length === 0) bad.push({ path: ref.path, agent: ref.agent });
    for (const c of useful) {
      const agent = c.agent ?? ref.agent;
      agents[agent] = (agents[agent] ?? 0) + 1;
      sessions++;
    }
  }
  return { sessions, agents, bad, pending: ordered.length - read };
}

/** Counts unreadable files per agent and explains the first few. */
async function describeUnreadable(bad: ReadonlyArray<{ path: string; agent: string }>): Promise<UnreadableSessions | undefined> {
  if (bad.length === 0) return undefined;
  const byAgent: Record<string, number> = {};
  for (const b of bad) byAgent[b.agent] = (byAgent[b.agent] ?? 0) + 1;
  const sorted = [...bad].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const files = await Promise.all(sorted.slice(0, MAX_UNREADABLE_LISTED).map(async (b) => ({ ...b, reason: await explainUnreadable(b.path, b.agent) })));
  return { count: bad.length, byAgent, files };
}

export function createNativeSource(options: NativeSourceOptions): NativeEpisodicSource {
  const name = options.name ?? "native";
  const logger = options.logger ?? noopLogger;
  const clock = options.clock ?? systemClock;
  const readers = [...options.readers];
  const env = options.discoveryEnv;
  const extraRoots = options.extraRoots ?? {};
  const store = new IndexStore({ dir: options.indexDir, logger });
  const snippetCache = new WordCache(20_000);
  const ttl = options.discoveryCacheTtlMs;
  const walkCache = new WalkCache({
    file: options.indexDir === null ? null : join(resolve(options.indexDir), DISCOVERY_CACHE_NAME),
    ttlMs: typeof ttl === "number" && Number.isFinite(ttl) ? ttl : DEFAULT_DISCOVERY_CACHE_TTL_MS,
    now: () => clock.now().getTime(),
    logger,
  });

  /** Session files now; broad walks are reused within the TTL unless `fresh`. */
  const discover = async (fresh = false): Promise<FoundSession[]> => {
    try {
      const found = await options.discover(walkCache.wrap(readers, fresh), env, extraRoots);
      return Array.isArray(found) ? found : [];
    } catch (error) {
      logger.warn(`Session discovery failed: ${message(error)}`);
      return [];
    }
  };

  const searchedRoots = (): string[] => {
    const home = env.home || homedir();
    const extras = new Map<string, string[]>();
    for (const [key, roots] of Object.entries(extraRoots)) {
      if (!Array.isArray(roots)) continue;
      const slug = normalizeAgent(key);
      extras.set(slug, [...(extras.get(slug) ?? []), ...roots.filter((r) => typeof r === "string" && r.trim() !== "")]);
    }
    const out = new Set<string>();
    for (const reader of readers) {
      let roots: string[] = [];
      try {
        roots = reader.defaultRoots(env);
      } catch {
        roots = [];
      }
      for (const r of [...roots, ...(extras.get(reader.agent) ?? [])]) out.add(resolve(expandHome(r.trim(), home)));
    }
    return [...out];
  };

  /** Reads the conversations of a session file for export/expand (null when nothing reads it). */
  const readConversations = async (sessionPath: string): Promise<NormalizedConversation[] | null> => {
    if (typeof sessionPath !== "string" || sessionPath.trim() === "") return null;
    const home = env.home || homedir();
    const wanted = expandHome(sessionPath.trim(), home);
    const abs = resolve(wanted);
    // The index knows which agent wrote a file, and which file holds a conversation's source path.
    let filePath = abs;
    let agent: string | null = null;
    try {
      const snap = await store.current();
      search: for (const ls of snap?.segments ?? []) {
        for (const conv of ls.segment.convs) {
          const f = ls.segment.files[conv.file]!;
          if (ls.masked[conv.file]) continue;
          if (resolve(f.path) === abs || resolve(conv.sourcePath) === abs) {
            filePath = f.path;
            agent = f.agent;
            break search;
          }
        }
      }
    } catch (error) {
      logger.debug(`History index unavailable for export: ${message(error)}`);
    } finally {
      store.releaseAll();
    }
    let info;
    try {
      info = await stat(filePath);
    } catch {
      return null;
    }
    const ordered = agent === null ? readers : [...readers.filter((r) => r.agent === agent), ...readers.filter((r) => r.agent !== agent)];
    for (const reader of ordered) {
      let conversations: NormalizedConversation[];
      try {
        conversations = await reader.read({ agent: reader.agent, path: filePath, mtimeMs: info.mtimeMs, size: info.size });
      } catch {
        continue;
      }
      const useful = (conversations ?? []).filter((c) => Array.isArray(c?.messages) && c.messages.length > 0);
      if (useful.length === 0) continue;
      const exact = useful.filter((c) => resolve(c.sourcePath || filePath) === abs);
      return exact.length > 0 ? exact : useful;
    }
    return null;
  };

  return {
    name,

    async health(): Promise<NativeHealth> {
      const found = await discover();
      const roots = searchedRoots();
      if (found.length === 0) {
        const degraded: DegradedInfo = {
          available: false,
          reason: "NOT_FOUND",
          message: "No agent session files found; history is empty until a supported agent (Claude Code, Codex, …) has saved a session.",
          suggestedFix: [
            "Work with a supported coding agent so it saves sessions, or add your session folders to the configured extra roots",
            ...roots.map((r) => `searched: ${r}`),
          ],
        };
        return { available: false, name, degraded, sessions: 0, files: 0, agents: {}, roots };
      }
      // Only sessions that can be read count: the files are read into the index (which later
      // searches reuse), within a time budget.
      let counted: { sessions: number; agents: Record<string, number>; bad: Array<{ path: string; agent: string }>; pending: number } | null = null;
      const deadline = Date.now() + HEALTH_INDEX_BUDGET_MS;
      // Before any search has created the index, a health check writes nothing: it reads the files
      // directly (the index directory would otherwise create the data directory on a fresh machine).
      if (options.indexDir !== null && !existsSync(join(resolve(options.indexDir), MANIFEST_NAME))) {
        counted = await countDirectly(found, deadline);
      } else {
        try {
          const snap = await store.refresh(found, deadline);
          walkCache.flush();
          const agents: Record<string, number> = {};
          const bad: Array<{ path: string; agent: string }> = [];
          let sessions = 0;
          for (const ls of snap.segments) {
            ls.segment.files.forEach((f, i) => {
              if (ls.masked[i]) return;
              if (f.convEnd <= f.convStart) {
                bad.push({ path: f.path, agent: f.agent });
                return;
              }
              for (let c = f.convStart; c < f.convEnd; c++) {
                const agent = ls.segment.convs[c]!.agent;
                agents[agent] = (agents[agent] ?? 0) + 1;
                sessions++;
              }
            });
          }
          counted = { sessions, agents, bad, pending: snap.pending };
        } catch (error) {
          logger.debug(`Could not read the session files for the health check: ${message(error)}`);
        } finally {
          store.releaseAll();
        }
      }
      if (counted === null) {
        // The index cannot be built: report what discovery found, unverified.
        const agents: Record<string, number> = {};
        for (const { ref } of found) agents[ref.agent] = (agents[ref.agent] ?? 0) + 1;
        return { available: true, name, sessions: found.length, files: found.length, agents, roots };
      }
      const unreadable = await describeUnreadable(counted.bad);
      for (const u of unreadable?.files ?? []) logger.debug(`Unreadable ${u.agent} session file ${u.path}: ${u.reason}`);
      const health: NativeHealth = {
        available: counted.sessions > 0 || counted.pending > 0,
        name,
        sessions: counted.sessions,
        files: found.length,
        agents: counted.agents,
        roots,
        ...(counted.pending > 0 ? { pending: counted.pending } : {}),
        ...(unreadable !== undefined ? { unreadable } : {}),
      };
      if (!health.available) {
        const why = unreadable?.files[0];
        health.degraded = {
          available: false,
          reason: "NOT_FOUND",
          message: `${found.length} session file(s) found, but none could be read${why !== undefined ? ` (e.g. ${why.path}: ${why.reason})` : ""}.`,
          suggestedFix: ["cm doctor --json   (lists the unreadable files and why)", ...roots.map((r) => `searched: ${r}`)],
        };
      }
      return health;
    },

    async describe(sessionPath: string): Promise<SessionInfo | null> {
      const conversations = await readConversations(sessionPath);
      const first = conversations?.[0];
      if (first === undefined) return null;
      return { agent: first.agent, ...(first.workspace !== null ? { workspace: first.workspace } : {}) };
    },

    async search(query: string, opts: EpisodicSearchOptions): Promise<EpisodicSearchResult> {
      const parsed = parseQuery(typeof query === "string" ? query : "");
      if (parsed.terms.length === 0) return { hits: [] };
      const requested = Math.floor(Number(opts?.limit));
      const limit = Number.isFinite(requested) && requested > 0 ? Math.min(requested, MAX_SEARCH_LIMIT) : DEFAULT_SEARCH_LIMIT;
      const filters = makeFilters(clock.now().getTime(), opts ?? {});
      const startedAt = Date.now();
      const timeout = typeof opts?.timeoutMs === "number" && opts.timeoutMs > 0 ? opts.timeoutMs : null;
      const deadline = timeout === null ? null : startedAt + timeout * READ_BUDGET_SHARE;
      try {
        const found = await discover();
        const snap = await store.refresh(found, deadline);
        walkCache.flush();
        const weights = expandTerms(snap, parsed);
        const top = rank(snap, weights, parsed.excluded, filters, limit);
        const texts = new Map<string, string[] | null>();
        const hits: HistoryHit[] = top.map(({ seg, doc, score }) => {
          const { segment } = snap.segments[seg]!;
          const conv = segment.convs[segment.docConv[doc]!]!;
          const file = segment.files[conv.file]!;
          const key = `${seg}:${conv.file}`;
          let fileTexts = texts.get(key);
          if (fileTexts === undefined) {
            fileTexts = segment.readTexts(conv.file);
            texts.set(key, fileTexts);
          }
          const text = fileTexts?.[doc - file.docStart] ?? "";
          const own = segment.docTime[doc]!;
          const created = Number.isFinite(own) ? own : conv.startedAt;
          return {
            source_path: conv.sourcePath,
            line_number: segment.docLine[doc]!,
            agent: conv.agent,
            ...(conv.workspace !== null ? { workspace: conv.workspace } : {}),
            ...(conv.title !== null ? { title: conv.title } : {}),
            snippet: makeSnippet(text, weights, undefined, snippetCache),
            score: Math.round(score * 1e6) / 1e6,
            created_at: created ?? null,
            origin: { kind: "local" as const },
          };
        });
        if (snap.pending > 0) {
          const indexed = snap.discovered - snap.pending;
          return {
            hits,
            degraded: {
              available: false,
              reason: "TIMEOUT",
              message: `The history index is still being built (${indexed} of ${snap.discovered} session files indexed); history may be incomplete.`,
              suggestedFix: ["Run the command again: indexing resumes where it stopped"],
            },
          };
        }
        return { hits };
      } catch (error) {
        logger.warn(`Native history search failed: ${message(error)}`);
        return {
          hits: [],
          degraded: {
            available: false,
            reason: "OTHER",
            message: `native history search failed: ${message(error)}`,
            suggestedFix: [`Remove the history index${options.indexDir !== null ? ` (${options.indexDir})` : ""} so it is rebuilt`, "cm doctor"],
          },
        };
      } finally {
        store.releaseAll();
      }
    },

    async listSessions(opts): Promise<SessionSummary[]> {
      const filters = makeFilters(clock.now().getTime(), opts ?? {});
      let snap: IndexSnapshot;
      try {
        snap = await store.refresh(await discover(), null);
        walkCache.flush();
      } catch (error) {
        logger.warn(`Could not list sessions: ${message(error)}`);
        return [];
      } finally {
        store.releaseAll();
      }
      const out: Array<{ summary: SessionSummary; time: number }> = [];
      for (const ls of snap.segments) {
        const states = conversationStates(ls, filters);
        ls.segment.convs.forEach((conv, c) => {
          if (states[c] !== 2) return;
          const time = convTime(ls.segment, c);
          if (filters.cutoff !== null && !(time >= filters.cutoff)) return;
          const summary: SessionSummary = { path: conv.sourcePath, agent: conv.agent, messageCount: conv.messageCount };
          if (conv.workspace !== null) summary.workspace = conv.workspace;
          const start = toIso(conv.startedAt);
          const end = toIso(conv.endedAt);
          if (start !== undefined) summary.startTime = start;
          if (end !== undefined) summary.endTime = end;
          out.push({ summary, time });
        });
      }
      out.sort((a, b) => b.time - a.time || (a.summary.path < b.summary.path ? -1 : a.summary.path > b.summary.path ? 1 : 0));
      return out.map((o) => o.summary);
    },

    async export(sessionPath, format): Promise<string | null> {
      const conversations = await readConversations(sessionPath);
      if (conversations === null) return null;
      return renderConversations(conversations, format === "text" || format === "json" ? format : "markdown");
    },

    async expand(sessionPath, line, context): Promise<string | null> {
      if (!Number.isInteger(line) || line < 1) return null;
      const around = Number.isInteger(context) && context >= 0 ? context : 3;
      const conversations = await readConversations(sessionPath);
      if (conversations === null) return null;
      return renderExpand(
        conversations.flatMap((c) => c.messages),
        line,
        around,
      );
    },

    async reindex(): Promise<ReindexResult> {
      try {
        const snap = await store.refresh(await discover(true), null);
        walkCache.flush();
        let sessions = 0;
        for (const ls of snap.segments) sessions += ls.segment.files.filter((_, i) => !ls.masked[i]).length;
        return { sessions, messages: snap.liveDocs };
      } finally {
        store.releaseAll();
      }
    },
  };
}
