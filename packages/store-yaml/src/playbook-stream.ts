import { closeSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { BulletSchema } from "@cass-memory/core";
import type { Bullet, Layer, Playbook } from "@cass-memory/core";
import { parseLibraryYamlPiece, type AnchorData } from "./library-yaml.js";
import { decodePlaybook, fromYaml } from "./yaml-codec.js";

/**
 * A playbook file read one bullet at a time (`cm storage migrate` of a large playbook): memory
 * stays bounded by the largest bullet instead of growing with the file.
 *
 * The file must be a top-level mapping with a line `bullets:` in column 0 followed by a block
 * sequence (the layout both the earlier cm's `yaml` writer and our own writer produce). A first
 * pass over the file cuts it into the part that is not the sequence (the "skeleton": every other
 * top-level key, decoded and validated like a whole file with `bullets: []`) and the sequence's
 * items; each pass of {@link PlaybookStream.bullets} reads the file again and parses one item at a
 * time with the reader of the `yaml` library's format (anchors shared across items), validating
 * each as the playbook schema validates its bullets. The result is the playbook `decodePlaybook`
 * returns for the whole text, `head` with `bullets` replaced by the stream.
 *
 * Anything this does not cover — no such `bullets:` line, a skeleton that does not read on its
 * own, an item outside the reader's subset or failing the schema — is reported as "not
 * streamable" (undefined from {@link openPlaybookStream}, {@link PlaybookStreamUnsupported} from
 * a pass), and the caller reads the file whole, which gives the same value or the precise error.
 */

/** Thrown by a pass over the bullets when the file turns out not to be streamable (read it whole instead). */
export class PlaybookStreamUnsupported extends Error {
  constructor(reason: string) {
    super(`The playbook cannot be read bullet by bullet: ${reason}`);
    this.name = "PlaybookStreamUnsupported";
  }
}

export interface PlaybookStream {
  path: string;
  /** The playbook without its bullets (`bullets: []`), as decodePlaybook validates it. */
  head: Playbook;
  /** Bullets the first pass found. */
  count: number;
  /** The bullets in file order, each validated (a new pass over the file each call). */
  bullets(): Generator<Bullet, void, undefined>;
}

const READ_CHUNK = 1 << 20;
/** An item (one bullet's text) larger than this is not streamed: the whole-file reader decides. */
const MAX_ITEM_CHARS = 16 << 20;
const BULLETS_LINE = /^bullets: *$/;
/** A line that starts or ends a YAML document (in column 0, nothing else can start this way). */
const DOCUMENT_MARKER = /^(---|\.\.\.)([ \t]|$)/;
/** A bare document start, which may open the file. */
const BARE_DOCUMENT_START = /^---[ \t]*$/;

/** The file's lines, each with whether a line feed ended it; null when the file does not exist. */
function* fileLines(path: string): Generator<[string, boolean], void, undefined> {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.allocUnsafe(READ_CHUNK);
    const decoder = new StringDecoder("utf8");
    let carry = "";
    for (;;) {
      const n = readSync(fd, buffer, 0, READ_CHUNK, null);
      const text = n > 0 ? carry + decoder.write(buffer.subarray(0, n)) : carry + decoder.end();
      let start = 0;
      for (let nl = text.indexOf("\n", start); nl !== -1; nl = text.indexOf("\n", start)) {
        yield [text.slice(start, nl), true];
        start = nl + 1;
      }
      carry = text.slice(start);
      if (carry.length > MAX_ITEM_CHARS) throw new PlaybookStreamUnsupported("a line is too long");
      if (n === 0) break;
    }
    if (carry !== "") yield [carry, false];
  } finally {
    closeSync(fd);
  }
}

type Piece =
  | { kind: "skeleton"; text: string }
  /** The `bullets:` line (the skeleton has `bullets: []` in its place). */
  | { kind: "key" }
  /** The bullets line seen and the sequence's column known. */
  | { kind: "start"; column: number }
  | { kind: "item"; text: string };

function leadingSpaces(line: string): number {
  let k = 0;
  while (line.charCodeAt(k) === 0x20) k += 1;
  return k;
}

/**
 * Splits the file into skeleton lines and sequence items (one piece of text per item, dedented to
 * column 0 so that it reads as a one-item sequence). Skeleton pieces come as they are passed.
 */
function* pieces(path: string): Generator<Piece, void, undefined> {
  let state: "head" | "afterKey" | "items" | "tail" = "head";
  let column = 0;
  let item: string[] = [];
  let itemChars = 0;
  const flush = function* (): Generator<Piece, void, undefined> {
    if (item.length > 0) yield { kind: "item", text: item.join("") };
    item = [];
    itemChars = 0;
  };
  let content = false;
  for (const [line, ended] of fileLines(path)) {
    const eol = ended ? "\n" : "";
    // A second document (or the end of the first) is not cut into pieces: the whole-file reader
    // decides what it means. Only a bare `---` before any content, opening the one document, is read.
    if (DOCUMENT_MARKER.test(line) && (content || !BARE_DOCUMENT_START.test(line))) {
      throw new PlaybookStreamUnsupported("the file holds a YAML document marker ('---' or '...') after its start");
    }
    if (!content && line.trim() !== "" && !line.trimStart().startsWith("#") && !BARE_DOCUMENT_START.test(line)) content = true;
    if (state === "head") {
      if (BULLETS_LINE.test(line)) {
        state = "afterKey";
        yield { kind: "key" };
      } else yield { kind: "skeleton", text: line + eol };
      continue;
    }
    const k = leadingSpaces(line);
    const rest = line.slice(k);
    const blankOrComment = rest.trim() === "" || rest.trimStart().startsWith("#");
    if (state === "afterKey") {
      if (blankOrComment) {
        yield { kind: "skeleton", text: line + eol };
        continue;
      }
      if (rest === "-" || rest.startsWith("- ")) {
        column = k;
        state = "items";
        yield { kind: "start", column };
      } else {
        // `bullets:` with something other than a block sequence below it: not streamed.
        throw new PlaybookStreamUnsupported("the bullets are not a block sequence");
      }
    } else if (state === "tail") {
      yield { kind: "skeleton", text: line + eol };
      continue;
    }
    // In the sequence.
    if (blankOrComment) {
      itemChars += line.length;
      if (itemChars > MAX_ITEM_CHARS) throw new PlaybookStreamUnsupported("a bullet is too large");
      if (k >= column) item.push(line.slice(column) + eol);
      else if (/^[ ]*$/.test(rest) || rest.startsWith("#")) item.push((rest.startsWith("#") ? rest : "") + eol);
      else throw new PlaybookStreamUnsupported("a tab in a less indented blank line");
      continue;
    }
    if (k > column) {
      item.push(line.slice(column) + eol);
      itemChars += line.length;
      if (itemChars > MAX_ITEM_CHARS) throw new PlaybookStreamUnsupported("a bullet is too large");
      continue;
    }
    if (k === column && (rest === "-" || rest.startsWith("- "))) {
      yield* flush();
      item.push(line.slice(column) + eol);
      itemChars = line.length;
      continue;
    }
    // Less indented content (or a key in the sequence's column): the sequence has ended.
    yield* flush();
    state = "tail";
    yield { kind: "skeleton", text: line + eol };
  }
  yield* flush();
}

/** Parses YAML text as a top-level mapping (or nothing); false when it does not read on its own. */
function readsAlone(text: string): boolean {
  try {
    const value = fromYaml(text, "(part of the playbook)");
    return value === null || value === undefined || (typeof value === "object" && !Array.isArray(value));
  } catch {
    return false;
  }
}

/**
 * Opens a playbook file for reading bullet by bullet: null when the file does not exist,
 * undefined when it cannot be streamed (read it whole then). One pass over the file; the skeleton
 * is decoded here (so a head that is invalid is left to the whole-file reader's error).
 */
export function openPlaybookStream(path: string, layer: Layer): PlaybookStream | null | undefined {
  let head = "";
  let tail = "";
  let keySeen = false;
  let started = false;
  let count = 0;
  try {
    for (const piece of pieces(path)) {
      if (piece.kind === "key") keySeen = true;
      else if (piece.kind === "start") started = true;
      else if (piece.kind === "item") count += 1;
      else if (keySeen) tail += piece.text;
      else head += piece.text;
    }
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return null;
    if (error instanceof PlaybookStreamUnsupported) return undefined;
    throw error;
  }
  if (!started) return undefined;
  // The parts around the sequence must each read on their own (so that the `bullets:` line really
  // is a top-level key, not text inside a scalar), and together as a playbook.
  if (!readsAlone(head) || !readsAlone(tail)) return undefined;
  let decoded: Playbook;
  try {
    decoded = decodePlaybook(`${head}bullets: []\n${tail}`, path, layer);
  } catch {
    return undefined;
  }
  if (!Array.isArray(decoded.bullets) || decoded.bullets.length !== 0) return undefined;
  const expected = count;
  return {
    path,
    head: decoded,
    count,
    *bullets() {
      const anchors = new Map<string, AnchorData>();
      let seen = 0;
      for (const piece of pieces(path)) {
        if (piece.kind !== "item") continue;
        const value = parseLibraryYamlPiece(piece.text, anchors);
        if (!Array.isArray(value) || value.length !== 1) throw new PlaybookStreamUnsupported(`bullet ${seen} is outside the reader's subset`);
        const parsed = BulletSchema.safeParse(value[0]);
        if (!parsed.success) throw new PlaybookStreamUnsupported(`bullet ${seen} does not validate`);
        seen += 1;
        yield parsed.data;
      }
      if (seen !== expected) throw new PlaybookStreamUnsupported("the file changed between two passes");
    },
  };
}
