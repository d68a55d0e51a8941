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
import { BulletSchema, POSITION_STEP, PlaybookSchema, validatePlaybookForWrite } from "@cass-memory/core";
import type { Bullet, CostEntry, CostTotals, DiaryEntry, JournalEvent, Layer, LogName, Logger, Playbook, StoreSection, StoreTransfer } from "@cass-memory/core";
import { crashPoint } from "@cass-memory/node-files";
import { corruptDatabase, type Db, type LayerDatabase } from "./database.js";
import { getDocument, linesOf, markFile, notInRepo, putDocument } from "./row-helpers.js";
import { clearStoredPlaybook, columnsOf, emptyStored, metaJsonOf, readStoredPlaybook, writeStoredPlaybook } from "./playbook-rows.js";

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






/**
 * The playbook section written and read bullet by bullet (`cm storage migrate` of a large
 * playbook): the same rows as `writeSection` of the whole section, without holding the bullets.
 */
export interface SqlitePlaybookStreams {
  /**
   * Replaces the layer's playbook with `head` (its `bullets` ignored) and the bullets `bullets`
   * yields, in one write transaction: nothing of it is kept when the iteration or a check throws.
   * Each bullet is checked as `writeSection` checks a playbook. Returns the bullets written.
   */
  writePlaybookStream(key: string, layer: Layer, head: Playbook, bullets: Iterable<Bullet>): Promise<number>;
  /** The layer's playbook without its bullets (`bullets: []`), or null when it has none. */
  readPlaybookHead(layer: Layer): Promise<Playbook | null>;
  /** The layer's bullets in order, validated as a full read validates them, `pageSize` rows per read. */
  readPlaybookBullets(layer: Layer, pageSize?: number): AsyncGenerator<Bullet, void, undefined>;
}

export function createSqliteTransfer(options: SqliteTransferOptions): StoreTransfer & SqlitePlaybookStreams {
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

  // -------------------------------------------------------------------------------------------
  // The playbook, bullet by bullet

  function invalidBullet(key: string, index: number, message: string, cause?: unknown): AppError {
    return new AppError("VALIDATION_FAILED", `Refusing to write an invalid playbook to ${key}: bullets.${index}: ${message}`, {
      hint: "The change was not saved; the playbook is unchanged.",
      details: { path: key },
      ...(cause !== undefined ? { cause } : {}),
    });
  }

  async function writePlaybookStream(key: string, layer: Layer, head: Playbook, bullets: Iterable<Bullet>): Promise<number> {
    const address = parseSectionKey(key);
    if (address.kind !== "playbook" || address.layer !== layer) throw new AppError("VALIDATION_FAILED", `Invalid storage section '${key}': not the ${layer} playbook`);
    const checkedHead = validatePlaybookForWrite({ ...head, bullets: [] }, key);
    const ldb = dbOf(layer);
    if (ldb === null) throw notInRepo();
    return ldb.write((db) => {
      const at = new Date().toISOString();
      // As writePlaybook with an empty stored playbook: the revision continues, the rows are new.
      const revision = db.prepare("SELECT revision FROM playbook WHERE id = 1").pluck().get() as number | undefined;
      const floorText = db.prepare("SELECT value FROM meta WHERE key = ?").pluck().get(REVISION_FLOOR) as string | undefined;
      const last = Math.max(revision ?? 0, floorText !== undefined ? Number(floorText) || 0 : 0);
      clearStoredPlaybook(db);
      db.prepare("INSERT INTO playbook (id, body, revision, updated_at) VALUES (1, ?, ?, ?)").run(metaJsonOf(checkedHead), last + 1, at);
      const insert = db.prepare(
        "INSERT INTO bullets (pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      );
      let index = 0;
      for (const input of bullets) {
        const parsed = BulletSchema.safeParse(input);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
          throw invalidBullet(key, index, `${where}${issue?.message ?? "invalid"}`, parsed.error);
        }
        insert.run(index * POSITION_STEP, ...columnsOf(parsed.data), JSON.stringify(parsed.data));
        index += 1;
        // Test-only: a process killed with part of the bullets inserted (the transaction is open).
        if (index % 1000 === 0) crashPoint("sqlite:migrate-playbook-rows");
      }
      markFile(db, "playbook.yaml", at);
      return index;
    });
  }

  async function readPlaybookHead(layer: Layer): Promise<Playbook | null> {
    const ldb = dbOf(layer);
    if (ldb === null) return null;
    const body = ldb.read((db) => db.prepare("SELECT body FROM playbook WHERE id = 1").pluck().get() as string | undefined, undefined);
    if (body === undefined) return null;
    let top: unknown;
    try {
      top = JSON.parse(body);
    } catch (error) {
      throw corruptDatabase(ldb.path, "the playbook record is not valid JSON", error);
    }
    if (top === null || typeof top !== "object" || Array.isArray(top)) throw corruptDatabase(ldb.path, "the playbook record is not a JSON object");
    const parsed = PlaybookSchema.safeParse({ ...(top as Record<string, unknown>), bullets: [] });
    if (!parsed.success) throw corruptDatabase(ldb.path, parsed.error.issues[0]?.message ?? "schema validation failed", parsed.error);
    return parsed.data;
  }

  async function* readPlaybookBullets(layer: Layer, pageSize = 500): AsyncGenerator<Bullet, void, undefined> {
    const ldb = dbOf(layer);
    if (ldb === null) return;
    let after: [number, number] | null = null;
    for (;;) {
      const from: [number, number] | null = after;
      type Row = [number, number, string, string];
      const page: Row[] = ldb.read(
        (db): Row[] =>
          (from === null
            ? db.prepare("SELECT row, pos, id, body FROM bullets ORDER BY pos, row LIMIT ?").raw().all(pageSize)
            : db.prepare("SELECT row, pos, id, body FROM bullets WHERE pos > ? OR (pos = ? AND row > ?) ORDER BY pos, row LIMIT ?").raw().all(from[1], from[1], from[0], pageSize)) as Row[],
        [],
      );
      for (const [row, pos, id, body] of page) {
        let value: unknown;
        try {
          value = JSON.parse(body);
        } catch (error) {
          throw corruptDatabase(ldb.path, `bullet ${JSON.stringify(id)} (row ${row}) is not valid JSON`, error);
        }
        const parsed = BulletSchema.safeParse(value ?? {});
        if (!parsed.success) throw corruptDatabase(ldb.path, `bullet ${JSON.stringify(id)} (row ${row}): ${parsed.error.issues[0]?.message ?? "invalid"}`, parsed.error);
        after = [row, pos];
        yield parsed.data;
      }
      if (page.length < pageSize) return;
    }
  }

  return { listSections, readSection, writeSection, writePlaybookStream, readPlaybookHead, readPlaybookBullets };
}
