import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse, parseDocument, stringify } from "yaml";
import { parseLibraryYaml } from "../src/library-yaml.js";
import { decodePlaybook, validatePlaybookData } from "../src/yaml-codec.js";

/**
 * The reader of the `yaml` library's own output (the earlier cm's playbook format) against the
 * library: whatever it returns must be exactly what `yaml.parse` returns, and on what the library
 * writes for JSON-like data it must not give up.
 */

const FIXTURE_HOME = fileURLToPath(new URL("../../../fixtures/original-home/home/.cass-memory/playbook.yaml", import.meta.url));
const FIXTURE_REPO = fileURLToPath(new URL("../../../fixtures/original-home/repo/.cass/playbook.yaml", import.meta.url));

function libraryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  const doc = parseDocument(text, { logLevel: "silent" });
  if (doc.errors.length > 0) return { ok: false };
  try {
    return { ok: true, value: doc.toJS({ maxAliasCount: 100 }) as unknown };
  } catch {
    return { ok: false };
  }
}

/** Strings that exercise every way the writer can write a string. */
const TRAPS = [
  "", " ", "  ", "no", "yes", "on", "null", "Null", "NULL", "~", "true", "False", "0x1F", "0o17", "012", "1e3", "-1", "+1", ".5",
  "1.", "1_000", ".inf", "-.inf", ".NaN", "2026-01-01", "2026-11-22T11:57:08.685Z", "12:30:00", "-", "--", "---", "...", "--- x",
  "... x", "- x", "? x", "?x", ": x", ":x", "x:", "x:y", "x: y", "#x", "x #y", "x#y", "'", "''", '"', "'\"", '"x"', "\\", "\\n",
  "@x", "`x", "%x", "!x", "&x", "*x", "|", ">", "|-", "[x]", "{x}", "[]", "{}", "x, y", " x", "x ", "x  y", "\t", "x\ty", "\tx",
  "x\t", "\n", "\n\n", "x\n", "x\n\n", "x\n\n\n", "\nx", "\n\nx", " \nx", "x \ny", "x\n y", "x\n\ty", "  lead\nx", "a\n\n\nb\n",
  "x\u0000", "\u0007", "\u001b", "\u007f", "\u0085", "x\u0085y", "\u00a0", "x\u00a0", "\u2028", "x\u2029y", "\ufeff", "x\ufeff",
  "\ud800", "x\udc00", "😀", "héllo wörld", "日本語", "<<", "/usr/bin", "C:\\path", "a: b: c", "x -", "%YAML 1.2",
  "http://example.com/a?b=c#d", "success, sentiment+", "use arr[0] and {k}",
  "Run the migration dry-run against a copy of production data before deploying",
  "word ".repeat(40).trim(), "word ".repeat(40), ("w".repeat(50) + " ").repeat(3), "x".repeat(120), `${"x".repeat(90)} y`,
  `${"word ".repeat(20)}- item ${"word ".repeat(20)}`, `${"word ".repeat(17)}#tag ${"word ".repeat(10)}`,
  `${"a ".repeat(38)}: b ${"c ".repeat(40)}`, `${"word ".repeat(20)}\n${"word ".repeat(20)}\n`, `line one\n  indented\nline three`,
  `${"long ".repeat(30)}\n\n  more indented\n\n${"long ".repeat(30)}`, `${"q\"uote ".repeat(20)}`, `${"it's ".repeat(25)}`,
  `${"it's \"both\" ".repeat(10)}`, `${"x".repeat(78)}\\${"y".repeat(10)}`, `${"é".repeat(85)} z`, `${"x ".repeat(39)}\u0001${" y".repeat(30)}`,
];

const trap = fc.constantFrom(...TRAPS);
const word = fc.constantFrom("rule", "check", "the", "auth", "-", "#", ":", "'", '"', "it's", "x: y", "a,b", "[0]", "{k}", "\\", "é", "😀", "\t", "  ");
const sentence = fc.array(word, { minLength: 1, maxLength: 40 }).map((w) => w.join(" "));
const multiline = fc.array(fc.oneof(sentence, fc.constant(""), fc.constant("  indented"), fc.constant("\ttab")), { minLength: 1, maxLength: 5 }).map((l) => l.join("\n"));
const awkwardString = fc.oneof(
  { weight: 3, arbitrary: trap },
  { weight: 3, arbitrary: sentence },
  { weight: 2, arbitrary: multiline },
  { weight: 1, arbitrary: multiline.map((s) => `${s}\n`) },
  { weight: 1, arbitrary: multiline.map((s) => `${s}\n\n`) },
  { weight: 2, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(trap, fc.string({ maxLength: 3 })), { maxLength: 4 }).map((parts) => parts.join("")) },
);
const key = fc.oneof({ weight: 8, arbitrary: fc.constantFrom("id", "content", "tags", "x-custom", "with space", "ünï") }, { weight: 2, arbitrary: awkwardString });
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 5e-324, Number.NaN, Number.POSITIVE_INFINITY, -Infinity));
const scalar = fc.oneof(awkwardString, number, fc.boolean(), fc.constant(null));

const { json } = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("json"), { maxLength: 4 }),
  object: fc.dictionary(key, tie("json"), { maxKeys: 4 }),
}));

const bullet = fc.record(
  {
    id: awkwardString,
    scope: fc.constantFrom("global", "workspace"),
    category: awkwardString,
    content: awkwardString,
    searchPointer: awkwardString,
    helpfulCount: fc.nat(),
    isNegative: fc.boolean(),
    confidenceDecayHalfLifeDays: number,
    createdAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    feedbackEvents: fc.array(fc.record({ type: fc.constantFrom("helpful", "harmful"), timestamp: awkwardString, context: awkwardString, decayedValue: number }, { requiredKeys: ["type"] }), { maxLength: 3 }),
    tags: fc.array(awkwardString, { maxLength: 4 }),
    sourceSessions: fc.array(awkwardString, { maxLength: 2 }),
    extra: json,
  },
  { requiredKeys: ["id", "content"] },
);

/** A playbook-shaped object; some arrays and objects shared between bullets (the writer then emits anchors). */
const playbook = fc
  .record({
    schema_version: fc.constant(2),
    name: awkwardString,
    description: awkwardString,
    metadata: fc.record({ createdAt: awkwardString, totalReflections: fc.nat() }),
    deprecatedPatterns: fc.array(json, { maxLength: 2 }),
    bullets: fc.array(bullet, { maxLength: 6 }),
    share: fc.constantFrom("none", "empty", "full"),
  })
  .map(({ share, ...pb }) => {
    if (share !== "none" && pb.bullets.length > 1) {
      const shared = share === "empty" ? [] : ["manual-cli"];
      for (const b of pb.bullets) (b as Record<string, unknown>).sourceSessions = shared;
    }
    return pb;
  });

describe("parseLibraryYaml on the earlier cm's files", () => {
  for (const path of [FIXTURE_HOME, FIXTURE_REPO]) {
    it(`reads ${path.split("fixtures/")[1]} exactly as the library does`, () => {
      const text = readFileSync(path, "utf8");
      const value = parseLibraryYaml(text);
      expect(value).not.toBeUndefined();
      expect(value).toEqual(parse(text));
    });
  }

  it("reads the writer's folded plain lines, block scalars, quoting styles and anchors", () => {
    const shared: string[] = [];
    const data = {
      folded: "Run the migration dry-run against a copy of production data before deploying now and then",
      literal: "line1\nline2\n",
      indented: "  lead\nx",
      keep: "x\n\n\n",
      foldedBlock: `${"word ".repeat(30)}\n\n  more\nshort`,
      single: `say "${"x ".repeat(50)}"`,
      double: `it's ${"a\\b ".repeat(30)}\u0001`,
      a: { tags: shared, s: ["x"] },
      b: { tags: shared },
    };
    const text = stringify(data);
    expect(text).toContain("&a1 []");
    expect(text).toContain("|2-");
    expect(text).toContain("|+");
    expect(text).toMatch(/: >/);
    expect(parseLibraryYaml(text)).toEqual(parse(text));
    expect(parseLibraryYaml(text)).toEqual(data);
  });

  it("decodes a 3,000-rule playbook in the earlier cm's format to exactly the library's playbook", () => {
    const fixture = parse(readFileSync(FIXTURE_HOME, "utf8")) as { bullets: Array<Record<string, unknown>> } & Record<string, unknown>;
    const shared: string[] = [];
    const bullets = Array.from({ length: 3000 }, (_, i) => {
      const base = structuredClone(fixture.bullets[i % fixture.bullets.length] as Record<string, unknown>);
      base.id = `b-${i.toString(36)}`;
      if (i % 3 === 0) base.content = `${String(base.content)}: step ${i} # then "retry" with it's ${"fresh token ".repeat(i % 9)}`;
      if (i % 5 === 0) base.reasoning = `first line ${i}\n  indented\n\nlast line\n`;
      if (i % 50 === 0) base.tags = shared;
      return base;
    });
    const text = stringify({ ...fixture, bullets });
    expect(parseLibraryYaml(text)).not.toBeUndefined();
    const decoded = decodePlaybook(text, "earlier.yaml");
    expect(decoded).toEqual(validatePlaybookData(parse(text), "earlier.yaml"));
    expect(decoded.bullets).toHaveLength(3000);
  }, 300_000);

  it("keeps the library's alias limit: a non-empty shared value used more than 100 times is refused by both", () => {
    const shared = ["manual-cli"];
    const ok = stringify({ bullets: Array.from({ length: 100 }, (_, i) => ({ id: `b${i}`, s: shared })) });
    expect(parseLibraryYaml(ok)).toEqual(parse(ok));
    const over = stringify({ bullets: Array.from({ length: 102 }, (_, i) => ({ id: `b${i}`, s: shared })) });
    expect(() => parse(over)).toThrow(/alias/i);
    expect(parseLibraryYaml(over)).toBeUndefined();
    const empty: string[] = [];
    const many = stringify({ bullets: Array.from({ length: 500 }, (_, i) => ({ id: `b${i}`, s: empty })) });
    expect(parseLibraryYaml(many)).toEqual(parse(many));
  });

  it("gives up (undefined) on what it does not read, so the caller falls back", () => {
    for (const text of ["? \ttab\n: 1\n", "a: |+\n  x\n\t\nb: 1\n", "", "# c\n", "a: !!str 1\n", "%YAML 1.2\n---\na: 1\n", "---\na: 1\n", "a: [x]\n", "a: {b: 1}\n", "a: 1\na: 2\n", "a: 1\r\n", "\ufeffa: 1\n", "\ta: 1\n", "x\n", "a: *nope\n", "a: b: c\n", "- x\nb: 1\n", "a: 1\n- x\n"]) {
      expect(parseLibraryYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});

describe("parseLibraryYaml against the yaml library", () => {
  it("reads everything yaml.stringify (default options, as the earlier cm wrote) writes for playbooks, exactly as yaml.parse", () => {
    fc.assert(
      fc.property(playbook, (pb) => {
        const text = stringify(pb);
        const own = parseLibraryYaml(text);
        expect(own, text).not.toBeUndefined();
        expect(own).toEqual(parse(text));
      }),
      { numRuns: 1500 },
    );
  }, 600_000);

  it("on other writer options and arbitrary data: undefined or exactly what the library gives", () => {
    let read = 0;
    fc.assert(
      fc.property(fc.oneof(json, playbook), fc.constantFrom({}, { lineWidth: 40 }, { indentSeq: false }, { indent: 4 }, { singleQuote: true }, { blockQuote: "folded" as const }, { lineWidth: 0 }), (v, options) => {
        const text = stringify(v, options);
        const lib = libraryParse(text);
        const own = parseLibraryYaml(text);
        if (own !== undefined) read += 1;
        if (!lib.ok) expect(own).toBeUndefined();
        else if (own !== undefined) expect(own).toEqual(lib.value);
      }),
      { numRuns: 1500 },
    );
    expect(read).toBeGreaterThan(500);
  }, 600_000);

  it("on mutated writer output: undefined or exactly what the library gives", () => {
    const ch = fc.constantFrom(" ", "  ", "\n", "-", "- ", ":", ": ", "#", " #", "'", '"', "\\", "?", "[", "{", "&a", "*a1", "!", "|", ">", "|-", ">+", "\t", "x", "0", ",", "---");
    fc.assert(
      fc.property(playbook, fc.nat(), ch, fc.constantFrom("insert", "replace", "delete", "dupline", "dropline"), (v, at, piece, op) => {
        const text = stringify(v);
        const i = text.length === 0 ? 0 : at % text.length;
        let mutated: string;
        if (op === "insert") mutated = text.slice(0, i) + piece + text.slice(i);
        else if (op === "replace") mutated = text.slice(0, i) + piece + text.slice(i + piece.length);
        else if (op === "delete") mutated = text.slice(0, i) + text.slice(i + 1);
        else {
          const lines = text.split("\n");
          const li = at % lines.length;
          if (op === "dupline") lines.splice(li, 0, lines[li] ?? "");
          else lines.splice(li, 1);
          mutated = lines.join("\n");
        }
        const lib = libraryParse(mutated);
        const own = parseLibraryYaml(mutated);
        if (!lib.ok) expect(own, mutated).toBeUndefined();
        else if (own !== undefined) expect(own, mutated).toEqual(lib.value);
      }),
      { numRuns: 3000 },
    );
  }, 600_000);
});
