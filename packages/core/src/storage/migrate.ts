import type { StoreSection, StoreSectionKind, StoreTransfer } from "./transfer.js";

/**
 * Copying a store's content into another store section by section (`cm storage migrate`), and
 * checking afterwards that the two hold the same data. Pure orchestration over `StoreTransfer`:
 * where the stores live, how progress is saved and when the switch happens is the host's business.
 */

/** What a section holds, counted for progress lines and reports. */
export interface SectionSummary {
  key: string;
  kind: StoreSectionKind;
  /** Records in the section: bullets, events, entries, log lines, processed sessions, cost entries (1 for an onboarding state). */
  records: number;
  /** Lines the source could not parse (they are not carried over; the source keeps them). */
  skipped: number;
}

export interface SectionProgress extends SectionSummary {
  /** 1-based position among the sections of this run, completed ones included. */
  index: number;
  total: number;
}

export interface MigrateSectionsOptions {
  /** Keys copied by an earlier, interrupted run: they are not copied again. */
  completed: ReadonlySet<string>;
  /** The keys to copy, in this order (default: every section the source lists). */
  keys?: readonly string[];
  /**
   * Called after each section is written to the target and before the next one is read; awaited,
   * so a host that saves `key` as completed here can resume exactly after the last saved section.
   */
  onSection?: (progress: SectionProgress) => void | Promise<void>;
}

export interface MigrateSectionsResult {
  /** Every key of the run, in order. */
  keys: string[];
  /** Sections copied by this call. */
  copied: SectionSummary[];
  /** Keys skipped because an earlier run had copied them. */
  alreadyCompleted: string[];
}

/** Counts what a section holds. */
export function summarizeSection(section: StoreSection): SectionSummary {
  const base = { key: section.key, kind: section.kind };
  switch (section.kind) {
    case "playbook":
      return { ...base, records: section.playbook?.bullets.length ?? 0, skipped: 0 };
    case "journal":
      return { ...base, records: section.events.length, skipped: section.skipped };
    case "blocked":
      return { ...base, records: section.blocked.length + section.toxic.length, skipped: section.skipped };
    case "log":
      return { ...base, records: section.records.length, skipped: section.skipped };
    case "diaries":
      return { ...base, records: section.entries.length, skipped: section.skipped };
    case "processed":
      return { ...base, records: section.records.length, skipped: 0 };
    case "onboarding":
      return { ...base, records: section.state === null ? 0 : 1, skipped: 0 };
    case "costs":
      return { ...base, records: Object.values(section.months).reduce((sum, entries) => sum + entries.length, 0), skipped: section.skipped };
  }
}

/**
 * Copies the source's sections into the target, one at a time (read one, write it whole, report
 * it), skipping the keys in `completed`. The source is only read. A section written twice ends the
 * same, so rerunning after an interruption at any point is safe.
 */
export async function migrateSections(source: StoreTransfer, target: StoreTransfer, options: MigrateSectionsOptions): Promise<MigrateSectionsResult> {
  const keys = dedupe(options.keys ?? (await source.listSections()));
  const copied: SectionSummary[] = [];
  const alreadyCompleted: string[] = [];
  for (const [i, key] of keys.entries()) {
    if (options.completed.has(key)) {
      alreadyCompleted.push(key);
      continue;
    }
    const section = await source.readSection(key);
    if (section.key !== key) throw new Error(`Storage transfer returned section '${section.key}' when asked for '${key}'`);
    await target.writeSection(section);
    const summary = summarizeSection(section);
    copied.push(summary);
    await options.onSection?.({ ...summary, index: i + 1, total: keys.length });
  }
  return { keys, copied, alreadyCompleted };
}

/** One section whose data differs between the two stores. */
export interface SectionDifference {
  key: string;
  kind: StoreSectionKind;
  /** Where the JSON forms first differ, e.g. `playbook.bullets[3].helpfulCount`. */
  path: string;
  /** The two values at `path` (as JSON text, cut to 200 characters; `(missing)` when absent). */
  source: string;
  target: string;
  sourceRecords: number;
  targetRecords: number;
}

export interface VerifySectionsOptions {
  /** Only keys for which this returns true are compared (default: all). */
  include?: (key: string) => boolean;
  /** Called after each section is compared. */
  onSection?: (progress: { key: string; index: number; total: number; equal: boolean }) => void | Promise<void>;
}

export interface VerifySectionsResult {
  /** Keys compared: every section either store lists. */
  keys: string[];
  /** The sections whose data differ (empty when the stores agree). */
  differences: SectionDifference[];
  /** Lines the source could not parse, per section (not carried over, so not compared). */
  skipped: Record<string, number>;
}

/**
 * Compares every section either store lists (a section one of them omits is read as the empty
 * section there) by deep equality of the JSON form: object keys in any order, arrays in order.
 * `skipped` counts are not compared — unreadable lines are never copied — but reported.
 */
export async function verifySections(source: StoreTransfer, target: StoreTransfer, options: VerifySectionsOptions = {}): Promise<VerifySectionsResult> {
  const include = options.include ?? (() => true);
  const listed = dedupe([...(await source.listSections()), ...(await target.listSections())]);
  const keys = listed.filter(include);
  const differences: SectionDifference[] = [];
  const skipped: Record<string, number> = {};
  for (const [i, key] of keys.entries()) {
    const a = await source.readSection(key);
    const b = await target.readSection(key);
    const sa = summarizeSection(a);
    const sb = summarizeSection(b);
    if (sa.skipped > 0) skipped[key] = sa.skipped;
    const found = firstDifference(comparable(a), comparable(b), "");
    if (found !== null) {
      differences.push({
        key,
        kind: a.kind,
        path: found.path === "" ? "(section)" : found.path,
        source: preview(found.a),
        target: preview(found.b),
        sourceRecords: sa.records,
        targetRecords: sb.records,
      });
    }
    await options.onSection?.({ key, index: i + 1, total: keys.length, equal: found === null });
  }
  return { keys, differences, skipped };
}

function dedupe(keys: readonly string[]): string[] {
  return [...new Set(keys)];
}

const MISSING = Symbol("missing");

/** The JSON form of a section without its `skipped` count. */
function comparable(section: StoreSection): unknown {
  const json = JSON.parse(JSON.stringify(section)) as Record<string, unknown>;
  delete json.skipped;
  return json;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? (path === "" ? key : `${path}.${key}`) : `${path}[${JSON.stringify(key)}]`;
}

/** The first place (depth first, in key order of `a` then `b`) where two JSON values differ. */
function firstDifference(a: unknown, b: unknown, path: string): { path: string; a: unknown; b: unknown } | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) {
      const found = firstDifference(i < a.length ? a[i] : MISSING, i < b.length ? b[i] : MISSING, childPath(path, i));
      if (found !== null) return found;
    }
    return null;
  }
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const key of keys) {
      const found = firstDifference(key in a ? a[key] : MISSING, key in b ? b[key] : MISSING, childPath(path, key));
      if (found !== null) return found;
    }
    return null;
  }
  return Object.is(a, b) ? null : { path, a, b };
}

function preview(value: unknown): string {
  if (value === MISSING) return "(missing)";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/** Where two JSON values first differ, with short previews of both sides (as verification reports it). */
export interface JsonDifference {
  path: string;
  source: string;
  target: string;
}

/** The first difference between two JSON values (depth first), or null when they are equal. */
export function jsonDifference(source: unknown, target: unknown, path = ""): JsonDifference | null {
  const found = firstDifference(source, target, path);
  return found === null ? null : { path: found.path, source: preview(found.a), target: preview(found.b) };
}

/** The preview verification shows of a value (at most 200 characters); "(missing)" for undefined. */
export function jsonPreview(value: unknown): string {
  return preview(value === undefined ? MISSING : value);
}
