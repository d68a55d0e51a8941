import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { isAppError } from "@cass-memory/core";
import { createLlmLearning } from "../src/learning.js";
import { createLanguageModel } from "../src/model.js";
import { generateStructured } from "../src/generate.js";
import { DiaryReplySchema } from "../src/schemas.js";
import { resolveLlmSettings } from "../src/settings.js";
import { harness, testConfig } from "./helpers.js";

/**
 * A fake OpenAI-compatible server on 127.0.0.1 (Chat Completions only, like Ollama, llama.cpp or
 * vLLM). `reply(body)` decides each answer; every request is recorded.
 */
interface Recorded {
  method: string;
  url: string;
  authorization: string | undefined;
  body: Record<string, unknown>;
}
type Reply = { status: number; json: unknown };

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

async function fakeServer(reply: (body: Record<string, unknown>, n: number) => Reply) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((text) => {
      const body = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
      requests.push({ method: req.method ?? "", url: req.url ?? "", authorization: req.headers.authorization, body });
      const answer =
        req.url === "/v1/chat/completions" && req.method === "POST"
          ? reply(body, requests.length)
          : { status: 404, json: { error: { message: `no route ${req.url}` } } };
      res.writeHead(answer.status, { "content-type": "application/json" });
      res.end(JSON.stringify(answer.json));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { requests, root: `http://127.0.0.1:${port}`, port };
}

function completion(content: string, usage = { prompt_tokens: 321, completion_tokens: 45 }): Reply {
  return {
    status: 200,
    json: {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1_760_000_000,
      model: "served-model",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

const DIARY = {
  status: "success",
  accomplishments: ["Fixed the flaky lock test in packages/store-yaml/test/lock.test.ts"],
  decisions: [],
  challenges: ["EEXIST on .lock.d under parallel runs"],
  preferences: [],
  keyLearnings: ["Re-check the lock owner pid before removing a stale lock"],
  tags: ["locking"],
};

const SESSION = { path: "/tmp/s1.jsonl", agent: "codex", text: "user: fix the lock test\nassistant: done" };

function messagesText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ content?: unknown }>;
  return messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
}

/** OpenAI's strict mode: every object lists all its properties as required and forbids others. */
function assertStrictSchema(schema: unknown, path = "$"): void {
  if (Array.isArray(schema)) return schema.forEach((s, i) => assertStrictSchema(s, `${path}[${i}]`));
  if (schema === null || typeof schema !== "object") return;
  const node = schema as Record<string, unknown>;
  if (node.type === "object" || node.properties !== undefined) {
    const keys = Object.keys((node.properties ?? {}) as object).sort();
    expect([...((node.required ?? []) as string[])].sort(), `${path}.required`).toEqual(keys);
    expect(node.additionalProperties, `${path}.additionalProperties`).toBe(false);
  }
  expect(node.oneOf, `${path}.oneOf (strict mode wants anyOf)`).toBeUndefined();
  for (const [key, value] of Object.entries(node)) assertStrictSchema(value, `${path}.${key}`);
}

describe("against a fake OpenAI-compatible server", () => {
  it("provider openai + baseUrl: chat completions with json_schema, usage recorded", async () => {
    const server = await fakeServer(() => completion(JSON.stringify(DIARY)));
    const h = harness();
    const learning = createLlmLearning({
      config: testConfig({ provider: "openai", model: "qwen2.5-coder:7b", baseUrl: `${server.root}/v1` }),
      env: {},
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      sleep: h.sleep,
    });
    if (!learning.available) throw new Error(learning.reason);
    const draft = await learning.components.diaryWriter.write(SESSION);
    expect(draft.keyLearnings).toEqual(DIARY.keyLearnings);

    expect(server.requests).toHaveLength(1);
    const request = server.requests[0];
    expect(request?.url).toBe("/v1/chat/completions");
    expect(request?.authorization).toBe("Bearer unused");
    expect(request?.body.model).toBe("qwen2.5-coder:7b");
    const format = request?.body.response_format as { type: string; json_schema: { schema: unknown; strict: boolean } };
    expect(format.type).toBe("json_schema");
    expect(format.json_schema.strict).toBe(true);
    assertStrictSchema(format.json_schema.schema);

    // Local server: the call is free, but its tokens are on record.
    expect(h.costEntries()).toEqual([
      { provider: "openai", model: "qwen2.5-coder:7b", tokensIn: 321, tokensOut: 45, cost: 0, timestamp: h.clock.now().toISOString() },
    ]);
  });

  it("provider ollama: a server that rejects json_schema gets JSON-in-text requests instead", async () => {
    const server = await fakeServer((body) => {
      const format = body.response_format as { type?: string } | undefined;
      if (format?.type === "json_schema") {
        return { status: 400, json: { error: { message: "response_format type 'json_schema' is not supported", type: "invalid_request_error" } } };
      }
      return completion("Here is the diary:\n```json\n" + JSON.stringify(DIARY) + "\n```", { prompt_tokens: 500, completion_tokens: 80 });
    });
    const h = harness();
    const learning = createLlmLearning({
      config: testConfig({ provider: "ollama", model: "llama3.2:3b" }),
      env: { OLLAMA_BASE_URL: server.root },
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      sleep: h.sleep,
    });
    if (!learning.available) throw new Error(learning.reason);
    const first = await learning.components.diaryWriter.write(SESSION);
    expect(first.status).toBe("success");
    expect(server.requests.map((r) => r.url)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
    expect((server.requests[0]?.body.response_format as { type: string }).type).toBe("json_schema");
    expect(server.requests[1]?.body.response_format).toBeUndefined();
    expect(messagesText(server.requests[1]?.body ?? {})).toContain("JSON Schema");
    expect(server.requests[1]?.authorization).toBeUndefined();

    // The other components share what was learned: no second json_schema attempt.
    await learning.components.diaryWriter.write(SESSION);
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.body.response_format).toBeUndefined();

    expect(h.costEntries().map((e) => [e.provider, e.model, e.tokensIn, e.tokensOut, e.cost])).toEqual([
      ["ollama", "llama3.2:3b", 500, 80, 0],
      ["ollama", "llama3.2:3b", 500, 80, 0],
    ]);
  });

  it("every component's schema is accepted by a strict json_schema server", async () => {
    const replies: Record<string, unknown> = {
      diary: DIARY,
      reflect: { deltas: [] },
      validate: { verdict: "ACCEPT", confidence: 0.9, reason: "ok", supporting: [], contradicting: [], suggestedRefinement: null },
      audit: { results: [], summary: null },
    };
    const server = await fakeServer((body) => {
      const name = (body.response_format as { json_schema: { name: string } }).json_schema.name;
      return completion(JSON.stringify(replies[name]));
    });
    const h = harness();
    const learning = createLlmLearning({
      config: testConfig({ provider: "openai", model: "m", baseUrl: `${server.root}/v1` }),
      env: {},
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
    });
    if (!learning.available) throw new Error(learning.reason);
    const { diaryWriter, reflector, validator, auditor } = learning.components;
    await diaryWriter.write(SESSION);
    const { createEmptyPlaybook } = await import("@cass-memory/core");
    const diary = { id: "d1", sessionPath: SESSION.path, timestamp: "2026-03-10T12:00:00.000Z", agent: "codex", ...DIARY, status: "success" as const, relatedSessions: [], searchAnchors: [] };
    expect(
      await reflector.reflect({
        session: SESSION,
        diary,
        playbook: createEmptyPlaybook("2026-01-01T00:00:00.000Z"),
        history: [],
        iteration: 1,
        maxIterations: 1,
        previous: [],
      }),
    ).toEqual([]);
    expect((await validator.judge({ rule: "r", gate: { passed: true, suggestedState: "draft", reason: "", sessionCount: 0, successCount: 0, failureCount: 0, evidence: [] } })).verdict).toBe("ACCEPT");
    expect(await auditor.audit({ session: SESSION, rules: [{ id: "b-1", content: "x" }] })).toEqual({ findings: [] });

    expect(server.requests.map((r) => (r.body.response_format as { json_schema: { name: string } }).json_schema.name)).toEqual([
      "diary",
      "reflect",
      "validate",
      "audit",
    ]);
    for (const request of server.requests) {
      assertStrictSchema((request.body.response_format as { json_schema: { schema: unknown } }).json_schema.schema);
    }
  });

  it("retries a 503 from the server, then uses the answer", async () => {
    const server = await fakeServer((_, n) => (n === 1 ? { status: 503, json: { error: { message: "loading model" } } } : completion(JSON.stringify(DIARY))));
    const h = harness();
    const settings = resolveLlmSettings(testConfig({ provider: "ollama", model: "llama3" }), { OLLAMA_HOST: server.root.replace("http://", "") });
    if (!settings.available) throw new Error(settings.reason);
    const result = await generateStructured({
      model: createLanguageModel(settings),
      schema: DiaryReplySchema,
      prompt: "diary please",
      settings,
      ledger: h.ledger,
      clock: h.clock,
      logger: h.logger,
      sleep: h.sleep,
    });
    expect(result.object.tags).toEqual(["locking"]);
    expect(server.requests).toHaveLength(2);
    expect(h.sleeps).toEqual([1000]);
  });

  it("an unreachable server is a NETWORK_ERROR with a hint, not retried", async () => {
    const server = await fakeServer(() => completion("{}"));
    const closed = servers.pop();
    await new Promise<void>((resolve) => closed?.close(() => resolve()));
    const h = harness();
    const settings = resolveLlmSettings(testConfig({ provider: "ollama", model: "llama3" }), { OLLAMA_BASE_URL: server.root });
    if (!settings.available) throw new Error(settings.reason);
    let error: unknown;
    try {
      await generateStructured({
        model: createLanguageModel(settings),
        schema: DiaryReplySchema,
        prompt: "x",
        settings,
        ledger: h.ledger,
        clock: h.clock,
        logger: h.logger,
        sleep: h.sleep,
      });
    } catch (e) {
      error = e;
    }
    expect(isAppError(error) && error.code).toBe("NETWORK_ERROR");
    expect((error as { hint?: string }).hint).toContain("ollama serve");
    expect(h.sleeps).toEqual([]);
    expect(h.costEntries()).toEqual([]);
  });
});
