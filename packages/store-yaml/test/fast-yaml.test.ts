import { fileURLToPath } from "node:url";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse, parseDocument, stringify } from "yaml";
import { emitYaml, isPlainSafe, parseOwnYaml } from "../src/fast-yaml.js";
import { decodePlaybook, encodePlaybook, fromYaml, toYaml, validatePlaybookData } from "../src/yaml-codec.js";

const FIXTURE = fileURLToPath(new URL("../../../fixtures/original-home/home/.cass-memory/playbook.yaml", import.meta.url));

/** Strings that trip up naive YAML writers. */
const TRAPS = [
  "", " ", "no", "No", "NO", "yes", "Yes", "on", "off", "y", "n", "Y", "N", "null", "Null", "NULL", "~",
  "true", "True", "TRUE", "false", "FALSE", "nuLL", "0x1F", "0o17", "012", "1e3", "1E3", "-1", "+1", ".5",
  "1.", "1_000", ".inf", "-.inf", ".NaN", "nan", "Infinity", "2026-01-01", "2026-11-22T11:57:08.685Z",
  "2026-11-22 11:57:08", "12:30:00", "-", "--", "---", "...", "- x", "? x", "?x", ": x", ":x", "x:", "x:y",
  "x: y", "#x", "x #y", "x#y", "'", "''", '"', '"x"', "\\", "\\n", "@x", "`x", "%x", "!x", "!!str", "&x",
  "*x", "|", ">", "|-", "[x]", "{x}", "[]", "{}", "x]", "x, y", "a,b", " x", "x ", "x  y", "\t", "x\ty",
  "\r", "x\ry", "\n", "x\ny", "x\r\ny", "\u0000", "\u0007", "\u001b", "\u007f", "\u0085", "\u00a0",
  "x\u00a0", "\u2028", "x\u2029y", "\ufeff", "\ufeffx", "\ufffe", "\uffff", "\ud800", "x\udc00",
  "😀", "x😀", "héllo wörld", "日本語", "<<", "=", "/usr/bin", "//", "_", "C:\\path", "a: b: c", "x -",
  "http://example.com/a?b=c#d", "success, sentiment+", "use arr[0] and {k}", "x".repeat(5000),
  "word ".repeat(400).trim(),
];

const trap = fc.constantFrom(...TRAPS);
const awkwardString = fc.oneof(
  { weight: 3, arbitrary: trap },
  { weight: 2, arbitrary: fc.string() },
  { weight: 2, arbitrary: fc.string({ unit: "binary" }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme" }) },
  { weight: 2, arbitrary: fc.array(fc.oneof(trap, fc.string({ maxLength: 3 })), { maxLength: 4 }).map((parts) => parts.join("")) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-zA-Z/_][a-zA-Z0-9 :#,.\-_/[\]{}'"!&*?|>%@`]{0,20}$/) },
);
const awkwardKey = fc.oneof(
  { weight: 10, arbitrary: awkwardString },
  { weight: 1, arbitrary: fc.constantFrom("__proto__", "constructor", "1", "k".repeat(1100), "é".repeat(1001)) },
);
const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 5e-324, Number.MAX_SAFE_INTEGER + 2));
const scalar = fc.oneof(awkwardString, number, fc.boolean(), fc.constant(null));

const { json } = fc.letrec((tie) => ({
  json: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("array"), tie("object")),
  array: fc.array(tie("json"), { maxLength: 5 }),
  object: fc.dictionary(awkwardKey, tie("json"), { maxKeys: 5 }),
}));

const bullet = fc.record(
  {
    id: awkwardString,
    scope: fc.constantFrom("global", "workspace"),
    category: awkwardString,
    content: awkwardString,
    helpfulCount: fc.nat(),
    isNegative: fc.boolean(),
    confidenceDecayHalfLifeDays: number,
    createdAt: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
    feedbackEvents: fc.array(fc.record({ type: fc.constantFrom("helpful", "harmful"), timestamp: awkwardString, context: awkwardString }, { requiredKeys: ["type"] }), { maxLength: 3 }),
    tags: fc.array(awkwardString, { maxLength: 4 }),
    extra: json,
  },
  { requiredKeys: ["id", "content"] },
);
const playbookShaped = fc.record({
  schema_version: fc.constant(2),
  name: awkwardString,
  metadata: fc.record({ createdAt: awkwardString, totalReflections: fc.nat() }),
  deprecatedPatterns: fc.array(json, { maxLength: 2 }),
  bullets: fc.array(bullet, { maxLength: 6 }),
});
const anyValue = fc.oneof(json, playbookShaped);

function libraryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  const doc = parseDocument(text, { logLevel: "silent" });
  if (doc.errors.length > 0) return { ok: false };
  try {
    return { ok: true, value: doc.toJS() as unknown };
  } catch {
    return { ok: false }; // e.g. an unresolved alias
  }
}

describe("emitYaml", () => {
  it("writes the original's block layout", () => {
    const text = emitYaml({
      schema_version: 2,
      metadata: { createdAt: "2026-11-22T11:57:08.685Z", totalReflections: 0 },
      deprecatedPatterns: [],
      bullets: [{ id: "b-1", tags: [], feedbackEvents: [{ type: "helpful", decayedValue: 1.3 }], sourceAgents: ["unknown"], extra: {} }],
      nested: [[1, 2], [], {}],
    });
    expect(text).toBe(
      [
        "schema_version: 2",
        "metadata:",
        "  createdAt: 2026-11-22T11:57:08.685Z",
        "  totalReflections: 0",
        "deprecatedPatterns: []",
        "bullets:",
        "  - id: b-1",
        "    tags: []",
        "    feedbackEvents:",
        "      - type: helpful",
        "        decayedValue: 1.3",
        "    sourceAgents:",
        "      - unknown",
        "    extra: {}",
        "nested:",
        "  - - 1",
        "    - 2",
        "  - []",
        "  - {}",
        "",
      ].join("\n"),
    );
  });

  it("writes top-level scalars and empty collections", () => {
    expect(emitYaml("x")).toBe("x\n");
    expect(emitYaml(null)).toBe("null\n");
    expect(emitYaml([])).toBe("[]\n");
    expect(emitYaml({})).toBe("{}\n");
    expect(emitYaml({ a: undefined })).toBe("{}\n");
    expect(emitYaml({ a: undefined, b: 1 })).toBe("b: 1\n");
    expect(emitYaml([undefined])).toBe("- null\n");
    expect(emitYaml(-0)).toBe("-0\n");
    expect(emitYaml(1e21)).toBe("1e+21\n");
  });

  it("quotes every string that is not provably a plain string", () => {
    const plain = new Set(["/usr/bin", "//", "_", "x:y", "x#y", "x -", "héllo wörld", "x😀", "x  y", "x, y", "a,b", "x]", "use arr[0] and {k}",
      "http://example.com/a?b=c#d", "success, sentiment+", "C:\\path", "nan", "Infinity", "x\u00a0", "x".repeat(5000), "word ".repeat(400).trim()]);
    for (const s of TRAPS) {
      const line = emitYaml({ k: s });
      if (plain.has(s)) expect(line, JSON.stringify(s)).toBe(`k: ${s}\n`);
      else if (s === "2026-11-22T11:57:08.685Z") expect(line).toBe(`k: ${s}\n`);
      else expect(line.startsWith('k: "'), JSON.stringify(s)).toBe(true);
    }
  });

  it("keeps ISO timestamps plain, and the yaml library (1.2 core) reads them back as strings", () => {
    for (const t of ["2026-11-22T11:57:08.685Z", "1970-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z"]) {
      expect(emitYaml({ t })).toBe(`t: ${t}\n`);
      expect(parse(`t: ${t}\n`)).toEqual({ t });
      expect(parseOwnYaml(`t: ${t}\n`)).toEqual({ t });
    }
    expect(emitYaml({ d: "2026-01-01" })).toBe('d: "2026-01-01"\n');
  });

  it("never writes characters YAML forbids raw, nor line breaks inside a scalar", () => {
    const nasty = "a\u2028b\u2029c\u0085d\ufeffe\u007ff\u0000g\u009fh\ufffei\uffffj\ud800k\r\n\t";
    const text = emitYaml({ [nasty]: [nasty, { x: nasty }] });
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]/);
    expect(text.split("\n")).toHaveLength(4);
    expect(parse(text)).toEqual({ [nasty]: [nasty, { x: nasty }] });
  });

  it("writes keys over 1000 characters as explicit keys", () => {
    const k = "k".repeat(1100);
    const text = emitYaml({ [k]: { a: 1 }, b: [{ [k]: "v" }] });
    expect(text.startsWith(`? "${k}"\n:\n  a: 1\n`)).toBe(true);
    expect(parse(text)).toEqual({ [k]: { a: 1 }, b: [{ [k]: "v" }] });
    expect(parseOwnYaml(text)).toEqual({ [k]: { a: 1 }, b: [{ [k]: "v" }] });
  });

  it("refuses values that are not JSON-like", () => {
    expect(() => emitYaml({ n: Number.NaN })).toThrow(RangeError);
    expect(() => emitYaml([Number.POSITIVE_INFINITY])).toThrow(RangeError);
    expect(() => emitYaml(undefined)).toThrow(TypeError);
    expect(() => emitYaml({ f: () => 1 })).toThrow(TypeError);
    expect(() => emitYaml({ b: 1n })).toThrow(TypeError);
    expect(() => emitYaml({ d: new Date(0) })).toThrow(/Date/);
    expect(() => emitYaml([new Map()])).toThrow(/Map/);
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => emitYaml(cyclic)).toThrow(/circular/);
    const shared = { x: 1 };
    expect(parseOwnYaml(emitYaml({ a: shared, b: [shared] }))).toEqual({ a: { x: 1 }, b: [{ x: 1 }] });
  });
});

describe("isPlainSafe", () => {
  it("accepts ordinary words and rejects YAML indicators and reserved words", () => {
    expect(["debugging", "b-mwrs7w7k-ujy1rs", "/home/dev/s1.jsonl", "Run the tests, then deploy"].every(isPlainSafe)).toBe(true);
    expect(["no", "ON", "null", "True", "- x", "1", "x: y", "x #y", "x:", "x ", " x", "x\ty", "'x", "x\u2028"].some(isPlainSafe)).toBe(false);
  });
});

describe("parseOwnYaml", () => {
  it("reads leading comments, blank lines and a missing trailing newline", () => {
    expect(parseOwnYaml("# header\n#\n\n# more\na: 1\nb:\n  - x\n")).toEqual({ a: 1, b: ["x"] });
    expect(parseOwnYaml("a: 1")).toEqual({ a: 1 });
    expect(parseOwnYaml("- 1\n- -2.5\n- 1e+21\n- -0\n- ~\n- Null\n- TRUE\n- False\n")).toEqual([1, -2.5, 1e21, -0, null, null, true, false]);
  });

  it("returns undefined for anything outside the subset", () => {
    const outside = [
      "", "# only a comment\n", "a: [x]\n", "a: {b: 1}\n", "a: &x 1\nb: *x\n", "a: !!str 1\n", "a: |\n  x\n", "a: >\n  x\n",
      "a: b\n  c\n", "a: 'x'\n", "a:\tx\n", "\ta: 1\n", "---\na: 1\n", "a: 1\n...\n", "a: 1\na: 2\n", 'a: "\\x41"\n',
      'a: "\\e"\n', 'a: "\\N"\n', "a: 1 # c\n", "a: 1\r\nb: 2\r\n", "a: 1\n\nb: 2\n", "a: 1\n# c\nb: 2\n", "a:\n", "a: \n",
      "a: 1  \n", "a:\n- x\n", "a:\n   - x\n", "a:\n  x\n", "a: yes\n", "a: 0x1F\n", "a: 012\n", "a: .5\n", "a: 1e3\n",
      "a: 2026-01-01\n", "a: b: c\n", "- x\nb: 1\n", "a: 1\n- x\n", "  a: 1\n", "a: 1\n\n", "%YAML 1.2\n---\na: 1\n",
      "? a\n: 1\n", '"a": 1\n"b"\n', "\ufeffa: 1\n", "a: \"x\n  y\"\n", "<<: {a: 1}\n", "a: x\u2028y\n", "a: \"x\u0085\"\n",
    ];
    for (const text of outside) expect(parseOwnYaml(text), JSON.stringify(text)).toBeUndefined();
  });

  it("reads __proto__ as an own key, like the yaml library", () => {
    const value = parseOwnYaml('"__proto__": 1\n') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(["__proto__"]);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value).toEqual(parse('"__proto__": 1\n'));
  });
});

describe("differential properties against the yaml library", () => {
  it("(a) yaml.parse(emitYaml(v)) equals v, and (b) parseOwnYaml(emitYaml(v)) equals v", () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        const text = emitYaml(v);
        expect(parse(text)).toEqual(v);
        expect(parseOwnYaml(text)).toEqual(v);
      }),
      { numRuns: 1500 },
    );
  });

  it("(c) on yaml.stringify output, parseOwnYaml gives undefined or exactly what yaml.parse gives", () => {
    let fast = 0;
    fc.assert(
      fc.property(anyValue, fc.constantFrom({}, { lineWidth: 0 }, { indentSeq: false }, { lineWidth: 0, minContentWidth: 0 }), (v, options) => {
        const text = stringify(v, options);
        const lib = libraryParse(text);
        const own = parseOwnYaml(text);
        if (own !== undefined) fast += 1;
        if (!lib.ok) expect(own).toBeUndefined();
        else if (own !== undefined) expect(own).toEqual(lib.value);
      }),
      { numRuns: 1500 },
    );
    expect(fast).toBeGreaterThan(100); // the property is not vacuous
  });

  it("(c') on mutated emitter output, parseOwnYaml gives undefined or exactly what the library gives", () => {
    const mutationChar = fc.constantFrom(" ", "\n", "-", ":", "#", "'", '"', "\\", "?", "[", "]", "{", "}", "&", "*", "!", "|", ">", "\t", "\r", "x", "0", ".", ",");
    fc.assert(
      fc.property(anyValue, fc.nat(), mutationChar, fc.constantFrom("insert", "replace", "delete", "dupline"), (v, at, ch, op) => {
        const text = emitYaml(v);
        const i = text.length === 0 ? 0 : at % text.length;
        let mutated: string;
        if (op === "insert") mutated = text.slice(0, i) + ch + text.slice(i);
        else if (op === "replace") mutated = text.slice(0, i) + ch + text.slice(i + 1);
        else if (op === "delete") mutated = text.slice(0, i) + text.slice(i + 1);
        else {
          const lines = text.split("\n");
          const li = at % lines.length;
          lines.splice(li, 0, lines[li] ?? "");
          mutated = lines.join("\n");
        }
        const lib = libraryParse(mutated);
        const own = parseOwnYaml(mutated);
        if (!lib.ok) expect(own).toBeUndefined();
        else if (own !== undefined) expect(own).toEqual(lib.value);
      }),
      { numRuns: 3000 },
    );
  });
});

describe("playbook codec", () => {
  const fixtureText = readFileSync(FIXTURE, "utf8");

  it("decodes the original's fixture playbook (folded lines: outside our own subset, read by the library-format reader)", () => {
    expect(parseOwnYaml(fixtureText)).toBeUndefined();
    const decoded = decodePlaybook(fixtureText, FIXTURE);
    expect(decoded).toEqual(validatePlaybookData(parse(fixtureText), FIXTURE));
    expect(decoded.bullets.length).toBeGreaterThan(1);
    expect(decoded.bullets[2]?.content).toBe("Run the migration dry-run against a copy of production data before deploying");
  });

  it("re-encodes the fixture in the fast subset, keeping the comment header", () => {
    const decoded = decodePlaybook(fixtureText, FIXTURE);
    const header = "# Project-specific playbook rules\n# second line\n";
    const text = encodePlaybook(decoded, header);
    expect(text.startsWith(header)).toBe(true);
    expect(parseOwnYaml(text)).toEqual(JSON.parse(JSON.stringify(decoded)));
    expect(parse(text)).toEqual(parseOwnYaml(text));
    expect(decodePlaybook(text, FIXTURE)).toEqual(decoded);
    expect(toYaml(decoded)).toBe(text.slice(header.length));
    expect(fromYaml(text, "inline")).toEqual(parse(text));
  });

  it("round-trips a 10,000-bullet playbook", () => {
    const decoded = decodePlaybook(fixtureText, FIXTURE);
    const template = JSON.parse(JSON.stringify(decoded.bullets[0])) as Record<string, unknown>;
    const bullets = Array.from({ length: 10_000 }, (_, i) => ({ ...template, id: `b-${i}`, content: `Rule ${i}: check "x" before y #${i}`, helpfulCount: i }));
    const playbook = { ...JSON.parse(JSON.stringify(decoded)), bullets } as Record<string, unknown>;
    const text = emitYaml(playbook);
    expect(text.length).toBeGreaterThan(5_000_000);
    expect(parseOwnYaml(text)).toEqual(playbook);
    expect(decodePlaybook(text, "big.yaml").bullets).toHaveLength(10_000);
    const small = emitYaml({ ...playbook, bullets: bullets.slice(0, 300) });
    expect(parse(small)).toEqual(parseOwnYaml(small));
  });
});
