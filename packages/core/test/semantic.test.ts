import { describe, expect, it } from "vitest";
import { curatePlaybook } from "../src/domain/curator.js";
import {
  SEMANTIC_DUPLICATE_THRESHOLD,
  cosineSimilarity,
  describeSemanticError,
  embedWithCache,
  findSemanticMergeCandidates,
  semanticDedupVectors,
  semanticScoresForTask,
} from "../src/domain/semantic.js";
import { hashContent } from "../src/domain/text.js";
import { AppError } from "../src/errors.js";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import { reflectOperation } from "../src/operations/reflect.js";
import { similarOperation } from "../src/operations/similar.js";
import { statsOperation } from "../src/operations/stats.js";
import type { Embedder, LearningComponents, OperationDeps } from "../src/ports.js";
import { defaultConfig, type Config } from "../src/schemas/config.js";
import { createEmptyPlaybook, type Bullet } from "../src/schemas/playbook.js";
import type { Delta } from "../src/schemas/records.js";
import { createDeterministicComponents } from "../src/learning/fallback.js";
import {
  createFakeEpisodicSource,
  createMemoryEmbeddingCache,
  createMemoryStore,
  createSequentialIds,
  createTestBullet,
  createTestDeps,
  createTestEmbedder,
  trigramVector,
  type TestEmbedder,
} from "../src/testing.js";

const NOW = "2026-06-01T00:00:00.000Z";

/**
 * "Users get logged out after deploy" and a rule about rotating the session signing secret share no
 * word. The trigram test embedder knows nothing of meaning, so the test maps every word of both
 * onto one concept, which is what a semantic model does for this pair.
 */
const AUTH_WORDS = ["users", "get", "logged", "out", "after", "deploy", "rotate", "the", "session", "signing", "secret"];
const PARAPHRASE: Record<string, string> = Object.fromEntries(AUTH_WORDS.map((w) => [w, "sessionauth"]));

function semanticConfig(overrides: Partial<Config> = {}): Config {
  return { ...defaultConfig(), semanticSearchEnabled: true, ...overrides };
}

function setup(options: { config?: Config; embedder?: Embedder | null; factory?: () => Promise<Embedder> } = {}) {
  const store = createMemoryStore({ repo: false, now: () => NOW });
  const embedder = options.embedder === undefined ? createTestEmbedder({ synonyms: PARAPHRASE }) : options.embedder;
  const cache = createMemoryEmbeddingCache();
  let loads = 0;
  const overrides: Partial<OperationDeps> = {
    config: options.config ?? semanticConfig(),
    embeddingCache: cache,
    episodic: createFakeEpisodicSource(),
  };
  if (options.factory !== undefined) overrides.embedder = options.factory;
  else if (embedder !== null) {
    overrides.embedder = async () => {
      loads++;
      return embedder;
    };
  }
  const deps = createTestDeps(store, overrides);
  deps.clock.set(NOW);
  return { deps, store, cache, embedder: embedder as TestEmbedder | null, loads: () => loads };
}

async function seed(deps: OperationDeps, bullets: Bullet[]): Promise<void> {
  await deps.store.mutatePlaybook("global", (pb) => {
    pb.bullets.push(...bullets);
  });
}

function rule(id: string, content: string, extra: Partial<Bullet> = {}): Bullet {
  return createTestBullet({ id, content, createdAt: NOW, updatedAt: NOW, ...extra });
}

function warnings(deps: ReturnType<typeof setup>["deps"]): string[] {
  return deps.logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
}

describe("cosineSimilarity", () => {
  it("is 1 for the same direction, -1 for the opposite, 0 for orthogonal vectors", () => {
    expect(cosineSimilarity([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
    expect(cosineSimilarity([1, 0], [-3, 0])).toBeCloseTo(-1, 12);
    expect(cosineSimilarity([1, 0], [0, 5])).toBe(0);
    expect(cosineSimilarity([1, 1], [1, 0])).toBeCloseTo(Math.SQRT1_2, 12);
  });
  it("is 0 when there is nothing to compare: different lengths, empty or zero vectors", () => {
    expect(cosineSimilarity([1, 2], [1, 2, 3])).toBe(0);
    expect(cosineSimilarity([], [])).toBe(0);
    expect(cosineSimilarity([0, 0], [1, 1])).toBe(0);
  });
});

describe("test embedder (trigrams, not a semantic model)", () => {
  it("is deterministic, unit length, and close only for shared spelling", () => {
    const a = trigramVector("Rotate the session signing secret");
    expect(trigramVector("Rotate the session signing secret")).toEqual(a);
    expect(Math.hypot(...a)).toBeCloseTo(1, 12);
    expect(cosineSimilarity(a, trigramVector("rotate the SESSION signing secrets"))).toBeGreaterThan(0.8);
    expect(cosineSimilarity(a, trigramVector("users get logged out after deploy"))).toBeLessThan(0.3);
  });
  it("maps words through synonyms before hashing", () => {
    const plain = cosineSimilarity(trigramVector("logout"), trigramVector("logged"));
    const mapped = cosineSimilarity(trigramVector("logout", 256, { logout: "logged" }), trigramVector("logged"));
    expect(plain).toBeLessThan(0.5);
    expect(mapped).toBeCloseTo(1, 12);
  });
});

describe("embedWithCache", () => {
  const bullets = [rule("b-1", "Use pnpm for installs"), rule("b-2", "Run the linter before commits"), rule("b-3", "use PNPM   for installs")];

  it("embeds each distinct content once with the extra texts in one call, then reuses cached vectors by content hash", async () => {
    const embedder = createTestEmbedder();
    const cache = createMemoryEmbeddingCache();
    const logger = createTestDeps(createMemoryStore()).logger;
    const first = await embedWithCache({ embedder, cache, logger }, bullets, ["the query"]);
    // b-1 and b-3 hash alike (case and whitespace are normalised): one vector for both.
    expect(embedder.calls).toEqual([["Use pnpm for installs", "Run the linter before commits", "the query"]]);
    expect(first).toMatchObject({ cached: 0, computed: 2 });
    expect(first.extra).toEqual([trigramVector("the query")]);
    expect(first.byHash.get(hashContent("Use pnpm for installs"))).toEqual(trigramVector("Use pnpm for installs"));
    // The cache holds every bullet id, in the file's layout.
    expect(Object.keys(cache.data!.bullets).sort()).toEqual(["b-1", "b-2", "b-3"]);
    expect(cache.data).toMatchObject({ version: "1.0", model: embedder.model });
    expect(cache.data!.bullets["b-3"]!.contentHash).toBe(hashContent("Use pnpm for installs"));

    const second = await embedWithCache({ embedder, cache, logger }, bullets, ["another query"]);
    expect(embedder.calls[1]).toEqual(["another query"]);
    expect(second).toMatchObject({ cached: 2, computed: 0 });

    // An edited bullet is embedded again; the unchanged ones are not.
    const edited = [rule("b-1", "Use pnpm for installs"), rule("b-2", "Run the linter before every push")];
    const third = await embedWithCache({ embedder, cache, logger }, edited, []);
    expect(embedder.calls[2]).toEqual(["Run the linter before every push"]);
    expect(third).toMatchObject({ cached: 1, computed: 1 });
  });

  it("recomputes everything when the cache holds another model's vectors", async () => {
    const cache = createMemoryEmbeddingCache();
    const logger = createTestDeps(createMemoryStore()).logger;
    await embedWithCache({ embedder: createTestEmbedder({ model: "model-a" }), cache, logger }, bullets);
    const b = createTestEmbedder({ model: "model-b" });
    const result = await embedWithCache({ embedder: b, cache, logger }, bullets);
    expect(result.computed).toBe(2);
    expect(b.calls).toHaveLength(1);
    expect(cache.data!.model).toBe("model-b");
  });

  it("recomputes cached vectors whose length differs from what the model returns now", async () => {
    const cache = createMemoryEmbeddingCache();
    const logger = createTestDeps(createMemoryStore()).logger;
    await embedWithCache({ embedder: createTestEmbedder({ model: "same", dimensions: 64 }), cache, logger }, bullets);
    const wider = createTestEmbedder({ model: "same", dimensions: 128 });
    const result = await embedWithCache({ embedder: wider, cache, logger }, bullets, ["q"]);
    expect(wider.calls).toEqual([["q"], ["Use pnpm for installs", "Run the linter before commits"]]);
    expect([...result.byHash.values()].every((v) => v.length === 128)).toBe(true);
    expect(cache.data!.bullets["b-2"]!.embedding).toHaveLength(128);
  });

  it("works without a cache and when the cache fails (logged, not fatal)", async () => {
    const embedder = createTestEmbedder();
    const logger = createTestDeps(createMemoryStore()).logger;
    const broken = {
      get: async () => {
        throw new Error("disk on fire");
      },
      put: async () => {
        throw new Error("read-only");
      },
    };
    const result = await embedWithCache({ embedder, cache: broken, logger }, bullets, ["q"]);
    expect(result.computed).toBe(2);
    expect(logger.lines.filter((l) => l.level === "warn").map((l) => l.message)).toEqual([
      expect.stringContaining("disk on fire"),
      expect.stringContaining("read-only"),
    ]);
    expect((await embedWithCache({ embedder, logger }, bullets)).computed).toBe(2);
  });

  it("rejects an embedder answer with the wrong number of vectors or non-numbers", async () => {
    const logger = createTestDeps(createMemoryStore()).logger;
    const short: Embedder = { model: "short", embed: async () => [[1, 2]] };
    await expect(embedWithCache({ embedder: short, logger }, bullets)).rejects.toMatchObject({ code: "SEMANTIC_SEARCH_UNAVAILABLE" });
    const nan: Embedder = { model: "nan", embed: async (texts) => texts.map(() => [Number.NaN]) };
    await expect(embedWithCache({ embedder: nan, logger }, bullets)).rejects.toThrow(/not a list of numbers/);
  });

  it("sanitises texts before they are sent, and keys the cache by the original content", async () => {
    const embedder = createTestEmbedder();
    const cache = createMemoryEmbeddingCache();
    const logger = createTestDeps(createMemoryStore()).logger;
    const secret = rule("b-s", "Never commit the key sk-live-123");
    await embedWithCache({ embedder, cache, logger, sanitize: (t) => t.replace(/sk-[\w-]+/g, "[KEY]") }, [secret], ["use sk-test-9"]);
    expect(embedder.calls[0]).toEqual(["Never commit the key [KEY]", "use [KEY]"]);
    expect(cache.data!.bullets["b-s"]!.contentHash).toBe(hashContent(secret.content));
  });
});

describe("semanticScoresForTask", () => {
  const bullets = [rule("b-secret", "Rotate the session signing secret"), rule("b-old", "Old rule", { deprecated: true, state: "retired", maturity: "deprecated" })];

  it("is keyword mode without loading the embedder when semantic search is off or the model is none", async () => {
    for (const config of [defaultConfig(), semanticConfig({ embeddingModel: "none" })]) {
      const { deps, loads } = setup({ config });
      expect(await semanticScoresForTask(deps, "users get logged out after deploy", bullets)).toEqual({ mode: "keyword" });
      expect(loads()).toBe(0);
    }
  });

  it("scores the active bullets by cosine, keyed by the bullet objects, with the configured weight", async () => {
    const { deps } = setup({ config: semanticConfig({ semanticWeight: 0.4 }) });
    const result = await semanticScoresForTask(deps, "users get logged out after deploy", bullets);
    expect(result.mode).toBe("semantic");
    expect(result.error).toBeUndefined();
    expect(result.rank!.weight).toBe(0.4);
    expect([...result.rank!.scores.keys()]).toEqual([bullets[0]]);
    expect(result.rank!.scores.get(bullets[0]!)!).toBeGreaterThan(0.9);
  });

  it("falls back to keyword mode with a warning and semanticError (message and hint) when the embedder fails", async () => {
    const failing = createTestEmbedder({ fail: new Error("connect ECONNREFUSED 127.0.0.1:9") });
    const { deps } = setup({ embedder: failing });
    const result = await semanticScoresForTask(deps, "users get logged out", bullets);
    expect(result).toEqual({ mode: "keyword", error: expect.stringContaining("ECONNREFUSED") });
    expect(result.error).toContain("semanticSearchEnabled: false");
    expect(warnings(deps)).toEqual([expect.stringContaining("Semantic search unavailable")]);
  });

  it("reports the loader's AppError with its hint, and a missing embedder", async () => {
    const { deps } = setup({
      factory: async () => {
        throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", "@huggingface/transformers is not installed", { hint: "npm install -g @huggingface/transformers" });
      },
    });
    const result = await semanticScoresForTask(deps, "task", bullets);
    expect(result.error).toBe("@huggingface/transformers is not installed (npm install -g @huggingface/transformers)");

    const none = setup({ embedder: null });
    const missing = await semanticScoresForTask(none.deps, "task", bullets);
    expect(missing).toEqual({ mode: "keyword", error: expect.stringContaining("no embedder is available") });
  });

  it("does not load the embedder when there is no active bullet", async () => {
    const { deps, loads } = setup();
    expect(await semanticScoresForTask(deps, "task", [bullets[1]!])).toEqual({ mode: "keyword" });
    expect(loads()).toBe(0);
  });

  it("describeSemanticError falls back to a generic hint for plain errors", () => {
    expect(describeSemanticError(new Error("boom"))).toMatch(/^boom \(check embeddingBackend/);
    expect(describeSemanticError("text")).toMatch(/^text \(/);
  });
});

describe("cm context with semantic search", () => {
  const task = "users get logged out after deploy";

  it("reports keyword mode and no semanticError when semantic search is off", async () => {
    const { deps, embedder } = setup({ config: defaultConfig() });
    await seed(deps, [rule("b-secret", "Rotate the session signing secret")]);
    const result = await runOperation(contextOperation, deps, { task });
    expect(result.semanticMode).toBe("keyword");
    expect(result).not.toHaveProperty("semanticError");
    expect(embedder!.calls).toEqual([]);
  });

  it("reports semantic mode and embeds the bullets once (then only the task) when enabled", async () => {
    const { deps, embedder, cache } = setup();
    await seed(deps, [rule("b-secret", "Rotate the session signing secret"), rule("b-deploy", "Run smoke tests after every deploy")]);
    const first = await runOperation(contextOperation, deps, { task });
    expect(first.semanticMode).toBe("semantic");
    expect(first).not.toHaveProperty("semanticError");
    expect(embedder!.calls).toEqual([["Rotate the session signing secret", "Run smoke tests after every deploy", task]]);
    const second = await runOperation(contextOperation, deps, { task: "deploy checklist" });
    expect(second.semanticMode).toBe("semantic");
    expect(embedder!.calls[1]).toEqual(["deploy checklist"]);
    expect(cache.stats.hits).toBe(2);
  });

  it("ranks a rule that shares no word (or concept) with the task when the embedder says they match (fusion through the ranker)", async () => {
    // Made-up words: neither the lexical ranker nor its concept map can connect them; the test
    // embedder is told they mean the same.
    const words = ["frobnicate", "the", "widgets", "quux", "pipelines", "need", "zorblat", "flags"];
    const embedder = createTestEmbedder({ synonyms: Object.fromEntries(words.map((w) => [w, "sameconcept"])) });
    const { deps } = setup({ embedder });
    await seed(deps, [rule("b-quux", "Quux pipelines need zorblat flags"), rule("b-css", "Prefer CSS grid for page layouts")]);
    const keyword = await runOperation(contextOperation, { ...deps, config: defaultConfig() }, { task: "frobnicate the widgets" });
    expect(keyword.relevantBullets).toEqual([]);
    const semantic = await runOperation(contextOperation, deps, { task: "frobnicate the widgets" });
    expect(semantic.semanticMode).toBe("semantic");
    expect(semantic.relevantBullets.map((b) => b.id)).toEqual(["b-quux"]);
  });

  it("falls back to keywords with semanticError and a warning, and never fails the call", async () => {
    const failing = createTestEmbedder({ fail: new AppError("SEMANTIC_SEARCH_UNAVAILABLE", "Embedding request timed out after 10000 ms", { hint: "Is the server up?" }) });
    const { deps } = setup({ embedder: failing });
    await seed(deps, [rule("b-deploy", "Run smoke tests after every deploy")]);
    const result = await runOperation(contextOperation, deps, { task });
    expect(result.semanticMode).toBe("keyword");
    expect(result.semanticError).toBe("Embedding request timed out after 10000 ms (Is the server up?)");
    expect(result.relevantBullets.map((b) => b.id)).toEqual(["b-deploy"]);
    expect(warnings(deps).some((w) => w.includes("timed out"))).toBe(true);
  });
});

describe("cm similar with semantic search", () => {
  it("uses cosine similarity and reports mode semantic", async () => {
    const { deps } = setup();
    await seed(deps, [rule("b-secret", "Rotate the session signing secret"), rule("b-css", "Prefer CSS grid for page layouts")]);
    const result = await runOperation(similarOperation, deps, { query: "users get logged out after deploy", threshold: 0.5 });
    expect(result.mode).toBe("semantic");
    expect(result.results.map((r) => r.id)).toEqual(["b-secret"]);
    expect(result.results[0]!.similarity).toBeGreaterThan(0.9);
    expect(result.results[0]!.similarity).toBeLessThanOrEqual(1);
  });

  it("keeps keyword similarity when semantic search is off", async () => {
    const { deps, embedder } = setup({ config: defaultConfig() });
    await seed(deps, [rule("b-secret", "Rotate the session signing secret")]);
    const result = await runOperation(similarOperation, deps, { query: "users logged out after deploy", threshold: 0.1 });
    expect(result).toEqual({ query: "users logged out after deploy", mode: "keyword", results: [] });
    expect(embedder!.calls).toEqual([]);
  });

  it("falls back to keyword similarity with a warning when the embedder fails", async () => {
    const { deps } = setup({ embedder: createTestEmbedder({ fail: new Error("model missing") }) });
    await seed(deps, [rule("b-pnpm", "Use pnpm for installs")]);
    const result = await runOperation(similarOperation, deps, { query: "use pnpm for installs", threshold: 0.5 });
    expect(result.mode).toBe("keyword");
    expect(result.results.map((r) => [r.id, r.similarity])).toEqual([["b-pnpm", 1]]);
    expect(warnings(deps)).toEqual([expect.stringContaining("model missing")]);
  });
});

describe("cm stats semantic merge candidates", () => {
  it("lists pairs with cosine ≥ 0.85 only when semantic search is enabled", async () => {
    const synonyms = { logged: "rotate", users: "session" };
    const { deps } = setup({ embedder: createTestEmbedder({ synonyms }) });
    await seed(deps, [
      rule("b-1", "Rotate session secrets", { createdAt: "2026-05-01T00:00:00.000Z" }),
      rule("b-2", "logged users secrets", { createdAt: "2026-05-02T00:00:00.000Z" }),
      rule("b-3", "Prefer CSS grid for page layouts", { createdAt: "2026-05-03T00:00:00.000Z" }),
    ]);
    const stats = await runOperation(statsOperation, deps, {});
    expect(stats.semanticMergeCandidates).toEqual([{ a: "b-2", b: "b-1", similarity: 1 }]);
    expect(stats.mergeCandidates).toEqual([]);

    const off = await runOperation(statsOperation, { ...deps, config: defaultConfig() }, {});
    expect(off.semanticMergeCandidates).toEqual([]);
  });

  it("is empty with a warning when the embedder fails", async () => {
    const { deps } = setup({ embedder: createTestEmbedder({ fail: new Error("offline") }) });
    await seed(deps, [rule("b-1", "Rotate session secrets"), rule("b-2", "Rotate session secrets often")]);
    const stats = await runOperation(statsOperation, deps, {});
    expect(stats.semanticMergeCandidates).toEqual([]);
    expect(warnings(deps)).toEqual([expect.stringContaining("offline")]);
  });

  it("findSemanticMergeCandidates stops at maxPairs and skips bullets without vectors", () => {
    const items = ["a", "b", "c", "d"].map((id) => ({ id, content: `same ${id === "d" ? "" : "text"}` }));
    const vectors = new Map([[hashContent("same text"), [1, 0]]]);
    expect(findSemanticMergeCandidates(items, vectors, { maxPairs: 2 })).toEqual([
      { a: "a", b: "b", similarity: 1 },
      { a: "a", b: "c", similarity: 1 },
    ]);
  });
});

describe("semantic de-duplication in curation", () => {
  const existing = rule("b-secret", "Rotate the session signing secret");
  const paraphrase = "Users get logged out after deploy";
  const add = (content: string): Delta => ({ type: "add", bullet: { content, category: "auth" }, reason: "", sourceSession: "/s/1.jsonl" });

  function curate(semantic?: { vectors: Map<string, number[]>; threshold: number }) {
    const target = createEmptyPlaybook(NOW);
    target.bullets = [existing];
    return curatePlaybook(target, [add(paraphrase)], {
      config: defaultConfig(),
      now: new Date(NOW),
      ids: createSequentialIds(),
      reference: target,
      ...(semantic !== undefined ? { semantic } : {}),
    });
  }

  it("reinforces an existing rule that says the same in other words (cosine ≥ threshold)", async () => {
    const { deps } = setup();
    const semantic = await semanticDedupVectors(deps, [existing], [paraphrase]);
    expect(semantic!.threshold).toBe(SEMANTIC_DUPLICATE_THRESHOLD);
    const result = curate(semantic);
    expect(result.playbook.bullets).toHaveLength(1);
    expect(result.decisions).toEqual([expect.objectContaining({ action: "applied", reason: "Reinforced existing semantically similar bullet", bulletId: "b-secret" })]);
    expect(result.playbook.bullets[0]!.helpfulCount).toBe(1);
  });

  it("adds the rule when semantic search is off or the vectors are not close enough", async () => {
    expect(curate().playbook.bullets).toHaveLength(2);
    const { deps } = setup({ config: defaultConfig() });
    expect(await semanticDedupVectors(deps, [existing], [paraphrase])).toBeUndefined();
    const far = setup({ embedder: createTestEmbedder() });
    const vectors = await semanticDedupVectors(far.deps, [existing], [paraphrase]);
    expect(curate(vectors).playbook.bullets).toHaveLength(2);
  });

  it("is skipped (debug only) when the embedder fails", async () => {
    const { deps } = setup({ embedder: createTestEmbedder({ fail: new Error("offline") }) });
    expect(await semanticDedupVectors(deps, [existing], [paraphrase])).toBeUndefined();
    expect(warnings(deps)).toEqual([]);
    expect(deps.logger.lines.some((l) => l.level === "debug" && l.message.includes("offline"))).toBe(true);
  });

  it("reflect reinforces a semantically duplicate lesson instead of adding it (and adds it with semantic search off)", async () => {
    const session = "/home/u/.claude/projects/-w/s1.jsonl";
    async function reflectWith(config: Config): Promise<Bullet[]> {
      const { deps } = setup();
      const learning: LearningComponents = {
        ...createDeterministicComponents(),
        mode: "llm",
        reflector: { kind: "llm", reflect: async (input) => (input.iteration === 1 ? [add(paraphrase)] : []) },
      };
      const withSessions: OperationDeps = {
        ...deps,
        config,
        learning,
        episodic: createFakeEpisodicSource({
          sessions: [{ path: session, agent: "claude_code", endTime: NOW }],
          exports: { [session]: "[user] after the deploy every user was logged out again; we rotated the secret and it worked.\n".repeat(4) },
        }),
      };
      await seed(withSessions, [existing]);
      const result = await runOperation(reflectOperation, withSessions, { days: 30 });
      expect(result.errors).toEqual([]);
      return (await withSessions.store.readPlaybook("global"))!.bullets;
    }
    const semantic = await reflectWith(semanticConfig({ validationEnabled: false }));
    expect(semantic.map((b) => [b.id, b.helpfulCount])).toEqual([["b-secret", 1]]);
    const keyword = await reflectWith({ ...defaultConfig(), validationEnabled: false });
    expect(keyword.map((b) => b.content)).toEqual([existing.content, paraphrase]);
  });
});
