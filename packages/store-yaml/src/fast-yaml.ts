/**
 * A fast YAML codec for the subset of YAML that cass-memory writes itself (JSON-like data in block
 * style). The `yaml` package takes ~9 s and ~570 MiB to parse a 10,000-bullet playbook; this takes a
 * small fraction of that. Anything outside the subset makes {@link parseOwnYaml} return `undefined`
 * so that the caller falls back to the full `yaml` library.
 *
 * The subset (what {@link emitYaml} produces):
 * - block mappings `key: value` and block sequences `- item`, 2-space indentation; a mapping or
 *   sequence inside a sequence item starts on the item's line (`- id: …`, `- - 1`);
 * - empty collections as `[]` and `{}`;
 * - one line per scalar: plain scalars only when provably safe (see {@link isPlainSafe}), else
 *   JSON double-quoted strings (valid YAML double-quoted scalars, non-printables escaped as \uXXXX);
 * - keys longer than ~1000 characters as explicit keys (`? "key"` / `: value`), since YAML limits
 *   implicit keys to 1024 characters;
 * - before the content, `#` comment lines and blank lines; a trailing newline.
 */

// ---------------------------------------------------------------------------------------------------
// Scalars

/** Words that resolve to null/bool in YAML 1.2 core or YAML 1.1 (quoted whatever their case). */
const RESERVED_WORD = /^(?:null|true|false|yes|no|on|off|y|n)$/i;

/** An ISO 8601 UTC timestamp as `Date#toISOString` writes it: a string in YAML 1.2 core, kept plain. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z$/;

/** Numbers as `String(n)` writes them (and `-0`); all resolve to the same number in YAML 1.2 core. */
const NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:e[+-][0-9]+)?$/;

/** Characters JSON.stringify leaves raw but YAML forbids or treats as line breaks / BOM. */
const NEEDS_U_ESCAPE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;
const HAS_NEEDS_U_ESCAPE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;

/** Keys whose written form is longer than this are written as explicit keys (`? key`). */
const MAX_IMPLICIT_KEY = 1000;

/**
 * True when `s` can be written as a plain scalar and reads back as the same string, under YAML 1.2
 * core and (as far as the words go) YAML 1.1. Deliberately conservative: starts with an ASCII letter,
 * `/` or `_`; printable characters only (no tab, no control, no U+2028/U+2029/U+FEFF, no lone
 * surrogate); no `: `, ` #`, trailing `:` or trailing space; not null/true/false/yes/no/on/off/y/n.
 */
export function isPlainSafe(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  const c0 = s.charCodeAt(0);
  if (!((c0 >= 0x61 && c0 <= 0x7a) || (c0 >= 0x41 && c0 <= 0x5a) || c0 === 0x2f || c0 === 0x5f)) return false;
  const last = s.charCodeAt(n - 1);
  if (last === 0x20 || last === 0x3a) return false;
  for (let i = 1; i < n; i += 1) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c < 0x7f) {
      if (c === 0x3a /* : */ && s.charCodeAt(i + 1) === 0x20) return false;
      if (c === 0x23 /* # */ && s.charCodeAt(i - 1) === 0x20) return false;
      continue;
    }
    if (c < 0xa0) return false; // C0 controls (incl. tab, CR, LF), DEL, C1 controls (incl. NEL)
    if (c >= 0xd800 && c <= 0xdfff) {
      // a surrogate pair is fine (a printable supplementary character), a lone half is not
      const next = s.charCodeAt(i + 1);
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        i += 1;
        continue;
      }
      return false;
    }
    if (c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0xfffe || c === 0xffff) return false;
  }
  return !(n <= 5 && RESERVED_WORD.test(s));
}

/** A JSON double-quoted string, with the characters YAML does not allow raw escaped as \uXXXX. */
function quote(s: string): string {
  const json = JSON.stringify(s);
  if (!HAS_NEEDS_U_ESCAPE.test(json)) return json;
  return json.replace(NEEDS_U_ESCAPE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function stringText(s: string): string {
  if (isPlainSafe(s)) return s;
  if (isDigit(s.charCodeAt(0)) && ISO_TIMESTAMP.test(s)) return s;
  return quote(s);
}

/** keyText of the keys seen so far (a playbook repeats a few dozen keys thousands of times); bounded. */
const keyTexts = new Map<string, string>();

function keyText(key: string): string {
  let text = keyTexts.get(key);
  if (text === undefined) {
    text = isPlainSafe(key) ? key : quote(key);
    if (keyTexts.size < 1024) keyTexts.set(key, text);
  }
  return text;
}

function scalarText(value: unknown): string {
  switch (typeof value) {
    case "string":
      return stringText(value);
    case "number":
      if (!Number.isFinite(value)) throw new RangeError(`emitYaml: cannot write the non-finite number ${String(value)}`);
      return Object.is(value, -0) ? "-0" : String(value);
    case "boolean":
      return value ? "true" : "false";
    case "undefined":
      return "null"; // only reached for sequence items, like yaml.stringify
    case "object":
      if (value === null) return "null";
      break;
    default:
      break;
  }
  throw new TypeError(`emitYaml: cannot write a value of type ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (typeof value !== "object") return typeof value;
  const ctor = (value as { constructor?: { name?: unknown } }).constructor;
  return typeof ctor?.name === "string" ? ctor.name : "object";
}

// ---------------------------------------------------------------------------------------------------
// Emitter

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function hasDefinedEntry(obj: Record<string, unknown>): boolean {
  for (const key of Object.keys(obj)) if (obj[key] !== undefined) return true;
  return false;
}

class Emitter {
  out = "";
  private readonly ancestors = new Set<object>();

  /** Writes what follows `key:` (or an explicit key's `:`), including the line break(s). */
  private value(value: unknown, inner: string): void {
    if (typeof value === "object" && value !== null) {
      if (Array.isArray(value)) {
        if (value.length === 0) this.out += " []\n";
        else {
          this.out += "\n";
          this.seq(value, inner, inner);
        }
        return;
      }
      const obj = this.checkObject(value);
      if (!hasDefinedEntry(obj)) this.out += " {}\n";
      else {
        this.out += "\n";
        this.mapping(obj, inner, inner);
      }
      return;
    }
    this.out += ` ${scalarText(value)}\n`;
  }

  private checkObject(value: object): Record<string, unknown> {
    if (!isPlainObject(value)) throw new TypeError(`emitYaml: cannot write a value of type ${describe(value)}`);
    return value;
  }

  private enter(value: object): void {
    if (this.ancestors.has(value)) throw new TypeError("emitYaml: cannot write a circular structure");
    this.ancestors.add(value);
  }

  /** A non-empty mapping; the first line starts with `first`, the others with `pad`. */
  mapping(obj: Record<string, unknown>, pad: string, first: string): void {
    this.enter(obj);
    const inner = `${pad}  `;
    let prefix = first;
    for (const key of Object.keys(obj)) {
      const value = obj[key];
      if (value === undefined) continue;
      const k = keyText(key);
      if (k.length > MAX_IMPLICIT_KEY) this.out += `${prefix}? ${quote(key)}\n${pad}:`;
      else this.out += `${prefix}${k}:`;
      this.value(value, inner);
      prefix = pad;
    }
    this.ancestors.delete(obj);
  }

  /** A non-empty sequence; the first line starts with `first`, the others with `pad`. */
  seq(arr: readonly unknown[], pad: string, first: string): void {
    this.enter(arr);
    const inner = `${pad}  `;
    let prefix = first;
    for (let i = 0; i < arr.length; i += 1) {
      const item = arr[i];
      if (typeof item === "object" && item !== null) {
        if (Array.isArray(item)) {
          if (item.length === 0) this.out += `${prefix}- []\n`;
          else {
            this.out += `${prefix}- `;
            this.seq(item, inner, "");
          }
        } else {
          const obj = this.checkObject(item);
          if (!hasDefinedEntry(obj)) this.out += `${prefix}- {}\n`;
          else {
            this.out += `${prefix}- `;
            this.mapping(obj, inner, "");
          }
        }
      } else {
        this.out += `${prefix}- ${scalarText(item)}\n`;
      }
      prefix = pad;
    }
    this.ancestors.delete(arr);
  }
}

/**
 * Writes JSON-like data (plain objects, arrays, strings, finite numbers, booleans, null) as block
 * YAML that the `yaml` library reads back as the same value and {@link parseOwnYaml} reads fast.
 * `undefined` object values are omitted and `undefined` sequence items written as null, like
 * `yaml.stringify`. Throws a TypeError on other values (functions, symbols, bigints, class instances,
 * circular structures, a top-level `undefined`) and a RangeError on non-finite numbers.
 */
export function emitYaml(value: unknown): string {
  if (value === undefined) throw new TypeError("emitYaml: cannot write undefined");
  if (typeof value !== "object" || value === null) return `${scalarText(value)}\n`;
  const emitter = new Emitter();
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]\n";
    emitter.seq(value, "", "");
    return emitter.out;
  }
  if (!isPlainObject(value)) throw new TypeError(`emitYaml: cannot write a value of type ${describe(value)}`);
  if (!hasDefinedEntry(value)) return "{}\n";
  emitter.mapping(value, "", "");
  return emitter.out;
}

/**
 * The text {@link emitYaml} writes for one item of a block sequence that is the value of a top-level
 * key (`  - …` and the item's further lines, indented by 4): one bullet of a playbook. For a mapping
 * whose key `k` holds a non-empty sequence, emitYaml writes `k:\n` followed by exactly these texts,
 * one per item, in order (playbook-splice.ts relies on it to rewrite single bullets).
 */
export function emitTopLevelSeqItem(item: unknown): string {
  const emitter = new Emitter();
  emitter.seq([item], "  ", "  ");
  return emitter.out;
}

// ---------------------------------------------------------------------------------------------------
// Parser

/** Thrown inside the parser when the text is outside the subset; never escapes {@link parseOwnYaml}. */
class OutsideSubset extends Error {}
const OUTSIDE = new OutsideSubset("outside the fast YAML subset");

function outside(): never {
  throw OUTSIDE;
}

const LF = 0x0a;
const SPACE = 0x20;
const QUOTE = 0x22;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;
const QUESTION = 0x3f;
const BACKSLASH = 0x5c;

function setKey(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}

class OwnYamlParser {
  /** Start of the line the parser is at (after a node: the line after it), or `src.length`. */
  private pos = 0;
  private readonly len: number;

  constructor(private readonly src: string) {
    this.len = src.length;
  }

  document(): unknown {
    const { src, len } = this;
    let p = 0;
    // Leading comment lines (at column 0) and empty lines.
    while (p < len) {
      const c = src.charCodeAt(p);
      if (c === LF) p += 1;
      else if (c === HASH) {
        const nl = src.indexOf("\n", p);
        const end = nl === -1 ? len : nl;
        for (let i = p + 1; i < end; i += 1) {
          const ch = src.charCodeAt(i);
          if ((ch < SPACE && ch !== 0x09) || ch === 0x7f) outside();
        }
        p = nl === -1 ? len : nl + 1;
      } else break;
    }
    if (p >= len) outside(); // no content: let the library decide what an empty document is
    if (src.charCodeAt(p) === SPACE) outside();
    this.pos = p;
    const value = this.node(0, p, true);
    if (this.pos !== len) outside();
    return value;
  }

  /** The indentation of the line at `pos`; -1 at the end. Blank and comment lines are outside. */
  private nextIndent(): number {
    const { src, len, pos } = this;
    if (pos >= len) return -1;
    let i = pos;
    while (src.charCodeAt(i) === SPACE) i += 1;
    if (i >= len) outside();
    const c = src.charCodeAt(i);
    if (c === LF || c === HASH) outside();
    return i - pos;
  }

  private atLineEnd(i: number): boolean {
    return i >= this.len || this.src.charCodeAt(i) === LF;
  }

  /** Moves to the line after the line end at `i`. */
  private endLine(i: number): void {
    this.pos = i >= this.len ? this.len : i + 1;
  }

  /** Index just after the closing quote of the double-quoted scalar starting at `s`. */
  private quotedEnd(s: number): number {
    const { src } = this;
    let i = s + 1;
    for (;;) {
      const q = src.indexOf('"', i);
      if (q === -1) outside();
      let b = q - 1;
      while (src.charCodeAt(b) === BACKSLASH) b -= 1;
      if ((q - 1 - b) % 2 === 0) return q + 1;
      i = q + 1;
    }
  }

  /** A double-quoted scalar in [s, end): the JSON escape set only, no raw non-printables. */
  private quoted(s: number, end: number): string {
    const text = this.src.slice(s, end);
    if (HAS_NEEDS_U_ESCAPE.test(text)) outside();
    try {
      return JSON.parse(text) as string; // rejects raw control characters and non-JSON escapes
    } catch {
      return outside();
    }
  }

  /** A plain scalar in [s, e), resolved as the YAML 1.2 core schema does, or outside the subset. */
  private plain(s: number, e: number): unknown {
    const text = this.src.slice(s, e);
    const c = text.charCodeAt(0);
    if (isDigit(c) || c === DASH) {
      if (NUMBER.test(text)) return Number(text);
      if (ISO_TIMESTAMP.test(text)) return text;
      return outside();
    }
    switch (text) {
      case "null":
      case "Null":
      case "NULL":
      case "~":
        return null;
      case "true":
      case "True":
      case "TRUE":
        return true;
      case "false":
      case "False":
      case "FALSE":
        return false;
      default:
        return isPlainSafe(text) ? text : outside();
    }
  }

  /** The value after `key: ` on the same line: `[]`, `{}` or a scalar. */
  private inlineValue(p: number): unknown {
    const { src } = this;
    const c = src.charCodeAt(p);
    if (c === QUOTE) {
      const end = this.quotedEnd(p);
      if (!this.atLineEnd(end)) outside();
      const value = this.quoted(p, end);
      this.endLine(end);
      return value;
    }
    if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (src.charCodeAt(p + 1) !== c + 2 || !this.atLineEnd(p + 2)) outside();
      this.endLine(p + 2);
      return c === 0x5b ? [] : {};
    }
    let e = src.indexOf("\n", p);
    if (e === -1) e = this.len;
    const value = this.plain(p, e);
    this.endLine(e);
    return value;
  }

  /**
   * The node whose first character is at `s`, in column `indent` (after `- ` for sequence items).
   * Scalars are only allowed where `allowScalar` (sequence items and the document).
   */
  private node(indent: number, s: number, allowScalar: boolean): unknown {
    const { src } = this;
    const c = src.charCodeAt(s);
    const c1 = src.charCodeAt(s + 1);
    if (c === DASH && c1 === SPACE) return this.seq(indent, s);
    if (c === QUESTION && c1 === SPACE) return this.map(indent, s);
    if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (!allowScalar) outside();
      return this.inlineValue(s);
    }
    if (c === QUOTE) {
      const end = this.quotedEnd(s);
      if (src.charCodeAt(end) === COLON) return this.map(indent, s);
      if (!allowScalar || !this.atLineEnd(end)) outside();
      const value = this.quoted(s, end);
      this.endLine(end);
      return value;
    }
    // A plain key (`key:` followed by a space or the line end) or a plain scalar.
    let i = s;
    for (;;) {
      const ch = src.charCodeAt(i);
      if (i >= this.len || ch === LF) break;
      if (ch === COLON) {
        const next = src.charCodeAt(i + 1);
        if (next === SPACE || next === LF || i + 1 >= this.len) return this.map(indent, s);
      }
      i += 1;
    }
    if (!allowScalar) outside();
    const value = this.plain(s, i);
    this.endLine(i);
    return value;
  }

  private seq(indent: number, s: number): unknown[] {
    const { src } = this;
    const arr: unknown[] = [];
    let start = s;
    for (;;) {
      arr.push(this.node(indent + 2, start + 2, true));
      const ni = this.nextIndent();
      if (ni === indent) {
        start = this.pos + indent;
        if (src.charCodeAt(start) !== DASH || src.charCodeAt(start + 1) !== SPACE) outside();
        continue;
      }
      if (ni < indent) return arr;
      return outside();
    }
  }

  private map(indent: number, s: number): Record<string, unknown> {
    const { src, len } = this;
    const obj: Record<string, unknown> = {};
    let start = s;
    for (;;) {
      let key: string;
      let p: number; // just after the `:`
      const c = src.charCodeAt(start);
      if (c === QUOTE) {
        const end = this.quotedEnd(start);
        if (src.charCodeAt(end) !== COLON) outside();
        key = this.quoted(start, end);
        p = end + 1;
      } else if (c === QUESTION) {
        // explicit key: `? "key"` then `:` at the same indentation on the next line
        if (src.charCodeAt(start + 1) !== SPACE || src.charCodeAt(start + 2) !== QUOTE) outside();
        const end = this.quotedEnd(start + 2);
        if (src.charCodeAt(end) !== LF) outside();
        key = this.quoted(start + 2, end);
        this.pos = end + 1;
        if (this.nextIndent() !== indent) outside();
        p = this.pos + indent;
        if (src.charCodeAt(p) !== COLON) outside();
        p += 1;
      } else {
        let i = start;
        for (;;) {
          if (i >= len) outside();
          const ch = src.charCodeAt(i);
          if (ch === LF) outside();
          if (ch === COLON) {
            const next = src.charCodeAt(i + 1);
            if (next === SPACE || next === LF || i + 1 >= len) break;
          }
          i += 1;
        }
        key = src.slice(start, i);
        if (!isPlainSafe(key)) outside();
        p = i + 1;
      }
      if (Object.prototype.hasOwnProperty.call(obj, key)) outside(); // the library rejects duplicates

      const after = src.charCodeAt(p);
      let value: unknown;
      if (after === SPACE) value = this.inlineValue(p + 1);
      else if (p >= len || after === LF) {
        // a nested mapping or sequence, indented by exactly 2 more
        this.pos = p + 1;
        if (this.nextIndent() !== indent + 2) outside();
        value = this.node(indent + 2, this.pos + indent + 2, false);
      } else return outside();
      setKey(obj, key, value);

      const ni = this.nextIndent();
      if (ni === indent) {
        start = this.pos + indent;
        if (src.charCodeAt(start) === DASH && src.charCodeAt(start + 1) === SPACE) outside();
        continue;
      }
      if (ni < indent) return obj;
      return outside();
    }
  }
}

/**
 * Parses YAML in exactly the subset {@link emitYaml} writes (plus leading comment and blank lines).
 * Returns the same value as `yaml.parse` would, or `undefined` as soon as the text uses anything
 * outside the subset (flow collections other than `[]`/`{}`, anchors, tags, block scalars,
 * multi-line or ambiguous plain scalars, single quotes, tabs, document markers, duplicate keys, …),
 * in which case the caller falls back to the `yaml` library. Never throws.
 */
export function parseOwnYaml(text: string): unknown {
  try {
    return new OwnYamlParser(text).document();
  } catch {
    // OutsideSubset, or anything unexpected (e.g. a stack overflow on absurd nesting): fall back.
    return undefined;
  }
}
