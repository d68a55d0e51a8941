// Reflection throughput benchmark (run after `pnpm build`): how many sessions per minute the
// learning pipeline gets through, excluding model time.
//
// Set-up: a YAML store in a temporary directory holding a generated playbook (BENCH_BULLETS,
// default 1,000 rules), and BENCH_SESSIONS (default 200) synthetic agent sessions of ~20 KB each
// served by an in-memory history source. Two runs of `reflect` over all sessions:
//  - llm: the LLM-backed components of @cass-memory/llm over the AI SDK's MockLanguageModelV3,
//    which answers instantly with a scripted diary, 3 new rules + 1 helpful mark per reflector pass
//    (maxReflectorIterations = 3 passes per session, as the model keeps finding new rules) and an
//    ACCEPT verdict; the time spent inside the mock is measured and subtracted;
//  - deterministic: the offline components (CASS_MEMORY_LLM=none).
// Every run does the full work: transcript sanitising, diary written to disk, prompts built and
// sanitised, replies parsed and validated, evidence gate, curation against the playbook under the
// lock, journal, processed log, run log. Prints a Markdown table and updates docs/benchmarks.md.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generatePlaybook } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200);
const BULLETS = Number(process.env.BENCH_BULLETS ?? 1000);

for (const pkg of ["core", "store-yaml", "llm"]) {
  if (!existsSync(join(root, `packages/${pkg}/dist/index.js`))) {
    console.error(`packages/${pkg}/dist/index.js is missing: run \`pnpm build\` first.`);
    process.exit(1);
  }
}
const load = (pkg) => import(pathToFileURL(join(root, `packages/${pkg}/dist/index.js`)).href);
const core = await load("core");
const { createYamlStore } = await load("store-yaml");
const llm = await load("llm");
const requireFromLlm = createRequire(join(root, "packages/llm/package.json"));
const { MockLanguageModelV3 } = await import(pathToFileURL(requireFromLlm.resolve("ai/test")).href);
const YAML = createRequire(join(root, "packages/store-yaml/package.json"))("yaml");

// ------------------------------------------------------------------------------------------------
// Synthetic sessions

const STACKS = ["payments API", "web dashboard", "CLI", "worker queue", "auth service", "build scripts", "mobile app", "search index"];
const ERRORS = ["TypeError: Cannot read properties of undefined (reading 'id')", "Error: connect ECONNREFUSED 127.0.0.1:5432", "error TS2345: Argument of type 'string' is not assignable", "AssertionError: expected 401 to equal 200"];

function sessionText(i) {
  const stack = STACKS[i % STACKS.length];
  const lines = [`[user] The ${stack} tests fail after the refactor in session ${i}; please fix them.`];
  for (let step = 0; step < 40; step++) {
    lines.push(`[assistant] Looking at src/${stack.replace(/\s/g, "-")}/module-${step}.ts to trace the failure (step ${step}).`);
    lines.push(`[tool] ${ERRORS[(i + step) % ERRORS.length]}\n    at handler (src/module-${step}.ts:${10 + step}:5)`);
    lines.push(`[assistant] The value is only set after the async load resolves, so the check runs too early. Updating the guard and re-running.`);
  }
  lines.push(`[assistant] All tests pass now. Lesson: In the ${stack}, await the loader before reading session ${i}'s config.`);
  lines.push("[user] Great, thanks!");
  return lines.join("\n");
}

function createHistory(count) {
  const sessions = [];
  const texts = new Map();
  for (let i = 0; i < count; i++) {
    const path = `/bench/sessions/agent/session-${String(i).padStart(5, "0")}.jsonl`;
    sessions.push({ path, agent: "claude_code", endTime: new Date(Date.UTC(2026, 10, 1) + i * 60_000).toISOString() });
    texts.set(path, sessionText(i));
  }
  return {
    name: "bench",
    async health() {
      return { available: true, name: "bench" };
    },
    async search() {
      return { hits: [] };
    },
    async listSessions() {
      return sessions;
    },
    async export(path) {
      return texts.get(path) ?? null;
    },
    async expand() {
      return null;
    },
  };
}

// ------------------------------------------------------------------------------------------------
// The mock model: answers by the schema it is asked for; the time inside it is "model time".

function createMockModel(existingId) {
  let modelMs = 0;
  let calls = 0;
  let counter = 0;
  const reply = (object) => ({
    content: [{ type: "text", text: JSON.stringify(object) }],
    finishReason: { unified: "stop", raw: undefined },
    usage: { inputTokens: { total: 2000, noCache: 2000, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 300, text: 300, reasoning: undefined } },
    warnings: [],
  });
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      const t0 = performance.now();
      calls++;
      const schema = JSON.stringify(options.responseFormat?.schema ?? "");
      let object;
      if (schema.includes('"deltas"')) {
        const n = counter++;
        object = {
          deltas: [
            ...[0, 1, 2].map((k) => ({
              type: "add",
              bullet: { content: `When module ${n}-${k} of the service fails after a refactor, await its loader ${n * 3 + k} before reading config`, category: "debugging", kind: null, type: null, isNegative: null, scope: null, workspace: null, searchPointer: null, tags: null },
              reason: "seen in the session",
              sourceSession: null,
            })),
            { type: "helpful", bulletId: existingId, sourceSession: null, context: null },
          ],
        };
      } else if (schema.includes('"verdict"')) {
        object = { verdict: "ACCEPT", confidence: 0.9, reason: "consistent with history", supporting: [], contradicting: [], suggestedRefinement: null };
      } else {
        object = { status: "success", accomplishments: ["Fixed the failing tests"], decisions: ["Guard the async load"], challenges: ["Value set after async load"], preferences: [], keyLearnings: ["Await loaders before reading config"], tags: ["testing"] };
      }
      const result = reply(object);
      modelMs += performance.now() - t0;
      return result;
    },
  });
  return { model, stats: () => ({ modelMs, calls }) };
}

// ------------------------------------------------------------------------------------------------

const logger = { debug() {}, info() {}, warn() {}, error() {} };
const clock = { now: () => new Date() };

async function run(mode) {
  const dir = mkdtempSync(join(tmpdir(), "cm-reflect-bench-"));
  try {
    const playbook = generatePlaybook(BULLETS);
    writeFileSync(join(dir, "playbook.yaml"), YAML.stringify(playbook));
    const existingId = playbook.bullets[0].id;
    const store = createYamlStore({ globalDir: dir, repoDir: null, logger });
    const config = core.defaultConfig();
    const deterministic = {
      diaryWriter: core.createDeterministicDiaryWriter(),
      reflector: core.createDeterministicReflector(),
      validator: core.createDeterministicValidator(),
    };
    const mock = createMockModel(existingId);
    let learning;
    if (mode === "llm") {
      const created = llm.createLlmLearning({ config: { ...config, provider: "openai", model: "mock", budget: { ...config.budget, dailyLimit: -1, monthlyLimit: -1 } }, env: {}, ledger: store.costs, clock, logger, model: mock.model });
      if (!created.available) throw new Error(created.reason);
      learning = { mode: "llm", model: { provider: "mock", model: "mock" }, ...created.components };
    } else {
      learning = { mode: "deterministic", ...deterministic };
    }
    const deps = {
      store,
      episodic: createHistory(SESSIONS),
      clock,
      ids: { bulletId: () => `b-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`, hex: (n) => Math.random().toString(16).slice(2, 2 + n).padEnd(n, "0") },
      logger,
      config,
      cliName: "cm",
      files: { exists: async () => false, readText: async () => null },
      learning,
    };
    const rss0 = process.memoryUsage().rss;
    const t0 = performance.now();
    const result = await core.runOperation(core.reflectOperation, deps, { maxSessions: SESSIONS, days: 36500 });
    const wall = performance.now() - t0;
    const { modelMs, calls } = mock.stats();
    if (result.errors.length > 0) throw new Error(`reflect reported errors: ${result.errors.slice(0, 3).join("; ")}`);
    const ours = wall - modelMs;
    const after = (await store.readPlaybook("global")).bullets.length;
    return {
      mode,
      sessions: result.sessionsProcessed,
      added: after - BULLETS,
      calls,
      wallMs: wall,
      modelMs,
      perMinute: (result.sessionsProcessed / ours) * 60_000,
      msPerSession: ours / result.sessionsProcessed,
      rssMiB: Math.max(rss0, process.memoryUsage().rss) / 1048576,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows = [];
for (const mode of ["llm", "deterministic"]) {
  const r = await run(mode);
  rows.push(r);
  console.error(`${mode}: ${r.sessions} sessions in ${(r.wallMs / 1000).toFixed(1)} s (model ${r.modelMs.toFixed(0)} ms) → ${r.perMinute.toFixed(0)} sessions/min`);
}

const fmt = (n, d = 0) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const table = [
  `Reflection over ${SESSIONS} sessions of ~${fmt(sessionText(0).length / 1024, 0)} KB into a ${fmt(BULLETS)}-rule YAML playbook (${cpus().length} cores, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}):`,
  "",
  "| components | sessions | rules added | model calls | wall | model time | ours per session | sessions / min (excl. model) | RSS |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.mode === "llm" ? "LLM (mock model)" : "deterministic"} | ${r.sessions} | ${r.added} | ${r.calls} | ${fmt(r.wallMs / 1000, 1)} s | ${fmt(r.modelMs)} ms | ${fmt(r.msPerSession, 1)} ms | ${fmt(r.perMinute)} | ${fmt(r.rssMiB)} MiB |`,
  ),
].join("\n");
console.log(table);

updateBenchmarkDoc("reflect", "Reflection throughput", table);
