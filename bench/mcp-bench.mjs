// MCP latency benchmark (run after `pnpm build`): warm `cm_context` over Streamable HTTP.
//
// For each playbook size (BENCH_SIZES, default 1,000 and 10,000 rules, written in the original's
// YAML format into a temporary HOME), starts the real server (`cm-mcp --http` on a free port),
// warms it up, then sends BENCH_CALLS (default 200) sequential `tools/call cm_context` requests as
// raw JSON-RPC POSTs — what an agent's client does — and reports p50/p95/max of the round trip.
// No history source and no LLM (CASS_MEMORY_EPISODIC=none, CASS_MEMORY_LLM=none), so the numbers
// are the server's own work. Prints a Markdown table and updates docs/benchmarks.md.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generatePlaybook } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const BIN = join(root, "apps/mcp/dist/cm-mcp.js");
const SIZES = (process.env.BENCH_SIZES ?? "1000,10000").split(",").map(Number);
const CALLS = Number(process.env.BENCH_CALLS ?? 200);
const WARMUP = 20;
const TASK = "fix typescript error handling in the auth service after the 401 bug";

if (!existsSync(BIN)) {
  console.error("apps/mcp/dist/cm-mcp.js is missing: run `pnpm build` first.");
  process.exit(1);
}
const YAML = createRequire(join(root, "packages/store-yaml/package.json"))("yaml");

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

async function startServer(home) {
  const port = await freePort();
  const env = { ...process.env, HOME: home, CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none" };
  for (const key of Object.keys(env)) if (key.startsWith("MCP_")) delete env[key];
  const child = spawn(process.execPath, [BIN, "--http", "--port", String(port)], { cwd: home, env, stdio: ["ignore", "ignore", "pipe"] });
  await new Promise((resolve, reject) => {
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d.toString();
      if (stderr.includes("listening on")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`cm-mcp exited with ${code}: ${stderr}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, child };
}

let nextId = 1;
async function callContext(url) {
  const body = JSON.stringify({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name: "cm_context", arguments: { task: TASK } } });
  const t0 = performance.now();
  const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body });
  const json = await response.json();
  const ms = performance.now() - t0;
  if (json.error || json.result?.isError) throw new Error(`cm_context failed: ${JSON.stringify(json).slice(0, 300)}`);
  return { ms, rules: json.result.structuredContent.relevantBullets.length };
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

const rows = [];
for (const size of SIZES) {
  const home = mkdtempSync(join(tmpdir(), "cm-mcp-bench-"));
  try {
    mkdirSync(join(home, ".cass-memory"), { recursive: true });
    writeFileSync(join(home, ".cass-memory", "playbook.yaml"), YAML.stringify(generatePlaybook(size)));
    const { url, child } = await startServer(home);
    try {
      const first = await callContext(url);
      for (let i = 1; i < WARMUP; i++) await callContext(url);
      const times = [];
      let rules = 0;
      for (let i = 0; i < CALLS; i++) {
        const r = await callContext(url);
        times.push(r.ms);
        rules = r.rules;
      }
      times.sort((a, b) => a - b);
      rows.push({ size, first: first.ms, p50: percentile(times, 50), p95: percentile(times, 95), max: times[times.length - 1], rules });
      console.error(`${size} rules: first ${first.ms.toFixed(0)} ms, p50 ${percentile(times, 50).toFixed(1)} ms, p95 ${percentile(times, 95).toFixed(1)} ms`);
    } finally {
      child.kill("SIGTERM");
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const fmt = (n, d = 1) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores, ${fmt(totalmem() / 2 ** 30, 0)} GiB, Node ${process.version}: \`cm-mcp --http\`, ${CALLS} sequential \`tools/call cm_context\` POSTs after ${WARMUP} warm-up calls, no history, no LLM.`,
  "",
  "| bullets | first call (cold) | p50 | p95 | max | rules returned |",
  "|---:|---:|---:|---:|---:|---:|",
  ...rows.map((r) => `| ${r.size.toLocaleString("en-US")} | ${fmt(r.first, 0)} ms | **${fmt(r.p50)} ms** | ${fmt(r.p95)} ms | ${fmt(r.max)} ms | ${r.rules} |`),
].join("\n");
console.log(table);

updateBenchmarkDoc("mcp", "MCP server: warm `cm_context` over HTTP", table);
