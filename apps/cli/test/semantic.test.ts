import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, cmAsync, tempHome, type RunResult } from "./helpers.js";

/**
 * Semantic search end to end: the built `cm` with config pointing `embeddingBaseUrl` at a fake
 * OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 (real HTTP from the CLI's LLM bundle),
 * then with that server gone, then with the default local backend whose package is not installed.
 */

beforeAll(() => assertBuilt());

let home: string;
let cleanup: () => void;
let server: Server | null = null;
beforeEach(() => {
  ({ home, cleanup } = tempHome());
});
afterEach(async () => {
  await stopServer();
  cleanup();
});

interface EmbeddingRequest {
  url: string;
  model: string;
  input: string[];
}

/** Letter counts a–z: a deterministic stand-in for an embedding model. */
function letters(text: string): number[] {
  const v = new Array<number>(26).fill(0);
  for (const ch of text.toLowerCase()) {
    const i = ch.charCodeAt(0) - 97;
    if (i >= 0 && i < 26) v[i]!++;
  }
  return v;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

async function startServer(): Promise<{ base: string; requests: EmbeddingRequest[] }> {
  const requests: EmbeddingRequest[] = [];
  server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const body = JSON.parse(raw || "{}") as { model?: string; input?: string[] };
      requests.push({ url: req.url ?? "", model: String(body.model), input: body.input ?? [] });
      if (req.url !== "/v1/embeddings") {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no route" } }));
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({ object: "list", data: (body.input ?? []).map((t, index) => ({ object: "embedding", index, embedding: letters(t) })), usage: { prompt_tokens: 1, total_tokens: 1 } }),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { base: `http://127.0.0.1:${port}/v1`, requests };
}

async function stopServer(): Promise<void> {
  const s = server;
  server = null;
  if (s === null) return;
  s.closeAllConnections();
  await new Promise<void>((resolve) => s.close(() => resolve()));
}

/** Our embedding settings must come from the test only. */
const env = { CM_EMBEDDING_API_KEY: undefined, CM_EMBEDDING_MODEL_DIR: undefined, CM_TRANSFORMERS_MODULE: undefined, HF_HUB_OFFLINE: undefined };

function writeConfig(patch: Record<string, unknown>): void {
  const path = join(home, ".cass-memory", "config.json");
  const current = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...current, ...patch }, null, 2));
}

function seed(): void {
  expect(cm(["init", "--json"], { home, env }).code).toBe(0);
  for (const rule of ["Run smoke tests after every deploy", "Rotate the session signing secret when users are logged out"]) {
    const r = cm(["playbook", "add", rule, "--json"], { home, env });
    expect(r.code, r.stderr).toBe(0);
  }
}

const context = (task: string): Promise<RunResult> => cmAsync(["context", task, "--no-history", "--json"], { home, env });

describe("cm context --json with semantic search", () => {
  it("uses the embeddings endpoint (semanticMode semantic), caches bullet vectors, and embeds only the task next time", async () => {
    seed();
    const fake = await startServer();
    writeConfig({ semanticSearchEnabled: true, embeddingBackend: "openai", embeddingBaseUrl: fake.base, embeddingModel: "test-embed" });

    const first = await context("deploy the api");
    expect(first.code, first.stderr).toBe(0);
    const data = first.json().data;
    expect(data.semanticMode).toBe("semantic");
    expect(data).not.toHaveProperty("semanticError");
    expect(data.relevantBullets.map((b: { content: string }) => b.content)).toContain("Run smoke tests after every deploy");
    expect(fake.requests).toEqual([
      { url: "/v1/embeddings", model: "test-embed", input: ["Run smoke tests after every deploy", "Rotate the session signing secret when users are logged out", "deploy the api"] },
    ]);

    const cache = JSON.parse(readFileSync(join(home, ".cass-memory", "embeddings", "bullets.json"), "utf8"));
    expect(cache).toMatchObject({ version: "1.0", model: "test-embed" });
    expect(Object.values(cache.bullets)).toHaveLength(2);

    const second = await context("rotate secrets");
    expect(second.code, second.stderr).toBe(0);
    expect(second.json().data.semanticMode).toBe("semantic");
    expect(fake.requests[1]!.input).toEqual(["rotate secrets"]);
  });

  it("falls back to keywords with semanticError when the server is down, exit 0", async () => {
    seed();
    const fake = await startServer();
    writeConfig({ semanticSearchEnabled: true, embeddingBackend: "openai", embeddingBaseUrl: fake.base });
    await stopServer();

    const r = await context("deploy the api");
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.semanticMode).toBe("keyword");
    expect(data.semanticError).toContain(`Cannot reach the embeddings endpoint ${fake.base}`);
    expect(data.semanticError).toContain("semanticSearchEnabled: false");
    expect(data.relevantBullets[0]).toMatchObject({ content: "Run smoke tests after every deploy" });
    expect(r.stderr).toContain("Semantic search unavailable");
  });

  it("default local backend without @huggingface/transformers installed: keyword mode with the install hint", async () => {
    seed();
    writeConfig({ semanticSearchEnabled: true });
    const r = await context("deploy the api");
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.semanticMode).toBe("keyword");
    expect(data.semanticError).toContain("@huggingface/transformers is not installed");
    expect(data.semanticError).toContain("npm install -g @huggingface/transformers");
  });

  it("semantic search off: keyword mode, no semanticError, no embedding cache written", async () => {
    seed();
    const fake = await startServer();
    writeConfig({ embeddingBackend: "openai", embeddingBaseUrl: fake.base });
    const r = await context("deploy the api");
    expect(r.code, r.stderr).toBe(0);
    expect(r.json().data.semanticMode).toBe("keyword");
    expect(r.json().data).not.toHaveProperty("semanticError");
    expect(fake.requests).toEqual([]);
    expect(existsSync(join(home, ".cass-memory", "embeddings", "bullets.json"))).toBe(false);
  });
});

describe("cm similar --json with semantic search", () => {
  it("reports mode semantic with cosine similarities from the endpoint, and keyword when it is down", async () => {
    seed();
    const fake = await startServer();
    writeConfig({ semanticSearchEnabled: true, embeddingBackend: "openai", embeddingBaseUrl: fake.base });
    const r = await cmAsync(["similar", "Run smoke tests after each deploy", "--json"], { home, env });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.mode).toBe("semantic");
    expect(data.results[0]).toMatchObject({ content: "Run smoke tests after every deploy" });
    expect(data.results[0].similarity).toBeGreaterThan(0.9);

    await stopServer();
    const down = await cmAsync(["similar", "Run smoke tests after each deploy", "--json"], { home, env });
    expect(down.code, down.stderr).toBe(0);
    expect(down.json().data.mode).toBe("keyword");
    expect(down.stderr).toContain("Semantic search unavailable");
  });
});
