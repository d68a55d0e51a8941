import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { AppError, defaultConfig, type Config } from "@cass-memory/core";
import {
  DEFAULT_EMBEDDING_BATCH_SIZE,
  createEmbedder,
  createHttpEmbedder,
  resolveEmbeddingSettings,
  type HttpEmbeddingSettings,
} from "../src/embed.js";
import {
  TRANSFORMERS_MODULE_ENV,
  createTransformersEmbedder,
  defaultTransformersLoader,
  type FeatureExtractor,
  type TransformersModule,
} from "../src/embed-transformers.js";

/**
 * A fake OpenAI-compatible embeddings server on 127.0.0.1 (`POST /v1/embeddings`): each input
 * text becomes the vector [length, number of vowels, 1]; `mode` makes it fail or hang instead.
 */
interface Recorded {
  url: string;
  authorization: string | undefined;
  body: { model?: string; input?: string[]; encoding_format?: string };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

function vectorOf(text: string): number[] {
  return [text.length, (text.match(/[aeiou]/gi) ?? []).length, 1];
}

async function fakeEmbeddings(mode: { status?: number; hang?: boolean; shortBy?: number } = {}) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const body = (text === "" ? {} : JSON.parse(text)) as Recorded["body"];
      requests.push({ url: req.url ?? "", authorization: req.headers.authorization, body });
      if (mode.hang) return; // never answers
      if (req.url !== "/v1/embeddings" || req.method !== "POST") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      if (mode.status !== undefined) {
        res.writeHead(mode.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `model "${body.model}" not found` } }));
        return;
      }
      const inputs = (body.input ?? []).slice(mode.shortBy ?? 0);
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          object: "list",
          model: body.model,
          data: inputs.map((t, index) => ({ object: "embedding", index, embedding: vectorOf(t) })),
          usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
        }),
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { requests, base: `http://127.0.0.1:${port}/v1`, port };
}

/** A port with nothing listening (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function config(overrides: Partial<Config> = {}): Config {
  return { ...defaultConfig(), semanticSearchEnabled: true, ...overrides };
}

function http(base: string, overrides: Partial<HttpEmbeddingSettings> = {}): HttpEmbeddingSettings {
  return { backend: "openai", model: "test-embed", baseUrl: base, timeoutMs: 10_000, batchSize: DEFAULT_EMBEDDING_BATCH_SIZE, ...overrides };
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("SEMANTIC_SEARCH_UNAVAILABLE");
  return error as AppError;
}

describe("resolveEmbeddingSettings", () => {
  it("defaults to the local xenova backend with the original's model", () => {
    expect(resolveEmbeddingSettings(config(), {})).toEqual({
      backend: "xenova",
      model: "Xenova/all-MiniLM-L6-v2",
      timeoutMs: 10_000,
      batchSize: DEFAULT_EMBEDDING_BATCH_SIZE,
      offline: false,
    });
  });

  it("xenova: model dir from config (with ~) or CM_EMBEDDING_MODEL_DIR, offline from HF_HUB_OFFLINE", () => {
    expect(resolveEmbeddingSettings(config({ embeddingModelDir: "~/models" }), { HOME: "/home/u", HF_HUB_OFFLINE: "1" })).toMatchObject({
      modelDir: "/home/u/models",
      offline: true,
    });
    expect(resolveEmbeddingSettings(config(), { CM_EMBEDDING_MODEL_DIR: "/opt/models" })).toMatchObject({ modelDir: "/opt/models" });
  });

  it("ollama: Ollama's /v1 endpoint, its own default model, no key, OLLAMA_HOST respected", () => {
    expect(resolveEmbeddingSettings(config({ embeddingBackend: "ollama" }), {})).toEqual({
      backend: "ollama",
      model: "nomic-embed-text",
      baseUrl: "http://localhost:11434/v1",
      timeoutMs: 10_000,
      batchSize: DEFAULT_EMBEDDING_BATCH_SIZE,
    });
    expect(resolveEmbeddingSettings(config({ embeddingBackend: "ollama", embeddingModel: "mxbai-embed-large" }), { OLLAMA_HOST: "gpu-box:11434" })).toMatchObject({
      model: "mxbai-embed-large",
      baseUrl: "http://gpu-box:11434/v1",
    });
  });

  it("openai: OpenAI by default with OPENAI_API_KEY; CM_EMBEDDING_API_KEY wins; embeddingBaseUrl and embeddingTimeoutMs honoured", () => {
    expect(resolveEmbeddingSettings(config({ embeddingBackend: "openai" }), { OPENAI_API_KEY: "sk-1" })).toMatchObject({
      backend: "openai",
      model: "text-embedding-3-small",
      baseUrl: "https://api.openai.com/v1",
      apiKey: "sk-1",
    });
    expect(
      resolveEmbeddingSettings(config({ embeddingBackend: "openai", embeddingBaseUrl: "https://gw.example/v1/", embeddingTimeoutMs: 2500 }), {
        OPENAI_API_KEY: "sk-1",
        CM_EMBEDDING_API_KEY: "emb-2",
      }),
    ).toMatchObject({ baseUrl: "https://gw.example/v1", apiKey: "emb-2", timeoutMs: 2500 });
  });

  it("openai: a local server needs no key; a remote one without a key is unavailable with a hint", () => {
    const local = resolveEmbeddingSettings(config({ embeddingBackend: "openai", embeddingBaseUrl: "http://127.0.0.1:8000/v1" }), {});
    expect(local).not.toHaveProperty("apiKey");
    let error: unknown;
    try {
      resolveEmbeddingSettings(config({ embeddingBackend: "openai" }), {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "SEMANTIC_SEARCH_UNAVAILABLE", message: expect.stringContaining("No API key") });
    expect((error as AppError).hint).toContain("OPENAI_API_KEY");
  });
});

describe("HTTP embedder against a fake /v1/embeddings server", () => {
  it("posts the texts with the model and key and returns one vector per text", async () => {
    const fake = await fakeEmbeddings();
    const embedder = createHttpEmbedder(http(fake.base, { apiKey: "sk-test" }));
    expect(embedder.model).toBe("test-embed");
    expect(await embedder.embed(["alpha", "be"])).toEqual([vectorOf("alpha"), vectorOf("be")]);
    expect(fake.requests).toEqual([
      { url: "/v1/embeddings", authorization: "Bearer sk-test", body: expect.objectContaining({ model: "test-embed", input: ["alpha", "be"], encoding_format: "float" }) },
    ]);
  });

  it("sends no Authorization header without a key, and nothing at all for no texts", async () => {
    const fake = await fakeEmbeddings();
    const embedder = createHttpEmbedder(http(fake.base));
    expect(await embedder.embed([])).toEqual([]);
    await embedder.embed(["x"]);
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.authorization).toBeUndefined();
  });

  it("splits large inputs into batches and keeps the order", async () => {
    const fake = await fakeEmbeddings();
    const texts = Array.from({ length: 70 }, (_, i) => "a".repeat(i + 1));
    const vectors = await createHttpEmbedder(http(fake.base)).embed(texts);
    expect(vectors).toEqual(texts.map(vectorOf));
    expect(fake.requests.map((r) => r.body.input!.length).sort((a, b) => b - a)).toEqual([32, 32, 6]);
  });

  it("reports a missing model (404) with an 'ollama pull' hint on the ollama backend", async () => {
    const fake = await fakeEmbeddings({ status: 404 });
    const error = await rejection(createHttpEmbedder(http(fake.base, { backend: "ollama", model: "nomic-embed-text" })).embed(["x"]));
    expect(error.message).toContain("'nomic-embed-text' not found");
    expect(error.hint).toContain("ollama pull nomic-embed-text");
    expect(fake.requests).toHaveLength(1); // no retries
  });

  it("reports a refused key (401)", async () => {
    const fake = await fakeEmbeddings({ status: 401 });
    const error = await rejection(createHttpEmbedder(http(fake.base, { apiKey: "bad" })).embed(["x"]));
    expect(error.message).toContain("refused the API key");
    expect(error.hint).toContain("CM_EMBEDDING_API_KEY");
  });

  it("reports a server that is down", async () => {
    const port = await closedPort();
    const error = await rejection(createHttpEmbedder(http(`http://127.0.0.1:${port}/v1`)).embed(["x"]));
    expect(error.message).toContain(`Cannot reach the embeddings endpoint http://127.0.0.1:${port}/v1`);
    expect(error.hint).toContain("semanticSearchEnabled: false");
  });

  it("gives up at the deadline when the server does not answer", async () => {
    const fake = await fakeEmbeddings({ hang: true });
    const error = await rejection(createHttpEmbedder(http(fake.base, { timeoutMs: 300 })).embed(["x"]));
    expect(error.message).toContain("timed out after 300 ms");
    expect(error.hint).toContain("embeddingTimeoutMs");
  });

  it("rejects an answer with fewer vectors than texts", async () => {
    const fake = await fakeEmbeddings({ shortBy: 1 });
    await rejection(createHttpEmbedder(http(fake.base)).embed(["one", "two"]));
  });

  it("createEmbedder builds it from the configuration", async () => {
    const fake = await fakeEmbeddings();
    const embedder = await createEmbedder(config({ embeddingBackend: "openai", embeddingBaseUrl: fake.base, embeddingModel: "bge-small" }), {});
    expect(embedder.model).toBe("bge-small");
    expect(await embedder.embed(["hello"])).toEqual([vectorOf("hello")]);
    expect(fake.requests[0]!.body.model).toBe("bge-small");
  });
});

describe("transformers.js (xenova) embedder", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A stand-in for `@huggingface/transformers`: records pipeline() calls; vectors from the text. */
  function fakeTransformers(options: { failLoad?: Error; hang?: boolean } = {}) {
    const calls: { pipeline: Array<{ task: string; model: string; options?: Record<string, unknown> }>; batches: string[][] } = { pipeline: [], batches: [] };
    const mod: TransformersModule = {
      env: {},
      async pipeline(task, model, opts) {
        calls.pipeline.push({ task, model, ...(opts !== undefined ? { options: opts } : {}) });
        if (options.failLoad) throw options.failLoad;
        const extractor: FeatureExtractor = async (texts, pooling) => {
          calls.batches.push(texts);
          expect(pooling).toEqual({ pooling: "mean", normalize: true });
          if (options.hang) return new Promise(() => undefined);
          return { tolist: () => texts.map(vectorOf) };
        };
        return extractor;
      },
    };
    return { mod, calls };
  }

  const local = { backend: "xenova" as const, model: "Xenova/all-MiniLM-L6-v2", timeoutMs: 10_000, batchSize: 2, offline: false };

  it("loads the model once, embeds in batches with mean pooling, and sets the model directory", async () => {
    const { mod, calls } = fakeTransformers();
    const embedder = await createTransformersEmbedder({ ...local, modelDir: "/opt/models" }, { load: async () => mod });
    expect(await embedder.embed(["a", "bb", "ccc"])).toEqual([vectorOf("a"), vectorOf("bb"), vectorOf("ccc")]);
    expect(calls.pipeline).toEqual([{ task: "feature-extraction", model: "Xenova/all-MiniLM-L6-v2", options: {} }]);
    expect(calls.batches).toEqual([["a", "bb"], ["ccc"]]);
    expect(mod.env).toEqual({ localModelPath: "/opt/models", cacheDir: "/opt/models" });
  });

  it("offline: no downloads and local files only", async () => {
    const { mod, calls } = fakeTransformers();
    await createTransformersEmbedder({ ...local, offline: true }, { load: async () => mod });
    expect(mod.env!.allowRemoteModels).toBe(false);
    expect(calls.pipeline[0]!.options).toEqual({ local_files_only: true });
  });

  it("reports a model that cannot be loaded", async () => {
    const { mod } = fakeTransformers({ failLoad: new Error("Could not locate file: onnx/model.onnx") });
    const error = await rejection(createTransformersEmbedder({ ...local, modelDir: "/m" }, { load: async () => mod }));
    expect(error.message).toContain("Could not load embedding model Xenova/all-MiniLM-L6-v2 in /m");
    expect(error.hint).toContain("embeddingModelDir");
  });

  it("gives up at the deadline", async () => {
    const { mod } = fakeTransformers({ hang: true });
    const embedder = await createTransformersEmbedder({ ...local, timeoutMs: 200 }, { load: async () => mod });
    const error = await rejection(embedder.embed(["x"]));
    expect(error.message).toContain("took longer than 200 ms");
  });

  it("the default loader reports a missing @huggingface/transformers with the install hint (the real import)", async () => {
    const error = await rejection(defaultTransformersLoader({})());
    expect(error.message).toBe('@huggingface/transformers is not installed (needed by embeddingBackend "xenova")');
    expect(error.hint).toContain("npm install -g @huggingface/transformers");
    // And through createEmbedder with the default configuration.
    const viaConfig = await rejection(createEmbedder(config(), {}));
    expect(viaConfig.message).toContain("is not installed");
  });

  it(`the default loader imports the module named by ${TRANSFORMERS_MODULE_ENV} (a real dynamic import)`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "cm-transformers-"));
    dirs.push(dir);
    const file = join(dir, "fake-transformers.mjs");
    writeFileSync(
      file,
      [
        "export const env = {};",
        "export async function pipeline(task, model) {",
        "  return async (texts) => ({ tolist: () => texts.map((t) => [t.length, model.length]) });",
        "}",
      ].join("\n"),
    );
    const embedder = await createEmbedder(config(), { [TRANSFORMERS_MODULE_ENV]: file });
    expect(await embedder.embed(["abc"])).toEqual([[3, "Xenova/all-MiniLM-L6-v2".length]]);

    const empty = join(dir, "empty.mjs");
    writeFileSync(empty, "export const nothing = 1;\n");
    const error = await rejection(defaultTransformersLoader({ [TRANSFORMERS_MODULE_ENV]: empty })());
    expect(error.message).toContain("does not export a transformers.js pipeline()");
  });
});
