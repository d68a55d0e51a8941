import type * as z from "zod";
import { DIARY_ID } from "./diary-records.js";
import { AppError } from "../errors.js";
import { formatZodIssues } from "../operation.js";
import { isProcessedLogName } from "../operations/onboard-records.js";
import type { CostTotals, Layer, LogName } from "../ports.js";
import { validatePlaybookForWrite } from "../schemas/codec.js";
import { DiaryEntrySchema, JournalEventSchema, OnboardingStateSchema, ProcessedSessionSchema } from "../schemas/records.js";
import type { StoreSection } from "./transfer.js";

/**
 * The section keys of a store transfer and the checks every store applies before writing a
 * section, kept here so that the stores cannot disagree on them.
 *
 * Keys: `<layer>/playbook`, `<layer>/journal`, `<layer>/blocked`, `<layer>/log/<log>` for each
 * layer (`global`, `repo`), and, for the global directory only, `diaries`, `processed/<log>`
 * (`global`, `ws-<8 hex>`), `onboarding` and `costs`.
 */

/** Every per-layer JSONL log, in the order sections are listed. */
export const TRANSFER_LOG_NAMES: readonly LogName[] = ["outcomes", "context-log", "traumas", "usage", "privacy-audit", "reflection-runs"];

/** A section key taken apart. */
export type SectionAddress =
  | { kind: "playbook" | "journal" | "blocked"; layer: Layer }
  | { kind: "log"; layer: Layer; log: LogName }
  | { kind: "diaries" }
  | { kind: "processed"; log: string }
  | { kind: "onboarding" }
  | { kind: "costs" };

const MONTH = /^\d{4}-(0[1-9]|1[0-2])$/;

/** True for a cost ledger month key `YYYY-MM`. */
export function isCostMonth(month: string): boolean {
  return MONTH.test(month);
}

export function sectionKeyOf(address: SectionAddress): string {
  switch (address.kind) {
    case "playbook":
    case "journal":
    case "blocked":
      return `${address.layer}/${address.kind}`;
    case "log":
      return `${address.layer}/log/${address.log}`;
    case "processed":
      return `processed/${address.log}`;
    default:
      return address.kind;
  }
}

function unknownKey(key: string): AppError {
  return new AppError("INVALID_INPUT", `Unknown storage section '${key}'`, {
    hint: "Section keys look like global/playbook, repo/log/outcomes, diaries, processed/global, onboarding, costs.",
    details: { section: key },
  });
}

/** The address of a section key; INVALID_INPUT for a key no store has. */
export function parseSectionKey(key: string): SectionAddress {
  if (key === "diaries" || key === "onboarding" || key === "costs") return { kind: key };
  const parts = key.split("/");
  if (parts[0] === "processed" && parts.length === 2 && isProcessedLogName(parts[1] as string)) return { kind: "processed", log: parts[1] as string };
  const layer = parts[0];
  if (layer !== "global" && layer !== "repo") throw unknownKey(key);
  if (parts.length === 2 && (parts[1] === "playbook" || parts[1] === "journal" || parts[1] === "blocked")) return { kind: parts[1], layer };
  if (parts.length === 3 && parts[1] === "log" && (TRANSFER_LOG_NAMES as readonly string[]).includes(parts[2] as string)) {
    return { kind: "log", layer, log: parts[2] as LogName };
  }
  throw unknownKey(key);
}

/** The keys of one layer's sections, in listing order. */
export function layerSectionKeys(layer: Layer): string[] {
  return [`${layer}/playbook`, `${layer}/journal`, `${layer}/blocked`, ...TRANSFER_LOG_NAMES.map((log) => `${layer}/log/${log}`)];
}

/** The layer a section belongs to (null for the global directory's own sections). */
export function sectionLayer(address: SectionAddress): Layer | null {
  return "layer" in address ? address.layer : null;
}

/** The section of `key` as a store holding nothing for it returns it. */
export function emptySection(key: string): StoreSection {
  const address = parseSectionKey(key);
  switch (address.kind) {
    case "playbook":
      return { key, kind: "playbook", layer: address.layer, playbook: null };
    case "journal":
      return { key, kind: "journal", layer: address.layer, events: [], skipped: 0 };
    case "blocked":
      return { key, kind: "blocked", layer: address.layer, blocked: [], toxic: [], skipped: 0 };
    case "log":
      return { key, kind: "log", layer: address.layer, log: address.log, records: [], skipped: 0 };
    case "diaries":
      return { key, kind: "diaries", entries: [], skipped: 0 };
    case "processed":
      return { key, kind: "processed", log: address.log, records: [] };
    case "onboarding":
      return { key, kind: "onboarding", state: null };
    case "costs":
      return { key, kind: "costs", months: {}, totals: null, skipped: 0 };
  }
}

/** True when the section holds anything: records, a playbook or state, or lines that were skipped. */
export function sectionHoldsData(section: StoreSection): boolean {
  switch (section.kind) {
    case "playbook":
      return section.playbook !== null;
    case "journal":
      return section.events.length > 0 || section.skipped > 0;
    case "blocked":
      return section.blocked.length > 0 || section.toxic.length > 0 || section.skipped > 0;
    case "log":
      return section.records.length > 0 || section.skipped > 0;
    case "diaries":
      return section.entries.length > 0 || section.skipped > 0;
    case "processed":
      return section.records.length > 0;
    case "onboarding":
      return section.state !== null;
    case "costs":
      return Object.values(section.months).some((entries) => entries.length > 0) || section.totals !== null || section.skipped > 0;
  }
}

function rank(key: string): [number, string] {
  const address = parseSectionKey(key);
  const layer = sectionLayer(address);
  if (layer !== null) return [layer === "global" ? 0 : 1, String(layerSectionKeys(layer).indexOf(key)).padStart(3, "0")];
  switch (address.kind) {
    case "diaries":
      return [2, ""];
    case "processed":
      return [3, address.log];
    case "onboarding":
      return [4, ""];
    default:
      return [5, ""];
  }
}

/** Sorts keys in listing order: the global layer, the repo layer, diaries, processed logs, onboarding, costs. */
export function sortSectionKeys(keys: readonly string[]): string[] {
  return [...keys].sort((a, b) => {
    const [ra, sa] = rank(a);
    const [rb, sb] = rank(b);
    return ra - rb || (sa < sb ? -1 : sa > sb ? 1 : 0);
  });
}

function invalid(key: string, message: string, cause?: unknown): AppError {
  return new AppError("VALIDATION_FAILED", `Invalid storage section '${key}': ${message}`, {
    hint: "Nothing was written for this section.",
    details: { section: key },
    ...(cause !== undefined ? { cause } : {}),
  });
}

/** Every element must be storable as one JSON line. */
function requireJsonValues(key: string, what: string, values: unknown): unknown[] {
  if (!Array.isArray(values)) throw invalid(key, `${what} must be a list`);
  values.forEach((value, index) => {
    let text: string | undefined;
    try {
      text = JSON.stringify(value);
    } catch (error) {
      throw invalid(key, `${what}[${index}] cannot be stored as JSON`, error);
    }
    if (text === undefined) throw invalid(key, `${what}[${index}] cannot be stored as JSON`);
  });
  return values;
}

function parseAll<S extends z.ZodType>(key: string, what: string, values: unknown, schema: S): Array<z.output<S>> {
  if (!Array.isArray(values)) throw invalid(key, `${what} must be a list`);
  return values.map((value, index) => {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw invalid(key, `${what}[${index}]: ${formatZodIssues(parsed.error)}`, parsed.error);
    return parsed.data;
  });
}


/**
 * The diary entries a section can carry, in the given order: an entry whose id a store cannot
 * save (not a file name) or whose id an earlier entry already has (two files holding one id) is
 * left out and counted in `dropped`.
 */
export function distinctDiaries<T extends { id: string }>(entries: readonly T[]): { entries: T[]; dropped: number } {
  const seen = new Set<string>();
  const kept: T[] = [];
  for (const entry of entries) {
    if (!DIARY_ID.test(entry.id) || seen.has(entry.id)) continue;
    seen.add(entry.id);
    kept.push(entry);
  }
  return { entries: kept, dropped: entries.length - kept.length };
}

/**
 * Checks a section before a store writes it: the key must match the kind (and layer and log), and
 * every record must be one the store could have written through its normal methods. Returns the
 * section with its records validated (unknown fields kept). VALIDATION_FAILED otherwise (or
 * INVALID_INPUT for an unknown key); a store writes nothing then.
 */
export function checkSection(section: StoreSection): StoreSection {
  if (section === null || typeof section !== "object") throw invalid(String(section), "not a section");
  const { key } = section;
  const address = parseSectionKey(key);
  if (address.kind !== section.kind) throw invalid(key, `kind '${section.kind}' does not match the key`);
  if ("layer" in address && (section as { layer?: unknown }).layer !== address.layer) throw invalid(key, "the layer does not match the key");
  switch (section.kind) {
    case "playbook":
      return { ...section, playbook: section.playbook === null ? null : validatePlaybookForWrite(section.playbook, key) };
    case "journal":
      return { ...section, events: parseAll(key, "events", section.events, JournalEventSchema) };
    case "blocked":
      return { ...section, blocked: requireJsonValues(key, "blocked", section.blocked), toxic: requireJsonValues(key, "toxic", section.toxic) };
    case "log":
      if ((address as { log: string }).log !== section.log) throw invalid(key, "the log does not match the key");
      return { ...section, records: requireJsonValues(key, "records", section.records) };
    case "diaries": {
      const entries = parseAll(key, "entries", section.entries, DiaryEntrySchema);
      const seen = new Set<string>();
      for (const entry of entries) {
        if (!DIARY_ID.test(entry.id)) throw invalid(key, `diary id "${entry.id}": only letters, digits, '.', '_' and '-' are allowed`);
        if (seen.has(entry.id)) throw invalid(key, `diary id "${entry.id}" appears twice`);
        seen.add(entry.id);
      }
      return { ...section, entries };
    }
    case "processed":
      if ((address as { log: string }).log !== section.log) throw invalid(key, "the log does not match the key");
      return { ...section, records: parseAll(key, "records", section.records, ProcessedSessionSchema) };
    case "onboarding": {
      if (section.state === null) return section;
      const parsed = OnboardingStateSchema.safeParse(section.state);
      if (!parsed.success) throw invalid(key, formatZodIssues(parsed.error), parsed.error);
      return { ...section, state: parsed.data };
    }
    case "costs": {
      if (section.months === null || typeof section.months !== "object" || Array.isArray(section.months)) throw invalid(key, "months must be a mapping");
      for (const [month, entries] of Object.entries(section.months)) {
        if (!isCostMonth(month)) throw invalid(key, `'${month}' is not a month (YYYY-MM)`);
        requireJsonValues(key, `months.${month}`, entries);
      }
      const totals = section.totals as unknown;
      if (totals !== null && (typeof totals !== "object" || Array.isArray(totals))) throw invalid(key, "totals must be an object or null");
      return section;
    }
  }
  throw invalid(key, "unknown kind");
}

/**
 * The cost totals (`cost/total.json`) of a costs section as stored: the JSON object, or null when
 * the text is missing or blank; text that is not a JSON object counts as one skipped record.
 */
export function costTotalsOfText(text: string | null | undefined): { totals: CostTotals | null; skipped: number } {
  if (text === null || text === undefined || text.trim() === "") return { totals: null, skipped: 0 };
  try {
    const value = JSON.parse(text) as unknown;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return { totals: value as CostTotals, skipped: 0 };
  } catch {
    // counted below
  }
  return { totals: null, skipped: 1 };
}
