// Scale benchmark (issue 7): both stores at 1,000 / 10,000 / 100,000 bullets.
//
//   (a) `cm context "<task>" --json` as a whole process (the built apps/cli/dist/cm.js, a fresh HOME
//       holding only the generated store): wall time and peak RSS, median of several runs;
//   (b) in-process ranking (`rankBulletsForTask` of the built core) over the loaded bullets: the
//       first call (it may build an index) and the warm median; on SQLite also the candidate path
//       (full-text candidates from the store, then ranking of those only);
//   (c) mutations per second in-process through the real `mark` operation.
// Plus what bounds `cm context` (Node start-up, loading the CLI, opening the store, reading,
// ranking), measured in-process. Results and the machine go to docs/benchmarks.md (bench:scale).
//
// Run after `pnpm build`: `node bench/scale/run.mjs` (or `pnpm bench:scale`). Options: --no-doc
// (print only), --no-cli (skip (a)). Environment: SCALE_SIZES ("1000,10000,100000"),
// SCALE_BACKENDS ("yaml,sqlite"), SCALE_RUNS (timed `cm context` runs per size, default 7),
// SCALE_SEED (generator seed, default 7).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { updateBenchmarkDoc } from "../update-doc.mjs";
import { benchTasks, generateBullets } from "./generate.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const probe = pathToFileURL(join(root, "bench/rss-probe.mjs")).href;
const args = process.argv.slice(2);
const SIZES = (process.env.SCALE_SIZES ?? "1000,10000,100000").split(",").map(Number);
const BACKENDS = (process.env.SCALE_BACKENDS ?? "yaml,sqlite").split(",");
const RUNS = Number(process.env.SCALE_RUNS ?? 7);
/** Runs (and tasks) per measurement: fewer at 100,000 bullets, where a YAML run takes seconds. */
const runsFor = (size) => (size >= 100_000 ? Math.min(RUNS, 3) : RUNS);
const SEED = Number(process.env.SCALE_SEED ?? 7);
const WRITE_DOC = !args.includes("--no-doc");
const RUN_CLI = !args.includes("--no-cli");
const NOW = new Date("2026-11-23T00:00:00Z");
const TARGETS = { wallMs: 400, rssMiB: 200, rankMs: 20 };

for (const file of [cli, join(root, "packages/core/dist/index.js"), join(root, "packages/store-sqlite/dist/index.js")]) {
  if (!existsSync(file)) {
    console.error(`${file} is missing: run \`pnpm build\` first.`);
    process.exit(1);
  }
}

const load = (path) => import(pathToFileURL(join(root, path)).href);
const core = await load("packages/core/dist/index.js");
const storeYaml = await load("packages/store-yaml/dist/index.js");
const storeSqlite = await load("packages/store-sqlite/dist/index.js");
const Database = createRequire(join(root, "packages/store-sqlite/package.json"))("better-sqlite3");

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const f = (n, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : "–");
const log = (line) => console.error(`[scale] ${line}`);
const quietLogger = { debug() {}, info() {}, warn: (m) => log(`store warning: ${m}`), error: (m) => log(`store error: ${m}`) };

const TASKS = benchTasks(7);
const CHILD_FLAG = "--in-process-child";
const config = core.defaultConfig();
const rankOptions = { now: NOW, config, limit: config.maxBulletsInContext ?? 50, minRelevance: config.minRelevanceScore };

// -------------------------------------------------------------------------------------------------
// Processes: peak RSS from /usr/bin/time when the machine has it, else from a preload that writes
// process.resourceUsage().maxRSS at exit.

const GNU_TIME = existsSync("/usr/bin/time") && spawnSync("/usr/bin/time", ["-f", "%M", "true"], { encoding: "utf8" }).status === 0 ? "/usr/bin/time" : null;
const RSS_METHOD = GNU_TIME ? "`/usr/bin/time -f %M`" : "`process.resourceUsage().maxRSS` at exit (preload)";

function timedNode(nodeArgs, { cwd, env }) {
  const rssFile = join(tmpdir(), `cm-scale-rss-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const argv = GNU_TIME ? [GNU_TIME, ["-f", "%M", "-o", rssFile, process.execPath, ...nodeArgs]] : [process.execPath, ["--import", probe, ...nodeArgs]];
  const start = performance.now();
  const r = spawnSync(argv[0], argv[1], { cwd, env: { ...env, BENCH_RSS_FILE: rssFile }, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  const wallMs = performance.now() - start;
  let rssMiB = NaN;
  try {
    rssMiB = Number(readFileSync(rssFile, "utf8").trim().split("\n").pop()) / 1024;
    rmSync(rssFile, { force: true });
  } catch {
    // no figure (the process died before writing it)
  }
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, wallMs, rssMiB };
}

function cmEnv(home) {
  return { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none" };
}

/** A build running at the same time (the dist directory is emptied first): wait for it rather than fail. */
function missingBuild(r) {
  return r.status !== 0 && /ERR_MODULE_NOT_FOUND|ENOENT[^\n]*\/dist\//.test(r.stderr);
}

/** Runs the built cm (timed, with its peak RSS). */
function timedCli(args, home, env = cmEnv(home)) {
  let r = timedNode([cli, ...args], { cwd: home, env });
  for (let retry = 0; missingBuild(r) && retry < 60; retry++) {
    log("the CLI is being rebuilt; waiting 5 s");
    spawnSync("sleep", ["5"]);
    r = timedNode([cli, ...args], { cwd: home, env });
  }
  return r;
}

function runContext(home, task, extra = []) {
  const r = timedCli(["context", task, "--json", ...extra], home);
  if (r.status !== 0) throw new Error(`cm context failed (${r.status}): ${r.stderr}\n${r.stdout.slice(0, 400)}`);
  const data = JSON.parse(r.stdout).data;
  return { wallMs: r.wallMs, rssMiB: r.rssMiB, hits: data.relevantBullets.length + (data.antiPatterns?.length ?? 0) };
}

function baselines() {
  const node = [];
  const version = [];
  for (let i = 0; i < 9; i++) {
    node.push(timedNode(["-e", "0"], { cwd: tmpdir(), env: { PATH: process.env.PATH } }).wallMs);
    version.push(timedCli(["--version"], tmpdir(), { PATH: process.env.PATH, HOME: tmpdir() }).wallMs);
  }
  return { nodeMs: median(node), cliLoadMs: median(version) };
}

// -------------------------------------------------------------------------------------------------
// Stores

function openStore(backend, dir, extra = {}) {
  return backend === "sqlite"
    ? storeSqlite.createSqliteStore({ globalDir: dir, repoDir: null, logger: quietLogger, parseYaml: storeYaml.fromYaml, ...extra })
    : storeYaml.createYamlStore({ globalDir: dir, repoDir: null, logger: quietLogger, ...extra });
}

function depsFor(store) {
  let counter = 0;
  return {
    store,
    episodic: core.createNullEpisodicSource(null),
    clock: { now: () => new Date() },
    ids: {
      bulletId: () => `b-${Date.now().toString(36)}-${(counter++).toString(36).padStart(6, "0")}`,
      hex: (n) => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join(""),
    },
    logger: quietLogger,
    config,
    cliName: "cm",
    files: { exists: async () => false, readText: async () => null },
  };
}

/** The HOME being measured, removed when the run is interrupted. */
let currentHome = null;

/** A fresh HOME whose global directory holds the generated playbook in the backend's store. */
async function createHome(backend, bullets) {
  const home = mkdtempSync(join(tmpdir(), `cm-scale-${backend}-${bullets.length}-`));
  currentHome = home;
  const dir = join(home, ".cass-memory");
  mkdirSync(dir, { recursive: true });
  const configJson = backend === "sqlite" ? { storage: { backend: "sqlite" } } : {};
  writeFileSync(join(dir, "config.json"), JSON.stringify(configJson, null, 2));
  const store = openStore(backend, dir);
  const start = performance.now();
  // Bulk load: one mutation with every bullet (one transaction on SQLite, one file write on YAML).
  await store.mutatePlaybook("global", (playbook) => {
    playbook.bullets.push(...bullets);
  });
  const loadMs = performance.now() - start;
  store.close?.();
  const file = backend === "sqlite" ? join(dir, storeSqlite.DATABASE_FILE) : join(dir, "playbook.yaml");
  return { home, dir, loadMs, fileMiB: statSync(file).size / 2 ** 20 };
}

// -------------------------------------------------------------------------------------------------
// (b) in-process ranking, and where the time of `cm context` goes

async function inProcess(backend, dir, size) {
  const out = {};
  const tasks = TASKS.slice(0, runsFor(size));
  // Opening the store and a first query (SQLite: open, pragmas, schema check).
  let t = performance.now();
  const store = openStore(backend, dir);
  if (backend === "sqlite") await store.schemaVersion("global");
  out.openMs = performance.now() - t;
  store.close?.();

  // A CLI process ranks once, with no index yet. The ranker keeps its last index and reuses it for
  // bullets with the same texts, so before each measurement below it ranks one unrelated rule.
  const unrelated = [core.newBullet({ content: "unrelated placeholder rule", category: "bench" }, { config, now: NOW, ids: { bulletId: () => "b-bench-reset", hex: () => "" } })];
  const forgetIndex = () => core.rankBulletsForTask(unrelated, "placeholder", rankOptions);

  // What `context` reads (core's loadContextPlaybook: on SQLite above CANDIDATE_RETRIEVAL_MIN_BULLETS,
  // only the full-text index's best CANDIDATE_LIMIT matches), then ranking of that, per task.
  const read = [];
  const rank = [];
  let readCount = 0;
  for (const task of tasks) {
    const fresh = openStore(backend, dir);
    const deps = depsFor(fresh);
    let s = performance.now();
    const { playbook: view, candidatesFrom } = await core.loadContextPlaybook(deps, task);
    read.push(performance.now() - s);
    readCount += view.bullets.length;
    out.candidatePath = candidatesFrom !== undefined;
    forgetIndex();
    s = performance.now();
    core.rankBulletsForTask(view.bullets, task, rankOptions);
    rank.push(performance.now() - s);
    fresh.close?.();
  }
  out.contextReadMs = median(read);
  out.contextRankMs = median(rank);
  out.contextRead = readCount / tasks.length;

  // The whole context operation in-process (store opened afresh each time, no history source).
  const whole = [];
  for (const task of tasks) {
    const fresh = openStore(backend, dir);
    forgetIndex();
    const s = performance.now();
    await core.runOperation(core.contextOperation, depsFor(fresh), { task, noHistory: true });
    whole.push(performance.now() - s);
    fresh.close?.();
  }
  out.contextOpMs = median(whole);
  if (backend === "sqlite") Object.assign(out, ftsQueryCost(dir, tasks));

  // Then everything: reading every bullet, and ranking all of them (kept in memory from here on).
  const all = openStore(backend, dir);
  t = performance.now();
  await all.readPlaybook("global");
  out.readMs = performance.now() - t;
  all.close?.();

  // Ranking every bullet: as a long-running host (the MCP server) does, with the store's memoized
  // reads, whose bullets are deeply frozen — the ranker then keeps its index across calls.
  const memoized = openStore(backend, dir, { memoizeReads: true });
  const bullets = (await memoized.readPlaybook("global")).bullets;
  memoized.close?.();
  forgetIndex();
  t = performance.now();
  core.rankBulletsForTask(bullets, tasks[0], rankOptions);
  out.rankFirstMs = performance.now() - t;
  const warm = [];
  for (let round = 0; round < 3; round++) {
    for (const task of tasks) {
      const s = performance.now();
      core.rankBulletsForTask(bullets, task, rankOptions);
      warm.push(performance.now() - s);
    }
  }
  out.rankWarmMs = median(warm);
  return out;
}

/**
 * The candidate search `context` runs on SQLite, alone (better-sqlite3 on the database file, a new
 * connection per task as in a CLI process; the store's `searchCandidateRows` with the query core's
 * `loadContextPlaybook` passes): how many rows match any of the task's words or its concepts'
 * words (what a single OR query would have to rank), the search's time (row ids of the best CANDIDATE_LIMIT active rules,
 * no bodies), and, for comparison, the query the store ran before (bm25 over every match inside
 * FTS5, best 2 × CANDIDATE_LIMIT joined with `bullets` for the active filter, bodies included).
 */
function ftsQueryCost(dir, tasks) {
  const file = join(dir, storeSqlite.DATABASE_FILE);
  const matchOf = (terms) => {
    const words = new Set();
    for (const term of terms) for (const m of term.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) if (words.size < 64) words.add(m[0]);
    return [...words].map((w) => `"${w}"`).join(" OR ");
  };
  const active = "b.state <> 'retired' AND b.maturity <> 'deprecated' AND b.deprecated = 0";
  const formerSql = `SELECT b.row, b.pos, b.id, b.body FROM (SELECT rowid, rank FROM bullets_fts WHERE bullets_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN bullets b ON b.row = f.rowid WHERE ${active} ORDER BY f.rank, b.pos LIMIT ?`;
  const cold = (run) => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const s = performance.now();
      const result = run(db);
      return { ms: performance.now() - s, result };
    } finally {
      db.close();
    }
  };
  const matched = [];
  const searchMs = [];
  const formerMs = [];
  for (const task of tasks) {
    const query = core.candidateQuery(task);
    const match = matchOf(core.candidateQueryTerms(task));
    matched.push(cold((db) => db.prepare("SELECT count(*) FROM bullets_fts WHERE bullets_fts MATCH ?").pluck().get(match)).result);
    searchMs.push(cold((db) => storeSqlite.searchCandidateRows(db, query.terms, core.CANDIDATE_LIMIT, query)).ms);
    formerMs.push(cold((db) => db.prepare(formerSql).raw().all(match, 2 * core.CANDIDATE_LIMIT, core.CANDIDATE_LIMIT)).ms);
  }
  return { ftsMatched: median(matched), ftsSearchMs: median(searchMs), ftsFormerMs: median(formerMs) };
}

// -------------------------------------------------------------------------------------------------
// (c) mutations per second through the real mark operation

async function marksPerSecond(backend, dir, ids) {
  const store = openStore(backend, dir);
  const deps = depsFor(store);
  const times = [];
  const start = performance.now();
  let i = 0;
  // At least 5 marks and 3 s; at most 300 marks or 60 s (100,000 bullets in YAML take seconds each).
  while ((times.length < 5 || performance.now() - start < 3000) && times.length < 300 && performance.now() - start < 60_000) {
    const s = performance.now();
    await core.runOperation(core.markOperation, deps, { bulletId: ids[(i++ * 7919) % ids.length], helpful: true, session: `/bench/scale/${i}.jsonl` });
    times.push(performance.now() - s);
  }
  const elapsed = performance.now() - start;
  store.close?.();
  return { marks: times.length, perSecond: (times.length / elapsed) * 1000, medianMs: median(times) };
}

// -------------------------------------------------------------------------------------------------
// (a) the CLI

/** Whether the built cm reads the SQLite store when config.json says so (wired by the runtime): it finds a bullet only stored there. */
function cliHonoursSqlite(home, bulletId) {
  return timedCli(["playbook", "get", bulletId, "--json"], home).status === 0;
}

function cliRuns(home, size) {
  const first = runContext(home, TASKS[0]);
  const runs = [];
  for (let i = 0; i < runsFor(size); i++) runs.push(runContext(home, TASKS[i % TASKS.length]));
  // The same without the history lookup (no cass installed and no agent sessions in this HOME).
  const noHistory = [];
  for (let i = 0; i < runsFor(size); i++) noHistory.push(runContext(home, TASKS[i % TASKS.length], ["--no-history"]).wallMs);
  return {
    noHistoryMs: median(noHistory),
    firstMs: first.wallMs,
    firstRss: first.rssMiB,
    wallMs: median(runs.map((r) => r.wallMs)),
    minMs: Math.min(...runs.map((r) => r.wallMs)),
    rssMiB: median(runs.map((r) => r.rssMiB)),
    maxRss: Math.max(...runs.map((r) => r.rssMiB)),
    hits: median(runs.map((r) => r.hits)),
  };
}

// -------------------------------------------------------------------------------------------------

if (args[0] === CHILD_FLAG) {
  const { backend, dir, size, ids } = JSON.parse(args[1]);
  const inProcessResult = await inProcess(backend, dir, size);
  const marks = await marksPerSecond(backend, dir, ids);
  process.stdout.write(JSON.stringify({ inProcess: inProcessResult, marks }));
  process.exit(0);
}

/**
 * (b) and (c) run in a child process of their own per store and size: the ranker caches its index
 * per process (and reuses it for equal bullets), so a measurement in this process would find the
 * index the previous store's identical bullets left and report no build.
 */
function measureInChild(backend, dir, size, ids) {
  const sample = ids.filter((_, i) => i % Math.max(1, Math.floor(ids.length / 2000)) === 0);
  const spec = JSON.stringify({ backend, dir, size, ids: sample });
  const r = spawnSync(process.execPath, ["--max-old-space-size=8192", fileURLToPath(import.meta.url), CHILD_FLAG, spec], {
    env: process.env,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`in-process measurement of ${backend} at ${size} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const results = [];
// An interrupted run leaves no generated store behind (they reach hundreds of MiB).
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => {
    if (currentHome !== null) rmSync(currentHome, { recursive: true, force: true });
    process.exit(130);
  });
}
const base = RUN_CLI ? baselines() : { nodeMs: NaN, cliLoadMs: NaN };
log(`node -e 0: ${f(base.nodeMs)} ms, cm --version: ${f(base.cliLoadMs)} ms; tasks: ${TASKS.length}; rss via ${GNU_TIME ?? "preload"}`);

for (const size of SIZES) {
  let t = performance.now();
  const bullets = generateBullets(core, size, { seed: SEED, now: NOW });
  log(`${size}: generated in ${f(performance.now() - t)} ms`);
  const ids = bullets.filter((b) => !b.deprecated).map((b) => b.id);
  for (const backend of BACKENDS) {
    const row = { backend, size };
    const { home, dir, loadMs, fileMiB } = await createHome(backend, bullets);
    try {
      row.loadMs = loadMs;
      row.fileMiB = fileMiB;
      log(`${backend} ${size}: loaded in ${f(loadMs)} ms (${f(fileMiB, 1)} MiB)`);
      if (RUN_CLI) {
        if (backend === "sqlite" && !cliHonoursSqlite(home, ids[0])) {
          row.cli = null;
          log(`${backend} ${size}: cm does not read the SQLite store yet (storage.backend) — CLI part skipped`);
        } else {
          row.cli = cliRuns(home, size);
          log(`${backend} ${size}: cm context ${f(row.cli.wallMs)} ms, ${f(row.cli.rssMiB)} MiB`);
        }
      }
      Object.assign(row, measureInChild(backend, dir, size, ids));
      log(`${backend} ${size}: rank first ${f(row.inProcess.rankFirstMs, 1)} ms, warm ${f(row.inProcess.rankWarmMs, 1)} ms`);
      log(`${backend} ${size}: ${f(row.marks.perSecond, 1)} marks/s`);
    } finally {
      rmSync(home, { recursive: true, force: true });
      currentHome = null;
    }
    results.push(row);
  }
}

// -------------------------------------------------------------------------------------------------
// Report

function machine() {
  let model = cpus()[0]?.model ?? "unknown CPU";
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8").split("\n").find((l) => l.startsWith("model name"));
    if (line) model = line.split(":")[1].trim();
  } catch {
    // not Linux
  }
  return `${model}, ${cpus().length} cores, ${f(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${process.platform}; load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (the machine is shared: times include waiting for a core)`;
}

const n = (size) => size.toLocaleString("en");
const mainTable = [
  `| store | bullets | on disk | bulk load | \`cm context\` wall, median (min) | peak RSS, median (max) | first \`cm context\` | ranking every bullet in-process: first (index build) / warm median | what \`context\` reads + ranks | \`mark\` in-process |`,
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...results.map((r) => {
    const c = r.cli;
    const cliCells = c === undefined ? ["not run", "–", "–"] : c === null ? ["cm does not read SQLite yet", "–", "–"] : [`**${f(c.wallMs)} ms** (${f(c.minMs)})`, `**${f(c.rssMiB)} MiB** (${f(c.maxRss)})`, `${f(c.firstMs)} ms, ${f(c.firstRss)} MiB`];
    const p = r.inProcess;
    const candidate = `${p.candidatePath ? `${f(p.contextRead)} FTS candidates` : "all bullets"}: ${f(p.contextReadMs)} ms + ${f(p.contextRankMs, 1)} ms`;
    return `| ${r.backend} | ${n(r.size)} | ${f(r.fileMiB, 1)} MiB | ${f(r.loadMs / 1000, 1)} s | ${cliCells[0]} | ${cliCells[1]} | ${cliCells[2]} | ${f(p.rankFirstMs, 1)} / **${f(p.rankWarmMs, 1)} ms** | ${candidate} | ${f(r.marks.perSecond, 1)}/s (${f(r.marks.medianMs)} ms each, ${r.marks.marks} marks) |`;
  }),
].join("\n");

const boundsTable = [
  "| store | bullets | Node start-up (`node -e 0`) | load the CLI (`cm --version`) | open the store | read every bullet | `context` reads (candidates or all) | of which the candidate search: rows matching any word, time (the former bm25 query) | ranks that | whole `context` operation in-process | `cm context --no-history` wall | `cm context` wall |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...results.map(
    (r) =>
      `| ${r.backend} | ${n(r.size)} | ${f(base.nodeMs)} ms | ${f(base.cliLoadMs)} ms | ${f(r.inProcess.openMs, 1)} ms | ${f(r.inProcess.readMs)} ms | ${f(r.inProcess.contextReadMs)} ms (${f(r.inProcess.contextRead)} bullets) | ${r.inProcess.ftsMatched !== undefined ? `${n(r.inProcess.ftsMatched)} rows: ${f(r.inProcess.ftsSearchMs)} ms (${f(r.inProcess.ftsFormerMs)} ms)` : "–"} | ${f(r.inProcess.contextRankMs, 1)} ms | ${f(r.inProcess.contextOpMs)} ms | ${r.cli ? `${f(r.cli.noHistoryMs)} ms` : "–"} | ${r.cli ? `${f(r.cli.wallMs)} ms` : "–"} |`,
  ),
].join("\n");

function verdicts() {
  const big = results.find((r) => r.backend === "sqlite" && r.size === 100_000);
  if (big === undefined) return ["(100,000 bullets on SQLite not measured in this run)"];
  const lines = [];
  const mark = (ok) => (ok ? "met" : "**missed**");
  if (big.cli) {
    lines.push(`- \`cm context\` on SQLite at 100,000 bullets: ${f(big.cli.wallMs)} ms wall (target ≤ ${TARGETS.wallMs} ms): ${mark(big.cli.wallMs <= TARGETS.wallMs)}; ${f(big.cli.rssMiB)} MiB peak RSS (target ≤ ${TARGETS.rssMiB} MiB): ${mark(big.cli.rssMiB <= TARGETS.rssMiB)}.`);
  } else {
    lines.push("- `cm context` on SQLite at 100,000 bullets: not measured (the CLI did not read the SQLite store in this run).");
  }
  lines.push(`- In-process ranking at 100,000 bullets (SQLite's bullets, warm median): ${f(big.inProcess.rankWarmMs, 1)} ms (target ≤ ${TARGETS.rankMs} ms): ${mark(big.inProcess.rankWarmMs <= TARGETS.rankMs)}; first call ${f(big.inProcess.rankFirstMs, 1)} ms.`);
  lines.push(
    `- What \`context\` ranks at 100,000 bullets on SQLite: ${big.inProcess.candidatePath ? `${f(big.inProcess.contextRead)} FTS candidates, read in ${f(big.inProcess.contextReadMs)} ms and ranked in ${f(big.inProcess.contextRankMs, 1)} ms` : `every bullet (${f(big.inProcess.contextReadMs)} ms to read)`}, against ${f(big.inProcess.readMs)} ms to read every bullet; the whole operation in-process ${f(big.inProcess.contextOpMs)} ms.`,
  );
  return lines;
}

const section = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machine()}. \`node -e 0\`: ${f(base.nodeMs)} ms; \`cm --version\`: ${f(base.cliLoadMs)} ms (medians of 9). Peak RSS via ${RSS_METHOD}.`,
  `In-process ranking ranks every bullet as a long-running host holds them (the stores' memoized reads, deeply frozen bullets, so the ranker's index is built once and reused); \`context\` in a CLI process builds it once over what it read. Medians of ${RUNS} runs (${Math.min(RUNS, 3)} at 100,000 bullets), each run another task. Generated playbooks (seed ${SEED}; bench/scale/generate.mjs): the rules of bench/relevance/rules.json varied by service, component and circumstance, half of them with feedback histories, 3 % deprecated. \`cm context\` runs cycle through ${TASKS.length} tasks of bench/relevance/tasks.json (short, paraphrased, long log excerpts); a fresh HOME holds only the store (SQLite selected by \`{"storage":{"backend":"sqlite"}}\` in config.json). \`mark\` runs the real operation in-process (SQLite: synchronous=FULL).`,
  "",
  mainTable,
  "",
  "Where the time of `cm context` goes (in-process parts measured separately, store opened afresh):",
  "",
  boundsTable,
  "",
  "Targets (issue 7):",
  "",
  ...verdicts(),
].join("\n");

process.stdout.write(`${section}\n`);
if (WRITE_DOC) updateBenchmarkDoc("scale", "Scale: both stores at 1,000 / 10,000 / 100,000 bullets", section);
