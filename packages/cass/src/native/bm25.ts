/**
 * Okapi BM25 over message-level documents. The index stores, per term, the documents containing it
 * with their term frequency, and per document its length in tokens; these functions turn those
 * statistics into scores.
 */

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/**
 * Inverse document frequency with the `+1` inside the logarithm (as Lucene does), so a term found
 * in more than half of the documents still scores slightly positive instead of negative.
 */
export function bm25Idf(docCount: number, docFreq: number): number {
  if (docCount <= 0 || docFreq <= 0) return 0;
  return Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5));
}

/**
 * One term's contribution to a document's score: `idf · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl))`.
 * `avgDocLength` of 0 (an empty collection) is treated as 1.
 */
export function bm25TermScore(idf: number, tf: number, docLength: number, avgDocLength: number): number {
  if (tf <= 0) return 0;
  const avg = avgDocLength > 0 ? avgDocLength : 1;
  const norm = BM25_K1 * (1 - BM25_B + (BM25_B * docLength) / avg);
  return (idf * tf * (BM25_K1 + 1)) / (tf + norm);
}
