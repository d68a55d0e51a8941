// The rankers the relevance benchmark compares. Each is `(rules, task) → rule ids, best first`;
// a rule that a ranker considers unrelated is simply absent from its list. `rules` are the records
// of rules.json ({id, content, category, tags, kind?, isNegative?}).
//
//   default      our ranker as shipped (`rankBulletsForTask` from the built @cass-memory/core,
//                packages/core/dist): BM25F, identifier splitting, stemming, concept map, proximity
//   original     the original cm's keyword scoring, written here from the description in
//                reference §5.12 / §5.1 (independent of our code)
//   bm25         Okapi BM25 over content + tags + category, identifier splitting and a Porter stemmer
//   bm25-nostem  the same without stemming
//
// Feedback is neutral for all of them (no events, candidate maturity) unless a ranker is given a
// `popular` set (the crowding variant, see loadRankers).
import { existsSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

// ---------------------------------------------------------------------------------------------
// Porter stemmer (M. F. Porter, 1980: steps 1a–5b), for lower-case ASCII words.

const isVowelAt = (w, i) => {
  const c = w[i];
  if (c === "a" || c === "e" || c === "i" || c === "o" || c === "u") return true;
  // y is a vowel when it follows a consonant.
  return c === "y" && i > 0 && !isVowelAt(w, i - 1);
};

/** Porter's m: the number of vowel→consonant transitions in `stem`. */
function measure(stem) {
  let m = 0;
  let prevVowel = false;
  for (let i = 0; i < stem.length; i++) {
    const v = isVowelAt(stem, i);
    if (prevVowel && !v) m++;
    prevVowel = v;
  }
  return m;
}

function hasVowel(stem) {
  for (let i = 0; i < stem.length; i++) if (isVowelAt(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(w) {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && !isVowelAt(w, n - 1);
}

/** consonant–vowel–consonant at the end, the last consonant not w, x or y. */
function endsCvc(w) {
  const n = w.length;
  if (n < 3) return false;
  if (isVowelAt(w, n - 1) || !isVowelAt(w, n - 2) || isVowelAt(w, n - 3)) return false;
  const last = w[n - 1];
  return last !== "w" && last !== "x" && last !== "y";
}

/**
 * Replaces the first suffix of `rules` (ordered so that a longer suffix comes before any suffix of
 * it) that `w` ends with, when `cond(stem)` holds. Only that suffix is tried, as in Porter's paper.
 */
function replaceSuffix(w, rules, cond) {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    return cond(stem, suffix) ? stem + replacement : w;
  }
  return w;
}

const STEP2 = [
  ["ational", "ate"], ["tional", "tion"], ["enci", "ence"], ["anci", "ance"], ["izer", "ize"], ["bli", "ble"],
  ["alli", "al"], ["entli", "ent"], ["eli", "e"], ["ousli", "ous"], ["ization", "ize"], ["ation", "ate"],
  ["ator", "ate"], ["alism", "al"], ["iveness", "ive"], ["fulness", "ful"], ["ousness", "ous"], ["aliti", "al"],
  ["iviti", "ive"], ["biliti", "ble"], ["logi", "log"],
];
const STEP3 = [["icate", "ic"], ["ative", ""], ["alize", "al"], ["iciti", "ic"], ["ical", "ic"], ["ful", ""], ["ness", ""]];
const STEP4 = [
  "al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti",
  "ous", "ive", "ize",
]
  // Longest first, so that e.g. "ement" is tried before "ment" and "ent".
  .sort((a, b) => b.length - a.length)
  .map((s) => [s, ""]);

export function porterStem(word) {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = word;

  // Step 1a: plurals.
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (!w.endsWith("ss") && w.endsWith("s")) w = w.slice(0, -1);

  // Step 1b: -eed, -ed, -ing.
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else {
    let cut = null;
    if (w.endsWith("ed") && hasVowel(w.slice(0, -2))) cut = w.slice(0, -2);
    else if (w.endsWith("ing") && hasVowel(w.slice(0, -3))) cut = w.slice(0, -3);
    if (cut !== null) {
      w = cut;
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (endsDoubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
      else if (measure(w) === 1 && endsCvc(w)) w += "e";
    }
  }

  // Step 1c: y → i after a vowel-containing stem.
  if (w.endsWith("y") && hasVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;

  // Steps 2–4: derivational suffixes.
  w = replaceSuffix(w, STEP2, (stem) => measure(stem) > 0);
  w = replaceSuffix(w, STEP3, (stem) => measure(stem) > 0);
  w = replaceSuffix(w, STEP4, (stem, suffix) => measure(stem) > 1 && (suffix !== "ion" || /[st]$/.test(stem)));

  // Step 5a: final e.
  if (w.endsWith("e")) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  // Step 5b: -ll → -l when m > 1.
  if (measure(w) > 1 && w.endsWith("ll")) w = w.slice(0, -1);
  return w;
}

// ---------------------------------------------------------------------------------------------
// Tokeniser for BM25: identifier-aware words.

const STOP_WORDS = new Set(
  ("a an the and or but if then than so of to in on at by for with from into onto over under as is are was were be been " +
    "being am it its this that these those there here we our us you your i me my they them their he him his she her " +
    "what which who whom whose when where why how do does did done doing has have had having can could should would " +
    "will shall may might must about also just very too such some any each every all both either own same other " +
    "s t").split(" "),
);

/** Compound identifiers: runs of letters/digits joined by `_`, `.` or `-`. */
const COMPOUND = /[A-Za-z0-9]+(?:[_.\-][A-Za-z0-9]+)*/g;
/** Boundaries inside a part: lower/digit→Upper (`useEffect`) and ACRONYMWord (`HTTPServer`). */
const CAMEL = /(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])/;

/**
 * Words of `text`: compound identifiers are split into their parts (camelCase, snake_case,
 * kebab-case, dotted) and also kept whole without separators (`useEffect` → use, effect,
 * useeffect); lower-cased; stop words and one-character words dropped; optionally stemmed.
 */
export function analyze(text, { stem = true } = {}) {
  const out = [];
  const push = (word) => {
    if (word.length < 2 || STOP_WORDS.has(word)) return;
    out.push(stem ? porterStem(word) : word);
  };
  for (const compound of text.match(COMPOUND) ?? []) {
    const parts = compound.split(/[_.\-]/).flatMap((p) => p.split(CAMEL)).map((p) => p.toLowerCase());
    for (const part of parts) push(part);
    if (parts.length > 1) push(parts.join(""));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// BM25

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** The text of a rule that BM25 indexes: content, tags and category. */
export const ruleText = (rule) => `${rule.content} ${(rule.tags ?? []).join(" ")} ${rule.category ?? ""}`;

/** An inverted index over `rules` with a `search(query)` that returns ids by BM25 score. */
export function createBm25(rules, { stem = true, k1 = BM25_K1, b = BM25_B } = {}) {
  const postings = new Map(); // term → [[docIndex, tf], ...]
  const lengths = new Float64Array(rules.length);
  rules.forEach((rule, doc) => {
    const terms = analyze(ruleText(rule), { stem });
    lengths[doc] = terms.length;
    const tf = new Map();
    for (const term of terms) tf.set(term, (tf.get(term) ?? 0) + 1);
    for (const [term, count] of tf) {
      let list = postings.get(term);
      if (!list) postings.set(term, (list = []));
      list.push([doc, count]);
    }
  });
  const n = rules.length;
  const avgdl = n === 0 ? 0 : lengths.reduce((s, x) => s + x, 0) / n;

  return {
    search(query) {
      const scores = new Float64Array(n);
      // Each distinct query term counts once: long pasted logs repeat words a lot.
      for (const term of new Set(analyze(query, { stem }))) {
        const list = postings.get(term);
        if (!list) continue;
        const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
        for (const [doc, tf] of list) {
          scores[doc] += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * lengths[doc]) / avgdl));
        }
      }
      const hits = [];
      for (let doc = 0; doc < n; doc++) if (scores[doc] > 0) hits.push(doc);
      hits.sort((x, y) => scores[y] - scores[x] || x - y);
      return hits.map((doc) => rules[doc].id);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The original cm's relevance scoring (reference §5.1 tokenize/extractKeywords, §5.12 items 2–5).

const ORIGINAL_TOKEN = /[a-z0-9]+(?:[._\-+]+[a-z0-9]+)*[+#]*|[a-z0-9]+[+#]*/g;
const ORIGINAL_STOP_WORDS = new Set(
  ("the a an is are was were be been have has had do does did will would could should can to of in for on with at by " +
    "from as into through during before after and or but if when where why how this that these those what which who " +
    "there here i you he she it we they me him her us them const var let import export return null undefined true " +
    "false async await new").split(" "),
);

export function originalTokenize(text) {
  return (text.toLowerCase().match(ORIGINAL_TOKEN) ?? []).filter((t) => t.length >= 2);
}

/** The task's keywords: tokens minus stop words, by frequency (ties in first-seen order), top 10. */
export function originalKeywords(task) {
  const counts = new Map();
  for (const token of originalTokenize(task)) {
    if (!ORIGINAL_STOP_WORDS.has(token)) counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([k]) => k);
}

/** Keyword score: +3 per keyword that is a content token, else +1 if a substring; +5 per tag match. */
export function originalRelevance(rule, keywords) {
  const lower = rule.content.toLowerCase();
  const tokens = new Set(originalTokenize(rule.content));
  const tags = (rule.tags ?? []).map((t) => t.toLowerCase());
  let score = 0;
  for (const k of new Set(keywords)) {
    if (tokens.has(k)) score += 3;
    else if (lower.includes(k)) score += 1;
    if (tags.includes(k)) score += 5;
  }
  return score;
}

/**
 * Ranks like the original `cm context`: final = relevance × max(0.1, effectiveScore), rules with
 * relevance < 0.1 dropped, sorted by final then relevance (stable). `effectiveScore` is neutral
 * (0 for every rule, as for a new playbook) unless given.
 */
export function originalRank(rules, task, { effectiveScore = () => 0, minRelevance = 0.1 } = {}) {
  const keywords = originalKeywords(task);
  const scored = [];
  rules.forEach((rule, order) => {
    const relevance = originalRelevance(rule, keywords);
    if (relevance < minRelevance) return;
    scored.push({ id: rule.id, relevance, final: relevance * Math.max(0.1, effectiveScore(rule)), order });
  });
  scored.sort((a, b) => b.final - a.final || b.relevance - a.relevance || a.order - b.order);
  return scored.map((s) => s.id);
}

// ---------------------------------------------------------------------------------------------
// Our ranker, from the build.

/** Imports the built @cass-memory/core (index and testing entry points); run `pnpm build` first. */
export async function loadCore() {
  const index = `${root}packages/core/dist/index.js`;
  const testing = `${root}packages/core/dist/testing.js`;
  if (!existsSync(index) || !existsSync(testing)) {
    throw new Error("packages/core/dist is missing: run `pnpm build` first.");
  }
  const [core, coreTesting] = await Promise.all([import(pathToFileURL(index).href), import(pathToFileURL(testing).href)]);
  return { core, testing: coreTesting };
}

/** Maturity and feedback of a "popular" rule in the crowding variant: proven, 10 helpful marks a day old. */
export const POPULAR_HELPFUL = 10;

/**
 * Playbook bullets for benchmark rules: active, candidate maturity, no feedback events, so the
 * effective score is the same for all of them and only relevance orders the list. Rules whose id is
 * in `popular` are proven instead, with POPULAR_HELPFUL helpful marks from the day before BENCH_NOW.
 */
export function rulesToBullets(testing, rules, popular = new Set()) {
  const marked = new Date(BENCH_NOW.getTime() - 86_400_000).toISOString();
  return rules.map((rule) => {
    const isPopular = popular.has(rule.id);
    return testing.createTestBullet({
      id: rule.id,
      content: rule.content,
      category: rule.category,
      tags: [...(rule.tags ?? [])],
      kind: rule.kind ?? "workflow_rule",
      isNegative: rule.isNegative === true,
      type: rule.isNegative === true || rule.kind === "anti_pattern" ? "anti-pattern" : "rule",
      state: "active",
      ...(isPopular
        ? {
            maturity: "proven",
            helpfulCount: POPULAR_HELPFUL,
            feedbackEvents: Array.from({ length: POPULAR_HELPFUL }, () => ({ type: "helpful", timestamp: marked })),
          }
        : {}),
    });
  });
}

/** Fixed evaluation time for our ranker. */
export const BENCH_NOW = new Date("2026-11-23T00:00:00Z");

/** The original's effective score of a popular rule (10 fresh helpful × proven 1.5) and of a neutral one. */
export const ORIGINAL_POPULAR_EFFECTIVE = POPULAR_HELPFUL * 1.5;

/**
 * The rankers by name, each `(rules, task, popular?) → ids`, where `popular` (a Set of rule ids)
 * turns those rules into heavily used, proven rules for `default` and `original` (the keyword-only
 * baselines ignore feedback). Indexes are built once per rules array (and popular set).
 */
export async function loadRankers() {
  const { core, testing } = await loadCore();
  const config = core.defaultConfig();
  const bulletCache = new WeakMap();
  const noPopular = new Set();
  const bulletsFor = (rules, popular) => {
    let byPopular = bulletCache.get(rules);
    if (byPopular === undefined) bulletCache.set(rules, (byPopular = new Map()));
    let bullets = byPopular.get(popular);
    if (bullets === undefined) {
      // Only the neutral set is kept: popular sets differ per task.
      if (popular !== noPopular) byPopular.clear();
      byPopular.set(popular, (bullets = rulesToBullets(testing, rules, popular)));
    }
    return bullets;
  };
  const cached = (build) => {
    const cache = new WeakMap();
    return (rules) => {
      let value = cache.get(rules);
      if (value === undefined) cache.set(rules, (value = build(rules)));
      return value;
    };
  };
  const bm25For = cached((rules) => createBm25(rules, { stem: true }));
  const bm25NoStemFor = cached((rules) => createBm25(rules, { stem: false }));

  return {
    default: (rules, task, popular = noPopular) => {
      const bullets = bulletsFor(rules, popular);
      const result = core.rankBulletsForTask(bullets, task, {
        now: BENCH_NOW,
        config,
        limit: bullets.length,
        minRelevance: config.minRelevanceScore,
      });
      return result.ranked.map((b) => b.id);
    },
    original: (rules, task, popular = noPopular) =>
      originalRank(rules, task, { effectiveScore: (rule) => (popular.has(rule.id) ? ORIGINAL_POPULAR_EFFECTIVE : 0) }),
    bm25: (rules, task) => bm25For(rules).search(task),
    "bm25-nostem": (rules, task) => bm25NoStemFor(rules).search(task),
  };
}
