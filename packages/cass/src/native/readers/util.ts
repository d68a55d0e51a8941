/**
 * Shared plumbing for the native session readers: bounded streaming line reading, tolerant JSON
 * loading, timestamp normalisation, content flattening, conversation assembly with caps, and a
 * bounded directory walker. Nothing here throws on bad data.
 */
import { createReadStream } from "node:fs";
import { readdir, readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";

import type { AgentSlug, NormalizedConversation, NormalizedMessage, SessionFileRef } from "../../model.js";

/** Longest message content kept (characters); longer content is cut and marked. */
export const MAX_CONTENT_CHARS = 64 * 1024;
/** Most messages kept per conversation; later messages are dropped. */
export const MAX_MESSAGES = 10_000;
/** Longest single JSONL line parsed (bytes); longer lines are skipped without being buffered. */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** Largest single-document JSON file parsed (bytes). */
export const MAX_JSON_BYTES = 64 * 1024 * 1024;
/** Short renderings of tool calls and results. */
export const MAX_TOOL_ARGS_CHARS = 400;
export const MAX_TOOL_RESULT_CHARS = 2_000;
/** Longest title derived from a message. */
export const MAX_TITLE_CHARS = 100;

const TRUNCATION_MARK = " …[truncated]";

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** A non-blank string, or null. */
export function nonEmpty(value: unknown): string | null {
  return typeof value === "string" && value.trim() !== "" ? value : null;
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Cuts `text` to at most `max` characters (not splitting a surrogate pair), marking the cut. */
export function clip(text: string, max: number = MAX_CONTENT_CHARS): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - TRUNCATION_MARK.length);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return text.slice(0, end) + TRUNCATION_MARK;
}

/**
 * Converts a source timestamp to epoch milliseconds. Numbers (and numeric strings) below 1e11
 * are taken as seconds (ChatGPT's float seconds), larger ones as milliseconds; other strings are
 * parsed as dates (ISO 8601). Anything else is null.
 */
export function toMs(value: unknown): number | null {
  if (typeof value === "number") {
    if (!Number.isFinite(value) || value <= 0) return null;
    return Math.round(value < 1e11 ? value * 1000 : value);
  }
  if (typeof value === "string") {
    const trimmed = value.trim();
    if (trimmed === "") return null;
    if (/^\d+(\.\d+)?$/.test(trimmed)) return toMs(Number(trimmed));
    const parsed = Date.parse(trimmed);
    return Number.isNaN(parsed) ? null : parsed;
  }
  return null;
}

/** First usable timestamp among candidates. */
export function firstMs(...values: unknown[]): number | null {
  for (const value of values) {
    const ms = toMs(value);
    if (ms !== null) return ms;
  }
  return null;
}

/** Compact one-line rendering of tool arguments. */
export function previewArgs(input: unknown): string {
  if (input === undefined || input === null) return "";
  let text: string;
  if (typeof input === "string") {
    text = input;
  } else {
    try {
      text = JSON.stringify(input) ?? "";
    } catch {
      text = "";
    }
  }
  return clip(text.replace(/\s+/g, " ").trim(), MAX_TOOL_ARGS_CHARS);
}

export function renderToolCall(name: unknown, input: unknown): string {
  const label = nonEmpty(name) ?? "unknown";
  const args = previewArgs(input);
  return args === "" ? `[tool: ${label}]` : `[tool: ${label}] ${args}`;
}

export function renderToolResult(content: unknown, opts: { name?: unknown; isError?: boolean } = {}): string {
  const body = clip(flattenContent(content).trim(), MAX_TOOL_RESULT_CHARS);
  const name = nonEmpty(opts.name);
  const head = opts.isError === true ? "[tool error" : "[tool result";
  const label = name === null ? `${head}]` : `${head}: ${name}]`;
  return body === "" ? label : `${label} ${body}`;
}

const TEXT_BLOCK_TYPES = new Set(["text", "input_text", "output_text", "summary_text"]);
const TOOL_CALL_TYPES = new Set(["tool_use", "toolCall", "tool_call", "function_call", "server_tool_use"]);
const TOOL_RESULT_TYPES = new Set(["tool_result", "toolResult", "function_call_output", "tool_call_output"]);
const SKIPPED_BLOCK_TYPES = new Set(["thinking", "redacted_thinking", "reasoning", "signature"]);

/**
 * Flattens message content to text: strings as they are; block arrays joined by blank lines with
 * text blocks kept, tool calls and results rendered as short `[tool: …]` / `[tool result] …`
 * lines, images as `[image]`, and thinking blocks dropped.
 */
export function flattenContent(content: unknown, depth = 0): string {
  if (depth > 6 || content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  if (typeof content === "number" || typeof content === "boolean") return String(content);
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const item of content) {
      const text = flattenContent(item, depth + 1).trim();
      if (text !== "") parts.push(text);
    }
    return parts.join("\n\n");
  }
  if (!isObject(content)) return "";
  const type = str(content["type"]);
  if (type !== null) {
    if (SKIPPED_BLOCK_TYPES.has(type)) return "";
    if (TEXT_BLOCK_TYPES.has(type)) return str(content["text"]) ?? "";
    if (TOOL_CALL_TYPES.has(type)) {
      return renderToolCall(content["name"], content["input"] ?? content["arguments"] ?? content["args"]);
    }
    if (TOOL_RESULT_TYPES.has(type)) {
      return renderToolResult(content["content"] ?? content["output"] ?? content["result"], {
        isError: content["is_error"] === true || content["isError"] === true,
      });
    }
    if (type === "image" || type === "input_image" || type === "image_url") return "[image]";
  }
  const contentType = str(content["content_type"]);
  if (contentType !== null && contentType.includes("image")) return "[image]";
  if (typeof content["text"] === "string") return content["text"];
  if (content["content"] !== undefined) return flattenContent(content["content"], depth + 1);
  if (Array.isArray(content["parts"])) return flattenContent(content["parts"], depth + 1);
  return "";
}

/** First line of a message, cut to a title. */
export function titleFrom(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const line = text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "");
  if (line === undefined) return null;
  return clip(line, MAX_TITLE_CHARS);
}

export interface MessageInput {
  role: string;
  author?: string | null;
  createdAt?: number | null;
  content: string;
  lineNumber: number;
  /** Whether a user message may supply the fallback title (default true). */
  titleCandidate?: boolean;
}

/**
 * Collects messages for one conversation: drops blank messages, clips content, stops at
 * MAX_MESSAGES, and derives start/end times and a fallback title.
 */
export class ConversationBuilder {
  readonly messages: NormalizedMessage[] = [];
  private firstUser: string | null = null;

  get full(): boolean {
    return this.messages.length >= MAX_MESSAGES;
  }

  /** Adds a message; returns false when it was blank or the cap is reached. */
  add(input: MessageInput): boolean {
    if (this.full) return false;
    const content = clip(input.content.trim());
    if (content === "") return false;
    const role = input.role.trim().toLowerCase() || "assistant";
    if (role === "user" && this.firstUser === null && input.titleCandidate !== false) this.firstUser = content;
    this.messages.push({
      idx: this.messages.length,
      role,
      author: input.author ?? null,
      createdAt: input.createdAt ?? null,
      content,
      lineNumber: Math.max(1, input.lineNumber),
    });
    return true;
  }

  /** Content of the last kept message, if any. */
  last(): NormalizedMessage | undefined {
    return this.messages[this.messages.length - 1];
  }

  /** Appends text to the last kept message (for records split over several lines). */
  appendToLast(text: string): boolean {
    const last = this.last();
    const extra = text.trim();
    if (last === undefined || extra === "") return false;
    last.content = clip(`${last.content}\n\n${extra}`);
    return true;
  }

  /** The conversation, or null when no message was kept. */
  build(meta: {
    agent: AgentSlug;
    sourcePath: string;
    externalId?: string | null;
    title?: string | null;
    workspace?: string | null;
    startedAt?: number | null;
    endedAt?: number | null;
  }): NormalizedConversation | null {
    if (this.messages.length === 0) return null;
    let min: number | null = null;
    let max: number | null = null;
    for (const m of this.messages) {
      if (m.createdAt === null) continue;
      if (min === null || m.createdAt < min) min = m.createdAt;
      if (max === null || m.createdAt > max) max = m.createdAt;
    }
    const metaStart = meta.startedAt ?? null;
    const metaEnd = meta.endedAt ?? null;
    const startedAt = metaStart === null ? min : min === null ? metaStart : Math.min(metaStart, min);
    const endedAt = metaEnd === null ? max : max === null ? metaEnd : Math.max(metaEnd, max);
    return {
      agent: meta.agent,
      externalId: meta.externalId ?? null,
      title: nonEmpty(meta.title) !== null ? clip(meta.title!.trim(), MAX_TITLE_CHARS * 2) : titleFrom(this.firstUser),
      workspace: nonEmpty(meta.workspace),
      sourcePath: meta.sourcePath,
      startedAt,
      endedAt: endedAt !== null && startedAt !== null && endedAt < startedAt ? startedAt : endedAt,
      messages: this.messages,
    };
  }
}

export interface Line {
  text: string;
  /** 1-based. */
  lineNumber: number;
}

/**
 * Streams a text file line by line without holding it in memory: UTF-8, BOM stripped, `\r\n`
 * handled. Lines longer than `maxLineBytes` are skipped (their bytes are never accumulated).
 * Missing or unreadable files yield nothing.
 */
export async function* readLines(file: string, maxLineBytes: number = MAX_LINE_BYTES): AsyncGenerator<Line> {
  let stream;
  try {
    stream = createReadStream(file, { highWaterMark: 256 * 1024 });
  } catch {
    return;
  }
  let pieces: Buffer[] = [];
  let pending = 0;
  let oversized = false;
  let lineNumber = 0;
  const finish = (): Line | null => {
    lineNumber += 1;
    if (oversized) {
      oversized = false;
      pieces = [];
      pending = 0;
      return null;
    }
    let text = pieces.length === 1 ? pieces[0]!.toString("utf8") : Buffer.concat(pieces, pending).toString("utf8");
    pieces = [];
    pending = 0;
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (lineNumber === 1) text = stripBom(text);
    return { text, lineNumber };
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let start = 0;
      while (start < chunk.length) {
        const nl = chunk.indexOf(0x0a, start);
        const end = nl === -1 ? chunk.length : nl;
        if (!oversized) {
          if (pending + (end - start) > maxLineBytes) {
            oversized = true;
            pieces = [];
            pending = 0;
          } else if (end > start) {
            pieces.push(chunk.subarray(start, end));
            pending += end - start;
          }
        }
        if (nl === -1) break;
        const line = finish();
        if (line !== null) yield line;
        start = nl + 1;
      }
    }
  } catch {
    // Unreadable mid-way (deleted, permission, EISDIR): keep what was read.
  } finally {
    stream.destroy();
  }
  if (pending > 0 || oversized) {
    const line = finish();
    if (line !== null) yield line;
  }
}

/** Parses one JSONL line; null for blank or malformed lines and non-object values. */
export function parseJsonLine(text: string): JsonObject | null {
  const trimmed = text.trim();
  if (trimmed === "" || trimmed[0] !== "{") return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

/** Streams the JSON objects of a JSONL file with their line numbers. */
export async function* readJsonl(file: string): AsyncGenerator<{ value: JsonObject; lineNumber: number }> {
  for await (const line of readLines(file)) {
    const value = parseJsonLine(line.text);
    if (value !== null) yield { value, lineNumber: line.lineNumber };
  }
}

/** Reads and parses a whole JSON document; undefined when missing, too large or malformed. */
export async function readJsonDocument(file: string, maxBytes: number = MAX_JSON_BYTES): Promise<Json | undefined> {
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > maxBytes) return undefined;
    const text = stripBom(await readFile(file, "utf8")).trim();
    if (text === "") return undefined;
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** Reads a whole text file (BOM stripped, CRLF normalised); null when missing or too large. */
export async function readTextFile(file: string, maxBytes: number = MAX_JSON_BYTES): Promise<string | null> {
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > maxBytes) return null;
    return stripBom(await readFile(file, "utf8")).replace(/\r\n?/g, "\n");
  } catch {
    return null;
  }
}

export async function fileInfo(file: string): Promise<{ mtimeMs: number; size: number; isFile: boolean; isDirectory: boolean } | null> {
  try {
    const info = await stat(file);
    return { mtimeMs: info.mtimeMs, size: info.size, isFile: info.isFile(), isDirectory: info.isDirectory() };
  } catch {
    return null;
  }
}

export interface WalkOptions {
  /** Deepest directory level descended into below the root (the root's children are depth 1). */
  maxDepth: number;
  /** Whether a file (by name, absolute path and depth) is a session file. */
  acceptFile: (name: string, fullPath: string, depth: number) => boolean;
  /** Whether to descend into a directory (the root is always entered). */
  enterDir?: (name: string, fullPath: string, depth: number) => boolean;
  /**
   * Whether the subdirectories of a directory just listed (by the names it holds) are entered at
   * all; its files are still matched. Lets a walk recognise a dependency or cache tree by a marker
   * file (`pyvenv.cfg`, `CACHEDIR.TAG`, …) whatever the tree is called. Not asked for the root.
   */
  enterChildren?: (names: ReadonlySet<string>, dir: string, depth: number) => boolean;
  /** Upper bound on directories visited (protects broad roots like HOME). */
  maxDirs?: number;
  /** Upper bound on files returned. */
  maxFiles?: number;
}

const ALWAYS_SKIPPED_DIRS = new Set(["node_modules", ".git", ".hg", ".svn"]);
/**
 * Directories of one level whose `realpath` and `readdir` are in flight together. The walk still
 * visits them in order (the same directories are entered and counted as one at a time would),
 * only the waiting overlaps: one call at a time costs a thread-pool round trip each.
 */
const WALK_CONCURRENCY = 16;

/**
 * Walks `root` breadth-first to a bounded depth and returns matching files. Follows symlinks but
 * never enters a directory twice (by real path), ignores unreadable directories, and tolerates a
 * missing root. A root that is itself an accepted file is returned as-is.
 */
export async function walkFiles(root: string, opts: WalkOptions): Promise<string[]> {
  const maxDirs = opts.maxDirs ?? 50_000;
  const maxFiles = opts.maxFiles ?? 200_000;
  const rootInfo = await fileInfo(root);
  if (rootInfo === null) return [];
  if (rootInfo.isFile) return opts.acceptFile(path.basename(root), root, 0) ? [root] : [];
  if (!rootInfo.isDirectory) return [];

  const found: string[] = [];
  const seen = new Set<string>();
  let queue: Array<{ dir: string; depth: number }> = [{ dir: root, depth: 0 }];
  let visited = 0;
  while (queue.length > 0) {
    const next: Array<{ dir: string; depth: number }> = [];
    for (let start = 0; start < queue.length; start += WALK_CONCURRENCY) {
      const batch = queue.slice(start, start + WALK_CONCURRENCY);
      const reals = await Promise.all(batch.map(({ dir }) => realpath(dir).catch(() => null)));
      // Decide in order which directories are visited, exactly as a one-at-a-time walk would.
      const chosen: Array<{ dir: string; depth: number }> = [];
      let capped = false;
      for (let i = 0; i < batch.length; i++) {
        if (visited >= maxDirs) {
          capped = true;
          break;
        }
        const real = reals[i];
        if (real === null || real === undefined || seen.has(real)) continue;
        seen.add(real);
        visited += 1;
        chosen.push(batch[i]!);
      }
      const listings = await Promise.all(chosen.map(({ dir }) => readdir(dir, { withFileTypes: true }).catch(() => null)));
      for (let i = 0; i < chosen.length; i++) {
        const entries = listings[i];
        if (entries === null || entries === undefined) continue;
        const { dir, depth } = chosen[i]!;
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const descend =
          depth === 0 || opts.enterChildren === undefined || opts.enterChildren(new Set(entries.map((e) => e.name)), dir, depth);
        for (const entry of entries) {
          const full = path.join(dir, entry.name);
          let isDir = entry.isDirectory();
          let isFile = entry.isFile();
          if (entry.isSymbolicLink()) {
            const target = await fileInfo(full);
            if (target === null) continue;
            isDir = target.isDirectory;
            isFile = target.isFile;
          }
          const childDepth = depth + 1;
          if (isFile) {
            if (opts.acceptFile(entry.name, full, childDepth)) {
              found.push(full);
              if (found.length >= maxFiles) return found.sort();
            }
          } else if (descend && isDir && childDepth <= opts.maxDepth && !ALWAYS_SKIPPED_DIRS.has(entry.name)) {
            if (opts.enterDir === undefined || opts.enterDir(entry.name, full, childDepth)) {
              next.push({ dir: full, depth: childDepth });
            }
          }
        }
      }
      if (capped) return found.sort();
    }
    queue = next;
  }
  return found.sort();
}

/** Stats files into refs (files that vanished are dropped). */
/** How many `stat` calls discovery keeps in flight (one at a time costs a thread-pool round trip each). */
const STAT_CONCURRENCY = 64;

export async function toRefs(agent: AgentSlug, files: string[]): Promise<SessionFileRef[]> {
  const refs: SessionFileRef[] = [];
  for (let start = 0; start < files.length; start += STAT_CONCURRENCY) {
    const batch = files.slice(start, start + STAT_CONCURRENCY);
    const infos = await Promise.all(batch.map((file) => fileInfo(file)));
    infos.forEach((info, i) => {
      if (info !== null && info.isFile) refs.push({ agent, path: batch[i]!, mtimeMs: info.mtimeMs, size: info.size });
    });
  }
  return refs;
}

/** Joins onto a base using the separator style of the target platform. */
export function joinFor(platform: NodeJS.Platform, ...parts: string[]): string {
  return platform === "win32" ? path.win32.join(...parts) : path.posix.join(...parts);
}

/** Expands a leading `~` against the home directory. */
export function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** Non-blank environment variable value. */
export function envValue(env: Readonly<Record<string, string | undefined>>, name: string): string | null {
  const value = env[name];
  return typeof value === "string" && value.trim() !== "" ? value.trim() : null;
}

/** Removes duplicates while keeping the first occurrence's position. */
export function uniquePaths(paths: Array<string | null | undefined>): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const p of paths) {
    if (p === null || p === undefined || p === "") continue;
    if (seen.has(p)) continue;
    seen.add(p);
    out.push(p);
  }
  return out;
}

/**
 * The per-user application data directories of VS Code-family editors (where extensions keep
 * `globalStorage`): `~/.config` (or `$XDG_CONFIG_HOME`) on Linux, `~/Library/Application Support`
 * on macOS, `%APPDATA%` on Windows.
 */
export function editorUserDirs(
  ctx: { home: string; env: Readonly<Record<string, string | undefined>>; platform: NodeJS.Platform },
  editors: readonly string[] = ["Code", "Cursor", "Code - Insiders", "VSCodium", "Windsurf"],
): string[] {
  const bases: string[] = [];
  if (ctx.platform === "win32") {
    bases.push(envValue(ctx.env, "APPDATA") ?? joinFor("win32", ctx.home, "AppData", "Roaming"));
  } else if (ctx.platform === "darwin") {
    bases.push(joinFor(ctx.platform, ctx.home, "Library", "Application Support"));
  } else {
    const xdg = envValue(ctx.env, "XDG_CONFIG_HOME");
    if (xdg !== null) bases.push(xdg);
    bases.push(joinFor(ctx.platform, ctx.home, ".config"));
  }
  const out: string[] = [];
  for (const base of uniquePaths(bases)) {
    for (const editor of editors) out.push(joinFor(ctx.platform, base, editor, "User"));
  }
  return out;
}

/** Converts a `file://` URI to a path (other strings are returned unchanged). */
export function fileUriToPath(value: string): string {
  if (!value.startsWith("file://")) return value;
  try {
    const url = new URL(value);
    let p = decodeURIComponent(url.pathname);
    if (/^\/[A-Za-z]:\//.test(p)) p = p.slice(1);
    return p;
  } catch {
    return value;
  }
}
