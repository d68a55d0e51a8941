import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { BIN, assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
let child: ChildProcess | null = null;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(async () => {
  if (child !== null && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  child = null;
  cleanup();
});

const baseEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("MCP_") && !k.startsWith("CASS_") && k !== "DISPLAY" && k !== "WAYLAND_DISPLAY") env[k] = v;
  }
  return { ...env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none", ...extra };
};

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** Starts the built cm with these arguments and resolves once `ready(stdout, stderr)` holds. */
async function start(args: string[], ready: (out: string, err: string) => boolean, env: Record<string, string> = {}): Promise<{ out: () => string; err: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }> {
  const proc = spawn(process.execPath, [BIN, ...args], { cwd: home, env: baseEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  child = proc;
  let out = "";
  let err = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.once("exit", (code, signal) => resolve({ code, signal })));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (ready(out, err)) resolve();
    };
    proc.stdout!.on("data", (d: Buffer) => ((out += d.toString()), check()));
    proc.stderr!.on("data", (d: Buffer) => ((err += d.toString()), check()));
    void exited.then(({ code }) => reject(new Error(`cm ${args.join(" ")} exited with ${code}\n${out}\n${err}`)));
  });
  return { out: () => out, err: () => err, exited };
}

function seed(): string {
  expect(cm(["init", "--json"], { home }).code).toBe(0);
  const add = cm(["playbook", "add", "Run the unit tests before every commit", "--category", "testing", "--json"], { home });
  expect(add.code, add.stderr).toBe(0);
  return add.json().data.bullet.id as string;
}

describe("cm dashboard", () => {
  it("--json --no-open prints {url, host, port} with the token in the fragment, serves until SIGTERM", async () => {
    const id = seed();
    const run = await start(["dashboard", "--no-open", "--json"], (out) => out.includes('"port"') && out.trimEnd().endsWith("}"));
    const envelope = JSON.parse(run.out());
    expect(envelope.success).toBe(true);
    const { url, host, port } = envelope.data;
    expect(host).toBe("127.0.0.1");
    expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/dashboard/#token=[A-Za-z0-9_-]{40,}$`));
    const token = decodeURIComponent(url.split("#token=")[1]);
    const base = url.split("#")[0];

    const page = await fetch(base);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");
    expect((await fetch(`${base}api/overview`)).status).toBe(401);
    const overview = await fetch(`${base}api/overview`, { headers: { authorization: `Bearer ${token}` } });
    expect(overview.status).toBe(200);
    const data = ((await overview.json()) as any).data;
    expect(data.counts.total).toBe(1);
    expect(data.store.backend).toBe("yaml");

    // An action through the page's API is in the store and the journal, as with the CLI.
    const mark = await fetch(`${base}api/actions/mark`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ id, type: "helpful", confirm: true }),
    });
    expect(mark.status).toBe(200);
    const got = cm(["playbook", "get", id, "--json"], { home });
    expect(got.json().data.bullet?.helpfulCount ?? got.json().data.helpfulCount).toBe(1);
    const history = cm(["history", id, "--json"], { home }).json().data.events;
    expect(history.at(-1)).toMatchObject({ operation: "feedback", actor: "dashboard" });

    child!.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 143, signal: null });
  });

  it("prints the URL (no display: no browser), a fixed --port and --token", async () => {
    seed();
    const port = await freePort();
    const run = await start(["dashboard", "--port", String(port), "--token", "my-own-token-123"], (out) => out.includes("Ctrl-C"));
    expect(run.out()).toContain(`Dashboard: http://127.0.0.1:${port}/dashboard/#token=my-own-token-123`);
    expect(run.out()).toContain("Open the URL above");
    const res = await fetch(`http://127.0.0.1:${port}/dashboard/api/rules`, { headers: { authorization: "Bearer my-own-token-123" } });
    expect(((await res.json()) as any).data.total).toBe(1);
  });

  it("refuses a bad port or a short token (exit 2)", () => {
    seed();
    const bad = cm(["dashboard", "--port", "70000", "--json"], { home });
    expect(bad.code).toBe(2);
    expect(bad.json().error.code).toBe("INVALID_INPUT");
    expect(cm(["dashboard", "--token", "abc", "--json"], { home }).code).toBe(2);
  });
});

describe("cm serve mounts the dashboard at /dashboard", () => {
  it("without a token on loopback: page and API open; MCP still answers on /", async () => {
    seed();
    const port = await freePort();
    await start(["serve", "--port", String(port)], (_out, err) => err.includes("Dashboard:"));
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/dashboard/`)).status).toBe(200);
    const overview = await fetch(`${base}/dashboard/api/overview`);
    expect(overview.status).toBe(200);
    expect(((await overview.json()) as any).data.counts.total).toBe(1);
    const foreign = await fetch(`${base}/dashboard/api/overview`, { headers: { origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
    const mcp = await fetch(`${base}/`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }),
    });
    expect(mcp.status).toBe(200);
    expect(((await mcp.json()) as any).result.serverInfo.name).toBe("cass-memory");
  });

  it("with MCP_HTTP_TOKEN: the API needs that token", async () => {
    seed();
    const port = await freePort();
    const run = await start(["serve", "--port", String(port)], (_out, err) => err.includes("Dashboard:"), { MCP_HTTP_TOKEN: "serve-token-abcdef" });
    expect(run.err()).toContain("#token=<MCP_HTTP_TOKEN>");
    const base = `http://127.0.0.1:${port}/dashboard`;
    expect((await fetch(`${base}/api/risk`)).status).toBe(401);
    expect((await fetch(`${base}/api/risk`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
    expect((await fetch(`${base}/api/risk`, { headers: { authorization: "Bearer serve-token-abcdef" } })).status).toBe(200);
    // The page itself carries no data and needs no token.
    expect((await fetch(`${base}/`)).status).toBe(200);
  });
});

describe("cm playbook pin / unpin / category", () => {
  it("pins with a reason, unpins and recategorises, journalled", () => {
    const id = seed();
    const pin = cm(["playbook", "pin", id, "--reason", "team policy", "--json"], { home });
    expect(pin.code, pin.stderr).toBe(0);
    expect(pin.json().data).toEqual({ bulletId: id, pinned: true, pinnedReason: "team policy", changed: true });
    expect(cm(["playbook", "pin", id], { home }).stdout).toContain("already pinned");
    const unpin = cm(["playbook", "unpin", id, "--json"], { home });
    expect(unpin.json().data).toEqual({ bulletId: id, pinned: false, changed: true });
    const cat = cm(["playbook", "category", id, "ci", "--json"], { home });
    expect(cat.json().data).toEqual({ bulletId: id, previousCategory: "testing", category: "ci", changed: true });
    const list = cm(["playbook", "list", "--json"], { home }).json().data.bullets;
    expect(list[0]).toMatchObject({ id, category: "ci", pinned: false });
    const ops = cm(["history", id, "--json"], { home }).json().data.events.map((e: { operation: string }) => e.operation);
    expect(ops).toEqual(["add", "update", "update", "update"]);
    const missing = cm(["playbook", "pin", "b-nope", "--json"], { home });
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("BULLET_NOT_FOUND");
    expect(cm(["playbook", "category", id, " ", "--json"], { home }).code).toBe(2);
  });
});
