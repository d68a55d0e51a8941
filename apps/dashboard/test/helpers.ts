import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mutatePlaybookJournaled, runOperation, traumaAddOperation, type Bullet } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";
import { createRuntime, type Runtime } from "@cass-memory/runtime";

export const DAY = 86_400_000;

/** Variables of the user's own setup that must not leak into a test. */
const ISOLATED = ["CASS_MEMORY_HOME", "XDG_DATA_HOME", "CASS_MEMORY_VERBOSE", "CASS_CONTEXT_LOG", "CASS_PATH", "CASS_MEMORY_STORAGE", "CASS_MEMORY_STORAGE_PATH", "MCP_HTTP_TOKEN", "MCP_HTTP_HOST", "MCP_HTTP_PORT", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"];

export function testEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = { ...process.env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" };
  for (const key of ISOLATED) delete env[key];
  Object.assign(env, extra);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function testRuntime(home: string, backend: "yaml" | "sqlite"): Promise<Runtime> {
  return createRuntime({ env: testEnv(home, backend === "sqlite" ? { CASS_MEMORY_STORAGE: "sqlite" } : {}), cwd: home, stderr: () => undefined });
}

/** A fake built page: index.html, one script and one stylesheet, and a secret file beside the ui dir. */
export function fakeUiDir(root: string): string {
  const ui = join(root, "ui");
  mkdirSync(join(ui, "assets"), { recursive: true });
  writeFileSync(join(ui, "index.html"), '<!doctype html><title>dash</title><script type="module" src="/dashboard/assets/app.js"></script>');
  writeFileSync(join(ui, "assets", "app.js"), "console.log('app');");
  writeFileSync(join(ui, "assets", "app.css"), "body{}");
  writeFileSync(join(root, "secret.txt"), "do not serve me");
  return ui;
}

export interface Seed {
  bullets: Bullet[];
  now: number;
}

const ago = (now: number, days: number) => new Date(now - days * DAY).toISOString();

/**
 * A playbook covering every view: a proven helpful rule, an at-risk rule, a stale one, two
 * near-duplicates, an expiring one, a deprecated one, a conflicting pair, a rule made by a
 * reflection run (run-1), two context-log entries and a trauma.
 */
export async function seed(rt: Runtime): Promise<Seed> {
  const now = Date.now();
  const ev = (spec: Array<["helpful" | "harmful", number]>) => spec.map(([type, days]) => ({ type, timestamp: ago(now, days) }));
  const bullets = [
    createTestBullet({ id: "r-good", content: "Run the unit tests before every commit", category: "testing", maturity: "proven", state: "active", feedbackEvents: ev([["helpful", 1], ["helpful", 3], ["helpful", 40]]), helpfulCount: 3, createdAt: ago(now, 100), tags: ["ci"] }),
    createTestBullet({ id: "r-bad", content: "Always force push to main after rebasing", category: "git", maturity: "established", state: "active", feedbackEvents: ev([["harmful", 2], ["helpful", 10]]), helpfulCount: 1, harmfulCount: 1, createdAt: ago(now, 50) }),
    createTestBullet({ id: "r-stale", content: "Prefer tabs in makefiles", category: "build", feedbackEvents: ev([["helpful", 200]]), helpfulCount: 1, createdAt: ago(now, 300) }),
    createTestBullet({ id: "r-dup1", content: "Use pnpm for installing workspace packages quickly", category: "tooling", createdAt: ago(now, 5) }),
    createTestBullet({ id: "r-dup2", content: "Use pnpm for installing workspace packages quickly always", category: "tooling", createdAt: ago(now, 4) }),
    createTestBullet({ id: "r-exp", content: "The staging database moves next month", category: "ops", validTo: new Date(now + 10.5 * DAY).toISOString(), createdAt: ago(now, 3) }),
    createTestBullet({ id: "r-old", content: "Deprecated rule about yarn", category: "tooling", maturity: "deprecated", deprecated: true, createdAt: ago(now, 20) }),
    createTestBullet({ id: "r-c1", content: "Always run database migrations in the deploy script", category: "database", createdAt: ago(now, 30) }),
    createTestBullet({ id: "r-c2", content: "Never run database migrations in the deploy script", category: "database", createdAt: ago(now, 31) }),
  ];
  await rt.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(...bullets));
  // A reflection run that created one rule, journalled with its run id like `cm reflect` does.
  const runBullet = createTestBullet({ id: "r-run", content: "Cache the pnpm store between CI jobs", category: "ci", createdAt: ago(now, 0.5) });
  await mutatePlaybookJournaled(rt.deps, "global", { operation: "curate", runId: "run-1" }, (pb) => void pb.bullets.push(runBullet));
  await rt.deps.store.appendLog("global", "reflection-runs", [
    { type: "run", runId: "run-1", startedAt: ago(now, 0.5), finishedAt: ago(now, 0.5), mode: "deterministic", sessions: ["/s/one.jsonl"], deltasGenerated: 1, applied: { global: 1, repo: 0 }, bulletIds: ["r-run"], errors: [] },
  ]);
  await rt.deps.store.appendLog("global", "context-log", [
    { task: "fix the flaky test", ruleIds: ["r-good"], antiPatternIds: [], timestamp: ago(now, 5), source: "context" },
    { task: "rebase my branch", ruleIds: ["r-good", "r-bad"], antiPatternIds: [], timestamp: ago(now, 2.5), source: "context" },
  ]);
  await runOperation(traumaAddOperation, rt.deps, { pattern: String.raw`rm\s+-rf\s+/`, message: "Wiped a disk once." });
  return { bullets: [...bullets, runBullet], now };
}

/** The effective score computed here independently: Σ 0.5^(age/90) helpful − 4 × Σ same for harmful, × maturity multiplier. */
export function expectedScore(b: Bullet, at: number): number {
  let helpful = 0;
  let harmful = 0;
  for (const e of b.feedbackEvents) {
    const w = Math.pow(0.5, (at - Date.parse(e.timestamp)) / DAY / 90);
    if (e.type === "helpful") helpful += w;
    else harmful += w;
  }
  const mult = { candidate: 0.5, established: 1, proven: 1.5, deprecated: 0 }[b.maturity];
  return (helpful - 4 * harmful) * mult;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => any;
}

/** A raw HTTP request (Host and Origin under the test's control). */
export function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers }, setHost: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
    });
    req.on("error", reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}
