import { AppError } from "@cass-memory/core";
import { MCP_SERVER_NAME, type ClientSpec, type McpTransport, type ServerEntry } from "./clients.js";

/**
 * Merging our server entry into a client's JSON configuration. Everything else in the file is
 * kept: other servers, unknown keys (of the file and of our own entry), key order, the file's
 * indentation, line endings and final newline. A file that is not strict JSON is never rewritten:
 * JSON with comments or trailing commas (JSONC, which VS Code and Gemini CLI accept) would lose
 * them, so it is refused with the entry to paste by hand.
 */

export type PlanAction = "created" | "updated" | "unchanged";

export interface ConfigPlan {
  action: PlanAction;
  /** The file's full content after the change (the original text when unchanged). */
  content: string;
  /** The entry cm manages (keys of an existing entry that cm does not manage stay in the file). */
  entry: ServerEntry;
}

export interface JsonScan {
  /** The text with comments and trailing commas removed. */
  stripped: string;
  comments: number;
  trailingCommas: number;
  /** Integer literals that JSON.parse cannot represent exactly. */
  unsafeIntegers: string[];
  /** Set when a string or block comment is not terminated. */
  unterminated: "string" | "comment" | null;
}

/** Lexes JSON/JSONC once: strips comments and trailing commas, spots integers beyond 2^53. */
export function scanJson(text: string): JsonScan {
  let out = "";
  let comments = 0;
  let trailingCommas = 0;
  const unsafeIntegers: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    const ch = text[i]!;
    if (ch === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= n) return { stripped: out + text.slice(i), comments, trailingCommas, unsafeIntegers, unterminated: "string" };
      out += text.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (ch === "/" && text[i + 1] === "/") {
      comments++;
      while (i < n && text[i] !== "\n") i++;
      continue;
    }
    if (ch === "/" && text[i + 1] === "*") {
      comments++;
      const end = text.indexOf("*/", i + 2);
      if (end === -1) return { stripped: out, comments, trailingCommas, unsafeIntegers, unterminated: "comment" };
      i = end + 2;
      out += " ";
      continue;
    }
    if (ch === "]" || ch === "}") {
      const trimmed = out.trimEnd();
      if (trimmed.endsWith(",")) {
        trailingCommas++;
        out = trimmed.slice(0, -1) + out.slice(trimmed.length);
      }
      out += ch;
      i++;
      continue;
    }
    if (ch === "-" || (ch >= "0" && ch <= "9")) {
      const m = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
      if (m !== null) {
        const literal = m[0];
        if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(Number(literal))) unsafeIntegers.push(literal);
        out += literal;
        i += literal.length;
        continue;
      }
    }
    out += ch;
    i++;
  }
  return { stripped: out, comments, trailingCommas, unsafeIntegers, unterminated: null };
}

export interface JsonLayout {
  indent: string | number;
  eol: "\n" | "\r\n";
  finalNewline: boolean;
  bom: boolean;
  /** The original was on one line: keep it compact. */
  compact: boolean;
}

/** The formatting of an existing file (or the defaults for a new one: 2 spaces, LF, final newline). */
export function detectJsonLayout(text: string | null): JsonLayout {
  if (text === null || text.trim() === "") return { indent: 2, eol: "\n", finalNewline: true, bom: false, compact: false };
  const bom = text.startsWith("\uFEFF");
  const body = bom ? text.slice(1) : text;
  const eol = body.includes("\r\n") ? "\r\n" : "\n";
  const compact = !body.trim().includes("\n");
  const m = /\n([ \t]+)["}\]]/.exec(body);
  const indent = m === null ? 2 : m[1]!.startsWith("\t") ? "\t" : m[1]!.length;
  return { indent, eol, finalNewline: /\n$/.test(body), bom, compact };
}

export function formatJson(value: unknown, layout: JsonLayout): string {
  let text = layout.compact ? JSON.stringify(value) : JSON.stringify(value, null, layout.indent);
  if (layout.eol === "\r\n") text = text.replace(/\n/g, "\r\n");
  if (layout.finalNewline) text += layout.eol;
  return (layout.bom ? "\uFEFF" : "") + text;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Structural equality; object key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.length !== kb.length) return false;
    return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** The snippet a user can paste by hand when cm refuses to rewrite a file. */
function manualSnippet(spec: ClientSpec, entry: ServerEntry): string {
  return JSON.stringify({ [spec.containerKey]: { [MCP_SERVER_NAME]: entry } });
}

/**
 * Parses a client's JSON file into its top-level object. Empty (or whitespace-only) text is an
 * empty object. Anything cm could not write back without losing information is CONFIG_INVALID.
 */
export function parseJsonConfig(text: string, path: string, spec: ClientSpec, entry: ServerEntry): Record<string, unknown> {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body.trim() === "") return {};
  const scan = scanJson(body);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (strictError) {
    let jsonc = false;
    if (scan.unterminated === null) {
      try {
        JSON.parse(scan.stripped);
        jsonc = true;
      } catch {
        jsonc = false;
      }
    }
    const details = { path, client: spec.client, entry: { [MCP_SERVER_NAME]: entry } };
    if (jsonc) {
      const what = [scan.comments > 0 ? "comments" : "", scan.trailingCommas > 0 ? "trailing commas" : ""].filter(Boolean).join(" and ");
      throw new AppError("CONFIG_INVALID", `${path} contains ${what}; cm will not rewrite it because they would be lost.`, {
        hint: `Add the server by hand under "${spec.containerKey}": ${manualSnippet(spec, entry)}`,
        details,
      });
    }
    const reason = strictError instanceof Error ? strictError.message : String(strictError);
    throw new AppError("CONFIG_INVALID", `${path} is not valid JSON (${reason}); cm will not overwrite it.`, {
      hint: `Fix or move the file, then re-run. The entry cm would add under "${spec.containerKey}": ${manualSnippet(spec, entry)}`,
      details,
      cause: strictError,
    });
  }
  if (!isPlainObject(value)) {
    throw new AppError("CONFIG_INVALID", `${path} must hold a JSON object at the top level; cm will not overwrite it.`, {
      hint: "Fix or move the file, then re-run.",
      details: { path, client: spec.client },
    });
  }
  if (scan.unsafeIntegers.length > 0) {
    throw new AppError("CONFIG_INVALID", `${path} holds integers too large to rewrite exactly (${scan.unsafeIntegers.slice(0, 3).join(", ")}); cm will not rewrite it.`, {
      hint: `Add the server by hand under "${spec.containerKey}": ${manualSnippet(spec, entry)}`,
      details: { path, client: spec.client },
    });
  }
  return value;
}

/**
 * Our entry merged over an existing one: cm's managed keys are replaced, keys that belong to the
 * other transport are dropped (a stdio `env` cannot stay on an HTTP entry), every other key is kept.
 */
export function mergeServerEntry(spec: ClientSpec, transport: McpTransport, existing: ServerEntry | undefined): ServerEntry {
  const ours = spec.entry(transport);
  if (existing === undefined) return ours;
  const drop = new Set([...spec.managedKeys, ...(transport.kind === "stdio" ? spec.httpOnlyKeys : spec.stdioOnlyKeys)]);
  const merged: ServerEntry = { ...ours };
  for (const [key, value] of Object.entries(existing)) {
    if (drop.has(key) || Object.prototype.hasOwnProperty.call(merged, key)) continue;
    Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}

/** Plans the new content of a JSON client file (`text` null when the file does not exist). */
export function planJsonConfig(spec: ClientSpec, transport: McpTransport, text: string | null, path: string): ConfigPlan {
  const ours = spec.entry(transport);
  const root = text === null ? {} : parseJsonConfig(text, path, spec, ours);
  const containerValue = root[spec.containerKey];
  if (containerValue !== undefined && !isPlainObject(containerValue)) {
    throw new AppError("CONFIG_INVALID", `"${spec.containerKey}" in ${path} is not an object; cm will not overwrite it.`, {
      hint: `Fix the "${spec.containerKey}" key by hand, then re-run.`,
      details: { path, client: spec.client, key: spec.containerKey },
    });
  }
  const container: Record<string, unknown> = containerValue ?? {};
  const existing = container[MCP_SERVER_NAME];
  if (existing !== undefined && !isPlainObject(existing)) {
    throw new AppError("CONFIG_INVALID", `"${spec.containerKey}.${MCP_SERVER_NAME}" in ${path} is not an object; cm will not overwrite it.`, {
      hint: `Remove or fix that entry by hand, then re-run.`,
      details: { path, client: spec.client },
    });
  }
  const merged = mergeServerEntry(spec, transport, existing);
  if (text !== null && existing !== undefined && jsonEqual(existing, merged)) return { action: "unchanged", content: text, entry: ours };
  container[MCP_SERVER_NAME] = merged;
  root[spec.containerKey] = container;
  const content = formatJson(root, detectJsonLayout(text));
  if (text !== null && content === text) return { action: "unchanged", content: text, entry: ours };
  return { action: text === null ? "created" : "updated", content, entry: ours };
}
