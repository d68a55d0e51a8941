// `pnpm bench:startup`: start-up cost of the `cm` process as a ratio to `node -e 0` measured in the
// same run (issue 18): `cm --version`, `cm --help`, `cm context "<task>" --json` on playbooks of
// 1,000 and 10,000 rules, and `cm mark <id> --helpful --json` on 1,000 rules, all on the YAML
// store with warm caches (one warm-up round fills cm's code cache, the playbook parse cache and the
// saved ranking index). The three commands on playbooks are measured a second time with the
// resident process running (`cm daemon start` in homes of their own, stopped at the end). Commands
// are measured round-robin so that load from other processes falls on all of them alike. Written to
// docs/benchmarks.md ("Start-up").
//
// BENCH_RUNS (default 21) changes the number of rounds; BENCH_NO_DOC=1 only prints the table.
// BENCH_BASELINE=<path of another cm.js> also measures that build in the same rounds (rows marked
// "before"), e.g. the loader of an earlier commit in front of the whole-CLI bundle.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generatePlaybook, generatePlaybookYaml } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// The executable npm installs as `cm` (package.json "bin").
const cli = join(root, "apps/cli", JSON.parse(readFileSync(join(root, "apps/cli/package.json"), "utf8")).bin.cm);
const baseline = process.env.BENCH_BASELINE;
const cpuProbe = join(root, "bench/cpu-probe.cjs");
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const TASK = "fix typescript error handling in the auth service after the 401 bug";

if (!existsSync(cli)) {
  console.error(`${cli} is missing: run \`pnpm build\` first.`);
  process.exit(1);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Wall time of the whole process, and its CPU time (user + system) read from the probe, in ms. */
function timed(c) {
  const cpuFile = join(c.home, "cpu.txt");
  const start = performance.now();
  const r = spawnSync(process.execPath, ["-r", cpuProbe, ...c.args], { cwd: c.home, env: { ...c.env, BENCH_CPU_FILE: cpuFile }, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`${c.label}: exit ${r.status}: ${r.stderr}\n${r.stdout.slice(0, 300)}`);
  return { ms, cpu: Number(readFileSync(cpuFile, "utf8")) / 1000 };
}

/** A fresh home with a playbook of `size` rules in the original cm's format; returns its env. */
function homeWith(size) {
  const home = mkdtempSync(join(tmpdir(), `cm-startup-${size}-`));
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  if (size > 0) writeFileSync(join(home, ".cass-memory", "playbook.yaml"), generatePlaybookYaml(size));
  // CASS_PATH points nowhere: no cass here, history is reported degraded (as on a machine without it).
  const env = { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_PATH: join(home, "no-cass") };
  return { home, env };
}

const homes = [];
try {
  const empty = homeWith(0);
  const h1k = homeWith(1000);
  const h10k = homeWith(10000);
  const hmark = homeWith(1000);
  // The same three with the resident process running (`cm daemon start`, one per home).
  const d1k = homeWith(1000);
  const d10k = homeWith(10000);
  const dmark = homeWith(1000);
  homes.push(empty, h1k, h10k, hmark, d1k, d10k, dmark);
  for (const h of [d1k, d10k, dmark]) {
    const r = spawnSync(process.execPath, [cli, "daemon", "start", "--json"], { cwd: h.home, env: h.env, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`cm daemon start: exit ${r.status}: ${r.stderr}${r.stdout}`);
    h.daemon = true;
  }
  const markId = generatePlaybook(1).bullets[0].id;
  const cmCommands = (bin, suffix) => [
    { label: `\`cm --version\`${suffix}`, args: [bin, "--version"], ...empty, target: 1.4 },
    { label: `\`cm --help\`${suffix}`, args: [bin, "--help"], ...empty, target: 1.4 },
    { label: `\`cm context\` 1,000 rules${suffix}`, args: [bin, "context", TASK, "--json"], ...h1k, target: 1.8 },
    { label: `\`cm context\` 10,000 rules${suffix}`, args: [bin, "context", TASK, "--json"], ...h10k, target: 3 },
    { label: `\`cm mark --helpful\` 1,000 rules${suffix}`, args: [bin, "mark", markId, "--helpful", "--json"], ...hmark, target: 2 },
  ];
  const daemonCommands = [
    { label: "`cm context` 1,000 rules, daemon running", args: [cli, "context", TASK, "--json"], ...d1k, target: 1.8 },
    { label: "`cm context` 10,000 rules, daemon running", args: [cli, "context", TASK, "--json"], ...d10k, target: 3 },
    { label: "`cm mark --helpful` 1,000 rules, daemon running", args: [cli, "mark", markId, "--helpful", "--json"], ...dmark, target: 2 },
  ];
  const commands = [{ label: "`node -e 0`", args: ["-e", "0"], ...empty }, ...(baseline ? cmCommands(baseline, " (before)") : []), ...cmCommands(cli, ""), ...daemonCommands];
  // Warm-up: two rounds (the first read of the original's format, then the cached read).
  for (let w = 0; w < 2; w++) for (const c of commands) timed(c);
  const times = commands.map(() => []);
  const cpus_ = commands.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    commands.forEach((c, j) => {
      const t = timed(c);
      times[j].push(t.ms);
      cpus_[j].push(t.cpu);
    });
  }
  const base = median(times[0]);
  const cpuBase = median(cpus_[0]);
  const rows = commands.map((c, j) => {
    const m = median(times[j]);
    const ratio = m / base;
    const cpuRatio = median(cpus_[j]) / cpuBase;
    const verdict = c.target === undefined ? "" : ratio <= c.target ? `≤ ${c.target}× met` : `≤ ${c.target}× **missed**`;
    return `| ${c.label} | ${m.toFixed(0)} | ${ratio.toFixed(2)}× | ${verdict} | ${median(cpus_[j]).toFixed(0)} | ${cpuRatio.toFixed(2)}× |`;
  });
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}, ${process.platform}; median of ${RUNS} rounds after two warm-up rounds (round-robin), load average ${loadavg()[0].toFixed(1)} at the end. Whole process wall time, and CPU time (user + system, from bench/cpu-probe.cjs preloaded into every process including \`node -e 0\`: less distorted when other processes compete for the cores); YAML store, playbook in the original cm's format, no cass installed. "Daemon running" rows: \`cm daemon start\` before the warm-up, so the command is answered by the resident process; their CPU time is the calling process's only. Run: \`pnpm bench:startup\`.`,
    "",
    "| command | wall ms (median) | wall ratio to `node -e 0` | target (wall) | CPU ms (median) | CPU ratio |",
    "|---|---:|---:|---|---:|---:|",
    ...rows,
  ].join("\n");
  console.log(table);
  if (process.env.BENCH_NO_DOC !== "1") updateBenchmarkDoc("startup", "Start-up", table);
} finally {
  for (const h of homes) {
    if (h.daemon) spawnSync(process.execPath, [cli, "daemon", "stop"], { cwd: h.home, env: h.env });
    rmSync(h.home, { recursive: true, force: true });
  }
}
