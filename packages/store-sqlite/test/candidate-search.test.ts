import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BULLET_KEYS, BulletSchema, type Bullet } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { BULLET_OPTIONAL_CHECKS, BULLET_REQUIRED_CHECKS, isCanonicalBullet } from "@cass-memory/core";
import { FTS_TOKENIZER, bestIndexes, conceptExpression, distinctTermWords } from "../src/candidate-search.js";
import type { SqliteStore } from "../src/index.js";
import { makeStore, useTestDir, withDb } from "./helpers.js";

const NOW = "2026-01-02T03:04:05.678Z";
const rule = (id: string, content: string, extra: Record<string, unknown> = {}): Bullet =>
  createTestBullet({ id, category: "ops", content, createdAt: NOW, updatedAt: NOW, ...extra });

const testDir = useTestDir();

const dbFile = (): string => join(testDir(), "home", "cass-memory.sqlite");

async function storeWith(bullets: Bullet[]): Promise<SqliteStore> {
  const store = makeStore({ globalDir: join(testDir(), "home"), repoDir: null });
  await store.mutatePlaybook("global", (pb) => {
    pb.bullets.push(...bullets);
  });
  return store;
}

const idsOf = async (store: SqliteStore, terms: string[], limit: number, ids?: string[]): Promise<string[]> =>
  ((await store.candidates.readCandidates("global", { terms, limit, ...(ids ? { ids } : {}) }))?.bullets ?? []).map((b) => b.id);

/** 100 rules: 30 about deploying (every inflection, in content and tags), 69 unrelated, one target. */
function crowdedPlaybook(): Bullet[] {
  const out: Bullet[] = [];
  for (let i = 0; i < 30; i++) {
    out.push(rule(`b-deploy-${i}`, `Before you deploy, check what deploys do: deployed and deploying services ${i}`, { tags: ["deploy", "deploys"] }));
  }
  for (let i = 0; i < 69; i++) out.push(rule(`b-other-${i}`, `Unrelated advice number ${i} about formatting`));
  out.push(rule("b-target", "Raise the kubelet eviction threshold when pods are evicted under memory pressure"));
  return out;
}

describe("candidate search: rare terms are not drowned by common ones", () => {
  it("finds the rule holding the task's rare word even when a common word (in many inflections) matches 30% of rows", async () => {
    const store = await storeWith(crowdedPlaybook());
    const terms = ["deploy", "deploys", "deployed", "deploying", "kubelet"];
    expect(await idsOf(store, terms, 1)).toEqual(["b-target"]);
    const five = await idsOf(store, terms, 5);
    expect(five).toHaveLength(5);
    expect(five).toContain("b-target");
  });

  it("still returns the common word's rules when the rare words find fewer than the limit", async () => {
    const store = await storeWith(crowdedPlaybook());
    const found = await idsOf(store, ["deploy", "kubelet"], 10);
    expect(found).toHaveLength(10);
    expect(found).toContain("b-target");
    expect(found.filter((id) => id.startsWith("b-deploy-"))).toHaveLength(9);
    // Only common words: their rules are the candidates.
    expect(await idsOf(store, ["deployed"], 4)).toEqual(["b-deploy-0", "b-deploy-1", "b-deploy-2", "b-deploy-3"]);
  });

  it("adds the common words when the rare words' rules are mostly inactive", async () => {
    const bullets = crowdedPlaybook();
    bullets.push(
      rule("b-kube-old-1", "kubelet flags changed", { deprecated: true }),
      rule("b-kube-old-2", "kubelet restart", { state: "retired" }),
      rule("b-kube-old-3", "kubelet config", { maturity: "deprecated" }),
    );
    const store = await storeWith(bullets);
    const found = await idsOf(store, ["deploy", "kubelet"], 4);
    expect(found).toHaveLength(4);
    expect(found).toContain("b-target");
    expect(found.some((id) => id.startsWith("b-kube-old"))).toBe(false);
  });

  it("puts rules matching only in their category after rules matching in content or tags", async () => {
    const store = await storeWith([
      rule("b-cat", "Nothing about the word here", { category: "kubernetes" }),
      rule("b-text", "kubernetes liveness probes need a timeout"),
      rule("b-none", "unrelated"),
    ]);
    expect(await idsOf(store, ["kubernetes"], 1)).toEqual(["b-text"]);
    expect(await idsOf(store, ["kubernetes"], 5)).toEqual(["b-cat", "b-text"]);
  });

  it("works when row ids are too sparse for arrays indexed by row id", async () => {
    const store = await storeWith([rule("b-near", "kafka consumer lag"), rule("b-x", "unrelated")]);
    withDb(dbFile(), "global", (db) => {
      db.prepare(
        `INSERT INTO bullets (row, pos, id, category, content, tags, state, maturity, deprecated, updated_at, content_hash, body)
         SELECT 9000000, pos + 5000, 'b-far', category, 'kafka consumer lag alert', tags, state, maturity, deprecated, updated_at, content_hash,
                json_set(json_set(body, '$.id', 'b-far'), '$.content', 'kafka consumer lag alert')
         FROM bullets WHERE id = 'b-near'`,
      ).run();
    });
    expect(await idsOf(store, ["kafka", "lag"], 10)).toEqual(["b-near", "b-far"]);
    expect(await idsOf(store, ["alert"], 10)).toEqual(["b-far"]);
  });
});

describe("candidate search: concepts", () => {
  const sessionLoss = ["logged out", "signed out", "session secret", "cookie secret", "n+1"];
  /** 40 rules using the concept's words loosely, 2 holding one of its phrasings, one unrelated. */
  function conceptPlaybook(): Bullet[] {
    const out: Bullet[] = [];
    for (let i = 0; i < 40; i++) out.push(rule(`b-loose-${i}`, `Rotate the session cookie and the secret store keys ${i}; users log in with SSO`));
    out.push(rule("b-phrase-1", "Keep the session secret stable across deploys"));
    out.push(rule("b-phrase-2", "Fix the N+1 query in the order list", { tags: ["performance"] }));
    out.push(rule("b-other", "Unrelated advice about formatting"));
    return out;
  }

  it("matches a concept's phrasings as phrases, so rules that only share their words do not crowd them out", async () => {
    const store = await storeWith(conceptPlaybook());
    const read = async (query: Record<string, unknown>, limit: number): Promise<string[]> =>
      ((await store.candidates.readCandidates("global", { terms: [], limit, ...query }))?.bullets ?? []).map((b) => b.id).sort();
    expect(await read({ concepts: [sessionLoss] }, 2)).toEqual(["b-phrase-1", "b-phrase-2"]);
    // Splitting the same phrasings into words finds the loose rules instead.
    const words = sessionLoss.flatMap((p) => p.split(/\W+/)).filter((w) => w.length > 0);
    expect(await read({ terms: words }, 2)).not.toContain("b-phrase-1");
    // A concept counts once whichever phrasing a rule holds, and below a word of the task.
    const ranked = await read({ terms: ["formatting"], concepts: [sessionLoss], conceptWeight: 0.8 }, 1);
    expect(ranked).toEqual(["b-other"]);
  });

  it("builds one FTS5 expression per concept from the letters and digits of each phrasing", () => {
    expect(conceptExpression(["logged out", "N+1", "re-login", "logged out", "—", ""])).toBe('("logged out" OR "n 1" OR "re login")');
    expect(conceptExpression(["", "!!"])).toBeNull();
    expect(conceptExpression(['say "hi"'])).toBe('("say hi")');
  });
});

describe("candidate search: query terms", () => {
  it("keeps one word per index term (inflections share a stemmed term) and drops words with no term", async () => {
    await storeWith([rule("b-1", "x")]);
    withDb(dbFile(), "global", (db) => {
      expect(distinctTermWords(db, ["deploy", "deploys", "deployed", "rolled", "roll", "café", "cafe", "kubelet"])).toEqual([
        "deploy",
        "rolled",
        "café",
        "kubelet",
      ]);
      expect(distinctTermWords(db, [])).toEqual([]);
    });
  });

  it("splits words with the tokenizer of the full-text index", async () => {
    await storeWith([rule("b-1", "x")]);
    const sql = withDb(dbFile(), "global", (db) => db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'bullets_fts'").pluck().get() as string);
    expect(sql).toContain(`tokenize = '${FTS_TOKENIZER}'`);
  });

  it("writes nothing into the database file (its query tables are temporary)", async () => {
    const store = await storeWith(crowdedPlaybook());
    const before = withDb(dbFile(), "global", (db) => db.prepare("SELECT name FROM sqlite_schema ORDER BY name").pluck().all());
    expect(await idsOf(store, ["kubelet"], 3)).toEqual(["b-target"]);
    const after = withDb(dbFile(), "global", (db) => db.prepare("SELECT name FROM sqlite_schema ORDER BY name").pluck().all());
    expect(after).toEqual(before);
    expect(after.some((name) => String(name).startsWith("cm_query"))).toBe(false);
  });

  it("orders the best entries by score, ties to the lower row id (selection agrees with a full sort)", () => {
    let seed = 7;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (const size of [0, 1, 5, 50, 1000]) {
      for (const k of [1, 3, 10, 200]) {
        const rows = Float64Array.from({ length: size }, (_, i) => size - i);
        // Few distinct values, so that many entries tie.
        const scores = Float64Array.from({ length: size }, () => Math.floor(random() * 8));
        const expected = [...rows.keys()].sort((a, b) => (scores[b] as number) - (scores[a] as number) || (rows[a] as number) - (rows[b] as number)).slice(0, k);
        expect(bestIndexes(rows, scores, k)).toEqual(expected);
        const skip = new Set(expected.slice(0, 2));
        expect(bestIndexes(rows, scores, k, skip)).toEqual(
          [...rows.keys()].filter((i) => !skip.has(i)).sort((a, b) => (scores[b] as number) - (scores[a] as number) || (rows[a] as number) - (rows[b] as number)).slice(0, k),
        );
      }
    }
  });
});

describe("candidate read: decoding bodies", () => {
  it("returns bodies as the schema would (defaults filled) and keeps an undecodable row out of reach unless it is a candidate", async () => {
    const store = await storeWith([rule("b-good", "kafka consumer lag"), rule("b-legacy", "kafka partitions rebalance"), rule("b-broken", "unrelated text")]);
    withDb(dbFile(), "global", (db) => {
      // A hand-edited row: snake_case key, defaults missing. The schema renames and fills in.
      db.prepare("UPDATE bullets SET body = ? WHERE id = 'b-legacy'").run(
        JSON.stringify({ id: "b-legacy", category: "ops", content: "kafka partitions rebalance", created_at: NOW, updatedAt: NOW }),
      );
      db.prepare("UPDATE bullets SET body = '{broken' WHERE id = 'b-broken'").run();
    });
    const pb = await store.candidates.readCandidates("global", { terms: ["kafka"], limit: 10 });
    expect(pb?.bullets.map((b) => b.id)).toEqual(["b-good", "b-legacy"]);
    const legacy = pb?.bullets[1];
    expect(legacy).toEqual(BulletSchema.parse({ id: "b-legacy", category: "ops", content: "kafka partitions rebalance", created_at: NOW, updatedAt: NOW }));
    expect(legacy).toMatchObject({ createdAt: NOW, state: "draft", helpfulCount: 0, tags: [] });
  });

  it("fails with PLAYBOOK_CORRUPT on a candidate whose body is not JSON or not a bullet, as before", async () => {
    const store = await storeWith([rule("b-a", "kafka consumer lag"), rule("b-b", "kafka partitions")]);
    withDb(dbFile(), "global", (db) => db.prepare("UPDATE bullets SET body = '{broken' WHERE id = 'b-b'").run());
    await expect(store.candidates.readCandidates("global", { terms: ["kafka"], limit: 10 })).rejects.toMatchObject({
      code: "PLAYBOOK_CORRUPT",
      message: expect.stringMatching(/bullet "b-b" \(row \d+\) is not valid JSON/),
    });
    withDb(dbFile(), "global", (db) => {
      const body = JSON.parse(db.prepare("SELECT body FROM bullets WHERE id = 'b-a'").pluck().get() as string) as Record<string, unknown>;
      db.prepare("UPDATE bullets SET body = ? WHERE id = 'b-b'").run(JSON.stringify({ ...body, id: "b-b", category: 5 }));
    });
    // The same message the schema gives for the whole candidate playbook (b-b is the second bullet).
    await expect(store.candidates.readCandidates("global", { terms: ["kafka"], limit: 10 })).rejects.toMatchObject({
      code: "PLAYBOOK_CORRUPT",
      message: expect.stringContaining("is invalid: bullets.1.category:"),
    });
    // A failed read (rolled back) leaves the connection able to search again.
    withDb(dbFile(), "global", (db) => db.prepare("DELETE FROM bullets WHERE id = 'b-b'").run());
    expect(await idsOf(store, ["kafka"], 10)).toEqual(["b-a"]);
  });

  it("fails with PLAYBOOK_CORRUPT when the playbook record is damaged, even though every bullet is fine", async () => {
    const store = await storeWith([rule("b-a", "kafka consumer lag")]);
    withDb(dbFile(), "global", (db) => {
      const top = JSON.parse(db.prepare("SELECT body FROM playbook WHERE id = 1").pluck().get() as string) as Record<string, unknown>;
      db.prepare("UPDATE playbook SET body = ? WHERE id = 1").run(JSON.stringify({ ...top, metadata: "none" }));
    });
    await expect(store.candidates.readCandidates("global", { terms: ["kafka"], limit: 10 })).rejects.toMatchObject({
      code: "PLAYBOOK_CORRUPT",
      message: expect.stringContaining("is invalid: metadata"),
    });
  });
});

describe("isCanonicalBullet (the schema-free fast path)", () => {
  const full = BulletSchema.parse(
    JSON.parse(
      JSON.stringify({
        ...rule("b-full", "content", { tags: ["a", "b"], sourceSessions: ["/s/1.jsonl"], sourceAgents: ["claude"] }),
        scopeKey: "k",
        workspace: "/w",
        searchPointer: "p",
        promotedAt: NOW,
        lastValidatedAt: NOW,
        pinnedReason: "r",
        deprecatedAt: NOW,
        deprecationReason: "d",
        replacedBy: "b-2",
        reasoning: "why",
        embedding: [0.1, -0.2],
        effectiveScore: 1.5,
        feedbackEvents: [{ type: "helpful", timestamp: NOW, sessionPath: "/s", decayedValue: 0.5, extra: 1 }],
        evidence: [{ type: "code", uri: "src/a.ts", note: "n" }],
        verification: { type: "regex", pattern: "x", path: "a", mode: "absent" },
        validFrom: NOW,
        validTo: NOW,
        customField: { kept: true },
      }),
    ),
  );

  it("accepts what the schema returns (and only values the schema returns unchanged)", () => {
    for (const bullet of [full, BulletSchema.parse(JSON.parse(JSON.stringify(rule("b-min", "x"))))]) {
      const stored = JSON.parse(JSON.stringify(bullet)) as unknown;
      expect(isCanonicalBullet(stored)).toBe(true);
      expect(BulletSchema.parse(stored)).toEqual(stored);
    }
  });

  it("leaves to the schema every value it would reject or change", () => {
    const base = JSON.parse(JSON.stringify(full)) as Record<string, unknown>;
    const variants: unknown[] = [
      { ...base, id: "" },
      { ...base, category: 5 },
      { ...base, state: "archived" },
      { ...base, helpfulCount: "1" },
      { ...base, tags: ["a", 1] },
      { ...base, reasoning: null },
      { ...base, embedding: ["x"] },
      { ...base, createdAt: "" },
      { ...base, feedbackEvents: [{ type: "meh", timestamp: NOW }] },
      { ...base, feedbackEvents: [{ type: "helpful", timestamp: NOW, decayed_value: 2 }] },
      { ...base, evidence: [{ type: "code", uri: "" }] },
      { ...base, verification: { type: "regex", pattern: "x" } },
      { ...Object.fromEntries(Object.entries(base).filter(([key]) => key !== "helpfulCount")), helpful_count: 3 },
      Object.fromEntries(Object.entries(base).filter(([key]) => key !== "maturity")),
      Object.fromEntries(Object.entries(base).filter(([key]) => key !== "tags")),
      [base],
      null,
    ];
    for (const value of variants) {
      expect(isCanonicalBullet(value)).toBe(false);
      const parsed = BulletSchema.safeParse(value);
      if (parsed.success) expect(parsed.data).not.toEqual(value);
    }
  });

  it("knows every field of the bullet schema (update the checks when a field is added)", () => {
    const checked = new Set([...Object.keys(BULLET_REQUIRED_CHECKS), ...Object.keys(BULLET_OPTIONAL_CHECKS)]);
    expect([...checked].sort()).toEqual([...BULLET_KEYS].sort());
  });
});
