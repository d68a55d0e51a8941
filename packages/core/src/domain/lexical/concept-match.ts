import { analyze, type Analysis } from "./analyze.js";
import { CONCEPT_GROUPS, type ConceptGroup } from "./concepts.js";
import { SHIPPED_PLAN_FINGERPRINT, SHIPPED_PLAN_JSON } from "./concept-plan.generated.js";
import { lexicalFingerprint } from "./persist.js";

/**
 * Matching the concept map (concepts.ts) against analysed text. Phrases are analysed like any
 * text and compiled into a trie over their term sequences; matching walks the text's term stream
 * leftmost-longest, so "memory leak" counts as the memory-leak phrasing and not also as "memory",
 * and a position inside a longer match starts no other match. A compound written as one word
 * ("useeffect") matches the phrase "useEffect" through the phrase's joined form, and phrases made
 * only of symbols ("n+1") are matched against the text's joined forms.
 */

/** Prefix of concept pseudo-terms; analysed words never contain it. */
export const CONCEPT_PREFIX = "~";

interface TrieNode {
  next: Map<string, TrieNode>;
  /** Groups ending here (indexes into CONCEPT_GROUPS). */
  groups: number[] | undefined;
}

export interface CompiledConcepts {
  readonly groups: readonly ConceptGroup[];
  /** Pseudo-term of each group: `~<id>`. */
  readonly terms: readonly string[];
  /** Distinct surface words of each group's phrases (for candidate queries). */
  readonly surfaces: readonly (readonly string[])[];
  /**
   * The trie. Its first level is built on demand: the sequences starting with a term are entered
   * when a text first holds that term (`pending` keeps them until then), so a process that matches
   * one task does not build the whole map (~2,000 sequences) to look up a dozen terms.
   */
  readonly root: TrieNode;
  readonly pending: Map<string, Array<readonly [readonly string[], number]>>;
  /** Symbol-only phrases (`n+1`, `c++`) by joined form. */
  readonly joined: ReadonlyMap<string, readonly number[]>;
  /** Longest phrase, in terms. */
  readonly maxLength: number;
}

const newNode = (): TrieNode => ({ next: new Map(), groups: undefined });

function insert(root: TrieNode, terms: readonly string[], group: number): void {
  let node = root;
  for (const term of terms) {
    let child = node.next.get(term);
    if (child === undefined) node.next.set(term, (child = newNode()));
    node = child;
  }
  node.groups ??= [];
  if (!node.groups.includes(group)) node.groups.push(group);
}

/**
 * The analysed form of a concept map: what compiling it costs (analysing about two thousand
 * phrases), as plain data that can be kept between processes and turned into CompiledConcepts
 * cheaply (buildConcepts).
 */
export interface ConceptPlan {
  /**
   * Term sequences entered into the trie, each with its group, grouped by first term: first terms
   * in order of first appearance, each one's sequences in phrase order (the buckets of
   * CompiledConcepts.pending, so building the map is one Map construction).
   */
  readonly byFirst: ReadonlyArray<readonly [string, ReadonlyArray<readonly [readonly string[], number]>]>;
  /** Joined forms matched as written, with their groups. */
  readonly joined: ReadonlyArray<readonly [string, readonly number[]]>;
  /** Distinct surface words of each group's phrases. */
  readonly surfaces: readonly (readonly string[])[];
  readonly maxLength: number;
}

/** Analyses the phrases of `groups`. Phrases that analyse to nothing are skipped. */
export function planConcepts(groups: readonly ConceptGroup[] = CONCEPT_GROUPS): ConceptPlan {
  const inserts: Array<readonly [readonly string[], number]> = [];
  const joined = new Map<string, number[]>();
  const surfaces: string[][] = [];
  let maxLength = 1;
  groups.forEach((group, g) => {
    const words = new Set<string>();
    for (const phrase of group.phrases) {
      const a = analyze(phrase);
      for (const w of a.surfaces) words.add(w);
      for (const w of a.joinedSurfaces) if (/^[\p{L}\p{N}]+$/u.test(w)) words.add(w);
      const oneCompound = !/\s/.test(phrase.trim()) && a.joined.length === 1;
      if (a.terms.length > 1 || (a.terms.length === 1 && !oneCompound)) {
        inserts.push([a.terms, g]);
        maxLength = Math.max(maxLength, a.terms.length);
        // A one-compound phrase also matches when written as one word ("useeffect" for "useEffect").
        if (oneCompound) inserts.push([a.joined, g]);
      } else {
        // Symbols (`n+1`) and compounds whose words alone say little (`depends_on` → "depend",
        // `on-call` → "call") match only as written, through the text's joined forms.
        for (const j of a.joined) {
          let list = joined.get(j);
          if (list === undefined) joined.set(j, (list = []));
          if (!list.includes(g)) list.push(g);
        }
      }
    }
    surfaces.push([...words]);
  });
  // Sequences by first term, in phrase order: entering a bucket later gives every node the groups
  // in the order that entering every sequence at once would.
  const byFirst = new Map<string, Array<readonly [readonly string[], number]>>();
  for (const entry of inserts) {
    const first = entry[0][0]!;
    const bucket = byFirst.get(first);
    if (bucket === undefined) byFirst.set(first, [entry]);
    else bucket.push(entry);
  }
  return { byFirst: [...byFirst], joined: [...joined], surfaces, maxLength };
}

/** CompiledConcepts of `groups` from their plan (planConcepts of the same groups). */
export function buildConcepts(groups: readonly ConceptGroup[], plan: ConceptPlan): CompiledConcepts {
  // The buckets are shared with the plan: matching only reads them (and drops them from `pending`).
  const pending = new Map(plan.byFirst as Array<[string, Array<readonly [readonly string[], number]>]>);
  return {
    groups,
    terms: groups.map((g) => CONCEPT_PREFIX + g.id),
    surfaces: plan.surfaces,
    root: newNode(),
    pending,
    joined: new Map(plan.joined),
    maxLength: plan.maxLength,
  };
}

/** The trie node after the first term `term`, entering the sequences that start with it on first use. */
function firstLevel(concepts: CompiledConcepts, term: string): TrieNode | undefined {
  const node = concepts.root.next.get(term);
  if (node !== undefined) return node;
  const bucket = concepts.pending.get(term);
  if (bucket === undefined) return undefined;
  concepts.pending.delete(term);
  for (const [terms, g] of bucket) insert(concepts.root, terms, g);
  return concepts.root.next.get(term);
}

/** Compiles `groups` (the shipped map by default). */
export function compileConcepts(groups: readonly ConceptGroup[] = CONCEPT_GROUPS): CompiledConcepts {
  return buildConcepts(groups, planConcepts(groups));
}

let shipped: CompiledConcepts | undefined;

/**
 * The compiled shipped concept map, built on first use from its plan. The plan is generated from
 * concepts.ts and the analyser and kept in the sources (concept-plan.generated.ts; a core test
 * checks that it is what planConcepts() gives, and rewrites it on request), so a process reads it
 * as one string instead of analysing ~2,000 phrases (35–55 ms) or reading and checking a saved copy
 * (≈8 ms). Were the analyser or the map to change without it, the map is compiled here instead.
 */
export function shippedConcepts(): CompiledConcepts {
  if (shipped === undefined) {
    const plan = SHIPPED_PLAN_FINGERPRINT === lexicalFingerprint() ? (JSON.parse(SHIPPED_PLAN_JSON) as ConceptPlan) : planConcepts();
    shipped = buildConcepts(CONCEPT_GROUPS, plan);
  }
  return shipped;
}

/** Whether the shipped map is built already in this process. */
export function hasShippedConcepts(): boolean {
  return shipped !== undefined;
}

/**
 * The groups mentioned in `analysis`, one entry per mention (so a group mentioned twice appears
 * twice), in text order.
 */
export function matchConcepts(analysis: Analysis, concepts: CompiledConcepts = shippedConcepts()): number[] {
  const out: number[] = [];
  const terms = analysis.terms;
  let i = 0;
  while (i < terms.length) {
    let node: TrieNode | undefined = concepts.root;
    let bestEnd = -1;
    let bestGroups: number[] | undefined;
    for (let j = i; j < terms.length && node !== undefined; j++) {
      node = j === i ? firstLevel(concepts, terms[j]!) : node.next.get(terms[j]!);
      if (node?.groups !== undefined) {
        bestEnd = j + 1;
        bestGroups = node.groups;
      }
    }
    if (bestGroups === undefined) {
      i++;
      continue;
    }
    for (const g of bestGroups) out.push(g);
    i = bestEnd;
  }
  if (concepts.joined.size > 0) {
    for (const j of analysis.joined) {
      const groups = concepts.joined.get(j);
      if (groups !== undefined) for (const g of groups) out.push(g);
    }
  }
  return out;
}
