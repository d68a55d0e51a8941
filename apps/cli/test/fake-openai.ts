import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fake OpenAI-compatible server on 127.0.0.1 for end-to-end tests of the LLM path: it answers
 * `POST /v1/chat/completions` like Ollama or vLLM would, with replies scripted per component
 * (diary, reflector, validator, auditor — told apart by the JSON schema the client asks for, or
 * by the prompt when the client falls back to plain text). Every request is recorded.
 */

export type Component = "diary" | "reflector" | "validator" | "auditor";

/** A scripted reply: an object (sent as JSON text), raw text, or an HTTP error. */
export type Reply = { json: unknown } | { text: string } | { status: number; body?: unknown };

export interface FakeOpenAI {
  url: string;
  requests: Array<{ component: Component; body: Record<string, unknown> }>;
  /** Replies per component, used in order; the last one repeats. */
  script: Partial<Record<Component, Reply[]>>;
  close(): Promise<void>;
}

function componentOf(body: Record<string, unknown>): Component {
  const format = body.response_format as { json_schema?: { schema?: { properties?: Record<string, unknown> } } } | undefined;
  const keys = Object.keys(format?.json_schema?.schema?.properties ?? {});
  const has = (k: string): boolean => keys.includes(k);
  if (keys.length > 0) {
    if (has("deltas")) return "reflector";
    if (has("verdict")) return "validator";
    if (has("results") || has("findings")) return "auditor";
    return "diary";
  }
  const messages = JSON.stringify(body.messages ?? "");
  if (messages.includes('\\"deltas\\"') || messages.includes("deltas")) return "reflector";
  if (messages.includes("verdict")) return "validator";
  if (messages.includes("ruleId")) return "auditor";
  return "diary";
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += String(chunk);
  return text;
}

export async function startFakeOpenAI(script: FakeOpenAI["script"] = {}): Promise<FakeOpenAI> {
  const requests: FakeOpenAI["requests"] = [];
  const used: Partial<Record<Component, number>> = {};
  const fake: FakeOpenAI = { url: "", requests, script, close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    const raw = await readBody(req);
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    const body = JSON.parse(raw) as Record<string, unknown>;
    const component = componentOf(body);
    requests.push({ component, body });
    const replies = fake.script[component] ?? [];
    const index = Math.min(used[component] ?? 0, Math.max(0, replies.length - 1));
    used[component] = (used[component] ?? 0) + 1;
    const reply = replies[index];
    if (reply === undefined) {
      res.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `nothing scripted for ${component}` } }));
      return;
    }
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" }).end(JSON.stringify(reply.body ?? { error: { message: `HTTP ${reply.status}` } }));
      return;
    }
    const content = "json" in reply ? JSON.stringify(reply.json) : reply.text;
    res.writeHead(200, { "content-type": "application/json" }).end(
      JSON.stringify({
        id: `chatcmpl-${requests.length}`,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model: String(body.model ?? "test-model"),
        choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500 },
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}/v1`;
  fake.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return fake;
}
