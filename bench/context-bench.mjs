// `pnpm bench`: measures `cm context "<task>" --json` as a whole process (wall time and peak RSS,
// median of several runs) and the in-process ranking, on playbooks of 1,000 and 10,000 bullets in
// the original cm's format. Results are printed and written to docs/benchmarks.md.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { cpus, freemem, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generatePlaybookYaml } from "./generate-playbook.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const probe = pathToFileURL(join(root, "bench/rss-probe.mjs")).href;
const SIZES = (process.env.BENCH_SIZES ?? "1000,10000").split(",").map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const TASK = "fix typescript error handling in the auth service after the 401 bug";

if (!existsSync(cli)) {
  console.error("apps/cli/dist/cm.js is missing: run `pnpm build` first (pnpm bench does).");
  process.exit(1);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function runCm(home, rssFile, args) {
  const start = performance.now();
  const r = spawnSync(process.execPath, ["--import", probe, cli, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, BENCH_RSS_FILE: rssFile, NO_COLOR: "1" },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallMs = performance.now() - start;
  if (r.status !== 0) throw new Error(`cm ${args[0]} failed (${r.status}): ${r.stderr}\n${r.stdout.slice(0, 500)}`);
  const env = JSON.parse(r.stdout);
  const rssMiB = Number(readFileSync(rssFile, "utf8")) / 1024;
  return { wallMs, rssMiB, data: env.data };
}

function runContext(home, rssFile) {
  const r = runCm(home, rssFile, ["context", TASK, "--json"]);
  return { ...r, hits: r.data.relevantBullets.length };
}

async function inProcessRanking(yamlText) {
  const core = await import(pathToFileURL(join(root, "packages/core/dist/index.js")).href);
  const store = await import(pathToFileURL(join(root, "packages/store-yaml/dist/index.js")).href);
  const t0 = performance.now();
  const playbook = store.decodePlaybook(yamlText, "bench.yaml");
  const parseMs = performance.now() - t0;
  const ours = store.encodePlaybook(playbook);
  const t1 = performance.now();
  store.decodePlaybook(ours, "bench.yaml");
  const ownParseMs = performance.now() - t1;
  const config = core.defaultConfig();
  const now = new Date("2026-11-23T00:00:00Z");
  const times = [];
  let kept = 0;
  for (let i = 0; i < 15; i++) {
    const s = performance.now();
    const r = core.rankBulletsForTask(playbook.bullets, TASK, { now, config, limit: 50, minRelevance: config.minRelevanceScore });
    times.push(performance.now() - s);
    kept = r.rules.length;
  }
  return { parseMs, ownParseMs, rankMs: median(times), kept };
}

const rows = [];
for (const size of SIZES) {
  const home = mkdtempSync(join(tmpdir(), `cm-bench-${size}-`));
  try {
    const dir = join(home, ".cass-memory");
    mkdirSync(dir, { recursive: true });
    const yamlText = generatePlaybookYaml(size);
    writeFileSync(join(dir, "playbook.yaml"), yamlText);
    const rssFile = join(home, "rss.txt");
    const cold = runContext(home, rssFile); // first run: YAML parse, then the parse cache is written
    const warm = [];
    for (let i = 0; i < RUNS; i++) warm.push(runContext(home, rssFile));
    // A mutation rewrites the file in our own YAML layout; then a read without the parse cache.
    const firstId = /- id: (\S+)/.exec(yamlText)[1];
    const mark = runCm(home, rssFile, ["mark", firstId, "--helpful", "--json"]);
    rmSync(join(dir, ".cache"), { recursive: true, force: true });
    const coldOwn = runContext(home, rssFile);
    const ranking = await inProcessRanking(yamlText);
    rows.push({
      size,
      yamlMiB: Buffer.byteLength(yamlText) / 1024 / 1024,
      coldMs: cold.wallMs,
      coldRss: cold.rssMiB,
      coldOwnMs: coldOwn.wallMs,
      coldOwnRss: coldOwn.rssMiB,
      markMs: mark.wallMs,
      markRss: mark.rssMiB,
      warmMs: median(warm.map((w) => w.wallMs)),
      warmRss: median(warm.map((w) => w.rssMiB)),
      maxWarmRss: Math.max(...warm.map((w) => w.rssMiB)),
      hits: warm[0].hits,
      ...ranking,
    });
    console.error(`bench: ${size} bullets done`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

const f = (n, d = 0) => n.toFixed(d);
function nodeBaseline() {
  const ts = [];
  for (let i = 0; i < 15; i++) {
    const t = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    ts.push(performance.now() - t);
  }
  return median(ts);
}
const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${f(totalmem() / 2 ** 30)} GiB RAM (${f(freemem() / 2 ** 30)} free), Node ${process.version}, ${process.platform}`;
const table = [
  `| bullets | YAML size | \`cm context\` warm, median of ${RUNS} | peak RSS warm, median (max) | first read of a file written by the original cm | first read of a file written by us | \`cm mark\` (read, lock, rewrite) | in-process: parse original YAML / our YAML | in-process ranking (median) | rules returned |`,
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.size.toLocaleString("en")} | ${f(r.yamlMiB, 1)} MiB | **${f(r.warmMs)} ms** | **${f(r.warmRss)} MiB** (${f(r.maxWarmRss)}) | ${f(r.coldMs)} ms, ${f(r.coldRss)} MiB | ${f(r.coldOwnMs)} ms, ${f(r.coldOwnRss)} MiB | ${f(r.markMs)} ms, ${f(r.markRss)} MiB | ${f(r.parseMs)} ms / ${f(r.ownParseMs)} ms | ${f(r.rankMs, 1)} ms | ${r.hits} |`,
  ),
].join("\n");

const section = [
  "<!-- bench:context:start -->",
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; \`node -e 0\` alone: ${f(nodeBaseline())} ms (median).`,
  `Task: \`cm context "${TASK}" --json\`, no cass installed (history degraded), playbook in the global layer only.`,
  "",
  table,
  "<!-- bench:context:end -->",
].join("\n");

const docPath = join(root, "docs/benchmarks.md");
let doc = existsSync(docPath) ? readFileSync(docPath, "utf8") : "# Benchmarks\n\n<!-- bench:context:start -->\n<!-- bench:context:end -->\n";
doc = doc.replace(/<!-- bench:context:start -->[\s\S]*?<!-- bench:context:end -->/, section);
writeFileSync(docPath, doc);
process.stdout.write(`${section}\n`);
