/**
 * A check without zod for the flat input objects of the hot operations (`context`, `mark`): the
 * inputs a front end builds are plainly valid, and building and running their zod schema costs a
 * short-lived process ≈5 ms (issue 18). `checkFlatObject` answers only when it can give exactly
 * what `z.object(shape).parse` would; anything else is left to the schema, which reports errors as
 * before. A core test checks each table against its schema and the results against the schema's.
 */

/** The zod type of one field: `z.string()`, `z.number()` (finite) or `z.boolean()`, each possibly `.optional()`. */
export type FlatKind = "string" | "number" | "boolean";

/** The fields of a `z.object` of primitives, in the shape's order: kind and whether optional. */
export type FlatFields = Readonly<Record<string, readonly [kind: FlatKind, optional: boolean]>>;

/**
 * What `z.object(shape).parse(raw)` returns when `raw` is a plain object whose keys are all fields
 * of `fields` and whose values all have their field's type (an optional field may be absent or
 * undefined; the result keeps a present undefined, as zod does, in the shape's key order);
 * otherwise undefined, and the caller parses with the schema. Unknown keys are left to the schema
 * (which drops them), as are objects with another prototype (zod reads inherited fields too).
 */
export function checkFlatObject<T>(fields: FlatFields, raw: unknown): T | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const proto: unknown = Object.getPrototypeOf(raw);
  if (proto !== Object.prototype && proto !== null) return undefined;
  const input = raw as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let seen = 0;
  for (const key of Object.keys(fields)) {
    const [kind, optional] = fields[key]!;
    if (!Object.prototype.hasOwnProperty.call(input, key)) {
      if (!optional) return undefined;
      continue;
    }
    seen++;
    const value = input[key];
    if (value === undefined) {
      if (!optional) return undefined;
    } else if (kind === "number" ? typeof value !== "number" || !Number.isFinite(value) : typeof value !== kind) {
      return undefined;
    }
    out[key] = value;
  }
  return Object.keys(input).length === seen ? (out as T) : undefined;
}
