// Shared by the durability tests: stores and deps built as the runtime builds them, writer
// processes (worker.mjs), and the checks of what a store holds after concurrent or killed writers.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync, readdirSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  JournalEventSchema,
  PlaybookSchema,
  createNullEpisodicSource,
  defaultConfig,
  playbookAddOperation,
  runOperation,
  type BlockedEntry,
  type JournalEvent,
  type OperationDeps,
  type Playbook,
  type Store,
} from "@cass-memory/core";
import { createSqliteStore } from "@cass-memory/store-sqlite";
import { createYamlStore, fromYaml } from "@cass-memory/store-yaml";
import { createIdGenerator, createStderrLogger, systemClock } from "../../src/node-ports.js";
export { prng } from "./prng.mjs";

export type Backend = "yaml" | "sqlite";
export const BACKENDS: readonly Backend[] = ["yaml", "sqlite"];

export const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));

export type DurableStore = Store & { close?: () => void };

/**
 * The store over `dir` (the global layer only), as the runtime builds it, with generous lock waits
 * (`timeoutMs`, default 120 s) and the stores' default `staleMs` unless given.
 */
export function openStore(backend: Backend, dir: string, lock: { timeoutMs?: number; staleMs?: number } = {}): DurableStore {
  const logger = createStderrLogger({ write: () => undefined });
  const options = { timeoutMs: lock.timeoutMs ?? 120_000, ...(lock.staleMs !== undefined ? { staleMs: lock.staleMs } : {}) };
  return backend === "sqlite"
    ? createSqliteStore({ globalDir: dir, repoDir: null, logger, parseYaml: fromYaml, lock: options, busyTimeoutMs: options.timeoutMs })
    : createYamlStore({ globalDir: dir, repoDir: null, logger, lock: options });
}

export function depsFor(store: Store, actor = "durability-test"): OperationDeps {
  return {
    store,
    episodic: createNullEpisodicSource(null),
    clock: systemClock,
    ids: createIdGenerator(),
    logger: createStderrLogger({ write: () => undefined }),
    config: defaultConfig(),
    cliName: "cm",
    files: { exists: async () => false, readText: async () => null },
    actor,
  };
}

const SEED_TOPICS = [
  "Run database migrations inside a transaction",
  "Prefer structured logging with request ids",
  "Retry idempotent HTTP calls with jittered backoff",
  "Keep feature flags out of the domain layer",
  "Review lock file changes in pull requests",
  "Profile before rewriting a slow query",
  "Rotate API tokens through the secret manager",
  "Write the failing test before the fix",
];

/** Adds `count` bullets in one batch (the real operation) and returns their ids and contents. */
export async function seedBullets(deps: OperationDeps, count: number, label = "seed"): Promise<Array<{ id: string; content: string }>> {
  const items = Array.from({ length: count }, (_, i) => ({
    content: `${SEED_TOPICS[i % SEED_TOPICS.length]} for component ${label}${i} of the platform (rule ${i} of the seeded set)`,
    category: ["testing", "debugging", "performance", "security"][i % 4],
  }));
  const result = await runOperation(playbookAddOperation, deps, { batch: { source: `durability:${label}`, text: JSON.stringify(items) } });
  if (!("added" in result) || result.added.length !== count) throw new Error(`seeding added ${JSON.stringify(result)}`);
  return result.added.map((a) => ({ id: a.id, content: a.content }));
}

/** One line a worker printed. */
export interface Announcement {
  type: "ready" | "start" | "done" | "error" | "finished" | "fatal";
  seq?: number;
  op?: "mark" | "add" | "forget";
  tag?: string;
  bulletId?: string;
  helpful?: boolean;
  session?: string;
  contents?: string[];
  ids?: string[];
  reason?: string;
  code?: string | null;
  message?: string;
  failures?: number;
}

export interface WorkerSpec {
  backend: Backend;
  dir: string;
  worker: number;
  count: number;
  seed: number;
  targets: string[];
  waitForGo?: boolean;
  mix?: { mark: number; add: number; batch: number; forget: number };
  batchSize?: number;
  lockTimeoutMs?: number;
  staleMs?: number;
  tagPrefix?: string;
  forgettable?: string[];
}

export interface WorkerHandle {
  child: ChildProcessWithoutNullStreams;
  lines: Announcement[];
  stderr: () => string;
  /** Resolves with the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once a line matching `predicate` was printed (or rejects when the worker exits first). */
  waitFor(predicate: (line: Announcement) => boolean): Promise<Announcement>;
}

/** `env`: extra environment of the writer (e.g. `CM_TEST_CRASH_AT`, node-files crash-point.ts). */
export function spawnWorker(spec: WorkerSpec, env: Record<string, string> = {}): WorkerHandle {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(spec)], { stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...env } });
  const lines: Announcement[] = [];
  const waiters: Array<{ predicate: (line: Announcement) => boolean; resolve: (line: Announcement) => void; reject: (error: Error) => void }> = [];
  let buffer = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf("\n");
    while (newline >= 0) {
      const text = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf("\n");
      if (text.trim() === "") continue;
      const line = JSON.parse(text) as Announcement;
      lines.push(line);
      for (const waiter of [...waiters]) {
        if (waiter.predicate(line)) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    // 'close': the process exited and its stdout was read to the end.
    child.on("close", (code, signal) => {
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`worker ${spec.worker} exited (${code ?? signal}) before the awaited line; stderr: ${stderr}`));
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitFor(predicate) {
      const seen = lines.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      if (child.exitCode !== null || child.signalCode !== null) return Promise.reject(new Error(`worker ${spec.worker} already exited`));
      return new Promise((resolve, reject) => waiters.push({ predicate, resolve, reject }));
    },
  };
}

/**
 * True when a writer died before it was ready because a built module was missing (a package being
 * rebuilt at that moment by `pnpm build` — the dist directory is emptied first). Such a writer
 * never touched the store, so the tests start it again instead of failing; anything else counts.
 */
export function diedOfMissingBuild(worker: WorkerHandle): boolean {
  return !worker.lines.some((l) => l.type === "ready") && worker.stderr().includes("ERR_MODULE_NOT_FOUND");
}

/** What a store holds: the global playbook, its journal and its blocked entries. */
export interface Snapshot {
  playbook: Playbook;
  journal: JournalEvent[];
  blocked: BlockedEntry[];
}

export async function snapshotOf(store: Store): Promise<Snapshot> {
  const playbook = await store.readPlaybook("global");
  if (playbook === null) throw new Error("the global playbook is missing");
  return { playbook, journal: await store.readJournal("global"), blocked: await store.readBlocked("global") };
}

/**
 * A started mutation as the store shows it: all of it, none of it, or one of the intermediate
 * states an operation or a store defines:
 * - `not-blocked`: a forget whose deprecation (with its journal event) was written, but not yet its
 *   blocked-log entry (forget.ts writes the entry after the deprecation, on purpose);
 * - `no-journal` / `no-journal-not-blocked`: the playbook change was written, its journal event was
 *   not. Before docs/adr/0012-journal-crash-safety.md the YAML store could leave this (journal appended
 *   after the playbook's rename); now no store may: the crash tests no longer allow it.
 * Anything else is `torn`.
 */
export type Verdict = "present" | "absent" | "not-blocked" | "no-journal" | "no-journal-not-blocked" | { torn: string };

/** Indexes over a snapshot for the per-mutation checks. */
export class SnapshotIndex {
  readonly byContent = new Map<string, string[]>();
  readonly createdByContent = new Map<string, JournalEvent[]>();
  readonly feedbackBySession = new Map<string, Array<{ bulletId: string; type: string }>>();
  readonly journalBySource = new Map<string, JournalEvent[]>();
  readonly journalByReason = new Map<string, JournalEvent[]>();
  readonly blockedById = new Map<string, BlockedEntry[]>();
  readonly bullets = new Map<string, Playbook["bullets"][number]>();

  constructor(readonly snapshot: Snapshot) {
    const push = <K, V>(map: Map<K, V[]>, key: K, value: V) => {
      const list = map.get(key);
      if (list === undefined) map.set(key, [value]);
      else list.push(value);
    };
    for (const bullet of snapshot.playbook.bullets) {
      this.bullets.set(bullet.id, bullet);
      push(this.byContent, bullet.content, bullet.id);
      for (const event of bullet.feedbackEvents ?? []) {
        if (event.sessionPath !== undefined) push(this.feedbackBySession, event.sessionPath, { bulletId: bullet.id, type: event.type });
      }
    }
    for (const event of snapshot.journal) {
      if (event.change === "created") {
        const content = (event.after as { content?: unknown } | undefined)?.content;
        if (typeof content === "string") push(this.createdByContent, content, event);
      }
      if (event.source !== undefined) push(this.journalBySource, event.source, event);
      if (event.reason !== undefined) push(this.journalByReason, event.reason, event);
    }
    for (const entry of snapshot.blocked) push(this.blockedById, entry.id, entry);
  }

  /** Classifies one announced mutation (from its "start" line). */
  verdict(line: Announcement): Verdict {
    if (line.op === "add") {
      const states = (line.contents ?? []).map((content) => {
        const bullets = this.byContent.get(content) ?? [];
        const created = this.createdByContent.get(content) ?? [];
        if (bullets.length === 1 && created.length === 1 && created[0]!.bulletId === bullets[0]) return "present";
        if (bullets.length === 0 && created.length === 0) return "absent";
        if (bullets.length === 1 && created.length === 0) return "no-journal";
        return `${bullets.length} bullet(s) and ${created.length} created event(s) for ${JSON.stringify(content)}`;
      });
      for (const whole of ["present", "absent", "no-journal"] as const) if (states.every((s) => s === whole)) return whole;
      const count = (state: string) => states.filter((s) => s === state).length;
      return {
        torn: `add ${line.tag}: ${count("present")} present, ${count("absent")} absent, ${count("no-journal")} without journal event, of ${states.length}; ${states.filter((s) => !["present", "absent", "no-journal"].includes(s)).join("; ")}`,
      };
    }
    if (line.op === "mark") {
      const feedback = (this.feedbackBySession.get(line.session!) ?? []).filter((f) => f.bulletId === line.bulletId);
      const events = (this.journalBySource.get(line.session!) ?? []).filter((e) => e.operation === "feedback" && e.bulletId === line.bulletId);
      const type = line.helpful ? "helpful" : "harmful";
      if (feedback.length === 1 && feedback[0]!.type === type && events.length === 1) return "present";
      if (feedback.length === 0 && events.length === 0) return "absent";
      if (feedback.length === 1 && feedback[0]!.type === type && events.length === 0) return "no-journal";
      return { torn: `mark ${line.tag} on ${line.bulletId}: ${feedback.length} feedback event(s) ${JSON.stringify(feedback)}, ${events.length} journal event(s)` };
    }
    if (line.op === "forget") {
      const bullet = this.bullets.get(line.bulletId!);
      const deprecated = bullet !== undefined && bullet.deprecated === true && bullet.deprecationReason === line.reason && bullet.state === "retired" && bullet.maturity === "deprecated";
      const events = (this.journalByReason.get(line.reason!) ?? []).filter((e) => e.operation === "forget" && e.bulletId === line.bulletId);
      const blocked = (this.blockedById.get(line.bulletId!) ?? []).filter((b) => b.reason === line.reason);
      if (deprecated && events.length === 1 && blocked.length === 1) return "present";
      if (!deprecated && events.length === 0 && blocked.length === 0) return "absent";
      // forget deprecates first and appends the blocked entry after that write (forget.ts).
      if (deprecated && events.length === 1 && blocked.length === 0) return "not-blocked";
      if (deprecated && events.length === 0 && blocked.length === 0) return "no-journal-not-blocked";
      return { torn: `forget ${line.tag} of ${line.bulletId}: deprecated=${deprecated}, ${events.length} journal event(s), ${blocked.length} blocked entr(ies)` };
    }
    return { torn: `unknown announcement ${JSON.stringify(line)}` };
  }

  /**
   * Invariants over the whole playbook: each bullet's counters equal its feedback events, and its
   * journal holds one feedback event per feedback event on the bullet (every mark writes both),
   * except for the marks in `journalLess` (sessions whose mark was judged `no-journal`).
   */
  invariantProblems(journalLess: ReadonlySet<string> = new Set()): string[] {
    const problems: string[] = [];
    const feedbackJournal = new Map<string, number>();
    for (const event of this.snapshot.journal) {
      if (event.operation === "feedback") feedbackJournal.set(event.bulletId, (feedbackJournal.get(event.bulletId) ?? 0) + 1);
    }
    for (const bullet of this.snapshot.playbook.bullets) {
      const events = bullet.feedbackEvents ?? [];
      const helpful = events.filter((e) => e.type === "helpful").length;
      const harmful = events.filter((e) => e.type === "harmful").length;
      if (bullet.helpfulCount !== helpful || bullet.harmfulCount !== harmful) {
        problems.push(`${bullet.id}: counters ${bullet.helpfulCount}/${bullet.harmfulCount} but ${helpful}/${harmful} feedback events`);
      }
      const journaled = feedbackJournal.get(bullet.id) ?? 0;
      const unjournaled = events.filter((e) => e.sessionPath !== undefined && journalLess.has(e.sessionPath)).length;
      if (journaled !== events.length - unjournaled) problems.push(`${bullet.id}: ${events.length} feedback event(s) but ${journaled} feedback journal event(s)`);
    }
    const ids = new Set<string>();
    for (const bullet of this.snapshot.playbook.bullets) {
      if (ids.has(bullet.id)) problems.push(`duplicate bullet id ${bullet.id}`);
      ids.add(bullet.id);
    }
    return problems;
  }
}

// -------------------------------------------------------------------------------------------------
// Validity of what is on disk, read independently of the store

interface SqliteDb {
  prepare(sql: string): { all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): unknown;
  close(): void;
}
type SqliteCtor = new (path: string, options?: { readonly?: boolean; fileMustExist?: boolean }) => SqliteDb;

/** better-sqlite3, resolved from the SQLite store's own dependencies (it is not one of runtime's). */
export function loadSqlite(): SqliteCtor {
  const storePackage = realpathSync(fileURLToPath(new URL("../../node_modules/@cass-memory/store-sqlite/package.json", import.meta.url)));
  const storeRequire = createRequire(storePackage);
  return storeRequire("better-sqlite3") as SqliteCtor;
}

export const DATABASE_FILE = "cass-memory.sqlite";

/**
 * Problems of the files as a second reader sees them. YAML: playbook.yaml parses and validates,
 * every line of events.jsonl and blocked.log is a valid record. SQLite: integrity_check is ok and
 * the full-text index matches the bullets table (FTS5 'integrity-check' with rank 1 compares the
 * index with its content table).
 */
export function fileProblems(backend: Backend, dir: string): string[] {
  const problems: string[] = [];
  if (backend === "yaml") {
    const path = join(dir, "playbook.yaml");
    try {
      const parsed = PlaybookSchema.safeParse(fromYaml(readFileSync(path, "utf8"), path));
      if (!parsed.success) problems.push(`playbook.yaml does not validate: ${parsed.error.issues[0]?.message}`);
    } catch (error) {
      problems.push(`playbook.yaml does not parse: ${(error as Error).message}`);
    }
    for (const name of ["events.jsonl", "blocked.log"]) {
      let text = "";
      try {
        text = readFileSync(join(dir, name), "utf8");
      } catch {
        continue;
      }
      text.split("\n").forEach((line, i) => {
        if (line.trim() === "") return;
        try {
          const value = JSON.parse(line) as unknown;
          if (name === "events.jsonl" && !JournalEventSchema.safeParse(value).success) problems.push(`${name}:${i + 1} is not a valid journal event`);
        } catch {
          problems.push(`${name}:${i + 1} is not JSON: ${line.slice(0, 80)}`);
        }
      });
    }
    return problems;
  }
  const Database = loadSqlite();
  const db = new Database(join(dir, DATABASE_FILE), { fileMustExist: true });
  try {
    const integrity = (db.pragma("integrity_check") as Array<{ integrity_check: string }>).map((r) => r.integrity_check);
    if (integrity.join() !== "ok") problems.push(`integrity_check: ${integrity.join("; ")}`);
    try {
      db.prepare("INSERT INTO bullets_fts (bullets_fts, rank) VALUES ('integrity-check', 1)").run();
    } catch (error) {
      problems.push(`FTS integrity-check: ${(error as Error).message}`);
    }
    const count = (sql: string): number => (db.prepare(sql).all() as Array<{ n: number }>)[0]?.n ?? -1;
    const ftsRows = count("SELECT count(*) AS n FROM bullets_fts");
    const bulletRows = count("SELECT count(*) AS n FROM bullets");
    if (ftsRows !== bulletRows) problems.push(`FTS rows ${ftsRows} ≠ bullet rows ${bulletRows}`);
  } finally {
    db.close();
  }
  return problems;
}

/** Rows of the bullets whose indexed text matches `token` in the SQLite full-text index. */
export function ftsIds(dir: string, tokens: string[]): Map<string, string[]> {
  const Database = loadSqlite();
  const db = new Database(join(dir, DATABASE_FILE), { readonly: true, fileMustExist: true });
  try {
    const query = db.prepare("SELECT b.id AS id FROM bullets_fts JOIN bullets b ON b.row = bullets_fts.rowid WHERE bullets_fts MATCH ?");
    const found = new Map<string, string[]>();
    for (const token of tokens) found.set(token, (query.all(`"${token}"`) as Array<{ id: string }>).map((r) => r.id));
    return found;
  } finally {
    db.close();
  }
}

/** Lock directories and temp files under `dir` (what a killed writer can leave behind). */
export function leftovers(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string, rel: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`;
      if (/\.lock\.d$|\.stale\.[0-9a-f]+$|\.tmp\.[0-9a-f]+$|\.[0-9a-f]{8}\.tmp$/.test(entry.name)) found.push(path);
      else if (entry.isDirectory()) walk(join(at, entry.name), path);
    }
  };
  walk(dir, "");
  return found.sort();
}

/** Lock directories under `dir` that hold no `pid` file (left by a writer killed right after its mkdir). */
export function pidlessLocks(dir: string): string[] {
  return leftovers(dir).filter((path) => path.endsWith(".lock.d") && !existsSync(join(dir, path, "pid")));
}

