import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createMemoryLogger, type MemoryLogger } from "@cass-memory/core/testing";
import { afterEach, beforeEach } from "vitest";
import type { Layer, LogName } from "@cass-memory/core";
import { LayerDatabase, type Db } from "../src/database.js";
import { DATABASE_FILE, createSqliteStore, type SqliteStore, type SqliteStoreOptions } from "../src/index.js";

export const testLogger = (): MemoryLogger => createMemoryLogger();

export async function tempDir(prefix = "cm-store-sqlite-"): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Stores made by a test, closed after it (connections would otherwise stay open until exit). */
const open = new Set<SqliteStore>();

export function makeStore(options: Partial<SqliteStoreOptions> & { globalDir: string; repoDir: string | null }): SqliteStore {
  const store = createSqliteStore({ logger: testLogger(), lock: { timeoutMs: 30_000 }, ...options });
  open.add(store);
  return store;
}

export function closeStores(): void {
  for (const store of open) store.close();
  open.clear();
}

/**
 * A fresh temporary directory for each test of the calling file (its path through the returned
 * getter), removed after the test once the stores it made are closed.
 */
export function useTestDir(): () => string {
  let current: { dir: string; cleanup: () => Promise<void> } | null = null;
  beforeEach(async () => {
    current = await tempDir();
  });
  afterEach(async () => {
    closeStores();
    await current?.cleanup();
    current = null;
  });
  return () => {
    if (current === null) throw new Error("useTestDir(): no test is running");
    return current.dir;
  };
}

export function databasePath(globalDir: string, repoDir: string | null, layer: Layer): string {
  const dir = layer === "global" ? globalDir : repoDir;
  if (dir === null) throw new Error("no repo dir");
  return join(dir, DATABASE_FILE);
}

/** Runs `fn` on a connection of its own to the database (created with the schema when missing), then closes it. */
export function withDb<T>(path: string, layer: Layer, fn: (db: Db) => T): T {
  const ldb = new LayerDatabase({ path, layer, logger: testLogger(), busyTimeoutMs: 10_000, lockTimeoutMs: 10_000, synchronous: "normal" });
  try {
    return fn(ldb.connection(true) as Db);
  } finally {
    ldb.close();
  }
}

/** The lines of `text` as rows (a final newline does not make an empty row). */
function rowsOf(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

const LOG_BY_FILE: Readonly<Record<string, LogName>> = {
  "outcomes.jsonl": "outcomes",
  "context-log.jsonl": "context-log",
  "traumas.jsonl": "traumas",
  "usage.jsonl": "usage",
  "privacy-audit.jsonl": "privacy-audit",
  "reflection-runs.jsonl": "reflection-runs",
};

const DOCUMENTS = new Set(["onboarding-state.json", "cost/total.json"]);
const PROCESSED = /^reflections\/(global|ws-[0-9a-f]{8})\.processed\.log$/;
const DIARY = /^diary\/([^/]+)\.json$/;
const MONTHLY = /^cost\/monthly-(\d{4}-\d{2})\.jsonl$/;

/**
 * The records of the global database under the names of the original's files (what the YAML store
 * keeps in those files), for the store contract's raw-file hooks: `onboarding-state.json` and
 * `cost/total.json` (documents), `reflections/<log>.processed.log`, `diary/<id>.json`,
 * `cost/monthly-<YYYY-MM>.jsonl` and the `<log>.jsonl` logs. Other names are real files below the
 * global directory.
 */
export async function writeRawGlobalRecord(globalDir: string, name: string, text: string): Promise<void> {
  const path = join(globalDir, DATABASE_FILE);
  const processed = PROCESSED.exec(name);
  const diary = DIARY.exec(name);
  if (DOCUMENTS.has(name)) {
    withDb(path, "global", (db) =>
      db.prepare("INSERT INTO documents (name, text, updated_at) VALUES (?, ?, 'raw') ON CONFLICT (name) DO UPDATE SET text = excluded.text").run(name, text),
    );
  } else if (processed !== null) {
    withDb(path, "global", (db) => {
      db.prepare("DELETE FROM processed_log WHERE log = ?").run(processed[1]);
      for (const line of rowsOf(text)) db.prepare("INSERT INTO processed_log (log, line) VALUES (?, ?)").run(processed[1], line);
    });
  } else if (diary !== null) {
    let sessionPath: string | null = null;
    let timestamp: string | null = null;
    try {
      const value = JSON.parse(text) as { sessionPath?: unknown; timestamp?: unknown };
      if (typeof value?.sessionPath === "string") sessionPath = value.sessionPath;
      if (typeof value?.timestamp === "string") timestamp = value.timestamp;
    } catch {
      // a damaged entry: stored as it is
    }
    withDb(path, "global", (db) => {
      const seq = db.prepare("SELECT coalesce(max(written_seq), 0) + 1 FROM diaries").pluck().get();
      db.prepare(
        "INSERT INTO diaries (name, session_path, timestamp, written_seq, written_at, text) VALUES (?, ?, ?, ?, 'raw', ?) ON CONFLICT (name) DO UPDATE SET session_path = excluded.session_path, timestamp = excluded.timestamp, written_seq = excluded.written_seq, text = excluded.text",
      ).run(diary[1], sessionPath, timestamp, seq, text);
    });
  } else {
    await mkdir(dirname(join(globalDir, name)), { recursive: true });
    await writeFile(join(globalDir, name), text);
  }
}

export async function readRawGlobalRecord(globalDir: string, name: string): Promise<string | null> {
  const path = join(globalDir, DATABASE_FILE);
  const lines = (rows: string[]): string | null => (rows.length === 0 ? null : rows.join("\n") + "\n");
  const processed = PROCESSED.exec(name);
  const diary = DIARY.exec(name);
  const monthly = MONTHLY.exec(name);
  const log = LOG_BY_FILE[name];
  if (DOCUMENTS.has(name)) return withDb(path, "global", (db) => (db.prepare("SELECT text FROM documents WHERE name = ?").pluck().get(name) as string | undefined) ?? null);
  if (processed !== null) return withDb(path, "global", (db) => lines(db.prepare("SELECT line FROM processed_log WHERE log = ? ORDER BY seq").pluck().all(processed[1]) as string[]));
  if (diary !== null) return withDb(path, "global", (db) => (db.prepare("SELECT text FROM diaries WHERE name = ?").pluck().get(diary[1]) as string | undefined) ?? null);
  if (monthly !== null) return withDb(path, "global", (db) => lines(db.prepare("SELECT line FROM cost_entries WHERE month = ? ORDER BY seq").pluck().all(monthly[1]) as string[]));
  if (log !== undefined) return withDb(path, "global", (db) => lines(db.prepare("SELECT line FROM logs WHERE log = ? ORDER BY seq").pluck().all(log) as string[]));
  return readFile(join(globalDir, name), "utf8").catch(() => null);
}

/** Appends raw lines to a layer's log or blocked entries, as a damaged or torn line would be stored. */
export function appendRawLines(path: string, layer: Layer, log: LogName | "blocked", text: string): void {
  withDb(path, layer, (db) => {
    for (const line of rowsOf(text)) {
      if (log === "blocked") db.prepare("INSERT INTO blocked (source, line) VALUES ('blocked', ?)").run(line);
      else db.prepare("INSERT INTO logs (log, line) VALUES (?, ?)").run(log, line);
    }
  });
}

const WORKER = fileURLToPath(new URL("./fixtures/worker.mjs", import.meta.url));

/** Runs test/fixtures/worker.mjs (on the built store) in a child process; rejects with its stderr when it fails. */
export function runWorker(args: string[], label: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, ...args], { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`worker ${label} exited ${code}: ${stderr}`))));
  });
}
