import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import Database from "better-sqlite3";
import {
  AppError,
  COST_DIR,
  COST_TOTAL_FILE,
  DIARY_ID,
  decodeDiaryText,
  diaryEntryForWrite,
  checkJournalEventsForWrite,
  JournalEventSchema,
  ONBOARDING_STATE_FILE,
  PROCESSED_LOG_DIR,
  PROCESSED_LOG_HEADER,
  addCost,
  createEmptyPlaybook,
  createOnboardingState,
  decodeBlockedEntries,
  decodeCostTotals,
  decodeOnboardingState,
  decodeProcessedLog,
  defaultConfig,
  encodeOnboardingState,
  encodeProcessedSessions,
  finalizeOnboardingState,
  isAppError,
  monthlyCostFile,
  parseJsonLines,
  processedLogFileName,
  updateLogLine,
  utcMonthKey,
  validateBlockedEntries,
  validatePlaybookForWrite,
} from "@cass-memory/core";
import type {
  BlockedEntry,
  BulletCandidateIndex,
  CostEntry,
  MutationScope,
  CostLedger,
  CostTotals,
  DiaryEntry,
  InitializeOptions,
  InitializeResult,
  JournalEvent,
  Layer,
  LayerStatus,
  LogName,
  LogReadResult,
  LogRecordUpdate,
  LogUpdateResult,
  Logger,
  MutationTx,
  OnboardingState,
  Playbook,
  ProcessedSession,
  StarterFile,
  Store,
  StoreDiagnosis,
  StoreLocations,
  FixResult,
} from "@cass-memory/core";
import { LayerDatabase, type Db, type SynchronousMode } from "./database.js";
import { getDocument, linesOf, markFile, notInRepo, putDocument } from "./row-helpers.js";
import { createSqliteDiagnostics } from "./diagnostics.js";
import { createSqliteTransfer } from "./transfer.js";
import { atomicWriteFile, backupFile, crashPoint, DEFAULT_LOCK_TIMEOUT_MS, mutateConfigJson, readStarterDir, withLock, withNamedLock, type LockOptions, type YamlParser } from "@cass-memory/node-files";
import {
  clearStoredPlaybook,
  decodeBullet,
  emptyStored,
  readStoredPlaybook,
  readCandidatePlaybook,
  readStoredSubset,
  searchCandidates,
  writeStoredPlaybook,
  type BulletCandidate,
} from "./playbook-rows.js";

/** File name of each layer's database, in the global directory and in `<repo>/.cass/`. */
export const DATABASE_FILE = "cass-memory.sqlite";

/** Names `layerStatus` reports: the original's files whose content each layer holds (see README). */
export const GLOBAL_LAYER_FILES = ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"] as const;
export const REPO_LAYER_FILES = ["playbook.yaml", "blocked.log"] as const;

/** The original's file name of each log (also the record names used in messages). */
export const LOG_FILES: Readonly<Record<LogName, string>> = {
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
  "reflection-runs": "reflection-runs.jsonl",
};

const COST_TOTAL_DOC = `${COST_DIR}/${COST_TOTAL_FILE}`;
const DEFAULT_BUSY_TIMEOUT_MS = 10_000;

export interface SqliteStoreOptions {
  /** The global data directory (`~/.cass-memory`): config.json, starters and named locks stay files there. */
  globalDir: string;
  /** `<git root>/.cass`, or null outside a git repository. Its database is `<repoDir>/cass-memory.sqlite`. */
  repoDir: string | null;
  logger: Logger;
  /** The global layer's database (config `storage.path`); default `<globalDir>/cass-memory.sqlite`. */
  path?: string;
  /**
   * Waits for locks: `timeoutMs` (default 10 s) for the database's write lock, config.json's lock and
   * `exclusive`; `staleMs` (default 30 s) for taking over the directory locks of dead processes.
   */
  lock?: { timeoutMs?: number; staleMs?: number };
  /** SQLite's busy timeout for statements that wait inside SQLite (opening, migrations); default 10 s. */
  busyTimeoutMs?: number;
  /** `full` (default: every commit is on disk when the call returns) or `normal` (faster; see README). */
  synchronous?: SynchronousMode;
  /** The clock of the cost ledger's buckets and `lastUpdated` (default: the system clock). */
  now?: () => Date;
  /** Parser for YAML starter files (e.g. `fromYaml` of @cass-memory/store-yaml); without it they are reported as unreadable. */
  parseYaml?: YamlParser;
  /**
   * Keep the last playbook read of each layer and return it while the database's revision is
   * unchanged (for long-running processes). Returned playbooks are then deeply frozen.
   */
  memoizeReads?: boolean;
}

export interface CandidateSearchOptions {
  /** Only bullets that are not retired or deprecated (default false). */
  activeOnly?: boolean;
}

/** The Store port plus what only a database can offer. */
export interface SqliteStore extends Store {
  /** Candidate bullets for `context` from the full-text index (see the port). */
  readonly candidates: BulletCandidateIndex;
  /** The database file of each layer (`repo` null outside a repository). */
  readonly databases: { global: string; repo: string | null };
  /**
   * Bullets of one layer that share words with `query` (content, tags, category; FTS5 with porter
   * stemming), best bm25 match first, at most `limit`. Candidates for ranking on large playbooks.
   */
  searchBulletCandidates(layer: Layer, query: string, limit: number, options?: CandidateSearchOptions): Promise<BulletCandidate[]>;
  /** The schema version of a layer's database, or null when it does not exist. */
  schemaVersion(layer: Layer): Promise<number | null>;
  /** Closes the open database connections (they reopen on the next call). */
  close(): void;
  diagnose(): Promise<StoreDiagnosis>;
  applyFix(id: string): Promise<FixResult>;
}






/** Freezes a playbook and everything in it (plain JSON-like data). */
function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

/**
 * The store over SQLite: one database per layer (`<globalDir>/cass-memory.sqlite`,
 * `<repo>/.cass/cass-memory.sqlite`) in WAL mode holding every record of the Store port, with the
 * same semantics as the YAML store; `config.json` and starters stay files.
 */
export function createSqliteStore(options: SqliteStoreOptions): SqliteStore {
  const { globalDir, repoDir, logger } = options;
  const now = options.now ?? (() => new Date());
  const lockTimeoutMs = options.lock?.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const dirLock: LockOptions = { timeoutMs: lockTimeoutMs, ...(options.lock?.staleMs !== undefined ? { staleMs: options.lock.staleMs } : {}), logger };
  const dbOptions = {
    logger,
    busyTimeoutMs: options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS,
    lockTimeoutMs,
    synchronous: options.synchronous ?? ("full" as SynchronousMode),
  };
  const globalDb = new LayerDatabase({ ...dbOptions, path: options.path ?? join(globalDir, DATABASE_FILE), layer: "global" });
  const repoDb = repoDir === null ? null : new LayerDatabase({ ...dbOptions, path: join(repoDir, DATABASE_FILE), layer: "repo" });
  const locations: StoreLocations = { globalDir, globalPlaybook: globalDb.path, repoDir, repoPlaybook: repoDb?.path ?? null };
  const configPath = join(globalDir, "config.json");

  const dbOf = (layer: Layer): LayerDatabase | null => (layer === "global" ? globalDb : repoDb);
  function requireDb(layer: Layer): LayerDatabase {
    const db = dbOf(layer);
    if (db === null) throw notInRepo();
    return db;
  }
  /** Where a record lives, for messages: `<database>#<the original's file name>`. */
  const recordPath = (ldb: LayerDatabase, name: string): string => `${ldb.path}#${name}`;
  const nowIso = (): string => new Date().toISOString();

  // -------------------------------------------------------------------------------------------
  // Playbook

  const memo = new Map<Layer, { key: string; playbook: Playbook }>();

  async function readPlaybook(layer: Layer): Promise<Playbook | null> {
    const ldb = dbOf(layer);
    if (ldb === null) return null;
    if (!options.memoizeReads) return ldb.read((db) => readStoredPlaybook(db, ldb.path, layer)?.playbook ?? null, null);
    return ldb.read((db) => {
      const revision = db.prepare("SELECT revision FROM playbook WHERE id = 1").pluck().get() as number | undefined;
      if (revision === undefined) {
        memo.delete(layer);
        return readStoredPlaybook(db, ldb.path, layer)?.playbook ?? null;
      }
      // The revision counts mutations of this file; a file put in its place starts another count.
      const key = `${ldb.openFile ?? ldb.path}:${revision}`;
      const hit = memo.get(layer);
      if (hit !== undefined && hit.key === key) return hit.playbook;
      const stored = readStoredPlaybook(db, ldb.path, layer);
      if (stored === null) return null;
      const frozen = deepFreeze(stored.playbook);
      memo.set(layer, { key, playbook: frozen });
      return frozen;
    }, null);
  }

  async function mutatePlaybook<T>(layer: Layer, fn: (playbook: Playbook, tx: MutationTx) => T | Promise<T>, scope?: MutationScope): Promise<T> {
    const ldb = requireDb(layer);
    return ldb.write(async (db) => {
      // A mutation scoped to a few bullets reads and writes only their rows.
      const stored =
        (scope?.bulletIds !== undefined ? readStoredSubset(db, ldb.path, layer, scope.bulletIds) : readStoredPlaybook(db, ldb.path, layer)) ??
        emptyStored(layer);
      const queued: JournalEvent[] = [];
      const rewrites: Array<[string, (event: JournalEvent) => JournalEvent]> = [];
      const value = await fn(stored.playbook, {
        journal: (events) => void queued.push(...events),
        rewriteJournal: (bulletId, map) => void rewrites.push([bulletId, map]),
      });
      const checked = validatePlaybookForWrite(stored.playbook, ldb.path);
      const events = checkJournalEventsForWrite(queued);
      const at = nowIso();
      writeStoredPlaybook(db, stored, checked, at);
      markFile(db, "playbook.yaml", at);
      crashPoint("sqlite:after-playbook-rows");
      // Same transaction as the playbook: the journal and the playbook never disagree.
      const insert = db.prepare("INSERT INTO journal (bullet_id, timestamp, event) VALUES (?, ?, ?)");
      for (const event of events) insert.run(event.bulletId, event.timestamp, JSON.stringify(event));
      crashPoint("sqlite:after-journal-rows");
      // Rewrites of a bullet's history (remove --hard), in the same transaction.
      for (const [bulletId, map] of rewrites) {
        const rows = db.prepare("SELECT seq, event FROM journal WHERE bullet_id = ?").all(bulletId) as Array<{ seq: number; event: string }>;
        const update = db.prepare("UPDATE journal SET event = ? WHERE seq = ?");
        for (const row of rows) {
          let event: JournalEvent;
          try {
            event = JSON.parse(row.event) as JournalEvent;
          } catch {
            continue;
          }
          const next = map(event);
          if (next !== event) update.run(JSON.stringify(next), row.seq);
        }
      }
      return value;
    });
  }

  async function readJournal(layer: Layer): Promise<JournalEvent[]> {
    const ldb = dbOf(layer);
    if (ldb === null) return [];
    const lines = ldb.read((db) => db.prepare("SELECT event FROM journal ORDER BY seq").pluck().all() as string[], []);
    const events: JournalEvent[] = [];
    let invalid = 0;
    for (const line of lines) {
      try {
        const parsed = JournalEventSchema.safeParse(JSON.parse(line));
        if (parsed.success) events.push(parsed.data);
        else invalid += 1;
      } catch {
        invalid += 1;
      }
    }
    if (invalid > 0) logger.warn(`Skipped ${invalid} malformed event(s) in ${recordPath(ldb, "events.jsonl")}`);
    return events;
  }

  // -------------------------------------------------------------------------------------------
  // Blocked entries

  async function readBlocked(layer: Layer): Promise<BlockedEntry[]> {
    const ldb = dbOf(layer);
    if (ldb === null) return [];
    const texts = ldb.read(
      (db) => ({
        blocked: linesOf(db, "SELECT line FROM blocked WHERE source = 'blocked' ORDER BY seq"),
        toxic: linesOf(db, "SELECT line FROM blocked WHERE source = 'toxic' ORDER BY seq"),
      }),
      { blocked: "", toxic: "" },
    );
    const entries: BlockedEntry[] = [];
    for (const [source, text] of [
      ["blocked.log", texts.blocked],
      [layer === "global" ? "toxic_bullets.log" : "toxic.log", texts.toxic],
    ] as const) {
      const { values, malformed } = parseJsonLines(text);
      const decoded = decodeBlockedEntries(values);
      entries.push(...decoded.entries);
      if (malformed + decoded.invalid > 0) logger.warn(`Skipped ${malformed + decoded.invalid} malformed line(s) in ${recordPath(ldb, source)}`);
    }
    return entries;
  }

  async function appendBlocked(layer: Layer, entries: BlockedEntry[]): Promise<void> {
    const ldb = requireDb(layer);
    const records = validateBlockedEntries(entries);
    if (records.length === 0) return;
    await ldb.write((db) => {
      const insert = db.prepare("INSERT INTO blocked (source, line) VALUES ('blocked', ?)");
      for (const record of records) insert.run(JSON.stringify(record));
      markFile(db, "blocked.log", nowIso());
    });
  }

  async function removeBlocked(layer: Layer, ids: readonly string[]): Promise<number> {
    const ldb = dbOf(layer);
    if (ldb === null || ids.length === 0 || !ldb.exists()) return 0;
    const drop = new Set(ids);
    return ldb.write((db) => {
      const rows = db.prepare("SELECT seq, line FROM blocked WHERE source = 'blocked' ORDER BY seq").all() as Array<{ seq: number; line: string }>;
      const doomed: number[] = [];
      const blank: number[] = [];
      for (const row of rows) {
        if (row.line.trim() === "") {
          blank.push(row.seq);
          continue;
        }
        try {
          const value = JSON.parse(row.line) as { id?: unknown } | null;
          if (value !== null && typeof value === "object" && typeof value.id === "string" && drop.has(value.id)) doomed.push(row.seq);
        } catch {
          // Lines that are not JSON are kept (reference §4.6).
        }
      }
      if (doomed.length === 0) return 0;
      const remove = db.prepare("DELETE FROM blocked WHERE seq = ?");
      for (const seq of [...doomed, ...blank]) remove.run(seq);
      return doomed.length;
    });
  }

  // -------------------------------------------------------------------------------------------
  // Logs

  async function appendLog(layer: Layer, log: LogName, records: unknown[]): Promise<void> {
    const ldb = requireDb(layer);
    if (records.length === 0) return;
    const lines = records.map((record) => JSON.stringify(record) ?? "");
    await ldb.write((db) => {
      const insert = db.prepare("INSERT INTO logs (log, line) VALUES (?, ?)");
      for (const line of lines) insert.run(log, line);
      markFile(db, LOG_FILES[log], nowIso());
    });
  }

  async function readLog(layer: Layer, log: LogName): Promise<LogReadResult> {
    const ldb = dbOf(layer);
    if (ldb === null) return { records: [], malformed: 0 };
    const text = ldb.read((db) => linesOf(db, "SELECT line FROM logs WHERE log = ? ORDER BY seq", log), "");
    const { values, malformed } = parseJsonLines(text);
    return { records: values, malformed };
  }

  async function updateLog(layer: Layer, log: LogName, fn: LogRecordUpdate): Promise<LogUpdateResult> {
    const ldb = dbOf(layer);
    if (ldb === null || !ldb.exists()) return { replaced: 0, removed: 0 };
    return ldb.write((db) => {
      const rows = db.prepare("SELECT seq, line FROM logs WHERE log = ? ORDER BY seq").all(log) as Array<{ seq: number; line: string }>;
      const replace = db.prepare("UPDATE logs SET line = ? WHERE seq = ?");
      const remove = db.prepare("DELETE FROM logs WHERE seq = ?");
      const blank: number[] = [];
      let replaced = 0;
      let removed = 0;
      for (const row of rows) {
        const update = updateLogLine(row.line, fn);
        if (update.action === "replace") {
          replace.run(update.line, row.seq);
          replaced++;
        } else if (update.action === "remove") {
          remove.run(row.seq);
          removed++;
        } else if (update.action === "drop-blank") blank.push(row.seq);
      }
      if (replaced + removed === 0) return { replaced, removed };
      for (const seq of blank) remove.run(seq);
      markFile(db, LOG_FILES[log], nowIso());
      return { replaced, removed };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Onboarding state and processed-sessions logs (global database)

  async function readOnboardingState(): Promise<OnboardingState | null> {
    const text = globalDb.read((db) => getDocument(db, ONBOARDING_STATE_FILE), null);
    if (text === null) return null;
    const state = decodeOnboardingState(text);
    if (state === null && text.trim() !== "") logger.debug(`Ignoring invalid onboarding state in ${recordPath(globalDb, ONBOARDING_STATE_FILE)}`);
    return state;
  }

  async function mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, mutateOptions?: { nowIso?: string }): Promise<T> {
    const where = recordPath(globalDb, ONBOARDING_STATE_FILE);
    return globalDb.write(async (db) => {
      const text = getDocument(db, ONBOARDING_STATE_FILE);
      let state = text === null ? null : decodeOnboardingState(text);
      if (state === null && text !== null && text.trim() !== "") {
        // Starting afresh, as the original does; the damaged state is kept aside first.
        let ms = Date.now();
        while (getDocument(db, `${ONBOARDING_STATE_FILE}.backup.${ms}`) !== null) ms += 1;
        const backup = `${ONBOARDING_STATE_FILE}.backup.${ms}`;
        putDocument(db, backup, text, nowIso());
        logger.warn(`Onboarding state ${where} was invalid; starting fresh (old state kept as ${recordPath(globalDb, backup)})`);
      }
      state ??= createOnboardingState(mutateOptions?.nowIso ?? nowIso());
      const result = await fn(state);
      putDocument(db, ONBOARDING_STATE_FILE, encodeOnboardingState(finalizeOnboardingState(state, where)), nowIso());
      markFile(db, ONBOARDING_STATE_FILE, nowIso());
      return result;
    });
  }

  async function appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void> {
    const file = processedLogFileName(log);
    const lines = encodeProcessedSessions(records);
    if (lines.length === 0) return;
    await globalDb.write((db) => {
      const insert = db.prepare("INSERT INTO processed_log (log, line) VALUES (?, ?)");
      const count = db.prepare("SELECT count(*) FROM processed_log WHERE log = ?").pluck().get(log) as number;
      // A new log starts with the header line the original writes.
      if (count === 0) insert.run(log, PROCESSED_LOG_HEADER);
      for (const line of lines) insert.run(log, line);
      markFile(db, `${PROCESSED_LOG_DIR}/${file}`, nowIso());
    });
  }

  async function readProcessedSessions(log: string): Promise<ProcessedSession[]> {
    const file = processedLogFileName(log);
    const text = globalDb.read((db) => linesOf(db, "SELECT line FROM processed_log WHERE log = ? ORDER BY seq", log), "");
    const { records, malformed } = decodeProcessedLog(text);
    if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${recordPath(globalDb, `${PROCESSED_LOG_DIR}/${file}`)}`);
    return records;
  }

  // -------------------------------------------------------------------------------------------
  // Diaries (global database)

  function decodeDiary(name: string, text: string): DiaryEntry | null {
    const decoded = decodeDiaryText(text, recordPath(globalDb, `diary/${name}.json`));
    if ("entry" in decoded) return decoded.entry;
    logger.warn(decoded.warning);
    return null;
  }

  async function writeDiary(entry: DiaryEntry): Promise<string> {
    const data = diaryEntryForWrite(entry);
    await globalDb.write((db) => {
      const seq = (db.prepare("SELECT coalesce(max(written_seq), 0) + 1 FROM diaries").pluck().get() as number) ?? 1;
      db.prepare(
        "INSERT INTO diaries (name, session_path, timestamp, written_seq, written_at, text) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO UPDATE SET session_path = excluded.session_path, timestamp = excluded.timestamp, written_seq = excluded.written_seq, written_at = excluded.written_at, text = excluded.text",
      ).run(data.id, data.sessionPath, data.timestamp, seq, nowIso(), JSON.stringify(data, null, 2));
    });
    return recordPath(globalDb, `diary/${data.id}.json`);
  }

  async function readDiary(id: string): Promise<DiaryEntry | null> {
    if (!DIARY_ID.test(id)) return null;
    const text = globalDb.read((db) => db.prepare("SELECT text FROM diaries WHERE name = ?").pluck().get(id) as string | undefined, undefined);
    return text === undefined ? null : decodeDiary(id, text);
  }

  async function listDiaries(listOptions: { sessionPath?: string; limit?: number } = {}): Promise<DiaryEntry[]> {
    const limit = listOptions.limit !== undefined ? Math.max(0, listOptions.limit) : Infinity;
    if (limit === 0) return [];
    const { sessionPath } = listOptions;
    const rows = globalDb.read(
      (db) =>
        (sessionPath === undefined
          ? db.prepare("SELECT name, text FROM diaries ORDER BY written_seq DESC, timestamp DESC").all()
          : db.prepare("SELECT name, text FROM diaries WHERE session_path = ? OR session_path IS NULL ORDER BY written_seq DESC, timestamp DESC").all(sessionPath)) as Array<{
          name: string;
          text: string;
        }>,
      [],
    );
    const found: DiaryEntry[] = [];
    for (const row of rows) {
      const entry = decodeDiary(row.name, row.text);
      if (entry === null || (sessionPath !== undefined && entry.sessionPath !== sessionPath)) continue;
      found.push(entry);
      if (found.length >= limit) break;
    }
    return found;
  }

  // -------------------------------------------------------------------------------------------
  // Costs (global database)

  const costs: CostLedger = {
    async totals(): Promise<CostTotals> {
      const text = globalDb.read((db) => getDocument(db, COST_TOTAL_DOC), null);
      return decodeCostTotals(text ?? undefined, now());
    },
    async record(entry: CostEntry): Promise<CostTotals> {
      return globalDb.write((db) => {
        const at = now();
        db.prepare("INSERT INTO cost_entries (month, line) VALUES (?, ?)").run(utcMonthKey(at), JSON.stringify(entry));
        const next = addCost(decodeCostTotals(getDocument(db, COST_TOTAL_DOC) ?? undefined, at), entry, at);
        putDocument(db, COST_TOTAL_DOC, JSON.stringify(next, null, 2), at.toISOString());
        markFile(db, `${COST_DIR}/${monthlyCostFile(at)}`, at.toISOString());
        markFile(db, COST_TOTAL_DOC, at.toISOString());
        return next;
      });
    },
  };

  // -------------------------------------------------------------------------------------------
  // Named locks: directories in <globalDir>/reflections/, shared with the YAML store and the original

  async function exclusive<T>(name: string, fn: () => Promise<T>, exclusiveOptions: { waitMs?: number } = {}): Promise<T> {
    return withNamedLock(join(globalDir, PROCESSED_LOG_DIR), name, fn, { ...dirLock, ...exclusiveOptions });
  }

  // -------------------------------------------------------------------------------------------
  // Layer status and initialisation

  function presentInDb(ldb: LayerDatabase): Set<string> {
    return ldb.read((db) => {
      const names = new Set(db.prepare("SELECT name FROM layer_files").pluck().all() as string[]);
      if (db.prepare("SELECT 1 FROM playbook WHERE id = 1").pluck().get() !== undefined) names.add("playbook.yaml");
      return names;
    }, new Set<string>());
  }

  async function layerStatus(layer: Layer): Promise<LayerStatus> {
    const expected: string[] = [...(layer === "global" ? GLOBAL_LAYER_FILES : REPO_LAYER_FILES)];
    const ldb = dbOf(layer);
    if (ldb === null) return { present: [], expected };
    const inDb = presentInDb(ldb);
    const present = expected.filter((name) => (name === "config.json" ? existsSync(configPath) : inDb.has(name)));
    return { present, expected };
  }

  /** A consistent copy of the database as `<db>.backup.<epoch-ms>`, taken while the caller holds the write lock. */
  function backupDatabase(ldb: LayerDatabase): string {
    let ms = Date.now();
    while (existsSync(`${ldb.path}.backup.${ms}`)) ms += 1;
    const target = `${ldb.path}.backup.${ms}`;
    // A second connection reads the last committed state (WAL: not blocked by our open write transaction).
    const reader = new Database(ldb.path, { fileMustExist: true, readonly: true });
    try {
      reader.prepare("VACUUM INTO ?").run(target);
    } finally {
      reader.close();
    }
    return target;
  }

  async function initialize(layer: Layer, init: InitializeOptions): Promise<InitializeResult> {
    const ldb = requireDb(layer);
    // An existing database that cannot be used (damaged, foreign, newer) stops everything before config.json is touched.
    ldb.read(() => undefined, undefined);
    const dir = layer === "global" ? globalDir : (repoDir as string);
    await mkdir(dir, { recursive: true });
    const result: InitializeResult = { created: [], existed: [], overwritten: [], backups: [] };
    if (layer === "global") {
      await withLock(
        configPath,
        async () => {
          const content = JSON.stringify(init.config ?? defaultConfig(), null, 2);
          if (!existsSync(configPath)) {
            await atomicWriteFile(configPath, content);
            result.created.push("config.json");
          } else if (init.overwrite) {
            const backup = await backupFile(configPath);
            result.backups.push({ file: configPath, backup });
            await atomicWriteFile(configPath, content);
            result.overwritten.push("config.json");
          } else {
            result.existed.push("config.json");
          }
        },
        dirLock,
      );
    }
    await initializeDatabase(layer, ldb, init, result);
    return result;
  }

  /** The database part of `initialize` (everything but config.json). */
  async function initializeDatabase(layer: Layer, ldb: LayerDatabase, init: InitializeOptions, result: InitializeResult): Promise<void> {
    // Global --force resets the playbook only (blocked.log and usage.jsonl are kept); repo resets both.
    const parts: Array<{ name: string; rewrite: boolean }> =
      layer === "global"
        ? [
            { name: "playbook.yaml", rewrite: true },
            { name: "blocked.log", rewrite: false },
            { name: "usage.jsonl", rewrite: false },
          ]
        : [
            { name: "playbook.yaml", rewrite: true },
            { name: "blocked.log", rewrite: true },
          ];
    const fresh = createEmptyPlaybook(init.nowIso, layer);
    await ldb.write((db) => {
      const present = presentInDb(ldb);
      const at = nowIso();
      const resetting = init.overwrite && parts.some((p) => p.rewrite && present.has(p.name));
      // One copy of the whole database before anything is reset, named in each reset part's backup.
      const backup = resetting ? backupDatabase(ldb) : null;
      for (const part of parts) {
        if (present.has(part.name) && !(init.overwrite && part.rewrite)) {
          result.existed.push(part.name);
          continue;
        }
        if (part.name === "playbook.yaml") {
          const revision = (db.prepare("SELECT revision FROM playbook WHERE id = 1").pluck().get() as number | undefined) ?? 0;
          clearStoredPlaybook(db);
          writeStoredPlaybook(db, { ...emptyStored(layer), revision }, fresh, at);
        } else if (part.name === "blocked.log" && present.has(part.name)) {
          db.prepare("DELETE FROM blocked WHERE source = 'blocked'").run();
        }
        markFile(db, part.name, at);
        if (present.has(part.name)) {
          result.overwritten.push(part.name);
          result.backups.push({ file: ldb.path, backup: backup as string });
        } else {
          result.created.push(part.name);
        }
      }
    });
  }

  // -------------------------------------------------------------------------------------------
  // Beyond the port

  async function searchBulletCandidates(layer: Layer, query: string, limit: number, searchOptions: CandidateSearchOptions = {}): Promise<BulletCandidate[]> {
    const ldb = dbOf(layer);
    if (ldb === null) return [];
    const rows = ldb.read((db) => searchCandidates(db, query, limit, searchOptions.activeOnly ?? false), []);
    const found: BulletCandidate[] = [];
    for (const row of rows) {
      const bullet = decodeBullet(row.body);
      if (bullet === null) logger.warn(`Skipping undecodable bullet row ${row.row} in ${ldb.path}`);
      else found.push({ bullet, score: row.score });
    }
    return found;
  }

  const candidates: BulletCandidateIndex = {
    async countBullets(layer) {
      const ldb = dbOf(layer);
      if (ldb === null) return 0;
      return ldb.read((db) => Number(db.prepare("SELECT count(*) FROM bullets").pluck().get()), 0);
    },
    async readCandidates(layer, query) {
      const ldb = dbOf(layer);
      if (ldb === null) return null;
      return ldb.read((db) => readCandidatePlaybook(db, ldb.path, layer, query), null);
    },
  };

  async function schemaVersion(layer: Layer): Promise<number | null> {
    const ldb = dbOf(layer);
    if (ldb === null) return null;
    return ldb.read((db) => Number(db.pragma("user_version", { simple: true })), null);
  }

  const diagnostics = createSqliteDiagnostics({
    globalDir,
    configPath,
    databases: { global: globalDb, repo: repoDb },
    logger,
    dirLock,
    createDatabase: (layer) =>
      initializeDatabase(layer, requireDb(layer), { overwrite: false, nowIso: nowIso() }, { created: [], existed: [], overwritten: [], backups: [] }),
  });

  return {
    locations,
    databases: { global: globalDb.path, repo: repoDb?.path ?? null },
    readPlaybook,
    // The index reads rows by id: a few bullets without the whole playbook.
    readBullets: (layer: Layer, ids: readonly string[]) => candidates.readCandidates(layer, { terms: [], limit: 0, ids }),
    mutatePlaybook,
    candidates,
    readJournal,
    readBlocked,
    appendBlocked,
    removeBlocked,
    appendLog,
    readLog,
    updateLog,
    readStarterFiles: (): Promise<StarterFile[]> => readStarterDir(globalDir, options.parseYaml),
    mutateConfigFile: (fn) => mutateConfigJson(configPath, fn, dirLock),
    readOnboardingState,
    mutateOnboardingState,
    appendProcessedSessions,
    readProcessedSessions,
    writeDiary,
    readDiary,
    listDiaries,
    costs,
    exclusive,
    layerStatus,
    initialize,
    transfer: createSqliteTransfer({ globalDb, repoDb, logger, logFiles: LOG_FILES }),
    diagnose: diagnostics.diagnose,
    applyFix: diagnostics.applyFix,
    searchBulletCandidates,
    schemaVersion,
    close() {
      globalDb.close();
      repoDb?.close();
    },
  };
}
