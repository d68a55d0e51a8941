/**
 * A light English stemmer for ranking: suffix stripping in the manner of Porter's algorithm
 * (plurals, -ed/-ing, -y, derivational suffixes such as -ational, -ization, -ness, -ment, final -e),
 * written for lower-case ASCII words. It only has to map the inflections of one word onto the
 * same key on both sides of a comparison (rule text and task), so its stems need not be words:
 * "signed", "signing" and "signs" all become "sign"; "configuration" and "configure" "configur".
 *
 * Deviations from Porter's paper: a word ending in "us" or "ss" keeps its "s" (status, bus, pass);
 * words shorter than 4 characters and anything that is not plain a–z are returned unchanged; and a
 * small cache makes repeated words cheap (ranking stems every word of every rule once per index).
 */

const VOWELS = new Set(["a", "e", "i", "o", "u"]);

/** Whether w[i] is a consonant in Porter's sense (y is a vowel after a consonant). */
function isConsonant(w: string, i: number): boolean {
  const c = w[i]!;
  if (VOWELS.has(c)) return false;
  if (c === "y") return i === 0 || !isConsonant(w, i - 1);
  return true;
}

/** Porter's measure m of `stem`: the number of vowel-run → consonant-run transitions. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    m++;
    while (i < n && isConsonant(stem, i)) i++;
  }
  return m;
}

function containsVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsWithDoubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
}

/** consonant–vowel–consonant at the end, where the last consonant is not w, x or y ("hop", not "how"). */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3 || !isConsonant(w, n - 1) || isConsonant(w, n - 2) || !isConsonant(w, n - 3)) return false;
  const last = w[n - 1];
  return last !== "w" && last !== "x" && last !== "y";
}

type SuffixRule = readonly [suffix: string, replacement: string];

/**
 * Applies the rule for the longest suffix of `w` in `rules` (sorted longest first) when the
 * remaining stem has a measure above `minMeasure`; only that one suffix is considered.
 */
function stripSuffix(w: string, rules: readonly SuffixRule[], minMeasure: number, extra?: (stem: string, suffix: string) => boolean): string {
  for (const [suffix, replacement] of rules) {
    if (!w.endsWith(suffix)) continue;
    const stem = w.slice(0, w.length - suffix.length);
    if (measure(stem) > minMeasure && (extra === undefined || extra(stem, suffix))) return stem + replacement;
    return w;
  }
  return w;
}

const byLength = (rules: SuffixRule[]): SuffixRule[] => rules.sort((a, b) => b[0].length - a[0].length);

const DERIVATIONAL: readonly SuffixRule[] = byLength([
  ["ational", "ate"],
  ["tional", "tion"],
  ["enci", "ence"],
  ["anci", "ance"],
  ["izer", "ize"],
  ["iser", "ize"],
  ["abli", "able"],
  ["alli", "al"],
  ["entli", "ent"],
  ["eli", "e"],
  ["ousli", "ous"],
  ["ization", "ize"],
  ["isation", "ize"],
  ["ation", "ate"],
  ["ator", "ate"],
  ["alism", "al"],
  ["iveness", "ive"],
  ["fulness", "ful"],
  ["ousness", "ous"],
  ["aliti", "al"],
  ["iviti", "ive"],
  ["biliti", "ble"],
]);

const ADJECTIVAL: readonly SuffixRule[] = byLength([
  ["icate", "ic"],
  ["ative", ""],
  ["alize", "al"],
  ["alise", "al"],
  ["iciti", "ic"],
  ["ical", "ic"],
  ["ful", ""],
  ["ness", ""],
]);

const RESIDUAL: readonly SuffixRule[] = byLength(
  ["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize", "ise"].map(
    (s): SuffixRule => [s, ""],
  ),
);

function stemUncached(word: string): string {
  let w = word;

  // Plurals and third person: -sses → -ss, -ies → -i, -s dropped (not after s or u).
  if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("ies")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us")) w = w.slice(0, -1);

  // -eed → -ee; -ed / -ing removed when the rest has a vowel, then tidy the new ending.
  if (w.endsWith("eed")) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else {
    let cut: string | null = null;
    if (w.endsWith("ed") && containsVowel(w.slice(0, -2))) cut = w.slice(0, -2);
    else if (w.endsWith("ing") && containsVowel(w.slice(0, -3))) cut = w.slice(0, -3);
    if (cut !== null) {
      w = cut;
      if (w.endsWith("at") || w.endsWith("bl") || w.endsWith("iz")) w += "e";
      else if (endsWithDoubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
      else if (measure(w) === 1 && endsCvc(w)) w += "e";
    }
  }

  // Final y after a vowel-containing stem → i (so "retry" and "retries" meet at "retri").
  if (w.endsWith("y") && w.length > 2 && containsVowel(w.slice(0, -1))) w = `${w.slice(0, -1)}i`;

  w = stripSuffix(w, DERIVATIONAL, 0);
  w = stripSuffix(w, ADJECTIVAL, 0);
  w = stripSuffix(w, RESIDUAL, 1, (stem, suffix) => suffix !== "ion" || stem.endsWith("s") || stem.endsWith("t"));

  // Final e removed when the stem is long enough, and -ll → -l.
  if (w.endsWith("e")) {
    const stem = w.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !endsCvc(stem))) w = stem;
  }
  if (w.endsWith("ll") && measure(w) > 1) w = w.slice(0, -1);
  return w;
}

const CACHE_LIMIT = 50_000;
const cache = new Map<string, string>();

/** The stem of a lower-case word; words that are not 4+ letters a–z are returned unchanged. */
export function stem(word: string): string {
  if (word.length < 4) return word;
  const hit = cache.get(word);
  if (hit !== undefined) return hit;
  const out = /^[a-z]+$/.test(word) ? stemUncached(word) : word;
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(word, out);
  return out;
}
