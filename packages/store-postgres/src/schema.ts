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
  {
    version: 2,
    name: "search table and term statistics",
    sql: `
      -- What the candidate search reads, narrow (no JSON bodies) so that the rows a search meets
      -- sit on few pages: each bullet's full-text vector, whether it is active, its text length
      -- and position. The GIN index moves here from cm_bullets (whose wide rows made every match
      -- cost a page read, and whose index every feedback update rewrote).
      CREATE TABLE cm_search (
        row bigint PRIMARY KEY,
        space text NOT NULL,
        active boolean NOT NULL,
        len integer NOT NULL,
        pos bigint NOT NULL,
        tsv tsvector NOT NULL
      );
      CREATE INDEX cm_search_tsv ON cm_search USING gin (tsv);
      DROP INDEX cm_bullets_tsv;

      -- How many bullets of a layer hold each lexeme, per column (weight 'A' content, 'B' tags,
      -- 'C' category, '*' any of them), and the layer's bullet count (lexeme '', weight '*'): what
      -- the candidate search reads to set common terms aside without reading their index lists.
      -- Counts that fall to 0 stay as rows (dropping a layer removes its rows).
      CREATE TABLE cm_terms (
        space text NOT NULL,
        lexeme text NOT NULL,
        weight "char" NOT NULL,
        df bigint NOT NULL,
        PRIMARY KEY (space, lexeme, weight)
      );

      -- The (space, lexeme, weight) rows one bullet contributes, each counted once.
      CREATE FUNCTION cm_terms_of(space text, tsv tsvector) RETURNS TABLE (space text, lexeme text, weight "char")
      LANGUAGE sql IMMUTABLE AS $fn$
        SELECT $1, '', '*'
        UNION ALL
        SELECT $1, t.lexeme, w.weight
        FROM unnest($2) AS t(lexeme, positions, weights),
             LATERAL (SELECT DISTINCT x::"char" AS weight FROM unnest(t.weights) AS x UNION ALL SELECT '*') AS w
      $fn$;

      -- Both are kept by statement triggers on cm_bullets, in the transaction of every write (which
      -- holds the layer's row lock, so a layer's rows are written by one transaction at a time).
      CREATE FUNCTION cm_search_apply() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          INSERT INTO cm_search (row, space, active, len, pos, tsv)
          SELECT row, space, state <> 'retired' AND maturity <> 'deprecated' AND NOT deprecated, length(content) + length(tags), pos, tsv FROM new_rows;
          INSERT INTO cm_terms AS t (space, lexeme, weight, df)
          SELECT d.space, d.lexeme, d.weight, count(*) FROM new_rows n, cm_terms_of(n.space, n.tsv) d GROUP BY 1, 2, 3
          ON CONFLICT (space, lexeme, weight) DO UPDATE SET df = t.df + excluded.df;
        ELSIF TG_OP = 'DELETE' THEN
          DELETE FROM cm_search WHERE row IN (SELECT row FROM old_rows);
          UPDATE cm_terms t SET df = t.df - d.n
          FROM (SELECT d.space, d.lexeme, d.weight, count(*) AS n FROM old_rows o, cm_terms_of(o.space, o.tsv) d GROUP BY 1, 2, 3) d
          WHERE t.space = d.space AND t.lexeme = d.lexeme AND t.weight = d.weight;
        ELSE
          -- Most updates leave the text alone (feedback counts, moves): only what changed is written.
          UPDATE cm_search s SET space = n.space, active = n.active, len = n.len, pos = n.pos, tsv = n.tsv
          FROM (SELECT row, space, state <> 'retired' AND maturity <> 'deprecated' AND NOT deprecated AS active, length(content) + length(tags) AS len, pos, tsv FROM new_rows) n
          WHERE s.row = n.row AND (s.space, s.active, s.len, s.pos, s.tsv) IS DISTINCT FROM (n.space, n.active, n.len, n.pos, n.tsv);
          WITH delta AS (
            SELECT space, lexeme, weight, sum(n) AS n FROM (
              SELECT d.space, d.lexeme, d.weight, 1 AS n FROM new_rows r JOIN old_rows o USING (row), cm_terms_of(r.space, r.tsv) d
              WHERE r.space <> o.space OR r.tsv <> o.tsv
              UNION ALL
              SELECT d.space, d.lexeme, d.weight, -1 FROM old_rows o JOIN new_rows r USING (row), cm_terms_of(o.space, o.tsv) d
              WHERE r.space <> o.space OR r.tsv <> o.tsv
            ) AS x GROUP BY 1, 2, 3 HAVING sum(n) <> 0
          )
          INSERT INTO cm_terms AS t (space, lexeme, weight, df) SELECT space, lexeme, weight, n FROM delta
          ON CONFLICT (space, lexeme, weight) DO UPDATE SET df = t.df + excluded.df;
        END IF;
        RETURN NULL;
      END
      $fn$;

      CREATE TRIGGER cm_search_insert AFTER INSERT ON cm_bullets REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_search_apply();
      CREATE TRIGGER cm_search_update AFTER UPDATE ON cm_bullets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_search_apply();
      CREATE TRIGGER cm_search_delete AFTER DELETE ON cm_bullets REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_search_apply();

      INSERT INTO cm_search (row, space, active, len, pos, tsv)
      SELECT row, space, state <> 'retired' AND maturity <> 'deprecated' AND NOT deprecated, length(content) + length(tags), pos, tsv FROM cm_bullets;
      INSERT INTO cm_terms (space, lexeme, weight, df)
      SELECT d.space, d.lexeme, d.weight, count(*) FROM cm_bullets b, cm_terms_of(b.space, b.tsv) d GROUP BY 1, 2, 3;
    `,
  },
  {
    version: 3,
    name: "postings",
    sql: `
      -- One row per bullet and lexeme: which columns hold the lexeme (bits: 1 content, 2 tags,
      -- 4 category) and whether the bullet is active. The primary key's index includes every
      -- column, so the candidate search reads a word's matches from the index alone (an index-only
      -- scan of consecutive entries) instead of fetching and re-testing one cm_search tuple per
      -- match; at 100,000 rules a task's words meet about 150,000 matches.
      CREATE TABLE cm_postings (
        space text NOT NULL,
        lexeme text NOT NULL,
        row bigint NOT NULL,
        cols smallint NOT NULL,
        active boolean NOT NULL,
        PRIMARY KEY (space, lexeme, row) INCLUDE (cols, active)
      );

      -- The (lexeme, columns) pairs of one bullet's vector. 'A' = ANY (weights) is exactly what
      -- tsv @@ 'lexeme:A' tests, so the postings answer the same questions as the vector.
      CREATE FUNCTION cm_postings_of(tsv tsvector) RETURNS TABLE (lexeme text, cols smallint)
      LANGUAGE sql IMMUTABLE AS $fn$
        SELECT t.lexeme, (CASE WHEN 'A' = ANY (t.weights) THEN 1 ELSE 0 END
                        + CASE WHEN 'B' = ANY (t.weights) THEN 2 ELSE 0 END
                        + CASE WHEN 'C' = ANY (t.weights) THEN 4 ELSE 0 END)::smallint
        FROM unnest($1) AS t(lexeme, positions, weights)
      $fn$;

      -- Kept by statement triggers on cm_bullets like cm_search and cm_terms (same transaction,
      -- under the layer's row lock). Updates that leave the text and the layer alone (feedback,
      -- moves) write nothing here unless the bullet's active state changed.
      CREATE FUNCTION cm_postings_apply() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $fn$
      BEGIN
        IF TG_OP = 'INSERT' THEN
          -- In key order: a bulk load then appends to the index instead of splitting pages all over it.
          INSERT INTO cm_postings (space, lexeme, row, cols, active)
          SELECT n.space, p.lexeme, n.row, p.cols, n.state <> 'retired' AND n.maturity <> 'deprecated' AND NOT n.deprecated
          FROM new_rows n, cm_postings_of(n.tsv) p ORDER BY 1, 2, 3;
        ELSIF TG_OP = 'DELETE' THEN
          DELETE FROM cm_postings c USING old_rows o, cm_postings_of(o.tsv) p
          WHERE c.space = o.space AND c.lexeme = p.lexeme AND c.row = o.row;
        ELSE
          DELETE FROM cm_postings c USING old_rows o JOIN new_rows n USING (row), cm_postings_of(o.tsv) p
          WHERE (o.space <> n.space OR o.tsv <> n.tsv) AND c.space = o.space AND c.lexeme = p.lexeme AND c.row = o.row;
          INSERT INTO cm_postings (space, lexeme, row, cols, active)
          SELECT n.space, p.lexeme, n.row, p.cols, n.state <> 'retired' AND n.maturity <> 'deprecated' AND NOT n.deprecated
          FROM new_rows n JOIN old_rows o USING (row), cm_postings_of(n.tsv) p
          WHERE o.space <> n.space OR o.tsv <> n.tsv ORDER BY 1, 2, 3;
          UPDATE cm_postings c SET active = x.active
          FROM (
            SELECT n.space, n.row, n.tsv, n.state <> 'retired' AND n.maturity <> 'deprecated' AND NOT n.deprecated AS active
            FROM new_rows n JOIN old_rows o USING (row)
            WHERE n.space = o.space AND n.tsv = o.tsv
              AND (n.state <> 'retired' AND n.maturity <> 'deprecated' AND NOT n.deprecated)
               <> (o.state <> 'retired' AND o.maturity <> 'deprecated' AND NOT o.deprecated)
          ) AS x, cm_postings_of(x.tsv) p
          WHERE c.space = x.space AND c.lexeme = p.lexeme AND c.row = x.row;
        END IF;
        RETURN NULL;
      END
      $fn$;

      CREATE TRIGGER cm_postings_insert AFTER INSERT ON cm_bullets REFERENCING NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_postings_apply();
      CREATE TRIGGER cm_postings_update AFTER UPDATE ON cm_bullets REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_postings_apply();
      CREATE TRIGGER cm_postings_delete AFTER DELETE ON cm_bullets REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION cm_postings_apply();

      INSERT INTO cm_postings (space, lexeme, row, cols, active)
      SELECT s.space, p.lexeme, s.row, p.cols, s.active FROM cm_search s, cm_postings_of(s.tsv) p ORDER BY 1, 2, 3;
    `,
  },
];

/** The schema version this code writes: the number of the last migration. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
