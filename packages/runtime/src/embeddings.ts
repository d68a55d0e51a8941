import { rename, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { AppError, type Clock, type Config, type Embedder, type EmbeddingCache, type EmbeddingCacheEntry, type Logger } from "@cass-memory/core";
import { atomicWriteFile, withLock } from "@cass-memory/node-files";

/**
 * Semantic search wiring for Node: the embedding cache file of the original
 * (`<globalDir>/embeddings/bullets.json`, reference §4.10) and the lazy loader of the embedder
 * (`@cass-memory/llm`, which the CLI ships as a separate bundle). Neither does any work until an
 * operation asks for it, and operations ask only when semantic search is enabled.
 */

export const EMBEDDING_CACHE_VERSION = "1.0";

/** `<globalDir>/embeddings/bullets.json`. */
export function embeddingCachePath(globalDir: string): string {
  return join(globalDir, "embeddings", "bullets.json");
}

interface CachedVector {
  contentHash: string;
  embedding: number[];
  computedAt: string;
}

interface CacheFile {
  version: string;
  model: string;
  bullets: Record<string, CachedVector>;
  [key: string]: unknown;
}

function isVector(value: unknown): value is number[] {
  return Array.isArray(value) && value.length > 0 && value.every((x) => typeof x === "number" && Number.isFinite(x));
}

/** The file's content, or null when it is not a cache document (entries that are not valid are dropped). */
function decodeCache(text: string): CacheFile | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
  const record = raw as Record<string, unknown>;
  if (typeof record.version !== "string" || typeof record.model !== "string") return null;
  const bullets: Record<string, CachedVector> = {};
  const source = record.bullets !== null && typeof record.bullets === "object" && !Array.isArray(record.bullets) ? (record.bullets as Record<string, unknown>) : {};
  for (const [id, value] of Object.entries(source)) {
    const entry = value as Partial<CachedVector> | null;
    if (entry === null || typeof entry !== "object" || typeof entry.contentHash !== "string" || !isVector(entry.embedding)) continue;
    bullets[id] = { contentHash: entry.contentHash, embedding: entry.embedding, computedAt: typeof entry.computedAt === "string" ? entry.computedAt : "" };
  }
  return { ...record, version: record.version, model: record.model, bullets };
}

/**
 * Vectors are stored with 8 significant digits (about float32 precision, which is what models
 * compute in): the file is about 40% smaller and parses twice as fast, and cosines change by less
 * than 1e-7.
 */
function compact(x: number): number {
  return Number(x.toPrecision(8));
}

export interface EmbeddingCacheOptions {
  globalDir: string;
  clock: Clock;
  logger: Logger;
}

/**
 * The embedding cache file. Reads are lock-free (the file is replaced atomically); writes are a
 * read-modify-write under the file's lock (the original's `<file>.lock.d`). The whole cache is
 * discarded when its version or model differ from the current ones; entries are looked up by
 * content hash, so a bullet whose text is unchanged is never embedded twice. A file that is not a
 * cache document is moved aside (`bullets.json.corrupt.<ms>`) before a new one is written.
 */
export function createEmbeddingCache(options: EmbeddingCacheOptions): EmbeddingCache & { readonly path: string } {
  const path = embeddingCachePath(options.globalDir);
  // Parsed file, reused while its mtime and size are unchanged (the MCP server asks often).
  let memo: { mtimeMs: number; size: number; data: CacheFile | null } | null = null;

  async function load(): Promise<{ exists: boolean; data: CacheFile | null }> {
    let info;
    try {
      info = await stat(path);
    } catch (error) {
      if ((error as { code?: unknown }).code === "ENOENT") return { exists: false, data: null };
      throw error;
    }
    if (memo !== null && memo.mtimeMs === info.mtimeMs && memo.size === info.size) return { exists: true, data: memo.data };
    const data = decodeCache(await readFile(path, "utf8"));
    memo = { mtimeMs: info.mtimeMs, size: info.size, data };
    return { exists: true, data };
  }

  return {
    path,
    async get(model, hashes) {
      const found = new Map<string, number[]>();
      const { exists, data } = await load();
      if (exists && data === null) options.logger.debug(`Ignoring ${path}: not an embedding cache file`);
      if (data === null || data.version !== EMBEDDING_CACHE_VERSION || data.model !== model) return found;
      const wanted = new Set(hashes);
      for (const entry of Object.values(data.bullets)) {
        if (wanted.has(entry.contentHash) && !found.has(entry.contentHash)) found.set(entry.contentHash, entry.embedding);
      }
      return found;
    },
    async put(model, entries: readonly EmbeddingCacheEntry[]) {
      if (entries.length === 0) return;
      await withLock(
        path,
        async () => {
          const { exists, data } = await load();
          if (exists && data === null) {
            const backup = `${path}.corrupt.${Date.now()}`;
            await rename(path, backup);
            options.logger.warn(`Embedding cache ${path} was not readable; moved it to ${backup} and started a new one.`);
          }
          const current: CacheFile =
            data !== null && data.version === EMBEDDING_CACHE_VERSION && data.model === model
              ? data
              : { version: EMBEDDING_CACHE_VERSION, model, bullets: {} };
          const computedAt = options.clock.now().toISOString();
          const next: CacheFile = { ...current, bullets: { ...current.bullets } };
          for (const entry of entries) {
            next.bullets[entry.id] = { contentHash: entry.contentHash, embedding: entry.embedding.map(compact), computedAt };
          }
          await atomicWriteFile(path, JSON.stringify(next));
          memo = null;
        },
        { logger: options.logger },
      );
    },
  };
}

/** The part of `@cass-memory/llm` that semantic search uses. */
export type EmbeddingModule = Pick<typeof import("@cass-memory/llm"), "createEmbedder">;

export interface EmbedderWiring {
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  logger: Logger;
  /** Loads the module with `createEmbedder` (default: `import("@cass-memory/llm")`). */
  load?: () => Promise<EmbeddingModule>;
}

/** Checks that a loaded LLM layer can build embedders (a bundle built before semantic search could not). */
export function asEmbeddingModule(mod: unknown): EmbeddingModule {
  if (mod !== null && typeof mod === "object" && typeof (mod as { createEmbedder?: unknown }).createEmbedder === "function") {
    return mod as EmbeddingModule;
  }
  throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", "The LLM layer of this program cannot build embedders", {
    hint: "Reinstall cm, or set semanticSearchEnabled: false to use keyword search only",
  });
}

/**
 * `OperationDeps.embedder`: loads the LLM layer and builds the configured embedder on first call.
 * A success is kept for the process; a failure is not, so a later call (in a long-running server)
 * tries again.
 */
export function createEmbedderLoader(wiring: EmbedderWiring): () => Promise<Embedder> {
  let loaded: Promise<Embedder> | null = null;
  return () => {
    loaded ??= (async () => {
      const mod = asEmbeddingModule(await (wiring.load ?? (() => import("@cass-memory/llm")))());
      const embedder = await mod.createEmbedder(wiring.config, wiring.env);
      wiring.logger.debug(`Semantic search: ${wiring.config.embeddingBackend} embedder, model ${embedder.model}`);
      return embedder;
    })();
    loaded.catch(() => {
      loaded = null;
    });
    return loaded;
  };
}

/**
 * The loader the runtime uses: `loadEmbeddings` when given, else the `loadLlm` of the front end
 * (the CLI's LLM bundle also exports `createEmbedder`), else the default import.
 */
export function embeddingLoaderOf(options: {
  loadEmbeddings?: (() => Promise<EmbeddingModule>) | undefined;
  loadLlm?: (() => Promise<unknown>) | undefined;
}): { load?: () => Promise<EmbeddingModule> } {
  if (options.loadEmbeddings !== undefined) return { load: options.loadEmbeddings };
  const loadLlm = options.loadLlm;
  if (loadLlm !== undefined) return { load: async () => asEmbeddingModule(await loadLlm()) };
  return {};
}
