import { describe, expect, it } from "vitest";
import { analyze } from "./analyze.js";
import { CONCEPT_GROUPS } from "./concepts.js";
import { analyzeDocument, DEFAULT_BM25F, LexicalIndex, type DocumentTerms, type IndexedDocument } from "./lexical-index.js";
import {
  ANALYZER_VERSION,
  CONCEPT_MAP_HASH,
  decodeDocuments,
  decodeIndexSnapshot,
  decodeTerms,
  documentKey,
  documentsToSave,
  encodeIndexSnapshot,
  encodeTerms,
  hashText,
  indexSnapshotKey,
  indexSnapshotKeyByDigest,
  indexSnapshotKeyBySource,
  type SourcedTexts,
  lexicalFingerprint,
} from "./persist.js";
import { analyzeQuery } from "./query.js";

const SAMPLES: IndexedDocument[] = [
  { content: "Rotate the session signing secret on every deploy; users get logged out otherwise.", tags: ["auth", "deploy"], category: "security" },
  { content: "Use `useEffect` cleanup to cancel fetches; ERR_MODULE_NOT_FOUND means a missing .js suffix under NodeNext.", tags: ["react", "node.js"] },
  { content: "C++ and C# builds: pin the toolchain; avoid the N+1 query in /home/dev/acme/src/users.ts:42:7.", category: "build" },
  { content: "Sign in with SSO, then log in to the registry (npm login) before pnpm publish --access public." },
  { content: "" },
];

describe("saved analyses", () => {
  it("encode and decode give back exactly what analyzeDocument made", () => {
    for (const doc of SAMPLES) {
      const terms = analyzeDocument(doc);
      const encoded = encodeTerms(terms);
      expect(encoded, doc.content).not.toBeNull();
      expect(decodeTerms(encoded!)).toEqual(terms);
    }
  });

  it("pins the analyser's output: when this fails, bump ANALYZER_VERSION in persist.ts and update the hash", () => {
    // Saved analyses are trusted while the fingerprint matches; a changed analyser with an unchanged
    // version would make every CLI process rank with stale terms.
    // The analyser proper (concept-map edits change the fingerprint by themselves).
    const output = JSON.stringify(SAMPLES.map((doc) => [doc.content, ...(doc.tags ?? []), doc.category ?? ""].map((text) => analyze(text, false))));
    expect({ version: ANALYZER_VERSION, hash: hashText(output) }).toEqual({ version: 1, hash: PINNED_OUTPUT_HASH });
  });

  it("an index built from decoded terms scores exactly like one that analysed the texts", () => {
    const known = SAMPLES.map((doc) => decodeTerms(encodeTerms(analyzeDocument(doc))!)!);
    const analysed: number[] = [];
    const fromText = new LexicalIndex(SAMPLES);
    const fromSaved = new LexicalIndex(SAMPLES, undefined, { known, onAnalyzed: (d) => analysed.push(d) });
    expect(analysed).toEqual([]);
    for (const task of ["users logged out after deploy", "useEffect fetch cancel", "n+1 queries in the users module", "npm login sso"]) {
      const a = fromText.search(analyzeQuery(task, undefined, undefined, fromText).query);
      const scoresA = Array.from(a.docs.subarray(0, a.count), (d) => [d, a.scores[d]]);
      const b = fromSaved.search(analyzeQuery(task, undefined, undefined, fromSaved).query);
      const scoresB = Array.from(b.docs.subarray(0, b.count), (d) => [d, b.scores[d]]);
      expect(scoresA.length, task).toBeGreaterThan(0);
      expect(scoresB, task).toEqual(scoresA);
    }
  });

  it("analyses only the documents without saved terms, and reports them", () => {
    const known: Array<DocumentTerms | undefined> = SAMPLES.map((doc, i) => (i % 2 === 0 ? analyzeDocument(doc) : undefined));
    const analysed: Array<[number, DocumentTerms]> = [];
    new LexicalIndex(SAMPLES, undefined, { known, onAnalyzed: (d, terms) => analysed.push([d, terms]) });
    expect(analysed.map(([d]) => d)).toEqual([1, 3]);
    expect(analysed[0]![1]).toEqual(analyzeDocument(SAMPLES[1]!));
  });

  it("rejects damaged encodings instead of guessing", () => {
    expect(decodeTerms("a b|c")).toBeNull();
    expect(decodeTerms("a  b|||||")).toBeNull();
    expect(decodeTerms("a b|c|d|e|f|g|h")).toBeNull();
    expect(decodeTerms("|||||")).toEqual({ content: { words: [], extra: [] }, tags: { words: [], extra: [] }, category: { words: [], extra: [] } });
    expect(encodeTerms({ content: { words: ["has space"], extra: [] }, tags: { words: [], extra: [] }, category: { words: [], extra: [] } })).toBeNull();
    expect(encodeTerms({ content: { words: ["a|b"], extra: [] }, tags: { words: [], extra: [] }, category: { words: [], extra: [] } })).toBeNull();
  });

  it("saved documents: a flat key/terms array; anything else reads as empty", () => {
    expect([...decodeDocuments(["k1", "a||||", "k2", "b||||"])]).toEqual([
      ["k1", "a||||"],
      ["k2", "b||||"],
    ]);
    for (const bad of [null, {}, "x", ["k1"], ["k1", 3], [1, "a"]]) expect(decodeDocuments(bad).size).toBe(0);
  });

  it("document keys change with the content, the tags and the category, and not otherwise", () => {
    const base = { content: "Rotate keys", tags: ["a", "b"], category: "security" };
    const key = documentKey(base);
    expect(documentKey({ ...base })).toBe(key);
    for (const other of [{ ...base, content: "Rotate key" }, { ...base, tags: ["a"] }, { ...base, tags: ["ab"] }, { ...base, category: "ops" }, { content: "Rotate keys" }]) {
      expect(documentKey(other)).not.toBe(key);
    }
    expect(hashText("abc")).toMatch(/^[0-9a-f]{16}$/);
    expect(lexicalFingerprint()).toMatch(new RegExp(`^lexical-${ANALYZER_VERSION}-[0-9a-f]{16}$`));
  });

  it("saves every document in use first, then older ones within the budget", () => {
    const inUse: Array<[string, string]> = Array.from({ length: 4000 }, (_, i) => [`u${i}`, "x||||"]);
    const saved = new Map<string, string>([...Array.from({ length: 3000 }, (_, i) => [`old${i}`, "y||||"] as [string, string]), ["u0", "x||||"]]);
    const out = documentsToSave(inUse, saved);
    const keys = out.filter((_, i) => i % 2 === 0);
    expect(keys.slice(0, 4000)).toEqual(inUse.map(([k]) => k));
    // 4,000 in use: room for max(1000, 2000) = 2,000 older ones.
    expect(keys.length).toBe(6000);
    expect(keys[4000]).toBe("old0");
    expect(new Set(keys).size).toBe(keys.length);
    // Few in use: at least 1,000 older ones are kept.
    expect(documentsToSave([["a", "x||||"]], saved).length / 2).toBe(1001);
  });
});

describe("saved indexes", () => {
  const QUERIES = [
    "users logged out after deploy",
    "useEffect cleanup ERR_MODULE_NOT_FOUND",
    "n+1 query in the build",
    "npm login sso",
    "nothing here matches",
  ];
  const resultsOf = (index: LexicalIndex) =>
    QUERIES.map((q) => {
      const found = index.search(analyzeQuery(q, undefined, undefined, index).query);
      const docs = [...found.docs.subarray(0, found.count)].sort((a, b) => a - b);
      return docs.map((d) => [d, found.scores[d], found.textHits[d]]);
    });

  it("a snapshot, encoded and decoded, searches exactly like the index it was taken from", () => {
    const built = new LexicalIndex(SAMPLES);
    const expected = resultsOf(built);
    const bytes = encodeIndexSnapshot(built.snapshot());
    expect(bytes).not.toBeNull();
    const snapshot = decodeIndexSnapshot(bytes!);
    expect(snapshot).not.toBeNull();
    let analysed = 0;
    const loaded = new LexicalIndex(SAMPLES, undefined, { snapshot: snapshot!, onAnalyzed: () => analysed++ });
    expect(analysed).toBe(0);
    expect(loaded.vocabularySize).toBe(built.vocabularySize);
    expect(resultsOf(loaded)).toEqual(expected);
    expect(expected.some((r) => r.length > 0)).toBe(true);
    // From bytes that do not start at a multiple of 8 in their buffer (a Buffer slice), too.
    const shifted = new Uint8Array(bytes!.length + 3);
    shifted.set(bytes!, 3);
    expect(resultsOf(new LexicalIndex(SAMPLES, undefined, { snapshot: decodeIndexSnapshot(shifted.subarray(3))! }))).toEqual(expected);
    // Empty indexes round-trip as well.
    expect(decodeIndexSnapshot(encodeIndexSnapshot(new LexicalIndex([]).snapshot())!)?.size).toBe(0);
  });

  it("refuses a snapshot of another number of documents", () => {
    const snapshot = new LexicalIndex(SAMPLES).snapshot();
    expect(() => new LexicalIndex(SAMPLES.slice(1), undefined, { snapshot })).toThrow(/snapshot of 5 documents/);
  });

  it("reads damaged bytes as no snapshot", () => {
    const bytes = encodeIndexSnapshot(new LexicalIndex(SAMPLES).snapshot())!;
    const header = (b: Uint8Array) => new Uint32Array(b.buffer, b.byteOffset, 7);
    // Where the arrays are, from a decoded copy (its views point into the bytes).
    const good = decodeIndexSnapshot(bytes)!;
    const docsAt = good.docs.byteOffset - bytes.byteOffset;
    const streamAt = good.streamTerms.byteOffset - bytes.byteOffset;
    expect(good.docs.length > 0 && good.streamTerms.length > 0).toBe(true);
    const variants: Array<[string, (b: Uint8Array) => void]> = [
      ["another magic", (b) => void (b[0] = 0)],
      ["another format", (b) => void (header(b)[1] = 99)],
      ["one term more", (b) => void (header(b)[3]! += 1)],
      ["a document id out of range", (b) => void (new Int32Array(b.buffer, b.byteOffset + docsAt, 1)[0] = SAMPLES.length)],
      ["a stream term out of range", (b) => void (new Int32Array(b.buffer, b.byteOffset + streamAt, 1)[0] = -1)],
    ];
    for (const [what, damage] of variants) {
      const copy = bytes.slice();
      damage(copy);
      expect(decodeIndexSnapshot(copy), what).toBeNull();
    }
    expect(decodeIndexSnapshot(bytes.subarray(0, bytes.length - 1))).toBeNull();
    expect(decodeIndexSnapshot(new Uint8Array(3))).toBeNull();
    expect(decodeIndexSnapshot(bytes)).not.toBeNull();
  });

  it("keys a snapshot by every document's texts, their order and the parameters", () => {
    const keys = SAMPLES.map(documentKey);
    const key = indexSnapshotKey(keys, DEFAULT_BM25F);
    expect(key.startsWith(lexicalFingerprint())).toBe(true);
    expect(indexSnapshotKey([...keys], DEFAULT_BM25F)).toBe(key);
    expect(indexSnapshotKey([...keys].reverse(), DEFAULT_BM25F)).not.toBe(key);
    expect(indexSnapshotKey(keys.slice(1), DEFAULT_BM25F)).not.toBe(key);
    expect(indexSnapshotKey(keys, { ...DEFAULT_BM25F, k1: 1.5 })).not.toBe(key);
  });

  it("keys a snapshot by a host digest of every document's texts, their order and the parameters", () => {
    // Any injective digest shows what reaches it; the identity makes the inputs comparable.
    const inputs: string[] = [];
    const digest = (text: string) => {
      inputs.push(text);
      return hashText(text);
    };
    const key = indexSnapshotKeyByDigest(SAMPLES, DEFAULT_BM25F, digest);
    expect(key.startsWith(`${lexicalFingerprint()}.`)).toBe(true);
    expect(key).not.toBe(indexSnapshotKey(SAMPLES.map(documentKey), DEFAULT_BM25F));
    expect(indexSnapshotKeyByDigest([...SAMPLES], DEFAULT_BM25F, digest)).toBe(key);
    expect(indexSnapshotKeyByDigest([...SAMPLES].reverse(), DEFAULT_BM25F, digest)).not.toBe(key);
    expect(indexSnapshotKeyByDigest(SAMPLES.slice(1), DEFAULT_BM25F, digest)).not.toBe(key);
    expect(indexSnapshotKeyByDigest(SAMPLES, { ...DEFAULT_BM25F, k1: 1.5 }, digest)).not.toBe(key);
    // Moving text between fields or documents changes what is digested.
    const moved = [
      [{ content: "a b", tags: ["c"] }],
      [{ content: "a", tags: ["b", "c"] }],
      [{ content: "a", category: "b c" }],
      [{ content: "a" }, { content: "b c" }],
    ];
    const digested = moved.map((docs) => {
      inputs.length = 0;
      indexSnapshotKeyByDigest(docs, DEFAULT_BM25F, digest);
      return inputs[0];
    });
    expect(new Set(digested).size).toBe(moved.length);
  });

  it("keys a snapshot by vouched-for sources, positions, the other documents' texts and the parameters", () => {
    const run = (source: string, from: number, to: number): SourcedTexts => ({ source, from, to });
    const doc = (d: (typeof SAMPLES)[number]): SourcedTexts => ({ doc: d });
    const pieces: SourcedTexts[] = [run("yaml-v1-global-aa", 0, 9), doc(SAMPLES[0]!), run("yaml-v1-repo-bb", 3, 4)];
    const key = indexSnapshotKeyBySource(pieces, 13, DEFAULT_BM25F);
    expect(key.startsWith(`${lexicalFingerprint()}.`)).toBe(true);
    expect(key).toContain(".13.s");
    expect(indexSnapshotKeyBySource([...pieces], 13, DEFAULT_BM25F)).toBe(key);
    const variants: Array<[SourcedTexts[], number]> = [
      [[run("yaml-v1-global-ab", 0, 9), doc(SAMPLES[0]!), run("yaml-v1-repo-bb", 3, 4)], 13],
      [[run("yaml-v1-global-aa", 1, 10), doc(SAMPLES[0]!), run("yaml-v1-repo-bb", 3, 4)], 13],
      [[run("yaml-v1-global-aa", 0, 9), doc(SAMPLES[1]!), run("yaml-v1-repo-bb", 3, 4)], 13],
      [[run("yaml-v1-global-aa", 0, 9), doc({ ...SAMPLES[0]!, tags: ["other"] }), run("yaml-v1-repo-bb", 3, 4)], 13],
      [[doc(SAMPLES[0]!), run("yaml-v1-global-aa", 0, 9), run("yaml-v1-repo-bb", 3, 4)], 13],
      [[run("yaml-v1-global-aa", 0, 9), doc(SAMPLES[0]!)], 11],
      [[run("yaml-v1-global-aa", 0, 4), run("yaml-v1-global-aa", 5, 9), doc(SAMPLES[0]!), run("yaml-v1-repo-bb", 3, 4)], 13],
    ];
    const keys = variants.map(([p, n]) => indexSnapshotKeyBySource(p, n, DEFAULT_BM25F));
    for (const other of keys) expect(other).not.toBe(key);
    expect(indexSnapshotKeyBySource(pieces, 13, { ...DEFAULT_BM25F, k1: 1.5 })).not.toBe(key);
    // A text that spells a run is still a text: the two never read alike.
    const spelled = indexSnapshotKeyBySource([doc({ content: "\u0003yaml-v1-global-aa\u00040\u00049" })], 10, DEFAULT_BM25F);
    expect(spelled).not.toBe(indexSnapshotKeyBySource([run("yaml-v1-global-aa", 0, 9)], 10, DEFAULT_BM25F));
    // With a host digest, the digest names the same description.
    const inputs: string[] = [];
    const viaDigest = indexSnapshotKeyBySource(pieces, 13, DEFAULT_BM25F, (text) => (inputs.push(text), hashText(text)));
    expect(viaDigest).not.toBe(key);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toContain("yaml-v1-global-aa");
  });

  it("CONCEPT_MAP_HASH is the hash of the shipped concept map (update the constant when this fails)", () => {
    expect(hashText(JSON.stringify(CONCEPT_GROUPS))).toBe(CONCEPT_MAP_HASH);
    expect(lexicalFingerprint()).toBe(`lexical-${ANALYZER_VERSION}-${CONCEPT_MAP_HASH}`);
  });
});

const PINNED_OUTPUT_HASH = "606eba9f0d0aee28";
