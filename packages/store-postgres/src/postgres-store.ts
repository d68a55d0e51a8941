import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
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
  MutationScope,
  MutationTx,
  OnboardingState,
  Playbook,
  ProcessedSession,
  StarterFile,
  Store,
  StoreLocations,
} from "@cass-memory/core";
import { atomicWriteFile, backupFile, crashPoint, DEFAULT_LOCK_TIMEOUT_MS, mutateConfigJson, readStarterDir, withLock, type LockOptions, type YamlParser } from "@cass-memory/node-files";
import { searchCandidates } from "./candidate-search.js";
import { CHANGE_CHANNEL, PgDatabase, pgFailure, pgText, type Sql } from "./database.js";
import { clearStoredPlaybook, decodeCandidates, emptyStored, readStoredPlaybook, readStoredSubset, writeScopedChanges, writeStoredPlaybook } from "./playbook-rows.js";
import { ChangeListener } from "./listener.js";
import { createPostgresTransfer } from "./transfer.js";

/** Names `layerStatus` reports: the original's files whose content each layer holds. */
export const GLOBAL_LAYER_FILES = ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"] as const;
export const REPO_LAYER_FILES = ["playbook.yaml", "blocked.log"] as const;

export const LOG_FILES: Readonly<Record<LogName, string>> = {
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
  "reflection-runs": "reflection-runs.jsonl",
};

/** The default key of the global layer's rows, shared by everyone using the database. */
export const GLOBAL_SPACE = "global";
export const DEFAULT_SCHEMA = "cass_memory";
export { CHANGE_CHANNEL };

const LOCK_NAME = /^[A-Za-z0-9._-]+$/;
const COST_TOTAL_DOC = `${COST_DIR}/${COST_TOTAL_FILE}`;
const MAX_SPACE_LENGTH = 1_000;

export interface PostgresStoreOptions {
  /** Connection URL (`postgres://user:password@host:port/database`); never shown with its password. */
  url: string;
  /** The global data directory: `config.json` and custom starters stay files there (per machine). */
  globalDir: string;
  /** `<git root>/.cass`, or null outside a git repository (the repo layer then does not exist). */
  repoDir: string | null;
  /**
   * The key of this repository's rows (default `repo:<repoDir>`). Machines that share a
   * repository's memory must use the same key (the runtime derives it from the git remote).
   */
  repoSpace?: string;
  /** The key of the global layer's rows (default `global`). */
  globalSpace?: string;
  /** PostgreSQL schema of the tables (default `cass_memory`). */
  schema?: string;
  logger: Logger;
  /** `timeoutMs` (default 10 s): how long a write waits for another writer of the layer, and `exclusive`'s default wait. */
  lock?: { timeoutMs?: number; staleMs?: number };
  /** How long connecting may take (default 5 s). */
  connectTimeoutMs?: number;
  /** The clock of the cost ledger's buckets (default: the system clock). */
  now?: () => Date;
  parseYaml?: YamlParser;
  /**
   * Keep the last playbook read of each layer (long-running processes): while a dedicated
   * connection LISTENs for change notifications it is used without asking the database; while
   * that connection is down, as long as the layer's revision is unchanged.
   */
  memoizeReads?: boolean;
  /** With memoizeReads: listen for other processes' writes (default true); false checks the revision on every read. */
  listen?: boolean;
}

export interface PostgresStore extends Store {
  readonly candidates: BulletCandidateIndex;
  /** The database as shown to people (no password), and the space key of each layer. */
  readonly database: { url: string; schema: string; spaces: { global: string; repo: string | null } };
  /** The schema version of the database (null when the tables were never created). */
  schemaVersion(): Promise<number | null>;
  /**
   * A number that grows with every committed write to the layer, on any machine: a long-running
   * process compares it to see others' writes (one indexed read). 0 when nothing was written.
   */
  changeCounter(layer: Layer): Promise<number>;
  /** The change listener's state (memoizeReads): whether it is connected, and its server process id. */
  changeListener(): { live: boolean; backendPid: number | null } | null;
  /** Checks that the server answers (connects, runs the migrations); throws NETWORK_ERROR when it cannot. */
  ping(): Promise<void>;
  /** True when the space holds any row (a playbook, bullets, journal, logs, …). */
  spaceHoldsData(space: string): Promise<boolean>;
  /**
   * Renames the rows of each `from` space to its `to` space in one transaction (a staged migration
   * becomes live at once, or not at all). A `to` space that holds data is refused (CONFIG_INVALID);
   * the new space's revision and change counter continue above both, so memoized readers re-read.
   */
  renameSpaces(moves: ReadonlyArray<{ from: string; to: string }>): Promise<void>;
  /** Removes every row of the space (a discarded staging area). */
  dropSpace(space: string): Promise<void>;
  close(): Promise<void>;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value as Record<string, unknown>)) deepFreeze(child);
  }
  return value;
}

function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", { hint: "cd into a git repository first" });
}

function checkSpace(space: string): string {
  if (space.length === 0 || space.length > MAX_SPACE_LENGTH) throw new AppError("CONFIG_INVALID", `Invalid storage space key (length ${space.length})`);
  return space;
}

async function markFile(sql: Sql, space: string, name: string, at: string): Promise<void> {
  await sql.query("INSERT INTO cm_layer_files (space, name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [space, name, at]);
}

async function getDocument(sql: Sql, space: string, name: string): Promise<string | null> {
  const result = await sql.query("SELECT text FROM cm_documents WHERE space = $1 AND name = $2", [space, name]);
  return (result.rows[0]?.text as string | undefined) ?? null;
}

async function putDocument(sql: Sql, space: string, name: string, text: string, at: string): Promise<void> {
  await sql.query(
    "INSERT INTO cm_documents (space, name, text, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (space, name) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
    [space, name, text, at],
  );
}

/** The first column of `rows` (one text line each), joined as a JSONL text. */
function joinLines(rows: unknown[][]): string {
  return rows.map((r) => r[0] as string).join("\n");
}

async function lines(sql: Sql, text: string, values: unknown[]): Promise<string> {
  return joinLines((await sql.query({ text, values, rowMode: "array" })).rows as unknown[][]);
}

/**
 * The store over PostgreSQL: every record of the Store port in one database shared by a team's
 * machines, each layer's rows under its space key. Writes of a layer run in a transaction holding
 * that layer's row lock; reads see one consistent snapshot. `config.json` and starters stay files.
 */
export function createPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const { globalDir, repoDir, logger } = options;
  const now = options.now ?? (() => new Date());
  const lockTimeoutMs = options.lock?.timeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
  const dirLock: LockOptions = { timeoutMs: lockTimeoutMs, ...(options.lock?.staleMs !== undefined ? { staleMs: options.lock.staleMs } : {}), logger };
  const db = new PgDatabase({
    url: options.url,
    schema: options.schema ?? DEFAULT_SCHEMA,
    logger,
    lockTimeoutMs,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    // A one-shot command runs its transactions one at a time on one connection; a long-running
    // process (memoizeReads: `cm serve`, the MCP server) serves several clients at once.
    concurrentTransactions: options.memoizeReads ? 4 : 1,
  });
  db.warm();
  const globalSpace = checkSpace(options.globalSpace ?? GLOBAL_SPACE);
  const repoSpace = repoDir === null ? null : checkSpace(options.repoSpace ?? `repo:${repoDir}`);
  const where = (space: string): string => `${db.where}#${space}`;
  const locations: StoreLocations = {
    globalDir,
    globalPlaybook: where(globalSpace),
    repoDir,
    repoPlaybook: repoSpace === null ? null : where(repoSpace),
  };
  const configPath = join(globalDir, "config.json");
  const spaceOf = (layer: Layer): string | null => (layer === "global" ? globalSpace : repoSpace);
  function requireSpace(layer: Layer): string {
    const space = spaceOf(layer);
    if (space === null) throw notInRepo();
    return space;
  }
  const recordPath = (space: string, name: string): string => `${where(space)}/${name}`;
  const nowIso = (): string => new Date().toISOString();

  // -------------------------------------------------------------------------------------------
  // Playbook

  /**
   * The last playbook read of each layer (memoizeReads). It is used without asking the database
   * while the change listener is live, was live when the entry was read (same epoch) and nothing
   * was announced or written here since (same generation); otherwise the layer's revision is read
   * first (one indexed query) and the entry kept when it is unchanged.
   */
  const memo = new Map<Layer, { revision: number; playbook: Playbook; generation: number; epoch: number }>();
  /** Grows with every change notification and every write of this store. */
  let generation = 0;
  const listener =
    options.memoizeReads && options.listen !== false
      ? new ChangeListener({
          url: options.url,
          channel: CHANGE_CHANNEL,
          logger,
          connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
          onChange: () => void (generation += 1),
        })
      : null;
  // After a write of this store the memo is stale (its own notification may come after its next read).
  db.afterWrite = () => void (generation += 1);

  async function readPlaybook(layer: Layer): Promise<Playbook | null> {
    const space = spaceOf(layer);
    if (space === null) return null;
    if (options.memoizeReads) {
      listener?.start();
      const hit = memo.get(layer);
      if (hit !== undefined && listener?.live === true && hit.epoch === listener.epoch && hit.generation === generation) return hit.playbook;
      // Taken before the read's snapshot: a write the snapshot misses is announced after this.
      const seenGeneration = generation;
      const seenEpoch = listener?.live === true ? listener.epoch : -1;
      return db.read(async (sql) => {
        const result = await sql.query("SELECT revision, playbook IS NOT NULL AS has FROM cm_spaces WHERE space = $1", [space]);
        const row = result.rows[0] as { revision: number; has: boolean } | undefined;
        if (row?.has && hit !== undefined && hit.revision === row.revision) {
          memo.set(layer, { ...hit, generation: seenGeneration, epoch: seenEpoch });
          return hit.playbook;
        }
        const stored = await readStoredPlaybook(sql, space, where(space));
        if (stored === null) {
          memo.delete(layer);
          return null;
        }
        const frozen = deepFreeze(stored.playbook);
        memo.set(layer, { revision: stored.revision, playbook: frozen, generation: seenGeneration, epoch: seenEpoch });
        return frozen;
      });
    }
    return db.read(async (sql) => (await readStoredPlaybook(sql, space, where(space)))?.playbook ?? null);
  }

  async function mutatePlaybook<T>(layer: Layer, fn: (playbook: Playbook, tx: MutationTx) => T | Promise<T>, scope?: MutationScope): Promise<T> {
    const space = requireSpace(layer);
    return db.write(space, async (sql, tx) => {
      const read =
        scope?.bulletIds !== undefined ? await readStoredSubset(sql, space, where(space), scope.bulletIds) : await readStoredPlaybook(sql, space, where(space));
      const stored = read ?? emptyStored(layer);
      const queued: JournalEvent[] = [];
      const rewrites: Array<[string, (event: JournalEvent) => JournalEvent]> = [];
      const value = await fn(stored.playbook, {
        journal: (events) => void queued.push(...events),
        rewriteJournal: (bulletId, map) => void rewrites.push([bulletId, map]),
      });
      const checked = validatePlaybookForWrite(stored.playbook, where(space));
      const events = checkJournalEventsForWrite(queued);
      const at = nowIso();
      const journalRows = events.map((e) => ({ bulletId: pgText(e.bulletId), timestamp: pgText(e.timestamp), event: JSON.stringify(e) }));
      // The usual scoped change (feedback on known rules): everything in one statement.
      if (read !== null && rewrites.length === 0 && (await writeScopedChanges(sql, space, stored, checked, at, journalRows, CHANGE_CHANNEL))) {
        tx.counted();
        crashPoint("postgres:after-playbook-rows");
        crashPoint("postgres:after-journal-rows");
        return value;
      }
      await writeStoredPlaybook(sql, space, stored, checked, at);
      // A stored playbook was marked when it was first written.
      if (read === null) await markFile(sql, space, "playbook.yaml", at);
      crashPoint("postgres:after-playbook-rows");
      if (events.length > 0) {
        // Same transaction as the playbook: the journal and the playbook never disagree.
        await sql.query("INSERT INTO cm_journal (space, bullet_id, timestamp, event) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])", [
          space,
          journalRows.map((e) => e.bulletId),
          journalRows.map((e) => e.timestamp),
          journalRows.map((e) => e.event),
        ]);
      }
      crashPoint("postgres:after-journal-rows");
      for (const [bulletId, map] of rewrites) {
        const rows = (await sql.query("SELECT seq, event FROM cm_journal WHERE space = $1 AND bullet_id = $2", [space, pgText(bulletId)])).rows as Array<{
          seq: number;
          event: string;
        }>;
        for (const row of rows) {
          let event: JournalEvent;
          try {
            event = JSON.parse(row.event) as JournalEvent;
          } catch {
            continue;
          }
          const next = map(event);
          if (next !== event) await sql.query("UPDATE cm_journal SET event = $1 WHERE seq = $2", [JSON.stringify(next), row.seq]);
        }
      }
      return value;
    });
  }

  async function readJournal(layer: Layer): Promise<JournalEvent[]> {
    const space = spaceOf(layer);
    if (space === null) return [];
    const texts = (await db.query("SELECT event FROM cm_journal WHERE space = $1 ORDER BY seq", [space])) as Array<[string]>;
    const events: JournalEvent[] = [];
    let invalid = 0;
    for (const [line] of texts) {
      try {
        const parsed = JournalEventSchema.safeParse(JSON.parse(line));
        if (parsed.success) events.push(parsed.data);
        else invalid += 1;
      } catch {
        invalid += 1;
      }
    }
    if (invalid > 0) logger.warn(`Skipped ${invalid} malformed event(s) in ${recordPath(space, "events.jsonl")}`);
    return events;
  }

  // -------------------------------------------------------------------------------------------
  // Blocked entries

  async function readBlocked(layer: Layer): Promise<BlockedEntry[]> {
    const space = spaceOf(layer);
    if (space === null) return [];
    const rows = (await db.query("SELECT source, line FROM cm_blocked WHERE space = $1 AND source IN ('blocked', 'toxic') ORDER BY seq", [space])) as Array<[string, string]>;
    const textOf = (wanted: string): string => rows.flatMap(([source, line]) => (source === wanted ? [line] : [])).join("\n");
    const texts = { blocked: textOf("blocked"), toxic: textOf("toxic") };
    const entries: BlockedEntry[] = [];
    for (const [source, text] of [
      ["blocked.log", texts.blocked],
      [layer === "global" ? "toxic_bullets.log" : "toxic.log", texts.toxic],
    ] as const) {
      const { values, malformed } = parseJsonLines(text);
      const decoded = decodeBlockedEntries(values);
      entries.push(...decoded.entries);
      if (malformed + decoded.invalid > 0) logger.warn(`Skipped ${malformed + decoded.invalid} malformed line(s) in ${recordPath(space, source)}`);
    }
    return entries;
  }

  async function appendBlocked(layer: Layer, entries: BlockedEntry[]): Promise<void> {
    const space = requireSpace(layer);
    const records = validateBlockedEntries(entries);
    if (records.length === 0) return;
    await db.write(space, async (sql) => {
      await sql.query("INSERT INTO cm_blocked (space, source, line) SELECT $1, 'blocked', unnest($2::text[])", [space, records.map((r) => JSON.stringify(r))]);
      await markFile(sql, space, "blocked.log", nowIso());
    });
  }

  async function removeBlocked(layer: Layer, ids: readonly string[]): Promise<number> {
    const space = spaceOf(layer);
    if (space === null || ids.length === 0) return 0;
    const drop = new Set(ids);
    return db.write(space, async (sql) => {
      const rows = (await sql.query("SELECT seq, line FROM cm_blocked WHERE space = $1 AND source = 'blocked' ORDER BY seq", [space])).rows as Array<{ seq: number; line: string }>;
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
          // Lines that are not JSON are kept.
        }
      }
      if (doomed.length === 0) return 0;
      await sql.query("DELETE FROM cm_blocked WHERE seq = ANY($1::bigint[])", [[...doomed, ...blank]]);
      return doomed.length;
    });
  }

  // -------------------------------------------------------------------------------------------
  // Logs

  async function appendLog(layer: Layer, log: LogName, records: unknown[]): Promise<void> {
    const space = requireSpace(layer);
    if (records.length === 0) return;
    const texts = records.map((record) => JSON.stringify(record) ?? "");
    await db.write(space, async (sql) => {
      await sql.query("INSERT INTO cm_logs (space, log, line) SELECT $1, $2, unnest($3::text[])", [space, log, texts]);
      await markFile(sql, space, LOG_FILES[log], nowIso());
    });
  }

  async function readLog(layer: Layer, log: LogName): Promise<LogReadResult> {
    const space = spaceOf(layer);
    if (space === null) return { records: [], malformed: 0 };
    const text = joinLines(await db.query("SELECT line FROM cm_logs WHERE space = $1 AND log = $2 ORDER BY seq", [space, log]));
    const { values, malformed } = parseJsonLines(text);
    return { records: values, malformed };
  }

  async function updateLog(layer: Layer, log: LogName, fn: LogRecordUpdate): Promise<LogUpdateResult> {
    const space = spaceOf(layer);
    if (space === null) return { replaced: 0, removed: 0 };
    return db.write(space, async (sql) => {
      const rows = (await sql.query("SELECT seq, line FROM cm_logs WHERE space = $1 AND log = $2 ORDER BY seq", [space, log])).rows as Array<{ seq: number; line: string }>;
      const replacements: Array<[number, string]> = [];
      const removals: number[] = [];
      const blank: number[] = [];
      for (const row of rows) {
        const update = updateLogLine(row.line, fn);
        if (update.action === "replace") replacements.push([row.seq, update.line]);
        else if (update.action === "remove") removals.push(row.seq);
        else if (update.action === "drop-blank") blank.push(row.seq);
      }
      if (replacements.length + removals.length === 0) return { replaced: 0, removed: 0 };
      if (replacements.length > 0) {
        await sql.query("UPDATE cm_logs l SET line = u.line FROM unnest($1::bigint[], $2::text[]) AS u(seq, line) WHERE l.seq = u.seq", [
          replacements.map((r) => r[0]),
          replacements.map((r) => r[1]),
        ]);
      }
      await sql.query("DELETE FROM cm_logs WHERE seq = ANY($1::bigint[])", [[...removals, ...blank]]);
      await markFile(sql, space, LOG_FILES[log], nowIso());
      return { replaced: replacements.length, removed: removals.length };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Onboarding state and processed-sessions logs (global layer)

  async function readOnboardingState(): Promise<OnboardingState | null> {
    const text = await db.read((sql) => getDocument(sql, globalSpace, ONBOARDING_STATE_FILE));
    if (text === null) return null;
    const state = decodeOnboardingState(text);
    if (state === null && text.trim() !== "") logger.debug(`Ignoring invalid onboarding state in ${recordPath(globalSpace, ONBOARDING_STATE_FILE)}`);
    return state;
  }

  async function mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, mutateOptions?: { nowIso?: string }): Promise<T> {
    const at = recordPath(globalSpace, ONBOARDING_STATE_FILE);
    return db.write(globalSpace, async (sql) => {
      const text = await getDocument(sql, globalSpace, ONBOARDING_STATE_FILE);
      let state = text === null ? null : decodeOnboardingState(text);
      if (state === null && text !== null && text.trim() !== "") {
        let ms = Date.now();
        while ((await getDocument(sql, globalSpace, `${ONBOARDING_STATE_FILE}.backup.${ms}`)) !== null) ms += 1;
        const backup = `${ONBOARDING_STATE_FILE}.backup.${ms}`;
        await putDocument(sql, globalSpace, backup, text, nowIso());
        logger.warn(`Onboarding state ${at} was invalid; starting fresh (old state kept as ${recordPath(globalSpace, backup)})`);
      }
      state ??= createOnboardingState(mutateOptions?.nowIso ?? nowIso());
      const result = await fn(state);
      await putDocument(sql, globalSpace, ONBOARDING_STATE_FILE, encodeOnboardingState(finalizeOnboardingState(state, at)), nowIso());
      await markFile(sql, globalSpace, ONBOARDING_STATE_FILE, nowIso());
      return result;
    });
  }

  async function appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void> {
    const file = processedLogFileName(log);
    const encoded = encodeProcessedSessions(records);
    if (encoded.length === 0) return;
    await db.write(globalSpace, async (sql) => {
      const count = (await sql.query("SELECT count(*) AS n FROM cm_processed_log WHERE space = $1 AND log = $2", [globalSpace, log])).rows[0]?.n as number;
      const all = count === 0 ? [PROCESSED_LOG_HEADER, ...encoded] : encoded;
      await sql.query("INSERT INTO cm_processed_log (space, log, line) SELECT $1, $2, unnest($3::text[])", [globalSpace, log, all]);
      await markFile(sql, globalSpace, `${PROCESSED_LOG_DIR}/${file}`, nowIso());
    });
  }

  async function readProcessedSessions(log: string): Promise<ProcessedSession[]> {
    const file = processedLogFileName(log);
    const text = joinLines(await db.query("SELECT line FROM cm_processed_log WHERE space = $1 AND log = $2 ORDER BY seq", [globalSpace, log]));
    const { records, malformed } = decodeProcessedLog(text);
    if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${recordPath(globalSpace, `${PROCESSED_LOG_DIR}/${file}`)}`);
    return records;
  }

  // -------------------------------------------------------------------------------------------
  // Diaries (global layer)

  function decodeDiary(name: string, text: string): DiaryEntry | null {
    const decoded = decodeDiaryText(text, recordPath(globalSpace, `diary/${name}.json`));
    if ("entry" in decoded) return decoded.entry;
    logger.warn(decoded.warning);
    return null;
  }

  async function writeDiary(entry: DiaryEntry): Promise<string> {
    const data = diaryEntryForWrite(entry);
    await db.write(globalSpace, async (sql) => {
      const seq = ((await sql.query("SELECT coalesce(max(written_seq), 0) + 1 AS n FROM cm_diaries WHERE space = $1", [globalSpace])).rows[0]?.n as number) ?? 1;
      await sql.query(
        `INSERT INTO cm_diaries (space, name, session_path, timestamp, written_seq, written_at, text) VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (space, name) DO UPDATE SET session_path = excluded.session_path, timestamp = excluded.timestamp,
           written_seq = excluded.written_seq, written_at = excluded.written_at, text = excluded.text`,
        [globalSpace, data.id, pgText(data.sessionPath), pgText(data.timestamp), seq, nowIso(), JSON.stringify(data, null, 2)],
      );
    });
    return recordPath(globalSpace, `diary/${data.id}.json`);
  }

  async function readDiary(id: string): Promise<DiaryEntry | null> {
    if (!DIARY_ID.test(id)) return null;
    const text = await db.read(async (sql) => (await sql.query("SELECT text FROM cm_diaries WHERE space = $1 AND name = $2", [globalSpace, id])).rows[0]?.text as string | undefined);
    return text === undefined ? null : decodeDiary(id, text);
  }

  async function listDiaries(listOptions: { sessionPath?: string; limit?: number } = {}): Promise<DiaryEntry[]> {
    const limit = listOptions.limit !== undefined ? Math.max(0, listOptions.limit) : Infinity;
    if (limit === 0) return [];
    const { sessionPath } = listOptions;
    const rows = await db.read(async (sql) =>
      sessionPath === undefined
        ? ((await sql.query("SELECT name, text FROM cm_diaries WHERE space = $1 ORDER BY written_seq DESC, timestamp DESC", [globalSpace])).rows as Array<{ name: string; text: string }>)
        : ((
            await sql.query("SELECT name, text FROM cm_diaries WHERE space = $1 AND (session_path = $2 OR session_path IS NULL) ORDER BY written_seq DESC, timestamp DESC", [
              globalSpace,
              pgText(sessionPath),
            ])
          ).rows as Array<{ name: string; text: string }>),
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
  // Costs (global layer)

  const costs: CostLedger = {
    async totals(): Promise<CostTotals> {
      const text = await db.read((sql) => getDocument(sql, globalSpace, COST_TOTAL_DOC));
      return decodeCostTotals(text ?? undefined, now());
    },
    async record(entry: CostEntry): Promise<CostTotals> {
      return db.write(globalSpace, async (sql) => {
        const at = now();
        await sql.query("INSERT INTO cm_cost_entries (space, month, line) VALUES ($1, $2, $3)", [globalSpace, utcMonthKey(at), JSON.stringify(entry)]);
        const next = addCost(decodeCostTotals((await getDocument(sql, globalSpace, COST_TOTAL_DOC)) ?? undefined, at), entry, at);
        await putDocument(sql, globalSpace, COST_TOTAL_DOC, JSON.stringify(next, null, 2), at.toISOString());
        await markFile(sql, globalSpace, `${COST_DIR}/${monthlyCostFile(at)}`, at.toISOString());
        await markFile(sql, globalSpace, COST_TOTAL_DOC, at.toISOString());
        return next;
      });
    },
  };

  // -------------------------------------------------------------------------------------------
  // Named locks: session-level advisory locks, held across machines, freed when a holder dies

  async function exclusive<T>(name: string, fn: () => Promise<T>, exclusiveOptions: { waitMs?: number } = {}): Promise<T> {
    if (!LOCK_NAME.test(name)) throw new AppError("INTERNAL_ERROR", `Invalid lock name: ${JSON.stringify(name)}`);
    const waitMs = Math.max(0, exclusiveOptions.waitMs ?? lockTimeoutMs);
    const key = `${globalSpace}/lock/${name}`;
    const client = await db.session();
    let broken = false;
    let held = false;
    try {
      const deadline = Date.now() + waitMs;
      for (let delay = 5; ; delay = Math.min(delay * 2, 100)) {
        const got = (await client.query("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [key])).rows[0]?.ok === true;
        if (got) break;
        if (Date.now() >= deadline) {
          throw new AppError("LOCK_ACQUISITION_FAILED", `Could not acquire the lock "${name}" within ${waitMs} ms (${db.where})`, {
            hint: "Another cm process on some machine holds it; wait for it to finish and retry.",
            details: { lock: name, database: db.where },
            retryable: true,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
      held = true;
      return await fn();
    } catch (error) {
      // fn's own errors pass through; failures of the lock queries become AppErrors.
      throw held ? error : pgFailure(error, options.url);
    } finally {
      if (held) {
        try {
          await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
        } catch {
          broken = true;
        }
      }
      client.release(broken);
    }
  }

  // -------------------------------------------------------------------------------------------
  // Layer status and initialisation

  async function presentIn(sql: Sql, space: string): Promise<Set<string>> {
    const names = new Set(((await sql.query("SELECT name FROM cm_layer_files WHERE space = $1", [space])).rows as Array<{ name: string }>).map((r) => r.name));
    const head = (await sql.query("SELECT playbook IS NOT NULL AS has FROM cm_spaces WHERE space = $1", [space])).rows[0] as { has: boolean } | undefined;
    if (head?.has) names.add("playbook.yaml");
    return names;
  }

  async function layerStatus(layer: Layer): Promise<LayerStatus> {
    const expected: string[] = [...(layer === "global" ? GLOBAL_LAYER_FILES : REPO_LAYER_FILES)];
    const space = spaceOf(layer);
    if (space === null) return { present: [], expected };
    const inDb = await db.read((sql) => presentIn(sql, space));
    const present = expected.filter((name) => (name === "config.json" ? existsSync(configPath) : inDb.has(name)));
    return { present, expected };
  }

  async function initialize(layer: Layer, init: InitializeOptions): Promise<InitializeResult> {
    const space = requireSpace(layer);
    // An unreachable or newer database stops everything before config.json is touched.
    await db.ensureSchema();
    const result: InitializeResult = { created: [], existed: [], overwritten: [], backups: [] };
    if (layer === "global") {
      await mkdir(globalDir, { recursive: true });
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
    await db.write(space, async (sql) => {
      const present = await presentIn(sql, space);
      const at = nowIso();
      const resetting = init.overwrite && parts.some((p) => p.rewrite && present.has(p.name));
      // Before a reset, the layer's playbook and blocked log are kept as documents in the database.
      let backup: string | null = null;
      if (resetting) {
        const stored = await readStoredPlaybook(sql, space, where(space)).catch(() => null);
        const blocked = await lines(sql, "SELECT line FROM cm_blocked WHERE space = $1 AND source = 'blocked' ORDER BY seq", [space]);
        let ms = Date.now();
        while ((await getDocument(sql, space, `backup.${ms}`)) !== null) ms += 1;
        await putDocument(sql, space, `backup.${ms}`, JSON.stringify({ playbook: stored?.playbook ?? null, blocked }), at);
        backup = `${where(space)}.backup.${ms}`;
      }
      for (const part of parts) {
        if (present.has(part.name) && !(init.overwrite && part.rewrite)) {
          result.existed.push(part.name);
          continue;
        }
        if (part.name === "playbook.yaml") {
          const revision = ((await sql.query("SELECT revision FROM cm_spaces WHERE space = $1", [space])).rows[0]?.revision as number | undefined) ?? 0;
          await clearStoredPlaybook(sql, space);
          await writeStoredPlaybook(sql, space, { ...emptyStored(layer), revision }, fresh, at);
        } else if (part.name === "blocked.log" && present.has(part.name)) {
          await sql.query("DELETE FROM cm_blocked WHERE space = $1 AND source = 'blocked'", [space]);
        }
        await markFile(sql, space, part.name, at);
        if (present.has(part.name)) {
          result.overwritten.push(part.name);
          result.backups.push({ file: where(space), backup: backup as string });
        } else {
          result.created.push(part.name);
        }
      }
    });
    return result;
  }

  // -------------------------------------------------------------------------------------------
  // Candidates (tsvector + GIN)

  const candidates: BulletCandidateIndex = {
    async countBullets(layer) {
      const space = spaceOf(layer);
      if (space === null) return 0;
      // The count the search table's triggers keep (one indexed row, not a scan of the layer).
      return Number((await db.query("SELECT df FROM cm_terms WHERE space = $1 AND lexeme = '' AND weight = '*'", [space]))[0]?.[0] ?? 0);
    },
    async readCandidates(layer, query) {
      const space = spaceOf(layer);
      if (space === null) return null;
      return db.read(async (sql) => {
        const head = (await sql.query("SELECT playbook FROM cm_spaces WHERE space = $1", [space])).rows[0] as { playbook: string | null } | undefined;
        if (head === undefined || head.playbook === null) return null;
        const rows = await searchCandidates(sql, space, query);
        return decodeCandidates(
          where(space),
          head.playbook,
          rows.map((r) => [r.row, r.pos, r.id, r.body]),
        );
      });
    },
  };

  async function changeCounter(layer: Layer): Promise<number> {
    const space = spaceOf(layer);
    if (space === null) return 0;
    return Number((await db.query("SELECT changes FROM cm_spaces WHERE space = $1", [space]))[0]?.[0] ?? 0);
  }

  const DATA_TABLES = ["cm_layer_files", "cm_bullets", "cm_journal", "cm_blocked", "cm_logs", "cm_processed_log", "cm_diaries", "cm_documents", "cm_cost_entries"];

  async function holdsData(sql: Sql, space: string): Promise<boolean> {
    const head = (await sql.query("SELECT playbook IS NOT NULL AS has FROM cm_spaces WHERE space = $1", [space])).rows[0] as { has: boolean } | undefined;
    if (head?.has) return true;
    for (const table of DATA_TABLES) {
      if ((await sql.query(`SELECT 1 FROM ${table} WHERE space = $1 LIMIT 1`, [space])).rows.length > 0) return true;
    }
    return false;
  }

  async function renameSpaces(moves: ReadonlyArray<{ from: string; to: string }>): Promise<void> {
    if (moves.length === 0) return;
    const first = moves[0] as { from: string; to: string };
    await db.write(first.to, async (sql) => {
      // Lock every row involved, in one order, so two renames cannot deadlock.
      const spaces = [...new Set(moves.flatMap((m) => [m.from, m.to]))].sort();
      for (const space of spaces) await sql.query("INSERT INTO cm_spaces (space) VALUES ($1) ON CONFLICT (space) DO NOTHING", [space]);
      await sql.query("SELECT 1 FROM cm_spaces WHERE space = ANY($1::text[]) ORDER BY space FOR UPDATE", [spaces]);
      for (const move of moves) {
        if (await holdsData(sql, move.to)) {
          throw new AppError("CONFIG_INVALID", `The database ${db.where} already holds data for ${move.to}; nothing was changed.`, {
            hint: "Another machine moved its memory into this database first: use it as it is (storage.backend \"postgres\") and bring rules over with 'cm playbook export' / 'cm playbook import'.",
            details: { database: db.where, space: move.to },
          });
        }
        const counters = (await sql.query("SELECT coalesce(max(revision), 0) AS r, coalesce(max(changes), 0) AS c FROM cm_spaces WHERE space = ANY($1::text[])", [[move.from, move.to]])).rows[0] as {
          r: number;
          c: number;
        };
        await sql.query("DELETE FROM cm_spaces WHERE space = $1", [move.to]);
        await sql.query("UPDATE cm_spaces SET space = $2, revision = $3, changes = $4 WHERE space = $1", [move.from, move.to, counters.r + 1, counters.c + 1]);
        for (const table of DATA_TABLES) await sql.query(`UPDATE ${table} SET space = $2 WHERE space = $1`, [move.from, move.to]);
        await sql.query("SELECT pg_notify($1, $2)", [CHANGE_CHANNEL, move.to]);
      }
      // db.write counts a change of the first target once more at commit: harmless (counters only grow).
      await sql.query("INSERT INTO cm_spaces (space) VALUES ($1) ON CONFLICT (space) DO NOTHING", [first.to]);
    });
  }

  async function dropSpace(space: string): Promise<void> {
    await db.write(space, async (sql) => {
      for (const table of DATA_TABLES) await sql.query(`DELETE FROM ${table} WHERE space = $1`, [space]);
      await sql.query("UPDATE cm_spaces SET playbook = NULL WHERE space = $1", [space]);
      await sql.query("DELETE FROM cm_terms WHERE space = $1", [space]);
    });
  }

  return {
    locations,
    spaceHoldsData: (space) => db.read((sql) => holdsData(sql, space)),
    renameSpaces,
    dropSpace,
    database: { url: db.where, schema: db.schema, spaces: { global: globalSpace, repo: repoSpace } },
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
    transfer: createPostgresTransfer({ db, spaces: { global: globalSpace, repo: repoSpace }, logger, logFiles: LOG_FILES, where }),
    schemaVersion: () => db.schemaVersion(),
    changeCounter,
    changeListener: () => (listener === null ? null : { live: listener.live, backendPid: listener.backendPid }),
    ping: () => db.ensureSchema(),
    close: async () => {
      await listener?.close();
      await db.close();
    },
  };
}
