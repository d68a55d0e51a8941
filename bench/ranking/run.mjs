// In-process ranking time (`node bench/ranking/run.mjs`, after `pnpm build`): the shipped
// `rankBulletsForTask` from packages/core/dist on synthetic playbooks of 1,000 / 10,000 / 100,000
// bullets (bench/generate-playbook.mjs), reporting separately
//   - index build: `lexicalIndexFor` on texts it has not seen (what the first `cm context` of a CLI
//     process, or the first MCP call after a rule's text changed, pays), median of several builds;
//   - re-read: new bullet objects with unchanged texts (the text index is reused);
//   - warm query: `rankBulletsForTask` with the index built, median and p95 over every run of every
//     task in TASKS (short, paraphrase, agent-style long, no match), limit 50.
// Bullets are deep-frozen, as both stores hand them out. Writes docs/benchmarks.md between the
// bench:ranking markers unless --no-doc.
//
// Environment: RANKING_SIZES ("1000,10000,100000"), RANKING_RUNS (warm runs per task and size,
// default 40), RANKING_BUILDS (builds per size, default 5; 3 at 100,000).
import { existsSync, readFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generatePlaybook } from "../generate-playbook.mjs";
import { updateBenchmarkDoc } from "../update-doc.mjs";

const args = process.argv.slice(2);
const SIZES = (process.env.RANKING_SIZES ?? "1000,10000,100000").split(",").map(Number);
const RUNS = Number(process.env.RANKING_RUNS ?? 40);
const BUILDS = process.env.RANKING_BUILDS === undefined ? undefined : Number(process.env.RANKING_BUILDS);
const NOW = new Date("2026-11-23T00:00:00Z");

/** Tasks timed at every size: one of each kind `cm context` sees (labels for the table). */
const TASK_LABELS = ["short", "paraphrase", "long (log)", "no match"];
const TASKS = [
  "fix typescript error handling in the auth service after the 401 bug",
  "users keep getting logged out after every deploy",
  [
    "The pricing API dies roughly every six hours:",
    "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
    " 1: 0xb8a2a0 node::Abort() [node]",
    "src/lib/quote-cache.ts has const quotes = new Map<string, Quote>() and entries are only ever added.",
    "Should we set NODE_OPTIONS=--max-old-space-size=8192 in the deployment at 2025-11-20 09:12:03?",
  ].join("\n"),
  "qwxz frobnicate the zyxx",
];

const root = fileURLToPath(new URL("../..", import.meta.url));
const corePath = `${root}packages/core/dist/index.js`;
if (!existsSync(corePath)) throw new Error("packages/core/dist is missing: run `pnpm build` first.");
const core = await import(pathToFileURL(corePath).href);
const config = core.defaultConfig();

function deepFreeze(value) {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** A small unrelated playbook. */
const OTHER = [deepFreeze(core.BulletSchema.parse({ ...generatePlaybook(1).bullets[0], id: "b-other", content: "An unrelated rule about nothing" }))];

/** Fresh bullet objects (new identities). */
const freshBullets = (size) => generatePlaybook(size).bullets.map((b) => deepFreeze(core.BulletSchema.parse(b)));

const rows = [];
let firstBuild;
for (const size of SIZES) {
  const builds = BUILDS ?? (size >= 100_000 ? 3 : 5);
  const buildTimes = [];
  let bullets;
  for (let i = 0; i < builds; i++) {
    // The cache reuses an index for bullets with the same texts; index something else first.
    core.lexicalIndexFor(OTHER);
    bullets = freshBullets(size);
    const start = performance.now();
    core.lexicalIndexFor(bullets);
    buildTimes.push(performance.now() - start);
    firstBuild ??= { size, ms: buildTimes[0] };
  }
  // A store re-reading an unchanged playbook (e.g. after a feedback mark): new objects, same texts.
  const rereadTimes = [];
  for (let i = 0; i < 3; i++) {
    const reread = freshBullets(size);
    const start = performance.now();
    core.lexicalIndexFor(reread);
    rereadTimes.push(performance.now() - start);
    bullets = reread;
  }
  const opts = { now: NOW, config, limit: 50, minRelevance: config.minRelevanceScore };
  const times = [];
  const perTask = [];
  const returned = [];
  for (const task of TASKS) {
    for (let i = 0; i < 5; i++) core.rankBulletsForTask(bullets, task, opts);
    let n = 0;
    const own = [];
    for (let i = 0; i < RUNS; i++) {
      const start = performance.now();
      n = core.rankBulletsForTask(bullets, task, opts).ranked.length;
      own.push(performance.now() - start);
    }
    times.push(...own);
    perTask.push(median(own));
    returned.push(n);
  }
  times.sort((a, b) => a - b);
  rows.push({
    size,
    build: median(buildTimes),
    reread: median(rereadTimes),
    builds,
    p50: quantile(times, 0.5),
    perTask,
    p95: quantile(times, 0.95),
    min: times[0],
    returned,
    heapMiB: process.memoryUsage().heapUsed / 2 ** 20,
  });
  console.error(`timed ${size} bullets`);
}

// Build cost on realistic rule texts: the synthetic playbook repeats 32 short texts, which makes
// the stemmer's cache unusually effective. Here the 295 rules of the relevance benchmark (longer,
// varied, across stacks) are tiled to 10,000 bullets, each copy with a distinguishing word.
const realRules = JSON.parse(readFileSync(new URL("../relevance/rules.json", import.meta.url), "utf8"));
const REAL_SIZE = 10_000;
const realTimes = [];
for (let i = 0; i < 3; i++) {
  core.lexicalIndexFor(OTHER);
  const template = generatePlaybook(1).bullets[0];
  const bullets = Array.from({ length: REAL_SIZE }, (_, j) => {
    const r = realRules[j % realRules.length];
    const copy = Math.floor(j / realRules.length);
    return deepFreeze(core.BulletSchema.parse({ ...template, id: `${r.id}-${copy}-${i}`, content: `${r.content} (variant ${copy}${i})`, category: r.category, tags: r.tags }));
  });
  const start = performance.now();
  core.lexicalIndexFor(bullets);
  realTimes.push(performance.now() - start);
}
const realBuild = median(realTimes);
console.log(`\nIndex build on ${REAL_SIZE.toLocaleString("en-US")} realistic rules (bench/relevance rules tiled): ${ms(realBuild)} ms (median of ${realTimes.length})`);

const table = [
  `| bullets | index build (median of builds) | same texts re-read | warm query p50, all tasks | p95 | median per task: ${TASK_LABELS.join(" / ")} | rules returned per task | heap after |`,
  "|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.size.toLocaleString("en-US")} | ${ms(r.build)} ms (${r.builds}) | ${ms(r.reread)} ms | **${ms(r.p50)} ms** | ${ms(r.p95)} ms | ${r.perTask.map(ms).join(" / ")} ms | ${r.returned.join(" / ")} | ${r.heapMiB.toFixed(0)} MiB |`,
  ),
].join("\n");

console.log(`\nIn-process ranking (${TASKS.length} tasks × ${RUNS} warm runs per size, limit 50)\n`);
console.log(table);

if (!args.includes("--no-doc")) {
  const date = new Date().toISOString().slice(0, 10);
  const load = loadavg().map((x) => x.toFixed(1)).join(" / ");
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const section = [
    `Measured ${date} on ${machine}; load average when the run ended ${load} (the machine is shared with other jobs, so times include waiting for a core; p95 mostly measures that).`,
    "",
    table,
    "",
    "`rankBulletsForTask` (packages/core/dist) on synthetic playbooks from `bench/generate-playbook.mjs`, bullets deep-frozen as the stores hand them out. " +
      "**Index build** is `lexicalIndexFor` on bullets it has not seen: analysis of every rule (tokenising, stemming, concept matching) and the BM25F posting lists with precomputed impacts. It is paid once per CLI process; the MCP server pays it when a rule's text changes. **Same texts re-read** is what a new array of new bullet objects with unchanged texts costs (a re-merged view, or the playbook re-read after a feedback mark): the text index is kept and only per-rule state is refreshed. " +
      `**Warm query** is a call with the index built, over ${TASKS.length} tasks (a short task, a paraphrase, an agent-style report with a stack trace and paths, a task matching nothing), ${RUNS} runs each: analysing the task, adding up the posting lists of its terms, scoring only the rules that share a term, and computing feedback only for the rules within reach of the top 50. ` +
      "The synthetic playbook repeats 32 rule texts across 8 contexts, so common task words match a large share of it; real playbooks match fewer rules per word.",
    "",
    `The build times are medians of repeated builds in one process; the first build of a process also warms up the JIT and the stemmer's cache: here ${ms(firstBuild.ms)} ms for the first ${firstBuild.size.toLocaleString("en-US")} bullets. ` +
      `The synthetic texts are short and repeat, which flatters the build: ${REAL_SIZE.toLocaleString("en-US")} bullets made of the ${realRules.length} realistic rules of bench/relevance (tiled, each copy with a distinguishing word) take ${ms(realBuild)} ms to index (median of ${realTimes.length}), about ${((realBuild * 1000) / REAL_SIZE).toFixed(0)} µs per rule. ` +
      "Before issue 8 the ranker scanned every rule on every call (keyword substring checks and decay over every rule's feedback): 2.4 / 19.8 / 193 ms at 1,000 / 10,000 / 100,000 bullets, with no build step.",
  ].join("\n");
  updateBenchmarkDoc("ranking", "In-process ranking time", section);
  console.log("\ndocs/benchmarks.md updated (bench:ranking).");
}
