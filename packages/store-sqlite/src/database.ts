import { AsyncLocalStorage } from "node:async_hooks";
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { AppError, isAppError } from "@cass-memory/core";
import type { Layer, Logger } from "@cass-memory/core";
import { APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION } from "./schema.js";

export type Db = Database.Database;

/** `synchronous` pragma: FULL syncs the WAL at every commit, NORMAL only at checkpoints. */
export type SynchronousMode = "full" | "normal";

export interface LayerDatabaseOptions {
  path: string;
  layer: Layer;
  logger: Logger;
  /** SQLite's own wait on a locked database, for statements that cannot be retried asynchronously. */
  busyTimeoutMs: number;
  /** How long a writer waits for the write lock before LOCK_ACQUISITION_FAILED. */
  lockTimeoutMs: number;
  synchronous: SynchronousMode;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function isSqliteError(error: unknown): error is InstanceType<typeof Database.SqliteError> {
  return error instanceof Database.SqliteError;
}

function isBusy(error: unknown): boolean {
  return isSqliteError(error) && (error.code.startsWith("SQLITE_BUSY") || error.code.startsWith("SQLITE_LOCKED"));
}

/** The hint given with every damaged-database error. */
export function corruptHint(path: string): string {
  return `${path} was left untouched. Restore it from a backup (${path}.backup.<timestamp>), or move it away to start afresh; 'cm doctor' inspects it.`;
}

/** A PLAYBOOK_CORRUPT error about the layer's database (the storage of its playbook). */
export function corruptDatabase(path: string, problem: string, cause?: unknown): AppError {
  return new AppError("PLAYBOOK_CORRUPT", `Playbook at ${path} is invalid: ${problem}`, {
    hint: corruptHint(path),
    details: { path },
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Turns an error raised by SQLite into the AppError callers understand; AppErrors pass through. */
export function sqliteFailure(error: unknown, path: string): unknown {
  if (isAppError(error) || !isSqliteError(error)) return error;
  const code = error.code;
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT")) {
    return corruptDatabase(path, `not a readable SQLite database (${error.message})`, error);
  }
  if (isBusy(error)) {
    return new AppError("LOCK_ACQUISITION_FAILED", `The database ${path} is locked by another process: ${error.message}`, {
      hint: "Another cm process is writing; wait and retry.",
      details: { path, sqlite: code },
      retryable: true,
      cause: error,
    });
  }
  if (code === "SQLITE_CANTOPEN" || code.startsWith("SQLITE_READONLY") || code === "SQLITE_PERM" || code === "SQLITE_AUTH") {
    return new AppError("FILE_PERMISSION_DENIED", `Cannot open ${path} for writing: ${error.message}`, {
      hint: `Check that ${path} and its directory ${dirname(path)} are readable and writable.`,
      details: { path, sqlite: code },
      cause: error,
    });
  }
  if (code === "SQLITE_FULL" || code.startsWith("SQLITE_IOERR")) {
    return new AppError("FILE_WRITE_FAILED", `Could not write ${path}: ${error.message}`, {
      hint: `Check that the disk holding ${path} is not full and is writable.`,
      details: { path, sqlite: code },
      cause: error,
    });
  }
  return new AppError("INTERNAL_ERROR", `SQLite error on ${path}: ${error.message}`, { details: { path, sqlite: code }, cause: error });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Blocks the thread for short waits where the caller is synchronous (opening a database). */
const SLEEPER = new Int32Array(new SharedArrayBuffer(4));

/**
 * Writers of one database file inside this process queue here (keyed by the absolute path), so
 * that two connections of the same process never wait on each other inside SQLite: better-sqlite3
 * is synchronous, and a connection blocked on the write lock would block the event loop that the
 * holder needs to finish.
 */
const writerQueues = new Map<string, Promise<void>>();

async function enterWriterQueue(key: string, deadline: number): Promise<() => void> {
  const previous = writerQueues.get(key) ?? Promise.resolve();
  let leave!: () => void;
  const done = new Promise<void>((resolve) => (leave = resolve));
  const tail = previous.then(() => done);
  writerQueues.set(key, tail);
  void tail.then(() => {
    if (writerQueues.get(key) === tail) writerQueues.delete(key);
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([previous, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))))]);
  clearTimeout(timer);
  return leave;
}

/** The databases whose write transaction the current async context holds (for nested writes). */
const openTransactions = new AsyncLocalStorage<ReadonlySet<LayerDatabase>>();

/**
 * One layer's database file: opened lazily (reads of a missing file do not create it), migrated to
 * the current schema on open, reopened when the file was replaced or deleted behind our back.
 */
export class LayerDatabase {
  readonly path: string;
  readonly layer: Layer;
  private readonly options: LayerDatabaseOptions;
  private db: Db | null = null;
  private identity: string | null = null;
  private savepoints = 0;

  constructor(options: LayerDatabaseOptions) {
    this.options = options;
    this.path = resolve(options.path);
    this.layer = options.layer;
  }

  /** The file's identity (device and inode), or null when it does not exist. */
  private fileIdentity(): string | null {
    try {
      const info = statSync(this.path, { bigint: true });
      return `${info.dev}:${info.ino}`;
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return null;
      throw new AppError("FILE_PERMISSION_DENIED", `Cannot access ${this.path}: ${messageOf(error)}`, {
        hint: `Check the permissions of ${dirname(this.path)}.`,
        details: { path: this.path },
        cause: error,
      });
    }
  }

  /** Device and inode of the file the open connection uses (null when none is open). */
  get openFile(): string | null {
    return this.db === null ? null : this.identity;
  }

  /** True when the database file exists. */
  exists(): boolean {
    return this.fileIdentity() !== null;
  }

  /**
   * The open connection; null when the file does not exist and `create` is false. Throws
   * PLAYBOOK_CORRUPT for a file that is not a cass-memory database (which is never modified), and
   * CONFIG_INVALID for a database of a newer schema.
   */
  connection(create: boolean): Db | null {
    let current = this.fileIdentity();
    if (this.db !== null) {
      if (current !== null && current === this.identity) return this.db;
      // Replaced or deleted (e.g. restored from a backup): never keep writing to an unlinked file.
      if (this.db.inTransaction) return this.db;
      this.close();
    }
    if (current === null && !create) return null;
    if (current === null) {
      try {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        // Created empty with mode 0600 (as the YAML store's files); SQLite gives -wal and -shm the same mode.
        writeFileSync(this.path, "", { flag: "wx", mode: 0o600 });
      } catch (error) {
        if ((error as { code?: unknown }).code === "EEXIST") return this.connection(create);
        throw new AppError("FILE_WRITE_FAILED", `Could not create ${dirname(this.path)}: ${messageOf(error)}`, {
          hint: `Check that ${dirname(dirname(this.path))} is writable.`,
          details: { path: this.path },
          cause: error,
        });
      }
    }
    let db: Db;
    try {
      db = new Database(this.path, { fileMustExist: !create, timeout: this.options.busyTimeoutMs });
    } catch (error) {
      if (isSqliteError(error) && error.code === "SQLITE_CANTOPEN" && !create && !this.exists()) return null;
      throw sqliteFailure(error, this.path);
    }
    try {
      this.prepareWhenFree(db);
    } catch (error) {
      db.close();
      throw sqliteFailure(error, this.path);
    }
    current = this.fileIdentity();
    this.db = db;
    this.identity = current;
    return db;
  }

  /**
   * `prepare`, retried while another process holds a lock it needs (several processes opening a new
   * database at once: one creates the schema or switches to WAL while the others wait), up to the
   * lock timeout. Opening is synchronous, so the waits block this thread for a few milliseconds.
   */
  private prepareWhenFree(db: Db): void {
    const deadline = Date.now() + this.options.lockTimeoutMs;
    for (let attempt = 0; ; attempt += 1) {
      try {
        this.prepare(db);
        return;
      } catch (error) {
        if (db.inTransaction) db.exec("ROLLBACK");
        if (!isBusy(error) || Date.now() >= deadline) throw error;
        Atomics.wait(SLEEPER, 0, 0, Math.min(5 * 2 ** Math.min(attempt, 5), 100));
      }
    }
  }

  /** Pragmas, then the schema check and migrations. */
  private prepare(db: Db): void {
    // One statement, so one snapshot: read separately, a header from before another process's schema
    // creation and a table count from after it would look like a foreign database. This first
    // statement also reads the header: a file that is not a database fails here, untouched.
    const identity = db
      .prepare(
        "SELECT (SELECT application_id FROM pragma_application_id()) AS appId, (SELECT user_version FROM pragma_user_version()) AS version, (SELECT count(*) FROM sqlite_schema) AS tables",
      )
      .get() as { appId: number; version: number; tables: number };
    const appId = Number(identity.appId);
    const version = Number(identity.version);
    const tables = Number(identity.tables);
    if (appId !== APPLICATION_ID && !(appId === 0 && version === 0 && tables === 0)) {
      throw corruptDatabase(this.path, "it is a SQLite database, but not one of cass-memory (unknown application_id and tables)");
    }
    if (version > SCHEMA_VERSION) throw this.newerSchema(version);
    const mode = String(db.pragma("journal_mode = WAL", { simple: true }));
    if (mode.toLowerCase() !== "wal") this.options.logger.warn(`${this.path}: could not switch to WAL mode (journal_mode is ${mode})`);
    db.pragma(`synchronous = ${this.options.synchronous === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("foreign_keys = ON");
    if (version < SCHEMA_VERSION) this.migrate(db);
  }

  private newerSchema(version: number): AppError {
    return new AppError(
      "CONFIG_INVALID",
      `The database ${this.path} has schema version ${version}, newer than this cm understands (${SCHEMA_VERSION}).`,
      {
        hint: "It was written by a newer cass-memory: upgrade cm (the database was not changed).",
        details: { path: this.path, schemaVersion: version, supported: SCHEMA_VERSION },
      },
    );
  }

  /** Applies the missing migrations in one immediate transaction (re-checking the version inside it). */
  private migrate(db: Db): void {
    db.exec("BEGIN IMMEDIATE");
    try {
      const version = Number(db.pragma("user_version", { simple: true }));
      if (version > SCHEMA_VERSION) throw this.newerSchema(version);
      const now = new Date().toISOString();
      if (version === 0) {
        db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT");
      }
      const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
      for (const migration of MIGRATIONS) {
        if (migration.version <= version) continue;
        db.exec(migration.sql);
        record.run(migration.version, migration.name, now);
        if (migration.version === 1) {
          const meta = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?)");
          meta.run("layer", this.layer);
          meta.run("created_at", now);
        }
      }
      db.pragma(`application_id = ${APPLICATION_ID}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
      db.exec("COMMIT");
      if (version > 0) this.options.logger.debug(`${this.path}: migrated schema ${version} → ${SCHEMA_VERSION}`);
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Runs a read; `absent` when the database does not exist. Several statements see one snapshot. */
  read<T>(fn: (db: Db) => T, absent: T): T {
    try {
      const db = this.connection(false);
      if (db === null) return absent;
      return db.inTransaction ? fn(db) : db.transaction(fn).deferred(db);
    } catch (error) {
      throw sqliteFailure(error, this.path);
    }
  }

  /**
   * Runs `fn` in a write transaction (`BEGIN IMMEDIATE`, so a read-modify-write is atomic across
   * processes): committed when `fn` resolves, rolled back when it throws. The write lock is waited
   * for asynchronously (in-process queue, then polling SQLite with backoff) up to the lock timeout.
   * A write started from inside another write on this database (same async context) joins it as a
   * savepoint.
   */
  async write<T>(fn: (db: Db) => T | Promise<T>): Promise<T> {
    const held = openTransactions.getStore();
    if (held?.has(this) && this.db !== null && this.db.inTransaction) return this.nested(this.db, fn);
    const started = Date.now();
    const deadline = started + this.options.lockTimeoutMs;
    const leave = await enterWriterQueue(this.path, deadline);
    try {
      const db = this.connection(true) as Db;
      if (db.inTransaction) throw this.lockTimeout(started);
      await this.begin(db, started, deadline);
      const mine = new Set(held ?? []);
      mine.add(this);
      try {
        const result = await openTransactions.run(mine, () => fn(db));
        db.exec("COMMIT");
        return result;
      } catch (error) {
        if (db.inTransaction) {
          try {
            db.exec("ROLLBACK");
          } catch (rollbackError) {
            this.options.logger.warn(`${this.path}: rollback failed: ${messageOf(rollbackError)}`);
          }
        }
        throw error;
      }
    } catch (error) {
      throw sqliteFailure(error, this.path);
    } finally {
      leave();
      this.closeOrphan();
    }
  }

  /** A connection closed (or replaced) while its transaction was open is closed once that transaction is over. */
  private orphans: Db[] = [];
  private closeOrphan(): void {
    this.orphans = this.orphans.filter((db) => {
      if (db.inTransaction) return true;
      try {
        db.close();
      } catch {
        // already closed
      }
      return false;
    });
  }

  private async nested<T>(db: Db, fn: (db: Db) => T | Promise<T>): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    db.exec(`SAVEPOINT ${name}`);
    try {
      const result = await fn(db);
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      db.exec(`ROLLBACK TO ${name}`);
      db.exec(`RELEASE ${name}`);
      throw sqliteFailure(error, this.path);
    }
  }

  /** BEGIN IMMEDIATE without SQLite's blocking busy wait: retried with jittered backoff until the deadline. */
  private async begin(db: Db, started: number, deadline: number): Promise<void> {
    for (let attempt = 0; ; attempt += 1) {
      db.pragma("busy_timeout = 0");
      try {
        db.exec("BEGIN IMMEDIATE");
        return;
      } catch (error) {
        if (!isBusy(error)) throw error;
      } finally {
        db.pragma(`busy_timeout = ${this.options.busyTimeoutMs}`);
      }
      const now = Date.now();
      if (now >= deadline) throw this.lockTimeout(started);
      const ceiling = Math.min(100, 2 * 1.5 ** attempt);
      await sleep(Math.min(ceiling / 2 + Math.random() * (ceiling / 2), Math.max(1, deadline - now)));
    }
  }

  private lockTimeout(started: number): AppError {
    const elapsed = Date.now() - started;
    return new AppError("LOCK_ACQUISITION_FAILED", `Could not acquire the write lock of ${this.path} after ${elapsed} ms`, {
      hint: "Another cm process is writing to this database: wait and retry.",
      details: { path: this.path, elapsedMs: elapsed },
      retryable: true,
    });
  }

  close(): void {
    if (this.db !== null) {
      if (this.db.inTransaction) this.orphans.push(this.db);
      else {
        try {
          this.db.close();
        } catch {
          // already closed
        }
      }
    }
    this.db = null;
    this.identity = null;
  }
}
