import { readFile, stat, unlink, utimes } from "node:fs/promises";
import { join } from "node:path";
import {
  AppError,
  COST_DIR,
  COST_TOTAL_FILE,
  DiaryEntrySchema,
  JournalEventSchema,
  ONBOARDING_STATE_FILE,
  PROCESSED_LOG_DIR,
  PROCESSED_LOG_HEADER,
  checkSection,
  costTotalsOfText,
  decodeProcessedLog,
  distinctDiaries,
  emptySection,
  encodeOnboardingState,
  encodeProcessedSessions,
  isCostMonth,
  isProcessedLogName,
  layerSectionKeys,
  parseSectionKey,
  processedLogFileName,
  sectionHoldsData,
  sectionLayer,
  sortSectionKeys,
} from "@cass-memory/core";
import type { CostEntry, CostTotals, DiaryEntry, JournalEvent, Layer, LogName, Logger, OnboardingState, Playbook, StoreSection, StoreTransfer } from "@cass-memory/core";
import { atomicWriteFile, listDir, readError, readJsonl, withLock, type LockOptions } from "@cass-memory/node-files";
import { backupFile } from "./diagnostics.js";
import { intentPathFor, pendingView, readBytesOrNull } from "./journal-intent.js";
import { REPO_PLAYBOOK_HEADER, decodePlaybook, leadingComments, toYaml } from "./yaml-codec.js";
import { openPlaybookStream, type PlaybookStream } from "./playbook-stream.js";

/**
 * Section-wise reading and writing of the YAML store (`cm storage migrate`). Every section is
 * written in the files and formats the store itself writes (so the original cm still reads them),
 * under the same locks its mutations take, each file atomically (temp file + rename).
 */

export interface YamlTransferOptions {
  globalDir: string;
  repoDir: string | null;
  diaryDir: string;
  logger: Logger;
  lockOptions: LockOptions;
  /** File name of each log in a layer directory. */
  logFiles: Readonly<Record<LogName, string>>;
  playbookPath(layer: Layer): string | null;
  journalPath(layer: Layer): string | null;
  /** The layer's playbook as stored (no memoized copy); null when the file does not exist. */
  loadPlaybook(layer: Layer): Promise<Playbook | null>;
  /** The store's diary listing (newest first). */
  listDiaries(): Promise<DiaryEntry[]>;
  readOnboardingState(): Promise<OnboardingState | null>;
}

const PROCESSED_FILE = /^(global|ws-[0-9a-f]{8})\.processed\.log$/;
const MONTHLY_FILE = /^monthly-(\d{4}-\d{2})\.jsonl$/;

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

function notInRepo(): AppError {
  return new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into a git repository first",
  });
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return null;
    throw readError(path, error);
  }
}

async function dirExists(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Whether a file is there (without reading it: a playbook can be a hundred megabytes). */
async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return false;
    throw readError(path, error);
  }
}

/** Removes a file; a missing one is fine. */
async function removeFile(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return;
    throw new AppError("FILE_WRITE_FAILED", `Could not remove ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: `Check that ${path}'s directory is writable.`,
      details: { path },
      cause: error,
    });
  }
}

/**
 * Replaces a JSONL file with these records, one JSON line each. With no records an existing file
 * is emptied (the original creates some logs empty) and a missing one is not created.
 */
async function writeJsonLines(path: string, records: readonly unknown[]): Promise<void> {
  if (records.length === 0) {
    if (await exists(path)) await atomicWriteFile(path, "");
    return;
  }
  await atomicWriteFile(path, records.map((record) => JSON.stringify(record)).join("\n") + "\n");
}

/** The playbook section read bullet by bullet (`cm storage migrate` of a large playbook). */
export interface YamlPlaybookStreams {
  /**
   * The layer's playbook file opened for reading bullet by bullet (see playbook-stream.ts): null
   * when the layer has no playbook file, undefined when the file must be read whole (readSection).
   */
  openPlaybookStream(layer: Layer): PlaybookStream | null | undefined;
}

export function createYamlTransfer(options: YamlTransferOptions): StoreTransfer & YamlPlaybookStreams {
  const { globalDir, repoDir, diaryDir, logger, lockOptions, logFiles } = options;
  const costDir = join(globalDir, COST_DIR);
  const totalPath = join(costDir, COST_TOTAL_FILE);
  const statePath = join(globalDir, ONBOARDING_STATE_FILE);
  const processedDir = join(globalDir, PROCESSED_LOG_DIR);

  const layerDir = (layer: Layer): string | null => (layer === "global" ? globalDir : repoDir);
  function requireLayerDir(layer: Layer): string {
    const dir = layerDir(layer);
    if (dir === null) throw notInRepo();
    return dir;
  }
  const toxicFile = (layer: Layer): string => (layer === "global" ? "toxic_bullets.log" : "toxic.log");

  // -------------------------------------------------------------------------------------------
  // Reading

  async function readJournalSection(key: string, layer: Layer): Promise<StoreSection> {
    const path = layerDir(layer) === null ? null : options.journalPath(layer);
    if (path === null) return emptySection(key);
    const { values, malformed } = await readJsonl(path);
    const events: JournalEvent[] = [];
    let skipped = malformed;
    for (const value of values) {
      const parsed = JournalEventSchema.safeParse(value);
      if (parsed.success) events.push(parsed.data);
      else skipped += 1;
    }
    // The events of an interrupted change whose playbook write happened (docs/adr/0012-journal-crash-safety.md).
    const pending = await pendingView(options.playbookPath(layer) as string, path, await readBytesOrNull(path).catch(() => null));
    events.push(...pending.extra);
    if (pending.tornFragment) skipped -= 1;
    return { key, kind: "journal", layer, events, skipped };
  }

  async function readBlockedSection(key: string, layer: Layer): Promise<StoreSection> {
    const dir = layerDir(layer);
    if (dir === null) return emptySection(key);
    const blocked = await readJsonl(join(dir, "blocked.log"));
    const toxic = await readJsonl(join(dir, toxicFile(layer)));
    return { key, kind: "blocked", layer, blocked: blocked.values, toxic: toxic.values, skipped: blocked.malformed + toxic.malformed };
  }

  async function readLogSection(key: string, layer: Layer, log: LogName): Promise<StoreSection> {
    const dir = layerDir(layer);
    if (dir === null) return emptySection(key);
    const { values, malformed } = await readJsonl(join(dir, logFiles[log]));
    return { key, kind: "log", layer, log, records: values, skipped: malformed };
  }

  async function readDiariesSection(key: string): Promise<StoreSection> {
    const files = (await listDir(diaryDir)).filter((name) => name.endsWith(".json"));
    if (files.length === 0) return emptySection(key);
    const { entries } = distinctDiaries(await options.listDiaries());
    // Every .json file is an entry, or a file that could not be read as one or repeats an id.
    return { key, kind: "diaries", entries, skipped: Math.max(0, files.length - entries.length) };
  }

  async function readProcessedSection(key: string, log: string): Promise<StoreSection> {
    const text = await readTextOrNull(join(processedDir, processedLogFileName(log)));
    if (text === null) return emptySection(key);
    const { records, malformed } = decodeProcessedLog(text);
    if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${join(processedDir, processedLogFileName(log))}`);
    return { key, kind: "processed", log, records };
  }

  async function readCostsSection(key: string): Promise<StoreSection> {
    const months: Record<string, CostEntry[]> = {};
    let skipped = 0;
    for (const name of await listDir(costDir)) {
      const match = MONTHLY_FILE.exec(name);
      if (match === null || !isCostMonth(match[1] as string)) continue;
      const { values, malformed } = await readJsonl(join(costDir, name));
      skipped += malformed;
      if (values.length > 0) months[match[1] as string] = values as CostEntry[];
    }
    const cost = costTotalsOfText(await readTextOrNull(totalPath));
    const totals = cost.totals;
    skipped += cost.skipped;
    return { key, kind: "costs", months, totals, skipped };
  }

  async function readSection(key: string): Promise<StoreSection> {
    const address = parseSectionKey(key);
    switch (address.kind) {
      case "playbook":
        return { key, kind: "playbook", layer: address.layer, playbook: await options.loadPlaybook(address.layer) };
      case "journal":
        return readJournalSection(key, address.layer);
      case "blocked":
        return readBlockedSection(key, address.layer);
      case "log":
        return readLogSection(key, address.layer, address.log);
      case "diaries":
        return readDiariesSection(key);
      case "processed":
        return readProcessedSection(key, address.log);
      case "onboarding":
        return { key, kind: "onboarding", state: await options.readOnboardingState() };
      case "costs":
        return readCostsSection(key);
    }
  }

  async function listSections(): Promise<string[]> {
    const keys: string[] = [];
    for (const layer of ["global", "repo"] as const) {
      if (layerDir(layer) === null) continue;
      for (const key of layerSectionKeys(layer)) {
        if (key.endsWith("/playbook")) {
          const path = options.playbookPath(layer);
          if (path !== null && (await exists(path))) keys.push(key);
        } else if (sectionHoldsData(await readSection(key))) {
          keys.push(key);
        }
      }
    }
    if ((await listDir(diaryDir)).some((name) => name.endsWith(".json"))) keys.push("diaries");
    for (const name of await listDir(processedDir)) {
      const match = PROCESSED_FILE.exec(name);
      if (match === null || !isProcessedLogName(match[1] as string)) continue;
      const key = `processed/${match[1] as string}`;
      if (sectionHoldsData(await readSection(key))) keys.push(key);
    }
    for (const key of ["onboarding", "costs"]) if (sectionHoldsData(await readSection(key))) keys.push(key);
    return sortSectionKeys(keys);
  }

  // -------------------------------------------------------------------------------------------
  // Writing

  async function writePlaybook(layer: Layer, playbook: Playbook | null): Promise<void> {
    requireLayerDir(layer);
    const path = options.playbookPath(layer) as string;
    await withLock(
      path,
      async () => {
        const current = await readTextOrNull(path);
        if (current !== null) {
          // A file that does not decode is kept aside before it is replaced or removed.
          try {
            decodePlaybook(current, path, layer);
          } catch {
            const backup = await backupFile(path);
            logger.warn(`${path} could not be read; kept as ${backup} before it was replaced`);
          }
        }
        if (playbook === null) {
          await removeFile(path);
          return;
        }
        const header = current !== null ? leadingComments(current) : layer === "repo" ? REPO_PLAYBOOK_HEADER : "";
        await atomicWriteFile(path, header + toYaml(playbook));
      },
      lockOptions,
    );
  }

  async function writeJournal(layer: Layer, events: readonly JournalEvent[]): Promise<void> {
    requireLayerDir(layer);
    // Mutations append to the journal holding the playbook's lock. The journal is replaced as a
    // whole, so an interrupted change of the journal it replaces no longer applies.
    const journalPath = options.journalPath(layer) as string;
    await withLock(
      options.playbookPath(layer) as string,
      async () => {
        await writeJsonLines(journalPath, events);
        await unlink(intentPathFor(journalPath)).catch(() => undefined);
      },
      lockOptions,
    );
  }

  async function writeBlocked(layer: Layer, blocked: readonly unknown[], toxic: readonly unknown[]): Promise<void> {
    const dir = requireLayerDir(layer);
    const path = join(dir, "blocked.log");
    await withLock(
      path,
      async () => {
        await writeJsonLines(path, blocked);
        await writeJsonLines(join(dir, toxicFile(layer)), toxic);
      },
      lockOptions,
    );
  }

  async function writeLog(layer: Layer, log: LogName, records: readonly unknown[]): Promise<void> {
    const path = join(requireLayerDir(layer), logFiles[log]);
    await withLock(path, () => writeJsonLines(path, records), lockOptions);
  }

  async function isDiaryFile(path: string): Promise<boolean> {
    const text = await readTextOrNull(path);
    if (text === null) return false;
    try {
      return DiaryEntrySchema.safeParse(JSON.parse(text)).success;
    } catch {
      return false;
    }
  }

  /**
   * Diary entries are one file each: entries that are not in the section are removed (files that
   * are not diary entries are left alone), then the section's entries are written oldest first with
   * strictly increasing modification times, which is the order the store lists them in.
   */
  async function writeDiaries(entries: readonly DiaryEntry[]): Promise<void> {
    const wanted = new Set(entries.map((entry) => `${entry.id}.json`));
    for (const name of await listDir(diaryDir)) {
      if (!name.endsWith(".json") || wanted.has(name)) continue;
      const path = join(diaryDir, name);
      if (await isDiaryFile(path)) await removeFile(path);
    }
    const oldestFirst = [...entries].reverse();
    // One millisecond apart, ending a second in the past so that diaries written afterwards list first.
    const base = Date.now() - 1000 - oldestFirst.length;
    for (let i = 0; i < oldestFirst.length; i += 1) {
      const entry = oldestFirst[i] as DiaryEntry;
      const path = join(diaryDir, `${entry.id}.json`);
      await atomicWriteFile(path, JSON.stringify(entry, null, 2));
      const seconds = (base + i) / 1000;
      await utimes(path, seconds, seconds);
    }
  }

  async function writeProcessed(log: string, records: readonly unknown[]): Promise<void> {
    const path = join(processedDir, processedLogFileName(log));
    const lines = encodeProcessedSessions(records);
    await withLock(
      path,
      async () => {
        if (lines.length === 0) {
          if (await exists(path)) await atomicWriteFile(path, "");
          return;
        }
        await atomicWriteFile(path, `${PROCESSED_LOG_HEADER}\n${lines.join("\n")}\n`);
      },
      lockOptions,
    );
  }

  async function writeOnboarding(state: OnboardingState | null): Promise<void> {
    await withLock(
      statePath,
      async () => {
        if (state === null) await removeFile(statePath);
        else await atomicWriteFile(statePath, encodeOnboardingState(state));
      },
      lockOptions,
    );
  }

  async function writeCosts(months: Readonly<Record<string, readonly unknown[]>>, totals: CostTotals | null): Promise<void> {
    await withLock(
      totalPath,
      async () => {
        for (const name of await listDir(costDir)) {
          const match = MONTHLY_FILE.exec(name);
          if (match === null) continue;
          const entries = months[match[1] as string];
          if (entries === undefined || entries.length === 0) await removeFile(join(costDir, name));
        }
        for (const [month, entries] of Object.entries(months)) {
          if (entries.length > 0) await writeJsonLines(join(costDir, `monthly-${month}.jsonl`), entries);
        }
        if (totals === null) await removeFile(totalPath);
        else await atomicWriteFile(totalPath, JSON.stringify(totals, null, 2));
      },
      lockOptions,
    );
  }

  async function writeSection(input: StoreSection): Promise<void> {
    const section = checkSection(input);
    const layer = sectionLayer(parseSectionKey(section.key));
    const base = layer === null ? globalDir : requireLayerDir(layer);
    // Nothing to clear where the directory does not exist: do not create it (or lock files in it).
    if (!sectionHoldsData(section) && !(await dirExists(base))) return;
    switch (section.kind) {
      case "playbook":
        return writePlaybook(section.layer, section.playbook);
      case "journal":
        return writeJournal(section.layer, section.events);
      case "blocked":
        return writeBlocked(section.layer, section.blocked, section.toxic);
      case "log":
        return writeLog(section.layer, section.log, section.records);
      case "diaries":
        return writeDiaries(section.entries);
      case "processed":
        return writeProcessed(section.log, section.records);
      case "onboarding":
        return writeOnboarding(section.state);
      case "costs":
        return writeCosts(section.months, section.totals);
    }
  }

  function openLayerPlaybookStream(layer: Layer): PlaybookStream | null | undefined {
    const path = layerDir(layer) === null ? null : options.playbookPath(layer);
    return path === null ? null : openPlaybookStream(path, layer);
  }

  return { listSections, readSection, writeSection, openPlaybookStream: openLayerPlaybookStream };
}

