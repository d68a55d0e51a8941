import { randomBytes } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import type { Stats } from "node:fs";
import { access, chmod, copyFile, link, lstat, mkdir, readFile, rename, rm, stat, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import {
  AppError,
  ConfigSchema,
  JournalEventSchema,
  PLAYBOOK_SCHEMA_VERSION,
  createEmptyPlaybook,
  defaultConfig,
  findJournalGaps,
  formatZodIssues,
  isAppError,
  isPlainObject,
  parseJsonLines,
  reconstructGapEvents,
} from "@cass-memory/core";
import type { FixResult, FixableIssue, HealthCheck, JournalEvent, Layer, Logger, Playbook, StoreDiagnosis } from "@cass-memory/core";
import { FILE_MODE, atomicWriteFile } from "@cass-memory/node-files";
import { appendJsonl, listDir } from "@cass-memory/node-files";
import { INTENT_FILE, intentPathFor, judgeIntent, pendingView, readBytesOrNull, readIntent, settleIntent } from "./journal-intent.js";
import { sha256Hex } from "./parse-cache.js";
import { DEFAULT_LOCK_STALE_MS, isProcessAlive, withLock } from "@cass-memory/node-files";
import type { LockOptions } from "@cass-memory/node-files";
import { REPO_PLAYBOOK_HEADER, decodePlaybook, leadingComments, toYaml } from "./yaml-codec.js";

/**
 * Storage diagnostics of the YAML store for `cm doctor` (reference §1.5.13, §4.1, §4.11): the
 * layout of the global directory and of `<repo>/.cass/`, file permissions, each playbook's schema,
 * `config.json`, the audit journals, and debris left by crashed writers (lock directories
 * `<file>.lock.d` and temp files `<file>.tmp.<16 hex>`). Every fix re-checks its condition when it
 * runs (so applying it twice is harmless), backs up any file it rewrites to
 * `<file>.backup.<epoch-ms>`, and never deletes data.
 */

export interface YamlDiagnosticsOptions {
  globalDir: string;
  globalPlaybook: string;
  diaryDir: string;
  repoDir: string | null;
  logger: Logger;
  lockOptions: LockOptions;
}

export interface YamlDiagnostics {
  diagnose(): Promise<StoreDiagnosis>;
  applyFix(id: string): Promise<FixResult>;
}

/** Category names as the original reports them. */
export const DIAGNOSTIC_CATEGORIES = {
  global: "Global Storage (~/.cass-memory)",
  config: "Configuration",
  playbook: "Playbook",
  repo: "Repo .cass/ Structure",
  locks: "Locks and Temp Files",
  journal: "Audit Journal",
} as const;

/** Content of the `.cass/.gitignore` written by the `missing-repo-cass-dir` fix. */
export const REPO_GITIGNORE = "# cass-memory: local files that should not be committed\ndiary/\n*.tmp\n*.tmp.*\n*.lock.d/\nevents.pending.json*\n";

const JOURNAL_FILE = "events.jsonl";
const TEMP_NAME = /^(.+)\.tmp\.[0-9a-f]{16}$/;
const ASIDE_NAME = /\.lock\.d\.stale\.[0-9a-f]+$/;
const MAX_LISTED_LINES = 10;

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch {
    return null;
  }
}

async function canAccess(path: string, mode: number): Promise<boolean> {
  try {
    await access(path, mode);
    return true;
  } catch {
    return false;
  }
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch {
    return null;
  }
}

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, "0");
}

/**
 * Copies `file` to `<file>.backup.<epoch-ms>`, never overwriting an earlier backup (the millisecond
 * is bumped until the name is free). Returns the backup's path.
 */
export async function backupFile(file: string): Promise<string> {
  for (let ms = Date.now(); ; ms += 1) {
    const backup = `${file}.backup.${ms}`;
    try {
      await copyFile(file, backup, fsConstants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if (errnoOf(error) !== "EEXIST") {
        throw new AppError("FILE_WRITE_FAILED", `Could not back up ${file}: ${messageOf(error)}`, {
          hint: `Check that ${file} is readable and its directory writable.`,
          details: { path: file },
          cause: error,
        });
      }
    }
  }
}

/** Moves `from` to `<base>.<epoch-ms>` without ever replacing an existing file; returns the new path. */
async function moveToFreeName(from: string, base: string): Promise<string> {
  for (let ms = Date.now(); ; ms += 1) {
    const target = `${base}.${ms}`;
    try {
      await link(from, target);
    } catch (error) {
      if (errnoOf(error) === "EEXIST") continue;
      throw error;
    }
    await unlink(from);
    return target;
  }
}

/** The newest `<file>.backup.<ms>` next to `file`, or null. */
async function newestBackup(file: string): Promise<string | null> {
  const names = await listDir(dirname(file));
  const prefix = `${basename(file)}.backup.`;
  let best: { name: string; ms: number } | null = null;
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const ms = Number(name.slice(prefix.length));
    if (Number.isFinite(ms) && (best === null || ms > best.ms)) best = { name, ms };
  }
  return best === null ? null : join(dirname(file), best.name);
}

// ------------------------------------------------------------------------------------------------
// Lock debris

export type DebrisKind = "lock" | "temp" | "aside";

export interface DebrisItem {
  kind: DebrisKind;
  path: string;
  /** The file the lock or temp file belongs to. */
  target: string;
  ageMs: number;
  pid: number | null;
  /** Whether the holder's process exists (null when no pid is recorded). */
  alive: boolean | null;
  /** True when removing it cannot disturb a running process. */
  removable: boolean;
  reason: string;
}

function parsePid(text: string | null): number | null {
  if (text === null) return null;
  const pid = Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/**
 * Whether a recorded pid belongs to a running process. This process's own pid counts as alive: a
 * lock it holds is in use, and one left by an earlier process with the same pid cannot be told
 * apart safely here (the lock code itself recognises those).
 */
function holderAlive(pid: number): boolean {
  return pid === process.pid || isProcessAlive(pid);
}

async function judgeLock(lockDir: string, staleMs: number, now: number): Promise<DebrisItem | null> {
  const info = await statOrNull(lockDir);
  if (info === null || !info.isDirectory()) return null;
  const pid = parsePid(await readTextOrNull(join(lockDir, "pid")));
  const ageMs = Math.max(0, now - info.mtimeMs);
  const target = lockDir.slice(0, -".lock.d".length);
  const base = { kind: "lock" as const, path: lockDir, target, ageMs, pid };
  if (pid !== null) {
    const alive = holderAlive(pid);
    if (!alive) return { ...base, alive, removable: true, reason: `holder pid ${pid} is not running` };
    if (ageMs > staleMs) {
      return { ...base, alive, removable: false, reason: `held by running pid ${pid} but not refreshed for ${Math.round(ageMs / 1000)} s` };
    }
    return { ...base, alive, removable: false, reason: `in use by pid ${pid}` };
  }
  if (ageMs > staleMs) return { ...base, alive: null, removable: true, reason: `no holder recorded and older than ${Math.round(staleMs / 1000)} s` };
  return { ...base, alive: null, removable: false, reason: "being created" };
}

/** Whether the lock of `target` is currently held (or being taken) by a live writer. */
async function lockInUse(target: string, staleMs: number, now: number): Promise<boolean> {
  const verdict = await judgeLock(`${target}.lock.d`, staleMs, now);
  return verdict !== null && !verdict.removable;
}

async function judgeEntry(dir: string, name: string, staleMs: number, now: number): Promise<DebrisItem | null> {
  const path = join(dir, name);
  if (name.endsWith(".lock.d")) return judgeLock(path, staleMs, now);
  if (ASIDE_NAME.test(name)) {
    const info = await statOrNull(path);
    if (info === null || !info.isDirectory()) return null;
    const ageMs = Math.max(0, now - info.mtimeMs);
    const target = path.replace(/\.lock\.d\.stale\.[0-9a-f]+$/, "");
    const removable = ageMs > staleMs;
    return { kind: "aside", path, target, ageMs, pid: parsePid(await readTextOrNull(join(path, "pid"))), alive: null, removable, reason: removable ? "lock moved aside during stale-lock removal and left behind" : "stale-lock removal in progress" };
  }
  const temp = TEMP_NAME.exec(name);
  if (temp) {
    const info = await statOrNull(path);
    if (info === null || !info.isFile()) return null;
    const target = join(dir, temp[1]!);
    const ageMs = Math.max(0, now - info.mtimeMs);
    if (await lockInUse(target, staleMs, now)) {
      return { kind: "temp", path, target, ageMs, pid: null, alive: true, removable: false, reason: "its file is being written" };
    }
    if (ageMs <= staleMs) return { kind: "temp", path, target, ageMs, pid: null, alive: null, removable: false, reason: "recent; a write may be in progress" };
    return { kind: "temp", path, target, ageMs, pid: null, alive: false, removable: true, reason: "left by an interrupted atomic write" };
  }
  return null;
}

// ------------------------------------------------------------------------------------------------

export function createYamlDiagnostics(options: YamlDiagnosticsOptions): YamlDiagnostics {
  const { globalDir, globalPlaybook, diaryDir, repoDir, logger, lockOptions } = options;
  const staleMs = lockOptions.staleMs ?? DEFAULT_LOCK_STALE_MS;
  const configPath = join(globalDir, "config.json");
  const globalBlocked = join(globalDir, "blocked.log");
  const repoPlaybook = repoDir === null ? null : join(repoDir, "playbook.yaml");
  const playbookOf = (layer: Layer): string | null => (layer === "global" ? globalPlaybook : repoPlaybook);
  const C = DIAGNOSTIC_CATEGORIES;

  /** Directories whose entries may hold lock directories and temp files. */
  function scannedDirs(): string[] {
    const dirs = [globalDir, ...["reflections", "embeddings", "cost", "starters"].map((d) => join(globalDir, d)), dirname(globalPlaybook), diaryDir];
    if (repoDir !== null) dirs.push(repoDir);
    return [...new Set(dirs)];
  }

  async function scanDebris(): Promise<DebrisItem[]> {
    const now = Date.now();
    const items: DebrisItem[] = [];
    for (const dir of scannedDirs()) {
      for (const name of await listDir(dir)) {
        if (!name.includes(".lock.d") && !name.includes(".tmp.")) continue;
        const item = await judgeEntry(dir, name, staleMs, now);
        if (item !== null) items.push(item);
      }
    }
    return items;
  }

  type PlaybookState =
    | { kind: "missing" }
    | { kind: "unreadable"; error: string }
    | { kind: "corrupt"; message: string; line?: number }
    | { kind: "ok"; playbook: Playbook };

  async function inspectPlaybook(path: string, layer: Layer): Promise<PlaybookState> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return { kind: "missing" };
      return { kind: "unreadable", error: messageOf(error) };
    }
    try {
      // Decoded directly, never through the parse cache: diagnosing must not write anything.
      return { kind: "ok", playbook: decodePlaybook(text, path, layer) };
    } catch (error) {
      if (isAppError(error)) {
        const line = (error.details as { line?: unknown } | undefined)?.line;
        return { kind: "corrupt", message: error.message, ...(typeof line === "number" ? { line } : {}) };
      }
      return { kind: "corrupt", message: messageOf(error) };
    }
  }

  type ConfigState = { kind: "missing" } | { kind: "unreadable"; error: string } | { kind: "invalid"; problem: string } | { kind: "ok" };

  async function inspectConfig(): Promise<ConfigState> {
    let text: string;
    try {
      text = await readFile(configPath, "utf8");
    } catch (error) {
      if (errnoOf(error) === "ENOENT") return { kind: "missing" };
      return { kind: "unreadable", error: messageOf(error) };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { kind: "invalid", problem: `not valid JSON (${messageOf(error)})` };
    }
    if (!isPlainObject(parsed)) return { kind: "invalid", problem: "not a JSON object" };
    const checked = ConfigSchema.safeParse(parsed);
    if (!checked.success) return { kind: "invalid", problem: `schema validation failed: ${formatZodIssues(checked.error)}` };
    return { kind: "ok" };
  }

  /** The events of a journal file as readers see them: its valid lines plus a pending intent's completion. */
  async function journalAsRead(playbookPath: string, journalPath: string): Promise<JournalEvent[]> {
    const bytes = await readBytesOrNull(journalPath);
    const events: JournalEvent[] = [];
    if (bytes !== null) {
      for (const value of parseJsonLines(bytes.toString("utf8")).values) {
        const parsed = JournalEventSchema.safeParse(value);
        if (parsed.success) events.push(parsed.data);
      }
    }
    events.push(...(await pendingView(playbookPath, journalPath, bytes)).extra);
    return events;
  }

  /**
   * Interrupted changes and gaps between a playbook and its journal (docs/adr/0012-journal-crash-safety.md):
   * a pending intent (settled by the next write, or by `--fix`), intents set aside as unresolved
   * (manual), and playbook changes that no event records (`--fix` appends reconstructed events).
   */
  async function reportJournalConsistency(layer: Layer, checks: HealthCheck[], issues: FixableIssue[]): Promise<void> {
    const playbookPath = playbookOf(layer);
    if (playbookPath === null) return;
    const journalPath = join(dirname(playbookPath), JOURNAL_FILE);
    const intentPath = intentPathFor(journalPath);
    const where = layer === "global" ? "Global" : "Repo .cass/";
    const read = await readIntent(intentPath);
    if (read !== null) {
      let outcome: string;
      if ("invalid" in read) outcome = `it is unreadable (${read.invalid}) and will be set aside`;
      else {
        const playbook = await readBytesOrNull(playbookPath).catch(() => null);
        const judged = judgeIntent(read.intent, playbook === null ? null : sha256Hex(playbook), await readBytesOrNull(journalPath).catch(() => null));
        outcome =
          judged.kind === "complete"
            ? `the playbook holds the change: its ${judged.missing.length} missing event(s) will be appended`
            : judged.kind === "discard"
              ? "the playbook write never happened: it will be discarded"
              : `${judged.why}: it will be set aside for you to inspect`;
      }
      checks.push({
        category: C.journal,
        item: `${where} interrupted change`,
        status: "warn",
        message: `A write was interrupted and left ${INTENT_FILE}; ${outcome} (the next write does this too)`,
        details: { path: intentPath },
      });
      issues.push({
        id: `settle-journal-intent-${layer}`,
        description: `Settle the interrupted change in ${intentPath} (the journal and the intent are backed up first)`,
        category: C.journal,
        severity: "warn",
        safety: "safe",
      });
    }
    const aside = (await listDir(dirname(journalPath))).filter((name) => name.startsWith(`${INTENT_FILE}.unresolved.`));
    if (aside.length > 0) {
      checks.push({
        category: C.journal,
        item: `${where} unresolved interrupted changes`,
        status: "warn",
        message: `${aside.length} interrupted change${aside.length === 1 ? "" : "s"} could not be settled automatically (the playbook was replaced since): ${aside.join(", ")}`,
        details: { paths: aside.map((name) => join(dirname(journalPath), name)) },
      });
      issues.push({
        id: `unresolved-journal-intent-${layer}`,
        description: `Inspect ${aside.join(", ")} in ${dirname(journalPath)}`,
        category: C.journal,
        severity: "warn",
        safety: "manual",
        howToFix: [
          "Each file holds the journal events of a change (`events`) and the SHA-256 of the playbook before and after it.",
          `If the change is in ${playbookPath}, append its events to ${journalPath} (one JSON object per line); then delete the file.`,
        ],
      });
    }
    const state = await inspectPlaybook(playbookPath, layer);
    if (state.kind !== "ok") return;
    const events = await journalAsRead(playbookPath, journalPath).catch(() => null);
    if (events === null || events.length === 0) return;
    const gaps = findJournalGaps(state.playbook, events);
    if (gaps.length === 0) {
      checks.push({ category: C.journal, item: `${where} journal coverage`, status: "pass", message: "Every playbook change has its journal event", details: { path: journalPath } });
      return;
    }
    const listed = gaps.slice(0, MAX_LISTED_LINES).map((g) => `${g.bulletId} (${g.kinds.join(", ")})`);
    checks.push({
      category: C.journal,
      item: `${where} journal coverage`,
      status: "warn",
      message: `${gaps.length} rule${gaps.length === 1 ? " was" : "s were"} changed without a journal event: ${listed.join(", ")}${gaps.length > listed.length ? ", …" : ""}; 'cm history' and 'cm undo' cannot see ${gaps.length === 1 ? "that change" : "those changes"}`,
      details: { path: journalPath, gaps },
    });
    issues.push({
      id: `repair-journal-gaps-${layer}`,
      description: `Append ${gaps.length} reconstructed event${gaps.length === 1 ? "" : "s"} to ${journalPath} (backed up first)`,
      category: C.journal,
      severity: "warn",
      safety: "safe",
    });
  }

  async function diagnose(): Promise<StoreDiagnosis> {
    const checks: HealthCheck[] = [];
    const issues: FixableIssue[] = [];
    const globalInfo = await statOrNull(globalDir);
    const globalExists = globalInfo !== null && globalInfo.isDirectory();

    // -- global structure
    const configState = await inspectConfig();
    const globalPlaybookState = await inspectPlaybook(globalPlaybook, "global");
    const blockedExists = (await statOrNull(globalBlocked)) !== null;
    const diaryInfo = await statOrNull(diaryDir);
    const diaryExists = diaryInfo !== null && diaryInfo.isDirectory();
    const missing: string[] = [];
    if (globalPlaybookState.kind === "missing") missing.push(dirname(globalPlaybook) === globalDir ? "playbook.yaml" : globalPlaybook);
    if (configState.kind === "missing") missing.push("config.json");
    if (!diaryExists) missing.push(dirname(diaryDir) === globalDir ? `${basename(diaryDir)}/` : `${diaryDir}/`);
    if (!blockedExists) missing.push("blocked.log");
    if (!globalExists) {
      checks.push({
        category: C.global,
        item: "Structure",
        status: "fail",
        message: `Global directory does not exist: ${globalDir}`,
        details: { path: globalDir, missing },
      });
      issues.push({ id: "missing-global-dir", description: `Create the global directory ${globalDir} (mode 0700)`, category: C.global, severity: "fail", safety: "safe" });
    } else if (missing.length > 0) {
      checks.push({ category: C.global, item: "Structure", status: "warn", message: `Missing: ${missing.join(", ")}`, details: { path: globalDir, missing } });
    } else {
      checks.push({ category: C.global, item: "Structure", status: "pass", message: "All files and directories present", details: { path: globalDir } });
    }
    if (configState.kind === "missing") {
      issues.push({ id: "missing-config", description: `Write the default configuration to ${configPath}`, category: C.global, severity: "warn", safety: "safe" });
    }
    if (globalPlaybookState.kind === "missing") {
      issues.push({ id: "missing-playbook", description: `Create an empty playbook at ${globalPlaybook}`, category: C.playbook, severity: "warn", safety: "safe" });
    }
    if (!blockedExists) {
      issues.push({ id: "missing-blocked-log", description: `Create an empty ${globalBlocked}`, category: C.global, severity: "warn", safety: "safe" });
    }
    if (!diaryExists) {
      issues.push({ id: "missing-diary-dir", description: `Create the diary directory ${diaryDir}`, category: C.global, severity: "warn", safety: "safe" });
    }

    // -- permissions (global layer only: repo files are shared through git and may be 0644)
    if (globalExists) {
      const problems: string[] = [];
      const loose: Array<{ path: string; mode: string }> = [];
      if (!(await canAccess(globalDir, fsConstants.W_OK | fsConstants.X_OK))) problems.push(`${globalDir} is not writable`);
      const privateFiles = [configPath, globalPlaybook, globalBlocked];
      for (const file of privateFiles) {
        const info = await statOrNull(file);
        if (info === null || !info.isFile()) continue;
        if (!(await canAccess(file, fsConstants.R_OK | fsConstants.W_OK))) problems.push(`${file} is not readable and writable`);
        if ((info.mode & 0o077) !== 0) loose.push({ path: file, mode: octal(info.mode) });
      }
      if (problems.length > 0) {
        checks.push({ category: C.global, item: "Permissions", status: "fail", message: problems.join("; "), details: { problems, loose } });
      } else if (loose.length > 0) {
        checks.push({
          category: C.global,
          item: "Permissions",
          status: "warn",
          message: `Readable by other users: ${loose.map((l) => `${basename(l.path)} (${l.mode})`).join(", ")}; expected 0600`,
          details: { loose },
        });
      } else {
        checks.push({ category: C.global, item: "Permissions", status: "pass", message: "Directory writable; files private (0600)" });
      }
      if (loose.length > 0) {
        issues.push({
          id: "fix-file-permissions",
          description: `Restrict ${loose.map((l) => basename(l.path)).join(", ")} to mode 0600 (contents unchanged)`,
          category: C.global,
          severity: "warn",
          safety: "safe",
        });
      }
    }

    // -- config.json (only when present, as the original)
    if (configState.kind === "ok") {
      checks.push({ category: C.config, item: "config.json", status: "pass", message: "Global config.json is valid JSON", details: { path: configPath } });
    } else if (configState.kind === "unreadable") {
      checks.push({ category: C.config, item: "config.json", status: "fail", message: `Cannot read ${configPath}: ${configState.error}`, details: { path: configPath } });
    } else if (configState.kind === "invalid") {
      checks.push({ category: C.config, item: "config.json", status: "fail", message: `Global config.json is invalid: ${configState.problem}`, details: { path: configPath } });
      issues.push({
        id: "reset-config",
        description: `Back up ${configPath} and replace it with the default configuration`,
        category: C.config,
        severity: "fail",
        safety: "cautious",
      });
    }

    // -- playbooks
    const reportPlaybook = async (layer: Layer, path: string, state: PlaybookState): Promise<void> => {
      const item = layer === "global" ? "Global playbook.yaml" : "Repo .cass/playbook.yaml";
      // A missing playbook is reported by the structure checks.
      if (state.kind === "missing") return;
      if (state.kind === "unreadable") {
        checks.push({ category: C.playbook, item, status: "fail", message: `Cannot read ${path}: ${state.error}`, details: { path } });
        return;
      }
      if (state.kind === "corrupt") {
        checks.push({ category: C.playbook, item, status: "fail", message: state.message, details: { path, ...(state.line !== undefined ? { line: state.line } : {}) } });
        const backup = await newestBackup(path);
        issues.push({
          id: `repair-playbook-${layer}`,
          description: `Repair ${path}${state.line !== undefined ? ` (problem at line ${state.line})` : ""}`,
          category: C.playbook,
          severity: "fail",
          safety: "manual",
          howToFix: [
            `Fix ${path}${state.line !== undefined ? ` at line ${state.line}` : ""} by hand (cm never overwrites a playbook it cannot read).`,
            backup !== null ? `Or restore the newest backup: cp '${backup}' '${path}'` : `Or restore it from version control or a backup (${basename(path)}.backup.<epoch-ms>).`,
          ],
        });
        return;
      }
      const version = state.playbook.schema_version;
      const count = state.playbook.bullets.length;
      if (version < PLAYBOOK_SCHEMA_VERSION) {
        checks.push({
          category: C.playbook,
          item,
          status: "warn",
          message: `Schema version ${version} is outdated (current: ${PLAYBOOK_SCHEMA_VERSION})`,
          details: { path, schemaVersion: version, bullets: count },
        });
        issues.push({
          id: `migrate-playbook-schema-${layer}`,
          description: `Back up ${path} and set schema_version to ${PLAYBOOK_SCHEMA_VERSION} (rules unchanged)`,
          category: C.playbook,
          severity: "warn",
          safety: "safe",
        });
      } else {
        checks.push({ category: C.playbook, item, status: "pass", message: `Schema version ${version} (${count} rule${count === 1 ? "" : "s"})`, details: { path, schemaVersion: version, bullets: count } });
      }
    };
    await reportPlaybook("global", globalPlaybook, globalPlaybookState);

    // -- repo layer
    if (repoDir === null || repoPlaybook === null) {
      checks.push({ category: C.repo, item: "Availability", status: "warn", message: "Not in a git repository. Repo-level memory not available." });
    } else {
      const repoInfo = await statOrNull(repoDir);
      if (repoInfo === null || !repoInfo.isDirectory()) {
        checks.push({ category: C.repo, item: "Structure", status: "warn", message: "Not initialized. Run `cm init --repo` to enable repo-level memory.", details: { path: repoDir } });
        issues.push({
          id: "missing-repo-cass-dir",
          description: `Create ${repoDir} with playbook.yaml, blocked.log and .gitignore`,
          category: C.repo,
          severity: "warn",
          safety: "safe",
        });
      } else {
        const repoMissing: string[] = [];
        for (const name of ["playbook.yaml", "blocked.log"]) if ((await statOrNull(join(repoDir, name))) === null) repoMissing.push(name);
        if (repoMissing.length > 0) {
          checks.push({ category: C.repo, item: "Structure", status: "warn", message: `Partial setup. Missing: ${repoMissing.join(", ")}`, details: { path: repoDir, missing: repoMissing } });
          issues.push({
            id: "missing-repo-cass-dir",
            description: `Create the missing ${repoMissing.join(", ")} in ${repoDir}`,
            category: C.repo,
            severity: "warn",
            safety: "safe",
          });
        } else {
          checks.push({ category: C.repo, item: "Structure", status: "pass", message: "Complete (.cass/playbook.yaml and .cass/blocked.log present)", details: { path: repoDir } });
        }
        await reportPlaybook("repo", repoPlaybook, await inspectPlaybook(repoPlaybook, "repo"));
      }
    }

    // -- lock debris and orphan temp files
    const debris = await scanDebris();
    const removable = debris.filter((d) => d.removable);
    const stuck = debris.filter((d) => !d.removable && d.reason.startsWith("held by running pid"));
    const inUse = debris.filter((d) => !d.removable && !stuck.includes(d));
    const describe = (d: DebrisItem) => ({ kind: d.kind, path: d.path, target: d.target, ageMs: Math.round(d.ageMs), pid: d.pid, alive: d.alive, reason: d.reason });
    if (removable.length > 0 || stuck.length > 0) {
      const parts: string[] = [];
      const locks = removable.filter((d) => d.kind !== "temp").length;
      const temps = removable.filter((d) => d.kind === "temp").length;
      if (locks > 0) parts.push(`${locks} abandoned lock${locks === 1 ? "" : "s"}`);
      if (temps > 0) parts.push(`${temps} orphan temp file${temps === 1 ? "" : "s"}`);
      if (stuck.length > 0) parts.push(`${stuck.length} lock${stuck.length === 1 ? "" : "s"} held by a running process without heartbeat`);
      checks.push({
        category: C.locks,
        item: "Lock debris",
        status: "warn",
        message: `Found ${parts.join(", ")}: ${[...removable, ...stuck].map((d) => basename(d.path)).join(", ")}`,
        details: { items: [...removable, ...stuck, ...inUse].map(describe) },
      });
    } else {
      checks.push({
        category: C.locks,
        item: "Lock debris",
        status: "pass",
        message: inUse.length > 0 ? `No debris (${inUse.length} lock/temp file${inUse.length === 1 ? "" : "s"} in use)` : "No stale locks or orphan temp files",
        ...(inUse.length > 0 ? { details: { items: inUse.map(describe) } } : {}),
      });
    }
    if (removable.length > 0) {
      issues.push({
        id: "remove-lock-debris",
        description: `Remove ${removable.length} abandoned lock/temp item${removable.length === 1 ? "" : "s"} (only those whose writer is no longer running)`,
        category: C.locks,
        severity: "warn",
        safety: "safe",
      });
    }

    // -- audit journals
    for (const layer of ["global", "repo"] as const) {
      const playbookPath = playbookOf(layer);
      if (playbookPath === null) continue;
      const path = join(dirname(playbookPath), JOURNAL_FILE);
      const text = await readTextOrNull(path);
      if (text === null) continue;
      const item = layer === "global" ? `Global ${JOURNAL_FILE}` : `Repo .cass/${JOURNAL_FILE}`;
      const bad: number[] = [];
      let events = 0;
      const lines = text.split("\n");
      lines.forEach((raw, index) => {
        const line = raw.trim();
        if (line === "") return;
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          bad.push(index + 1);
          return;
        }
        if (JournalEventSchema.safeParse(value).success) events += 1;
        else bad.push(index + 1);
      });
      if (bad.length > 0) {
        const torn = !text.endsWith("\n") && bad[bad.length - 1] === lines.length;
        checks.push({
          category: C.journal,
          item,
          status: "warn",
          message: `${bad.length} malformed line${bad.length === 1 ? "" : "s"} (line${bad.length === 1 ? "" : "s"} ${bad.slice(0, MAX_LISTED_LINES).join(", ")}${bad.length > MAX_LISTED_LINES ? ", …" : ""})${torn ? "; the last line is torn" : ""}; they are skipped when reading`,
          details: { path, events, malformedLines: bad },
        });
      } else {
        checks.push({ category: C.journal, item, status: "pass", message: `${events} event${events === 1 ? "" : "s"}, all well-formed`, details: { path, events } });
      }
    }
    for (const layer of ["global", "repo"] as const) await reportJournalConsistency(layer, checks, issues);

    return { checks, fixableIssues: issues };
  }

  // ------------------------------------------------------------------------------------------------
  // Fixes

  /** Creates `path` with `content` unless it exists (under its lock); true when it was created. */
  async function createIfMissing(path: string, content: () => string): Promise<boolean> {
    return withLock(
      path,
      async () => {
        if ((await statOrNull(path)) !== null) return false;
        await atomicWriteFile(path, content());
        return true;
      },
      lockOptions,
    );
  }

  const emptyPlaybook = (layer: Layer): string =>
    (layer === "repo" ? REPO_PLAYBOOK_HEADER : "") + toYaml(createEmptyPlaybook(new Date().toISOString(), layer));

  async function migratePlaybook(id: string, layer: Layer): Promise<FixResult> {
    const path = playbookOf(layer);
    if (path === null) return { id, success: false, message: "Not in a git repository" };
    return withLock(
      path,
      async () => {
        const state = await inspectPlaybook(path, layer);
        if (state.kind !== "ok") return { id, success: false, message: `Cannot migrate ${path}: ${state.kind === "missing" ? "file does not exist" : state.kind === "corrupt" ? state.message : state.error}` };
        if (state.playbook.schema_version >= PLAYBOOK_SCHEMA_VERSION) {
          return { id, success: true, message: `${path} already has schema_version ${state.playbook.schema_version}` };
        }
        const text = await readFile(path, "utf8");
        const backup = await backupFile(path);
        const from = state.playbook.schema_version;
        const migrated = { ...state.playbook, schema_version: PLAYBOOK_SCHEMA_VERSION };
        await atomicWriteFile(path, leadingComments(text) + toYaml(migrated));
        return { id, success: true, message: `Migrated ${path} from schema_version ${from} to ${PLAYBOOK_SCHEMA_VERSION} (backup: ${backup})`, backups: [backup] };
      },
      lockOptions,
    );
  }

  async function resetConfig(id: string): Promise<FixResult> {
    return withLock(
      configPath,
      async () => {
        const state = await inspectConfig();
        if (state.kind === "ok") return { id, success: true, message: `${configPath} is valid; nothing to reset` };
        if (state.kind === "missing") {
          await atomicWriteFile(configPath, JSON.stringify(defaultConfig(), null, 2));
          return { id, success: true, message: `Wrote the default configuration to ${configPath}` };
        }
        const backup = await backupFile(configPath);
        await atomicWriteFile(configPath, JSON.stringify(defaultConfig(), null, 2));
        return { id, success: true, message: `Reset ${configPath} to the defaults (backup: ${backup})`, backups: [backup] };
      },
      lockOptions,
    );
  }

  async function fixPermissions(id: string): Promise<FixResult> {
    const changed: string[] = [];
    for (const file of [configPath, globalPlaybook, globalBlocked]) {
      const info = await statOrNull(file);
      if (info === null || !info.isFile() || (info.mode & 0o077) === 0) continue;
      await chmod(file, FILE_MODE);
      changed.push(`${basename(file)} (${octal(info.mode)} → 0600)`);
    }
    return { id, success: true, message: changed.length > 0 ? `Restricted ${changed.join(", ")}` : "File permissions already private" };
  }

  /** Removes a lock directory after moving it aside and checking it is still the one judged. */
  async function removeLockDir(item: DebrisItem): Promise<boolean> {
    const owner = await readTextOrNull(join(item.path, "owner"));
    const aside = `${item.path}.stale.${randomBytes(6).toString("hex")}`;
    try {
      await rename(item.path, aside);
    } catch {
      return false; // removed or replaced meanwhile
    }
    const ownerNow = await readTextOrNull(join(aside, "owner"));
    const pidNow = parsePid(await readTextOrNull(join(aside, "pid")));
    if (ownerNow === owner && pidNow === item.pid) {
      await rm(aside, { recursive: true, force: true });
      return true;
    }
    // A new holder took the lock between the check and the move: put it back.
    try {
      await rename(aside, item.path);
    } catch {
      logger.warn(`Could not restore lock ${item.path}; the new holder will recreate it.`);
    }
    return false;
  }

  /**
   * An orphan temp file may hold the only copy of a write that never completed its rename, so it
   * is deleted only when it is empty or identical to its file; otherwise it is kept as
   * `<file>.recovered.<epoch-ms>` for the user to inspect.
   */
  async function removeTemp(item: DebrisItem): Promise<{ removed: boolean; kept?: string }> {
    const content = await readFile(item.path).catch(() => null);
    if (content === null) return { removed: false };
    if (basename(item.target) === INTENT_FILE) {
      // An intent that never reached its name: its change was never written (journal-intent.ts).
      await unlink(item.path).catch(() => undefined);
      return { removed: true };
    }
    const target = await readFile(item.target).catch(() => null);
    if (content.length === 0 || (target !== null && target.equals(content))) {
      await unlink(item.path).catch(() => undefined);
      return { removed: true };
    }
    const kept = await moveToFreeName(item.path, `${item.target}.recovered`);
    return { removed: true, kept };
  }

  async function removeDebris(id: string): Promise<FixResult> {
    const debris = (await scanDebris()).filter((d) => d.removable);
    if (debris.length === 0) return { id, success: true, message: "No lock debris left" };
    const done: string[] = [];
    const kept: string[] = [];
    const skipped: string[] = [];
    for (const item of debris) {
      try {
        if (item.kind === "temp") {
          const result = await removeTemp(item);
          if (!result.removed) skipped.push(item.path);
          else if (result.kept) kept.push(`${item.path} → ${result.kept}`);
          else done.push(item.path);
        } else if (item.kind === "lock") {
          if (await removeLockDir(item)) done.push(item.path);
          else skipped.push(item.path);
        } else {
          await rm(item.path, { recursive: true, force: true });
          done.push(item.path);
        }
      } catch (error) {
        skipped.push(`${item.path} (${messageOf(error)})`);
      }
    }
    const parts: string[] = [];
    if (done.length > 0) parts.push(`Removed ${done.join(", ")}`);
    if (kept.length > 0) parts.push(`kept unfinished writes as ${kept.join(", ")}`);
    if (skipped.length > 0) parts.push(`left ${skipped.join(", ")} (changed meanwhile)`);
    return { id, success: skipped.length === 0, message: parts.join("; ") };
  }

  async function createRepoStructure(id: string): Promise<FixResult> {
    if (repoDir === null) return { id, success: false, message: "Not in a git repository" };
    await mkdir(repoDir, { recursive: true });
    const created: string[] = [];
    if (await createIfMissing(join(repoDir, "playbook.yaml"), () => emptyPlaybook("repo"))) created.push("playbook.yaml");
    if (await createIfMissing(join(repoDir, "blocked.log"), () => "")) created.push("blocked.log");
    const gitignore = join(repoDir, ".gitignore");
    if ((await lstat(gitignore).catch(() => null)) === null) {
      await atomicWriteFile(gitignore, REPO_GITIGNORE);
      created.push(".gitignore");
    }
    return { id, success: true, message: created.length > 0 ? `Created ${created.map((n) => join(repoDir, n)).join(", ")}` : `${repoDir} is complete` };
  }

  async function settleJournalIntent(id: string, layer: Layer): Promise<FixResult> {
    const playbookPath = playbookOf(layer);
    if (playbookPath === null) return { id, success: false, message: "Not in a git repository" };
    const journalPath = join(dirname(playbookPath), JOURNAL_FILE);
    const intentPath = intentPathFor(journalPath);
    return withLock(
      playbookPath,
      async () => {
        if ((await statOrNull(intentPath)) === null) return { id, success: true, message: "No interrupted change left to settle" };
        const backups = [await backupFile(intentPath)];
        if ((await statOrNull(journalPath)) !== null) backups.push(await backupFile(journalPath));
        const settled = await settleIntent(playbookPath, journalPath, logger);
        const outcome = settled.outcome;
        const message =
          outcome === null
            ? "No interrupted change left to settle"
            : outcome.kind === "complete"
              ? `Completed the interrupted change: appended ${outcome.missing.length} event(s) to ${journalPath}`
              : outcome.kind === "discard"
                ? "Discarded the intent of a change that was never written"
                : `Could not decide (${outcome.why}); kept as ${settled.setAside}`;
        return { id, success: outcome === null || outcome.kind === "complete" || outcome.kind === "discard", message: `${message} (backups: ${backups.join(", ")})`, backups };
      },
      lockOptions,
    );
  }

  async function repairJournalGaps(id: string, layer: Layer): Promise<FixResult> {
    const playbookPath = playbookOf(layer);
    if (playbookPath === null) return { id, success: false, message: "Not in a git repository" };
    const journalPath = join(dirname(playbookPath), JOURNAL_FILE);
    return withLock(
      playbookPath,
      async () => {
        const state = await inspectPlaybook(playbookPath, layer);
        if (state.kind !== "ok") return { id, success: false, message: `Cannot read ${playbookPath}; repair the playbook first` };
        const backups: string[] = [];
        if ((await statOrNull(intentPathFor(journalPath))) !== null) {
          backups.push(await backupFile(intentPathFor(journalPath)));
          if ((await statOrNull(journalPath)) !== null) backups.push(await backupFile(journalPath));
          await settleIntent(playbookPath, journalPath, logger);
        }
        const events = await journalAsRead(playbookPath, journalPath);
        const gaps = findJournalGaps(state.playbook, events);
        if (gaps.length === 0) return { id, success: true, message: "Every playbook change has its journal event", ...(backups.length > 0 ? { backups } : {}) };
        if ((await statOrNull(journalPath)) !== null && !backups.some((b) => b.startsWith(`${journalPath}.backup.`))) backups.push(await backupFile(journalPath));
        const repaired = reconstructGapEvents(state.playbook, gaps, { layer, timestamp: new Date().toISOString(), nextId: () => randomBytes(6).toString("hex") });
        await appendJsonl(journalPath, repaired, { sync: true });
        return {
          id,
          success: true,
          message: `Appended ${repaired.length} reconstructed event${repaired.length === 1 ? "" : "s"} to ${journalPath} (${gaps.map((g) => g.bulletId).slice(0, MAX_LISTED_LINES).join(", ")}${gaps.length > MAX_LISTED_LINES ? ", …" : ""}; backup: ${backups.join(", ")})`,
          backups,
        };
      },
      lockOptions,
    );
  }

  async function applyFix(id: string): Promise<FixResult> {
    try {
      switch (id) {
        case "missing-global-dir": {
          const existed = (await statOrNull(globalDir)) !== null;
          await mkdir(globalDir, { recursive: true, mode: 0o700 });
          return { id, success: true, message: existed ? `${globalDir} already exists` : `Created ${globalDir}` };
        }
        case "missing-config": {
          await mkdir(globalDir, { recursive: true, mode: 0o700 });
          const created = await createIfMissing(configPath, () => JSON.stringify(defaultConfig(), null, 2));
          return { id, success: true, message: created ? `Wrote the default configuration to ${configPath}` : `${configPath} already exists` };
        }
        case "reset-config":
          return await resetConfig(id);
        case "missing-playbook": {
          const created = await createIfMissing(globalPlaybook, () => emptyPlaybook("global"));
          return { id, success: true, message: created ? `Created ${globalPlaybook}` : `${globalPlaybook} already exists` };
        }
        case "migrate-playbook-schema-global":
          return await migratePlaybook(id, "global");
        case "migrate-playbook-schema-repo":
          return await migratePlaybook(id, "repo");
        case "missing-blocked-log": {
          const created = await createIfMissing(globalBlocked, () => "");
          return { id, success: true, message: created ? `Created ${globalBlocked}` : `${globalBlocked} already exists` };
        }
        case "missing-diary-dir": {
          const existed = (await statOrNull(diaryDir)) !== null;
          await mkdir(diaryDir, { recursive: true, mode: 0o700 });
          return { id, success: true, message: existed ? `${diaryDir} already exists` : `Created ${diaryDir}` };
        }
        case "missing-repo-cass-dir":
          return await createRepoStructure(id);
        case "fix-file-permissions":
          return await fixPermissions(id);
        case "remove-lock-debris":
          return await removeDebris(id);
        case "settle-journal-intent-global":
          return await settleJournalIntent(id, "global");
        case "settle-journal-intent-repo":
          return await settleJournalIntent(id, "repo");
        case "repair-journal-gaps-global":
          return await repairJournalGaps(id, "global");
        case "repair-journal-gaps-repo":
          return await repairJournalGaps(id, "repo");
        default:
          if (id.startsWith("repair-playbook-")) return { id, success: false, message: "Manual fix required (see howToFix)" };
          return { id, success: false, message: `Unknown fix: ${id}` };
      }
    } catch (error) {
      return { id, success: false, message: messageOf(error) };
    }
  }

  return { diagnose, applyFix };
}
