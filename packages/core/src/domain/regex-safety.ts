/**
 * A static check of regular expressions from users (trauma patterns, `--verify-regex`,
 * `sanitization.extraPatterns`): the pattern is parsed, never run, and refused when a backtracking
 * engine could take exponential or high-polynomial time on it.
 *
 * Shapes refused:
 *  1. A repeated group (`{m,n}` with n ≥ 2, `+`, `*`) whose body can match the empty string, or
 *     can match texts of different lengths while one repetition can end with a character the next
 *     can begin with: `(a+)+`, `(a*)*`, `(\w+\s?)+`, `(.*a){20}`, `(a?a)+`, `(\s*\w+)*`.
 *  2. A repeated group that is an alternation whose branches can begin with the same character
 *     (or two of which can match the empty string): `(a|a)*`, `(a|ab)+`, `(\d|\w)+`.
 *  3. Unbounded quantifiers in one sequence that can hand the same characters to each other (the
 *     earlier one can end with a character the later one can begin with, and everything between
 *     them is optional or made of characters the earlier one accepts), followed by anything that
 *     can fail (a chain at the very end of the pattern is never retried). Such a chain of k quantifiers costs about n^k steps per start position; where a match
 *     can start is limited only when the chain follows a required character the first quantifier
 *     does not accept, or when the pattern is anchored with `^` and the chain cannot cross a line
 *     break. Refused when k ≥ 3, or k = 2 without such a limit: `\s*\s*$`, `.*.*=.*`,
 *     `git.*push.*--force` (use `git\s+push\s+.*--force` or `^git.*push.*--force`).
 * Back-references are treated as matching any text of any length. Bounded repeats of 32 or more
 * count as unbounded in rule 3. The check is conservative: a few harmless shapes are refused
 * too (e.g. `(ab|c)+`, `(a[bc]*d?)+`); the error's hint says how to write them another way.
 */

// ---------------------------------------------------------------------------------------------
// Character sets: sorted, merged, inclusive ranges of UTF-16 code units.

type Range = readonly [number, number];
type CharSet = readonly Range[];

const MAX_CODE = 0xffff;
const EMPTY: CharSet = [];

function normalize(ranges: Range[]): CharSet {
  const sorted = ranges.filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: Array<[number, number]> = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function union(...sets: CharSet[]): CharSet {
  return normalize(sets.flatMap((s) => s.map((r) => [r[0], r[1]] as Range)));
}

function complement(set: CharSet): CharSet {
  const out: Range[] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CODE) out.push([next, MAX_CODE]);
  return out;
}

function intersects(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const [alo, ahi] = a[i]!;
    const [blo, bhi] = b[j]!;
    if (alo <= bhi && blo <= ahi) return true;
    if (ahi < bhi) i++;
    else j++;
  }
  return false;
}

function isSubset(a: CharSet, b: CharSet): boolean {
  return !intersects(a, complement(b));
}

/** Adds the other case of every letter up to U+024F (the pattern is compiled with `i`). */
function caseFold(set: CharSet): CharSet {
  const extra: Range[] = [];
  for (const [lo, hi] of set) {
    for (let c = lo; c <= Math.min(hi, 0x24f); c++) {
      const ch = String.fromCharCode(c);
      for (const other of [ch.toLowerCase(), ch.toUpperCase()]) {
        if (other.length === 1 && other !== ch) extra.push([other.charCodeAt(0), other.charCodeAt(0)]);
      }
    }
  }
  return extra.length === 0 ? set : union(set, extra);
}

const single = (c: number): CharSet => [[c, c]];
const DIGIT: CharSet = [[0x30, 0x39]];
const WORD: CharSet = normalize([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
const SPACE: CharSet = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: CharSet = normalize([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]);
const DOT: CharSet = complement(LINE_TERMINATORS);
const ANY: CharSet = [[0, MAX_CODE]];

// ---------------------------------------------------------------------------------------------
// A small parser for JavaScript regex syntax (no `u` flag, Annex B leniency). The pattern has
// already been compiled by `new RegExp` (never run), so only valid patterns reach it.

type GroupKind = "capture" | "group" | "lookahead" | "lookbehind";

type Node =
  | { type: "alt"; branches: Node[] }
  | { type: "seq"; items: Node[] }
  | { type: "group"; kind: GroupKind; body: Node }
  | { type: "quant"; body: Node; min: number; max: number; source: string }
  | { type: "char"; set: CharSet }
  | { type: "assert"; kind: "start" | "end" | "boundary" }
  | { type: "backref" };

const QUANT_CAP = 1_000_000;

class Parser {
  i = 0;
  constructor(
    private readonly p: string,
    private readonly namedGroups: boolean,
  ) {}

  parse(): Node {
    const node = this.alternation();
    return node;
  }

  private alternation(): Node {
    const branches: Node[] = [this.sequence()];
    while (this.p[this.i] === "|") {
      this.i++;
      branches.push(this.sequence());
    }
    return branches.length === 1 ? branches[0]! : { type: "alt", branches };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.i < this.p.length && this.p[this.i] !== "|" && this.p[this.i] !== ")") {
      const start = this.i;
      const atom = this.atom();
      items.push(this.quantifier(atom, start));
    }
    return { type: "seq", items };
  }

  private quantifier(atom: Node, start: number): Node {
    const c = this.p[this.i];
    let min: number;
    let max: number;
    if (c === "*") [min, max] = [0, Infinity];
    else if (c === "+") [min, max] = [1, Infinity];
    else if (c === "?") [min, max] = [0, 1];
    else if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(this.p.slice(this.i));
      if (m === null) return atom;
      min = Math.min(Number(m[1]), QUANT_CAP);
      max = m[2] === undefined ? min : m[3] === "" ? Infinity : Math.min(Number(m[3]), QUANT_CAP);
      this.i += m[0].length - 1;
    } else return atom;
    this.i++;
    if (this.p[this.i] === "?") this.i++;
    return this.quantifier({ type: "quant", body: atom, min, max, source: this.p.slice(start, this.i) }, start);
  }

  private atom(): Node {
    const c = this.p[this.i]!;
    this.i++;
    switch (c) {
      case "(":
        return this.group();
      case "[":
        return { type: "char", set: this.charClass() };
      case ".":
        return { type: "char", set: DOT };
      case "^":
        return { type: "assert", kind: "start" };
      case "$":
        return { type: "assert", kind: "end" };
      case "\\":
        return this.escape();
      default:
        return { type: "char", set: caseFold(single(c.charCodeAt(0))) };
    }
  }

  private group(): Node {
    let kind: GroupKind = "capture";
    const rest = this.p.slice(this.i);
    if (rest.startsWith("?:")) [kind, this.i] = ["group", this.i + 2];
    else if (rest.startsWith("?=") || rest.startsWith("?!")) [kind, this.i] = ["lookahead", this.i + 2];
    else if (rest.startsWith("?<=") || rest.startsWith("?<!")) [kind, this.i] = ["lookbehind", this.i + 3];
    else if (rest.startsWith("?<")) {
      const close = this.p.indexOf(">", this.i);
      this.i = close < 0 ? this.p.length : close + 1;
    }
    const body = this.alternation();
    if (this.p[this.i] === ")") this.i++;
    return { type: "group", kind, body };
  }

  /** An escape outside a class; `\` is already consumed. */
  private escape(): Node {
    const e = this.p[this.i] ?? "\\";
    if (e === "b" || e === "B") {
      this.i++;
      return { type: "assert", kind: "boundary" };
    }
    if (/[1-9]/.test(e)) {
      while (/[0-9]/.test(this.p[this.i] ?? "")) this.i++;
      return { type: "backref" };
    }
    if (e === "k" && this.namedGroups && this.p[this.i + 1] === "<") {
      const close = this.p.indexOf(">", this.i);
      this.i = close < 0 ? this.p.length : close + 1;
      return { type: "backref" };
    }
    return { type: "char", set: caseFold(this.escapeSet()) };
  }

  /**
   * The set of a character escape (`\` consumed, `this.i` at the escaped character), before case
   * folding.
   */
  private escapeSet(inClass = false): CharSet {
    const e = this.p[this.i] ?? "\\";
    this.i++;
    switch (e) {
      case "d":
        return DIGIT;
      case "D":
        return complement(DIGIT);
      case "w":
        return WORD;
      case "W":
        return complement(WORD);
      case "s":
        return SPACE;
      case "S":
        return complement(SPACE);
      case "n":
        return single(0x0a);
      case "r":
        return single(0x0d);
      case "t":
        return single(0x09);
      case "v":
        return single(0x0b);
      case "f":
        return single(0x0c);
      case "0":
        return single(0);
      case "b":
        return inClass ? single(0x08) : single(0x62);
      case "c": {
        const letter = this.p[this.i];
        if (letter !== undefined && /[a-z]/i.test(letter)) {
          this.i++;
          return single(letter.charCodeAt(0) % 32);
        }
        return single(0x5c);
      }
      case "x": {
        const hex = /^[0-9a-f]{2}/i.exec(this.p.slice(this.i));
        if (hex === null) return single(0x78);
        this.i += 2;
        return single(parseInt(hex[0], 16));
      }
      case "u": {
        const hex = /^[0-9a-f]{4}/i.exec(this.p.slice(this.i));
        if (hex === null) return single(0x75);
        this.i += 4;
        return single(parseInt(hex[0], 16));
      }
      default:
        return single(e.charCodeAt(0));
    }
  }

  /** A bracket class; `[` is already consumed. */
  private charClass(): CharSet {
    let negated = false;
    if (this.p[this.i] === "^") {
      negated = true;
      this.i++;
    }
    const parts: CharSet[] = [];
    while (this.i < this.p.length && this.p[this.i] !== "]") {
      const lo = this.classAtom();
      if (this.p[this.i] === "-" && this.p[this.i + 1] !== "]" && this.i + 1 < this.p.length) {
        this.i++;
        const hi = this.classAtom();
        if (lo.single !== null && hi.single !== null) {
          parts.push([[lo.single, hi.single]]);
          continue;
        }
        // A class escape on either side: the '-' is literal (Annex B).
        parts.push(lo.set, single(0x2d), hi.set);
        continue;
      }
      parts.push(lo.set);
    }
    if (this.p[this.i] === "]") this.i++;
    const set = caseFold(union(...parts));
    return negated ? complement(set) : set;
  }

  private classAtom(): { set: CharSet; single: number | null } {
    const c = this.p[this.i]!;
    this.i++;
    if (c !== "\\") return { set: single(c.charCodeAt(0)), single: c.charCodeAt(0) };
    const set = this.escapeSet(true);
    const only = set.length === 1 && set[0]![0] === set[0]![1] ? set[0]![0] : null;
    return { set, single: only };
  }
}

// ---------------------------------------------------------------------------------------------
// What each node can match: lengths and the characters it can begin with, end with and consume.

interface Info {
  min: number;
  max: number;
  first: CharSet;
  last: CharSet;
  chars: CharSet;
}

const ZERO: Info = { min: 0, max: 0, first: EMPTY, last: EMPTY, chars: EMPTY };

function infoOf(node: Node, memo: Map<Node, Info>): Info {
  const known = memo.get(node);
  if (known !== undefined) return known;
  let info: Info;
  switch (node.type) {
    case "char":
      info = { min: 1, max: 1, first: node.set, last: node.set, chars: node.set };
      break;
    case "assert":
      info = ZERO;
      break;
    case "backref":
      info = { min: 0, max: Infinity, first: ANY, last: ANY, chars: ANY };
      break;
    case "group":
      info = node.kind === "lookahead" || node.kind === "lookbehind" ? ZERO : infoOf(node.body, memo);
      break;
    case "alt": {
      const parts = node.branches.map((b) => infoOf(b, memo));
      info = {
        min: Math.min(...parts.map((p) => p.min)),
        max: Math.max(...parts.map((p) => p.max)),
        first: union(...parts.map((p) => p.first)),
        last: union(...parts.map((p) => p.last)),
        chars: union(...parts.map((p) => p.chars)),
      };
      break;
    }
    case "seq": {
      const parts = node.items.map((b) => infoOf(b, memo));
      const first: CharSet[] = [];
      for (const p of parts) {
        first.push(p.first);
        if (p.min > 0) break;
      }
      const last: CharSet[] = [];
      for (let k = parts.length - 1; k >= 0; k--) {
        last.push(parts[k]!.last);
        if (parts[k]!.min > 0) break;
      }
      info = {
        min: parts.reduce((s, p) => s + p.min, 0),
        max: parts.reduce((s, p) => s + p.max, 0),
        first: union(...first),
        last: union(...last),
        chars: union(...parts.map((p) => p.chars)),
      };
      break;
    }
    case "quant": {
      const body = infoOf(node.body, memo);
      if (node.max === 0 || body.max === 0) info = ZERO;
      else info = { min: body.min * node.min, max: body.max * node.max, first: body.first, last: body.last, chars: body.chars };
      break;
    }
  }
  memo.set(node, info);
  return info;
}

// ---------------------------------------------------------------------------------------------
// The check.


/** Bounded repeats of at least this many count as unbounded when looking for chains (rule 3). */
const LONG_REPEAT = 32;

function unwrap(node: Node): Node {
  let n = node;
  while (n.type === "group" && (n.kind === "capture" || n.kind === "group")) n = n.body;
  while (n.type === "seq" && n.items.length === 1) n = unwrap(n.items[0]!);
  return n;
}

/** The items of a sequence with plain (unquantified, single-branch) groups spliced in. */
function flatItems(seq: Node & { type: "seq" }): Node[] {
  const out: Node[] = [];
  for (const item of seq.items) {
    if (item.type === "group" && (item.kind === "capture" || item.kind === "group") && item.body.type === "seq") {
      out.push(...flatItems(item.body));
    } else if (item.type === "group" && (item.kind === "capture" || item.kind === "group") && item.body.type !== "alt") {
      out.push(item.body);
    } else out.push(item);
  }
  return out;
}

/** Returns why the pattern's tree can backtrack catastrophically, or null when it cannot. */
function findCatastrophe(root: Node): string | null {
  const memo = new Map<Node, Info>();
  const info = (n: Node): Info => infoOf(n, memo);
  const topSeqs = new Set<Node>();
  if (root.type === "seq") topSeqs.add(root);
  if (root.type === "alt") for (const b of root.branches) topSeqs.add(b);

  const visit = (node: Node, topLevel: boolean): string | null => {
    switch (node.type) {
      case "alt":
        for (const b of node.branches) {
          const found = visit(b, topLevel && topSeqs.has(b));
          if (found) return found;
        }
        return null;
      case "group":
        return visit(node.body, false);
      case "quant": {
        const found = checkRepeat(node, info);
        if (found) return found;
        return visit(node.body, false);
      }
      case "seq": {
        const found = checkChains(node, topLevel, info);
        if (found) return found;
        for (const item of node.items) {
          const inner = visit(item, false);
          if (inner) return inner;
        }
        return null;
      }
      default:
        return null;
    }
  };
  const wrapped: Node = root.type === "seq" || root.type === "alt" ? root : { type: "seq", items: [root] };
  if (wrapped !== root) topSeqs.add(wrapped);
  return visit(wrapped, topSeqs.has(wrapped));
}

/** Rules 1 and 2: a repeated group that can split the same text between repetitions in many ways. */
function checkRepeat(node: Node & { type: "quant" }, info: (n: Node) => Info): string | null {
  if (node.max < 2) return null;
  const body = info(node.body);
  if (body.max === 0) return null;
  if (body.min === 0) {
    return `the repeated group ${node.source} can match the empty string (a quantifier inside a quantifier)`;
  }
  const inner = unwrap(node.body);
  if (inner.type === "alt") {
    const parts = inner.branches.map((b) => info(b));
    for (let a = 0; a < parts.length; a++) {
      for (let b = a + 1; b < parts.length; b++) {
        if (intersects(parts[a]!.first, parts[b]!.first) || (parts[a]!.min === 0 && parts[b]!.min === 0)) {
          return `the alternatives inside the repeated group ${node.source} can match the same text`;
        }
      }
    }
  }
  if (body.min !== body.max && intersects(body.last, body.first)) {
    return `the repeated group ${node.source} contains a quantifier, and one repetition can end where the next begins (nested quantifiers)`;
  }
  return null;
}

/** Rule 3: chains of unbounded quantifiers over overlapping characters. */
function checkChains(seq: Node & { type: "seq" }, topLevel: boolean, info: (n: Node) => Info): string | null {
  const items = flatItems(seq);
  const infos = items.map(info);
  const isLoop = (k: number): boolean => {
    const item = items[k]!;
    const i = infos[k]!;
    if (i.chars.length === 0) return false;
    return i.max === Infinity || (item.type === "quant" && i.max >= LONG_REPEAT);
  };
  const loops: number[] = [];
  for (let k = 0; k < items.length; k++) if (isLoop(k)) loops.push(k);
  if (loops.length < 2) return null;

  const chained = (a: number, b: number): boolean => {
    if (!intersects(infos[a]!.last, infos[b]!.first)) return false;
    for (let m = a + 1; m < b; m++) {
      const mid = infos[m]!;
      if (mid.min > 0 && !isSubset(mid.chars, infos[a]!.chars)) return false;
    }
    return true;
  };
  const links = loops.map((a, x) => loops.map((b, y) => y > x && chained(a, b)));
  const anchored = items[0]?.type === "assert" && items[0].kind === "start";
  for (let x = 0; x < loops.length; x++) {
    // Longest chain from loops[x] to each later loop.
    const length = loops.map(() => 0);
    length[x] = 1;
    for (let y = x + 1; y < loops.length; y++) {
      for (let z = x; z < y; z++) if (length[z]! > 0 && links[z]![y] && length[z]! + 1 > length[y]!) length[y] = length[z]! + 1;
    }
    const start = loops[x]!;
    const prev = start > 0 ? infos[start - 1]! : null;
    for (let y = x + 1; y < loops.length; y++) {
      if (length[y]! < 2) continue;
      const end = loops[y]!;
      // At the very end of the pattern a chain cannot be made to fail, so it is never retried.
      if (topLevel && end === items.length - 1) continue;
      let limited = prev !== null && prev.min > 0 && !intersects(prev.last, infos[start]!.chars);
      if (!limited && topLevel && anchored) limited = infos.slice(0, end + 1).every((i) => !intersects(i.chars, LINE_TERMINATORS));
      const degree = length[y]! + (limited ? 0 : 1);
      if (degree >= 3) {
        return `${length[y]} unbounded quantifiers in a row can match the same characters (about n^${degree} steps on a long text)`;
      }
    }
  }
  return null;
}


/**
 * Why `pattern` can backtrack catastrophically (the shapes above), or null when it cannot. Throws
 * when the pattern cannot be parsed (callers compile it first, so that means an unsupported form).
 */
export function backtrackingProblem(pattern: string): string | null {
  const tree = new Parser(pattern, /\(\?<[^=!]/.test(pattern)).parse();
  return findCatastrophe(tree);
}
