import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { AppError, isAppError } from "@cass-memory/core";
import type { Logger } from "@cass-memory/core";
import { crashPoint } from "@cass-memory/node-files";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";

/**
 * Connections to the database: a small pool (idle connections never keep a process alive), the
 * schema migrations run once per store, read snapshots and the write transaction of one layer
 * (space). Every error that leaves this module is an AppError, and no message carries the
 * connection URL's password.
 */

/** A connection inside a transaction. */
export type Sql = pg.PoolClient;

/** The channel `pg_notify` announces every committed write on (payload: the layer's space key). */
export const CHANGE_CHANNEL = "cass_memory_changes";

/** What a write's function may tell the transaction around it. */
export interface WriteTx {
  /** The function's own statements bumped the layer's change counter and notified (saves a round trip). */
  counted(): void;
}

/**
 * PostgreSQL text cannot hold U+0000. Records are stored as JSON text (which escapes it); the plain
 * query columns (ids, content, tags, …) hold U+FFFD in its place, on writes and lookups alike.
 */
export function pgText(value: string): string;
export function pgText(value: string | null | undefined): string | null;
export function pgText(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  return value.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}

/** Connection URLs are shown as `postgres://user@host:port/db`: the password (and query options) never. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username !== "" ? `${decodeURIComponent(parsed.username)}@` : "";
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "postgres://(unparseable URL)";
  }
}

/** Replaces any password-bearing URL, and the password itself, in a message. */
export function scrubSecrets(text: string, url: string): string {
  let out = text.replace(/(postgres(?:ql)?:\/\/[^:@/\s]*):[^@\s]*@/gi, "$1:***@");
  try {
    const password = decodeURIComponent(new URL(url).password);
    if (password.length >= 3) out = out.split(password).join("***");
  } catch {
    // not a URL: nothing more to hide
  }
  return out;
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EPIPE"]);

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** True for errors that mean the server could not be reached or the connection dropped. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string") {
    if (CONNECTION_CODES.has(code)) return true;
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") return true;
  }
  const message = messageOf(error);
  return /Connection terminated|timeout expired|connect ECONNREFUSED|Client has encountered a connection error/i.test(message);
}

/** Turns an error raised by pg into an AppError; AppErrors and errors of callers' functions pass through. */
export function pgFailure(error: unknown, url: string): unknown {
  if (isAppError(error)) return error;
  if (!(error instanceof pg.DatabaseError) && !isConnectionError(error)) return error;
  const where = redactUrl(url);
  const message = scrubSecrets(messageOf(error), url);
  const code = (error as { code?: unknown } | null)?.code;
  if (isConnectionError(error)) {
    return new AppError("NETWORK_ERROR", `Cannot reach the PostgreSQL database ${where}: ${message}`, {
      hint: "Check that the server is running and reachable, and the URL in CASS_MEMORY_DATABASE_URL or storage.postgres.url; nothing was written.",
      details: { database: where, ...(typeof code === "string" ? { code } : {}) },
      retryable: true,
      cause: error,
    });
  }
  if (code === "28P01" || code === "28000" || code === "3D000") {
    return new AppError("CONFIG_INVALID", `The PostgreSQL database ${where} refused the connection: ${message}`, {
      hint: "Check the user, password and database name of CASS_MEMORY_DATABASE_URL or storage.postgres.url.",
      details: { database: where, code },
      cause: error,
    });
  }
  if (code === "55P03" || code === "40P01" || code === "40001") {
    return new AppError("LOCK_ACQUISITION_FAILED", `The PostgreSQL database ${where} is busy: ${message}`, {
      hint: "Another cm process is writing the same layer; wait and retry.",
      details: { database: where, code },
      retryable: true,
      cause: error,
    });
  }
  return new AppError("INTERNAL_ERROR", `PostgreSQL error on ${where}: ${message}`, {
    hint: "See the details; run 'cm storage status' to check the database.",
    details: { database: where, ...(typeof code === "string" ? { code } : {}) },
    cause: error,
  });
}

export interface PgDatabaseOptions {
  url: string;
  /** PostgreSQL schema holding the tables (default `cass_memory`). */
  schema: string;
  logger: Logger;
  /** How long a write waits for another writer of the same layer (lock_timeout), ms. */
  lockTimeoutMs: number;
  /** How long opening a connection may take, ms. */
  connectTimeoutMs: number;
  /** Connections in the pool (default 4). */
  maxConnections?: number;
  /**
   * How many transactions (reads and writes) run at once, each on a connection of its own
   * (default 1; at most maxConnections). A one-shot command gains nothing from opening a
   * connection per parallel read: each costs the server a process and an authentication (~15 ms
   * here, several round trips to a remote server), more than the few short reads waiting their
   * turn on one connection. Long-running processes serving several clients set more. Named
   * locks' sessions and transactions started inside another one's function do not wait.
   */
  concurrentTransactions?: number;
}

/** A first-in, first-out turnstile: at most `size` holders at once. */
class Turnstile {
  private holders = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly size: number) {}

  async enter(): Promise<void> {
    if (this.holders < this.size) {
      this.holders += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next !== undefined) next();
    else this.holders -= 1;
  }
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** Advisory lock key of the migration step (any fixed number; "cass" in ASCII). */
const MIGRATION_LOCK = 0x63617373;

// int8 values (counts, bigserial) are numbers here: they stay far below 2^53.
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === 20 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

export class PgDatabase {
  readonly url: string;
  readonly schema: string;
  readonly where: string;
  /** Called after every write, committed or not (the store's memo of reads). */
  afterWrite: (() => void) | null = null;
  private pool: pg.Pool | null = null;
  private ready: Promise<void> | null = null;
  private warming: Promise<void> | null = null;
  /** The warm connection found the schema current: the first use needs no migration step. */
  private current = false;
  private readonly options: PgDatabaseOptions;
  private readonly turns: Turnstile;
  /** Set inside a transaction's function: transactions it starts do not wait for a turn (they would wait for it). */
  private readonly inTransaction = new AsyncLocalStorage<true>();

  constructor(options: PgDatabaseOptions) {
    if (!SCHEMA_NAME.test(options.schema)) {
      throw new AppError("CONFIG_INVALID", `Invalid PostgreSQL schema name ${JSON.stringify(options.schema)}`, {
        hint: "Use lower-case letters, digits and '_' (storage.postgres.schema).",
      });
    }
    this.options = options;
    this.url = options.url;
    this.schema = options.schema;
    this.where = redactUrl(options.url);
    this.turns = new Turnstile(Math.max(1, Math.min(options.concurrentTransactions ?? 1, options.maxConnections ?? 4)));
  }

  /** Runs a transaction when its turn comes (see concurrentTransactions). */
  private async inTurn<T>(run: () => Promise<T>): Promise<T> {
    if (this.inTransaction.getStore() === true) return run();
    await this.turns.enter();
    try {
      return await this.inTransaction.run(true, run);
    } finally {
      this.turns.leave();
    }
  }

  private getPool(): pg.Pool {
    if (this.pool === null) {
      const pool = new pg.Pool({
        connectionString: this.url,
        max: this.options.maxConnections ?? 4,
        allowExitOnIdle: true,
        idleTimeoutMillis: 10_000,
        connectionTimeoutMillis: this.options.connectTimeoutMs,
        // lock_timeout bounds how long a write waits for another writer of its layer (set once per
        // connection). No parallel workers: cm's statements are short, and starting workers costs
        // more than they save (and competes with the client on small machines).
        options: `-c search_path=${this.schema} -c lock_timeout=${Math.max(1, Math.floor(this.options.lockTimeoutMs))} -c max_parallel_workers_per_gather=0`,
        application_name: "cass-memory",
        types,
      });
      // An idle connection that breaks (server restarted) must not crash the process.
      pool.on("error", (error) => this.options.logger.debug(`PostgreSQL idle connection error: ${scrubSecrets(messageOf(error), this.url)}`));
      this.pool = pool;
    }
    return this.pool;
  }

  private async connect(): Promise<pg.PoolClient> {
    // Queries made while the first connection is being opened wait for it rather than open more.
    if (this.warming !== null) await this.warming;
    try {
      return await this.getPool().connect();
    } catch (error) {
      throw pgFailure(error, this.url);
    }
  }

  /**
   * Opens one connection into the pool ahead of the first query, so that the server's connection
   * start-up (process, authentication) overlaps whatever the caller does before its first read.
   * Nothing is read or written; a failure is left for the first real use to report.
   */
  warm(): void {
    if (this.pool !== null) return;
    this.warming = this.getPool()
      .connect()
      .then(
        async (client) => {
          // The schema check too (a read): a current schema needs nothing more at the first use.
          let broken = false;
          try {
            this.current = (await this.currentVersion(client)) === SCHEMA_VERSION;
          } catch (error) {
            broken = isConnectionError(error);
          } finally {
            client.release(broken);
          }
        },
        () => undefined,
      )
      .finally(() => {
        this.warming = null;
      });
  }

  /** The newest applied migration on this connection's schema; null when the schema was never created. */
  private async currentVersion(client: pg.PoolClient): Promise<number | null> {
    // A missing table is error 42P01 (one statement, where to_regclass first would be two).
    return client.query("SELECT max(version) AS v FROM cm_schema_migrations").then(
      (result) => (result.rows[0]?.v as number | null) ?? null,
      (error: unknown) => {
        if ((error as { code?: unknown } | null)?.code === "42P01") return null;
        throw error;
      },
    );
  }

  /** Applies missing migrations once per store (again after a failure). */
  ensureSchema(): Promise<void> {
    if (this.ready === null) {
      // The connection opened ahead (warm) may be checking the version right now: its answer first.
      const warming = this.warming ?? Promise.resolve();
      this.ready = warming.then(() => (this.current ? undefined : this.migrate())).catch((error: unknown) => {
        this.ready = null;
        throw error;
      });
    }
    return this.ready;
  }

  /** The newest applied migration (null when the schema was never created). */
  async schemaVersion(): Promise<number | null> {
    const client = await this.connect();
    try {
      return await this.currentVersion(client);
    } catch (error) {
      throw pgFailure(error, this.url);
    } finally {
      client.release();
    }
  }

  private async migrate(): Promise<void> {
    const client = await this.connect();
    let broken = false;
    try {
      // Most openings find the schema current: one read, no lock.
      const version = await this.currentVersion(client);
      if (version === SCHEMA_VERSION) return;
      if (version !== null && version > SCHEMA_VERSION) throw this.newerSchema(version);
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      await client.query(
        "CREATE TABLE IF NOT EXISTS cm_schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())",
      );
      const applied = new Set((await client.query("SELECT version FROM cm_schema_migrations")).rows.map((r) => r.version as number));
      const newest = Math.max(0, ...applied);
      if (newest > SCHEMA_VERSION) throw this.newerSchema(newest);
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query(migration.sql);
        await client.query("INSERT INTO cm_schema_migrations (version, name) VALUES ($1, $2)", [migration.version, migration.name]);
        this.options.logger.debug(`Applied PostgreSQL migration ${migration.version} (${migration.name}) to ${this.where}`);
      }
      await client.query("COMMIT");
    } catch (error) {
      broken = isConnectionError(error);
      await client.query("ROLLBACK").catch(() => undefined);
      throw pgFailure(error, this.url);
    } finally {
      client.release(broken);
    }
  }

  private newerSchema(version: number): AppError {
    return new AppError("CONFIG_INVALID", `The PostgreSQL database ${this.where} has schema version ${version}; this cm knows up to ${SCHEMA_VERSION}.`, {
      hint: "Upgrade cass-memory on this machine (another machine wrote a newer schema).",
      details: { database: this.where, schemaVersion: version, supported: SCHEMA_VERSION },
    });
  }

  /**
   * One statement's rows (a statement sees one consistent snapshot by itself: no transaction, one
   * round trip instead of three).
   */
  async query(text: string, values: unknown[]): Promise<unknown[][]> {
    await this.ensureSchema();
    return this.inTurn(async () => {
      const client = await this.connect();
      let broken = false;
      try {
        return (await client.query({ text, values, rowMode: "array" })).rows as unknown[][];
      } catch (error) {
        broken = isConnectionError(error);
        throw pgFailure(error, this.url);
      } finally {
        client.release(broken);
      }
    });
  }

  /** Runs `fn` on one consistent snapshot (a read-only repeatable-read transaction). */
  async read<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    return this.inTurn(() => this.readNow(fn));
  }

  private async readNow<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken = false;
    try {
      await client.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      const value = await fn(client);
      await client.query("COMMIT");
      return value;
    } catch (error) {
      broken = isConnectionError(error);
      await client.query("ROLLBACK").catch(() => undefined);
      throw pgFailure(error, this.url);
    } finally {
      client.release(broken);
    }
  }

  /**
   * Runs `fn` in a transaction holding the layer's row lock (every writer of the layer takes it,
   * so writers on any machine run one at a time and none loses another's change), then counts the
   * change and notifies listeners. When `fn` throws, or the connection drops, nothing is written.
   */
  async write<T>(space: string, fn: (sql: Sql, tx: WriteTx) => Promise<T>): Promise<T> {
    await this.ensureSchema();
    return this.inTurn(() => this.writeNow(space, fn));
  }

  private async writeNow<T>(space: string, fn: (sql: Sql, tx: WriteTx) => Promise<T>): Promise<T> {
    const client = await this.connect();
    let broken = false;
    try {
      // Opens the transaction and creates the layer's row or takes its lock (an upsert locks the
      // row it meets), in one round trip (a simple-protocol query: the key goes in as a literal).
      await client.query(`BEGIN; INSERT INTO cm_spaces (space) VALUES (${client.escapeLiteral(space)}) ON CONFLICT (space) DO UPDATE SET space = excluded.space`);
      let counted = false;
      const value = await fn(client, { counted: () => void (counted = true) });
      if (!counted) {
        await client.query(`WITH counted AS (UPDATE cm_spaces SET changes = changes + 1 WHERE space = $1 RETURNING space) SELECT pg_notify('${CHANGE_CHANNEL}', space) FROM counted`, [
          space,
        ]);
      }
      crashPoint("postgres:before-commit");
      await client.query("COMMIT");
      return value;
    } catch (error) {
      broken = isConnectionError(error);
      await client.query("ROLLBACK").catch(() => undefined);
      throw pgFailure(error, this.url);
    } finally {
      client.release(broken);
      this.afterWrite?.();
    }
  }

  /** A connection of its own, outside any transaction (advisory locks); release it when done. */
  async session(): Promise<pg.PoolClient> {
    await this.ensureSchema();
    return this.connect();
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = null;
    this.ready = null;
    this.current = false;
    if (pool !== null) await pool.end().catch(() => undefined);
  }
}
