// Relevance benchmark (`pnpm bench:relevance`, after `pnpm build`): runs every ranker of
// rankers.mjs over the labeled tasks of tasks.json against the rules of rules.json and prints
// nDCG@10, Recall@5 and MRR per task group and overall, for all tasks and for the held-out half
// (split.mjs), then the crowding variant (popular irrelevant rules), and writes the tables to
// docs/benchmarks.md (between the bench:relevance markers). Ranking time is measured separately by
// bench/ranking/run.mjs.
//
// Ties: keyword rankers give many rules the same score and break ties by playbook order, so every
// ranker sees the rules in several seeded shuffles and the metrics are averaged over them.
//
// Options: --seeds <n> (5), --per-task (print each task's nDCG@10 per ranker), --split <all|dev|heldout>
// (which tasks --per-task lists; default all), --no-crowding, --no-doc (do not touch docs/benchmarks.md).
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { updateBenchmarkDoc } from "../update-doc.mjs";
import { loadRankers } from "./rankers.mjs";
import { averageSummaries, scoreTask, summarize } from "./score.mjs";
import { fnv1a, splitOf } from "./split.mjs";
import { prng } from "../prng.mjs";

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const SEEDS = Number(option("--seeds", 5));
const GROUPS = ["paraphrase", "ambiguous", "long", "direct"];
/** Share of a task's unlabeled rules that the crowding variant makes popular. */
const POPULAR_SHARE = 0.2;

const readJson = (name) => JSON.parse(readFileSync(new URL(name, import.meta.url), "utf8"));
const rules = readJson("./rules.json");
const tasks = readJson("./tasks.json");
const heldOut = tasks.filter((t) => splitOf(t.id) === "heldout");


function shuffled(items, seed) {
  const random = prng(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * The crowding variant's popular rules for a task: about POPULAR_SHARE of the rules the task does
 * not label (grade 0), chosen by hash so every run and ranker sees the same ones.
 */
function popularFor(task) {
  const out = new Set();
  for (const r of rules) {
    if ((task.labels[r.id] ?? 0) > 0) continue;
    if (fnv1a(`${task.id}\u0000${r.id}`) % 1000 < POPULAR_SHARE * 1000) out.add(r.id);
  }
  return out;
}

const rankers = await loadRankers();
const orders = Array.from({ length: SEEDS }, (_, i) => shuffled(rules, 1000 + i));

/**
 * Mean metrics of `rank` over `taskList` and the seeded orders, plus each task's nDCG@10 and, with
 * `popular`, how often the first result was a popular rule the task does not label.
 */
function evaluate(rank, taskList, popular) {
  const summaries = [];
  const perTask = new Map(taskList.map((t) => [t.id, 0]));
  let popularFirst = 0;
  for (const order of orders) {
    const results = taskList.map((t) => {
      const pop = popular ? popular.get(t.id) : undefined;
      const ranking = rank(order, t.task, pop);
      if (pop !== undefined && ranking.length > 0 && pop.has(ranking[0])) popularFirst++;
      const scores = scoreTask(ranking, t.labels);
      perTask.set(t.id, perTask.get(t.id) + scores.ndcg10 / orders.length);
      return { group: t.group, scores };
    });
    summaries.push(summarize(results));
  }
  return { summary: averageSummaries(summaries), perTask, popularFirst: popularFirst / (orders.length * taskList.length) };
}

const fmt = (x) => x.toFixed(3);
const columns = [...GROUPS, "overall"];
const countsOf = (list) => Object.fromEntries([...GROUPS.map((g) => [g, list.filter((t) => t.group === g).length]), ["overall", list.length]]);

function qualityTable(results, list) {
  const counts = countsOf(list);
  return [
    `| ranker | ${columns.map((c) => `${c} (${counts[c]})`).join(" | ")} |`,
    `|---|${columns.map(() => "---:").join("|")}|`,
    ...Object.entries(results).map(([name, r]) => `| ${name} | ${columns.map((c) => `${fmt(r.summary[c].ndcg10)} / ${fmt(r.summary[c].recall5)} / ${fmt(r.summary[c].mrr)}`).join(" | ")} |`),
  ].join("\n");
}

// ------------------------------------------------------------------------------------------------
// Quality: all tasks, held-out tasks

const all = {};
for (const [name, rank] of Object.entries(rankers)) all[name] = evaluate(rank, tasks);
const held = {};
for (const [name, rank] of Object.entries(rankers)) held[name] = evaluate(rank, heldOut);
const dev = {};
const devTasks = tasks.filter((t) => splitOf(t.id) === "dev");
for (const [name, rank] of Object.entries(rankers)) dev[name] = evaluate(rank, devTasks);

const allTable = qualityTable(all, tasks);
const heldTable = qualityTable(held, heldOut);
console.log(`\nRetrieval quality, all ${tasks.length} tasks: nDCG@10 / Recall@5 / MRR, mean over ${SEEDS} rule orders\n`);
console.log(allTable);
console.log(`\nHeld-out tasks only (${heldOut.length}; never looked at while tuning)\n`);
console.log(heldTable);
console.log(`\nDev tasks only (${devTasks.length}; the half tuning looked at)\n`);
console.log(qualityTable(dev, devTasks));

if (flag("--per-task")) {
  const which = option("--split", "all");
  const names = Object.keys(rankers);
  console.log(`\nPer task nDCG@10 (${which})\n\n| task | group | split | ${names.join(" | ")} |\n|---|---|---|${names.map(() => "---:").join("|")}|`);
  for (const t of tasks) {
    const split = splitOf(t.id);
    if (which !== "all" && which !== split) continue;
    console.log(`| ${t.id} | ${t.group} | ${split} | ${names.map((n) => fmt(all[n].perTask.get(t.id))).join(" | ")} |`);
  }
}

// ------------------------------------------------------------------------------------------------
// Crowding: irrelevant rules with many helpful marks and proven maturity

let crowdingTable = "";
if (!flag("--no-crowding")) {
  const popular = new Map(tasks.map((t) => [t.id, popularFor(t)]));
  const meanPopular = [...popular.values()].reduce((s, p) => s + p.size, 0) / tasks.length;
  const rows = [];
  for (const name of ["original", "default"]) {
    const crowded = evaluate(rankers[name], tasks, popular);
    const neutral = all[name];
    rows.push(
      `| ${name} | ${columns.map((c) => `${fmt(neutral.summary[c].ndcg10)} → **${fmt(crowded.summary[c].ndcg10)}**`).join(" | ")} | ${(crowded.popularFirst * 100).toFixed(0)}% |`,
    );
  }
  const counts = countsOf(tasks);
  crowdingTable = [
    `| ranker | ${columns.map((c) => `${c} (${counts[c]})`).join(" | ")} | popular irrelevant rule ranked first |`,
    `|---|${columns.map(() => "---:").join("|")}|---:|`,
    ...rows,
  ].join("\n");
  console.log(
    `\nCrowding: nDCG@10 with neutral feedback → with ~${meanPopular.toFixed(0)} irrelevant rules per task made popular (proven, 10 fresh helpful marks; relevant rules neutral)\n`,
  );
  console.log(crowdingTable);
}

// ------------------------------------------------------------------------------------------------
// docs/benchmarks.md

if (!flag("--no-doc")) {
  const date = new Date().toISOString().slice(0, 10);
  const machine = `${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}`;
  const antiPatterns = rules.filter((r) => r.isNegative || r.kind === "anti_pattern").length;
  const counts = countsOf(tasks);
  const section = [
    `Measured ${date} on ${machine}. Each cell: **nDCG@10 / Recall@5 / MRR**, mean over the tasks of the group and over ${SEEDS} seeded shuffles of the rule order (keyword rankers break score ties by playbook order).`,
    "",
    `All ${tasks.length} tasks:`,
    "",
    allTable,
    "",
    `Held-out half only (${heldOut.length} tasks, never looked at while the default ranker was tuned):`,
    "",
    heldTable,
    ...(crowdingTable
      ? [
          "",
          `Crowding (feedback that favours the wrong rules): for every task about ${Math.round(POPULAR_SHARE * 100)}% of the rules it does not label are made popular (proven maturity, 10 helpful marks from the day before), the relevant rules stay neutral. nDCG@10 neutral → **with popular irrelevant rules**, and how often such a rule came first:`,
          "",
          crowdingTable,
        ]
      : []),
    "",
    `Data. \`bench/relevance/\` holds ${rules.length} playbook rules (${antiPatterns} of them anti-patterns) across ${new Set(rules.map((r) => r.category)).size} categories and ${tasks.length} tasks with graded labels (3 = the rule that solves it, 2 = directly useful, 1 = related, unlisted = 0): ` +
      `**paraphrase** (${counts.paraphrase}) describe the problem in other words than its rule, **ambiguous** (${counts.ambiguous}) share words with rules that mean something else (token, key, lock, hook, cache, context, worker…), ` +
      `**long** (${counts.long}) are agent-style reports with paths, stack traces and tool output, **direct** (${counts.direct}) share words with their rule. ` +
      "Gains are 2^grade − 1; Recall@5 and MRR count rules graded ≥ 2. Rankers see only a rule's text (content, tags, category) and, in the crowding variant, its feedback. " +
      "The tasks are split deterministically into a dev half and a held-out half (FNV-1a hash of the task id, odd = held out; `bench/relevance/split.mjs`).",
    "",
    "Rankers. `default` is what `cm context` ships (`rankBulletsForTask` from `packages/core/dist`): BM25F over content, tags and category (k1 1.2; field weights 1 / 1.5 / 0.5, length normalisation b 0.75 / 0.3 / 0), identifier splitting (`useEffect` → use, effect, useeffect), a light Porter-style stemmer, stop words, noise filtering for pasted logs (timestamps, hex ids, long numbers, uninformative path segments), " +
      "the coding-domain concept map (`packages/core/src/domain/lexical/concepts.ts`: about 200 reviewed groups of phrasings of the same problem — logged out ↔ session secret regenerated, OOMKilled ↔ memory leak ↔ heap limit, N+1 ↔ eager loading — matched as phrases in tasks and rules and scored as shared pseudo-terms at 0.8 of a word's weight), " +
      "a proximity bonus for adjacent task words that are near each other in the rule, and feedback as a bounded factor (0.85–1.15) on relevance. " +
      "`original` is the original cm's keyword scoring re-implemented from reference §5.12 (relevance × max(0.1, effective score)); `bm25` is Okapi BM25 (k1 1.2, b 0.75) with identifier splitting and a Porter stemmer, `bm25-nostem` without stemming.",
    "",
    "Method. The split was fixed before any tuning. The default ranker's parameters (field weights, expansion weight, proximity weight) and the concept map were chosen by looking at dev tasks only: per-task failures on dev were inspected and generic fixes made (stop-word particles, `sign in`/`log in` normalisation, phrases that reduce to one ambiguous word removed). " +
      "The held-out table was first computed once the ranker was final; the only ranking change after that was to stop a category-only match from qualifying a rule (a `cm context` output concern: it surfaced every rule of a category in the tail), which left the top 10 of every task unchanged. " +
      "The expansion weight kept rising on dev up to and beyond 1.0; it was set to 0.8 so that literal words still count more than a concept match, and because the concept map was reviewed against dev failures (so dev overstates its value). " +
      "Before the split was made, the texts of eight held-out paraphrase tasks (p02, p04, p06, p08, p11, p13, p15, p17) had been seen once in a file preview; phrasings specific to them were deliberately left out of the concept map, but that exposure is a leak the held-out numbers cannot rule out.",
    "",
    "Limits. Rules, tasks and labels were written for this project by one author (an AI agent session), with no second annotator and no agreement measure (see bench/relevance/README.md). " +
      "The concept map was written by the same kind of author and reviewed against the rules and the dev tasks, so it knows this benchmark's vocabulary better than it knows a real user's; on paraphrase tasks whose phrasing no group covers (e.g. \"editing the digits in the address bar shows a stranger's purchase\" needs IDOR knowledge the map only partly has) the default ranker is still at the mercy of chance word overlaps, and a stemmer conflates some words (profile/profiler, typed/type). " +
      "Held-out groups have 13–16 tasks: differences of a few hundredths are noise. Semantic retrieval (embeddings) would address paraphrases without hand-written phrasings; the ranker accepts semantic scores (`RankOptions.semantic`) but this benchmark measures the offline lexical mode only.",
  ].join("\n");
  updateBenchmarkDoc("relevance", "Retrieval quality", section);
  console.log("\ndocs/benchmarks.md updated (bench:relevance).");
}
