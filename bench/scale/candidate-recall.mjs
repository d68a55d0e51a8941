// How well SQLite's candidate search stands in for ranking the whole playbook: for every task of
// bench/relevance, the whole-playbook ranking's top 10 (core's rankBulletsForTask over all rules)
// against the candidates `cm context` reads above 5,000 rules (core's loadContextPlaybook), on a
// generated playbook (bench/scale/generate.mjs, seed 7) in a temporary SQLite store.
//
//   node bench/scale/candidate-recall.mjs            (after `pnpm build`; RECALL_SIZE=100000 by default)
//
// Prints the rules found over the rules wanted, the tasks where fewer than half were found, and
// the median time of a candidate read (store opened once, so the connection is warm).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { generateBullets } from "./generate.mjs";

const root = fileURLToPath(new URL("../..", import.meta.url));
const load = (path) => import(pathToFileURL(join(root, path)).href);
const core = await load("packages/core/dist/index.js");
const storeSqlite = await load("packages/store-sqlite/dist/index.js");

const SIZE = Number(process.env.RECALL_SIZE ?? 100_000);
const TOP = 10;
const NOW = new Date("2026-11-23T00:00:00Z");
const config = core.defaultConfig();
const quiet = { debug() {}, info() {}, warn: (m) => console.error(m), error: (m) => console.error(m) };
const tasks = JSON.parse(readFileSync(join(root, "bench/relevance/tasks.json"), "utf8"));

const dir = mkdtempSync(join(tmpdir(), "cm-candidate-recall-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const store = storeSqlite.createSqliteStore({ globalDir: dir, repoDir: null, logger: quiet });
try {
  const bullets = generateBullets(core, SIZE);
  await store.mutatePlaybook("global", (playbook) => {
    playbook.bullets.push(...bullets);
  });
  const all = (await store.readPlaybook("global")).bullets;
  const deps = {
    store,
    episodic: core.createNullEpisodicSource(null),
    clock: { now: () => NOW },
    ids: { bulletId: () => "b-unused", hex: () => "0" },
    logger: quiet,
    config,
    cliName: "cm",
    files: { exists: async () => false, readText: async () => null },
  };
  let wanted = 0;
  let found = 0;
  const weak = [];
  const times = [];
  for (const { id, task } of tasks) {
    const top = core.rankBulletsForTask(all, task, { now: NOW, config, limit: TOP, minRelevance: config.minRelevanceScore }).ranked.map((b) => b.id);
    const start = performance.now();
    const { playbook, candidatesFrom } = await core.loadContextPlaybook(deps, task);
    times.push(performance.now() - start);
    if (candidatesFrom === undefined) throw new Error(`${SIZE} rules are below the candidate threshold (${core.CANDIDATE_RETRIEVAL_MIN_BULLETS})`);
    const ids = new Set(playbook.bullets.map((b) => b.id));
    const hits = top.filter((ruleId) => ids.has(ruleId)).length;
    wanted += top.length;
    found += hits;
    if (top.length > 0 && hits * 2 < top.length) weak.push(`${id} ${hits}/${top.length}`);
  }
  times.sort((a, b) => a - b);
  console.log(`${SIZE.toLocaleString("en")} rules, ${tasks.length} tasks: ${found} of the ${wanted} whole-playbook top-${TOP} rules are candidates`);
  console.log(`tasks with fewer than half found: ${weak.length === 0 ? "none" : weak.join(", ")}`);
  console.log(`candidate read, median: ${times[times.length >> 1].toFixed(1)} ms`);
} finally {
  store.close();
}
