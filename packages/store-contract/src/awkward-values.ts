import type { Bullet } from "@cass-memory/core";
import { createTestBullet } from "@cass-memory/core/testing";

/**
 * Strings that YAML (1.1 or 1.2), JSON or a naive serialiser would turn into something else: booleans,
 * nulls, numbers, dates, indicators, comments, block scalars, unicode. A store must give every one
 * back exactly.
 */
export const AWKWARD_STRINGS: readonly string[] = [
  "no",
  "yes",
  "on",
  "off",
  "No",
  "YES",
  "y",
  "n",
  "true",
  "False",
  "null",
  "Null",
  "~",
  "",
  " ",
  "0x1F",
  "0o17",
  "017",
  "1e3",
  "-1",
  "+1",
  "0",
  "3.14",
  ".inf",
  "-.Inf",
  ".nan",
  "NaN",
  "1_000",
  "12:30:00",
  "2026-01-01",
  "2026-01-01T00:00:00Z",
  "2026-11-22 11:57:08",
  "multi-line\nwith trailing spaces   \n  and indentation\n",
  "line one\r\nwindows line",
  "trailing newline\n",
  "\nleading newline",
  "tab\tinside and trailing tab\t",
  "  leading spaces",
  "trailing space ",
  "unicode: ü ß é 日本語 ✓ — “quotes” and emoji 🚀🧠👍🏽",
  "single ' quote",
  'double " quote',
  "both ' and \" quotes",
  "'fully single quoted'",
  '"fully double quoted"',
  "# leading hash",
  "text # with hash comment",
  "key: value inside",
  "ends with colon:",
  "- dash at start",
  "-",
  "? question mark",
  "@at sign",
  "`backtick",
  "!tag-like",
  "!!str explicit",
  "&anchor",
  "*alias",
  "%directive",
  "{flow: map}",
  "[flow, seq]",
  "| block",
  "> folded",
  "=",
  "<<",
  "back\\slash \\n not a newline",
  "---",
  "...",
  "a".repeat(200) + " long line that the serialiser will want to fold at eighty columns " + "b".repeat(50),
  "control \u0007 bell and \u001b escape",
  "nul\u0000byte",
  "zero width\u200bspace and bom\ufeff",
];

export const NOW_ISO = "2026-01-02T03:04:05.678Z";

/** A complete bullet as the original writes it (field order of the original). */
export function makeBullet(id: string, overrides: Partial<Bullet> & Record<string, unknown> = {}): Bullet {
  return createTestBullet({ id, category: "testing", content: `Rule ${id}`, createdAt: NOW_ISO, updatedAt: NOW_ISO, ...overrides });
}

/** Unknown fields at every level; a store must keep them verbatim. */
export const UNKNOWN_BULLET_FIELDS: Readonly<Record<string, unknown>> = {
  futureField: "kept",
  future_snake_field: { nested: [1, "two", null, true, { deep: ["x"] }] },
  futureNumber: 42.5,
  futureEmptyList: [],
  futureEmptyMap: {},
};
