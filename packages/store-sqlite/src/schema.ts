/**
 * The database schema, as an ordered list of migrations. A database records the migrations it has
 * (`schema_migrations`) and its version (`PRAGMA user_version`, the number of the last one); opening
 * a database applies the missing ones in one `BEGIN IMMEDIATE` transaction. Migrations are only ever
 * appended to this list, never edited.
 */

/** `PRAGMA application_id` of a cass-memory database ("cass" in ASCII), to recognise one. */
export const APPLICATION_ID = 0x63617373;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial",
    sql: `
      -- Facts about this database: which layer it holds, when it was created.
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

      -- Names of the original's files whose content this layer holds (playbook.yaml, blocked.log,
      -- usage.jsonl, …), even when empty: what layerStatus reports.
      CREATE TABLE layer_files (name TEXT PRIMARY KEY, created_at TEXT NOT NULL) STRICT;

      -- The playbook without its bullets (schema_version, name, description, metadata,
      -- deprecatedPatterns and unknown top-level fields) as JSON. revision counts mutations.
      CREATE TABLE playbook (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        body TEXT NOT NULL,
        revision INTEGER NOT NULL,
        updated_at TEXT NOT NULL
      ) STRICT;

      -- One row per bullet: the full record as JSON (body, with feedback events and unknown fields)
      -- plus columns for queries. pos orders the playbook (gaps leave room for inserts); ids are not
      -- unique because a hand-edited playbook may repeat one.
      CREATE TABLE bullets (
        row INTEGER PRIMARY KEY,
        pos INTEGER NOT NULL,
        id TEXT NOT NULL,
        category TEXT NOT NULL,
        content TEXT NOT NULL,
        tags TEXT NOT NULL,
        state TEXT NOT NULL,
        maturity TEXT NOT NULL,
        deprecated INTEGER NOT NULL,
        updated_at TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        body TEXT NOT NULL
      ) STRICT;
      CREATE INDEX bullets_pos ON bullets (pos);
      CREATE INDEX bullets_id ON bullets (id);
      CREATE INDEX bullets_category ON bullets (category);
      CREATE INDEX bullets_status ON bullets (state, maturity, deprecated);
      CREATE INDEX bullets_updated_at ON bullets (updated_at);
      CREATE INDEX bullets_content_hash ON bullets (content_hash);

      -- Full-text index over content, tags and category, kept in step with bullets by triggers.
      CREATE VIRTUAL TABLE bullets_fts USING fts5(
        content, tags, category,
        content = 'bullets', content_rowid = 'row',
        tokenize = 'porter unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER bullets_fts_insert AFTER INSERT ON bullets BEGIN
        INSERT INTO bullets_fts (rowid, content, tags, category) VALUES (new.row, new.content, new.tags, new.category);
      END;
      CREATE TRIGGER bullets_fts_delete AFTER DELETE ON bullets BEGIN
        INSERT INTO bullets_fts (bullets_fts, rowid, content, tags, category) VALUES ('delete', old.row, old.content, old.tags, old.category);
      END;
      CREATE TRIGGER bullets_fts_update AFTER UPDATE OF content, tags, category ON bullets BEGIN
        INSERT INTO bullets_fts (bullets_fts, rowid, content, tags, category) VALUES ('delete', old.row, old.content, old.tags, old.category);
        INSERT INTO bullets_fts (rowid, content, tags, category) VALUES (new.row, new.content, new.tags, new.category);
      END;

      -- Audit journal: one JSON event per row, oldest first.
      CREATE TABLE journal (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        bullet_id TEXT,
        timestamp TEXT,
        event TEXT NOT NULL
      ) STRICT;
      CREATE INDEX journal_bullet ON journal (bullet_id);

      -- Blocked entries, one JSON line each as the original's blocked.log holds them; source
      -- 'toxic' holds the legacy toxic log (read only). Lines are kept verbatim, malformed ones too.
      CREATE TABLE blocked (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL CHECK (source IN ('blocked', 'toxic')),
        line TEXT NOT NULL
      ) STRICT;

      -- The JSONL logs (outcomes, context-log, traumas, usage, privacy-audit, reflection-runs).
      CREATE TABLE logs (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        log TEXT NOT NULL,
        line TEXT NOT NULL
      ) STRICT;
      CREATE INDEX logs_by_name ON logs (log, seq);

      -- Processed-sessions logs (global, ws-<8 hex>): their lines, header and legacy lines included.
      CREATE TABLE processed_log (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        log TEXT NOT NULL,
        line TEXT NOT NULL
      ) STRICT;
      CREATE INDEX processed_log_by_name ON processed_log (log, seq);

      -- Diary entries (pretty JSON text as the original's diary files). written_seq orders them
      -- like file modification times: every write takes the next number.
      CREATE TABLE diaries (
        name TEXT PRIMARY KEY,
        session_path TEXT,
        timestamp TEXT,
        written_seq INTEGER NOT NULL,
        written_at TEXT NOT NULL,
        text TEXT NOT NULL
      ) STRICT;
      CREATE INDEX diaries_session ON diaries (session_path);
      CREATE INDEX diaries_written ON diaries (written_seq);

      -- Single JSON documents named like the original's files: onboarding-state.json,
      -- cost/total.json (and backups of damaged ones).
      CREATE TABLE documents (name TEXT PRIMARY KEY, text TEXT NOT NULL, updated_at TEXT NOT NULL) STRICT;

      -- LLM cost entries (one JSON line each), by the UTC month they were recorded in.
      CREATE TABLE cost_entries (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        month TEXT NOT NULL,
        line TEXT NOT NULL
      ) STRICT;
      CREATE INDEX cost_entries_month ON cost_entries (month, seq);
    `,
  },
];

/** The schema version this code writes: the number of the last migration. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
