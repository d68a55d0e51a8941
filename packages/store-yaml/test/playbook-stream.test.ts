import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Playbook } from "@cass-memory/core";
import { PlaybookStreamUnsupported, openPlaybookStream } from "../src/playbook-stream.js";
import { decodePlaybook, toYaml } from "../src/yaml-codec.js";

// The bullet-by-bullet reader (cm storage migrate of large playbooks) against the whole-file
// reader: for any file, a stream that completes gives exactly decodePlaybook's playbook (values,
// key order), and a file the whole-file reader rejects never streams to completion.

const T = "2025-01-01T00:00:00.000Z";
const META = { createdAt: T, totalReflections: 0, totalSessionsProcessed: 0 };
const rule = (i: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ id: `b${i}`, content: `rule ${i}`, category: "k", createdAt: T, updatedAt: T, ...extra });

const dir = mkdtempSync(join(tmpdir(), "cm-playbook-stream-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }), 120_000);
let fileNo = 0;

function fileWith(text: string): string {
  const path = join(dir, `playbook-${fileNo++}.yaml`);
  writeFileSync(path, text);
  return path;
}

type Outcome = { kind: "streamed"; playbook: Playbook } | { kind: "fallback" };

/** Streams the file to the end: the playbook, or "fallback" when the reader leaves the file to decodePlaybook. */
function stream(path: string): Outcome {
  const opened = openPlaybookStream(path, "global");
  if (opened === null) throw new Error("no file");
  if (opened === undefined) return { kind: "fallback" };
  try {
    const bullets = [...opened.bullets()];
    expect(bullets).toHaveLength(opened.count);
    return { kind: "streamed", playbook: { ...opened.head, bullets } };
  } catch (error) {
    if (error instanceof PlaybookStreamUnsupported) return { kind: "fallback" };
    throw error;
  }
}

function whole(text: string): { ok: true; playbook: Playbook } | { ok: false } {
  try {
    return { ok: true, playbook: decodePlaybook(text, "whole.yaml") };
  } catch {
    return { ok: false };
  }
}

/** The stream's contract for one text; returns whether it streamed. */
function check(text: string): boolean {
  // The stream reads the file's UTF-8 bytes; a mutation that splits a surrogate pair leaves a
  // lone surrogate in memory that the file holds as U+FFFD, so compare with the text as stored.
  const stored = Buffer.from(text, "utf8").toString("utf8");
  const expected = whole(stored);
  const got = stream(fileWith(text));
  if (got.kind === "fallback") return false;
  expect(expected.ok, text).toBe(true);
  if (!expected.ok) return true;
  // Same values and the same key order (the SQLite store keeps each bullet's JSON text).
  expect(JSON.stringify(got.playbook)).toBe(JSON.stringify(expected.playbook));
  return true;
}

const TRAPS = ["", " ", "no", "null", "~", "true", "0x1F", "012", "1e3", "-1", ".5", "- item", "-", "a: b", "a #b", "#x", "'q'", '"dq"', "it's", "x\ny", "x\n", "\n", " lead", "trail ", "tab\there", "é😀", "[x]", "{k: v}", "&a", "*a1", "!tag", "|", ">", "? k", "---", "...", "%YAML"];
const word = fc.constantFrom("rule", "check", "the", "auth", "-", "#", ":", "'", '"', "it's", "x: y", "\\", "é", "  ", "\t");
const sentence = fc.array(word, { minLength: 1, maxLength: 40 }).map((w) => w.join(" "));
const multiline = fc.array(fc.oneof(sentence, fc.constant(""), fc.constant("  indented"), fc.constant("- dash"), fc.constant("\ttab")), { minLength: 1, maxLength: 5 }).map((l) => l.join("\n"));
const awkward = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...TRAPS) },
  { weight: 3, arbitrary: sentence },
  { weight: 3, arbitrary: multiline },
  { weight: 1, arbitrary: multiline.map((m) => `${m}\n`) },
  { weight: 1, arbitrary: multiline.map((m) => `${m}\n\n`) },
  { weight: 2, arbitrary: fc.string() },
);

const bullet = fc.record(
  {
    id: fc.oneof({ weight: 9, arbitrary: fc.stringMatching(/^b-[a-z0-9]{1,8}$/) }, { weight: 1, arbitrary: awkward }),
    category: awkward,
    content: awkward,
    reasoning: awkward,
    searchPointer: awkward,
    helpfulCount: fc.nat(),
    harmfulCount: fc.nat(),
    createdAt: fc.date({ noInvalidDate: true, min: new Date("2000-01-01"), max: new Date("2090-01-01") }).map((d) => d.toISOString()),
    updatedAt: fc.constant("2025-06-01T12:00:00.000Z"),
    tags: fc.array(awkward, { maxLength: 3 }),
    sourceSessions: fc.array(awkward, { maxLength: 2 }),
    custom_field: fc.oneof(awkward, fc.integer(), fc.boolean(), fc.constant(null)),
  },
  { requiredKeys: ["id", "content", "category", "createdAt", "updatedAt"] },
);

/** A playbook as the earlier cm held it: some arrays shared between bullets (the writer then emits anchors). */
const playbook = fc
  .record({
    schema_version: fc.constant(2),
    name: awkward,
    description: awkward,
    metadata: fc.record({ createdAt: fc.constant("2025-01-01T00:00:00.000Z"), totalReflections: fc.nat(), totalSessionsProcessed: fc.nat() }),
    deprecatedPatterns: fc.constant([]),
    bullets: fc.array(bullet, { maxLength: 8 }),
    share: fc.constantFrom("none", "empty", "full"),
    trailing: fc.boolean(),
  })
  .map(({ share, trailing, ...pb }) => {
    if (share !== "none" && pb.bullets.length > 1) {
      const shared = share === "empty" ? [] : ["manual-cli"];
      for (const b of pb.bullets) (b as Record<string, unknown>).sourceAgents = shared;
    }
    // Keys after the bullets (the tail of the skeleton).
    return trailing ? { ...pb, after_bullets: { note: pb.name, list: [1, 2] } } : pb;
  });

describe("openPlaybookStream", () => {
  it("streams the earlier cm's format (yaml.stringify, default options) exactly as decodePlaybook reads it", () => {
    let streamed = 0;
    let valid = 0;
    fc.assert(
      fc.property(playbook, (pb) => {
        const text = stringify(pb);
        // (`bullets: []` is not a block sequence: such a file is small and read whole.)
        if (pb.bullets.length > 0 && whole(text).ok) valid += 1;
        if (check(text)) streamed += 1;
      }),
      { numRuns: 1000 },
    );
    // Every file the whole-file reader accepts in this format streams (no fallback needed).
    expect(streamed).toBe(valid);
    expect(valid).toBeGreaterThan(300);
  }, 600_000);

  it("streams our own writer's format exactly as decodePlaybook reads it", () => {
    let streamed = 0;
    fc.assert(
      fc.property(playbook, (pb) => {
        const parsed = whole(stringify(pb));
        if (!parsed.ok) return;
        if (check(toYaml(parsed.playbook))) streamed += 1;
      }),
      { numRuns: 500 },
    );
    expect(streamed).toBeGreaterThan(150);
  }, 600_000);

  it("on other writer options: the same playbook as decodePlaybook, or a fallback", () => {
    fc.assert(
      fc.property(playbook, fc.constantFrom({ lineWidth: 40 }, { indentSeq: false }, { indent: 4 }, { singleQuote: true }, { blockQuote: "folded" as const }, { lineWidth: 0 }), (pb, options) => {
        check(stringify(pb, options));
      }),
      { numRuns: 700 },
    );
  }, 600_000);

  it("on mutated files: the same playbook as decodePlaybook, or a fallback — never a playbook the whole reader rejects", () => {
    const ch = fc.constantFrom(" ", "  ", "\n", "-", "- ", ":", ": ", "#", " #", "'", '"', "\\", "?", "[", "{", "&a", "*a1", "!", "|", ">", "|-", ">+", "\t", "x", "0", "---", "bullets:\n", "\nbullets:", "\r\n");
    fc.assert(
      fc.property(playbook, fc.nat(), ch, fc.constantFrom("insert", "replace", "delete", "dupline", "dropline"), (pb, at, piece, op) => {
        const text = stringify(pb);
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
        check(mutated);
      }),
      { numRuns: 2000 },
    );
  }, 600_000);

  it("reads block scalars, folded lines, quoting, comments between items, anchors shared across bullets and keys after the bullets", () => {
    const shared: string[] = [];
    const sharedFull = ["manual-cli"];
    const bullets = Array.from({ length: 60 }, (_, i) =>
      rule(i, {
        content: i % 3 === 0 ? `Use "strict" mode; it's required: see rule #${i} ${"and more words ".repeat(12)}` : `plain rule ${i}`,
        reasoning: i % 4 === 0 ? `first ${i}\n  indented\n\n- not an item\nlast\n` : "keep",
        sourceAgents: i % 2 === 0 ? shared : i < 90 ? sharedFull : [],
        tags: [],
      }),
    );
    const text = stringify({ schema_version: 2, name: "pb", description: "d", metadata: META, deprecatedPatterns: [], bullets, trailer: "after" });
    expect(text).toContain("&a1 []");
    expect(text).toContain("*a2");
    expect(text).toContain("|");
    const withComments = text.replace(/\n  - id: b5\n/, "\n# a comment between items\n\n  # another\n  - id: b5\n");
    expect(withComments).toContain("# another");
    for (const t of [text, withComments, stringify({ bullets, name: "first", metadata: META }, { indentSeq: false })]) {
      expect(check(t), t.slice(0, 200)).toBe(true);
    }
  });

  it("keeps the library's alias limit across bullets: a shared non-empty list used more than 100 times is not streamed", () => {
    const shared = ["manual-cli"];
    const under = stringify({ name: "x", metadata: META, bullets: Array.from({ length: 100 }, (_, i) => rule(i, { sourceAgents: shared })) });
    expect(check(under)).toBe(true);
    const over = stringify({ name: "x", metadata: META, bullets: Array.from({ length: 102 }, (_, i) => rule(i, { sourceAgents: shared })) });
    expect(whole(over).ok).toBe(false);
    expect(stream(fileWith(over)).kind).toBe("fallback");
  });

  it("leaves what it does not cover to the whole-file reader", () => {
    const item = (id: string, indent = "  "): string => `${indent}- id: ${id}\n${indent}  content: c\n${indent}  category: k\n${indent}  createdAt: ${T}\n${indent}  updatedAt: ${T}\n`;
    const head = `name: x\nmetadata:\n  createdAt: ${T}\n`;
    // Each reads whole (so the fallback is not just an invalid file) but is not streamed.
    const valid = [
      `${head}bullets:\n${item("a")}`.replace(/\n/g, "\r\n"), // CR line ends
      `${head}bullets: # comment\n${item("a")}`, // a comment on the bullets line
      `${head}x: &x\n  - t\nbullets:\n${item("a")}  - id: b\n    content: c\n    category: k\n    createdAt: ${T}\n    updatedAt: ${T}\n    tags: *x\n`, // an alias to the skeleton
      // A second document: the whole reader takes the first one (a mutation found by the property test above).
      `name: x\nmetadata:\n  createdAt: ${T}\n---  totalReflections: 3\nbullets:\n${item("a")}`,
      `${head}bullets:\n${item("a")}...\n`, // a document end marker
    ];
    for (const text of valid) expect(whole(text).ok, JSON.stringify(text)).toBe(true);
    const cases = [
      ...valid,
      `${head}bullets: []\n`, // no block sequence
      `${head}bullets:\n  id: a\n`, // a mapping, not a sequence
      `description: "open\nbullets:\n${item("a")}  - x"\n`, // the bullets line inside a scalar
      `${head}bullets:\n${item("a")}bullets:\n${item("b")}`, // a duplicate key
      "",
    ];
    for (const text of cases) expect(stream(fileWith(text)).kind, JSON.stringify(text)).toBe("fallback");
    expect(openPlaybookStream(join(dir, "missing.yaml"), "global")).toBeNull();
    // A bare `---` opening the file starts the one document: still streamed.
    expect(check(`# comment\n---\n${head}bullets:\n${item("a")}`)).toBe(true);
  });

  it("notices a file that changed between two passes", () => {
    const make = (n: number): string => stringify({ name: "x", metadata: META, bullets: Array.from({ length: n }, (_, i) => rule(i)) });
    const path = fileWith(make(3));
    const opened = openPlaybookStream(path, "global");
    expect(opened?.count).toBe(3);
    writeFileSync(path, make(4));
    expect(() => [...(opened?.bullets() ?? [])]).toThrow(PlaybookStreamUnsupported);
  });
});
