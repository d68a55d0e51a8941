import { createHash } from "node:crypto";
import { readFile, writeFile } from "node:fs/promises";
import { createEmptyPlaybook, defaultConfig, rankBulletsForTask, warmLexicalIndex, type Bullet, type LexicalCache } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { describe, expect, it } from "vitest";
import { createYamlStore, toYaml } from "../src/index.js";
import { PARSE_CACHE_FORMAT, STAT_SETTLED_MS } from "../src/parse-cache.js";
import { testLogger, useTempHome } from "./helpers.js";

// The YAML store vouches for the texts of what it reads (core's noteTextSource) by the SHA-256 of
// the file's bytes, so the ranker finds its saved index without hashing every rule's text.

const home = useTempHome("cm-text-source-");

const NOW = "2026-01-01T00:00:00.000Z";
const TOPICS = ["session cookies after deploy", "relative imports need the .js suffix", "token bucket per API key", "pin the toolchain"];

function playbook(count: number, label: string) {
  return {
    ...createEmptyPlaybook(NOW, "global"),
    bullets: Array.from({ length: count }, (_, i) =>
      createTestBullet({
        id: `b-src-${i}`,
        category: i % 2 === 0 ? "build" : "auth",
        content: `Rule ${i} (${label}): ${TOPICS[i % TOPICS.length]}, checked in CI before every release`,
        createdAt: NOW,
        updatedAt: NOW,
        tags: [`t${i % 3}`],
      }),
    ),
  };
}

const open = (minBytes = 1024) => createYamlStore({ globalDir: home.globalDir, repoDir: null, logger: testLogger(), parseCache: { minBytes } });
const opts = { now: new Date(NOW), config: defaultConfig(), limit: 10, minRelevance: 0 };
const forgetIndex = () => rankBulletsForTask([createTestBullet({ id: "other", content: "Something else entirely." })], "anything", opts);
const rankAll = (bullets: Bullet[]) => TOPICS.map((t) => rankBulletsForTask(bullets, t, opts).ranked.map((r) => [r.id, r.relevanceScore]));

/** A lexical cache in memory that records what its digest was given and which index keys were asked for. */
function recordingCache() {
  const digested: string[] = [];
  const asked: string[] = [];
  const saved = new Map<string, Uint8Array>();
  const values = new Map<string, unknown>();
  const cache: LexicalCache = {
    read: async (part, fingerprint) => values.get(`${part}:${fingerprint}`) ?? null,
    write: async (part, fingerprint, value) => void values.set(`${part}:${fingerprint}`, JSON.parse(JSON.stringify(value))),
    readIndex: async (key) => {
      asked.push(key);
      return saved.get(key)?.slice() ?? null;
    },
    writeIndex: async (key, bytes) => void saved.set(key, bytes.slice()),
    digest: (text) => {
      digested.push(text);
      return createHash("sha256").update(text).digest("hex");
    },
  };
  return { cache, digested, asked };
}

const fileHash = async () => createHash("sha256").update(await readFile(home.playbookPath)).digest("hex");

describe("YAML store: reads vouch for their texts", () => {
  it("keys the saved index by the file's hash on a miss, a cache hit and a stat hit, and a change of the file changes it", async () => {
    const { cache, digested, asked } = recordingCache();
    await writeFile(home.playbookPath, toYaml(playbook(40, "first")));
    const run = (hash: string) => `\u0003yaml-v${PARSE_CACHE_FORMAT}-global-${hash}\u00040\u000439\n`;

    // First read: parsed and cached. The digest sees the source, not the texts.
    const first = (await open().readPlaybook("global"))!;
    expect(await warmLexicalIndex(first.bullets, cache, logger())).toMatchObject({ loaded: false, analysed: 40 });
    expect(digested).toEqual([run(await fileHash())]);
    const expected = rankAll(first.bullets);
    expect(expected.some((r) => r.length > 0)).toBe(true);

    // Parse cache hit: the same key, so the saved index is loaded and ranks the same.
    forgetIndex();
    const second = (await open().readPlaybook("global"))!;
    expect(await warmLexicalIndex(second.bullets, cache, logger())).toEqual({ loaded: true, reused: 40, analysed: 0 });
    expect(asked[1]).toBe(asked[0]);
    expect(rankAll(second.bullets)).toEqual(expected);

    // A read served by the recorded stat (the file is not even read) vouches with the same hash.
    await new Promise((resolve) => setTimeout(resolve, STAT_SETTLED_MS + 200));
    await open().readPlaybook("global");
    forgetIndex();
    const byStat = (await open().readPlaybook("global"))!;
    expect(await warmLexicalIndex(byStat.bullets, cache, logger())).toEqual({ loaded: true, reused: 40, analysed: 0 });
    expect(asked.at(-1)).toBe(asked[0]);

    // One rule's text changes: new file hash, new key, and only that rule is analysed again.
    const text = await readFile(home.playbookPath, "utf8");
    await writeFile(home.playbookPath, text.replace("Rule 7 (first)", "Rule 7 (edited)"));
    forgetIndex();
    const edited = (await open().readPlaybook("global"))!;
    expect(await warmLexicalIndex(edited.bullets, cache, logger())).toEqual({ loaded: false, reused: 39, analysed: 1 });
    expect(digested.at(-1)).toBe(run(await fileHash()));
    expect(asked.at(-1)).not.toBe(asked[0]);
    const ranked = rankAll(edited.bullets);
    forgetIndex();
    const plain = edited.bullets.map((b) => ({ ...b }));
    expect(await warmLexicalIndex(plain, undefined, logger())).toBeNull();
    expect(rankAll(plain)).toEqual(ranked);
  });

  it("does not vouch for files read without the parse cache: their texts are digested", async () => {
    const { cache, digested } = recordingCache();
    await writeFile(home.playbookPath, toYaml(playbook(3, "small")));
    const small = (await open(1024 * 1024).readPlaybook("global"))!;
    await warmLexicalIndex(small.bullets, cache, logger());
    expect(digested).toHaveLength(1);
    expect(digested[0]).toContain(small.bullets[0]!.content);
  });
});

function logger() {
  return testLogger();
}
