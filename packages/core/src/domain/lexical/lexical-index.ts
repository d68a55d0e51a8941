import { analyze, analyzeShort, isParticle, type Analysis } from "./analyze.js";
import { matchConcepts, shippedConcepts, type CompiledConcepts } from "./concept-match.js";

/**
 * An inverted index over documents with three fields (content, tags, category) scored with BM25F:
 * per term, the field frequencies are length-normalised per field, weighted and summed into one
 * pseudo-frequency, which is then saturated once (k1) and multiplied by the term's idf. All of that
 * is query-independent, so each posting stores its final impact and a query only adds impacts up
 * along the posting lists of its terms: ranking touches the documents that share a term with the
 * task, not the whole playbook.
 *
 * Concept-map groups (concepts.ts) that a document mentions are indexed as pseudo-terms like
 * words. A proximity bonus rewards documents whose content has two of the query's adjacent terms
 * within two positions of each other (either order).
 */

export interface FieldParams {
  /** Weight of a field's (length-normalised) frequency in the combined pseudo-frequency. */
  weight: number;
  /** Length normalisation of the field, 0 (none) … 1 (full). */
  b: number;
}

export interface Bm25fParams {
  k1: number;
  content: FieldParams;
  tags: FieldParams;
  category: FieldParams;
  /** Proximity bonus per matched query bigram, times the smaller idf of its two terms. */
  pairWeight: number;
  /** Distance (in content terms) within which a query bigram counts as matched. */
  pairWindow: number;
}

export const DEFAULT_BM25F: Readonly<Bm25fParams> = Object.freeze({
  k1: 1.2,
  content: Object.freeze({ weight: 1, b: 0.75 }),
  tags: Object.freeze({ weight: 1.5, b: 0.3 }),
  category: Object.freeze({ weight: 0.5, b: 0 }),
  pairWeight: 0.3,
  pairWindow: 2,
});

export interface IndexedDocument {
  content: string;
  tags?: readonly string[] | undefined;
  category?: string | undefined;
}

export interface QueryTerm {
  term: string;
  weight: number;
  /** Whether the term was in the query's own words (proximity pairs are built from these only). */
  literal: boolean;
}

export interface IndexQuery {
  terms: readonly QueryTerm[];
  /** Adjacent literal query terms, for the proximity bonus. */
  pairs: ReadonlyArray<readonly [string, string]>;
}

export interface SearchResult {
  /** Indexes of the documents that matched at least one query term (valid until the next search). */
  docs: Int32Array;
  /** Their scores, `scores[docs[i]]` (valid until the next search). */
  scores: Float64Array;
  /**
   * Per document, how many query terms it has in its content or tags (`textHits[docs[i]]`); 0 means
   * it matched through its category only.
   */
  textHits: Uint16Array;
  count: number;
}

/** The words of an analysis that are terms (particles are phrase-only). */
export function wordTerms(analysis: Analysis): string[] {
  return analysis.terms.filter((t) => !isParticle(t));
}

/** Terms of one field: its words, joined identifier forms and concept pseudo-terms; length counts words. */
export function fieldTerms(analysis: Analysis, concepts: CompiledConcepts): { words: string[]; terms: string[]; length: number } {
  const words = wordTerms(analysis);
  const terms = [...words, ...analysis.joined];
  for (const g of matchConcepts(analysis, concepts)) terms.push(concepts.terms[g]!);
  return { words, terms, length: words.length };
}

const FIELDS = 3;
const PAIR_SHIFT = 4_294_967_296;

/** A growable Int32Array. */
class IntBuffer {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
}

/**
 * One field of a document as the index counts it: its words in text order (they make the field's
 * length and, for the content, the stream proximity is measured on) and its other terms (joined
 * identifier forms and concept pseudo-terms), which count as occurrences but not as length.
 */
export interface FieldTerms {
  readonly words: readonly string[];
  readonly extra: readonly string[];
}

/** What the index keeps of a document: the terms of its three fields. */
export interface DocumentTerms {
  readonly content: FieldTerms;
  readonly tags: FieldTerms;
  readonly category: FieldTerms;
}

const NO_TERMS: FieldTerms = Object.freeze({ words: Object.freeze([]), extra: Object.freeze([]) });

function fieldOf(analyses: readonly Analysis[], concepts: CompiledConcepts): FieldTerms {
  const words: string[] = [];
  const extra: string[] = [];
  for (const analysis of analyses) {
    for (const term of analysis.terms) if (!isParticle(term)) words.push(term);
    for (const term of analysis.joined) extra.push(term);
    for (const g of matchConcepts(analysis, concepts)) extra.push(concepts.terms[g]!);
  }
  return { words, extra };
}

/**
 * Analyses a document for the index (the costly part of building one: tokenising, stemming and
 * concept matching). The result depends only on the document's texts and the analyser, so hosts
 * may keep it between processes (see lexical/persist.ts).
 */
export function analyzeDocument(doc: IndexedDocument, concepts: CompiledConcepts = shippedConcepts()): DocumentTerms {
  return {
    content: fieldOf([analyze(doc.content ?? "", false)], concepts),
    tags: doc.tags !== undefined && doc.tags.length > 0 ? fieldOf(doc.tags.map(analyzeShort), concepts) : NO_TERMS,
    category: doc.category ? fieldOf([analyzeShort(doc.category)], concepts) : NO_TERMS,
  };
}

/** How a LexicalIndex gets each document's terms. */
export interface IndexBuildOptions {
  concepts?: CompiledConcepts;
  /** Terms already analysed, by document position (missing entries are analysed). */
  known?: ReadonlyArray<DocumentTerms | undefined>;
  /** Called with the terms of each document the index had to analyse. */
  onAnalyzed?: (doc: number, terms: DocumentTerms) => void;
  /**
   * A saved index of these very documents built with the same parameters (`LexicalIndex.snapshot`);
   * used as it is, nothing is analysed or counted. The caller vouches for the match (persist.ts
   * keys snapshots by the documents' texts); only its size is checked here.
   */
  snapshot?: IndexSnapshot;
}

/**
 * Everything a built LexicalIndex holds, as flat arrays (see `LexicalIndex.snapshot`): term `t`
 * (`terms[t]`) has the postings `postingStart[t]` … `postingStart[t + 1] - 1` of `docs`, `impacts`
 * and `inText`; document `d`'s content stream is `streamTerms[streamStart[d]]` …
 * `streamTerms[streamStart[d + 1] - 1]`.
 */
export interface IndexSnapshot {
  readonly size: number;
  readonly terms: readonly string[];
  readonly idf: Float64Array;
  readonly postingStart: Int32Array;
  readonly docs: Int32Array;
  readonly impacts: Float32Array;
  readonly inText: Uint8Array;
  readonly streamTerms: Int32Array;
  readonly streamStart: Int32Array;
}

/** The query-independent part of an index, built from documents or taken from a snapshot. */
interface Postings {
  idf: Float64Array;
  postingDocs: Int32Array[];
  postingImpacts: Float32Array[];
  postingInText: Uint8Array[];
  streamTerms: Int32Array;
  streamStart: Int32Array;
}

function postingsOfSnapshot(snapshot: IndexSnapshot, termIds: Map<string, number>): Postings {
  const t = snapshot.terms.length;
  const postingDocs: Int32Array[] = new Array(t);
  const postingImpacts: Float32Array[] = new Array(t);
  const postingInText: Uint8Array[] = new Array(t);
  const start = snapshot.postingStart;
  for (let i = 0; i < t; i++) {
    termIds.set(snapshot.terms[i]!, i);
    const from = start[i]!;
    const to = start[i + 1]!;
    postingDocs[i] = snapshot.docs.subarray(from, to);
    postingImpacts[i] = snapshot.impacts.subarray(from, to);
    postingInText[i] = snapshot.inText.subarray(from, to);
  }
  return { idf: snapshot.idf, postingDocs, postingImpacts, postingInText, streamTerms: snapshot.streamTerms, streamStart: snapshot.streamStart };
}

export class LexicalIndex {
  readonly size: number;
  readonly params: Readonly<Bm25fParams>;
  private readonly termIds = new Map<string, number>();
  private readonly idf: Float64Array;
  private readonly postingDocs: Int32Array[];
  private readonly postingImpacts: Float32Array[];
  /** Per posting: 1 when the term is in the content or tags, 0 when only in the category. */
  private readonly postingInText: Uint8Array[];
  /** Content word streams of all documents as term ids, back to back; document d is [streamStart[d], streamStart[d+1]). */
  private readonly streamTerms: Int32Array;
  private readonly streamStart: Int32Array;
  // Scratch space for searches (the index is used by one caller at a time).
  private readonly scores: Float64Array;
  private readonly stamp: Uint32Array;
  private readonly literalHits: Uint16Array;
  private readonly textHits: Uint16Array;
  private readonly touched: Int32Array;
  /** Per term: 1 while it is a literal term of the running query (for proximity). */
  private readonly queryMark: Uint8Array;
  private epoch = 0;

  constructor(docs: readonly IndexedDocument[], params: Readonly<Bm25fParams> = DEFAULT_BM25F, build: IndexBuildOptions = {}) {
    this.params = params;
    const n = docs.length;
    this.size = n;
    if (build.snapshot !== undefined && build.snapshot.size !== n) {
      throw new Error(`index snapshot of ${build.snapshot.size} documents used for ${n}`);
    }
    const built = build.snapshot !== undefined ? postingsOfSnapshot(build.snapshot, this.termIds) : this.build(docs, params, build);
    this.idf = built.idf;
    this.postingDocs = built.postingDocs;
    this.postingImpacts = built.postingImpacts;
    this.postingInText = built.postingInText;
    this.streamTerms = built.streamTerms;
    this.streamStart = built.streamStart;

    this.scores = new Float64Array(n);
    this.stamp = new Uint32Array(n);
    this.literalHits = new Uint16Array(n);
    this.textHits = new Uint16Array(n);
    this.touched = new Int32Array(n);
    this.queryMark = new Uint8Array(this.postingDocs.length);
  }

  /** Analyses and counts `docs` (fills `termIds`). */
  private build(docs: readonly IndexedDocument[], params: Readonly<Bm25fParams>, build: IndexBuildOptions): Postings {
    const n = docs.length;
    const lengths = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
    // Postings while building, per term: pairs of (document, packed content/tags/category frequencies).
    const raw: IntBufferSmall[] = [];
    const streamTerms = new IntBuffer();
    const streamStart = new Int32Array(n + 1);
    // Frequencies of the current document, per term id; reset lazily through `seenIn`.
    let tf = new Float64Array(1024 * FIELDS);
    let seenIn = new Int32Array(1024).fill(-1);
    const docTerms: number[] = [];

    const idOf = (term: string): number => {
      let id = this.termIds.get(term);
      if (id === undefined) {
        id = raw.length;
        this.termIds.set(term, id);
        raw.push(new IntBufferSmall());
        if (id >= seenIn.length) {
          const grownSeen = new Int32Array(seenIn.length * 2).fill(-1);
          grownSeen.set(seenIn);
          seenIn = grownSeen;
          const grownTf = new Float64Array(tf.length * 2);
          grownTf.set(tf);
          tf = grownTf;
        }
      }
      return id;
    };
    const countTerm = (doc: number, term: string, field: number): number => {
      const id = idOf(term);
      if (seenIn[id] !== doc) {
        seenIn[id] = doc;
        tf[id * FIELDS] = 0;
        tf[id * FIELDS + 1] = 0;
        tf[id * FIELDS + 2] = 0;
        docTerms.push(id);
      }
      tf[id * FIELDS + field]! += 1;
      return id;
    };
    /** Counts a field's terms; returns its length in words. */
    const countField = (doc: number, field: FieldTerms, index: number, stream: IntBuffer | undefined): number => {
      for (const term of field.words) {
        const id = countTerm(doc, term, index);
        stream?.push(id);
      }
      for (const term of field.extra) countTerm(doc, term, index);
      return field.words.length;
    };

    const concepts = build.concepts ?? shippedConcepts();
    for (let d = 0; d < n; d++) {
      let terms = build.known?.[d];
      if (terms === undefined) {
        terms = analyzeDocument(docs[d]!, concepts);
        build.onAnalyzed?.(d, terms);
      }
      docTerms.length = 0;
      streamStart[d] = streamTerms.length;
      lengths[0]![d] = countField(d, terms.content, 0, streamTerms);
      lengths[1]![d] = countField(d, terms.tags, 1, undefined);
      lengths[2]![d] = countField(d, terms.category, 2, undefined);
      for (const id of docTerms) {
        const list = raw[id]!;
        list.push(d);
        list.push(packFrequencies(tf[id * FIELDS]!, tf[id * FIELDS + 1]!, tf[id * FIELDS + 2]!));
      }
    }
    streamStart[n] = streamTerms.length;

    const average = (xs: Float64Array): number => {
      let sum = 0;
      for (let i = 0; i < xs.length; i++) sum += xs[i]!;
      return n === 0 ? 0 : sum / n;
    };
    const fields = [params.content, params.tags, params.category];
    // Per field and document: weight / (1 − b + b·len/avglen), so a posting needs one multiply per field.
    const norm = fields.map((f, i) => {
      const avg = average(lengths[i]!);
      const out = new Float64Array(n);
      for (let d = 0; d < n; d++) {
        const relative = avg > 0 ? lengths[i]![d]! / avg : 1;
        out[d] = f.weight / (1 - f.b + f.b * relative);
      }
      return out;
    });
    const [normC, normT, normK] = norm as [Float64Array, Float64Array, Float64Array];

    const terms = raw.length;
    const idfs = new Float64Array(terms);
    const postingDocs: Int32Array[] = new Array(terms);
    const postingImpacts: Float32Array[] = new Array(terms);
    const postingInText: Uint8Array[] = new Array(terms);
    const k1 = params.k1;
    for (let t = 0; t < terms; t++) {
      const list = raw[t]!.view();
      const df = list.length / 2;
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      idfs[t] = idf;
      const docsOut = new Int32Array(df);
      const impacts = new Float32Array(df);
      const inText = new Uint8Array(df);
      for (let i = 0; i < df; i++) {
        const d = list[2 * i]!;
        const packed = list[2 * i + 1]!;
        inText[i] = (packed & 0xfffff) !== 0 ? 1 : 0;
        const pseudo = (packed & 1023) * normC[d]! + ((packed >>> 10) & 1023) * normT[d]! + ((packed >>> 20) & 1023) * normK[d]!;
        docsOut[i] = d;
        impacts[i] = (idf * pseudo * (k1 + 1)) / (pseudo + k1);
      }
      postingDocs[t] = docsOut;
      postingImpacts[t] = impacts;
      postingInText[t] = inText;
      raw[t] = EMPTY_BUFFER;
    }
    return { idf: idfs, postingDocs, postingImpacts, postingInText, streamTerms: streamTerms.data.slice(0, streamTerms.length), streamStart };
  }

  /** The built index as flat arrays, to be saved and given back as `IndexBuildOptions.snapshot`. */
  snapshot(): IndexSnapshot {
    const t = this.postingDocs.length;
    const terms: string[] = new Array(t);
    for (const [term, id] of this.termIds) terms[id] = term;
    const postingStart = new Int32Array(t + 1);
    for (let i = 0; i < t; i++) postingStart[i + 1] = postingStart[i]! + this.postingDocs[i]!.length;
    const total = postingStart[t]!;
    const docs = new Int32Array(total);
    const impacts = new Float32Array(total);
    const inText = new Uint8Array(total);
    for (let i = 0; i < t; i++) {
      docs.set(this.postingDocs[i]!, postingStart[i]!);
      impacts.set(this.postingImpacts[i]!, postingStart[i]!);
      inText.set(this.postingInText[i]!, postingStart[i]!);
    }
    return { size: this.size, terms, idf: this.idf, postingStart, docs, impacts, inText, streamTerms: this.streamTerms, streamStart: this.streamStart };
  }

  /** Number of distinct indexed terms (words, joined forms and concepts). */
  get vocabularySize(): number {
    return this.termIds.size;
  }

  /** Inverse document frequency of `term` (0 when it is not indexed). */
  idfOf(term: string): number {
    const id = this.termIds.get(term);
    return id === undefined ? 0 : this.idf[id]!;
  }

  /** Whether `term` occurs in some document. */
  has(term: string): boolean {
    return this.termIds.has(term);
  }

  /** Scores every document that shares a term with the query. */
  search(query: IndexQuery): SearchResult {
    this.epoch = (this.epoch + 1) >>> 0;
    if (this.epoch === 0) {
      this.stamp.fill(0);
      this.epoch = 1;
    }
    const epoch = this.epoch;
    const { scores, stamp, literalHits, textHits, touched } = this;
    let count = 0;
    for (const q of query.terms) {
      const id = this.termIds.get(q.term);
      if (id === undefined || !(q.weight > 0)) continue;
      const docs = this.postingDocs[id]!;
      const impacts = this.postingImpacts[id]!;
      const inText = this.postingInText[id]!;
      const weight = q.weight;
      const literal = q.literal ? 1 : 0;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (stamp[d] !== epoch) {
          stamp[d] = epoch;
          scores[d] = weight * impacts[i]!;
          literalHits[d] = literal;
          textHits[d] = inText[i]!;
          touched[count++] = d;
        } else {
          scores[d]! += weight * impacts[i]!;
          literalHits[d]! += literal;
          textHits[d]! += inText[i]!;
        }
      }
    }

    if (query.pairs.length > 0 && this.params.pairWeight > 0) this.addProximity(query.pairs, count);
    return { docs: touched, scores, textHits, count };
  }

  private addProximity(pairs: ReadonlyArray<readonly [string, string]>, count: number): void {
    const bonuses = new Map<number, number>();
    const marked: number[] = [];
    for (const [a, b] of pairs) {
      const ia = this.termIds.get(a);
      const ib = this.termIds.get(b);
      if (ia === undefined || ib === undefined || ia === ib) continue;
      const bonus = this.params.pairWeight * Math.min(this.idf[ia]!, this.idf[ib]!);
      bonuses.set(Math.min(ia, ib) * PAIR_SHIFT + Math.max(ia, ib), bonus);
      for (const id of [ia, ib]) {
        if (this.queryMark[id] === 0) {
          this.queryMark[id] = 1;
          marked.push(id);
        }
      }
    }
    if (bonuses.size > 0) {
      const window = Math.max(1, this.params.pairWindow);
      const { streamTerms, streamStart, queryMark, literalHits, touched, scores } = this;
      const seen = new Set<number>();
      for (let i = 0; i < count; i++) {
        const d = touched[i]!;
        if (literalHits[d]! < 2) continue;
        const end = streamStart[d + 1]!;
        let found = false;
        for (let p = streamStart[d]!; p < end; p++) {
          const a = streamTerms[p]!;
          if (queryMark[a] === 0) continue;
          const stop = Math.min(end, p + window + 1);
          for (let r = p + 1; r < stop; r++) {
            const b = streamTerms[r]!;
            if (queryMark[b] === 0 || a === b) continue;
            const key = a < b ? a * PAIR_SHIFT + b : b * PAIR_SHIFT + a;
            const bonus = bonuses.get(key);
            if (bonus === undefined) continue;
            // Each pair counts once per document.
            if (!found) {
              seen.clear();
              found = true;
            }
            if (seen.has(key)) continue;
            seen.add(key);
            scores[d]! += bonus;
          }
        }
      }
    }
    for (const id of marked) this.queryMark[id] = 0;
  }
}

/** A growable Int32Array for one posting list (starts small: most terms are rare). */
class IntBufferSmall {
  private data = new Int32Array(4);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
  view(): Int32Array {
    return this.data.subarray(0, this.length);
  }
}

const EMPTY_BUFFER = new IntBufferSmall();

/** Three field frequencies (each capped at 1023) in one 30-bit integer. */
function packFrequencies(content: number, tags: number, category: number): number {
  return Math.min(content, 1023) | (Math.min(tags, 1023) << 10) | (Math.min(category, 1023) << 20);
}
