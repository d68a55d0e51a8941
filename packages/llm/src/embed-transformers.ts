import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { AppError, checkEmbeddings, isAppError, type Embedder } from "@cass-memory/core";
import type { LocalEmbeddingSettings } from "./embed.js";

/**
 * The `xenova` backend: a local sentence-embedding model run by transformers.js
 * (`@huggingface/transformers`, the successor of the `@xenova/transformers` the original used).
 *
 * cass-memory does not depend on it (it is large and downloads models): the package is imported
 * only when the user installed it where cm can load it, e.g. `npm install -g
 * @huggingface/transformers` next to a global cm. Without it the embedder cannot be created and
 * the caller gets SEMANTIC_SEARCH_UNAVAILABLE with that hint. Models come from `modelDir`
 * (config `embeddingModelDir` / CM_EMBEDDING_MODEL_DIR) or transformers.js's own cache.
 */

/** The package name; kept in a variable so bundlers leave the import to run time. */
export const TRANSFORMERS_PACKAGE = "@huggingface/transformers";
/** An explicit module path (file or package directory) to import instead of the package name. */
export const TRANSFORMERS_MODULE_ENV = "CM_TRANSFORMERS_MODULE";

export const TRANSFORMERS_INSTALL_HINT =
  `Install it where cm can load it (npm install -g ${TRANSFORMERS_PACKAGE}, next to a global cm), ` +
  `or use embeddingBackend "ollama" or "openai", or set semanticSearchEnabled: false to use keyword search only`;

/** What a feature-extraction pipeline returns: a tensor (`tolist()`) or nested arrays. */
export type FeatureOutput = { tolist(): unknown } | unknown[];

export type FeatureExtractor = (texts: string[], options: { pooling: "mean"; normalize: boolean }) => Promise<FeatureOutput>;

/** The part of `@huggingface/transformers` this backend uses. */
export interface TransformersModule {
  pipeline(task: "feature-extraction", model: string, options?: Record<string, unknown>): Promise<FeatureExtractor>;
  env?: { localModelPath?: string; cacheDir?: string | null; allowRemoteModels?: boolean; allowLocalModels?: boolean };
}

export type TransformersLoader = () => Promise<TransformersModule>;

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND";
}

/**
 * Imports transformers.js: the path in CM_TRANSFORMERS_MODULE when set, else the package name
 * (resolved from cm's own location). A dynamic import with a computed specifier, so that neither
 * TypeScript nor the bundler needs the package.
 */
export function defaultTransformersLoader(env: Readonly<Record<string, string | undefined>> = process.env): TransformersLoader {
  return async () => {
    const explicit = env[TRANSFORMERS_MODULE_ENV]?.trim();
    const specifier = explicit ? (isAbsolute(explicit) ? pathToFileURL(explicit).href : explicit) : TRANSFORMERS_PACKAGE;
    try {
      const mod = (await import(/* @vite-ignore */ specifier)) as TransformersModule & { default?: TransformersModule };
      const candidate = typeof mod.pipeline === "function" ? mod : mod.default;
      if (candidate === undefined || typeof candidate.pipeline !== "function") {
        throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `${specifier} does not export a transformers.js pipeline()`, {
          hint: TRANSFORMERS_INSTALL_HINT,
        });
      }
      return candidate;
    } catch (error) {
      if (isAppError(error)) throw error;
      if (isModuleNotFound(error)) {
        throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `${TRANSFORMERS_PACKAGE} is not installed (needed by embeddingBackend "xenova")`, {
          hint: TRANSFORMERS_INSTALL_HINT,
          cause: error,
        });
      }
      throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `Could not load ${specifier}: ${error instanceof Error ? error.message : String(error)}`, {
        hint: TRANSFORMERS_INSTALL_HINT,
        cause: error,
      });
    }
  };
}

function toRows(output: FeatureOutput): unknown {
  if (Array.isArray(output)) return output;
  if (output !== null && typeof output === "object" && typeof (output as { tolist?: unknown }).tolist === "function") {
    return (output as { tolist(): unknown }).tolist();
  }
  return output;
}

/** Rejects after `ms` unless `promise` settles first (the computation itself cannot be cancelled). */
async function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError("SEMANTIC_SEARCH_UNAVAILABLE", message, { hint: "Raise embeddingTimeoutMs for a slow machine, or set semanticSearchEnabled: false" })), ms);
    timer.unref?.();
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Loads the model (mean-pooled, normalised sentence embeddings) and returns the embedder. Texts
 * are embedded `batchSize` at a time; one call has `timeoutMs` in total.
 */
export async function createTransformersEmbedder(
  settings: LocalEmbeddingSettings,
  options: { load?: TransformersLoader } = {},
): Promise<Embedder> {
  const transformers = await (options.load ?? defaultTransformersLoader())();
  if (transformers.env !== undefined) {
    if (settings.modelDir !== undefined) {
      transformers.env.localModelPath = settings.modelDir;
      transformers.env.cacheDir = settings.modelDir;
    }
    if (settings.offline) transformers.env.allowRemoteModels = false;
  }
  let extractor: FeatureExtractor;
  try {
    extractor = await transformers.pipeline("feature-extraction", settings.model, settings.offline ? { local_files_only: true } : {});
  } catch (error) {
    const where = settings.modelDir !== undefined ? ` in ${settings.modelDir}` : "";
    throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `Could not load embedding model ${settings.model}${where}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: `Put the model in embeddingModelDir (or allow its download once), or set semanticSearchEnabled: false to use keyword search only`,
      cause: error,
    });
  }
  return {
    model: settings.model,
    async embed(texts) {
      if (texts.length === 0) return [];
      const run = async (): Promise<number[][]> => {
        const rows: unknown[] = [];
        for (let start = 0; start < texts.length; start += settings.batchSize) {
          const batch = texts.slice(start, start + settings.batchSize);
          const output = toRows(await extractor(batch, { pooling: "mean", normalize: true }));
          if (!Array.isArray(output)) throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `Embedding model ${settings.model} returned no list of vectors`, { hint: TRANSFORMERS_INSTALL_HINT });
          rows.push(...output);
        }
        return checkEmbeddings(rows, texts.length, settings.model);
      };
      try {
        return await withDeadline(run(), settings.timeoutMs, `Embedding with ${settings.model} took longer than ${settings.timeoutMs} ms`);
      } catch (error) {
        if (isAppError(error)) throw error;
        throw new AppError("SEMANTIC_SEARCH_UNAVAILABLE", `Embedding with ${settings.model} failed: ${error instanceof Error ? error.message : String(error)}`, {
          hint: "Check embeddingModel, or set semanticSearchEnabled: false to use keyword search only",
          cause: error,
        });
      }
    },
  };
}
