// `pnpm bench:first-read` (issue 18): the first read of a playbook the earlier cm wrote. The earlier
// cm saved its playbook with the `yaml` package's `stringify` and default options (long lines folded
// at 80 columns, block scalars for multi-line text, quoting where needed, anchors for shared values).
// For 1,000 / 20,000 / 100,000 rules (FIRST_READ_SIZES) this writes such a file into a fresh HOME and
// measures, as whole processes of the built CLI, with `node -e 0` measured in the same run:
//   - the first `cm context "<task>" --json` (no parse cache yet: the YAML is parsed and validated);
//   - a warm `cm context` (the parse cache written by the first read is used);
//   - `cm storage migrate --to sqlite --json` of that HOME (a fresh copy of it); the playbook is
//     copied and verified bullet by bullet (the result's `streamed` says so, and the table too).
// Wall time and peak RSS for each; in-process, the parse time of the file by our readers and (at
// the sizes in FIRST_READ_LIBRARY_SIZES, default 1000) by the `yaml` library as before.
// Results are printed and written to docs/benchmarks.md (section "First read of an earlier-cm playbook").
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generatePlaybook } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const probe = pathToFileURL(join(root, "bench/rss-probe.mjs")).href;
const SIZES = (process.env.FIRST_READ_SIZES ?? "1000,20000,100000").split(",").map(Number);
const LIBRARY_SIZES = new Set((process.env.FIRST_READ_LIBRARY_SIZES ?? "1000").split(",").filter(Boolean).map(Number));
const RUNS = Number(process.env.FIRST_READ_RUNS ?? 5);
const TASK = "fix typescript error handling in the auth service after the 401 bug";
const noDoc = process.argv.includes("--no-doc");
const log = (line) => console.error(`[first-read] ${line}`);

if (!existsSync(cli)) {
  console.error("apps/cli/dist/cm.js is missing: run `pnpm build` first (pnpm bench does).");
  process.exit(1);
}

const require = createRequire(join(root, "packages/store-yaml/package.json"));
const YAML = require("yaml");

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * The generated playbook made to use what the earlier cm's writer emits beyond plain lines:
 * multi-line reasoning (block scalars), texts with `: ` and ` #` (double quotes), with both quote
 * kinds, with a single quote, long unbroken words, and one empty array shared by some rules (the
 * writer then emits an anchor and aliases).
 */
function earlierCmPlaybook(count) {
  const playbook = generatePlaybook(count);
  const shared = [];
  playbook.bullets.forEach((b, i) => {
    if (i % 7 === 0) b.reasoning = `Seen in session ${i}:\n  the fix worked twice\n\nKeep it unless the API changes.\n`;
    if (i % 11 === 0) b.content = `${b.content}: check the header #${i} first, then retry with a fresh token`;
    if (i % 13 === 0) b.content = `Use "strict" mode; it's required by the ${b.category} linter (rule ${i})`;
    if (i % 17 === 0) b.searchPointer = `it's ${b.content.slice(0, 60)}`;
    if (i % 50 === 0) b.sourceAgents = shared;
  });
  return playbook;
}

/** A build running at the same time (its dist directory emptied first): wait for it rather than fail. */
function missingBuild(r) {
  return !r.ok && /ERR_MODULE_NOT_FOUND|Cannot find module|ENOENT[^\n]*\/dist\//.test(r.stderr);
}

function runCm(home, args, env = {}) {
  let r = runCmOnce(home, args, env);
  for (let retry = 0; missingBuild(r) && retry < 60; retry++) {
    log("the CLI is being rebuilt; waiting 5 s");
    spawnSync("sleep", ["5"]);
    r = runCmOnce(home, args, env);
  }
  return r;
}

function runCmOnce(home, args, env = {}) {
  const rssFile = join(home, `.rss-${Math.random().toString(36).slice(2)}`);
  const start = performance.now();
  const r = spawnSync(process.execPath, ["--import", probe, cli, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH, HOME: home, BENCH_RSS_FILE: rssFile, NO_COLOR: "1", CASS_MEMORY_LLM: "none", ...env },
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const wallMs = performance.now() - start;
  let rssMiB = Number.NaN;
  try {
    rssMiB = Number(readFileSync(rssFile, "utf8")) / 1024;
    rmSync(rssFile, { force: true });
  } catch {
    // the process died before writing it
  }
  let data = null;
  try {
    data = JSON.parse(r.stdout).data;
  } catch {
    // not JSON
  }
  return { ok: r.status === 0, status: r.status, wallMs, rssMiB, data, stderr: r.stderr };
}

function nodeBaseline() {
  const times = [];
  for (let i = 0; i < 9; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function inProcessParse(text, withLibrary) {
  const store = await import(pathToFileURL(join(root, "packages/store-yaml/dist/index.js")).href);
  const t0 = performance.now();
  const playbook = store.decodePlaybook(text, "bench.yaml");
  const oursMs = performance.now() - t0;
  let libraryMs = null;
  if (withLibrary) {
    const t1 = performance.now();
    YAML.parse(text);
    libraryMs = performance.now() - t1;
  }
  return { oursMs, libraryMs, bullets: playbook.bullets.length };
}

const fmtMs = (ms) => (Number.isFinite(ms) ? `${ms >= 10_000 ? (ms / 1000).toFixed(1) + " s" : Math.round(ms) + " ms"}` : "–");
const fmtMiB = (m) => (Number.isFinite(m) ? `${Math.round(m)} MiB` : "–");
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(1)}×` : "–");

const nodeMs = nodeBaseline();
log(`node -e 0: ${fmtMs(nodeMs)}`);
const rows = [];
for (const size of SIZES) {
  const text = YAML.stringify(earlierCmPlaybook(size));
  const home = mkdtempSync(join(tmpdir(), "cm-first-read-"));
  const globalDir = join(home, ".cass-memory");
  mkdirSync(globalDir, { recursive: true });
  writeFileSync(join(globalDir, "playbook.yaml"), text, { mode: 0o600 });
  const runs = size >= 100_000 ? 1 : size >= 20_000 ? Math.min(RUNS, 3) : RUNS;

  const first = [];
  let firstFailed = null;
  for (let i = 0; i < runs; i++) {
    rmSync(join(globalDir, ".cache"), { recursive: true, force: true });
    const r = runCm(home, ["context", TASK, "--json"]);
    if (!r.ok) {
      firstFailed = `exit ${r.status}: ${r.stderr.split("\n").find((l) => l.trim() !== "") ?? ""}`.slice(0, 160);
      log(`first read at ${size} failed: ${firstFailed}`);
      break;
    }
    first.push(r);
  }
  const warm = [];
  if (firstFailed === null) {
    for (let i = 0; i < runs; i++) {
      const r = runCm(home, ["context", TASK, "--json"]);
      if (r.ok) warm.push(r);
      else log(`warm read at ${size} failed: exit ${r.status} ${r.stderr.split("\n").slice(0, 3).join(" | ").slice(0, 300)}`);
    }
  }
  // migration of a fresh copy (no caches), once
  const migrateHome = mkdtempSync(join(tmpdir(), "cm-first-read-migrate-"));
  mkdirSync(join(migrateHome, ".cass-memory"), { recursive: true });
  cpSync(join(globalDir, "playbook.yaml"), join(migrateHome, ".cass-memory", "playbook.yaml"));
  const migrate = runCm(migrateHome, ["storage", "migrate", "--to", "sqlite", "--json"]);
  const migrated = migrate.ok && migrate.data?.status === "migrated";
  const streamed = Array.isArray(migrate.data?.streamed) && migrate.data.streamed.includes("global/playbook");
  if (!migrated) log(`migrate at ${size} failed: exit ${migrate.status} ${migrate.stderr.split("\n").slice(0, 6).join(" | ").slice(0, 600)}`);
  rmSync(migrateHome, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });

  const parse = size <= 20_000 ? await inProcessParse(text, LIBRARY_SIZES.has(size)) : null;
  const row = {
    size,
    mib: Buffer.byteLength(text) / 1048576,
    firstMs: first.length ? median(first.map((r) => r.wallMs)) : Number.NaN,
    firstRss: first.length ? Math.max(...first.map((r) => r.rssMiB)) : Number.NaN,
    warmMs: warm.length ? median(warm.map((r) => r.wallMs)) : Number.NaN,
    warmRss: warm.length ? Math.max(...warm.map((r) => r.rssMiB)) : Number.NaN,
    firstFailed,
    migrateMs: migrate.wallMs,
    migrateRss: migrate.rssMiB,
    migrated,
    streamed,
    records: migrate.data?.sections?.records,
    parse,
    runs,
  };
  rows.push(row);
  log(
    `${size}: first ${fmtMs(row.firstMs)} ${fmtMiB(row.firstRss)}, warm ${fmtMs(row.warmMs)} ${fmtMiB(row.warmRss)}, ` +
      `migrate ${migrated ? (streamed ? "ok (streamed)" : "ok (whole section)") : "FAILED"} ${fmtMs(row.migrateMs)} ${fmtMiB(row.migrateRss)}` +
      (parse ? `, in-process parse ${fmtMs(parse.oursMs)}${parse.libraryMs !== null ? ` (library ${fmtMs(parse.libraryMs)})` : ""}` : ""),
  );
}

const machine = `${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}`;
const lines = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; load average ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end (a shared machine: absolute times vary, compare the ratios). ` +
    `\`node -e 0\`: ${fmtMs(nodeMs)} (median of 9). Peak RSS: \`process.resourceUsage().maxRSS\` at exit. First read: \`cm context\` with no parse cache (median of the runs, max RSS); warm: the same command again (parse cache present).`,
  "",
  "| rules | file | first `cm context` (× node, × warm) | first read peak RSS | warm `cm context` (× node) | warm peak RSS | `storage migrate --to sqlite` | migrate peak RSS | in-process parse + validate (the `yaml` library) |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
];
for (const r of rows) {
  const first = r.firstFailed ? `failed (${r.firstFailed})` : `**${fmtMs(r.firstMs)}** (${ratio(r.firstMs, nodeMs)}, **${ratio(r.firstMs, r.warmMs)}**)`;
  const parse = r.parse ? `${fmtMs(r.parse.oursMs)}${r.parse.libraryMs !== null ? ` (${fmtMs(r.parse.libraryMs)})` : ""}` : "–";
  lines.push(
    `| ${r.size.toLocaleString("en-US")} | ${r.mib.toFixed(1)} MiB | ${first} | **${fmtMiB(r.firstRss)}** | ${fmtMs(r.warmMs)} (${ratio(r.warmMs, nodeMs)}) | ${fmtMiB(r.warmRss)} | ${r.migrated ? `${fmtMs(r.migrateMs)}, ${r.records} records${r.streamed ? ", streamed" : ", whole section"}` : "failed"} | **${fmtMiB(r.migrateRss)}** | ${parse} |`,
  );
}
const table = lines.join("\n");
console.log(table);
if (!noDoc) updateBenchmarkDoc("first-read", "First read of an earlier-cm playbook", table);
