import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestBullet } from "@cass-memory/core/testing";
import { closeStores, makeStore, spaceOf, withSql } from "./helpers.js";
import { MIGRATIONS, tsQueryOf } from "../src/index.js";

/** `candidates` (what `cm context` ranks on a large playbook): the tsvector/GIN search. */

let root = "";
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "cm-pg-candidates-"));
});
afterAll(async () => {
  await closeStores();
  await rm(root, { recursive: true, force: true });
});

describe("candidate search", () => {
  it("finds active rules sharing a word (stemmed), respects the limit, adds rules by id whatever their state, keeps playbook order", async () => {
    const store = makeStore({ globalDir: join(root, "a", ".cass-memory"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.push(
        createTestBullet({ id: "b-deploy", content: "Deploying on Fridays needs a rollback plan", category: "ops" }),
        createTestBullet({ id: "b-tests", content: "Run the tests before pushing", category: "testing" }),
        createTestBullet({ id: "b-retired", content: "Deploy with the old script", state: "retired" }),
        createTestBullet({ id: "b-tagged", content: "Keep changes small", tags: ["deploy"] }),
        createTestBullet({ id: "b-other", content: "Write docs for public functions", category: "docs" }),
      );
    });
    expect(await store.candidates.countBullets("global")).toBe(5);
    const found = await store.candidates.readCandidates("global", { terms: ["deploy", "friday"], limit: 10 });
    expect(found?.bullets.map((b) => b.id)).toEqual(["b-deploy", "b-tagged"]);
    const withIds = await store.candidates.readCandidates("global", { terms: ["deploy"], limit: 1, ids: ["b-retired", "b-other"] });
    // A tie between a content and a tags match: the shorter rule wins (length damping, as in the SQLite store).
    expect(withIds?.bullets.map((b) => b.id)).toEqual(["b-retired", "b-tagged", "b-other"]);
    const phrase = await store.candidates.readCandidates("global", { terms: [], concepts: [["rollback plan"]], limit: 10 });
    expect(phrase?.bullets.map((b) => b.id)).toEqual(["b-deploy"]);
    expect((await store.candidates.readCandidates("global", { terms: ["'); DROP TABLE cm_bullets; --"], limit: 10 }))?.bullets.map((b) => b.id)).toEqual([]);
    expect(await makeStore({ globalDir: join(root, "empty", ".cass-memory"), repoDir: null }).candidates.readCandidates("global", { terms: ["x"], limit: 5 })).toBeNull();
  });

  it("keeps the term statistics and the search table equal to the bullets through inserts, edits, moves, removals and a dropped layer", async () => {
    const globalDir = join(root, "stats", ".cass-memory");
    const store = makeStore({ globalDir, repoDir: null });
    const space = spaceOf(globalDir);
    // What the triggers must have produced, recomputed from cm_bullets.
    const drift = async (): Promise<unknown[]> =>
      withSql(async (c) => [
        ...(
          await c.query(
            `WITH truth AS (SELECT d.space, d.lexeme, d.weight, count(*) AS df FROM cm_bullets b, cm_terms_of(b.space, b.tsv) d WHERE b.space = $1 GROUP BY 1, 2, 3)
             SELECT coalesce(t.lexeme, s.lexeme) AS lexeme, t.df AS expected, s.df AS stored FROM truth t
             FULL JOIN (SELECT * FROM cm_terms WHERE space = $1 AND df <> 0) s USING (space, lexeme, weight) WHERE t.df IS DISTINCT FROM s.df`,
            [space],
          )
        ).rows,
        ...(
          await c.query(
            `SELECT b.id FROM cm_bullets b FULL JOIN (SELECT * FROM cm_search WHERE space = $1) s USING (row)
             WHERE b.space = $1 AND (s.row IS NULL OR s.tsv <> b.tsv OR s.pos <> b.pos OR s.active <> (b.state <> 'retired' AND b.maturity <> 'deprecated' AND NOT b.deprecated))
                OR (b.row IS NULL)`,
            [space],
          )
        ).rows,
        // The postings (migration 3): one row per bullet and lexeme, its columns and active state.
        ...(
          await c.query(
            `WITH truth AS (
               SELECT b.space, p.lexeme, b.row, p.cols, b.state <> 'retired' AND b.maturity <> 'deprecated' AND NOT b.deprecated AS active
               FROM cm_bullets b, cm_postings_of(b.tsv) p WHERE b.space = $1
             )
             SELECT coalesce(t.lexeme, s.lexeme) AS lexeme, coalesce(t.row, s.row) AS row, t.cols AS expected_cols, s.cols AS stored_cols,
                    t.active AS expected_active, s.active AS stored_active
             FROM truth t FULL JOIN (SELECT * FROM cm_postings WHERE space = $1) s USING (space, lexeme, row)
             WHERE t.cols IS DISTINCT FROM s.cols OR t.active IS DISTINCT FROM s.active`,
            [space],
          )
        ).rows,
      ]);
    await store.mutatePlaybook("global", (pb) => {
      for (let i = 0; i < 30; i += 1) pb.bullets.push(createTestBullet({ id: `b-${i}`, content: `Rule ${i} about deploys and caching layer ${i % 3}`, tags: i % 2 ? ["deploy"] : [] }));
    });
    expect(await drift()).toEqual([]);
    await store.mutatePlaybook("global", (pb) => {
      pb.bullets.splice(3, 2);
      pb.bullets.reverse();
      (pb.bullets[0] as { content: string }).content = "Completely new words: kubernetes manifests";
      (pb.bullets[1] as { state: string }).state = "retired";
    });
    expect(await drift()).toEqual([]);
    // Only the active state changes (text and layer unchanged): the postings are updated in place.
    await store.mutatePlaybook("global", (pb) => {
      (pb.bullets[1] as { state: string }).state = "active";
      (pb.bullets[2] as { deprecated: boolean }).deprecated = true;
    });
    expect(await drift()).toEqual([]);
    // A scoped change (what cm mark does) counts as one change and keeps everything equal.
    const before = await store.changeCounter("global");
    await store.mutatePlaybook("global", (pb) => void ((pb.bullets[0] as { helpfulCount: number }).helpfulCount += 1), { bulletIds: ["b-7"] });
    expect(await store.changeCounter("global")).toBe(before + 1);
    expect(await drift()).toEqual([]);
    const n = await withSql(async (c) => (await c.query("SELECT df FROM cm_terms WHERE space = $1 AND lexeme = '' AND weight = '*'", [space])).rows[0]?.df);
    expect(Number(n)).toBe(28);
    await store.dropSpace(space);
    expect(await withSql(async (c) => (await c.query("SELECT count(*)::int AS n FROM cm_terms WHERE space = $1", [space])).rows[0]?.n)).toBe(0);
    expect(await withSql(async (c) => (await c.query("SELECT count(*)::int AS n FROM cm_search WHERE space = $1", [space])).rows[0]?.n)).toBe(0);
    expect(await withSql(async (c) => (await c.query("SELECT count(*)::int AS n FROM cm_postings WHERE space = $1", [space])).rows[0]?.n)).toBe(0);
  });

  it("migration 3 fills the postings from a version-2 database's bullets, and later writes keep them", async () => {
    const result = await withSql(async (c) => {
      await c.query("DROP SCHEMA IF EXISTS cm_v2_upgrade CASCADE");
      await c.query("CREATE SCHEMA cm_v2_upgrade");
      await c.query("SET search_path = cm_v2_upgrade");
      try {
        await c.query((MIGRATIONS[0] as { sql: string }).sql);
        await c.query((MIGRATIONS[1] as { sql: string }).sql);
        await c.query(
          `INSERT INTO cm_bullets (space, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body) VALUES
           ('s', 1, 'a', 'deploy', 'Deploy the canary first', 'deploy', 'active', 'established', false, 'x', 'h', '{}'),
           ('s', 2, 'b', 'ops', 'Deploy on Fridays only with a rollback plan', '', 'retired', 'candidate', false, 'x', 'h', '{}')`,
        );
        await c.query((MIGRATIONS[2] as { sql: string }).sql);
        const postings = async (): Promise<unknown[]> =>
          (await c.query("SELECT b.id, p.cols, p.active FROM cm_postings p JOIN cm_bullets b USING (row) WHERE p.lexeme = 'deploy' ORDER BY b.id")).rows;
        const filled = await postings();
        await c.query("UPDATE cm_bullets SET content = 'Deploy on Mondays', state = 'active' WHERE id = 'b'");
        await c.query("UPDATE cm_bullets SET maturity = 'deprecated' WHERE id = 'a'");
        const updated = await postings();
        await c.query("DELETE FROM cm_bullets WHERE id = 'a'");
        const deleted = await postings();
        const total = (await c.query("SELECT count(*)::int AS n FROM cm_postings")).rows[0]?.n;
        const expected = (await c.query("SELECT count(*)::int AS n FROM cm_bullets b, cm_postings_of(b.tsv) p")).rows[0]?.n;
        return { filled, updated, deleted, total, expected };
      } finally {
        await c.query("DROP SCHEMA cm_v2_upgrade CASCADE");
      }
    });
    // cols: 1 content, 2 tags, 4 category.
    expect(result.filled).toEqual([
      { id: "a", cols: 7, active: true },
      { id: "b", cols: 1, active: false },
    ]);
    expect(result.updated).toEqual([
      { id: "a", cols: 7, active: false },
      { id: "b", cols: 1, active: true },
    ]);
    expect(result.deleted).toEqual([{ id: "b", cols: 1, active: true }]);
    expect(result.total).toBe(result.expected);
  });

  it("migration 2 fills the search table and the term counts from a version-1 database's bullets", async () => {
    const counts = await withSql(async (c) => {
      await c.query("DROP SCHEMA IF EXISTS cm_v1_upgrade CASCADE");
      await c.query("CREATE SCHEMA cm_v1_upgrade");
      await c.query("SET search_path = cm_v1_upgrade");
      try {
        await c.query((MIGRATIONS[0] as { sql: string }).sql);
        await c.query(
          `INSERT INTO cm_bullets (space, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body) VALUES
           ('s', 1, 'a', 'ops', 'Deploy the canary first', 'deploy', 'active', 'established', false, 'x', 'h', '{}'),
           ('s', 2, 'b', 'ops', 'Deploy on Fridays only with a rollback plan', '', 'retired', 'candidate', false, 'x', 'h', '{}')`,
        );
        await c.query((MIGRATIONS[1] as { sql: string }).sql);
        const terms = (await c.query("SELECT lexeme, weight::text AS weight, df::int AS df FROM cm_terms WHERE lexeme IN ('', 'deploy') ORDER BY 1, 2")).rows;
        const search = (await c.query("SELECT s.active, s.pos::int AS pos FROM cm_search s JOIN cm_bullets b USING (row) ORDER BY b.id")).rows;
        // Later writes keep them up to date.
        await c.query("UPDATE cm_bullets SET tags = '' WHERE id = 'a'");
        const after = (await c.query("SELECT weight::text AS weight, df::int AS df FROM cm_terms WHERE lexeme = 'deploy' ORDER BY 1")).rows;
        return { terms, search, after };
      } finally {
        await c.query("DROP SCHEMA cm_v1_upgrade CASCADE");
      }
    });
    expect(counts.terms).toEqual([
      { lexeme: "", weight: "*", df: 2 },
      { lexeme: "deploy", weight: "*", df: 2 },
      { lexeme: "deploy", weight: "A", df: 2 },
      { lexeme: "deploy", weight: "B", df: 1 },
    ]);
    expect(counts.search).toEqual([
      { active: true, pos: 1 },
      { active: false, pos: 2 },
    ]);
    expect(counts.after).toEqual([
      { weight: "*", df: 2 },
      { weight: "A", df: 2 },
      { weight: "B", df: 0 },
    ]);
  });

  // 40 bullets: a common term is one held by more than ceil(0.15 × 40) = 6 of them.
  const countedPlaybook = () => [
    createTestBullet({ id: "t1", content: "Check the theta gauge before starting work" }),
    createTestBullet({ id: "t2", content: "Read the theta gauge after finishing work" }),
    // Concept 1: "gamma" (5 bullets) or "delta" (4), 3 of them shared: 6 bullets in all.
    ...[1, 2].map((i) => createTestBullet({ id: `g${i}`, content: `Gamma rays need shielding in lab ${i}` })),
    ...[3, 4, 5].map((i) => createTestBullet({ id: `g${i}`, content: `Gamma and delta readings need logging ${i}` })),
    createTestBullet({ id: "d1", content: "Delta values drift during the night" }),
    // Concept 2: "epsilon" (5) or "zeta" (5 others): 10 bullets, held in every column (they outscore concept 1's when let in).
    ...[1, 2, 3, 4, 5].map((i) => createTestBullet({ id: `e${i}`, content: `Epsilon checks run on push ${i}`, tags: ["epsilon"], category: "epsilon" })),
    ...[1, 2, 3, 4, 5].map((i) => createTestBullet({ id: `z${i}`, content: `Zeta builds need clean caches ${i}`, tags: ["zeta"], category: "zeta" })),
    ...Array.from({ length: 22 }, (_, i) => createTestBullet({ id: `f${i}`, content: `Filler rule about unrelated chores number ${i}` })),
  ];
  const countedQuery = (limit: number) => ({ terms: ["theta"], concepts: [["gamma", "delta"], ["epsilon", "zeta"]], limit });

  it("counts a concept's bullets once however many phrasings they hold: selective at 6 bullets, common at 10, let in when the others find too few", async () => {
    const store = makeStore({ globalDir: join(root, "counted", ".cass-memory"), repoDir: null });
    await store.mutatePlaybook("global", (pb) => void pb.bullets.push(...countedPlaybook()));
    const ids = async (limit: number) => ((await store.candidates.readCandidates("global", countedQuery(limit)))?.bullets.map((b) => b.id) ?? []).sort();
    // Concept 1 is held by 6 bullets (its phrasings' lists add up to 9): selective. Concept 2 (10)
    // is common: left out while the theta and concept-1 bullets fill the limit.
    expect(await ids(8)).toEqual(["d1", "g1", "g2", "g3", "g4", "g5", "t1", "t2"]);
    // Two more than they hold: the common concept is let in and competes (its bullets hold it in
    // every column, so they outscore concept 1's); the fillers never match.
    const ten = await ids(10);
    expect(ten).toHaveLength(10);
    expect(ten.filter((id) => id.startsWith("t"))).toEqual(["t1", "t2"]);
    expect(ten.filter((id) => /^[ez]/.test(id)).length).toBeGreaterThanOrEqual(4);
    expect(ten.filter((id) => id.startsWith("f"))).toEqual([]);
  });

  it("scores the same when bullet row numbers are past the dense score arrays and the four-byte match encoding", async () => {
    const search = async (name: string) => {
      const store = makeStore({ globalDir: join(root, name, ".cass-memory"), repoDir: null });
      await store.mutatePlaybook("global", (pb) => void pb.bullets.push(...countedPlaybook()));
      return Promise.all([8, 10, 3].map(async (limit) => (await store.candidates.readCandidates("global", countedQuery(limit)))?.bullets.map((b) => b.id)));
    };
    const low = await search("rows-low");
    // Above 4,000,000 rows are mapped to dense slots; from 2^27 on, matches travel as eight bytes.
    await withSql((c) => c.query("SELECT setval(pg_get_serial_sequence('cm_bullets', 'row'), greatest(150000000, (SELECT max(row) FROM cm_bullets)))"));
    const high = await search("rows-high");
    const rows = await withSql(async (c) => (await c.query("SELECT min(row)::float8 AS min FROM cm_bullets WHERE space = $1", [spaceOf(join(root, "rows-high", ".cass-memory"))])).rows[0]?.min as number);
    expect(rows).toBeGreaterThan(2 ** 27);
    expect(high).toEqual(low);
    expect(low[0]).toHaveLength(8);
  });

  it("only letters and digits reach the tsquery", () => {
    expect(tsQueryOf({ terms: ["it's a 'quoted' & (tricky) | !query"] })).toBe("it | s | a | quoted | tricky | query");
    expect(tsQueryOf({ terms: [], concepts: [["sign in", "login"]] })).toBe("(sign <-> in) | login");
    expect(tsQueryOf({ terms: ["!!!"] })).toBeNull();
  });
});
