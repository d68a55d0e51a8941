/**
 * Tolerant loading helpers. Files written by other versions of cm (or by hand) may use snake_case
 * keys, omit optional fields, or carry fields we do not know. We accept both spellings of every key
 * we know, keep unknown keys untouched (so a round trip never loses data), and fill defaults.
 */

export function snakeToCamel(key: string): string {
  const lead = /^_+/.exec(key)?.[0] ?? "";
  return lead + key.slice(lead.length).replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Renames snake_case keys whose camelCase form is one of `known` (and not already present).
 * Keys that are not known are left as they are, so unknown data survives verbatim.
 */
export function camelizeKnownKeys(value: unknown, known: ReadonlySet<string>, keep: ReadonlySet<string> = new Set()): unknown {
  if (!isPlainObject(value)) return value;
  let out: Record<string, unknown> | null = null;
  for (const key of Object.keys(value)) {
    if (keep.has(key) || !key.includes("_")) continue;
    const camel = snakeToCamel(key);
    if (camel === key || !known.has(camel) || camel in value) continue;
    out ??= { ...value };
    out[camel] = out[key];
    delete out[key];
  }
  return out ?? value;
}

/** Recursively renames every snake_case key to camelCase (repo YAML config, reference §3.2). */
export function camelizeDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeDeep);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const camel = key === "schema_version" ? key : snakeToCamel(key);
    out[camel] = camelizeDeep(inner);
  }
  return out;
}

/** Dates (from YAML 1.1 timestamps or JS callers) become ISO strings; strings pass through. */
export function toIsoString(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? value : value.toISOString();
  return value;
}
