import type { Logger, LexicalCache } from "../ports.js";
import type { Bullet } from "../schemas/playbook.js";
import { hasShippedConcepts, installShippedConcepts, shippedConceptPlan, shippedConcepts } from "./lexical/concept-match.js";
import { DEFAULT_BM25F } from "./lexical/lexical-index.js";
import { decodeConceptPlan, decodeDocuments, decodeTerms, documentKey, documentsToSave, encodeTerms, lexicalFingerprint } from "./lexical/persist.js";
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
  if (cache === undefined || hasShippedConcepts()) return;
  const fingerprint = lexicalFingerprint();
  try {
    const plan = decodeConceptPlan(await cache.read("concepts", fingerprint));
    if (plan !== null) {
      installShippedConcepts(plan);
      return;
    }
  } catch (error) {
    logger.debug(`Ignoring the saved concept map: ${messageOf(error)}`);
  }
  shippedConcepts();
  const compiled = shippedConceptPlan();
  if (compiled !== undefined) await cache.write("concepts", fingerprint, compiled);
}

/** What warmLexicalIndex did: how many rules' analyses came from the cache and how many were made. */
export interface WarmResult {
  reused: number;
  analysed: number;
}

/**
 * Builds the ranker's index of `bullets` (default parameters) from the cache's saved analyses,
 * analysing only rules that are new or changed, and saves those. Null (nothing done) without a
 * cache, or when this process already holds an index of the same texts.
 */
export async function warmLexicalIndex(bullets: readonly Bullet[], cache: LexicalCache | undefined, logger: Logger): Promise<WarmResult | null> {
  if (cache === undefined || bullets.length === 0 || hasLexicalIndex(bullets)) return null;
  const fingerprint = lexicalFingerprint();
  let saved = new Map<string, string>();
  try {
    saved = decodeDocuments(await cache.read("documents", fingerprint));
  } catch (error) {
    logger.debug(`Ignoring the saved rule analyses: ${messageOf(error)}`);
  }
  const keys = bullets.map(documentKey);
  const known: Array<DocumentTerms | undefined> = keys.map((key) => {
    const encoded = saved.get(key);
    return encoded === undefined ? undefined : (decodeTerms(encoded) ?? undefined);
  });
  const inUse: Array<[string, string]> = [];
  let analysed = 0;
  lexicalIndexFor(bullets, DEFAULT_BM25F, {
    known,
    onAnalyzed: (doc, terms) => {
      analysed++;
      const encoded = encodeTerms(terms);
      if (encoded !== null) saved.set(keys[doc]!, encoded);
    },
  });
  const result = { reused: bullets.length - analysed, analysed };
  if (analysed === 0) return result;
  for (const key of keys) {
    const encoded = saved.get(key);
    if (encoded !== undefined) inUse.push([key, encoded]);
  }
  await cache.write("documents", fingerprint, documentsToSave(inUse, saved));
  return result;
}
