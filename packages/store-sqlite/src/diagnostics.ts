import { constants as fsConstants } from "node:fs";
import { access, mkdir, readFile, readdir, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import {
  AppError,
  ConfigSchema,
  JournalEventSchema,
  PLAYBOOK_SCHEMA_VERSION,
  defaultConfig,
  findJournalGaps,
  formatZodIssues,
  isAppError,
  reconstructGapEvents,
} from "@cass-memory/core";
import type { FixResult, FixableIssue, HealthCheck, JournalEvent, Layer, Logger, Playbook, StoreDiagnosis } from "@cass-memory/core";
import type { LayerDatabase } from "./database.js";
import { atomicWriteFile, backupFile, isProcessAlive, withLock, type LockOptions } from "@cass-memory/node-files";
import { readStoredPlaybook } from "./playbook-rows.js";
import { SCHEMA_VERSION } from "./schema.js";

/**
 * Storage diagnostics of the SQLite store for `cm doctor`: the global directory and config.json,
 * each layer's database (opens, schema version, WAL, `PRAGMA quick_check`, the playbook decodes,
 * journal events decode) and directory locks left by dead processes. Fixes re-check their condition
 * when they run, back up what they rewrite and never delete data.
 */

export const DIAGNOSTIC_CATEGORIES = {
  global: "Global Storage (~/.cass-memory)",
  config: "Configuration",
  database: "SQLite Database",
  playbook: "Playbook",
  locks: "Locks and Temp Files",
  journal: "Audit Journal",
} as const;

const C = DIAGNOSTIC_CATEGORIES;

export interface SqliteDiagnosticsOptions {
  globalDir: string;
  configPath: string;
  databases: { global: LayerDatabase; repo: LayerDatabase | null };
  logger: Logger;
  dirLock: LockOptions;
  /** Creates the layer's database with its empty playbook (what `initialize` does, nothing overwritten). */
  createDatabase: (layer: Layer) => Promise<void>;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type ConfigState = { kind: "missing" } | { kind: "ok" } | { kind: "invalid"; problem: string } | { kind: "unreadable"; error: string };

/** Lock directories of dead processes below the global directory (config.json's and the named locks). */
async function abandonedLocks(globalDir: string): Promise<Array<{ lockDir: string; pid: number }>> {
  const candidates: string[] = [join(globalDir, "config.json.lock.d")];
  try {
    for (const name of await readdir(join(globalDir, "reflections"))) if (name.endsWith(".lock.d")) candidates.push(join(globalDir, "reflections", name));
  } catch {
    // no reflections directory
  }
  const found: Array<{ lockDir: string; pid: number }> = [];
  for (const lockDir of candidates) {
    let pidText: string;
    try {
      pidText = await readFile(join(lockDir, "pid"), "utf8");
    } catch {
      continue;
    }
    const pid = Number.parseInt(pidText.trim(), 10);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !isProcessAlive(pid)) found.push({ lockDir, pid });
  }
  return found;
}

export function createSqliteDiagnostics(options: SqliteDiagnosticsOptions) {
  const { globalDir, configPath, databases, dirLock } = options;

  async function inspectConfig(): Promise<ConfigState> {
    let text: string;
    try {
      text = await readFile(configPath, "utf8");
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return { kind: "missing" };
      return { kind: "unreadable", error: messageOf(error) };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { kind: "invalid", problem: `not valid JSON (${messageOf(error)})` };
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { kind: "invalid", problem: "not a JSON object" };
    const checked = ConfigSchema.safeParse(parsed);
    return checked.success ? { kind: "ok" } : { kind: "invalid", problem: `schema validation failed: ${formatZodIssues(checked.error)}` };
  }

  function inspectDatabase(layer: Layer, ldb: LayerDatabase, checks: HealthCheck[], issues: FixableIssue[]): void {
    const item = layer === "global" ? "Global database" : "Repo database";
    if (!ldb.exists()) {
      if (layer === "global") {
        checks.push({ category: C.database, item, status: "warn", message: `No database yet at ${ldb.path}`, details: { path: ldb.path } });
        issues.push({ id: "missing-global-database", description: `Create the global database ${ldb.path} with an empty playbook`, category: C.database, severity: "warn", safety: "safe" });
      } else {
        checks.push({ category: C.database, item, status: "pass", message: `No repository database (optional; 'cm init --repo' creates ${ldb.path})`, details: { path: ldb.path } });
      }
      return;
    }
    const manual = [
      `Move ${ldb.path} (and its -wal and -shm files) away, or restore it from a backup (${ldb.path}.backup.<timestamp>).`,
      "Then run the command again; a new database is created when the old one is gone.",
    ];
    let summary: { version: number; journalMode: string; quickCheck: string; bullets: number; badEvents: number; events: number };
    try {
      summary = ldb.read(
        (db) => {
          const events = db.prepare("SELECT event FROM journal").pluck().all() as string[];
          let badEvents = 0;
          for (const line of events) {
            try {
              JSON.parse(line);
            } catch {
              badEvents += 1;
            }
          }
          return {
            version: Number(db.pragma("user_version", { simple: true })),
            journalMode: String(db.pragma("journal_mode", { simple: true })),
            quickCheck: (db.pragma("quick_check") as Array<{ quick_check: string }>).map((r) => r.quick_check).join("; "),
            bullets: Number(db.prepare("SELECT count(*) FROM bullets").pluck().get()),
            events: events.length,
            badEvents,
          };
        },
        { version: 0, journalMode: "", quickCheck: "", bullets: 0, events: 0, badEvents: 0 },
      );
    } catch (error) {
      checks.push({ category: C.database, item, status: "fail", message: messageOf(error), details: { path: ldb.path, ...(isAppError(error) ? { code: error.code } : {}) } });
      issues.push({ id: `unreadable-${layer}-database`, description: `Replace the unreadable database ${ldb.path}`, category: C.database, severity: "fail", safety: "manual", howToFix: manual });
      return;
    }
    const details = { path: ldb.path, schemaVersion: summary.version, supported: SCHEMA_VERSION, journalMode: summary.journalMode, bullets: summary.bullets, events: summary.events };
    if (summary.quickCheck !== "ok") {
      checks.push({ category: C.database, item, status: "fail", message: `Integrity check failed: ${summary.quickCheck}`, details });
      issues.push({ id: `damaged-${layer}-database`, description: `Restore the damaged database ${ldb.path} from a backup`, category: C.database, severity: "fail", safety: "manual", howToFix: manual });
      return;
    }
    const walNote = summary.journalMode.toLowerCase() === "wal" ? "WAL" : `journal mode ${summary.journalMode} (expected WAL)`;
    checks.push({
      category: C.database,
      item,
      status: summary.journalMode.toLowerCase() === "wal" ? "pass" : "warn",
      message: `Schema version ${summary.version}, ${walNote}, integrity ok, ${summary.bullets} bullet(s)`,
      details,
    });
    if (summary.badEvents > 0) {
      checks.push({ category: C.database, item: `${item} journal`, status: "warn", message: `${summary.badEvents} of ${summary.events} journal event(s) are not valid JSON (they are skipped when read)`, details: { path: ldb.path } });
    }
    const pbItem = layer === "global" ? "Global playbook" : "Repo playbook";
    try {
      const stored = ldb.read((db) => readStoredPlaybook(db, ldb.path, layer), null);
      if (stored === null) {
        checks.push({ category: C.playbook, item: pbItem, status: "warn", message: `No playbook in ${ldb.path} yet`, details: { path: ldb.path } });
      } else if (stored.playbook.schema_version < PLAYBOOK_SCHEMA_VERSION) {
        checks.push({ category: C.playbook, item: pbItem, status: "warn", message: `Playbook schema_version ${stored.playbook.schema_version} (current ${PLAYBOOK_SCHEMA_VERSION}); it is upgraded on the next change`, details: { path: ldb.path } });
      } else {
        checks.push({ category: C.playbook, item: pbItem, status: "pass", message: `Valid (${stored.playbook.bullets.length} bullet(s))`, details: { path: ldb.path } });
      }
      if (stored !== null) inspectJournalCoverage(layer, ldb, stored.playbook, checks, issues);
    } catch (error) {
      checks.push({ category: C.playbook, item: pbItem, status: "fail", message: messageOf(error), details: { path: ldb.path } });
      issues.push({
        id: `corrupt-${layer}-playbook`,
        description: `Repair the playbook records in ${ldb.path}`,
        category: C.playbook,
        severity: "fail",
        safety: "manual",
        howToFix: [`Restore ${ldb.path} from a backup (${ldb.path}.backup.<timestamp>), or fix the damaged row with the sqlite3 shell.`],
      });
    }
  }

  /**
   * Playbook changes without a journal event (docs/adr/0012-journal-crash-safety.md). A crash cannot
   * leave one here (rows and events commit together), but data imported or migrated from a YAML
   * store written by an older build can carry one.
   */
  function inspectJournalCoverage(layer: Layer, ldb: LayerDatabase, playbook: Playbook, checks: HealthCheck[], issues: FixableIssue[]): void {
    const events = readJournalEvents(ldb);
    if (events.length === 0) return;
    const item = layer === "global" ? "Global journal coverage" : "Repo journal coverage";
    const gaps = findJournalGaps(playbook, events);
    if (gaps.length === 0) {
      checks.push({ category: C.journal, item, status: "pass", message: "Every playbook change has its journal event", details: { path: ldb.path } });
      return;
    }
    const listed = gaps.slice(0, 10).map((g) => `${g.bulletId} (${g.kinds.join(", ")})`);
    checks.push({
      category: C.journal,
      item,
      status: "warn",
      message: `${gaps.length} rule(s) changed without a journal event: ${listed.join(", ")}${gaps.length > listed.length ? ", …" : ""}; 'cm history' and 'cm undo' cannot see those changes`,
      details: { path: ldb.path, gaps },
    });
    issues.push({
      id: `repair-journal-gaps-${layer}`,
      description: `Add ${gaps.length} reconstructed journal event(s) to ${ldb.path} (the database is backed up first)`,
      category: C.journal,
      severity: "warn",
      safety: "safe",
    });
  }

  function readJournalEvents(ldb: LayerDatabase): JournalEvent[] {
    const lines = ldb.read((db) => db.prepare("SELECT event FROM journal ORDER BY seq").pluck().all() as string[], []);
    const events: JournalEvent[] = [];
    for (const line of lines) {
      try {
        const parsed = JournalEventSchema.safeParse(JSON.parse(line));
        if (parsed.success) events.push(parsed.data);
      } catch {
        // reported by the database check
      }
    }
    return events;
  }

  async function repairJournalGaps(id: string, layer: Layer): Promise<FixResult> {
    const ldb = databases[layer];
    if (ldb === null || !ldb.exists()) return { id, success: false, message: `No ${layer} database` };
    const stored = ldb.read((db) => readStoredPlaybook(db, ldb.path, layer), null);
    if (stored === null) return { id, success: true, message: "No playbook; nothing to repair" };
    if (findJournalGaps(stored.playbook, readJournalEvents(ldb)).length === 0) return { id, success: true, message: "Every playbook change has its journal event" };
    const backup = `${ldb.path}.backup.${Date.now()}`;
    await (ldb.connection(false) as unknown as { backup(path: string): Promise<unknown> }).backup(backup);
    const added = await ldb.write((db) => {
      // Re-checked inside the write transaction: another process may have changed either meanwhile.
      const current = readStoredPlaybook(db, ldb.path, layer);
      if (current === null) return 0;
      const lines = db.prepare("SELECT event FROM journal ORDER BY seq").pluck().all() as string[];
      const events: JournalEvent[] = [];
      for (const line of lines) {
        try {
          const parsed = JournalEventSchema.safeParse(JSON.parse(line));
          if (parsed.success) events.push(parsed.data);
        } catch {
          // skipped, as readJournal skips it
        }
      }
      const repaired = reconstructGapEvents(current.playbook, findJournalGaps(current.playbook, events), {
        layer,
        timestamp: new Date().toISOString(),
        nextId: () => randomBytes(6).toString("hex"),
      });
      const insert = db.prepare("INSERT INTO journal (bullet_id, timestamp, event) VALUES (?, ?, ?)");
      for (const event of repaired) insert.run(event.bulletId, event.timestamp, JSON.stringify(event));
      return repaired.length;
    });
    return { id, success: true, message: `Added ${added} reconstructed journal event(s) to ${ldb.path} (backup: ${backup})`, backups: [backup] };
  }

  async function diagnose(): Promise<StoreDiagnosis> {
    const checks: HealthCheck[] = [];
    const issues: FixableIssue[] = [];
    const globalInfo = await stat(globalDir).catch(() => null);
    if (globalInfo === null || !globalInfo.isDirectory()) {
      checks.push({ category: C.global, item: "Structure", status: "fail", message: `Global directory does not exist: ${globalDir}`, details: { path: globalDir } });
      issues.push({ id: "missing-global-dir", description: `Create the global directory ${globalDir} (mode 0700)`, category: C.global, severity: "fail", safety: "safe" });
    } else {
      const writable = await access(globalDir, fsConstants.W_OK | fsConstants.X_OK).then(
        () => true,
        () => false,
      );
      checks.push(
        writable
          ? { category: C.global, item: "Structure", status: "pass", message: "Global directory present and writable", details: { path: globalDir } }
          : { category: C.global, item: "Structure", status: "fail", message: `${globalDir} is not writable`, details: { path: globalDir } },
      );
    }

    const config = await inspectConfig();
    if (config.kind === "missing") {
      checks.push({ category: C.config, item: "config.json", status: "warn", message: `No ${configPath} (defaults apply)`, details: { path: configPath } });
      issues.push({ id: "missing-config", description: `Write the default configuration to ${configPath}`, category: C.global, severity: "warn", safety: "safe" });
    } else if (config.kind === "ok") {
      checks.push({ category: C.config, item: "config.json", status: "pass", message: "Global config.json is valid JSON", details: { path: configPath } });
    } else if (config.kind === "unreadable") {
      checks.push({ category: C.config, item: "config.json", status: "fail", message: `Cannot read ${configPath}: ${config.error}`, details: { path: configPath } });
    } else {
      checks.push({ category: C.config, item: "config.json", status: "fail", message: `Global config.json is invalid: ${config.problem}`, details: { path: configPath } });
      issues.push({ id: "reset-config", description: `Back up ${configPath} and replace it with the default configuration`, category: C.config, severity: "fail", safety: "cautious" });
    }

    inspectDatabase("global", databases.global, checks, issues);
    if (databases.repo !== null) inspectDatabase("repo", databases.repo, checks, issues);

    const locks = await abandonedLocks(globalDir);
    if (locks.length > 0) {
      checks.push({ category: C.locks, item: "Locks", status: "warn", message: `${locks.length} lock(s) left by processes that are gone`, details: { locks } });
      issues.push({ id: "remove-abandoned-locks", description: `Remove ${locks.map((l) => l.lockDir).join(", ")}`, category: C.locks, severity: "warn", safety: "safe" });
    } else {
      checks.push({ category: C.locks, item: "Locks", status: "pass", message: "No abandoned locks" });
    }
    return { checks, fixableIssues: issues };
  }

  async function applyFix(id: string): Promise<FixResult> {
    try {
      switch (id) {
        case "missing-global-dir": {
          await mkdir(globalDir, { recursive: true, mode: 0o700 });
          return { id, success: true, message: `Created ${globalDir}` };
        }
        case "missing-config":
        case "reset-config":
          return await withLock(
            configPath,
            async () => {
              const state = await inspectConfig();
              if (state.kind === "ok") return { id, success: true, message: `${configPath} is valid; nothing to do` };
              const content = JSON.stringify(defaultConfig(), null, 2);
              if (state.kind === "missing") {
                await atomicWriteFile(configPath, content);
                return { id, success: true, message: `Wrote the default configuration to ${configPath}` };
              }
              if (id === "missing-config") return { id, success: false, message: `${configPath} exists but is invalid; use the reset-config fix` };
              const backup = await backupFile(configPath);
              await atomicWriteFile(configPath, content);
              return { id, success: true, message: `Reset ${configPath} to the defaults (backup: ${backup})`, backups: [backup] };
            },
            dirLock,
          );
        case "missing-global-database": {
          const existed = databases.global.exists();
          await options.createDatabase("global");
          return { id, success: true, message: existed ? `${databases.global.path} already exists` : `Created ${databases.global.path}` };
        }
        case "remove-abandoned-locks": {
          const removed: string[] = [];
          for (const { lockDir } of await abandonedLocks(globalDir)) {
            const aside = `${lockDir}.removed.${Date.now()}`;
            try {
              await rename(lockDir, aside);
            } catch {
              continue; // already gone
            }
            // Re-checked after the move: a live process may have taken the lock over meanwhile.
            const pid = Number.parseInt((await readFile(join(aside, "pid"), "utf8").catch(() => "")).trim(), 10);
            if (Number.isInteger(pid) && pid > 0 && isProcessAlive(pid)) {
              await rename(aside, lockDir).catch(() => undefined);
              continue;
            }
            await rm(aside, { recursive: true, force: true });
            removed.push(lockDir);
          }
          return { id, success: true, message: removed.length > 0 ? `Removed ${removed.join(", ")}` : "No abandoned locks left" };
        }
        case "repair-journal-gaps-global":
          return await repairJournalGaps(id, "global");
        case "repair-journal-gaps-repo":
          return await repairJournalGaps(id, "repo");
        default:
          return { id, success: false, message: `Unknown fix: ${id}` };
      }
    } catch (error) {
      return { id, success: false, message: isAppError(error) || error instanceof AppError ? error.message : messageOf(error) };
    }
  }

  return { diagnose, applyFix };
}
