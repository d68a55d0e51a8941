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
  decodeOnboardingState,
  decodeProcessedLog,
  distinctDiaries,
  emptySection,
  encodeOnboardingState,
  encodeProcessedSessions,
  isCostMonth,
  isProcessedLogName,
  layerSectionKeys,
  parseJsonLines,
  parseSectionKey,
  processedLogFileName,
  sectionHoldsData,
  sectionLayer,
  sortSectionKeys,
} from "@cass-memory/core";
import type { CostEntry, CostTotals, DiaryEntry, JournalEvent, Layer, LogName, Logger, Playbook, StoreSection, StoreTransfer } from "@cass-memory/core";
import type { Db, LayerDatabase } from "./database.js";
import { getDocument, linesOf, markFile, notInRepo, putDocument } from "./row-helpers.js";
import { clearStoredPlaybook, emptyStored, readStoredPlaybook, writeStoredPlaybook } from "./playbook-rows.js";

/**
 * Section-wise reading and writing of the SQLite store (`cm storage migrate`). Each section is
 * written in one write transaction of its layer's database (the lock every mutation takes): the
 * section's rows are deleted and the new ones inserted, bullets through the playbook row code so
 * that the full-text index follows them.
 */

export interface SqliteTransferOptions {
  globalDb: LayerDatabase;
  repoDb: LayerDatabase | null;
  logger: Logger;
  /** The original's file name of each log (recorded in `layer_files` for layerStatus). */
  logFiles: Readonly<Record<LogName, string>>;
}

const COST_TOTAL_DOC = `${COST_DIR}/${COST_TOTAL_FILE}`;
/** `meta` key keeping the playbook's last revision while the layer has no playbook, so revisions never repeat. */
const REVISION_FLOOR = "playbook_revision_floor";






export function createSqliteTransfer(options: SqliteTransferOptions): StoreTransfer {
  const { globalDb, repoDb, logger, logFiles } = options;
  const dbOf = (layer: Layer): LayerDatabase | null => (layer === "global" ? globalDb : repoDb);

  // -------------------------------------------------------------------------------------------
  // Reading (one snapshot per section)

  function readLayerSection(db: Db, ldb: LayerDatabase, key: string, section: StoreSection): StoreSection {
    switch (section.kind) {
      case "playbook":
        return { ...section, playbook: readStoredPlaybook(db, ldb.path, section.layer)?.playbook ?? null };
      case "journal": {
        const events: JournalEvent[] = [];
        let skipped = 0;
        for (const line of db.prepare("SELECT event FROM journal ORDER BY seq").pluck().all() as string[]) {
          try {
            const parsed = JournalEventSchema.safeParse(JSON.parse(line));
            if (parsed.success) events.push(parsed.data);
            else skipped += 1;
          } catch {
            skipped += 1;
          }
        }
        return { ...section, events, skipped };
      }
      case "blocked": {
        const blocked = parseJsonLines(linesOf(db, "SELECT line FROM blocked WHERE source = 'blocked' ORDER BY seq"));
        const toxic = parseJsonLines(linesOf(db, "SELECT line FROM blocked WHERE source = 'toxic' ORDER BY seq"));
        return { ...section, blocked: blocked.values, toxic: toxic.values, skipped: blocked.malformed + toxic.malformed };
      }
      case "log": {
        const { values, malformed } = parseJsonLines(linesOf(db, "SELECT line FROM logs WHERE log = ? ORDER BY seq", section.log));
        return { ...section, records: values, skipped: malformed };
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${key} is not a layer section`);
    }
  }

  function readGlobalSection(db: Db, section: StoreSection): StoreSection {
    switch (section.kind) {
      case "diaries": {
        const rows = db.prepare("SELECT name, text FROM diaries ORDER BY written_seq DESC, timestamp DESC").all() as Array<{ name: string; text: string }>;
        const entries: DiaryEntry[] = [];
        let skipped = 0;
        for (const row of rows) {
          try {
            const parsed = DiaryEntrySchema.safeParse(JSON.parse(row.text));
            if (parsed.success) entries.push(parsed.data);
            else skipped += 1;
          } catch {
            skipped += 1;
          }
        }
        const distinct = distinctDiaries(entries);
        return { ...section, entries: distinct.entries, skipped: skipped + distinct.dropped };
      }
      case "processed": {
        const { records, malformed } = decodeProcessedLog(linesOf(db, "SELECT line FROM processed_log WHERE log = ? ORDER BY seq", section.log));
        if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${globalDb.path}#${PROCESSED_LOG_DIR}/${processedLogFileName(section.log)}`);
        return { ...section, records };
      }
      case "onboarding": {
        const text = getDocument(db, ONBOARDING_STATE_FILE);
        return { ...section, state: text === null ? null : decodeOnboardingState(text) };
      }
      case "costs": {
        const months: Record<string, CostEntry[]> = {};
        let skipped = 0;
        const monthNames = db.prepare("SELECT DISTINCT month FROM cost_entries ORDER BY month").pluck().all() as string[];
        for (const month of monthNames) {
          const { values, malformed } = parseJsonLines(linesOf(db, "SELECT line FROM cost_entries WHERE month = ? ORDER BY seq", month));
          skipped += malformed;
          if (values.length > 0) months[month] = values as CostEntry[];
        }
        const cost = costTotalsOfText(getDocument(db, COST_TOTAL_DOC));
        const totals = cost.totals;
        skipped += cost.skipped;
        return { ...section, months, totals, skipped };
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a section of the global directory`);
    }
  }

  async function readSection(key: string): Promise<StoreSection> {
    const empty = emptySection(key);
    const layer = sectionLayer(parseSectionKey(key));
    if (layer === null) return globalDb.read((db) => readGlobalSection(db, empty), empty);
    const ldb = dbOf(layer);
    if (ldb === null) return empty;
    return ldb.read((db) => readLayerSection(db, ldb, key, empty), empty);
  }

  async function listSections(): Promise<string[]> {
    const keys: string[] = [];
    for (const layer of ["global", "repo"] as const) {
      const ldb = dbOf(layer);
      if (ldb === null) continue;
      for (const key of layerSectionKeys(layer)) {
        if (key.endsWith("/playbook")) {
          if (ldb.read((db) => db.prepare("SELECT 1 FROM playbook WHERE id = 1").pluck().get() !== undefined, false)) keys.push(key);
        } else if (sectionHoldsData(await readSection(key))) {
          keys.push(key);
        }
      }
    }
    if (globalDb.read((db) => db.prepare("SELECT 1 FROM diaries LIMIT 1").pluck().get() !== undefined, false)) keys.push("diaries");
    const logs = globalDb.read((db) => db.prepare("SELECT DISTINCT log FROM processed_log").pluck().all() as string[], []);
    for (const log of logs) {
      if (!isProcessedLogName(log)) continue;
      const key = `processed/${log}`;
      if (sectionHoldsData(await readSection(key))) keys.push(key);
    }
    for (const key of ["onboarding", "costs"]) if (sectionHoldsData(await readSection(key))) keys.push(key);
    return sortSectionKeys(keys);
  }

  // -------------------------------------------------------------------------------------------
  // Writing (one transaction per section)

  function writePlaybook(db: Db, layer: Layer, playbook: Playbook | null, at: string): void {
    const revision = db.prepare("SELECT revision FROM playbook WHERE id = 1").pluck().get() as number | undefined;
    const floorText = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(REVISION_FLOOR) as string | undefined;
    const last = Math.max(revision ?? 0, floorText !== undefined ? Number(floorText) || 0 : 0);
    clearStoredPlaybook(db);
    if (playbook === null) {
      // Readers that keep a playbook per revision must never see this number again for another playbook.
      db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(REVISION_FLOOR, String(last));
      db.prepare("DELETE FROM layer_files WHERE name = 'playbook.yaml'").run();
      return;
    }
    writeStoredPlaybook(db, { ...emptyStored(layer), revision: last }, playbook, at);
    markFile(db, "playbook.yaml", at);
  }

  function writeLayerSection(db: Db, section: StoreSection, at: string): void {
    switch (section.kind) {
      case "playbook":
        return writePlaybook(db, section.layer, section.playbook, at);
      case "journal": {
        db.prepare("DELETE FROM journal").run();
        const insert = db.prepare("INSERT INTO journal (bullet_id, timestamp, event) VALUES (?, ?, ?)");
        for (const event of section.events) insert.run(event.bulletId, event.timestamp, JSON.stringify(event));
        return;
      }
      case "blocked": {
        db.prepare("DELETE FROM blocked").run();
        const insert = db.prepare("INSERT INTO blocked (source, line) VALUES (?, ?)");
        for (const entry of section.blocked) insert.run("blocked", JSON.stringify(entry));
        for (const entry of section.toxic) insert.run("toxic", JSON.stringify(entry));
        markFile(db, "blocked.log", at);
        return;
      }
      case "log": {
        db.prepare("DELETE FROM logs WHERE log = ?").run(section.log);
        const insert = db.prepare("INSERT INTO logs (log, line) VALUES (?, ?)");
        for (const record of section.records) insert.run(section.log, JSON.stringify(record));
        markFile(db, logFiles[section.log], at);
        return;
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a layer section`);
    }
  }

  function writeGlobalSection(db: Db, section: StoreSection, at: string): void {
    switch (section.kind) {
      case "diaries": {
        db.prepare("DELETE FROM diaries").run();
        const insert = db.prepare("INSERT INTO diaries (name, session_path, timestamp, written_seq, written_at, text) VALUES (?, ?, ?, ?, ?, ?)");
        // Oldest first: the store lists diaries by descending write sequence.
        const oldestFirst = [...section.entries].reverse();
        oldestFirst.forEach((entry, index) => insert.run(entry.id, entry.sessionPath, entry.timestamp, index + 1, at, JSON.stringify(entry, null, 2)));
        return;
      }
      case "processed": {
        const encoded = encodeProcessedSessions(section.records);
        db.prepare("DELETE FROM processed_log WHERE log = ?").run(section.log);
        if (encoded.length === 0) return;
        const insert = db.prepare("INSERT INTO processed_log (log, line) VALUES (?, ?)");
        insert.run(section.log, PROCESSED_LOG_HEADER);
        for (const line of encoded) insert.run(section.log, line);
        markFile(db, `${PROCESSED_LOG_DIR}/${processedLogFileName(section.log)}`, at);
        return;
      }
      case "onboarding":
        if (section.state === null) {
          db.prepare("DELETE FROM documents WHERE name = ?").run(ONBOARDING_STATE_FILE);
          return;
        }
        putDocument(db, ONBOARDING_STATE_FILE, encodeOnboardingState(section.state), at);
        markFile(db, ONBOARDING_STATE_FILE, at);
        return;
      case "costs": {
        db.prepare("DELETE FROM cost_entries").run();
        const insert = db.prepare("INSERT INTO cost_entries (month, line) VALUES (?, ?)");
        for (const month of Object.keys(section.months).sort()) {
          const entries = section.months[month] ?? [];
          if (!isCostMonth(month) || entries.length === 0) continue;
          for (const entry of entries) insert.run(month, JSON.stringify(entry));
          markFile(db, `${COST_DIR}/monthly-${month}.jsonl`, at);
        }
        if (section.totals === null) {
          db.prepare("DELETE FROM documents WHERE name = ?").run(COST_TOTAL_DOC);
        } else {
          putDocument(db, COST_TOTAL_DOC, JSON.stringify(section.totals, null, 2), at);
          markFile(db, COST_TOTAL_DOC, at);
        }
        return;
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a section of the global directory`);
    }
  }

  async function writeSection(input: StoreSection): Promise<void> {
    const section = checkSection(input);
    const layer = sectionLayer(parseSectionKey(section.key));
    const ldb = layer === null ? globalDb : dbOf(layer);
    if (ldb === null) throw notInRepo();
    // Nothing to remove from a database that does not exist: do not create one for an empty section.
    if (!sectionHoldsData(section) && !ldb.exists()) return;
    await ldb.write((db) => {
      const at = new Date().toISOString();
      if (layer === null) writeGlobalSection(db, section, at);
      else writeLayerSection(db, section, at);
    });
  }

  return { listSections, readSection, writeSection };
}
