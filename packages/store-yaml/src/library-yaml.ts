/**
 * A fast reader for block YAML as the `yaml` library's `stringify` writes it with its default
 * options — the format of every playbook the earlier cm wrote (`yaml.stringify(playbook)`). Reading
 * a 20,000-rule playbook of that format with the library takes tens of seconds and over a gigabyte;
 * this reader does it in one pass over the text.
 *
 * Accepted (what the writer emits for JSON-like data, plus a little slack):
 * - block mappings and sequences at any consistent indentation, sequences as map values either
 *   indented or at the key's column, compact nested collections (`- key: v`, `- - x`);
 * - plain scalars over several lines (the writer folds long lines at 80 columns), resolved with the
 *   YAML 1.2 core schema exactly as the library resolves them (null, booleans, ints incl. 0o/0x,
 *   floats incl. .inf/.nan, else strings);
 * - single- and double-quoted scalars over several lines, with every escape the library knows;
 * - literal and folded block scalars (`|`, `>`) with chomping (`-`, `+`) and indentation indicators;
 * - empty flow collections `[]` and `{}`;
 * - anchors and aliases (the writer emits `&a1` / `*a1` when one object appears twice in the data,
 *   e.g. a shared empty array), with the library's alias-count limit;
 * - comment lines and blank lines anywhere between nodes, and trailing comments after a value;
 * - explicit keys (`? key` / `: value`) with scalar keys.
 *
 * Everything else (tags, directives, document markers, non-empty flow collections, tabs in
 * indentation, CR line ends, non-string keys, anything ambiguous) makes {@link parseLibraryYaml}
 * return `undefined`, and the caller falls back to the library itself. The value returned is the
 * one `yaml.parse` returns for the same text; the differential tests hold it to that.
 */

/** Thrown inside the parser when the text is outside what it reads; never escapes. */
class Unsupported extends Error {}
const UNSUPPORTED = new Unsupported("outside the library-format subset");

function bail(): never {
  throw UNSUPPORTED;
}

const TAB = 0x09;
const LF = 0x0a;
const SPACE = 0x20;
const DQUOTE = 0x22;
const HASH = 0x23;
const AMP = 0x26;
const SQUOTE = 0x27;
const STAR = 0x2a;
const DASH = 0x2d;
const COLON = 0x3a;
const QUESTION = 0x3f;
const BACKSLASH = 0x5c;
const LBRACKET = 0x5b;
const LBRACE = 0x7b;
const PIPE = 0x7c;
const GT = 0x3e;

/** The library's limit on the length of an implicit key. */
const MAX_IMPLICIT_KEY = 1024;
/** The library's default `maxAliasCount` (and what yaml-codec passes). */
const MAX_ALIAS_COUNT = 100;

/** Control characters the library refuses anywhere (CR: we leave CRLF files to the library). */
const FORBIDDEN_RAW = /[\u0000-\u0008\u000b-\u001f]/;
/** Characters we only accept inside double quotes (where the writer puts them). */
const PLAIN_UNSAFE = /[\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const NON_ASCII = /[^\u0000-\u007e]/;

const NULL_RE = /^(?:~|[Nn]ull|NULL)?$/;
const BOOL_RE = /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/;
const OCT_RE = /^0o[0-7]+$/;
const INT_RE = /^[-+]?[0-9]+$/;
const HEX_RE = /^0x[0-9a-fA-F]+$/;
const NAN_INF_RE = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXP_RE = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT_RE = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/** How the library's YAML 1.2 core schema resolves a plain scalar (the first matching tag wins). */
export function resolveCorePlain(text: string): unknown {
  const c = text.charCodeAt(0);
  // Fast path: a word that starts with a letter other than those of null/true/false is a string.
  if (
    (c >= 0x61 && c <= 0x7a && c !== 0x6e && c !== 0x74 && c !== 0x66) ||
    (c >= 0x41 && c <= 0x5a && c !== 0x4e && c !== 0x54 && c !== 0x46) ||
    c === 0x2f ||
    c === 0x5f
  ) {
    return text;
  }
  if (NULL_RE.test(text)) return null;
  if (BOOL_RE.test(text)) return c === 0x74 || c === 0x54;
  if (OCT_RE.test(text)) return parseInt(text.slice(2), 8);
  if (INT_RE.test(text)) return parseInt(text, 10);
  if (HEX_RE.test(text)) return parseInt(text.slice(2), 16);
  if (NAN_INF_RE.test(text)) {
    if (text.slice(-3).toLowerCase() === "nan") return Number.NaN;
    return text.charCodeAt(0) === DASH ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (EXP_RE.test(text) || FLOAT_RE.test(text)) return parseFloat(text);
  return text;
}

/** The escapes of double-quoted scalars (besides \x, \u, \U and an escaped line break). */
const ESCAPES: Readonly<Record<string, string>> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  e: "\x1b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  "\t": "\t",
};

function isBlank(c: number): boolean {
  return c === SPACE || c === TAB;
}

/**
 * Joins the lines of a plain or single-quoted scalar's source: the first line loses its trailing
 * blanks, the others their leading and trailing blanks; one line break becomes a space, n + 1 line
 * breaks become n newlines; the last line keeps its trailing blanks (the source ends at content).
 */
function unfold(source: string): string {
  let nl = source.indexOf("\n");
  if (nl === -1) return source;
  let res = source.slice(0, nl).replace(/[ \t]+$/, "");
  let sep = " ";
  let start = nl + 1;
  for (;;) {
    nl = source.indexOf("\n", start);
    if (nl === -1) break;
    const line = source.slice(start, nl).replace(/^[ \t]+|[ \t]+$/g, "");
    if (line === "") {
      if (sep === "\n") res += sep;
      else sep = "\n";
    } else {
      res += sep + line;
      sep = " ";
    }
    start = nl + 1;
  }
  return res + sep + source.slice(start).replace(/^[ \t]+/, "");
}

/** The value of a double-quoted scalar's source (quotes included); bails on a bad escape. */
function doubleQuotedValue(src: string, start: number, end: number): string {
  // end: index of the closing quote
  let res = "";
  let runStart = start + 1;
  let i = start + 1;
  while (i < end) {
    const ch = src.charCodeAt(i);
    if (ch === LF) {
      res += src.slice(runStart, i);
      let fold = "";
      let j = i + 1;
      for (;;) {
        const c = src.charCodeAt(j);
        if (c === SPACE || c === TAB) j += 1;
        else if (c === LF) {
          fold += "\n";
          j += 1;
        } else break;
      }
      res += fold === "" ? " " : fold;
      i = j;
      runStart = i;
    } else if (ch === BACKSLASH) {
      res += src.slice(runStart, i);
      const next = src[i + 1] as string;
      const simple = ESCAPES[next];
      if (simple !== undefined) {
        res += simple;
        i += 2;
      } else if (next === "\n") {
        i += 2;
        while (isBlank(src.charCodeAt(i))) i += 1;
      } else if (next === "x" || next === "u" || next === "U") {
        const n = next === "x" ? 2 : next === "u" ? 4 : 8;
        const hex = src.slice(i + 2, i + 2 + n);
        if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex) || i + 2 + n > end) bail();
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) bail();
        res += String.fromCodePoint(code);
        i += 2 + n;
      } else bail();
      runStart = i;
    } else if (ch === SPACE || ch === TAB) {
      // blanks before a line break are dropped
      let j = i + 1;
      while (isBlank(src.charCodeAt(j))) j += 1;
      if (src.charCodeAt(j) === LF && j < end) {
        res += src.slice(runStart, i);
        runStart = j;
      }
      i = j;
    } else i += 1;
  }
  return res + src.slice(runStart, end);
}

export interface AnchorData {
  value: unknown;
  /** The library's alias weight of the anchored node: 0 for an empty collection, else 1. */
  weight: number;
  uses: number;
}

class LibraryYamlParser {
  /** Start of the next line not consumed yet (or `len`). */
  pos = 0;
  readonly len: number;
  /** Anchors whose node is being read (an alias to them would be circular). */
  private readonly open = new Set<string>();
  private hasAnchors: boolean;
  private aliasesRead = 0;
  /** Plain keys already checked (playbooks repeat a few dozen keys many times). */
  private readonly keyChecked = new Map<string, boolean>();

  /** `anchors`: the anchors of earlier pieces of the same document (see parseLibraryYamlPiece), filled in as read. */
  constructor(
    private readonly src: string,
    private readonly anchors: Map<string, AnchorData> = new Map(),
  ) {
    this.len = src.length;
    this.hasAnchors = anchors.size > 0;
  }

  document(): unknown {
    const { src } = this;
    if (FORBIDDEN_RAW.test(src)) bail();
    if (src.charCodeAt(0) === 0xfeff || src.charCodeAt(0) === 0x25 /* % */) bail();
    this.pos = 0;
    const indent = this.skipBlankLines();
    if (indent !== 0) bail(); // empty, or an indented top level: the library decides
    const p = this.pos;
    this.checkDocumentMarker(p);
    const c = src.charCodeAt(p);
    const c1 = src.charCodeAt(p + 1);
    let value: unknown;
    if (c === DASH && (c1 === SPACE || c1 === LF || p + 1 >= this.len)) value = this.seq(0);
    else if (c === QUESTION && (c1 === SPACE || c1 === LF)) value = this.map(0, p);
    else if (this.startsImplicitKey(p)) value = this.map(0, p);
    else bail(); // a top-level scalar: not a playbook
    if (this.skipBlankLines() !== -1) bail();
    return value;
  }

  // -------------------------------------------------------------------------------------------
  // Lines

  /**
   * Skips blank and comment lines from `pos`; returns the indentation of the next content line
   * (pos at its start) or -1 at the end. A tab in the indentation of a content line is refused.
   */
  private skipBlankLines(): number {
    const { src, len } = this;
    let p = this.pos;
    while (p < len) {
      let i = p;
      while (src.charCodeAt(i) === SPACE) i += 1;
      const c = src.charCodeAt(i);
      if (i >= len) {
        p = len;
        break;
      }
      if (c === LF) {
        p = i + 1;
        continue;
      }
      if (c === TAB) {
        // blanks only, then a line end or a comment: a blank line; else a tab in the indentation
        let j = i;
        while (isBlank(src.charCodeAt(j))) j += 1;
        const d = src.charCodeAt(j);
        if (j >= len || d === LF) {
          p = j >= len ? len : j + 1;
          continue;
        }
        if (d === HASH) {
          p = this.lineEnd(j);
          continue;
        }
        bail();
      }
      if (c === HASH) {
        p = this.lineEnd(i);
        continue;
      }
      this.pos = p;
      return i - p;
    }
    this.pos = len;
    return -1;
  }

  /** Start of the line after the one holding `i`. */
  private lineEnd(i: number): number {
    const nl = this.src.indexOf("\n", i);
    return nl === -1 ? this.len : nl + 1;
  }

  private checkDocumentMarker(p: number): void {
    const { src } = this;
    const c = src.charCodeAt(p);
    if ((c === DASH || c === 0x2e) && src.charCodeAt(p + 1) === c && src.charCodeAt(p + 2) === c) {
      const d = src.charCodeAt(p + 3);
      if (p + 3 >= this.len || d === SPACE || d === LF || d === TAB) bail();
    }
  }

  /**
   * After a node's text ends at `i` (exclusive): allows blanks and a comment, then requires the
   * line end; moves `pos` to the next line.
   */
  private endOfNodeLine(i: number): void {
    const { src, len } = this;
    let j = i;
    while (isBlank(src.charCodeAt(j))) j += 1;
    if (j >= len) {
      this.pos = len;
      return;
    }
    const c = src.charCodeAt(j);
    if (c === LF) {
      this.pos = j + 1;
      return;
    }
    if (c === HASH && j > i) {
      this.pos = this.lineEnd(j);
      return;
    }
    bail();
  }

  /** True when the line from `p` holds an implicit key (`key:` then a blank or the line end). */
  private startsImplicitKey(p: number): boolean {
    const { src, len } = this;
    const c = src.charCodeAt(p);
    if (c === DQUOTE || c === SQUOTE) {
      const end = c === DQUOTE ? this.doubleEnd(p) : this.singleEnd(p);
      const nl = src.indexOf("\n", p);
      if (nl !== -1 && nl < end) return false;
      return src.charCodeAt(end + 1) === COLON;
    }
    for (let i = p; i < len; i += 1) {
      const ch = src.charCodeAt(i);
      if (ch === LF) return false;
      if (ch === COLON) {
        const next = src.charCodeAt(i + 1);
        if (i + 1 >= len || next === SPACE || next === LF || next === TAB) return true;
      } else if (ch === HASH && isBlank(src.charCodeAt(i - 1))) return false;
    }
    return false;
  }

  // -------------------------------------------------------------------------------------------
  // Collections

  /** A block sequence whose `-` indicators are in column `n`; pos is at the first item's line. */
  private seq(n: number): unknown[] {
    const { src, len } = this;
    const arr: unknown[] = [];
    for (;;) {
      const dash = this.pos + n;
      // (the caller checked the first dash; later ones are checked below)
      let p = dash + 1;
      while (src.charCodeAt(p) === SPACE) p += 1;
      const c = src.charCodeAt(p);
      if (p >= len || c === LF || (c === HASH && p > dash + 1)) {
        this.pos = p >= len ? len : this.lineEnd(p);
        arr.push(this.blockBelow(n, false));
      } else if (c === TAB) bail();
      else arr.push(this.nodeInLine(p, n));
      const ni = this.skipBlankLines();
      if (ni < n) return arr;
      if (ni > n) bail();
      const q = this.pos + n;
      if (n === 0) this.checkDocumentMarker(q);
      const d1 = src.charCodeAt(q + 1);
      if (src.charCodeAt(q) !== DASH || !(d1 === SPACE || d1 === LF || q + 1 >= len)) return arr; // a map key at the same column
    }
  }

  /** A block mapping whose keys are in column `n`; the first key starts at `first`. */
  private map(n: number, first: number): Record<string, unknown> {
    const { src, len } = this;
    const obj: Record<string, unknown> = {};
    let p = first;
    for (;;) {
      let key: string;
      let value: unknown;
      const c = src.charCodeAt(p);
      if (c === QUESTION && (src.charCodeAt(p + 1) === SPACE || src.charCodeAt(p + 1) === LF)) {
        // explicit key: `? key`, then `: value` in the same column (or no value: null)
        let q = p + 1;
        while (src.charCodeAt(q) === SPACE) q += 1;
        if (src.charCodeAt(q) === TAB) bail(); // a tab in the separation: the library strips it, leave it to it
        const k = src.charCodeAt(q) === LF ? bail() : this.valueInLine(q, n);
        if (typeof k !== "string") bail();
        key = k;
        const ni = this.skipBlankLines();
        const v = this.pos + n;
        const v1 = src.charCodeAt(v + 1);
        if (ni === n && src.charCodeAt(v) === COLON && (v1 === SPACE || v1 === LF || v + 1 >= len)) value = this.afterColon(v + 1, n);
        else value = null;
      } else {
        let colon: number;
        if (c === DQUOTE || c === SQUOTE) {
          const end = c === DQUOTE ? this.doubleEnd(p) : this.singleEnd(p);
          const nl = src.indexOf("\n", p);
          if (nl !== -1 && nl < end) bail();
          key = c === DQUOTE ? doubleQuotedValue(src, p, end) : src.slice(p + 1, end).replace(/''/g, "'");
          colon = end + 1;
          if (src.charCodeAt(colon) !== COLON) bail();
        } else {
          colon = this.plainKeyEnd(p);
          const raw = src.slice(p, colon);
          let ok = this.keyChecked.get(raw);
          if (ok === undefined) {
            ok = this.plainKeyOk(raw);
            if (this.keyChecked.size < 10_000) this.keyChecked.set(raw, ok);
          }
          if (!ok) bail();
          key = raw;
        }
        if (colon - p > MAX_IMPLICIT_KEY) bail();
        const after = src.charCodeAt(colon + 1);
        if (!(colon + 1 >= len || after === SPACE || after === LF)) bail();
        value = this.afterColon(colon + 1, n);
      }
      if (Object.prototype.hasOwnProperty.call(obj, key)) bail(); // the library refuses duplicate keys
      if (key === "__proto__") Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
      else obj[key] = value;

      const ni = this.skipBlankLines();
      if (ni < n) return obj;
      if (ni > n) bail();
      p = this.pos + n;
      if (n === 0) this.checkDocumentMarker(p);
      const d = src.charCodeAt(p);
      const d1 = src.charCodeAt(p + 1);
      if (d === DASH && (d1 === SPACE || d1 === LF || p + 1 >= len)) bail(); // a sequence item among keys
      if (!(d === QUESTION && (d1 === SPACE || d1 === LF)) && !this.startsImplicitKey(p)) bail();
    }
  }

  /** Index of the `:` ending the plain key starting at `p`. */
  private plainKeyEnd(p: number): number {
    const { src, len } = this;
    for (let i = p; i < len; i += 1) {
      const ch = src.charCodeAt(i);
      if (ch === LF) break;
      if (ch === COLON) {
        const next = src.charCodeAt(i + 1);
        if (i + 1 >= len || next === SPACE || next === LF) return i;
      }
    }
    return bail();
  }

  /** A plain key we read ourselves: a string under the core schema, no indicators, no blanks at the end. */
  private plainKeyOk(raw: string): boolean {
    if (raw.length === 0) return false;
    const c = raw.charCodeAt(0);
    if (/^[,[\]{}#&*!|>'"%@` \t]|^[-?:](?:[ \t]|$)/.test(raw)) return false;
    const last = raw.charCodeAt(raw.length - 1);
    if (isBlank(last)) return false;
    if (/[ \t]#/.test(raw) || PLAIN_UNSAFE.test(raw)) return false;
    if (c >= 0x30 && c <= 0x39) return typeof resolveCorePlain(raw) === "string";
    return resolveCorePlain(raw) === raw;
  }

  /** The value after a key's `:` at `p - 1` (the map's keys are in column `n`). */
  private afterColon(p: number, n: number): unknown {
    const { src, len } = this;
    let i = p;
    while (src.charCodeAt(i) === SPACE) i += 1;
    const c = src.charCodeAt(i);
    if (i >= len || c === LF || (c === HASH && i > p)) {
      this.pos = i >= len ? len : this.lineEnd(i);
      return this.blockBelow(n, true);
    }
    if (c === TAB) bail();
    return this.valueInLine(i, n);
  }

  /**
   * The node on the lines below a `key:` or `-` with nothing after it; pos is at the next line.
   * `inMap`: a sequence may then start in the key's column.
   */
  private blockBelow(n: number, inMap: boolean): unknown {
    const { src, len } = this;
    const ni = this.skipBlankLines();
    let value: unknown = null;
    if (ni > n) {
      value = this.nodeInLine(this.pos + ni, n, ni);
    } else if (ni === n && inMap) {
      const q = this.pos + n;
      const d1 = src.charCodeAt(q + 1);
      if (src.charCodeAt(q) === DASH && (d1 === SPACE || d1 === LF || q + 1 >= len)) value = this.seq(n);
    }
    return value;
  }

  /**
   * A node starting at `p` in a position where a collection may start on the same line (a sequence
   * item's content, or the first line of a nested node): a compact sequence or mapping, or a value.
   * `n` is the parent's column; `col` the column of `p` when it is at a line start.
   */
  private nodeInLine(p: number, n: number, col?: number): unknown {
    const { src, len } = this;
    const column = col ?? p - this.lineStartOf(p);
    const c = src.charCodeAt(p);
    const c1 = src.charCodeAt(p + 1);
    if (c === DASH && (c1 === SPACE || c1 === LF || p + 1 >= len)) {
      this.pos = p - column;
      return this.seq(column);
    }
    if (c === QUESTION && (c1 === SPACE || c1 === LF)) return this.map(column, p);
    if (c === AMP || c === STAR) return this.valueInLine(p, n);
    if (this.startsImplicitKey(p)) return this.map(column, p);
    return this.valueInLine(p, n);
  }

  private lineStartOf(p: number): number {
    return this.src.lastIndexOf("\n", p - 1) + 1;
  }

  // -------------------------------------------------------------------------------------------
  // Values

  /** A value starting at `p` (not a collection on this line); its lines are indented more than `n`. */
  private valueInLine(p: number, n: number): unknown {
    const { src } = this;
    const c = src.charCodeAt(p);
    switch (c) {
      case AMP:
        return this.anchored(p, n);
      case STAR:
        return this.alias(p);
      case DQUOTE: {
        const end = this.doubleEnd(p);
        this.checkContinuation(p, end, n);
        const value = doubleQuotedValue(src, p, end);
        this.endOfNodeLine(end + 1);
        return value;
      }
      case SQUOTE: {
        const end = this.singleEnd(p);
        this.checkContinuation(p, end, n);
        const value = unfold(src.slice(p + 1, end)).replace(/''/g, "'");
        this.endOfNodeLine(end + 1);
        return value;
      }
      case PIPE:
      case GT:
        return this.blockScalar(p, n);
      case LBRACKET:
      case LBRACE: {
        if (src.charCodeAt(p + 1) !== c + 2) bail(); // only [] and {}
        this.endOfNodeLine(p + 2);
        return c === LBRACKET ? [] : {};
      }
      default:
        return this.plain(p, n);
    }
  }

  /** `&name` then the node (on this line, or below it). */
  private anchored(p: number, n: number): unknown {
    const { src, len } = this;
    let i = p + 1;
    while (i < len) {
      const ch = src.charCodeAt(i);
      if (ch === SPACE || ch === LF || ch === TAB || ch === 0x2c || ch === 0x5b || ch === 0x5d || ch === 0x7b || ch === 0x7d) break;
      i += 1;
    }
    const name = src.slice(p + 1, i);
    if (name === "") bail();
    let j = i;
    while (src.charCodeAt(j) === SPACE) j += 1;
    const c = src.charCodeAt(j);
    this.open.add(name);
    const aliasesBefore = this.aliasesRead;
    let value: unknown;
    if (j >= len || c === LF || (c === HASH && j > i)) {
      this.pos = j >= len ? len : this.lineEnd(j);
      value = this.blockBelow(n, false);
    } else {
      if (j === i || c === AMP || c === STAR || c === TAB) bail();
      value = this.valueInLine(j, n);
    }
    this.open.delete(name);
    // The library weighs an anchored node holding aliases by what they expand to; we do not.
    if (this.aliasesRead !== aliasesBefore) bail();
    this.define(name, value);
    return value;
  }

  private define(name: string, value: unknown): void {
    let weight = 1;
    if (typeof value === "object" && value !== null) {
      weight = (Array.isArray(value) ? value.length : Object.keys(value).length) === 0 ? 0 : 1;
    }
    this.anchors.set(name, { value, weight, uses: 0 });
    this.hasAnchors = true;
  }

  private alias(p: number): unknown {
    const { src, len } = this;
    let i = p + 1;
    while (i < len) {
      const ch = src.charCodeAt(i);
      if (ch === SPACE || ch === LF || ch === TAB || ch === 0x2c || ch === 0x5b || ch === 0x5d || ch === 0x7b || ch === 0x7d) break;
      i += 1;
    }
    const name = src.slice(p + 1, i);
    if (name === "" || this.open.has(name) || !this.hasAnchors) bail();
    const data = this.anchors.get(name);
    if (data === undefined) bail();
    // (An anchored node holding aliases is refused where it is defined, so the weight is 0 or 1.)
    data.uses += 1;
    this.aliasesRead += 1;
    if (data.uses * data.weight > MAX_ALIAS_COUNT) bail();
    this.endOfNodeLine(i);
    return data.value;
  }

  /** Index of the closing quote of the double-quoted scalar opening at `p`. */
  private doubleEnd(p: number): number {
    const { src, len } = this;
    let i = p + 1;
    for (;;) {
      const q = src.indexOf('"', i);
      if (q === -1) bail();
      let b = q - 1;
      while (b > p && src.charCodeAt(b) === BACKSLASH) b -= 1;
      if ((q - 1 - b) % 2 === 0) return q;
      i = q + 1;
      if (i >= len) bail();
    }
  }

  /** Index of the closing quote of the single-quoted scalar opening at `p`. */
  private singleEnd(p: number): number {
    const { src } = this;
    let i = p + 1;
    for (;;) {
      const q = src.indexOf("'", i);
      if (q === -1) bail();
      if (src.charCodeAt(q + 1) === SQUOTE) {
        i = q + 2;
        continue;
      }
      return q;
    }
  }

  /**
   * Checks the lines a quoted scalar spans after its first: each non-blank one indented more than
   * `n`, none a document marker; plain-unsafe characters are fine inside quotes.
   */
  private checkContinuation(p: number, end: number, n: number): void {
    const { src } = this;
    let nl = src.indexOf("\n", p);
    while (nl !== -1 && nl < end) {
      let i = nl + 1;
      while (src.charCodeAt(i) === SPACE) i += 1;
      const c = src.charCodeAt(i);
      if (c !== LF && i <= end) {
        if (i - (nl + 1) <= n) bail();
        if (c === TAB) bail();
      }
      nl = src.indexOf("\n", nl + 1);
    }
  }

  /** A plain scalar starting at `p` whose continuation lines are indented more than `n`. */
  private plain(p: number, n: number): unknown {
    const { src, len } = this;
    const c = src.charCodeAt(p);
    // indicators that cannot start a plain scalar, or start one only before a non-blank
    if (c === 0x2c || c === 0x5d || c === 0x7d || c === HASH || c === 0x21 || c === 0x25 || c === 0x40 || c === 0x60) bail();
    if (c === DASH || c === QUESTION || c === COLON) {
      const d = src.charCodeAt(p + 1);
      if (p + 1 >= len || d === SPACE || d === LF || d === TAB) bail();
    }
    // the first line
    let e = this.plainLineEnd(p);
    let end = e; // end of the scalar's source (after its last non-blank character)
    let next = e.stop ? -1 : this.lineEnd(e.at);
    let multiline = false;
    // continuation lines
    while (next !== -1 && next < len) {
      let i = next;
      while (src.charCodeAt(i) === SPACE) i += 1;
      const ci = src.charCodeAt(i);
      if (i >= len) break;
      if (ci === LF || ci === TAB) {
        // a blank line (blanks only) or a tab-indented line
        let j = i;
        while (isBlank(src.charCodeAt(j))) j += 1;
        if (j >= len || src.charCodeAt(j) === LF) {
          next = j >= len ? len : j + 1;
          continue;
        }
        bail();
      }
      if (i - next <= n) break; // a line of the parent: the scalar ended
      if (ci === HASH) break; // a comment line ends it (the caller sees what follows)
      e = this.plainLineEnd(i);
      end = e;
      multiline = true;
      if (e.stop) break;
      next = this.lineEnd(e.at);
    }
    const source = src.slice(p, end.at);
    if (NON_ASCII.test(source) && PLAIN_UNSAFE.test(source)) bail();
    this.endOfNodeLine(end.at);
    if (!multiline) return resolveCorePlain(source);
    return resolveCorePlain(unfold(source));
  }

  /**
   * The end of the plain text on the line from `p`: `at` just after its last non-blank character;
   * `stop` when a comment follows (the scalar cannot continue). Bails on `: ` (a key where a value
   * must be).
   */
  private plainLineEnd(p: number): { at: number; stop: boolean } {
    const { src, len } = this;
    let i = p;
    let last = p;
    for (; i < len; i += 1) {
      const ch = src.charCodeAt(i);
      if (ch === LF) break;
      if (ch === COLON) {
        const d = src.charCodeAt(i + 1);
        if (i + 1 >= len || d === SPACE || d === LF || d === TAB) bail();
      } else if (ch === HASH && i > p && isBlank(src.charCodeAt(i - 1))) {
        return { at: last, stop: true };
      }
      if (!isBlank(ch)) last = i + 1;
    }
    return { at: last, stop: false };
  }

  /** A literal or folded block scalar whose header starts at `p`; `n` is the parent's column. */
  private blockScalar(p: number, n: number): string {
    const { src, len } = this;
    const folded = src.charCodeAt(p) === GT;
    let i = p + 1;
    let indicator = 0;
    let chomp = "";
    for (;;) {
      const ch = src.charCodeAt(i);
      if ((ch === DASH || ch === 0x2b) && chomp === "") chomp = ch === DASH ? "-" : "+";
      else if (ch >= 0x31 && ch <= 0x39 && indicator === 0) indicator = ch - 0x30;
      else break;
      i += 1;
    }
    this.endOfNodeLine(i);
    if (n < 0) bail();
    // The scalar's region: blank lines, and lines indented at least as much as its content (the
    // indicator's, else the first non-blank line's, which must be deeper than the parent).
    const start = this.pos;
    let contentIndent = indicator > 0 ? n + indicator : -1;
    let q = start;
    while (q < len) {
      let j = q;
      while (src.charCodeAt(j) === SPACE) j += 1;
      const c = src.charCodeAt(j);
      if (j >= len) {
        q = len;
        break;
      }
      if (c === LF) {
        q = j + 1;
        continue;
      }
      const nl = src.indexOf("\n", j);
      const indent = j - q;
      // (a tab after the indentation is content, as in the library: its lines split at spaces only;
      // a less indented line of blanks with a tab is an error there: leave it to the library)
      const blanksOnly = c === TAB && /^[ \t]*$/.test(src.slice(j, nl === -1 ? len : nl));
      if (contentIndent === -1) {
        if (indent <= n) {
          if (blanksOnly) bail();
          break;
        }
        contentIndent = indent;
      }
      if (indent < contentIndent) {
        if (blanksOnly) bail();
        break;
      }
      q = nl === -1 ? len : nl + 1;
    }
    this.pos = q;
    return blockScalarValue(src.slice(start, q), folded, chomp, n + indicator, indicator > 0);
  }
}

/**
 * The value of a block scalar from its region (the lines after the header, each line break
 * included), computed as the library computes it: `baseIndent` is the parent's column plus the
 * indentation indicator (0 without one).
 */
function blockScalarValue(region: string, folded: boolean, chomp: string, baseIndent: number, explicit: boolean): string {
  // [indentation, content] per line; a region ending in a line break ends with an empty line
  const lines: Array<[number, string]> = [];
  let s = 0;
  for (;;) {
    const nl = region.indexOf("\n", s);
    const lineEnd = nl === -1 ? region.length : nl;
    let j = s;
    while (region.charCodeAt(j) === SPACE && j < lineEnd) j += 1;
    lines.push([j - s, region.slice(j, lineEnd)]);
    if (nl === -1) break;
    s = nl + 1;
  }
  if (region === "") lines.length = 0;
  let chompStart = lines.length;
  for (let k = lines.length - 1; k >= 0; k -= 1) {
    if ((lines[k] as [number, string])[1] === "") chompStart = k;
    else break;
  }
  if (chompStart === 0) return chomp === "+" && lines.length > 0 ? "\n".repeat(Math.max(1, lines.length - 1)) : "";
  let trimIndent = baseIndent;
  let contentStart = 0;
  for (let k = 0; k < chompStart; k += 1) {
    const [indent, content] = lines[k] as [number, string];
    if (content === "") {
      if (!explicit && indent > trimIndent) trimIndent = indent;
    } else {
      if (indent < trimIndent) bail(); // more-indented leading blank lines: the library reports an error
      if (!explicit) trimIndent = indent;
      contentStart = k;
      break;
    }
  }
  for (let k = lines.length - 1; k >= chompStart; k -= 1) {
    if ((lines[k] as [number, string])[0] > trimIndent) chompStart = k + 1;
  }
  const pad = (indent: number): string => (indent > trimIndent ? " ".repeat(indent - trimIndent) : "");
  let value = "";
  for (let k = 0; k < contentStart; k += 1) value += `${pad((lines[k] as [number, string])[0])}\n`;
  let sep = "";
  let prevMore = false;
  for (let k = contentStart; k < chompStart; k += 1) {
    const [indent, content] = lines[k] as [number, string];
    if (content !== "" && indent < trimIndent) bail();
    if (!folded) {
      value += sep + pad(indent) + content;
      sep = "\n";
    } else if (indent > trimIndent || content.charCodeAt(0) === TAB) {
      if (sep === " ") sep = "\n";
      else if (!prevMore && sep === "\n") sep = "\n\n";
      value += sep + pad(indent) + content;
      sep = "\n";
      prevMore = true;
    } else if (content === "") {
      if (sep === "\n") value += "\n";
      else sep = "\n";
    } else {
      value += sep + content;
      sep = " ";
      prevMore = false;
    }
  }
  if (chomp === "+") {
    for (let k = chompStart; k < lines.length; k += 1) value += `\n${pad((lines[k] as [number, string])[0])}`;
    if (!value.endsWith("\n")) value += "\n";
  } else if (chomp === "") value += "\n";
  return value;
}

/**
 * Reads block YAML in the format the `yaml` library's `stringify` writes (see the module comment).
 * Returns what `yaml.parse` returns for the text, or `undefined` when the text uses anything this
 * reader does not handle, so that the caller falls back to the library. Never throws.
 */
export function parseLibraryYaml(text: string): unknown {
  try {
    return new LibraryYamlParser(text).document();
  } catch {
    return undefined;
  }
}

/**
 * Reads one piece of a larger document in the same format (e.g. one item of a long sequence, cut
 * out by a streaming reader), with `anchors` carrying the anchors defined by the pieces before it
 * (and receiving the ones this piece defines), so that an alias to an earlier piece resolves as in
 * the whole document, alias-count limit included. `undefined` when the piece is outside the subset.
 */
export function parseLibraryYamlPiece(text: string, anchors: Map<string, AnchorData>): unknown {
  try {
    return new LibraryYamlParser(text, anchors).document();
  } catch {
    return undefined;
  }
}
