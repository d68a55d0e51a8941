import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { inject } from "vitest";
import { createMemoryLogger } from "@cass-memory/core/testing";
import type { Layer, LogName } from "@cass-memory/core";
import { createPostgresStore, type PostgresStore, type PostgresStoreOptions } from "../src/index.js";

export const testUrl = (): string => inject("pgUrl");

/** The space keys of a test's directories: every test works in rows of its own in the one database. */
export function spaceOf(dir: string): string {
  return `t:${createHash("sha256").update(dir).digest("hex").slice(0, 20)}`;
}

const open = new Set<PostgresStore>();

export function makeStore(options: Partial<PostgresStoreOptions> & { globalDir: string; repoDir: string | null }): PostgresStore {
  const store = createPostgresStore({
    url: testUrl(),
    logger: createMemoryLogger(),
    lock: { timeoutMs: 30_000 },
    globalSpace: spaceOf(options.globalDir),
    ...(options.repoDir !== null ? { repoSpace: spaceOf(options.repoDir) } : {}),
    ...options,
  });
  open.add(store);
  return store;
}

export async function closeStores(): Promise<void> {
  const stores = [...open];
  open.clear();
  await Promise.all(stores.map((s) => s.close()));
}

/** Runs `fn` on a plain connection of its own (search_path set to the store's schema). */
export async function withSql<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testUrl(), options: "-c search_path=cass_memory" });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

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

/** Writes the global layer's record named like the original's file (see the SQLite store's tests); other names are real files. */
export async function writeRawGlobalRecord(globalDir: string, name: string, text: string): Promise<void> {
  const space = spaceOf(globalDir);
  const processed = PROCESSED.exec(name);
  const diary = DIARY.exec(name);
  if (DOCUMENTS.has(name)) {
    await withSql((c) =>
      c.query("INSERT INTO cm_documents (space, name, text, updated_at) VALUES ($1, $2, $3, 'raw') ON CONFLICT (space, name) DO UPDATE SET text = excluded.text", [space, name, text]),
    );
  } else if (processed !== null) {
    await withSql(async (c) => {
      await c.query("DELETE FROM cm_processed_log WHERE space = $1 AND log = $2", [space, processed[1]]);
      for (const line of rowsOf(text)) await c.query("INSERT INTO cm_processed_log (space, log, line) VALUES ($1, $2, $3)", [space, processed[1], line]);
    });
  } else if (diary !== null) {
    let sessionPath: string | null = null;
    let timestamp: string | null = null;
    try {
      const value = JSON.parse(text) as { sessionPath?: unknown; timestamp?: unknown };
      if (typeof value?.sessionPath === "string") sessionPath = value.sessionPath;
      if (typeof value?.timestamp === "string") timestamp = value.timestamp;
    } catch {
      // stored as it is
    }
    await withSql(async (c) => {
      const seq = (await c.query("SELECT coalesce(max(written_seq), 0) + 1 AS n FROM cm_diaries WHERE space = $1", [space])).rows[0].n;
      await c.query(
        `INSERT INTO cm_diaries (space, name, session_path, timestamp, written_seq, written_at, text) VALUES ($1, $2, $3, $4, $5, 'raw', $6)
         ON CONFLICT (space, name) DO UPDATE SET session_path = excluded.session_path, timestamp = excluded.timestamp, written_seq = excluded.written_seq, text = excluded.text`,
        [space, diary[1], sessionPath, timestamp, seq, text],
      );
    });
  } else {
    await mkdir(dirname(join(globalDir, name)), { recursive: true });
    await writeFile(join(globalDir, name), text);
  }
}

export async function readRawGlobalRecord(globalDir: string, name: string): Promise<string | null> {
  const space = spaceOf(globalDir);
  const lines = (rows: Array<{ line: string }>): string | null => (rows.length === 0 ? null : rows.map((r) => r.line).join("\n") + "\n");
  const processed = PROCESSED.exec(name);
  const diary = DIARY.exec(name);
  const monthly = MONTHLY.exec(name);
  const log = LOG_BY_FILE[name];
  if (DOCUMENTS.has(name)) return withSql(async (c) => (await c.query("SELECT text FROM cm_documents WHERE space = $1 AND name = $2", [space, name])).rows[0]?.text ?? null);
  if (processed !== null) return withSql(async (c) => lines((await c.query("SELECT line FROM cm_processed_log WHERE space = $1 AND log = $2 ORDER BY seq", [space, processed[1]])).rows));
  if (diary !== null) return withSql(async (c) => (await c.query("SELECT text FROM cm_diaries WHERE space = $1 AND name = $2", [space, diary[1]])).rows[0]?.text ?? null);
  if (monthly !== null) return withSql(async (c) => lines((await c.query("SELECT line FROM cm_cost_entries WHERE space = $1 AND month = $2 ORDER BY seq", [space, monthly[1]])).rows));
  if (log !== undefined) return withSql(async (c) => lines((await c.query("SELECT line FROM cm_logs WHERE space = $1 AND log = $2 ORDER BY seq", [space, log])).rows));
  return readFile(join(globalDir, name), "utf8").catch(() => null);
}

export function layerSpace(globalDir: string, repoDir: string | null, layer: Layer): string {
  const dir = layer === "global" ? globalDir : repoDir;
  if (dir === null) throw new Error("no repo dir");
  return spaceOf(dir);
}

export async function appendRawLines(space: string, log: LogName | "blocked", text: string): Promise<void> {
  await withSql(async (c) => {
    for (const line of rowsOf(text)) {
      if (log === "blocked") await c.query("INSERT INTO cm_blocked (space, source, line) VALUES ($1, 'blocked', $2)", [space, line]);
      else await c.query("INSERT INTO cm_logs (space, log, line) VALUES ($1, $2, $3)", [space, log, line]);
    }
  });
}

const WORKER = fileURLToPath(new URL("./fixtures/worker.mjs", import.meta.url));

/** Runs test/fixtures/worker.mjs (on the built store) in a child process; rejects with its stderr when it fails. */
export function runWorker(args: string[], label: string, env: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, testUrl(), ...args], { stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, ...env } });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 20_000) stderr += chunk.toString();
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0 || env.CM_TEST_CRASH_AT !== undefined) resolve({ code, signal, stderr });
      else reject(new Error(`worker ${label} exited ${code}: ${stderr}`));
    });
  });
}
