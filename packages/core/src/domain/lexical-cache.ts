import type { Logger, LexicalCache } from "../ports.js";
import type { Bullet } from "../schemas/playbook.js";
import { DEFAULT_BM25F, type IndexSnapshot } from "./lexical/lexical-index.js";
import {
  decodeDocuments,
  decodeIndexSnapshot,
  decodeTerms,
  documentKey,
  documentsToSave,
  encodeIndexSnapshot,
  encodeTerms,
  indexSnapshotKey,
  indexSnapshotKeyByDigest,
  indexSnapshotKeyBySource,
  lexicalFingerprint,
  type SourcedTexts,
} from "./lexical/persist.js";
import type { DocumentTerms } from "./lexical/lexical-index.js";
import { hasLexicalIndex, lexicalIndexFor } from "./ranking.js";

/**
 * Using a LexicalCache: a process that ranks once (a CLI call) would otherwise spend most of its
 * ranking time analysing every rule's text, which only changes when the analyser or the rules do. Long-running hosts keep their index in memory and skip all of this.
 */

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Texts a store vouched for (noteTextSource): the bullets it returned, in order, with the text
 * fields each had then (so a bullet whose texts were replaced since is not vouched for).
 */
interface VouchedList {
  source: string;
  items: readonly Bullet[];
  contents: readonly string[];
  categories: ReadonlyArray<string | undefined>;
  tags: ReadonlyArray<readonly string[] | undefined>;
  /** Every bullet's tags as they were, one after the other: bullet k's are tagValues[tagStart[k] .. tagStart[k + 1]). */
  tagValues: readonly string[];
  tagStart: readonly number[];
  /** Position of each bullet in `items`, made when a lookup first needs it. */
  positions?: Map<Bullet, number>;
}

/** The lists most recently vouched for, newest last (a CLI call reads one or two playbooks). */
const vouched: VouchedList[] = [];
const MAX_VOUCHED = 4;

/**
 * A store's statement that the indexed texts (content, tags, category) of `bullets`, in this order,
 * are exactly determined by `source`: a string that changes whenever any of them could, e.g. the
 * SHA-256 of the file they were decoded from together with the decoder's version and the layer.
 * warmLexicalIndex then keys the saved index by `source` and positions instead of hashing every
 * text (≈25 ms at 10,000 rules in a short-lived process). Bullets are recognised by identity (the
 * merged view shares them), and only while their content, category and tags are the same values
 * as when noted (edits in place are noticed); anything else is keyed by its texts. The last four lists noted are kept in memory. Optional for a
 * store; a `source` holding a line break or "\u0003" is ignored.
 */
export function noteTextSource(bullets: readonly Bullet[], source: string): void {
  if (bullets.length === 0 || source === "" || source.includes("\n") || source.includes("\u0003")) return;
  const contents: string[] = [];
  const categories: Array<string | undefined> = [];
  const tags: Array<readonly string[] | undefined> = [];
  const tagValues: string[] = [];
  const tagStart: number[] = [];
  for (const b of bullets) {
    contents.push(b.content);
    categories.push(b.category);
    tags.push(b.tags);
    tagStart.push(tagValues.length);
    if (b.tags !== undefined) for (const tag of b.tags) tagValues.push(tag);
  }
  tagStart.push(tagValues.length);
  const existing = vouched.findIndex((list) => list.items === bullets);
  if (existing !== -1) vouched.splice(existing, 1);
  vouched.push({ source, items: bullets, contents, categories, tags, tagValues, tagStart });
  if (vouched.length > MAX_VOUCHED) vouched.shift();
}

/** Whether the bullet at `at` of `list` is `b` with the text fields it had when noted. */
function stillVouched(list: VouchedList, at: number, b: Bullet): boolean {
  if (list.items[at] !== b || list.contents[at] !== b.content || list.categories[at] !== b.category || list.tags[at] !== b.tags) return false;
  const from = list.tagStart[at]!;
  const count = list.tagStart[at + 1]! - from;
  const tags = b.tags;
  if (tags === undefined) return count === 0;
  if (tags.length !== count) return false;
  for (let k = 0; k < count; k++) if (tags[k] !== list.tagValues[from + k]) return false;
  return true;
}

/** Where `b` is in a vouched list, or null; `hint` (its position in the list being keyed) is tried first. */
function findVouched(b: Bullet, hint: number): { list: VouchedList; at: number } | null {
  for (let i = vouched.length - 1; i >= 0; i--) if (hint < vouched[i]!.items.length && stillVouched(vouched[i]!, hint, b)) return { list: vouched[i]!, at: hint };
  for (let i = vouched.length - 1; i >= 0; i--) {
    const list = vouched[i]!;
    if (list.positions === undefined) {
      list.positions = new Map();
      list.items.forEach((item, at) => list.positions!.set(item, at));
    }
    const at = list.positions.get(b);
    if (at !== undefined && stillVouched(list, at, b)) return { list, at };
  }
  return null;
}

/**
 * `bullets` as runs of vouched-for positions and single unvouched documents, or null when none of
 * them is vouched for. Consecutive bullets of one list need only identity checks.
 */
export function sourcedTexts(bullets: readonly Bullet[]): SourcedTexts[] | null {
  if (vouched.length === 0) return null;
  const pieces: SourcedTexts[] = [];
  let run: { list: VouchedList; piece: { source: string; from: number; to: number } } | null = null;
  let any = false;
  for (let i = 0; i < bullets.length; i++) {
    const b = bullets[i]!;
    if (run !== null) {
      const next = run.piece.to + 1;
      if (next < run.list.items.length && stillVouched(run.list, next, b)) {
        run.piece.to = next;
        continue;
      }
    }
    const found = findVouched(b, i);
    if (found === null) {
      run = null;
      pieces.push({ doc: b });
      continue;
    }
    any = true;
    const piece = { source: found.list.source, from: found.at, to: found.at };
    run = { list: found.list, piece };
    pieces.push(piece);
  }
  return any ? pieces : null;
}

/**
 * What warmLexicalIndex did: whether the whole index was loaded as saved (`loaded`), else how many
 * rules' analyses came from the cache and how many were made.
 */
export interface WarmResult {
  loaded: boolean;
  reused: number;
  analysed: number;
}

/**
 * Builds the ranker's index of `bullets` (default parameters) from the cache: the saved index when
 * it was built from exactly these rule texts, else from the saved analyses, analysing only rules
 * that are new or changed; then saves what it had to make. Null (nothing done) without a cache, or
 * when this process already holds an index of the same texts.
 */
export async function warmLexicalIndex(bullets: readonly Bullet[], cache: LexicalCache | undefined, logger: Logger): Promise<WarmResult | null> {
  if (cache === undefined || bullets.length === 0 || hasLexicalIndex(bullets)) return null;
  const digest = cache.digest?.bind(cache);
  let keys: string[] | undefined;
  // Texts a store vouched for are keyed by their source; otherwise every text is hashed.
  const sourced = sourcedTexts(bullets);
  const indexKey =
    sourced !== null
      ? indexSnapshotKeyBySource(sourced, bullets.length, DEFAULT_BM25F, digest)
      : digest !== undefined
        ? indexSnapshotKeyByDigest(bullets, DEFAULT_BM25F, digest)
        : indexSnapshotKey((keys = bullets.map(documentKey)), DEFAULT_BM25F);
  if (cache.readIndex !== undefined) {
    let snapshot: IndexSnapshot | null = null;
    try {
      const bytes = await cache.readIndex(indexKey);
      snapshot = bytes === null ? null : decodeIndexSnapshot(bytes);
    } catch (error) {
      logger.debug(`Ignoring the saved index: ${messageOf(error)}`);
    }
    if (snapshot !== null && snapshot.size === bullets.length) {
      lexicalIndexFor(bullets, DEFAULT_BM25F, { snapshot });
      return { loaded: true, reused: bullets.length, analysed: 0 };
    }
  }

  const fingerprint = lexicalFingerprint();
  const docKeys = keys ?? bullets.map(documentKey);
  let saved = new Map<string, string>();
  try {
    saved = decodeDocuments(await cache.read("documents", fingerprint));
  } catch (error) {
    logger.debug(`Ignoring the saved rule analyses: ${messageOf(error)}`);
  }
  const known: Array<DocumentTerms | undefined> = docKeys.map((key) => {
    const encoded = saved.get(key);
    return encoded === undefined ? undefined : (decodeTerms(encoded) ?? undefined);
  });
  let analysed = 0;
  const index = lexicalIndexFor(bullets, DEFAULT_BM25F, {
    known,
    onAnalyzed: (doc, terms) => {
      analysed++;
      const encoded = encodeTerms(terms);
      if (encoded !== null) saved.set(docKeys[doc]!, encoded);
    },
  });
  if (analysed > 0) {
    const inUse: Array<[string, string]> = [];
    for (const key of docKeys) {
      const encoded = saved.get(key);
      if (encoded !== undefined) inUse.push([key, encoded]);
    }
    await cache.write("documents", fingerprint, documentsToSave(inUse, saved));
  }
  if (cache.writeIndex !== undefined) {
    const bytes = encodeIndexSnapshot(index.snapshot());
    if (bytes !== null) await cache.writeIndex(indexKey, bytes);
  }
  return { loaded: false, reused: bullets.length - analysed, analysed };
}
