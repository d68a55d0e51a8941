import { AppError, BulletSchema, POSITION_STEP, PlaybookSchema, createEmptyPlaybook, hashContent, isCanonicalBullet, keptRows, spreadPositions } from "@cass-memory/core";
import type { Bullet, Layer, Playbook } from "@cass-memory/core";
import { pgText, type Sql } from "./database.js";

/**
 * The playbook in rows: the layer's `cm_spaces` row holds everything but the bullets, one
 * `cm_bullets` row per bullet (full record as JSON text + query columns + a generated tsvector).
 * A mutation rewrites only the rows whose JSON changed, in a few set-based statements.
 */


interface BulletRow {
  row: number;
  pos: number;
  id: string;
  body: string;
}

/** A playbook as read inside a write transaction, with what is needed to write only the changes. */
export interface StoredPlaybook {
  playbook: Playbook;
  rows: BulletRow[];
  revision: number;
  /** Only some bullets were read (a scoped mutation): the others are neither moved nor removed. */
  partial?: boolean;
}

export function corruptPlaybook(where: string, problem: string, cause?: unknown): AppError {
  return new AppError("PLAYBOOK_CORRUPT", `Playbook at ${where} is invalid: ${problem}`, {
    hint: "Fix or remove the damaged row in the database (see details), or restore the layer with 'cm storage migrate' from a backup.",
    details: { path: where },
    ...(cause !== undefined ? { cause } : {}),
  });
}

function issueText(error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> }): string {
  const issue = error.issues[0];
  const at = issue && issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ` : "";
  return `${at}${issue?.message ?? "schema validation failed"}`;
}

function parseJson(text: string, where: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw corruptPlaybook(where, `${what} is not valid JSON (${error instanceof Error ? error.message : String(error)})`, error);
  }
}

function topOf(text: string, where: string): Record<string, unknown> {
  const top = parseJson(text, where, "the playbook record");
  if (top === null || typeof top !== "object" || Array.isArray(top)) throw corruptPlaybook(where, "the playbook record is not a JSON object");
  return top as Record<string, unknown>;
}

/** Validates the top-level record and the bullets (stored bullets skip the schema when canonical). */
function decode(where: string, top: Record<string, unknown>, bodies: unknown[]): Playbook {
  if (bodies.every(isCanonicalBullet)) {
    const head = PlaybookSchema.safeParse({ ...top, bullets: [] });
    if (!head.success) throw corruptPlaybook(where, issueText(head.error), head.error);
    return { ...head.data, bullets: bodies as Bullet[] };
  }
  const parsed = PlaybookSchema.safeParse({ ...top, bullets: bodies });
  if (!parsed.success) throw corruptPlaybook(where, issueText(parsed.error), parsed.error);
  return parsed.data;
}

async function header(sql: Sql, space: string): Promise<{ body: string | null; revision: number } | null> {
  const result = await sql.query("SELECT playbook, revision FROM cm_spaces WHERE space = $1", [space]);
  const row = result.rows[0] as { playbook: string | null; revision: number } | undefined;
  return row === undefined ? null : { body: row.playbook, revision: row.revision };
}

function toRows(raw: unknown[][], where: string): { rows: BulletRow[]; bodies: unknown[] } {
  const rows: BulletRow[] = [];
  const bodies: unknown[] = [];
  for (const [row, pos, id, body] of raw as Array<[number, number, string, string]>) {
    rows.push({ row, pos, id, body });
    bodies.push(parseJson(body, where, `bullet ${JSON.stringify(id)} (row ${row})`));
  }
  return { rows, bodies };
}

/** The layer's playbook; null when none was written. PLAYBOOK_CORRUPT when it cannot be decoded. */
export async function readStoredPlaybook(sql: Sql, space: string, where: string): Promise<StoredPlaybook | null> {
  const head = await header(sql, space);
  const raw = await sql.query({ text: "SELECT row, pos, id, body FROM cm_bullets WHERE space = $1 ORDER BY pos, row", values: [space], rowMode: "array" });
  if (head === null || head.body === null) {
    if (raw.rows.length > 0) throw corruptPlaybook(where, `${raw.rows.length} bullet row(s) but no playbook record`);
    return null;
  }
  const { rows, bodies } = toRows(raw.rows, where);
  return { playbook: decode(where, topOf(head.body, where), bodies), rows, revision: head.revision };
}

/**
 * Like readStoredPlaybook with only the bullets whose id is in `ids` (see MutationScope): the
 * layer's record and those rows in one query.
 */
export async function readStoredSubset(sql: Sql, space: string, where: string, ids: readonly string[]): Promise<StoredPlaybook | null> {
  const raw = await sql.query({
    text: `SELECT 0 AS k, NULL::bigint AS row, NULL::bigint AS pos, NULL::text AS id, playbook AS body, revision FROM cm_spaces WHERE space = $1
           UNION ALL
           SELECT 1, row, pos, id, body, NULL FROM cm_bullets WHERE space = $1 AND id = ANY($2::text[])
           ORDER BY 1, 3, 2`,
    values: [space, [...new Set(ids)].map((id) => pgText(id))],
    rowMode: "array",
  });
  const all = raw.rows as Array<[number, number, number, string, string | null, number | null]>;
  const head = all[0]?.[0] === 0 ? all[0] : undefined;
  if (head === undefined || head[4] === null) return null;
  const { rows, bodies } = toRows(
    all.slice(1).map((r) => [r[1], r[2], r[3], r[4]]),
    where,
  );
  return { playbook: decode(where, topOf(head[4], where), bodies), rows, revision: head[5] as number, partial: true };
}

/**
 * A scoped mutation that only changed bullets it read (what `cm mark` does) written in one
 * statement: the layer's record, the changed rows, the journal events, the change counter and
 * the notification. Returns false (nothing written) when the change added, removed or moved a
 * bullet; writeStoredPlaybook then writes it.
 */
export async function writeScopedChanges(
  sql: Sql,
  space: string,
  stored: StoredPlaybook,
  next: Playbook,
  nowIso: string,
  events: ReadonlyArray<{ bulletId: string | null; timestamp: string | null; event: string }>,
  channel: string,
): Promise<boolean> {
  if (!stored.partial || next.bullets.length !== stored.rows.length) return false;
  const changed: Array<{ row: BulletRow; bullet: Bullet; body: string }> = [];
  for (let i = 0; i < next.bullets.length; i += 1) {
    const bullet = next.bullets[i] as Bullet;
    const row = stored.rows[i] as BulletRow;
    if (row.id !== bullet.id) return false;
    const body = JSON.stringify(bullet);
    if (body !== row.body) changed.push({ row, bullet, body });
  }
  await sql.query(
    `WITH head AS (
       UPDATE cm_spaces SET playbook = $2, revision = $3, updated_at = $4, changes = changes + 1 WHERE space = $1 RETURNING space
     ),
     bullets AS (
       UPDATE cm_bullets b SET category = u.category, content = u.content, tags = u.tags, state = u.state, maturity = u.maturity,
         deprecated = u.deprecated, updated_at = u.updated_at, content_hash = u.content_hash, body = u.body
       FROM unnest($5::bigint[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::boolean[], $12::text[], $13::text[], $14::text[])
         AS u(row, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body)
       WHERE b.row = u.row RETURNING 1
     ),
     journal AS (
       INSERT INTO cm_journal (space, bullet_id, timestamp, event) SELECT $1, * FROM unnest($15::text[], $16::text[], $17::text[]) RETURNING 1
     )
     SELECT pg_notify('${channel}', space) FROM head`,
    [
      space,
      metaJsonOf(next),
      stored.revision + 1,
      nowIso,
      changed.map((c) => c.row.row),
      changed.map((c) => pgText(c.bullet.category)),
      changed.map((c) => pgText(c.bullet.content)),
      changed.map((c) => pgText((c.bullet.tags ?? []).join(" "))),
      changed.map((c) => pgText(c.bullet.state)),
      changed.map((c) => pgText(c.bullet.maturity)),
      changed.map((c) => Boolean(c.bullet.deprecated)),
      changed.map((c) => pgText(c.bullet.updatedAt)),
      changed.map((c) => hashContent(c.bullet.content)),
      changed.map((c) => c.body),
      events.map((e) => e.bulletId),
      events.map((e) => e.timestamp),
      events.map((e) => e.event),
    ],
  );
  return true;
}

export function emptyStored(layer: Layer): StoredPlaybook {
  return { playbook: createEmptyPlaybook(new Date().toISOString(), layer), rows: [], revision: 0 };
}

function metaJsonOf(playbook: Playbook): string {
  const { bullets: _bullets, ...rest } = playbook;
  return JSON.stringify(rest);
}

const CHUNK = 5_000;

/** Inserts bullets at positions, in batches (unnest of column arrays). */
async function insertBullets(sql: Sql, space: string, items: Array<{ pos: number; bullet: Bullet; body: string }>): Promise<void> {
  for (let i = 0; i < items.length; i += CHUNK) {
    const part = items.slice(i, i + CHUNK);
    await sql.query(
      `INSERT INTO cm_bullets (space, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body)
       SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[], $11::text[], $12::text[])`,
      [
        space,
        part.map((p) => p.pos),
        part.map((p) => pgText(p.bullet.id)),
        part.map((p) => pgText(p.bullet.category)),
        part.map((p) => pgText(p.bullet.content)),
        part.map((p) => pgText((p.bullet.tags ?? []).join(" "))),
        part.map((p) => pgText(p.bullet.state)),
        part.map((p) => pgText(p.bullet.maturity)),
        part.map((p) => Boolean(p.bullet.deprecated)),
        part.map((p) => pgText(p.bullet.updatedAt)),
        part.map((p) => hashContent(p.bullet.content)),
        part.map((p) => p.body),
      ],
    );
  }
}

/**
 * Writes `next` over `stored` inside the caller's write transaction: the layer row, then only the
 * bullet rows that were added, removed, changed or moved. Returns the new revision.
 */
export async function writeStoredPlaybook(sql: Sql, space: string, stored: StoredPlaybook, next: Playbook, nowIso: string): Promise<number> {
  const revision = stored.revision + 1;
  await sql.query("UPDATE cm_spaces SET playbook = $2, revision = $3, updated_at = $4 WHERE space = $1", [space, metaJsonOf(next), revision, nowIso]);

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

  let positions: number[];
  if (stored.partial) {
    positions = new Array<number>(next.bullets.length);
    // The end of the playbook is read only when something is appended.
    let end = -1;
    if (match.some((row) => row === undefined)) {
      const result = await sql.query("SELECT coalesce(max(pos), -1) AS m FROM cm_bullets WHERE space = $1", [space]);
      end = Number(result.rows[0]?.m ?? -1);
    }
    for (let i = 0; i < next.bullets.length; i += 1) {
      const row = match[i];
      positions[i] = row !== undefined ? row.pos : (end += POSITION_STEP);
    }
  } else positions = spreadPositions(matchedPos, kept);

  const inserts: Array<{ pos: number; bullet: Bullet; body: string }> = [];
  const changed: Array<{ row: number; pos: number; bullet: Bullet; body: string }> = [];
  const moved: Array<{ row: number; pos: number }> = [];
  const used = new Set<number>();
  for (let i = 0; i < next.bullets.length; i += 1) {
    const row = match[i];
    const pos = positions[i] as number;
    const body = bodies[i] as string;
    const bullet = next.bullets[i] as Bullet;
    if (row === undefined) {
      inserts.push({ pos, bullet, body });
      continue;
    }
    used.add(row.row);
    if (row.body !== body) changed.push({ row: row.row, pos, bullet, body });
    else if (row.pos !== pos) moved.push({ row: row.row, pos });
  }
  const removed = stored.rows.filter((row) => !used.has(row.row)).map((row) => row.row);
  if (removed.length > 0) await sql.query("DELETE FROM cm_bullets WHERE row = ANY($1::bigint[])", [removed]);
  // Moves and changes may swap positions; no unique index on pos, so the order of updates is free.
  for (let i = 0; i < moved.length; i += CHUNK) {
    const part = moved.slice(i, i + CHUNK);
    await sql.query("UPDATE cm_bullets b SET pos = u.pos FROM unnest($1::bigint[], $2::bigint[]) AS u(row, pos) WHERE b.row = u.row", [
      part.map((m) => m.row),
      part.map((m) => m.pos),
    ]);
  }
  for (let i = 0; i < changed.length; i += CHUNK) {
    const part = changed.slice(i, i + CHUNK);
    await sql.query(
      `UPDATE cm_bullets b SET pos = u.pos, id = u.id, category = u.category, content = u.content, tags = u.tags, state = u.state,
         maturity = u.maturity, deprecated = u.deprecated, updated_at = u.updated_at, content_hash = u.content_hash, body = u.body
       FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::boolean[], $10::text[], $11::text[], $12::text[])
         AS u(row, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body)
       WHERE b.row = u.row`,
      [
        part.map((c) => c.row),
        part.map((c) => c.pos),
        part.map((c) => pgText(c.bullet.id)),
        part.map((c) => pgText(c.bullet.category)),
        part.map((c) => pgText(c.bullet.content)),
        part.map((c) => pgText((c.bullet.tags ?? []).join(" "))),
        part.map((c) => pgText(c.bullet.state)),
        part.map((c) => pgText(c.bullet.maturity)),
        part.map((c) => Boolean(c.bullet.deprecated)),
        part.map((c) => pgText(c.bullet.updatedAt)),
        part.map((c) => hashContent(c.bullet.content)),
        part.map((c) => c.body),
      ],
    );
  }
  await insertBullets(sql, space, inserts);
  return revision;
}

/** Removes the layer's playbook and bullets (initialize's reset, a transfer of "no playbook"). */
export async function clearStoredPlaybook(sql: Sql, space: string): Promise<void> {
  await sql.query("DELETE FROM cm_bullets WHERE space = $1", [space]);
  await sql.query("UPDATE cm_spaces SET playbook = NULL WHERE space = $1", [space]);
}

export function decodeBullet(body: string): Bullet | null {
  try {
    const parsed = BulletSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Decodes candidate rows (in playbook order) with the layer's top-level record. */
export function decodeCandidates(where: string, topText: string, raw: unknown[][]): Playbook {
  const { bodies } = toRows(raw, where);
  return decode(where, topOf(topText, where), bodies);
}
