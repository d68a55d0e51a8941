import * as z from "zod";
import { compileSanitizer } from "../domain/sanitize.js";
import { assertTraumaPattern, checkTraumaPattern, scanForDoomPatterns } from "../domain/trauma.js";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import { TraumaEntrySchema, type TraumaEntry } from "../schemas/records.js";
import { requireNonEmpty, requirePositiveInt } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm trauma list|add|heal|remove|import` (reference §1.5.26): the registry of commands that once
 * caused a disaster ("hot stove"), kept as `traumas.jsonl` in the global directory and in the
 * repository's `.cass/`. Patterns are checked (`checkTraumaPattern`) before they are stored, so a
 * pattern that could hang the guard or `cm context` is refused with INVALID_INPUT and a hint.
 */

export const TRAUMA_LOG_FILE = "traumas.jsonl";
/** Longest `--message` accepted (characters). */
export const MAX_TRAUMA_MESSAGE_LENGTH = 2_000;
/** Largest import accepted: characters of text and lines. */
export const MAX_TRAUMA_IMPORT_CHARS = 1024 * 1024;
export const MAX_TRAUMA_IMPORT_LINES = 10_000;

const SEVERITIES = ["CRITICAL", "FATAL"] as const;
type Severity = (typeof SEVERITIES)[number];
type Scope = "global" | "project";
type ScopeFilter = Scope | "all";

const TraumaEntryOutput = TraumaEntrySchema;

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T, hint: string): T {
  if (value === undefined) return fallback;
  const found = allowed.find((a) => a.toLowerCase() === value.trim().toLowerCase());
  if (found === undefined) {
    throw new AppError("INVALID_INPUT", `${name} must be one of: ${allowed.join(", ")}.`, {
      hint,
      details: { field: name, received: value, allowed: [...allowed] },
    });
  }
  return found;
}

function logPath(dir: string): string {
  return `${dir.replace(/[\\/]+$/, "")}/${TRAUMA_LOG_FILE}`;
}

/** The layers a scope covers, with the path of each layer's registry (repo only inside a repository). */
function layersOf(deps: OperationDeps, scope: ScopeFilter): Array<{ layer: Layer; path: string }> {
  const out: Array<{ layer: Layer; path: string }> = [];
  const { globalDir, repoDir } = deps.store.locations;
  if (scope === "global" || scope === "all") out.push({ layer: "global", path: logPath(globalDir) });
  if ((scope === "project" || scope === "all") && repoDir !== null) out.push({ layer: "repo", path: logPath(repoDir) });
  return out;
}

function layerFor(deps: OperationDeps, scope: Scope): Layer {
  if (scope === "global") return "global";
  if (deps.store.locations.repoDir === null) {
    throw new AppError("CONFIG_INVALID", "Cannot save project-scoped trauma: not in a git repository", {
      hint: `cd into a git repository (and run '${deps.cliName} init --repo' there), or use --scope global.`,
      details: { scope },
    });
  }
  return "repo";
}

/**
 * Every valid entry of the global registry, then the repository's (invalid lines skipped, with a
 * warning). Shared by `trauma list`, `cm context` and the hooks.
 */
export async function loadTraumas(deps: Pick<OperationDeps, "store" | "logger">): Promise<TraumaEntry[]> {
  const entries: TraumaEntry[] = [];
  const layers: Layer[] = deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
  for (const layer of layers) {
    const { records, malformed } = await deps.store.readLog(layer, "traumas");
    let invalid = malformed;
    for (const record of records) {
      const parsed = TraumaEntrySchema.safeParse(record);
      if (parsed.success) entries.push(parsed.data);
      else invalid++;
    }
    if (invalid > 0) deps.logger.warn(`[trauma] Skipped ${invalid} invalid line(s) in the ${layer} trauma registry`);
  }
  return entries;
}

function requireMessage(deps: OperationDeps, message: string | undefined, fallback: string): string {
  const text = message === undefined || message.trim() === "" ? fallback : message;
  if (text.length > MAX_TRAUMA_MESSAGE_LENGTH) {
    throw new AppError("INVALID_INPUT", `message must be at most ${MAX_TRAUMA_MESSAGE_LENGTH} characters (got ${text.length}).`, {
      hint: "Keep the reason short: what happened and what to do instead.",
      details: { field: "message", length: text.length, max: MAX_TRAUMA_MESSAGE_LENGTH },
    });
  }
  return compileSanitizer(deps.config.sanitization).sanitize(text);
}

function newEntry(deps: OperationDeps, fields: { pattern: string; severity: Severity; scope: Scope; sessionPath: string; message: string }): TraumaEntry {
  const now = deps.clock.now().toISOString();
  return {
    id: `trauma-${deps.ids.hex(8)}`,
    severity: fields.severity,
    pattern: fields.pattern,
    scope: fields.scope,
    status: "active",
    trigger_event: { session_path: fields.sessionPath, timestamp: now, human_message: fields.message },
    created_at: now,
  };
}

// --------------------------------------------------------------------------------------------- list

export const TraumaListResultSchema = lazySchema(() => z.object({
  traumas: z.array(TraumaEntryOutput),
  healedCount: z.number(),
}));
export type TraumaListResult = z.output<typeof TraumaListResultSchema>;

export const traumaListOperation = defineOperation({
  name: "trauma_list",
  command: "trauma list",
  description: "List the active traumas: regex patterns of commands that once caused a disaster and must not run again.",
  input: lazySchema(() => z.object({})),
  output: TraumaListResultSchema,
  async run(deps): Promise<TraumaListResult> {
    const all = await loadTraumas(deps);
    const traumas = all.filter((t) => t.status === "active");
    return { traumas, healedCount: all.length - traumas.length };
  },
});

// --------------------------------------------------------------------------------------------- add

export const TraumaAddInputSchema = lazySchema(() => z.object({
  pattern: z.string(),
  severity: z.string().optional(),
  scope: z.string().optional(),
  message: z.string().optional(),
}));

export const TraumaAddResultSchema = lazySchema(() => z.object({ entry: TraumaEntryOutput }));
export type TraumaAddResult = z.output<typeof TraumaAddResultSchema>;

export const traumaAddOperation = defineOperation({
  name: "trauma_add",
  command: "trauma add",
  description:
    "Register a trauma: a case-insensitive regex of a dangerous command (e.g. 'git\\s+push\\s+.*--force'). Matching commands are then blocked by the safety guard and flagged by context. Patterns that could backtrack catastrophically are refused.",
  input: TraumaAddInputSchema,
  output: TraumaAddResultSchema,
  async run(deps, input): Promise<TraumaAddResult> {
    const pattern = requireNonEmpty("pattern", input.pattern, `Example: ${deps.cliName} trauma add "git\\s+push\\s+.*--force" --message "force-pushed over main"`);
    assertTraumaPattern(pattern);
    const hint = `Example: ${deps.cliName} trauma add "<pattern>" --severity CRITICAL --scope global`;
    const severity = oneOf("severity", input.severity, SEVERITIES, "CRITICAL", hint);
    const scope = oneOf<Scope>("scope", input.scope, ["global", "project"], "global", hint);
    const message = requireMessage(deps, input.message, "Manually added trauma.");
    const layer = layerFor(deps, scope);
    const entry = newEntry(deps, { pattern, severity, scope, sessionPath: "manual-entry", message });
    await deps.store.appendLog(layer, "traumas", [entry]);
    return { entry };
  },
});

// --------------------------------------------------------------------------------------------- heal / remove

export const TraumaTargetInputSchema = lazySchema(() => z.object({
  id: z.string(),
  scope: z.string().optional(),
}));

export const TraumaHealResultSchema = lazySchema(() => z.object({
  updated: z.number(),
  checkedPaths: z.array(z.string()),
  updatedPaths: z.array(z.string()),
}));
export type TraumaHealResult = z.output<typeof TraumaHealResultSchema>;

export const traumaHealOperation = defineOperation({
  name: "trauma_heal",
  command: "trauma heal",
  description: "Mark a trauma healed: it stays in the registry but no longer blocks matching commands.",
  input: TraumaTargetInputSchema,
  output: TraumaHealResultSchema,
  async run(deps, input): Promise<TraumaHealResult> {
    const id = requireNonEmpty("id", input.id, `Example: ${deps.cliName} trauma heal trauma-abc123`);
    const scope = oneOf<ScopeFilter>("scope", input.scope, ["global", "project", "all"], "all", `Example: ${deps.cliName} trauma heal ${id} --scope all`);
    const result: TraumaHealResult = { updated: 0, checkedPaths: [], updatedPaths: [] };
    for (const { layer, path } of layersOf(deps, scope)) {
      result.checkedPaths.push(path);
      const { replaced } = await deps.store.updateLog(layer, "traumas", (record) => {
        if (!isEntryWithId(record, id) || record.status === "healed") return record;
        return { ...record, status: "healed" };
      });
      if (replaced > 0) result.updatedPaths.push(path);
      result.updated += replaced;
    }
    if (result.updated === 0) {
      throw new AppError("TRAUMA_NOT_FOUND", `Trauma ${id} not found (nothing healed)`, {
        hint: `Try: ${deps.cliName} trauma list`,
        details: { traumaId: id, checkedPaths: result.checkedPaths },
      });
    }
    return result;
  },
});

export const TraumaRemoveInputSchema = lazySchema(() => TraumaTargetInputSchema.extend({
  /** The caller's explicit `--force`; without it nothing is removed (MISSING_REQUIRED). */
  force: z.boolean().optional(),
}));

export const TraumaRemoveResultSchema = lazySchema(() => z.object({
  removed: z.number(),
  checkedPaths: z.array(z.string()),
  updatedPaths: z.array(z.string()),
}));
export type TraumaRemoveResult = z.output<typeof TraumaRemoveResultSchema>;

/**
 * Deletes a trauma's lines from the registry. Requires `force`; the CLI also asks for
 * confirmation (`--yes`, or typing REMOVE on a terminal) before it runs this.
 */
export const traumaRemoveOperation = defineOperation({
  name: "trauma_remove",
  command: "trauma remove",
  description: "Delete a trauma from the registry (requires force). Prefer trauma_heal, which keeps the record.",
  input: TraumaRemoveInputSchema,
  output: TraumaRemoveResultSchema,
  async run(deps, input): Promise<TraumaRemoveResult> {
    const id = requireNonEmpty("id", input.id, `Example: ${deps.cliName} trauma remove trauma-abc123 --force`);
    const scope = oneOf<ScopeFilter>("scope", input.scope, ["global", "project", "all"], "all", `Example: ${deps.cliName} trauma remove ${id} --force --scope all`);
    if (input.force !== true) {
      throw new AppError("MISSING_REQUIRED", "Refusing to remove trauma without --force", {
        hint: `Example: ${deps.cliName} trauma remove ${id} --force`,
        details: { missing: "--force", traumaId: id },
      });
    }
    const result: TraumaRemoveResult = { removed: 0, checkedPaths: [], updatedPaths: [] };
    for (const { layer, path } of layersOf(deps, scope)) {
      result.checkedPaths.push(path);
      const { removed } = await deps.store.updateLog(layer, "traumas", (record) => (isEntryWithId(record, id) ? null : record));
      if (removed > 0) result.updatedPaths.push(path);
      result.removed += removed;
    }
    if (result.removed === 0) {
      throw new AppError("TRAUMA_NOT_FOUND", `Trauma ${id} not found (nothing removed)`, {
        hint: `Try: ${deps.cliName} trauma list`,
        details: { traumaId: id, checkedPaths: result.checkedPaths },
      });
    }
    return result;
  },
});

function isEntryWithId(record: unknown, id: string): record is Record<string, unknown> & { status?: unknown } {
  return record !== null && typeof record === "object" && !Array.isArray(record) && (record as { id?: unknown }).id === id;
}

// --------------------------------------------------------------------------------------------- import

export const TraumaImportInputSchema = lazySchema(() => z.object({
  /** The file's text (the front end reads the file). */
  content: z.string(),
  /** The file as the user named it (used in the default message). */
  source: z.string(),
  scope: z.string().optional(),
  severity: z.string().optional(),
  message: z.string().optional(),
}));

export const TraumaImportResultSchema = lazySchema(() => z.object({
  imported: z.number(),
  warningsCount: z.number(),
  /** One line per skipped line; the CLI prints them as the envelope's top-level `warnings`. */
  warnings: z.array(z.string()),
}));
export type TraumaImportResult = z.output<typeof TraumaImportResultSchema>;

/** The pattern a line of an import file holds (JSON string, JSON object's `pattern`, or the raw line). */
function patternOfLine(trimmed: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
  if (typeof parsed === "string") return parsed;
  if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) {
    const p = (parsed as { pattern?: unknown }).pattern;
    return typeof p === "string" ? p : undefined;
  }
  return trimmed;
}

export const traumaImportOperation = defineOperation({
  name: "trauma_import",
  command: "trauma import",
  description: "Import traumas from text: one pattern per line, JSON strings, or JSONL objects with a `pattern` field.",
  input: TraumaImportInputSchema,
  output: TraumaImportResultSchema,
  async run(deps, input): Promise<TraumaImportResult> {
    const hint = `Example: ${deps.cliName} trauma import ./traumas.txt --scope global`;
    if (input.content.length > MAX_TRAUMA_IMPORT_CHARS) {
      throw new AppError("INVALID_INPUT", `Import is too large: ${input.content.length} characters (at most ${MAX_TRAUMA_IMPORT_CHARS}).`, {
        hint: "Split the file into smaller files.",
        details: { size: input.content.length, max: MAX_TRAUMA_IMPORT_CHARS },
      });
    }
    const lines = input.content.split(/\r?\n/);
    if (lines.length > MAX_TRAUMA_IMPORT_LINES) {
      throw new AppError("INVALID_INPUT", `Import has too many lines: ${lines.length} (at most ${MAX_TRAUMA_IMPORT_LINES}).`, {
        hint: "Split the file into smaller files.",
        details: { lines: lines.length, max: MAX_TRAUMA_IMPORT_LINES },
      });
    }
    const scope = oneOf<Scope>("scope", input.scope, ["global", "project"], "global", hint);
    const severity = oneOf("severity", input.severity, SEVERITIES, "CRITICAL", hint);
    const message = requireMessage(deps, input.message, `Imported from ${input.source}`);
    const layer = layerFor(deps, scope);

    const warnings: string[] = [];
    const entries: TraumaEntry[] = [];
    lines.forEach((raw, index) => {
      const trimmed = raw.trim();
      if (trimmed === "") return;
      const lineNumber = index + 1;
      const pattern = patternOfLine(trimmed);
      if (pattern === undefined || pattern.trim() === "") {
        warnings.push(`Line ${lineNumber}: missing pattern (skipped)`);
        return;
      }
      const check = checkTraumaPattern(pattern);
      if (!check.ok) {
        warnings.push(
          check.reason === "invalid"
            ? `Line ${lineNumber}: invalid regex pattern (skipped): ${check.message.replace(/^Invalid regex pattern: /, "")}`
            : `Line ${lineNumber}: unsafe regex pattern (skipped): ${check.message}`,
        );
        return;
      }
      entries.push(newEntry(deps, { pattern, severity, scope, sessionPath: "import", message }));
    });
    if (entries.length > 0) await deps.store.appendLog(layer, "traumas", entries);
    return { imported: entries.length, warningsCount: warnings.length, warnings };
  },
});

// --------------------------------------------------------------------------------------------- audit --trauma

/** The history search of the scan (reference §5.10): sessions where something went wrong. */
export const TRAUMA_SCAN_QUERY = "sorry OR apologies OR mistake OR error OR catastrophe OR disaster OR destroyed OR wiped OR deleted OR overwrote OR lost work";
export const TRAUMA_SCAN_SEARCH_LIMIT = 50;
export const TRAUMA_SCAN_TIMEOUT_MS = 30_000;

const TraumaCandidateSchema = lazySchema(() => z.object({
  sessionPath: z.string(),
  matchedPattern: z.string(),
  description: z.string(),
  evidence: z.string(),
  context: z.string(),
  timestamp: z.string().optional(),
}));

export const TraumaScanResultSchema = lazySchema(() => z.object({
  candidates: z.array(TraumaCandidateSchema),
  /** Present when the history could not be searched (as in `cm context`); candidates are then empty. */
  degraded: z
    .object({
      cass: z.object({ available: z.literal(false), reason: z.enum(["NOT_FOUND", "INDEX_MISSING", "FTS_TABLE_MISSING", "TIMEOUT", "OTHER"]), message: z.string(), suggestedFix: z.array(z.string()).optional() }),
    })
    .optional(),
}));
export type TraumaScanResult = z.output<typeof TraumaScanResultSchema>;

/**
 * `cm audit --trauma`: searches recent history for sessions with apologies or damage, reads each
 * (deduplicated, at most TRAUMA_SCAN_SEARCH_LIMIT) and reports every built-in DOOM pattern found
 * in it, for a human to turn into traumas. No LLM. A history source that cannot answer is
 * reported as `degraded`, not an error.
 */
export const traumaScanOperation = defineOperation({
  name: "trauma_scan",
  command: "audit",
  description: "Scan recent sessions for destructive commands (built-in DOOM patterns) that could become traumas.",
  input: lazySchema(() => z.object({ days: z.number().optional() })),
  output: TraumaScanResultSchema,
  async run(deps, input): Promise<TraumaScanResult> {
    const days = requirePositiveInt("days", input.days, 7, 1, `${deps.cliName} audit --trauma --days 30`);
    const search = await deps.episodic.search(TRAUMA_SCAN_QUERY, { limit: TRAUMA_SCAN_SEARCH_LIMIT, days, timeoutMs: TRAUMA_SCAN_TIMEOUT_MS });
    const sessions = new Map<string, string | undefined>();
    for (const hit of search.hits) {
      if (sessions.has(hit.source_path)) continue;
      const created = hit.created_at;
      sessions.set(hit.source_path, created === null || created === undefined || created === "" ? undefined : String(created));
      if (sessions.size >= TRAUMA_SCAN_SEARCH_LIMIT) break;
    }
    if (sessions.size > 0) deps.logger.info(`Scanning ${sessions.size} session(s) for potential traumas...`);
    const sanitize = compileSanitizer(deps.config.sanitization).sanitize;
    const candidates: TraumaScanResult["candidates"] = [];
    for (const [sessionPath, timestamp] of sessions) {
      let text: string | null;
      try {
        text = await deps.episodic.export(sessionPath, "text");
      } catch (error) {
        deps.logger.warn(`[trauma] Failed to read session ${sessionPath}: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      if (text === null) continue;
      for (const found of scanForDoomPatterns(text)) {
        candidates.push({
          sessionPath,
          matchedPattern: found.pattern,
          description: found.description,
          evidence: sanitize(found.evidence),
          context: sanitize(found.context),
          ...(timestamp !== undefined ? { timestamp } : {}),
        });
      }
    }
    return { candidates, ...(search.degraded ? { degraded: { cass: search.degraded } } : {}) };
  },
});
