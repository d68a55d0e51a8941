import { BulletSchema, POSITION_STEP, PlaybookSchema, createEmptyPlaybook, hashContent, isCanonicalBullet, keptRows, spreadPositions } from "@cass-memory/core";
import type { Bullet, CandidateSearch, Layer, Playbook } from "@cass-memory/core";
import { searchCandidateRows } from "./candidate-search.js";
import { corruptDatabase, type Db } from "./database.js";

/**
 * The playbook in rows: one `playbook` row for everything but the bullets, one `bullets` row per
 * bullet (full record as JSON + query columns + FTS). A mutation rewrites only the rows whose JSON
 * changed, and keeps the order with sparse positions.
 */


interface BulletRow {
  row: number;
  pos: number;
  id: string;
  body: string;
  /** The body parsed (before validation): its content, category and tags decide whether the FTS row changes. */
  value: { content?: unknown; category?: unknown; tags?: unknown };
}

/** A playbook as read inside a write transaction, with what is needed to write only the changes. */
export interface StoredPlaybook {
  playbook: Playbook;
  metaJson: string;
  rows: BulletRow[];
  revision: number;
  /** Only some of the playbook's bullets were read (readStoredSubset): the others are left alone. */
  partial?: boolean;
}

function issueText(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): string {
  const issue = error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  return `${where}${issue?.message ?? "schema validation failed"}`;
}

function parseJson(text: string, path: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corruptDatabase(path, `${what} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

/** Reads and validates the layer's playbook; null when none was ever written. PLAYBOOK_CORRUPT when it cannot be decoded. */
export function readStoredPlaybook(db: Db, path: string, layer: Layer): StoredPlaybook | null {
  const meta = db.prepare("SELECT body, revision FROM playbook WHERE id = 1").get() as { body: string; revision: number } | undefined;
  // Arrays rather than objects per row: a third faster on large playbooks.
  const raw = db.prepare("SELECT row, pos, id, body FROM bullets ORDER BY pos, row").raw().all() as Array<[number, number, string, string]>;
  if (meta === undefined) {
    if (raw.length > 0) throw corruptDatabase(path, `${raw.length} bullet row(s) but no playbook record`);
    return null;
  }
  const top = parseJson(meta.body, path, "the playbook record");
  if (top === null || typeof top !== "object" || Array.isArray(top)) {
    throw corruptDatabase(path, "the playbook record is not a JSON object");
  }
  const rows: BulletRow[] = raw.map(([row, pos, id, body]) => {
    const value = parseJson(body, path, `bullet ${JSON.stringify(id)} (row ${row})`);
    return { row, pos, id, body, value: (value ?? {}) as BulletRow["value"] };
  });
  const bullets = rows.map((r) => r.value);
  const parsed = PlaybookSchema.safeParse({ ...(top as Record<string, unknown>), bullets });
  if (!parsed.success) throw corruptDatabase(path, issueText(parsed.error), parsed.error);
  return { playbook: parsed.data, metaJson: meta.body, rows, revision: meta.revision };
}

/**
 * Like readStoredPlaybook, but with only the bullets whose id is in `ids` (in playbook order): what
 * a mutation scoped to those bullets needs (see MutationScope). `partial` is set so that the write
 * touches only these rows.
 */
export function readStoredSubset(db: Db, path: string, layer: Layer, ids: readonly string[]): StoredPlaybook | null {
  const meta = db.prepare("SELECT body, revision FROM playbook WHERE id = 1").get() as { body: string; revision: number } | undefined;
  if (meta === undefined) return null;
  const top = parseJson(meta.body, path, "the playbook record");
  if (top === null || typeof top !== "object" || Array.isArray(top)) {
    throw corruptDatabase(path, "the playbook record is not a JSON object");
  }
  const raw: Array<[number, number, string, string]> = [];
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    raw.push(
      ...(db.prepare(`SELECT row, pos, id, body FROM bullets WHERE id IN (${chunk.map(() => "?").join(",")})`).raw().all(...chunk) as Array<
        [number, number, string, string]
      >),
    );
  }
  raw.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  const rows: BulletRow[] = raw.map(([row, pos, id, body]) => {
    const value = parseJson(body, path, `bullet ${JSON.stringify(id)} (row ${row})`);
    return { row, pos, id, body, value: (value ?? {}) as BulletRow["value"] };
  });
  const parsed = PlaybookSchema.safeParse({ ...(top as Record<string, unknown>), bullets: rows.map((r) => r.value) });
  if (!parsed.success) throw corruptDatabase(path, issueText(parsed.error), parsed.error);
  return { playbook: parsed.data, metaJson: meta.body, rows, revision: meta.revision, partial: true };
}

/** An empty playbook of the layer, as a first mutation starts from. */
export function emptyStored(layer: Layer): StoredPlaybook {
  return { playbook: createEmptyPlaybook(new Date().toISOString(), layer), metaJson: "", rows: [], revision: 0 };
}

export function metaJsonOf(playbook: Playbook): string {
  const { bullets: _bullets, ...rest } = playbook;
  return JSON.stringify(rest);
}

const tagsText = (bullet: Bullet): string => (bullet.tags ?? []).join(" ");

function sameTags(old: unknown, next: readonly string[] | undefined): boolean {
  const a = Array.isArray(old) ? old : [];
  const b = next ?? [];
  return a.length === b.length && a.every((tag, i) => tag === b[i]);
}

export function columnsOf(bullet: Bullet): unknown[] {
  return [
    bullet.id,
    bullet.category,
    bullet.content,
    tagsText(bullet),
    bullet.state,
    bullet.maturity,
    bullet.deprecated ? 1 : 0,
    bullet.updatedAt,
    hashContent(bullet.content),
  ];
}

/**
 * Writes `next` over `stored` inside the caller's write transaction: the playbook row, then only
 * the bullet rows that were added, removed, changed or moved. Returns the new revision. When
 * `stored` is partial, rows that were not read are neither moved nor removed.
 */
export function writeStoredPlaybook(db: Db, stored: StoredPlaybook, next: Playbook, nowIso: string): number {
  const revision = stored.revision + 1;
  const metaJson = metaJsonOf(next);
  db.prepare(
    "INSERT INTO playbook (id, body, revision, updated_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body, revision = excluded.revision, updated_at = excluded.updated_at",
  ).run(metaJson, revision, nowIso);

  // Pair each new bullet with an old row of the same id (first unused one, in order).
  const byId = new Map<string, BulletRow[]>();
  for (const row of stored.rows) {
    const list = byId.get(row.id);
    if (list === undefined) byId.set(row.id, [row]);
    else list.push(row);
  }
  const bodies = next.bullets.map((b) => JSON.stringify(b));
  const match: Array<BulletRow | undefined> = next.bullets.map((b) => byId.get(b.id)?.shift());
  const matchedPos = match.map((row) => row?.pos);
  const kept = keptRows(matchedPos);

  // Positions: kept rows stay; the others are spread over the gaps between kept neighbours.
  let positions: number[];
  if (stored.partial) {
    // Only some rows were read: matched rows keep their place, new bullets go after the last row.
    positions = new Array<number>(next.bullets.length);
    let end = Number(db.prepare("SELECT coalesce(max(pos), -1) FROM bullets").pluck().get());
    for (let i = 0; i < next.bullets.length; i += 1) {
      const row = match[i];
      positions[i] = row !== undefined ? row.pos : (end += POSITION_STEP);
    }
  } else positions = spreadPositions(matchedPos, kept);

  const insert = db.prepare(
    "INSERT INTO bullets (pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const update = db.prepare(
    "UPDATE bullets SET pos = ?, id = ?, category = ?, content = ?, tags = ?, state = ?, maturity = ?, deprecated = ?, updated_at = ?, content_hash = ?, body = ? WHERE row = ?",
  );
  // Without the indexed text columns, so that the full-text index is not touched (feedback, state changes).
  const updateUnindexed = db.prepare("UPDATE bullets SET pos = ?, state = ?, maturity = ?, deprecated = ?, updated_at = ?, body = ? WHERE row = ?");
  const move = db.prepare("UPDATE bullets SET pos = ? WHERE row = ?");
  const remove = db.prepare("DELETE FROM bullets WHERE row = ?");

  const used = new Set<number>();
  for (let i = 0; i < next.bullets.length; i += 1) {
    const row = match[i];
    const pos = positions[i] as number;
    const body = bodies[i] as string;
    if (row === undefined) {
      insert.run(pos, ...columnsOf(next.bullets[i] as Bullet), body);
      continue;
    }
    used.add(row.row);
    const b = next.bullets[i] as Bullet;
    if (row.body === body) {
      if (row.pos !== pos) move.run(pos, row.row);
    } else if (row.value.content === b.content && row.value.category === b.category && sameTags(row.value.tags, b.tags)) {
      updateUnindexed.run(pos, b.state, b.maturity, b.deprecated ? 1 : 0, b.updatedAt, body, row.row);
    } else {
      update.run(pos, ...columnsOf(b), body, row.row);
    }
  }
  for (const row of stored.rows) if (!used.has(row.row)) remove.run(row.row);
  return revision;
}

/** Removes the playbook and its bullets (a reset by `initialize`). */
export function clearStoredPlaybook(db: Db): void {
  db.exec("DELETE FROM bullets; DELETE FROM playbook;");
}

export interface BulletCandidate {
  bullet: Bullet;
  /** Full-text relevance (higher is better: the negated bm25 of the match). */
  score: number;
}

/**
 * The FTS5 query for free text: its words (letters and digits), each quoted, joined with OR, so that
 * any shared word makes a bullet a candidate and bm25 ranks the ones sharing more and rarer words.
 */
export function ftsQueryOf(text: string, maxTerms = 32): string | null {
  const words = new Set<string>();
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    words.add(match[0]);
    if (words.size >= maxTerms) break;
  }
  if (words.size === 0) return null;
  return [...words].map((w) => `"${w}"`).join(" OR ");
}

/** Candidate bullets for `query` from the full-text index, best first (rows that do not decode are skipped). */
export function searchCandidates(db: Db, query: string, limit: number, activeOnly: boolean): Array<{ row: number; body: string; score: number }> {
  const fts = ftsQueryOf(query);
  if (fts === null || limit <= 0) return [];
  const filter = activeOnly ? "AND b.state <> 'retired' AND b.maturity <> 'deprecated' AND b.deprecated = 0" : "";
  return db
    .prepare(
      `SELECT b.row AS row, b.body AS body, -bm25(bullets_fts) AS score FROM bullets_fts JOIN bullets b ON b.row = bullets_fts.rowid WHERE bullets_fts MATCH ? ${filter} ORDER BY bm25(bullets_fts), b.pos LIMIT ?`,
    )
    .all(fts, Math.floor(limit)) as Array<{ row: number; body: string; score: number }>;
}

export function decodeBullet(body: string): Bullet | null {
  try {
    const parsed = BulletSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The bullets of `bodies` (parsed), with the top-level record, as PlaybookSchema returns them, or
 * PLAYBOOK_CORRUPT. Bodies the store wrote skip the schema (see isCanonicalBullet); when any body
 * is not such a value, everything goes through the schema, exactly as a full read does.
 */
function decodeCandidatePlaybook(path: string, top: Record<string, unknown>, bodies: unknown[]): Playbook {
  if (bodies.every(isCanonicalBullet)) {
    // The top-level record alone (its bullets come last in the schema, so a fault in it is the
    // first issue either way).
    const head = PlaybookSchema.safeParse({ ...top, bullets: [] });
    if (!head.success) throw corruptDatabase(path, issueText(head.error), head.error);
    return { ...head.data, bullets: bodies as Bullet[] };
  }
  const parsed = PlaybookSchema.safeParse({ ...top, bullets: bodies });
  if (!parsed.success) throw corruptDatabase(path, issueText(parsed.error), parsed.error);
  return parsed.data;
}

/**
 * The layer's playbook with only candidate bullets (see `BulletCandidateIndex.readCandidates`):
 * the best `limit` active matches of the terms and concepts (searchCandidateRows), plus the bullets with the
 * given ids, in playbook order (so ties rank as they would over the whole playbook). Null when the
 * layer has no playbook.
 */
export function readCandidatePlaybook(
  db: Db,
  path: string,
  layer: Layer,
  query: CandidateSearch,
): Playbook | null {
  const meta = db.prepare("SELECT body FROM playbook WHERE id = 1").get() as { body: string } | undefined;
  if (meta === undefined) return null;
  const top = parseJson(meta.body, path, "the playbook record");
  if (top === null || typeof top !== "object" || Array.isArray(top)) {
    throw corruptDatabase(path, "the playbook record is not a JSON object");
  }
  const rows = new Map<number, { pos: number; id: string; body: string }>();
  const found = searchCandidateRows(db, query.terms, query.limit, query);
  if (found.length > 0) {
    const byRow = db
      .prepare("SELECT row, pos, id, body FROM bullets WHERE row IN (SELECT value FROM json_each(?))")
      .raw()
      .all(JSON.stringify(found)) as Array<[number, number, string, string]>;
    for (const [row, pos, id, body] of byRow) rows.set(row, { pos, id, body });
  }
  const ids = query.ids ?? [];
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const byId = db
      .prepare(`SELECT row, pos, id, body FROM bullets WHERE id IN (${chunk.map(() => "?").join(",")})`)
      .raw()
      .all(...chunk) as Array<[number, number, string, string]>;
    for (const [row, pos, id, body] of byId) rows.set(row, { pos, id, body });
  }
  const ordered = [...rows.entries()].sort((a, b) => a[1].pos - b[1].pos || a[0] - b[0]);
  const bodies = ordered.map(([row, r]) => parseJson(r.body, path, `bullet ${JSON.stringify(r.id)} (row ${row})`));
  return decodeCandidatePlaybook(path, top as Record<string, unknown>, bodies);
}
