import { createRequire } from "node:module";
import { AppError, PlaybookSchema, createEmptyPlaybook } from "@cass-memory/core";
import type { ErrorCode, Layer, Playbook } from "@cass-memory/core";
import { emitYaml, parseOwnYaml } from "./fast-yaml.js";
import { parseLibraryYaml } from "./library-yaml.js";

type YamlModule = typeof import("yaml");

let yamlModule: YamlModule | undefined;

/**
 * The `yaml` package costs ~50 ms to load, a sixth of the whole budget of `cm context`. Our own files
 * are read and written by the fast codec (fast-yaml.ts); the library is only needed for YAML outside
 * that subset (hand-edited files, the original's folded lines) and for error reporting, so it is
 * loaded on first use. In an ESM build `import.meta.url` is set; in a CommonJS bundle (esbuild leaves
 * `import.meta` empty there) the module's own `require` is used, which a bundler can resolve lazily.
 */
function yamlLib(): YamlModule {
  if (yamlModule === undefined) {
    const url = import.meta.url as string | undefined;
    yamlModule = (url ? createRequire(url)("yaml") : require("yaml")) as YamlModule;
  }
  return yamlModule;
}

/**
 * Serialises JSON-like data as block YAML (2-space indent, one line per scalar, strings quoted
 * unless provably plain), readable by the original and by any YAML 1.2 parser.
 */
export function toYaml(value: unknown): string {
  return emitYaml(value);
}

interface YamlProblem {
  message: string;
  line?: number;
  column?: number;
}

function firstProblem(errors: readonly { message: string; linePos?: readonly { line: number; col: number }[] }[]): YamlProblem | null {
  const err = errors[0];
  if (!err) return null;
  const pos = err.linePos?.[0];
  // yaml's messages carry a code frame after the first line; keep the first line only.
  const message = (err.message.split("\n")[0] ?? err.message).trim();
  return pos ? { message, line: pos.line, column: pos.col } : { message };
}

/**
 * Parses YAML text, with the fast codec when the text is in its subset, else with the reader of the
 * `yaml` library's output format, and with the `yaml` library itself only when neither reads it;
 * on a syntax error returns the problem with its 1-based line/column.
 */
function parseYaml(text: string): { ok: true; value: unknown } | { ok: false; problem: YamlProblem } {
  const fast = parseOwnYaml(text);
  if (fast !== undefined) return { ok: true, value: fast };
  // The `yaml` library's own output (the earlier cm's playbooks, hand-edited files in its style).
  const written = parseLibraryYaml(text);
  if (written !== undefined) return { ok: true, value: written };
  const Y = yamlLib();
  const doc = Y.parseDocument(text, { prettyErrors: true, logLevel: "silent" });
  const problem = firstProblem(doc.errors);
  if (problem) return { ok: false, problem };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) };
  } catch (error) {
    return { ok: false, problem: { message: error instanceof Error ? error.message : String(error) } };
  }
}

/**
 * Parses YAML text. A syntax error throws an AppError (`code`, default `INVALID_INPUT`; callers pass
 * `CONFIG_INVALID` for configuration files) naming `source` with the line and column. Playbooks go
 * through {@link decodePlaybook}, which raises `PLAYBOOK_CORRUPT`.
 */
export function fromYaml(text: string, source: string, code: ErrorCode = "INVALID_INPUT"): unknown {
  const result = parseYaml(text);
  if (result.ok) return result.value;
  const { problem } = result;
  const where = problem.line !== undefined ? ` (line ${problem.line}, column ${problem.column ?? 1})` : "";
  throw new AppError(code, `Invalid YAML in ${source}${where}: ${problem.message}`, {
    hint: `Fix the YAML syntax in ${source}${problem.line !== undefined ? ` at line ${problem.line}` : ""} and re-run.`,
    details: { source, ...(problem.line !== undefined ? { line: problem.line, column: problem.column } : {}) },
  });
}

function corrupt(path: string, problem: string, line: number | undefined, cause?: unknown): AppError {
  const at = line !== undefined ? ` at line ${line}` : "";
  return new AppError("PLAYBOOK_CORRUPT", `Playbook at ${path} is invalid: ${problem}`, {
    hint:
      `Fix ${path}${at} by hand (it was left untouched), or restore it from a backup ` +
      `(${path}.backup.<timestamp>) or from git; 'cm doctor' inspects it.`,
    details: line !== undefined ? { path, line } : { path },
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Best effort: the 1-based line of the node at a zod issue path, for the error message. */
function lineOfPath(text: string, path: readonly PropertyKey[]): number | undefined {
  try {
    const Y = yamlLib();
    const lineCounter = new Y.LineCounter();
    const doc = Y.parseDocument(text, { lineCounter, logLevel: "silent" });
    for (let depth = path.length; depth >= 0; depth -= 1) {
      const node = doc.getIn(path.slice(0, depth) as unknown[], true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === "object" && Array.isArray(node.range)) {
        return lineCounter.linePos(node.range[0]).line;
      }
    }
  } catch {
    // fall through: no line
  }
  return undefined;
}

function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** True when the text has no YAML content (empty, or only comments and blank lines). */
function isBlankYaml(text: string): boolean {
  return /^(?:\s*(?:#[^\n]*)?(?:\n|$))*$/.test(text.replace(/\r/g, ""));
}

/**
 * Parses and validates playbook YAML. Empty (or comment-only) text gives an empty playbook of the
 * layer; a syntax error or schema violation throws `PLAYBOOK_CORRUPT` with the path and line.
 */
export function decodePlaybook(text: string, path: string, layer: Layer = "global"): Playbook {
  if (isBlankYaml(text)) return createEmptyPlaybook(new Date().toISOString(), layer);
  const parsed = parseYaml(text);
  if (!parsed.ok) {
    const { problem } = parsed;
    const at = problem.line !== undefined ? ` (line ${problem.line}, column ${problem.column ?? 1})` : "";
    return throwError(corrupt(path, `YAML syntax error${at}: ${problem.message}`, problem.line));
  }
  return validatePlaybookData(parsed.value, path, layer, text);
}

function throwError(error: AppError): never {
  throw error;
}

/** Validates already-parsed playbook data (defaults filled, unknown fields kept). */
export function validatePlaybookData(value: unknown, path: string, layer: Layer = "global", text?: string): Playbook {
  if (value === null || value === undefined) return createEmptyPlaybook(new Date().toISOString(), layer);
  if (typeof value !== "object" || Array.isArray(value)) {
    throw corrupt(path, `expected a mapping at the top level, found ${Array.isArray(value) ? "a list" : typeof value}`, 1);
  }
  const result = PlaybookSchema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const issuePath = issue?.path ?? [];
  const where = issuePath.length > 0 ? `${formatPath(issuePath)}: ` : "";
  const line = text !== undefined ? lineOfPath(text, issuePath) : undefined;
  throw corrupt(path, `${where}${issue?.message ?? "schema validation failed"}`, line, result.error);
}

/**
 * The leading comment block of a playbook file (comment and blank lines before the first content
 * line), kept verbatim when the file is rewritten. Empty string when there is none.
 */
export function leadingComments(text: string): string {
  let end = 0;
  let lastComment = 0;
  while (end < text.length) {
    const nl = text.indexOf("\n", end);
    const lineEnd = nl === -1 ? text.length : nl + 1;
    const line = text.slice(end, lineEnd).trim();
    if (line.startsWith("#")) lastComment = lineEnd;
    else if (line !== "") break;
    end = lineEnd;
  }
  if (lastComment === 0) return "";
  const block = text.slice(0, end);
  return block.endsWith("\n") ? block : `${block}\n`;
}

/** The comment header `cm init --repo` writes at the top of `.cass/playbook.yaml`. */
export const REPO_PLAYBOOK_HEADER =
  "# Project-specific playbook rules\n" +
  "# These are merged with your global ~/.cass-memory/playbook.yaml\n" +
  "# Project rules take precedence over global rules\n";

/** Encodes a playbook as file text, with an optional leading comment block. */
export function encodePlaybook(playbook: Playbook, header = ""): string {
  return header + toYaml(playbook);
}
