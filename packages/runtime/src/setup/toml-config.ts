import { AppError } from "@cass-memory/core";
import { MCP_SERVER_NAME, type ClientSpec, type McpTransport, type ServerEntry } from "./clients.js";
import type { ConfigPlan } from "./json-config.js";

/**
 * A minimal, careful editor for Codex's `config.toml`: it upserts the `[mcp_servers.cass-memory]`
 * table and leaves every other byte of the file alone. There is no TOML library here, so the file
 * is lexed just enough to find statement boundaries (table headers, key/value pairs — including
 * multi-line arrays and strings — comments and blank lines) and the key path of each statement.
 * Inside our table, keys cm manages are replaced, keys of the other transport are dropped, and
 * anything else (e.g. `startup_timeout_sec`, `enabled`, an `env` table) is kept.
 */

export type TomlStatementKind = "blank" | "comment" | "header" | "keyvalue";

export interface TomlStatement {
  kind: TomlStatementKind;
  /** Offsets into the text: [start, end), end includes the statement's line break. */
  start: number;
  end: number;
  /** Header: the table's key path; key/value: the (possibly dotted) key. */
  path: string[];
  /** `[[array.of.tables]]` header. */
  arrayTable: boolean;
  /** 1-based line of the statement's start. */
  line: number;
}

class TomlLexError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

const BARE_KEY = /[A-Za-z0-9_-]/;

function decodeBasic(raw: string): string {
  return raw.replace(/\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)/g, (_m, esc: string) => {
    if (esc.length > 1) return String.fromCodePoint(Number.parseInt(esc.slice(1), 16));
    const map: Record<string, string> = { b: "\b", t: "\t", n: "\n", f: "\f", r: "\r", e: "\u001b", '"': '"', "\\": "\\" };
    return map[esc] ?? esc;
  });
}

/** Lexes a TOML document into statements. Throws on unterminated strings, arrays or headers. */
export function scanToml(text: string): TomlStatement[] {
  const statements: TomlStatement[] = [];
  const n = text.length;
  let pos = 0;
  const breaks: number[] = [];
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) breaks.push(i);
  /** 1-based line of an offset: one more than the number of line breaks before it. */
  const lineAt = (offset: number) => {
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (breaks[mid]! < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
  const fail = (message: string, offset: number): never => {
    throw new TomlLexError(message, lineAt(offset));
  };
  const skipWs = (i: number) => {
    while (i < n && (text[i] === " " || text[i] === "\t")) i++;
    return i;
  };
  /** End of the current line including its break (`\n` or `\r\n`). */
  const lineEnd = (i: number) => {
    const nl = text.indexOf("\n", i);
    return nl === -1 ? n : nl + 1;
  };
  /** Parses a (dotted) key starting at i; returns the path and the offset after it. */
  const parseKey = (start: number): { path: string[]; next: number } => {
    const path: string[] = [];
    let i = start;
    for (;;) {
      i = skipWs(i);
      const ch = text[i];
      if (ch === '"') {
        let j = i + 1;
        while (j < n && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
        if (text[j] !== '"') fail("unterminated quoted key", i);
        path.push(decodeBasic(text.slice(i + 1, j)));
        i = j + 1;
      } else if (ch === "'") {
        const j = text.indexOf("'", i + 1);
        if (j === -1 || text.slice(i + 1, j).includes("\n")) fail("unterminated quoted key", i);
        path.push(text.slice(i + 1, j));
        i = j + 1;
      } else {
        let j = i;
        while (j < n && BARE_KEY.test(text[j]!)) j++;
        if (j === i) fail("expected a key", i);
        path.push(text.slice(i, j));
        i = j;
      }
      i = skipWs(i);
      if (text[i] !== ".") return { path, next: i };
      i++;
    }
  };
  /** Skips a value starting at i up to (and including) the line break that ends the statement. */
  const skipValue = (start: number): number => {
    let i = start;
    let depth = 0;
    while (i < n) {
      const ch = text[i]!;
      if (ch === '"' && text.startsWith('"""', i)) {
        let j = i + 3;
        for (;;) {
          if (j >= n) fail("unterminated multi-line string", i);
          if (text[j] === "\\") {
            j += 2;
            continue;
          }
          if (text.startsWith('"""', j)) break;
          j++;
        }
        j += 3;
        let extra = 0;
        while (extra < 2 && text[j] === '"') {
          j++;
          extra++;
        }
        i = j;
      } else if (ch === "'" && text.startsWith("'''", i)) {
        const j = text.indexOf("'''", i + 3);
        if (j === -1) fail("unterminated multi-line literal string", i);
        let k = j + 3;
        let extra = 0;
        while (extra < 2 && text[k] === "'") {
          k++;
          extra++;
        }
        i = k;
      } else if (ch === '"') {
        let j = i + 1;
        while (j < n && text[j] !== '"' && text[j] !== "\n") j += text[j] === "\\" ? 2 : 1;
        if (text[j] !== '"') fail("unterminated string", i);
        i = j + 1;
      } else if (ch === "'") {
        const j = text.indexOf("'", i + 1);
        if (j === -1 || text.slice(i + 1, j).includes("\n")) fail("unterminated literal string", i);
        i = j + 1;
      } else if (ch === "[" || ch === "{") {
        depth++;
        i++;
      } else if (ch === "]" || ch === "}") {
        depth--;
        if (depth < 0) fail(`unbalanced '${ch}'`, i);
        i++;
      } else if (ch === "#") {
        while (i < n && text[i] !== "\n") i++;
      } else if (ch === "\n") {
        i++;
        if (depth === 0) return i;
      } else i++;
    }
    if (depth !== 0) fail("unterminated array or inline table", start);
    return n;
  };

  while (pos < n) {
    const start = pos;
    const line = lineAt(start);
    const i = skipWs(pos);
    const ch = text[i];
    if (ch === undefined || ch === "\n" || (ch === "\r" && text[i + 1] === "\n")) {
      pos = lineEnd(i);
      statements.push({ kind: "blank", start, end: pos, path: [], arrayTable: false, line });
    } else if (ch === "#") {
      pos = lineEnd(i);
      statements.push({ kind: "comment", start, end: pos, path: [], arrayTable: false, line });
    } else if (ch === "[") {
      const arrayTable = text[i + 1] === "[";
      const { path, next } = parseKey(i + (arrayTable ? 2 : 1));
      const close = arrayTable ? "]]" : "]";
      if (!text.startsWith(close, next)) fail("malformed table header", i);
      let j = skipWs(next + close.length);
      if (text[j] === "#") while (j < n && text[j] !== "\n") j++;
      if (text[j] === "\r") j++;
      if (j < n && text[j] !== "\n") fail("unexpected text after table header", i);
      pos = lineEnd(j);
      statements.push({ kind: "header", start, end: pos, path, arrayTable, line });
    } else {
      const { path, next } = parseKey(i);
      if (text[next] !== "=") fail("expected '=' after a key", next);
      pos = skipValue(next + 1);
      statements.push({ kind: "keyvalue", start, end: pos, path, arrayTable: false, line });
    }
  }
  return statements;
}

/** A TOML basic string for any text. */
export function tomlString(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === "\\") out += "\\\\";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, "0")}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A TOML value for the JSON-like values of our entries (strings, arrays, booleans, numbers). */
export function tomlValue(value: unknown): string {
  if (typeof value === "string") return tomlString(value);
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const parts = Object.entries(value).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`);
    return parts.length === 0 ? "{}" : `{ ${parts.join(", ")} }`;
  }
  throw new Error(`cannot encode ${String(value)} as TOML`);
}

export function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

function startsWith(path: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= path.length && prefix.every((p, i) => path[i] === p);
}

function sameTable(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && startsWith(a, b);
}

/**
 * Plans the new content of Codex's config.toml (`text` null when the file does not exist): our
 * table is replaced in place (its header line kept) or appended at the end.
 */
export function planTomlConfig(spec: ClientSpec, transport: McpTransport, text: string | null, path: string): ConfigPlan {
  const entry = spec.entry(transport);
  const original = text ?? "";
  const invalid = (message: string, extra: Record<string, unknown> = {}) =>
    new AppError("CONFIG_INVALID", `${path}: ${message}; cm will not rewrite it.`, {
      hint: `Fix the file by hand, or add this table yourself:\n${renderTable(entry, "\n", `[${spec.containerKey}.${MCP_SERVER_NAME}]`)}`,
      details: { path, client: spec.client, ...extra },
    });
  let statements: TomlStatement[];
  try {
    statements = scanToml(original);
  } catch (error) {
    if (error instanceof TomlLexError) throw invalid(`not valid TOML at line ${error.line} (${error.message})`, { line: error.line });
    throw error;
  }

  const ours = [spec.containerKey, MCP_SERVER_NAME];
  const drop = new Set([...spec.managedKeys, ...(transport.kind === "stdio" ? spec.httpOnlyKeys : spec.stdioOnlyKeys)]);
  // Which table each statement belongs to, and the regions of our table and its sub-tables.
  let table: string[] = [];
  let tableIsOurs = false;
  let ourHeader: TomlStatement | null = null;
  /** Statements removed from the output. */
  const removed = new Set<TomlStatement>();
  /** Statements of our main table's body that stay (after cm's keys). */
  const kept: TomlStatement[] = [];
  let dropRegion = false;
  for (const st of statements) {
    if (st.kind === "header") {
      table = st.path;
      dropRegion = false;
      tableIsOurs = false;
      if (sameTable(st.path, ours)) {
        if (st.arrayTable) throw invalid(`[[${ours.join(".")}]] is an array of tables, not a server table`, { line: st.line });
        if (ourHeader !== null) throw invalid(`[${ours.join(".")}] is defined twice (lines ${ourHeader.line} and ${st.line})`, { line: st.line });
        ourHeader = st;
        tableIsOurs = true;
      } else if (startsWith(st.path, ours)) {
        // A sub-table such as [mcp_servers.cass-memory.env]: dropped with its keys when cm owns
        // that key or it belongs to the other transport, kept otherwise.
        if (drop.has(st.path[2]!)) {
          dropRegion = true;
          removed.add(st);
        }
      } else if (startsWith(ours, st.path) && st.arrayTable) {
        throw invalid(`[[${st.path.join(".")}]] is an array of tables`, { line: st.line });
      }
      continue;
    }
    if (st.kind === "keyvalue") {
      const full = [...table, ...st.path];
      if (tableIsOurs) {
        if (drop.has(st.path[0]!)) removed.add(st);
        else kept.push(st);
        continue;
      }
      if (dropRegion) {
        removed.add(st);
        continue;
      }
      if (startsWith(table, ours)) continue; // body of a kept sub-table
      if (sameTable(full, [spec.containerKey]) || (startsWith(full, ours) && !startsWith(table, ours))) {
        throw invalid(`"${MCP_SERVER_NAME}" or "${spec.containerKey}" is defined with dotted keys or an inline table at line ${st.line}`, { line: st.line });
      }
      continue;
    }
    if (tableIsOurs) kept.push(st);
  }

  const eol = original.includes("\r\n") ? "\r\n" : "\n";
  const body = renderBody(entry, eol);
  let content: string;
  if (ourHeader !== null) {
    const headerText = original.slice(ourHeader.start, ourHeader.end);
    const headerLine = /\n$/.test(headerText) ? headerText : headerText + eol;
    const keptText = kept.map((st) => original.slice(st.start, st.end)).join("");
    // Our table's region runs from its header to the last statement of its body.
    const bodyStatements = statements.slice(statements.indexOf(ourHeader) + 1);
    const nextHeader = bodyStatements.findIndex((st) => st.kind === "header");
    const region = nextHeader === -1 ? bodyStatements : bodyStatements.slice(0, nextHeader);
    const regionEnd = region.length > 0 ? region[region.length - 1]!.end : ourHeader.end;
    let replacement = headerLine + body + keptText;
    // Keep the file's final newline state when our table is last and had no final newline.
    if (regionEnd === original.length && !/\n$/.test(original) && /\n$/.test(replacement) && keptText === "") {
      replacement = replacement.slice(0, -eol.length);
    }
    const before = removeStatements(original, statements, removed, 0, ourHeader.start);
    const after = removeStatements(original, statements, removed, regionEnd, original.length);
    content = before + replacement + after;
  } else {
    const cleaned = removeStatements(original, statements, removed, 0, original.length);
    const header = `[${spec.containerKey}.${MCP_SERVER_NAME}]${eol}`;
    let prefix = cleaned;
    if (prefix.length > 0 && !/\n$/.test(prefix)) prefix += eol;
    if (prefix.trim().length > 0 && !/(\r?\n){2}$/.test(prefix)) prefix += eol;
    if (prefix.trim().length === 0) prefix = "";
    content = prefix + header + body;
  }
  if (text !== null && content === text) return { action: "unchanged", content: text, entry };
  return { action: text === null ? "created" : "updated", content, entry };
}

function removeStatements(text: string, statements: TomlStatement[], removed: Set<TomlStatement>, from: number, to: number): string {
  let out = "";
  let cursor = from;
  for (const st of statements) {
    if (st.start < from || st.end > to || !removed.has(st)) continue;
    out += text.slice(cursor, st.start);
    cursor = st.end;
  }
  return out + text.slice(cursor, to);
}

function renderBody(entry: ServerEntry, eol: string): string {
  return Object.entries(entry)
    .map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}${eol}`)
    .join("");
}

function renderTable(entry: ServerEntry, eol: string, header: string): string {
  return `${header}${eol}${renderBody(entry, eol)}`;
}
