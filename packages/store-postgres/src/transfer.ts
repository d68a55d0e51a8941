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
import type { CostEntry, DiaryEntry, JournalEvent, Layer, LogName, Logger, Playbook, StoreSection, StoreTransfer } from "@cass-memory/core";
import { pgText, type PgDatabase, type Sql } from "./database.js";
import { clearStoredPlaybook, emptyStored, readStoredPlaybook, writeStoredPlaybook } from "./playbook-rows.js";

/**
 * Section-wise reading and writing of the PostgreSQL store (`cm storage migrate`). Each section is
 * read in one snapshot and written in one transaction of its layer (holding the layer's row lock):
 * the section's rows are deleted and the new ones inserted, so a section copied twice ends the same.
 */

export interface PostgresTransferOptions {
  db: PgDatabase;
  spaces: { global: string; repo: string | null };
  logger: Logger;
  logFiles: Readonly<Record<LogName, string>>;
  where: (space: string) => string;
}

const COST_TOTAL_DOC = `${COST_DIR}/${COST_TOTAL_FILE}`;

async function column(sql: Sql, text: string, values: unknown[]): Promise<string[]> {
  return ((await sql.query({ text, values, rowMode: "array" })).rows as Array<[string]>).map((r) => r[0]);
}

async function document(sql: Sql, space: string, name: string): Promise<string | null> {
  return ((await sql.query("SELECT text FROM cm_documents WHERE space = $1 AND name = $2", [space, name])).rows[0]?.text as string | undefined) ?? null;
}

async function putDocument(sql: Sql, space: string, name: string, text: string, at: string): Promise<void> {
  await sql.query(
    "INSERT INTO cm_documents (space, name, text, updated_at) VALUES ($1, $2, $3, $4) ON CONFLICT (space, name) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
    [space, name, text, at],
  );
}

async function markFile(sql: Sql, space: string, name: string, at: string): Promise<void> {
  await sql.query("INSERT INTO cm_layer_files (space, name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING", [space, name, at]);
}

export function createPostgresTransfer(options: PostgresTransferOptions): StoreTransfer {
  const { db, spaces, logger, logFiles, where } = options;
  const spaceOf = (layer: Layer): string | null => (layer === "global" ? spaces.global : spaces.repo);
  const G = spaces.global;

  async function readLayerSection(sql: Sql, space: string, section: StoreSection): Promise<StoreSection> {
    switch (section.kind) {
      case "playbook":
        return { ...section, playbook: (await readStoredPlaybook(sql, space, where(space)))?.playbook ?? null };
      case "journal": {
        const events: JournalEvent[] = [];
        let skipped = 0;
        for (const line of await column(sql, "SELECT event FROM cm_journal WHERE space = $1 ORDER BY seq", [space])) {
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
        const blocked = parseJsonLines((await column(sql, "SELECT line FROM cm_blocked WHERE space = $1 AND source = 'blocked' ORDER BY seq", [space])).join("\n"));
        const toxic = parseJsonLines((await column(sql, "SELECT line FROM cm_blocked WHERE space = $1 AND source = 'toxic' ORDER BY seq", [space])).join("\n"));
        return { ...section, blocked: blocked.values, toxic: toxic.values, skipped: blocked.malformed + toxic.malformed };
      }
      case "log": {
        const { values, malformed } = parseJsonLines((await column(sql, "SELECT line FROM cm_logs WHERE space = $1 AND log = $2 ORDER BY seq", [space, section.log])).join("\n"));
        return { ...section, records: values, skipped: malformed };
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a layer section`);
    }
  }

  async function readGlobalSection(sql: Sql, section: StoreSection): Promise<StoreSection> {
    switch (section.kind) {
      case "diaries": {
        const rows = (await sql.query("SELECT name, text FROM cm_diaries WHERE space = $1 ORDER BY written_seq DESC, timestamp DESC", [G])).rows as Array<{ text: string }>;
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
        const text = (await column(sql, "SELECT line FROM cm_processed_log WHERE space = $1 AND log = $2 ORDER BY seq", [G, section.log])).join("\n");
        const { records, malformed } = decodeProcessedLog(text);
        if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${where(G)}/${PROCESSED_LOG_DIR}/${processedLogFileName(section.log)}`);
        return { ...section, records };
      }
      case "onboarding": {
        const text = await document(sql, G, ONBOARDING_STATE_FILE);
        return { ...section, state: text === null ? null : decodeOnboardingState(text) };
      }
      case "costs": {
        const months: Record<string, CostEntry[]> = {};
        let skipped = 0;
        for (const month of await column(sql, "SELECT DISTINCT month FROM cm_cost_entries WHERE space = $1 ORDER BY month", [G])) {
          const { values, malformed } = parseJsonLines((await column(sql, "SELECT line FROM cm_cost_entries WHERE space = $1 AND month = $2 ORDER BY seq", [G, month])).join("\n"));
          skipped += malformed;
          if (values.length > 0) months[month] = values as CostEntry[];
        }
        const cost = costTotalsOfText(await document(sql, G, COST_TOTAL_DOC));
        return { ...section, months, totals: cost.totals, skipped: skipped + cost.skipped };
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a global section`);
    }
  }

  async function readSection(key: string): Promise<StoreSection> {
    const empty = emptySection(key);
    const layer = sectionLayer(parseSectionKey(key));
    if (layer === null) return db.read((sql) => readGlobalSection(sql, empty));
    const space = spaceOf(layer);
    if (space === null) return empty;
    return db.read((sql) => readLayerSection(sql, space, empty));
  }

  async function listSections(): Promise<string[]> {
    const keys: string[] = [];
    for (const layer of ["global", "repo"] as const) {
      const space = spaceOf(layer);
      if (space === null) continue;
      for (const key of layerSectionKeys(layer)) {
        if (key.endsWith("/playbook")) {
          const has = await db.read(async (sql) => (await sql.query("SELECT 1 FROM cm_spaces WHERE space = $1 AND playbook IS NOT NULL", [space])).rows.length > 0);
          if (has) keys.push(key);
        } else if (sectionHoldsData(await readSection(key))) {
          keys.push(key);
        }
      }
    }
    if (await db.read(async (sql) => (await sql.query("SELECT 1 FROM cm_diaries WHERE space = $1 LIMIT 1", [G])).rows.length > 0)) keys.push("diaries");
    for (const log of await db.read((sql) => column(sql, "SELECT DISTINCT log FROM cm_processed_log WHERE space = $1", [G]))) {
      if (!isProcessedLogName(log)) continue;
      const key = `processed/${log}`;
      if (sectionHoldsData(await readSection(key))) keys.push(key);
    }
    for (const key of ["onboarding", "costs"]) if (sectionHoldsData(await readSection(key))) keys.push(key);
    return sortSectionKeys(keys);
  }

  async function writePlaybook(sql: Sql, space: string, layer: Layer, playbook: Playbook | null, at: string): Promise<void> {
    // The revision keeps growing across replacements, so long-running readers never mistake a new playbook for an old one.
    const revision = ((await sql.query("SELECT revision FROM cm_spaces WHERE space = $1", [space])).rows[0]?.revision as number | undefined) ?? 0;
    await clearStoredPlaybook(sql, space);
    if (playbook === null) {
      await sql.query("UPDATE cm_spaces SET revision = revision + 1 WHERE space = $1", [space]);
      await sql.query("DELETE FROM cm_layer_files WHERE space = $1 AND name = 'playbook.yaml'", [space]);
      return;
    }
    await writeStoredPlaybook(sql, space, { ...emptyStored(layer), revision }, playbook, at);
    await markFile(sql, space, "playbook.yaml", at);
  }

  async function writeLayerSection(sql: Sql, space: string, section: StoreSection, at: string): Promise<void> {
    switch (section.kind) {
      case "playbook":
        return writePlaybook(sql, space, section.layer, section.playbook, at);
      case "journal":
        await sql.query("DELETE FROM cm_journal WHERE space = $1", [space]);
        await sql.query("INSERT INTO cm_journal (space, bullet_id, timestamp, event) SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[])", [
          space,
          section.events.map((e) => pgText(e.bulletId)),
          section.events.map((e) => pgText(e.timestamp)),
          section.events.map((e) => JSON.stringify(e)),
        ]);
        return;
      case "blocked":
        await sql.query("DELETE FROM cm_blocked WHERE space = $1", [space]);
        await sql.query("INSERT INTO cm_blocked (space, source, line) SELECT $1, * FROM unnest($2::text[], $3::text[])", [
          space,
          [...section.blocked.map(() => "blocked"), ...section.toxic.map(() => "toxic")],
          [...section.blocked, ...section.toxic].map((entry) => JSON.stringify(entry)),
        ]);
        await markFile(sql, space, "blocked.log", at);
        return;
      case "log":
        await sql.query("DELETE FROM cm_logs WHERE space = $1 AND log = $2", [space, section.log]);
        await sql.query("INSERT INTO cm_logs (space, log, line) SELECT $1, $2, unnest($3::text[])", [space, section.log, section.records.map((r) => JSON.stringify(r))]);
        await markFile(sql, space, logFiles[section.log], at);
        return;
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a layer section`);
    }
  }

  async function writeGlobalSection(sql: Sql, section: StoreSection, at: string): Promise<void> {
    switch (section.kind) {
      case "diaries": {
        await sql.query("DELETE FROM cm_diaries WHERE space = $1", [G]);
        // Oldest first: the store lists diaries by descending write sequence.
        const oldestFirst = [...section.entries].reverse();
        await sql.query(
          "INSERT INTO cm_diaries (space, name, session_path, timestamp, written_seq, written_at, text) SELECT $1, n, s, t, q, $2, x FROM unnest($3::text[], $4::text[], $5::text[], $6::bigint[], $7::text[]) AS u(n, s, t, q, x)",
          [
            G,
            at,
            oldestFirst.map((e) => e.id),
            oldestFirst.map((e) => pgText(e.sessionPath)),
            oldestFirst.map((e) => pgText(e.timestamp)),
            oldestFirst.map((_, i) => i + 1),
            oldestFirst.map((e) => JSON.stringify(e, null, 2)),
          ],
        );
        return;
      }
      case "processed": {
        const encoded = encodeProcessedSessions(section.records);
        await sql.query("DELETE FROM cm_processed_log WHERE space = $1 AND log = $2", [G, section.log]);
        if (encoded.length === 0) return;
        await sql.query("INSERT INTO cm_processed_log (space, log, line) SELECT $1, $2, unnest($3::text[])", [G, section.log, [PROCESSED_LOG_HEADER, ...encoded]]);
        await markFile(sql, G, `${PROCESSED_LOG_DIR}/${processedLogFileName(section.log)}`, at);
        return;
      }
      case "onboarding":
        if (section.state === null) {
          await sql.query("DELETE FROM cm_documents WHERE space = $1 AND name = $2", [G, ONBOARDING_STATE_FILE]);
          return;
        }
        await putDocument(sql, G, ONBOARDING_STATE_FILE, encodeOnboardingState(section.state), at);
        await markFile(sql, G, ONBOARDING_STATE_FILE, at);
        return;
      case "costs": {
        await sql.query("DELETE FROM cm_cost_entries WHERE space = $1", [G]);
        for (const month of Object.keys(section.months).sort()) {
          const entries = section.months[month] ?? [];
          if (!isCostMonth(month) || entries.length === 0) continue;
          await sql.query("INSERT INTO cm_cost_entries (space, month, line) SELECT $1, $2, unnest($3::text[])", [G, month, entries.map((e) => JSON.stringify(e))]);
          await markFile(sql, G, `${COST_DIR}/monthly-${month}.jsonl`, at);
        }
        if (section.totals === null) {
          await sql.query("DELETE FROM cm_documents WHERE space = $1 AND name = $2", [G, COST_TOTAL_DOC]);
        } else {
          await putDocument(sql, G, COST_TOTAL_DOC, JSON.stringify(section.totals, null, 2), at);
          await markFile(sql, G, COST_TOTAL_DOC, at);
        }
        return;
      }
      default:
        throw new AppError("INTERNAL_ERROR", `Section ${section.key} is not a global section`);
    }
  }

  async function writeSection(input: StoreSection): Promise<void> {
    const section = checkSection(input);
    const layer = sectionLayer(parseSectionKey(section.key));
    const space = layer === null ? G : spaceOf(layer);
    if (space === null) throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", { hint: "cd into a git repository first" });
    await db.write(space, async (sql) => {
      const at = new Date().toISOString();
      if (layer === null) await writeGlobalSection(sql, section, at);
      else await writeLayerSection(sql, space, section, at);
    });
  }

  return { listSections, readSection, writeSection };
}
