import { AppError } from "../errors.js";
import { formatZodIssues } from "../operation.js";
import { ConfigSchema, defaultConfig } from "../schemas/config.js";
import { checkJournalEventsForWrite, decodeBlockedEntries, parseJsonLines, validateBlockedEntries, validatePlaybookForWrite } from "../schemas/codec.js";
import { PLAYBOOK_SCHEMA_VERSION, PlaybookSchema, createEmptyPlaybook } from "../schemas/playbook.js";
import type { BlockedEntry, Playbook } from "../schemas/playbook.js";
import { COST_DIR, COST_TOTAL_FILE, addCost, decodeCostTotals, monthlyCostFile } from "../domain/costs.js";
import { checkSection, costTotalsOfText, distinctDiaries, emptySection, isCostMonth, layerSectionKeys, parseSectionKey, sectionHoldsData, sectionLayer, sortSectionKeys } from "../storage/sections.js";
import type { StoreSection, StoreTransfer } from "../storage/transfer.js";
import { updateLogText } from "../storage/log-update.js";
import { rewriteJournalText } from "../domain/journal.js";
import { DiaryEntrySchema, JournalEventSchema, type DiaryEntry, type JournalEvent, type OnboardingState, type ProcessedSession } from "../schemas/records.js";
import {
  ONBOARDING_STATE_FILE,
  PROCESSED_LOG_DIR,
  PROCESSED_LOG_HEADER,
  createOnboardingState,
  decodeOnboardingState,
  decodeProcessedLog,
  encodeOnboardingState,
  encodeProcessedSessions,
  finalizeOnboardingState,
  processedLogFileName,
} from "../operations/onboard-records.js";
import type {
  CostEntry,
  CostTotals,
  FixResult,
  FixableIssue,
  HealthCheck,
  InitializeOptions,
  InitializeResult,
  Layer,
  LayerStatus,
  LogName,
  LogReadResult,
  StarterFile,
  Store,
  StoreDiagnosis,
  StoreLocations,
} from "../ports.js";

/**
 * An in-memory Store that behaves like the file store: every layer is a set of "files" (text),
 * playbooks are stored encoded (JSON) so callers never alias stored state, logs are JSONL text, a
 * corrupt playbook is reported as PLAYBOOK_CORRUPT and never overwritten, and mutations of a
 * playbook are serialised through a promise queue. Two stores created on the same
 * {@link MemoryStoreBacking} and directories see each other's data, like two processes on one disk.
 */

export interface MemoryStoreBacking {
  /** Absolute "path" → file text. */
  readonly files: Map<string, string>;
  /** Per-path tail of the mutation queue. */
  readonly queues: Map<string, Promise<unknown>>;
  /**
   * Directories that exist without holding a file (an initialized but empty `diary/`). A directory
   * also exists when any file lies below it.
   */
  readonly dirs: Set<string>;
}

export function createMemoryStoreBacking(): MemoryStoreBacking {
  return { files: new Map(), queues: new Map(), dirs: new Set() };
}

export interface MemoryStoreOptions {
  /** Whether the store is "inside a repository" (has a repo layer). Default true. */
  repo?: boolean;
  globalDir?: string;
  repoDir?: string;
  /** Share state between store instances (default: a new private backing). */
  backing?: MemoryStoreBacking;
  /** Creation time of playbooks created implicitly by a mutation (default: the real clock). */
  now?: () => string;
  /** The diary directory checked by `diagnose` (default `<globalDir>/diary`). */
  diaryDir?: string;
}

export type MemoryLogTarget = LogName | "blocked" | "events";

export interface MemoryStore extends Store {
  readonly backing: MemoryStoreBacking;
  /** Replaces the layer's playbook "file" with text that does not decode (default `{ not json`). */
  corrupt(layer: Layer, raw?: string): void;
  /** The raw text of the layer's playbook "file" (null when absent). */
  rawPlaybook(layer: Layer): string | null;
  /** Appends a raw line (no newline added) to a log, to simulate damaged or torn lines. */
  appendRawLogLine(layer: Layer, log: MemoryLogTarget, text: string): void;
  /** Replaces a "file" below the global directory (`name` relative to it) with raw text. */
  writeRawGlobalFile(name: string, text: string): void;
  /** The raw text of a "file" below the global directory, or null when absent. */
  readRawGlobalFile(name: string): string | null;
  diagnose(): Promise<StoreDiagnosis>;
  applyFix(id: string): Promise<FixResult>;
}

export const MEMORY_GLOBAL_DIR = "/memory/.cass-memory";
export const MEMORY_REPO_DIR = "/memory/repo/.cass";

const GLOBAL_FILES = ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"];
const REPO_FILES = ["playbook.yaml", "blocked.log"];

const LOG_FILES: Readonly<Record<MemoryLogTarget, string>> = {
  outcomes: "outcomes.jsonl",
  "context-log": "context-log.jsonl",
  traumas: "traumas.jsonl",
  usage: "usage.jsonl",
  "privacy-audit": "privacy-audit.jsonl",
  "reflection-runs": "reflection-runs.jsonl",
  blocked: "blocked.log",
  events: "events.jsonl",
};

function join(dir: string, name: string): string {
  return dir.endsWith("/") ? `${dir}${name}` : `${dir}/${name}`;
}

function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into a git repository first",
  });
}

/** Category names of the checks, as the original and the YAML store report them. */
const CATEGORY = {
  global: "Global Storage (~/.cass-memory)",
  config: "Configuration",
  playbook: "Playbook",
  repo: "Repo .cass/ Structure",
  journal: "Audit Journal",
} as const;

const REPO_GITIGNORE = "# cass-memory: local files that should not be committed\ndiary/\n*.tmp\n*.tmp.*\n*.lock.d/\nevents.pending.json*\n";

function corruptError(path: string, problem: string, cause?: unknown): AppError {
  return new AppError("PLAYBOOK_CORRUPT", `Playbook at ${path} is invalid: ${problem}`, {
    hint: `Fix ${path} by hand (it was left untouched), or restore it from a backup (${path}.backup.<timestamp>).`,
    details: { path },
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** How long `exclusive` waits for a holder when no `waitMs` is given (the file store's lock timeout). */
const DEFAULT_EXCLUSIVE_WAIT_MS = 10_000;

const diaryOrders = new WeakMap<Map<string, string>, Map<string, number>>();
let diarySeq = 0;

function diaryOrderOf(files: Map<string, string>): Map<string, number> {
  let order = diaryOrders.get(files);
  if (order === undefined) {
    order = new Map();
    diaryOrders.set(files, order);
  }
  return order;
}

export function createMemoryStore(options: MemoryStoreOptions = {}): MemoryStore {
  const backing = options.backing ?? createMemoryStoreBacking();
  const { files, queues } = backing;
  // Backings created by hand before `dirs` existed still work.
  const dirs: Set<string> = backing.dirs ?? new Set<string>();
  const now = options.now ?? (() => new Date().toISOString());
  const globalDir = options.globalDir ?? MEMORY_GLOBAL_DIR;
  const repoDir = options.repo === false ? null : (options.repoDir ?? MEMORY_REPO_DIR);
  const locations: StoreLocations = {
    globalDir,
    globalPlaybook: join(globalDir, "playbook.yaml"),
    repoDir,
    repoPlaybook: repoDir === null ? null : join(repoDir, "playbook.yaml"),
  };

  const dirOf = (layer: Layer): string | null => (layer === "global" ? globalDir : repoDir);
  const requireDir = (layer: Layer): string => {
    const dir = dirOf(layer);
    if (dir === null) throw notInRepo();
    return dir;
  };
  const playbookPath = (layer: Layer): string | null => (layer === "global" ? locations.globalPlaybook : locations.repoPlaybook);
  const diaryDir = options.diaryDir ?? join(globalDir, "diary");
  const configPath = join(globalDir, "config.json");
  const onboardingPath = join(globalDir, ONBOARDING_STATE_FILE);

  function dirExists(dir: string): boolean {
    if (dirs.has(dir)) return true;
    const prefix = dir.endsWith("/") ? dir : `${dir}/`;
    for (const key of files.keys()) if (key.startsWith(prefix)) return true;
    for (const key of dirs) if (key.startsWith(prefix)) return true;
    return false;
  }

  function backup(path: string): string {
    let ms = Date.now();
    while (files.has(`${path}.backup.${ms}`)) ms += 1;
    const name = `${path}.backup.${ms}`;
    files.set(name, files.get(path) ?? "");
    return name;
  }

  type ConfigState = "missing" | "ok" | { problem: string };
  function inspectConfig(): ConfigState {
    const text = files.get(configPath);
    if (text === undefined) return "missing";
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      return { problem: `not valid JSON (${error instanceof Error ? error.message : String(error)})` };
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return { problem: "not a JSON object" };
    const checked = ConfigSchema.safeParse(parsed);
    return checked.success ? "ok" : { problem: `schema validation failed: ${formatZodIssues(checked.error)}` };
  }

  type PlaybookState = { kind: "missing" } | { kind: "corrupt"; message: string } | { kind: "ok"; playbook: Playbook };
  function inspectPlaybook(layer: Layer): PlaybookState {
    const path = playbookPath(layer);
    if (path === null || !files.has(path)) return { kind: "missing" };
    try {
      return { kind: "ok", playbook: decode(path, layer)! };
    } catch (error) {
      return { kind: "corrupt", message: error instanceof Error ? error.message : String(error) };
    }
  }

  function diagnoseNow(): StoreDiagnosis {
    const checks: HealthCheck[] = [];
    const issues: FixableIssue[] = [];
    const globalExists = dirExists(globalDir);
    const config = inspectConfig();
    const globalPlaybook = inspectPlaybook("global");
    const blockedExists = files.has(join(globalDir, "blocked.log"));
    const diaryExists = dirExists(diaryDir);
    const missing: string[] = [];
    if (globalPlaybook.kind === "missing") missing.push("playbook.yaml");
    if (config === "missing") missing.push("config.json");
    if (!diaryExists) missing.push("diary/");
    if (!blockedExists) missing.push("blocked.log");
    if (!globalExists) {
      checks.push({ category: CATEGORY.global, item: "Structure", status: "fail", message: `Global directory does not exist: ${globalDir}`, details: { path: globalDir, missing } });
      issues.push({ id: "missing-global-dir", description: `Create the global directory ${globalDir} (mode 0700)`, category: CATEGORY.global, severity: "fail", safety: "safe" });
    } else if (missing.length > 0) {
      checks.push({ category: CATEGORY.global, item: "Structure", status: "warn", message: `Missing: ${missing.join(", ")}`, details: { path: globalDir, missing } });
    } else {
      checks.push({ category: CATEGORY.global, item: "Structure", status: "pass", message: "All files and directories present", details: { path: globalDir } });
    }
    if (config === "missing") issues.push({ id: "missing-config", description: `Write the default configuration to ${configPath}`, category: CATEGORY.global, severity: "warn", safety: "safe" });
    if (globalPlaybook.kind === "missing") issues.push({ id: "missing-playbook", description: `Create an empty playbook at ${locations.globalPlaybook}`, category: CATEGORY.playbook, severity: "warn", safety: "safe" });
    if (!blockedExists) issues.push({ id: "missing-blocked-log", description: `Create an empty ${join(globalDir, "blocked.log")}`, category: CATEGORY.global, severity: "warn", safety: "safe" });
    if (!diaryExists) issues.push({ id: "missing-diary-dir", description: `Create the diary directory ${diaryDir}`, category: CATEGORY.global, severity: "warn", safety: "safe" });

    if (config === "ok") {
      checks.push({ category: CATEGORY.config, item: "config.json", status: "pass", message: "Global config.json is valid JSON", details: { path: configPath } });
    } else if (config !== "missing") {
      checks.push({ category: CATEGORY.config, item: "config.json", status: "fail", message: `Global config.json is invalid: ${config.problem}`, details: { path: configPath } });
      issues.push({ id: "reset-config", description: `Back up ${configPath} and replace it with the default configuration`, category: CATEGORY.config, severity: "fail", safety: "cautious" });
    }

    const reportPlaybook = (layer: Layer, state: PlaybookState): void => {
      const item = layer === "global" ? "Global playbook.yaml" : "Repo .cass/playbook.yaml";
      const path = playbookPath(layer)!;
      if (state.kind === "missing") return;
      if (state.kind === "corrupt") {
        checks.push({ category: CATEGORY.playbook, item, status: "fail", message: state.message, details: { path } });
        issues.push({
          id: `repair-playbook-${layer}`,
          description: `Repair ${path}`,
          category: CATEGORY.playbook,
          severity: "fail",
          safety: "manual",
          howToFix: [`Fix ${path} by hand, or restore it from a backup (${path}.backup.<epoch-ms>).`],
        });
        return;
      }
      const version = state.playbook.schema_version;
      const count = state.playbook.bullets.length;
      if (version < PLAYBOOK_SCHEMA_VERSION) {
        checks.push({ category: CATEGORY.playbook, item, status: "warn", message: `Schema version ${version} is outdated (current: ${PLAYBOOK_SCHEMA_VERSION})`, details: { path, schemaVersion: version, bullets: count } });
        issues.push({ id: `migrate-playbook-schema-${layer}`, description: `Back up ${path} and set schema_version to ${PLAYBOOK_SCHEMA_VERSION} (rules unchanged)`, category: CATEGORY.playbook, severity: "warn", safety: "safe" });
      } else {
        checks.push({ category: CATEGORY.playbook, item, status: "pass", message: `Schema version ${version} (${count} rule${count === 1 ? "" : "s"})`, details: { path, schemaVersion: version, bullets: count } });
      }
    };
    reportPlaybook("global", globalPlaybook);

    if (repoDir === null) {
      checks.push({ category: CATEGORY.repo, item: "Availability", status: "warn", message: "Not in a git repository. Repo-level memory not available." });
    } else if (!dirExists(repoDir)) {
      checks.push({ category: CATEGORY.repo, item: "Structure", status: "warn", message: "Not initialized. Run `cm init --repo` to enable repo-level memory.", details: { path: repoDir } });
      issues.push({ id: "missing-repo-cass-dir", description: `Create ${repoDir} with playbook.yaml, blocked.log and .gitignore`, category: CATEGORY.repo, severity: "warn", safety: "safe" });
    } else {
      const repoMissing = REPO_FILES.filter((name) => !files.has(join(repoDir, name)));
      if (repoMissing.length > 0) {
        checks.push({ category: CATEGORY.repo, item: "Structure", status: "warn", message: `Partial setup. Missing: ${repoMissing.join(", ")}`, details: { path: repoDir, missing: repoMissing } });
        issues.push({ id: "missing-repo-cass-dir", description: `Create the missing ${repoMissing.join(", ")} in ${repoDir}`, category: CATEGORY.repo, severity: "warn", safety: "safe" });
      } else {
        checks.push({ category: CATEGORY.repo, item: "Structure", status: "pass", message: "Complete (.cass/playbook.yaml and .cass/blocked.log present)", details: { path: repoDir } });
      }
      reportPlaybook("repo", inspectPlaybook("repo"));
    }

    for (const layer of ["global", "repo"] as const) {
      const dir = dirOf(layer);
      if (dir === null) continue;
      const path = join(dir, LOG_FILES.events);
      const text = files.get(path);
      if (text === undefined) continue;
      const item = layer === "global" ? "Global events.jsonl" : "Repo .cass/events.jsonl";
      const bad: number[] = [];
      let events = 0;
      text.split("\n").forEach((raw, index) => {
        const line = raw.trim();
        if (line === "") return;
        try {
          if (JournalEventSchema.safeParse(JSON.parse(line)).success) events += 1;
          else bad.push(index + 1);
        } catch {
          bad.push(index + 1);
        }
      });
      checks.push(
        bad.length > 0
          ? { category: CATEGORY.journal, item, status: "warn", message: `${bad.length} malformed line${bad.length === 1 ? "" : "s"} (line${bad.length === 1 ? "" : "s"} ${bad.join(", ")}); they are skipped when reading`, details: { path, events, malformedLines: bad } }
          : { category: CATEGORY.journal, item, status: "pass", message: `${events} event${events === 1 ? "" : "s"}, all well-formed`, details: { path, events } },
      );
    }
    return { checks, fixableIssues: issues };
  }

  function createIfMissing(path: string, content: () => string): boolean {
    if (files.has(path)) return false;
    files.set(path, content());
    return true;
  }

  function applyFixNow(id: string): FixResult {
    const created = (path: string, did: boolean): FixResult => ({ id, success: true, message: did ? `Created ${path}` : `${path} already exists` });
    switch (id) {
      case "missing-global-dir": {
        const existed = dirExists(globalDir);
        dirs.add(globalDir);
        return created(globalDir, !existed);
      }
      case "missing-config":
        return created(configPath, createIfMissing(configPath, () => JSON.stringify(defaultConfig(), null, 2)));
      case "reset-config": {
        const state = inspectConfig();
        if (state === "ok") return { id, success: true, message: `${configPath} is valid; nothing to reset` };
        const backups = state === "missing" ? [] : [backup(configPath)];
        files.set(configPath, JSON.stringify(defaultConfig(), null, 2));
        return { id, success: true, message: `Reset ${configPath} to the defaults`, ...(backups.length > 0 ? { backups } : {}) };
      }
      case "missing-playbook":
        return created(locations.globalPlaybook, createIfMissing(locations.globalPlaybook, () => JSON.stringify(createEmptyPlaybook(now(), "global"))));
      case "migrate-playbook-schema-global":
      case "migrate-playbook-schema-repo": {
        const layer: Layer = id.endsWith("global") ? "global" : "repo";
        const path = playbookPath(layer);
        const state = inspectPlaybook(layer);
        if (path === null || state.kind !== "ok") return { id, success: false, message: `Cannot migrate ${path ?? "the repo playbook"}: ${state.kind === "corrupt" ? state.message : "file does not exist"}` };
        if (state.playbook.schema_version >= PLAYBOOK_SCHEMA_VERSION) return { id, success: true, message: `${path} already has schema_version ${state.playbook.schema_version}` };
        const saved = backup(path);
        files.set(path, JSON.stringify({ ...state.playbook, schema_version: PLAYBOOK_SCHEMA_VERSION }));
        return { id, success: true, message: `Migrated ${path} to schema_version ${PLAYBOOK_SCHEMA_VERSION} (backup: ${saved})`, backups: [saved] };
      }
      case "missing-blocked-log": {
        const path = join(globalDir, "blocked.log");
        return created(path, createIfMissing(path, () => ""));
      }
      case "missing-diary-dir": {
        const existed = dirExists(diaryDir);
        dirs.add(diaryDir);
        return created(diaryDir, !existed);
      }
      case "missing-repo-cass-dir": {
        if (repoDir === null) return { id, success: false, message: "Not in a git repository" };
        dirs.add(repoDir);
        const made: string[] = [];
        if (createIfMissing(join(repoDir, "playbook.yaml"), () => JSON.stringify(createEmptyPlaybook(now(), "repo")))) made.push("playbook.yaml");
        if (createIfMissing(join(repoDir, "blocked.log"), () => "")) made.push("blocked.log");
        if (createIfMissing(join(repoDir, ".gitignore"), () => REPO_GITIGNORE)) made.push(".gitignore");
        return { id, success: true, message: made.length > 0 ? `Created ${made.map((n) => join(repoDir, n)).join(", ")}` : `${repoDir} is complete` };
      }
      default:
        if (id.startsWith("repair-playbook-")) return { id, success: false, message: "Manual fix required (see howToFix)" };
        return { id, success: false, message: `Unknown fix: ${id}` };
    }
  }

  function decode(path: string, layer: Layer): Playbook | null {
    const text = files.get(path);
    if (text === undefined) return null;
    if (text.trim() === "") return createEmptyPlaybook(now(), layer);
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw corruptError(path, `syntax error: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    const parsed = PlaybookSchema.safeParse(data);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw corruptError(path, `${issue?.path.map(String).join(".") ?? ""}: ${issue?.message ?? "invalid"}`, parsed.error);
    }
    return parsed.data;
  }

  /** Runs `task` after every earlier task queued on `key` (across stores sharing the backing). */
  function enqueue<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = queues.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    queues.set(key, tail);
    void tail.then(() => {
      if (queues.get(key) === tail) queues.delete(key);
    });
    return run;
  }

  function appendText(path: string, text: string): void {
    const current = files.get(path) ?? "";
    const glue = current.length > 0 && !current.endsWith("\n") ? "\n" : "";
    files.set(path, current + glue + text);
  }

  const costDir = join(globalDir, COST_DIR);
  const clockNow = (): Date => new Date(now());
  const diaryOf = (text: string | undefined): DiaryEntry | null => {
    if (text === undefined) return null;
    try {
      const parsed = DiaryEntrySchema.safeParse(JSON.parse(text));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  };
  /** Insertion order of diary files stands in for their mtimes (shared by the stores of one backing). */
  const diaryOrder = diaryOrderOf(files);

  // -------------------------------------------------------------------------------------------
  // Transfer (`cm storage migrate` between memory stores): the same sections as the file stores.

  const processedPath = (log: string): string => join(join(globalDir, PROCESSED_LOG_DIR), processedLogFileName(log));
  const totalCostPath = join(costDir, COST_TOTAL_FILE);
  const toxicPath = (dir: string, layer: Layer): string => join(dir, layer === "global" ? "toxic_bullets.log" : "toxic.log");
  const MONTHLY = /^monthly-(\d{4}-\d{2})\.jsonl$/;

  /** Replaces a JSONL "file"; with no records an existing file is emptied and a missing one not created. */
  function setJsonLines(path: string, records: readonly unknown[]): void {
    if (records.length === 0) {
      if (files.has(path)) files.set(path, "");
      return;
    }
    files.set(path, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
  }

  /** Diary "files" directly in the diary directory. */
  function diaryPaths(): string[] {
    const prefix = join(diaryDir, "");
    return [...files.keys()].filter((path) => path.startsWith(prefix) && path.endsWith(".json") && !path.slice(prefix.length).includes("/"));
  }

  function costMonths(): Array<{ month: string; path: string }> {
    const prefix = join(costDir, "");
    const found: Array<{ month: string; path: string }> = [];
    for (const path of files.keys()) {
      if (!path.startsWith(prefix)) continue;
      const match = MONTHLY.exec(path.slice(prefix.length));
      if (match !== null && isCostMonth(match[1] as string)) found.push({ month: match[1] as string, path });
    }
    return found.sort((a, b) => (a.month < b.month ? -1 : a.month > b.month ? 1 : 0));
  }

  async function readSection(key: string): Promise<StoreSection> {
    const address = parseSectionKey(key);
    const empty = emptySection(key);
    const layer = sectionLayer(address);
    const dir = layer === null ? globalDir : dirOf(layer);
    if (dir === null) return empty;
    switch (empty.kind) {
      case "playbook":
        return { ...empty, playbook: decode(playbookPath(empty.layer) as string, empty.layer) };
      case "journal": {
        const { values, malformed } = parseJsonLines(files.get(join(dir, LOG_FILES.events)));
        const events: JournalEvent[] = [];
        let skipped = malformed;
        for (const value of values) {
          const parsed = JournalEventSchema.safeParse(value);
          if (parsed.success) events.push(parsed.data);
          else skipped += 1;
        }
        return { ...empty, events, skipped };
      }
      case "blocked": {
        const blocked = parseJsonLines(files.get(join(dir, "blocked.log")));
        const toxic = parseJsonLines(files.get(toxicPath(dir, empty.layer)));
        return { ...empty, blocked: blocked.values, toxic: toxic.values, skipped: blocked.malformed + toxic.malformed };
      }
      case "log": {
        const { values, malformed } = parseJsonLines(files.get(join(dir, LOG_FILES[empty.log])));
        return { ...empty, records: values, skipped: malformed };
      }
      case "diaries": {
        const paths = diaryPaths();
        const { entries } = distinctDiaries(await store.listDiaries());
        return { ...empty, entries, skipped: Math.max(0, paths.length - entries.length) };
      }
      case "processed":
        return { ...empty, records: decodeProcessedLog(files.get(processedPath(empty.log))).records };
      case "onboarding":
        return { ...empty, state: await store.readOnboardingState() };
      case "costs": {
        const months: Record<string, CostEntry[]> = {};
        let skipped = 0;
        for (const { month, path } of costMonths()) {
          const { values, malformed } = parseJsonLines(files.get(path));
          skipped += malformed;
          if (values.length > 0) months[month] = values as CostEntry[];
        }
        const cost = costTotalsOfText(files.get(totalCostPath));
        const totals = cost.totals;
        skipped += cost.skipped;
        return { ...empty, months, totals, skipped };
      }
    }
  }

  async function listSections(): Promise<string[]> {
    const keys: string[] = [];
    for (const layer of ["global", "repo"] as const) {
      if (dirOf(layer) === null) continue;
      for (const key of layerSectionKeys(layer)) {
        if (key.endsWith("/playbook") ? files.has(playbookPath(layer) as string) : sectionHoldsData(await readSection(key))) keys.push(key);
      }
    }
    if (diaryPaths().length > 0) keys.push("diaries");
    const reflections = join(join(globalDir, PROCESSED_LOG_DIR), "");
    for (const path of files.keys()) {
      const match = /^(global|ws-[0-9a-f]{8})\.processed\.log$/.exec(path.startsWith(reflections) ? path.slice(reflections.length) : "");
      if (match === null) continue;
      const key = `processed/${match[1] as string}`;
      if (sectionHoldsData(await readSection(key))) keys.push(key);
    }
    for (const key of ["onboarding", "costs"]) if (sectionHoldsData(await readSection(key))) keys.push(key);
    return sortSectionKeys(keys);
  }

  async function writeSection(input: StoreSection): Promise<void> {
    const section = checkSection(input);
    const layer = sectionLayer(parseSectionKey(section.key));
    const dir = layer === null ? globalDir : requireDir(layer);
    switch (section.kind) {
      case "playbook": {
        const path = playbookPath(section.layer) as string;
        const playbook = section.playbook;
        await enqueue(path, async () => {
          if (playbook === null) files.delete(path);
          else files.set(path, JSON.stringify(playbook));
        });
        return;
      }
      case "journal": {
        const events = section.events;
        await enqueue(playbookPath(section.layer) as string, async () => setJsonLines(join(dir, LOG_FILES.events), events));
        return;
      }
      case "blocked": {
        const { blocked, toxic } = section;
        const layerOf = section.layer;
        await enqueue(join(dir, "blocked.log"), async () => {
          setJsonLines(join(dir, "blocked.log"), blocked);
          setJsonLines(toxicPath(dir, layerOf), toxic);
        });
        return;
      }
      case "log":
        setJsonLines(join(dir, LOG_FILES[section.log]), section.records);
        return;
      case "diaries": {
        const wanted = new Set(section.entries.map((entry) => join(diaryDir, `${entry.id}.json`)));
        for (const path of diaryPaths()) if (!wanted.has(path) && diaryOf(files.get(path)) !== null) files.delete(path);
        // Oldest first, each a later "write" than the one before: the order the store lists them in.
        for (const entry of [...section.entries].reverse()) {
          const path = join(diaryDir, `${entry.id}.json`);
          files.set(path, JSON.stringify(entry, null, 2));
          diaryOrder.set(path, ++diarySeq);
        }
        return;
      }
      case "processed": {
        const path = processedPath(section.log);
        const lines = encodeProcessedSessions(section.records);
        await enqueue(path, async () => {
          if (lines.length > 0) files.set(path, `${PROCESSED_LOG_HEADER}\n${lines.join("\n")}\n`);
          else if (files.has(path)) files.set(path, "");
        });
        return;
      }
      case "onboarding": {
        const state = section.state;
        await enqueue(onboardingPath, async () => {
          if (state === null) files.delete(onboardingPath);
          else files.set(onboardingPath, encodeOnboardingState(state));
        });
        return;
      }
      case "costs": {
        const { months, totals } = section;
        await enqueue(totalCostPath, async () => {
          for (const { month, path } of costMonths()) if ((months[month] ?? []).length === 0) files.delete(path);
          for (const [month, entries] of Object.entries(months)) if (entries.length > 0) setJsonLines(join(costDir, `monthly-${month}.jsonl`), entries);
          if (totals === null) files.delete(totalCostPath);
          else files.set(totalCostPath, JSON.stringify(totals, null, 2));
        });
        return;
      }
    }
  }

  const transfer: StoreTransfer = { listSections, readSection, writeSection };

  const store: MemoryStore = {
    locations,
    backing,
    transfer,

    async writeDiary(entry) {
      const parsed = DiaryEntrySchema.safeParse(entry);
      if (!parsed.success) throw new AppError("VALIDATION_FAILED", `Invalid diary entry: ${formatZodIssues(parsed.error)}`);
      if (!/^[A-Za-z0-9._-]+$/.test(parsed.data.id)) {
        throw new AppError("VALIDATION_FAILED", `Invalid diary id: ${parsed.data.id}`);
      }
      const path = join(diaryDir, `${parsed.data.id}.json`);
      files.set(path, JSON.stringify(parsed.data, null, 2));
      diaryOrder.set(path, ++diarySeq);
      return path;
    },

    async readDiary(id) {
      if (!/^[A-Za-z0-9._-]+$/.test(id)) return null;
      return diaryOf(files.get(join(diaryDir, `${id}.json`)));
    },

    async listDiaries(listOptions = {}) {
      const prefix = join(diaryDir, "");
      const entries: Array<{ entry: DiaryEntry; order: number }> = [];
      for (const [path, text] of files) {
        if (!path.startsWith(prefix) || !path.endsWith(".json") || path.slice(prefix.length).includes("/")) continue;
        const entry = diaryOf(text);
        if (entry === null) continue;
        if (listOptions.sessionPath !== undefined && entry.sessionPath !== listOptions.sessionPath) continue;
        entries.push({ entry, order: diaryOrder.get(path) ?? 0 });
      }
      entries.sort((a, b) => b.order - a.order || b.entry.timestamp.localeCompare(a.entry.timestamp));
      const limited = listOptions.limit !== undefined ? entries.slice(0, Math.max(0, listOptions.limit)) : entries;
      return limited.map((e) => e.entry);
    },

    costs: {
      async totals() {
        return decodeCostTotals(files.get(join(costDir, COST_TOTAL_FILE)), clockNow());
      },
      async record(entry) {
        const totalPath = join(costDir, COST_TOTAL_FILE);
        return enqueue(totalPath, async () => {
          const at = clockNow();
          appendText(join(costDir, monthlyCostFile(at)), JSON.stringify(entry) + "\n");
          const next = addCost(decodeCostTotals(files.get(totalPath), at), entry, at);
          files.set(totalPath, JSON.stringify(next, null, 2));
          return next;
        });
      },
    },

    async exclusive(name, fn, lockOptions = {}) {
      if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new AppError("INTERNAL_ERROR", `Invalid lock name: ${name}`);
      // Like the file lock: wait up to waitMs for the holder (any store of this backing), then fail.
      const key = `lock:${name}`;
      const waitMs = Math.max(0, lockOptions.waitMs ?? DEFAULT_EXCLUSIVE_WAIT_MS);
      const started = Date.now();
      for (let held = queues.get(key); held !== undefined; held = queues.get(key)) {
        const remaining = started + waitMs - Date.now();
        if (remaining <= 0) {
          throw new AppError("LOCK_ACQUISITION_FAILED", `Another cm process holds the "${name}" lock`, {
            hint: "Wait for the other run to finish, then retry.",
            details: { lock: name, elapsedMs: Date.now() - started },
            retryable: true,
          });
        }
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([held, new Promise<void>((resolve) => (timer = setTimeout(resolve, remaining)))]);
        clearTimeout(timer);
      }
      // Nothing ran between the check above and here (no await), so the lock is ours.
      let release!: () => void;
      const holding = new Promise<void>((resolve) => (release = resolve));
      queues.set(key, holding);
      try {
        return await fn();
      } finally {
        queues.delete(key);
        release();
      }
    },

    async readPlaybook(layer) {
      const path = playbookPath(layer);
      return path === null ? null : decode(path, layer);
    },

    mutatePlaybook(layer, fn) {
      const path = playbookPath(layer);
      if (path === null) return Promise.reject(notInRepo());
      const journalPath = join(requireDir(layer), LOG_FILES.events);
      return enqueue(path, async () => {
        const playbook = decode(path, layer) ?? createEmptyPlaybook(now(), layer);
        const queued: JournalEvent[] = [];
        const rewrites: Array<[string, (event: JournalEvent) => JournalEvent]> = [];
        const result = await fn(playbook, {
          journal: (events) => void queued.push(...events),
          rewriteJournal: (bulletId, map) => void rewrites.push([bulletId, map]),
        });
        const encoded = JSON.stringify(validatePlaybookForWrite(playbook, path));
        const lines = checkJournalEventsForWrite(queued).map((event) => JSON.stringify(event));
        files.set(path, encoded);
        if (lines.length > 0) appendText(journalPath, lines.join("\n") + "\n");
        for (const [bulletId, map] of rewrites) {
          const current = files.get(journalPath);
          if (current !== undefined) files.set(journalPath, rewriteJournalText(current, bulletId, map).text);
        }
        return result;
      });
    },

    async readJournal(layer) {
      const dir = dirOf(layer);
      if (dir === null) return [];
      const events: JournalEvent[] = [];
      for (const value of parseJsonLines(files.get(join(dir, LOG_FILES.events))).values) {
        const parsed = JournalEventSchema.safeParse(value);
        if (parsed.success) events.push(parsed.data);
      }
      return events;
    },

    async readBlocked(layer) {
      const dir = dirOf(layer);
      if (dir === null) return [];
      const legacy = layer === "global" ? "toxic_bullets.log" : "toxic.log";
      const entries: BlockedEntry[] = [];
      for (const name of ["blocked.log", legacy]) {
        entries.push(...decodeBlockedEntries(parseJsonLines(files.get(join(dir, name))).values).entries);
      }
      return entries;
    },

    async appendBlocked(layer, entries) {
      const dir = requireDir(layer);
      const lines = validateBlockedEntries(entries).map((entry) => JSON.stringify(entry));
      if (lines.length > 0) appendText(join(dir, "blocked.log"), lines.join("\n") + "\n");
    },

    async removeBlocked(layer, ids) {
      const dir = dirOf(layer);
      if (dir === null || ids.length === 0) return 0;
      const path = join(dir, "blocked.log");
      return enqueue(path, async () => {
        const text = files.get(path);
        if (text === undefined) return 0;
        const drop = new Set(ids);
        let removed = 0;
        const kept = text.split("\n").filter((line) => {
          if (line.trim() === "") return false;
          try {
            const value = JSON.parse(line) as { id?: unknown };
            if (typeof value.id === "string" && drop.has(value.id)) {
              removed++;
              return false;
            }
          } catch {
            // not JSON: kept as it is
          }
          return true;
        });
        if (removed > 0) files.set(path, kept.length > 0 ? kept.join("\n") + "\n" : "");
        return removed;
      });
    },

    async readStarterFiles(): Promise<StarterFile[]> {
      const prefixes = [join(globalDir, "starters/"), join(globalDir, "starters/custom/")];
      const found: StarterFile[] = [];
      for (const [path, text] of files) {
        const prefix = prefixes.find((p) => path.startsWith(p) && !path.slice(p.length).includes("/"));
        if (prefix === undefined || !/\.(ya?ml|json)$/i.test(path)) continue;
        try {
          // The memory store keeps every document as JSON text, whatever the file's extension.
          found.push({ path, data: JSON.parse(text) as unknown });
        } catch (error) {
          found.push({ path, error: error instanceof Error ? error.message : String(error) });
        }
      }
      return found.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    },

    mutateConfigFile(fn) {
      const path = join(globalDir, "config.json");
      return enqueue(path, async () => {
        const text = files.get(path);
        let raw: Record<string, unknown> = {};
        if (text !== undefined && text.trim() !== "") {
          let parsed: unknown;
          try {
            parsed = JSON.parse(text);
          } catch (error) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not valid JSON`, {
              hint: `Fix ${path} by hand or run 'cm doctor --fix --force'.`,
              details: { path },
              cause: error,
            });
          }
          if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
            throw new AppError("CONFIG_INVALID", `Config file ${path} is not a JSON object`, { details: { path } });
          }
          raw = parsed as Record<string, unknown>;
        }
        fn(raw);
        files.set(path, JSON.stringify(raw, null, 2));
        return raw;
      });
    },

    async readOnboardingState(): Promise<OnboardingState | null> {
      const text = files.get(onboardingPath);
      return text === undefined ? null : decodeOnboardingState(text);
    },

    mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, options?: { nowIso?: string }): Promise<T> {
      return enqueue(onboardingPath, async () => {
        const text = files.get(onboardingPath);
        let state = text === undefined ? null : decodeOnboardingState(text);
        // A damaged file is kept aside (like the file store does) before a fresh state replaces it.
        if (state === null && text !== undefined && text.trim() !== "") backup(onboardingPath);
        state ??= createOnboardingState(options?.nowIso ?? now());
        const result = await fn(state);
        files.set(onboardingPath, encodeOnboardingState(finalizeOnboardingState(state, onboardingPath)));
        return result;
      });
    },

    async appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void> {
      const path = join(join(globalDir, PROCESSED_LOG_DIR), processedLogFileName(log));
      const lines = encodeProcessedSessions(records);
      if (lines.length === 0) return;
      await enqueue(path, async () => {
        const current = files.get(path);
        if (current === undefined || current === "") files.set(path, `${PROCESSED_LOG_HEADER}\n`);
        appendText(path, lines.join("\n") + "\n");
      });
    },

    async readProcessedSessions(log: string): Promise<ProcessedSession[]> {
      const path = join(join(globalDir, PROCESSED_LOG_DIR), processedLogFileName(log));
      return decodeProcessedLog(files.get(path)).records;
    },

    async appendLog(layer, log, records) {
      const dir = requireDir(layer);
      if (records.length === 0) return;
      appendText(join(dir, LOG_FILES[log]), records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    },

    async readLog(layer, log): Promise<LogReadResult> {
      const dir = dirOf(layer);
      if (dir === null) return { records: [], malformed: 0 };
      const { values, malformed } = parseJsonLines(files.get(join(dir, LOG_FILES[log])));
      return { records: values, malformed };
    },

    updateLog(layer, log, fn) {
      const dir = dirOf(layer);
      if (dir === null) return Promise.resolve({ replaced: 0, removed: 0 });
      const path = join(dir, LOG_FILES[log]);
      return enqueue(path, async () => {
        const text = files.get(path);
        if (text === undefined) return { replaced: 0, removed: 0 };
        const result = updateLogText(text, fn);
        if (result.text !== null) files.set(path, result.text);
        return { replaced: result.replaced, removed: result.removed };
      });
    },

    async layerStatus(layer): Promise<LayerStatus> {
      const expected = [...(layer === "global" ? GLOBAL_FILES : REPO_FILES)];
      const dir = dirOf(layer);
      if (dir === null) return { present: [], expected };
      return { present: expected.filter((name) => files.has(join(dir, name))), expected };
    },

    async initialize(layer, init: InitializeOptions): Promise<InitializeResult> {
      const dir = requireDir(layer);
      dirs.add(dir);
      if (layer === "global") for (const sub of ["diary", "reflections", "embeddings", "cost"]) dirs.add(join(dir, sub));
      const plan: Array<{ name: string; content: () => string; rewrite: boolean }> =
        layer === "global"
          ? [
              { name: "config.json", content: () => JSON.stringify(init.config ?? defaultConfig(), null, 2), rewrite: true },
              { name: "playbook.yaml", content: () => JSON.stringify(createEmptyPlaybook(init.nowIso, "global")), rewrite: true },
              { name: "blocked.log", content: () => "", rewrite: false },
              { name: "usage.jsonl", content: () => "", rewrite: false },
            ]
          : [
              { name: "playbook.yaml", content: () => JSON.stringify(createEmptyPlaybook(init.nowIso, "repo")), rewrite: true },
              { name: "blocked.log", content: () => "", rewrite: true },
            ];
      const result: InitializeResult = { created: [], existed: [], overwritten: [], backups: [] };
      for (const file of plan) {
        const path = join(dir, file.name);
        const current = files.get(path);
        if (current === undefined) {
          files.set(path, file.content());
          result.created.push(file.name);
        } else if (init.overwrite && file.rewrite) {
          let ms = Date.now();
          while (files.has(`${path}.backup.${ms}`)) ms += 1;
          const backup = `${path}.backup.${ms}`;
          files.set(backup, current);
          files.set(path, file.content());
          result.backups.push({ file: path, backup });
          result.overwritten.push(file.name);
        } else {
          result.existed.push(file.name);
        }
      }
      return result;
    },

    async diagnose() {
      return diagnoseNow();
    },

    async applyFix(id) {
      return applyFixNow(id);
    },

    corrupt(layer, raw = "{ not json") {
      const path = playbookPath(layer);
      if (path === null) throw notInRepo();
      files.set(path, raw);
    },

    rawPlaybook(layer) {
      const path = playbookPath(layer);
      return path === null ? null : (files.get(path) ?? null);
    },

    writeRawGlobalFile(name, text) {
      files.set(join(globalDir, name), text);
    },

    readRawGlobalFile(name) {
      return files.get(join(globalDir, name)) ?? null;
    },

    appendRawLogLine(layer, log, text) {
      const path = join(requireDir(layer), LOG_FILES[log]);
      files.set(path, (files.get(path) ?? "") + text);
    },
  };
  return store;
}
