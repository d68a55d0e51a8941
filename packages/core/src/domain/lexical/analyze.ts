import { stem } from "./stem.js";

/**
 * Lexical analysis for ranking: turns rule text and task descriptions into comparable terms.
 *
 * - Identifiers are split into their words and also kept joined: `useEffect` → use, effect,
 *   useeffect; `user_id`, `ERR_MODULE_NOT_FOUND`, `node.js`, `kebab-case` likewise. `c++`, `c#`
 *   and `n+1` stay whole.
 * - Words are lower-cased and stemmed (stem.ts), stop words dropped.
 * - Noise that agents paste into tasks is dropped before anything else: URLs' schemes, dates,
 *   times, `file:line:col` positions, hex addresses and ids (`0x5e1c6c0`, `a91c2e0`, UUIDs), numbers
 *   with 1–2 or 5+ digits, and path segments that say nothing (`/home/…/src/…/dist`). Three- and
 *   four-digit numbers are kept (HTTP statuses, exit codes, ports: 401, 137, 5432).
 */

export interface Analysis {
  /**
   * Stems of the text's words without stop words, in text order: the stream concept phrases are
   * matched on. Particles (PARTICLES: back, up, out…) are in the stream but are not terms of their
   * own (see isParticle).
   */
  terms: string[];
  /** The lower-case surface word each term was stemmed from (same indexes as `terms`). */
  surfaces: string[];
  /** Stems of the joined forms of compound identifiers (`useeffect`, `userid`, `n+1`): extra terms, not in the stream. */
  joined: string[];
  /** Surface forms of `joined`. */
  joinedSurfaces: string[];
}

/** Function words and agent filler that carry no topic. */
export const ANALYZER_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the and or nor but if then else than so as of to in on at by for with from into onto upon over under " +
    "about above below between through during before after since until while within without via per across " +
    "is are was were be been being am do does did done doing has have had having can could should would will shall " +
    "may might must need needs needed ought " +
    "i me my mine myself we us our ours you your yours he him his she her it its they them their theirs " +
    "this that these those there here what which who whom whose when where why how whether " +
    "all any both each every either neither some such no not nor only own same other another more most less least " +
    "very too also just even still yet already quite rather really almost ever never always often once " +
    "get gets got getting gotten make makes made making let lets say says said see seen look looks looked " +
    "want wants wanted try tries tried trying seem seems seemed thing things way something anything everything nothing " +
    "someone anyone everyone " +
    "please thanks thank hi hello ok okay yes yeah hey " +
    "instead now right actually basically currently usually probably maybe perhaps anyway somehow able " +
    "etc eg ie vs"
  ).split(" "),
);

/**
 * Particles of phrasal verbs: they change the meaning inside a phrase ("log out", "roll back",
 * "back off", "scale up", "shut down") but match unrelated text as words of their own, so they are
 * kept in the phrase stream and not indexed or searched as terms.
 */
export const PARTICLES: ReadonlySet<string> = new Set("again back up out off down away along around".split(" "));

/** Whether a stem from Analysis.terms is a particle (phrase-only, not a term). */
export function isParticle(term: string): boolean {
  return PARTICLES.has(term);
}

/** Prefixes that hyphenated words start with (re-sent, pre-commit, non-root): kept only in the joined form. */
const PREFIXES: ReadonlySet<string> = new Set("re pre non un co de anti semi".split(" "));

/** Path segments that locate a file without saying what it is about. */
const PATH_NOISE: ReadonlySet<string> = new Set(
  "home usr opt tmp var mnt root users lib lib64 bin sbin src dist build out node_modules site-packages dist-packages internal anonymous file https http www".split(
    " ",
  ),
);

// Noise removed from the raw text before tokenising (each replaced by a space).
const URL_SCHEME = /\b[a-z][a-z0-9+.-]*:\/\//gi;
const ISO_DATETIME = /\b\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b/gi;
const CLOCK_TIME = /\b\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:\s?[ap]m)?\b/gi;
const LINE_COLUMN = /:\d+:\d+\b/g;
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const APOSTROPHE_S = /['’]s\b/gi;
const CANNOT = /\bcan['’]t\b/gi;
const NEGATION = /n['’]t\b/gi;
/**
 * "sign in", "log in" and friends: the particle is a stop word, so without this they would reduce
 * to "sign"/"log" and match code signing and logging. "logged in" followed by an article or a
 * place ("logged in the console") is about logging and stays as it is.
 */
const SIGN_IN = /\b(?:sign|signs|signed|signing)[\s-]+(?:in|into|on)\b/gi;
const LOG_IN = /\b(?:log[\s-]+in(?:to)?|logging[\s-]+in(?:to)?|logged[\s-]+in(?:to)?(?!\s+(?:the|a|an|our|your|my|their|its|json|stdout|stderr|production|prod)\b))\b/gi;

/** Runs of two or more `/`- or `\`-separated segments: file paths, URL paths, module specifiers. */
const PATH_LIKE = /[\p{L}\p{N}_.@~+-]*(?:[/\\][\p{L}\p{N}_.@~+-]*){2,}/gu;
/** A compound: letters/digits joined by `.`, `_`, `-`, `+`, `#`, optionally ending in `++`, `+` or `#`. */
const COMPOUND = /[\p{L}\p{N}]+(?:[._\-+#]+[\p{L}\p{N}]+)*(?:\+\+|\+|#)?/gu;
const SEPARATORS = /[._\-+#]+/;
/** Word boundaries inside a part: lower/digit → Upper (`useEffect`) and ACRONYM → Word (`HTTPServer`, not `IDs`). */
const CAMEL = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll}{2})/u;

/** Numbers worth keeping: three or four digits (statuses, exit codes, ports). */
function isNoiseNumber(word: string): boolean {
  return /^\d+$/.test(word) && (word.length < 3 || word.length > 4);
}

/** Hex literals and hash-like ids (`0x5e1c6c0`, `a91c2e0`, `7c9f6d8b5`): many letter/digit alternations. */
function isHashLike(word: string): boolean {
  if (/^0x[0-9a-f]+$/.test(word)) return true;
  if (word.length < 6) return false;
  let alternations = 0;
  let prevDigit = /\d/.test(word[0]!);
  for (let i = 1; i < word.length; i++) {
    const digit = word.charCodeAt(i) >= 48 && word.charCodeAt(i) <= 57;
    if (digit !== prevDigit) alternations++;
    prevDigit = digit;
  }
  return alternations >= 3;
}

/** True for tokens that are noise in a task: hash-like ids, hex literals, long or very short numbers. */
export function isNoiseWord(word: string): boolean {
  return isNoiseNumber(word) || isHashLike(word);
}

/** The text with dates, times, line:column positions, UUIDs and URL schemes blanked out (each regex only when it can apply). */
function stripNoise(text: string): string {
  let t = text;
  if (t.includes("://")) t = t.replace(URL_SCHEME, " ");
  if (/\d/.test(t)) {
    t = t.replace(UUID, " ").replace(ISO_DATETIME, " ");
    if (t.includes(":")) t = t.replace(LINE_COLUMN, " ").replace(CLOCK_TIME, " ");
  }
  if (t.includes("'") || t.includes("’")) t = t.replace(APOSTROPHE_S, "").replace(CANNOT, "cannot").replace(NEGATION, " not");
  if (/sign|log/i.test(t)) t = t.replace(SIGN_IN, " login ").replace(LOG_IN, " login ");
  return t;
}

/** Path-like runs become their meaningful segments, separated by spaces. */
function explodePaths(text: string): string {
  if (!text.includes("/") && !text.includes("\\")) return text;
  return text.replace(PATH_LIKE, (path) =>
    path
      .split(/[/\\]+/)
      .filter((segment) => segment !== "" && !PATH_NOISE.has(segment.toLowerCase()))
      .join(" "),
  );
}

interface Sink {
  terms: string[];
  surfaces: string[];
  joined: string[];
  joinedSurfaces: string[];
}

const PLAIN_LOWER = /^[a-z]+$/;
const HAS_UPPER = /\p{Lu}/u;
const HAS_LETTER = /\p{L}/u;

function addWord(word: string, out: Sink, surfaces: boolean): void {
  if (word.length < 2 || ANALYZER_STOP_WORDS.has(word) || isNoiseWord(word)) return;
  out.terms.push(stem(word));
  if (surfaces) out.surfaces.push(word);
}

function addCompound(compound: string, out: Sink, surfaces: boolean): void {
  // Fast path: a plain lower-case word (most words of most texts).
  if (PLAIN_LOWER.test(compound)) {
    addWord(compound, out, surfaces);
    return;
  }
  const pieces = compound.split(SEPARATORS);
  const words: string[] = [];
  for (const piece of pieces) {
    if (piece === "") continue;
    if (!HAS_UPPER.test(piece)) {
      words.push(piece);
      continue;
    }
    for (const part of piece.split(CAMEL)) if (part !== "") words.push(part.toLowerCase());
  }
  for (let i = 0; i < words.length; i++) {
    if (i === 0 && words.length > 1 && PREFIXES.has(words[0]!)) continue;
    addWord(words[i]!, out, surfaces);
  }
  // Joined form: identifiers made of several words, and symbols such as c++, c#, n+1.
  const lower = compound.toLowerCase();
  if ((lower.includes("+") || lower.includes("#")) && lower.length >= 2 && lower.length <= 32) {
    out.joined.push(lower);
    if (surfaces) out.joinedSurfaces.push(lower);
    return;
  }
  if (words.length < 2 || lower.length > 32) return;
  let alphaParts = 0;
  for (const word of words) if (HAS_LETTER.test(word)) alphaParts++;
  if (alphaParts < 2) return;
  const joined = words.join("");
  if (isNoiseWord(joined)) return;
  out.joined.push(stem(joined));
  if (surfaces) out.joinedSurfaces.push(joined);
}

/**
 * Analyses `text` (see the module comment). With `surfaces` false the surface arrays stay empty
 * (indexing does not need them).
 */
export function analyze(text: string, surfaces = true): Analysis {
  const out: Sink = { terms: [], surfaces: [], joined: [], joinedSurfaces: [] };
  if (!text) return out;
  const cleaned = explodePaths(stripNoise(text));
  COMPOUND.lastIndex = 0;
  for (let m = COMPOUND.exec(cleaned); m !== null; m = COMPOUND.exec(cleaned)) addCompound(m[0], out, surfaces);
  return out;
}

const SHORT_LIMIT = 64;
const SHORT_CACHE_LIMIT = 10_000;
const shortCache = new Map<string, Analysis>();

/**
 * analyze() for short strings that recur (tags, categories), cached. Callers must not modify the
 * returned arrays.
 */
export function analyzeShort(text: string): Analysis {
  if (text.length > SHORT_LIMIT) return analyze(text);
  let hit = shortCache.get(text);
  if (hit === undefined) {
    if (shortCache.size >= SHORT_CACHE_LIMIT) shortCache.clear();
    shortCache.set(text, (hit = analyze(text)));
  }
  return hit;
}
