/**
 * The PostgreSQL schema, as an ordered list of migrations applied in one transaction under a
 * transaction-level advisory lock (so several machines starting at once apply each migration once).
 * Applied migrations are recorded in `cm_schema_migrations`; a database whose newest migration is
 * newer than this code knows is refused. Migrations are only ever appended, never edited.
 *
 * Every table is keyed by `space`: the layer a row belongs to (`global`, or `repo:<key>` for one
 * repository), so a team's global layer and all its repositories live in one database.
 */

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
      -- One row per layer: the lock every write to the layer takes (SELECT … FOR UPDATE), the
      -- playbook without its bullets (JSON text; NULL while the layer has no playbook), the
      -- playbook's revision, and a change counter bumped by every write (long-running readers
      -- compare it to see other machines' writes).
      CREATE TABLE cm_spaces (
        space text PRIMARY KEY,
        playbook text,
        revision bigint NOT NULL DEFAULT 0,
        changes bigint NOT NULL DEFAULT 0,
        updated_at text
      );

      -- Names of the original's files whose content a layer holds (what layerStatus reports).
      CREATE TABLE cm_layer_files (
        space text NOT NULL,
        name text NOT NULL,
        created_at text NOT NULL,
        PRIMARY KEY (space, name)
      );

      -- One row per bullet: the full record as JSON text (body) plus query columns and a generated
      -- full-text vector over content (A), tags (B) and category (C). pos orders the playbook.
      CREATE TABLE cm_bullets (
        row bigserial PRIMARY KEY,
        space text NOT NULL,
        pos bigint NOT NULL,
        id text NOT NULL,
        category text NOT NULL,
        content text NOT NULL,
        tags text NOT NULL,
        state text NOT NULL,
        maturity text NOT NULL,
        deprecated boolean NOT NULL,
        updated_at text NOT NULL,
        content_hash text NOT NULL,
        body text NOT NULL,
        tsv tsvector GENERATED ALWAYS AS (
          setweight(to_tsvector('english'::regconfig, content), 'A') ||
          setweight(to_tsvector('english'::regconfig, tags), 'B') ||
          setweight(to_tsvector('english'::regconfig, category), 'C')
        ) STORED
      );
      CREATE INDEX cm_bullets_pos ON cm_bullets (space, pos, row);
      CREATE INDEX cm_bullets_id ON cm_bullets (space, id);
      CREATE INDEX cm_bullets_tsv ON cm_bullets USING gin (tsv);

      CREATE TABLE cm_journal (
        seq bigserial PRIMARY KEY,
        space text NOT NULL,
        bullet_id text,
        timestamp text,
        event text NOT NULL
      );
      CREATE INDEX cm_journal_space ON cm_journal (space, seq);
      CREATE INDEX cm_journal_bullet ON cm_journal (space, bullet_id);

      CREATE TABLE cm_blocked (
        seq bigserial PRIMARY KEY,
        space text NOT NULL,
        source text NOT NULL CHECK (source IN ('blocked', 'toxic')),
        line text NOT NULL
      );
      CREATE INDEX cm_blocked_space ON cm_blocked (space, seq);

      CREATE TABLE cm_logs (
        seq bigserial PRIMARY KEY,
        space text NOT NULL,
        log text NOT NULL,
        line text NOT NULL
      );
      CREATE INDEX cm_logs_space ON cm_logs (space, log, seq);

      CREATE TABLE cm_processed_log (
        seq bigserial PRIMARY KEY,
        space text NOT NULL,
        log text NOT NULL,
        line text NOT NULL
      );
      CREATE INDEX cm_processed_log_space ON cm_processed_log (space, log, seq);

      CREATE TABLE cm_diaries (
        space text NOT NULL,
        name text NOT NULL,
        session_path text,
        timestamp text,
        written_seq bigint NOT NULL,
        written_at text NOT NULL,
        text text NOT NULL,
        PRIMARY KEY (space, name)
      );
      CREATE INDEX cm_diaries_written ON cm_diaries (space, written_seq);

      CREATE TABLE cm_documents (
        space text NOT NULL,
        name text NOT NULL,
        text text NOT NULL,
        updated_at text NOT NULL,
        PRIMARY KEY (space, name)
      );

      CREATE TABLE cm_cost_entries (
        seq bigserial PRIMARY KEY,
        space text NOT NULL,
        month text NOT NULL,
        line text NOT NULL
      );
      CREATE INDEX cm_cost_entries_space ON cm_cost_entries (space, month, seq);
    `,
  },
];

/** The schema version this code writes: the number of the last migration. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
