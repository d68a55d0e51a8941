// Retrieval metrics for the relevance benchmark. Pure functions: a ranking is an array of rule ids,
// best first; labels map rule id → graded relevance 0..3 (unlisted ids count as 0).
//
//   nDCG@k     graded gain 2^g − 1, discount 1 / log2(rank + 1), normalised by the ideal ordering
//   Recall@k   share of the rules graded ≥ 2 that appear in the top k
//   MRR        1 / rank of the first rule graded ≥ 2 (0 when none is returned)

/** Grade of rules that count as "relevant" for Recall and MRR. */
export const RELEVANT_GRADE = 2;

function gradeOf(labels, id) {
  const g = labels[id];
  return typeof g === "number" && g > 0 ? g : 0;
}

/** Discounted cumulative gain of a list of grades (in rank order), over the first `k`. */
export function dcg(grades, k) {
  let sum = 0;
  const n = Math.min(k, grades.length);
  for (let i = 0; i < n; i++) {
    const g = grades[i];
    if (g > 0) sum += (2 ** g - 1) / Math.log2(i + 2);
  }
  return sum;
}

/** nDCG@k of `ranking` against `labels`; 0 when the task has no graded rule. */
export function ndcgAt(ranking, labels, k = 10) {
  const ideal = Object.values(labels)
    .filter((g) => typeof g === "number" && g > 0)
    .sort((a, b) => b - a);
  const best = dcg(ideal, k);
  if (best === 0) return 0;
  return dcg(ranking.slice(0, k).map((id) => gradeOf(labels, id)), k) / best;
}

/** Share of the rules graded ≥ `minGrade` found in the first `k` of `ranking` (0 when there are none). */
export function recallAt(ranking, labels, k = 5, minGrade = RELEVANT_GRADE) {
  const relevant = Object.keys(labels).filter((id) => gradeOf(labels, id) >= minGrade);
  if (relevant.length === 0) return 0;
  const top = new Set(ranking.slice(0, k));
  let found = 0;
  for (const id of relevant) if (top.has(id)) found++;
  return found / relevant.length;
}

/** 1 / rank of the first rule graded ≥ `minGrade`; 0 when none is in the ranking. */
export function reciprocalRank(ranking, labels, minGrade = RELEVANT_GRADE) {
  for (let i = 0; i < ranking.length; i++) if (gradeOf(labels, ranking[i]) >= minGrade) return 1 / (i + 1);
  return 0;
}

/** All three metrics of one task. Duplicate ids in a ranking are a ranker bug: rejected. */
export function scoreTask(ranking, labels) {
  if (new Set(ranking).size !== ranking.length) throw new Error("ranking contains duplicate ids");
  return { ndcg10: ndcgAt(ranking, labels, 10), recall5: recallAt(ranking, labels, 5), mrr: reciprocalRank(ranking, labels) };
}

export const METRICS = ["ndcg10", "recall5", "mrr"];

/**
 * Averages per-task scores by group and overall (every task weighs the same in "overall").
 * `results` is an array of `{group, scores: {ndcg10, recall5, mrr}}`; the answer maps each group
 * (in first-seen order, then "overall") to `{n, ndcg10, recall5, mrr}`.
 */
export function summarize(results) {
  const groups = new Map();
  const add = (name, scores) => {
    let acc = groups.get(name);
    if (!acc) groups.set(name, (acc = { n: 0, ndcg10: 0, recall5: 0, mrr: 0 }));
    acc.n++;
    for (const m of METRICS) acc[m] += scores[m];
  };
  for (const r of results) add(r.group, r.scores);
  for (const r of results) add("overall", r.scores);
  const out = {};
  for (const [name, acc] of groups) {
    out[name] = { n: acc.n };
    for (const m of METRICS) out[name][m] = acc.n === 0 ? 0 : acc[m] / acc.n;
  }
  return out;
}

/** Element-wise mean of several `summarize` results with the same groups (e.g. over shuffles). */
export function averageSummaries(summaries) {
  if (summaries.length === 0) return {};
  const out = {};
  for (const name of Object.keys(summaries[0])) {
    out[name] = { n: summaries[0][name].n };
    for (const m of METRICS) out[name][m] = summaries.reduce((s, x) => s + x[name][m], 0) / summaries.length;
  }
  return out;
}
