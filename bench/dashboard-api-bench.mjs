// The dashboard's JSON API at 10,000 rules, YAML and SQLite stores: server time per endpoint (median
// of 5 requests after one warm-up, over HTTP on 127.0.0.1) and response size. The page's first paint
// is measured by bench/dashboard-bench.mjs. Writes its section of docs/benchmarks.md (--no-doc: print only).
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const noDoc = process.argv.includes("--no-doc");
const RULES = 10_000;
const RUNS = 5;
const dashboardDir = fileURLToPath(new URL("../apps/dashboard/", import.meta.url));
// ESM entries of the workspace packages the dashboard depends on (the bench runs from the repository root).
const { createRuntime } = await import(join(dashboardDir, "node_modules/@cass-memory/runtime/dist/index.js"));
const { createTestBullet } = await import(join(dashboardDir, "node_modules/@cass-memory/core/dist/testing.js"));
const { startDashboardServer } = await import(join(dashboardDir, "dist/index.js"));

const WORDS = "test build deploy lint cache docker pnpm git rebase migrate schema api auth token log retry queue worker cron index query".split(" ");
const ENDPOINTS = [
  ["overview", "overview"],
  ["rules (first page of 50, by score)", "rules"],
  ["rules?q=docker&sort=harmful", "rules?q=docker&sort=harmful"],
  ["rules, last page of 500", "rules?offset=9500&limit=500"],
  ["rules/<id> (score series, journal)", "rules/b-4242"],
  ["risk", "risk"],
  ["duplicates (cached after the first)", "duplicates"],
  ["runs", "runs"],
  ["context-log", "context-log"],
];

/** 10,000 rules with 0-5 feedback events each, spread over 400 days, in 10 categories. */
function rules(now) {
  return Array.from({ length: RULES }, (_, i) =>
    createTestBullet({
      id: `b-${i}`,
      content: `Rule ${i}: ${WORDS[i % 23]} ${WORDS[(i * 7) % 23]} ${WORDS[(i * 13) % 23]} before ${WORDS[(i * 3) % 23]} number ${i}`,
      category: WORDS[i % 10],
      feedbackEvents: Array.from({ length: i % 6 }, (_, k) => ({
        type: k % 4 === 3 ? "harmful" : "helpful",
        timestamp: new Date(now - (k * 17 + (i % 50)) * 86_400_000).toISOString(),
      })),
      createdAt: new Date(now - (i % 400) * 86_400_000).toISOString(),
    }),
  );
}

async function measure(backend) {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "cm-dash-api-")));
  const env = { ...process.env, HOME: home, CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "none", ...(backend === "sqlite" ? { CASS_MEMORY_STORAGE: "sqlite" } : { CASS_MEMORY_STORAGE: "yaml" }) };
  // Like `cm dashboard` (through the MCP server context): parsed playbooks are kept while unchanged.
  const rt = await createRuntime({ env, cwd: home, stderr: () => undefined, memoizeReads: true });
  await rt.deps.store.mutatePlaybook("global", (pb) => void pb.bullets.push(...rules(Date.now())));
  const server = await startDashboardServer({ deps: rt.deps, uiDir: join(dashboardDir, "dist/ui"), log: () => undefined });
  const headers = { authorization: `Bearer ${server.token}` };
  const results = new Map();
  try {
    for (const [label, path] of ENDPOINTS) {
      const times = [];
      let bytes = 0;
      for (let r = 0; r <= RUNS; r++) {
        const t = performance.now();
        const res = await fetch(`${server.baseUrl}api/${path}`, { headers });
        bytes = (await res.arrayBuffer()).byteLength;
        if (res.status !== 200) throw new Error(`${path}: HTTP ${res.status}`);
        if (r > 0) times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      results.set(label, { ms: times[Math.floor(times.length / 2)], bytes });
    }
    const marks = [];
    for (let r = 0; r < 3; r++) {
      const t = performance.now();
      const res = await fetch(`${server.baseUrl}api/actions/mark`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ id: `b-${r}`, type: "helpful", confirm: true }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`mark: HTTP ${res.status}`);
      marks.push(performance.now() - t);
    }
    marks.sort((a, b) => a - b);
    results.set("actions/mark (write + journal)", { ms: marks[1], bytes: 0 });
  } finally {
    await server.close();
    rt.close();
    rmSync(home, { recursive: true, force: true });
  }
  return results;
}

const yaml = await measure("yaml");
const sqlite = await measure("sqlite");
const kb = (b) => (b === 0 ? "-" : b < 1024 ? `${b} B` : `${(b / 1024).toFixed(0)} KB`);
const lines = ["| endpoint | YAML store | SQLite store | response |", "|---|---:|---:|---:|"];
for (const [label, y] of yaml) lines.push(`| ${label} | ${y.ms.toFixed(0)} ms | ${sqlite.get(label).ms.toFixed(0)} ms | ${kb(y.bytes)} |`);
const machine = `${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
const table =
  `${lines.join("\n")}\n\n` +
  `Median of ${RUNS} requests (after one warm-up) per endpoint, ${RULES.toLocaleString("en")} rules, measured ${new Date().toISOString().slice(0, 10)} on ${machine}; ` +
  `load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (the machine is shared). ` +
  "Every read endpoint reads the merged playbook once and computes with core's scoring; lists are paginated on the server. " +
  "A mark is the operation of `cm mark` (the store's locked read-modify-write plus the journal); the YAML store rewrites the whole playbook file for it. `node bench/dashboard-api-bench.mjs` (after `pnpm --filter @cass-memory/dashboard... build`).";
console.log(table);
if (!noDoc) updateBenchmarkDoc("dashboard-api", "Dashboard API (10,000 rules)", table);
