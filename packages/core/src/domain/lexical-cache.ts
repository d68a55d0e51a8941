import type { Logger, LexicalCache } from "../ports.js";
import type { Bullet } from "../schemas/playbook.js";
import { hasShippedConcepts, installShippedConcepts, shippedConceptPlan, shippedConcepts } from "./lexical/concept-match.js";
import { DEFAULT_BM25F, type IndexSnapshot } from "./lexical/lexical-index.js";
import {
  decodeConceptPlan,
  decodeDocuments,
  decodeIndexSnapshot,
  decodeTerms,
  documentKey,
  documentsToSave,
  encodeIndexSnapshot,
  encodeTerms,
  indexSnapshotKey,
  indexSnapshotKeyByDigest,
  lexicalFingerprint,
} from "./lexical/persist.js";
import type { DocumentTerms } from "./lexical/lexical-index.js";
import { hasLexicalIndex, lexicalIndexFor } from "./ranking.js";

/**
 * Using a LexicalCache: a process that ranks once (a CLI call) would otherwise spend most of its
 * ranking time analysing the concept map and every rule's text, which only change when the
 * analyser or the rules do. Long-running hosts keep their index in memory and skip all of this.
 */

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Makes the shipped concept map available: from the cache when it holds this analyser's plan,
 * otherwise compiled and saved. Nothing to do once the map exists in this process.
 */
export async function primeConcepts(cache: LexicalCache | undefined, logger: Logger): Promise<void> {
  await (await loadConcepts(cache, logger))();
}

/**
 * primeConcepts without the save: the map is available on return, and the returned function saves
 * it when it was compiled here (a no-op otherwise). `cm context` saves only once the store has
 * answered, so a command that fails on an unreachable store writes no file.
 */
export async function loadConcepts(cache: LexicalCache | undefined, logger: Logger): Promise<() => Promise<void>> {
  const nothing = async (): Promise<void> => undefined;
  if (cache === undefined || hasShippedConcepts()) return nothing;
  const fingerprint = lexicalFingerprint();
  try {
    const plan = decodeConceptPlan(await cache.read("concepts", fingerprint));
    if (plan !== null) {
      installShippedConcepts(plan);
      return nothing;
    }
  } catch (error) {
    logger.debug(`Ignoring the saved concept map: ${messageOf(error)}`);
  }
  shippedConcepts();
  const compiled = shippedConceptPlan();
  return compiled === undefined ? nothing : () => cache.write("concepts", fingerprint, compiled);
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
  const indexKey = digest !== undefined ? indexSnapshotKeyByDigest(bullets, DEFAULT_BM25F, digest) : indexSnapshotKey((keys = bullets.map(documentKey)), DEFAULT_BM25F);
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
