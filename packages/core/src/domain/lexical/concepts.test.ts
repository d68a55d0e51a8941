import { describe, expect, it } from "vitest";
import { analyze, isParticle } from "./analyze.js";
import { buildConcepts, compileConcepts, matchConcepts, planConcepts, shippedConcepts } from "./concept-match.js";
import { CONCEPT_GROUPS, type ConceptGroup } from "./concepts.js";
import { analyzeQuery, candidateQuery, candidateQueryTerms } from "./query.js";
import { stem } from "./stem.js";

/**
 * Words with several meanings in coding tasks (the benchmark's "ambiguous" group and the most
 * generic verbs and nouns): a phrase that reduces to one of them alone would link unrelated rules.
 */
const AMBIGUOUS = [
  "session", "token", "key", "lock", "hook", "index", "cache", "context", "worker", "pool", "scope", "stream", "tag",
  "snapshot", "commit", "use", "add", "fix", "run", "make", "test", "code", "file", "data", "error", "work", "app",
  "user", "time", "page", "order", "version", "new", "change", "value", "type", "set", "build", "start", "call",
  "send", "show", "list", "name", "local", "valid", "server", "client", "request", "connect", "process", "thread",
  "window", "map", "limit", "document", "complete", "generate", "delete", "edit", "update", "read", "write",
].map(stem);

const groupOf = (id: string): ConceptGroup => CONCEPT_GROUPS.find((g) => g.id === id)!;
const matched = (text: string) => matchConcepts(analyze(text)).map((g) => CONCEPT_GROUPS[g]!.id);

describe("concept map data", () => {
  it("has unique kebab-case ids, a description and at least two phrasings per group", () => {
    expect(CONCEPT_GROUPS.length).toBeGreaterThanOrEqual(150);
    expect(new Set(CONCEPT_GROUPS.map((g) => g.id)).size).toBe(CONCEPT_GROUPS.length);
    for (const g of CONCEPT_GROUPS) {
      expect(g.id, g.id).toMatch(/^[a-z0-9]+(?:-[a-z0-9]+)*$/);
      expect(g.about.trim().length, g.id).toBeGreaterThan(10);
      expect(g.phrases.length, g.id).toBeGreaterThanOrEqual(2);
      expect(new Set(g.phrases).size, `${g.id} repeats a phrase`).toBe(g.phrases.length);
    }
  });

  it("has no phrase that analyses to nothing or to a single ambiguous word", () => {
    const problems: string[] = [];
    for (const g of CONCEPT_GROUPS) {
      for (const phrase of g.phrases) {
        const a = analyze(phrase);
        const words = a.terms.filter((t) => !isParticle(t));
        if (a.terms.length === 0 && a.joined.length === 0) problems.push(`${g.id}: "${phrase}" is empty`);
        const oneCompound = !/\s/.test(phrase.trim()) && a.joined.length === 1;
        if (a.terms.length === 1 && !oneCompound && AMBIGUOUS.includes(a.terms[0]!)) problems.push(`${g.id}: "${phrase}" is just "${a.terms[0]}"`);
        if (words.length === 0 && a.terms.length === 1) problems.push(`${g.id}: "${phrase}" is a lone particle`);
        if (a.terms.length > 6) problems.push(`${g.id}: "${phrase}" is too long to match`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe("matchConcepts", () => {
  it("links different phrasings of the same problem", () => {
    expect(matched("everyone got logged out after the deploy")).toContain("session-loss");
    expect(matched("keep the cookie-signing secret stable")).toContain("session-loss");
    expect(matched("pod OOMKilled with exit code 137")).toContain("out-of-memory");
    expect(matched("we have a memory leak")).toContain("out-of-memory");
    expect(matched("the test is flaky")).toEqual(["flaky"]);
    expect(matched("fails intermittently")).toEqual(["flaky"]);
    expect(matched("N+1 queries on the list page")).toContain("n-plus-one");
    expect(matched("use eager loading for relations")).toContain("n-plus-one");
  });

  it("matches leftmost-longest, so a longer phrase hides the words inside it", () => {
    // "memory leak" is an out-of-memory phrasing; "memory" alone is the memory group.
    expect(matched("memory leak")).toEqual(["out-of-memory"]);
    expect(matched("memory")).toEqual(["memory"]);
  });

  it("matches a compound written as one word and symbol phrases through joined forms", () => {
    expect(matched("the useeffect hook")).toContain("react-hooks");
    expect(matched("the useEffect hook")).toContain("react-hooks");
    expect(matched("depends_on in compose")).toContain("startup-order");
    expect(matched("it depends on the cache")).not.toContain("startup-order");
  });

  it("counts repeated mentions", () => {
    const g = matchConcepts(analyze("flaky, flaky and flakier"));
    expect(g.filter((x) => CONCEPT_GROUPS[x]!.id === "flaky").length).toBeGreaterThanOrEqual(2);
  });

  it("builds the trie on demand: the same matches whatever order texts arrive in, as with every phrase entered at once", () => {
    const plan = planConcepts();
    // Every phrase of the map, and texts holding several, matched by maps built in opposite orders.
    const texts = CONCEPT_GROUPS.flatMap((g) => g.phrases);
    for (let i = 0; i + 3 < texts.length; i += 7) texts.push(`${texts[i]} then ${texts[i + 3]} and ${texts[i + 1]}`);
    const forward = buildConcepts(CONCEPT_GROUPS, plan);
    const backward = buildConcepts(CONCEPT_GROUPS, plan);
    const eager = buildConcepts(CONCEPT_GROUPS, plan);
    // Every first term once, on its own: the whole trie is built before any text is matched.
    for (const first of [...eager.pending.keys()]) matchConcepts({ terms: [first], surfaces: [first], joined: [], joinedSurfaces: [] }, eager);
    expect(eager.pending.size).toBe(0);
    const got = texts.map((t) => matchConcepts(analyze(t), forward));
    const reversed = [...texts].reverse().map((t) => matchConcepts(analyze(t), backward)).reverse();
    expect(reversed).toEqual(got);
    expect(texts.map((t) => matchConcepts(analyze(t), eager))).toEqual(got);
    // A text with no concept word builds nothing.
    const fresh = buildConcepts(CONCEPT_GROUPS, plan);
    const before = fresh.pending.size;
    expect(matchConcepts(analyze("zzqx wvut"), fresh)).toEqual([]);
    expect(fresh.pending.size).toBe(before);
    expect(fresh.root.next.size).toBe(0);
  });

  it("compiles any map (here a tiny one)", () => {
    const tiny = compileConcepts([
      { id: "a", about: "tiny test group a", phrases: ["alpha beta", "gamma"] },
      { id: "b", about: "tiny test group b", phrases: ["alpha"] },
    ]);
    expect(matchConcepts(analyze("alpha beta gamma alpha"), tiny)).toEqual([0, 0, 1]);
    expect(tiny.terms).toEqual(["~a", "~b"]);
    expect(tiny.surfaces[0]).toEqual(["alpha", "beta", "gamma"]);
  });
});

describe("analyzeQuery", () => {
  it("weights repeated words with diminishing returns and adds concept expansions at reduced weight", () => {
    const q = analyzeQuery("flaky flaky flaky test in CI").query;
    const weight = (term: string) => q.terms.find((t) => t.term === term)?.weight;
    expect(weight(stem("flaky"))).toBeGreaterThan(1);
    expect(weight(stem("flaky"))).toBeLessThanOrEqual(2);
    expect(weight("test")).toBe(1);
    expect(q.terms.find((t) => t.term === "~flaky")).toMatchObject({ literal: false });
    expect(weight("~flaky")).toBeLessThan(1);
    expect(q.pairs).toContainEqual([stem("flaky"), "test"]);
  });

  it("adds a joined compound of adjacent words when the vocabulary has it", () => {
    const vocabulary = { has: (t: string) => t === "rollback" };
    const terms = analyzeQuery("roll back the release", undefined, undefined, vocabulary).query.terms.map((t) => t.term);
    expect(terms).toContain("rollback");
    expect(analyzeQuery("roll back the release").query.terms.map((t) => t.term)).not.toContain("rollback");
  });
});

describe("candidateQuery", () => {
  it("keeps the task's own words apart from the phrasings of the concepts it mentions", () => {
    const q = candidateQuery("Users keep getting logged out after every deploy");
    expect(q.terms).toEqual(["users", "keep", "logged", "deploy"]);
    expect(q.conceptWeight).toBe(0.8);
    expect(q.concepts).toContainEqual([...groupOf("session-loss").phrases]);
    expect(q.concepts).toContainEqual([...groupOf("deploy").phrases]);
    expect(q.concepts).toHaveLength(2);
    // Concept words are not task terms ("cookie" is a session-loss phrasing's word only).
    expect(q.terms).not.toContain("cookie");
    expect(candidateQuery("the and of")).toEqual({ terms: [], concepts: [], conceptWeight: 0.8 });
  });
});

describe("candidateQueryTerms", () => {
  it("returns the task's words unstemmed plus the words of its concepts' phrasings", () => {
    const terms = candidateQueryTerms("Users keep getting logged out after every deploy");
    expect(terms.slice(0, 3)).toEqual(["users", "keep", "logged"]);
    expect(terms).toContain("deploy");
    // from the session-loss and deploy groups
    expect(terms).toContain("cookie");
    expect(terms).toContain("signing");
    expect(terms).toContain("rollout");
    for (const t of terms) expect(t).toMatch(/^[\p{L}\p{N}]+$/u);
    expect(new Set(terms).size).toBe(terms.length);
  });

  it("includes joined identifier forms and nothing for an empty task", () => {
    expect(candidateQueryTerms("fix the useEffect cleanup")).toEqual(expect.arrayContaining(["fix", "use", "effect", "cleanup", "useeffect"]));
    expect(candidateQueryTerms("the and of")).toEqual([]);
  });

  it("every group's phrasings contribute words", () => {
    const compiled = shippedConcepts();
    for (const [i, g] of CONCEPT_GROUPS.entries()) expect(compiled.surfaces[i]!.length, g.id).toBeGreaterThan(0);
    expect(groupOf("session-loss").phrases).toContain("logged out");
  });
});
