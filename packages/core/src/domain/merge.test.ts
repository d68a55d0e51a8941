import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { hashContent, jaccardSimilarity, tokenize } from "./text.js";
import { createEmptyPlaybook, isActiveBullet, type BlockedEntry, type Playbook } from "../schemas/playbook.js";
import { BLOCKED_CONTENT_REASON, MERGED_PLAYBOOK_NAME, mergePlaybooks } from "./merge.js";
import { T0, makeBullet } from "./test-support.js";

const NOW = "2026-02-01T00:00:00.000Z";

function playbook(bullets: ReturnType<typeof makeBullet>[], patterns: string[] = [], layer: "global" | "repo" = "global"): Playbook {
  const p = createEmptyPlaybook(T0.toISOString(), layer);
  p.bullets = bullets;
  p.deprecatedPatterns = patterns.map((pattern) => ({ pattern, deprecatedAt: T0.toISOString(), reason: "r" }));
  return p;
}

describe("mergePlaybooks", () => {
  it("returns global unchanged in shape when there is no repo layer", () => {
    const g = playbook([makeBullet({ id: "a" })]);
    const merged = mergePlaybooks(g, null, [], NOW);
    expect(merged.name).toBe("playbook");
    expect(merged.bullets.map((b) => b.id)).toEqual(["a"]);
    expect(merged.bullets).not.toBe(g.bullets);
  });
  it("gives an empty playbook when neither layer exists", () => {
    const merged = mergePlaybooks(null, null, [], NOW);
    expect(merged.bullets).toEqual([]);
    expect(merged.metadata.createdAt).toBe(NOW);
  });
  it("lets repo win on id, keeps global order then new repo ids, de-duplicates patterns", () => {
    const g = playbook([makeBullet({ id: "a", content: "global a" }), makeBullet({ id: "b", content: "global b" })], ["x", "y"]);
    g.metadata.lastReflection = "2025-12-01T00:00:00.000Z";
    const r = playbook([makeBullet({ id: "c", content: "repo c" }), makeBullet({ id: "a", content: "repo a" })], ["y", "z"], "repo");
    const merged = mergePlaybooks(g, r, [], NOW);
    expect(merged.name).toBe(MERGED_PLAYBOOK_NAME);
    expect(merged.bullets.map((b) => `${b.id}:${b.content}`)).toEqual(["a:repo a", "b:global b", "c:repo c"]);
    expect(merged.deprecatedPatterns.map((p) => p.pattern)).toEqual(["x", "y", "z"]);
    expect(merged.metadata.lastReflection).toBe("2025-12-01T00:00:00.000Z");
  });
  it("works with only a repo layer", () => {
    const merged = mergePlaybooks(null, playbook([makeBullet({ id: "r" })], [], "repo"), [], NOW);
    expect(merged.name).toBe(MERGED_PLAYBOOK_NAME);
    expect(merged.bullets.map((b) => b.id)).toEqual(["r"]);
  });

  describe("block filter", () => {
    const blocked = (content: string, id = "x"): BlockedEntry => ({ id, content, reason: "forgotten", forgottenAt: T0.toISOString() });

    it("deprecates exact (normalised) matches and near matches > 0.85, in memory only", () => {
      const exact = makeBullet({ id: "exact", content: "Always run   the LINTER before commit", replacedBy: "zzz" });
      // 7 of 8 shared tokens → Jaccard 0.875 > 0.85
      const near = makeBullet({ id: "near", content: "alpha beta gamma delta epsilon zeta eta theta" });
      // 6 of 7 → 0.857 > 0.85 … and 5 of 6 tokens → 0.833 not blocked
      const far = makeBullet({ id: "far", content: "alpha beta gamma delta epsilon" });
      const other = makeBullet({ id: "other", content: "prefer small commits" });
      const g = playbook([exact, near, far, other]);
      const snapshot = structuredClone(g);
      const merged = mergePlaybooks(g, null, [blocked("always run the linter before commit"), blocked("alpha beta gamma delta epsilon zeta eta")], NOW);
      expect(g).toEqual(snapshot);
      const byId = Object.fromEntries(merged.bullets.map((b) => [b.id, b]));
      for (const id of ["exact", "near"]) {
        expect(byId[id]).toMatchObject({
          deprecated: true,
          deprecatedAt: NOW,
          updatedAt: NOW,
          deprecationReason: BLOCKED_CONTENT_REASON,
          state: "retired",
          maturity: "deprecated",
        });
        expect(isActiveBullet(byId[id]!)).toBe(false);
      }
      expect(byId["exact"]!.replacedBy).toBeUndefined();
      expect(isActiveBullet(byId["far"]!)).toBe(true); // 5/7 ≈ 0.714
      expect(byId["other"]).toBe(other); // untouched bullets are shared, not copied
    });

    it("uses a strict > 0.85 threshold", () => {
      // 17 shared of 20-token union = 0.85 exactly → not blocked
      const words = Array.from({ length: 20 }, (_, i) => `w${i}x`);
      const bullet = makeBullet({ id: "edge", content: words.slice(0, 18).join(" ") }); // w0..w17
      const entry = blocked(words.slice(1, 19).concat([]).join(" ")); // w1..w18 → shared 17, union 19 → 0.894
      expect(mergePlaybooks(playbook([bullet]), null, [entry], NOW).bullets[0]!.deprecated).toBe(true);
      const entry2 = blocked([...words.slice(0, 17), "q1x", "q2x", "q3x"].join(" ")); // shared 17, union 18+3=21 → 0.81
      expect(mergePlaybooks(playbook([bullet]), null, [entry2], NOW).bullets[0]!.deprecated).toBe(false);
      const b3 = makeBullet({ id: "b3", content: words.slice(0, 17).concat(["y1x", "y2x", "y3x"]).join(" ") }); // 20 tokens
      const entry3 = blocked(words.slice(0, 17).concat(["y1x"]).join(" ")); // 18 tokens, shared 18, union 20 → 0.9
      expect(mergePlaybooks(playbook([b3]), null, [entry3], NOW).bullets[0]!.deprecated).toBe(true);
      const entry4 = blocked(words.slice(0, 17).join(" ")); // 17 tokens ⊂ 20 → 0.85 exactly
      expect(mergePlaybooks(playbook([b3]), null, [entry4], NOW).bullets[0]!.deprecated).toBe(false);
    });

    it("property: blocks exactly when hash equal or token-Jaccard > 0.85", () => {
      const word = fc.constantFrom("alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "Alpha", "a.b", "x");
      const text = fc.array(word, { maxLength: 12 }).map((ws) => ws.join(" "));
      fc.assert(
        fc.property(text, fc.array(text, { minLength: 1, maxLength: 3 }), (content, blockedTexts) => {
          const merged = mergePlaybooks(playbook([makeBullet({ id: "p", content })]), null, blockedTexts.map((t, i) => blocked(t, `x${i}`)), NOW);
          const expected = blockedTexts.some((t) => hashContent(t) === hashContent(content) || (tokenize(t).length > 0 && tokenize(content).length > 0 && jaccardSimilarity(t, content) > 0.85));
          expect(merged.bullets[0]!.deprecated).toBe(expected);
        }),
        { numRuns: 1000 },
      );
    });

    it("does not re-deprecate bullets that are already deprecated", () => {
      const b = makeBullet({ id: "d", content: "blocked thing here", deprecated: true, deprecationReason: "manual", state: "retired", maturity: "deprecated" });
      const merged = mergePlaybooks(playbook([b]), null, [blocked("blocked thing here")], NOW);
      expect(merged.bullets[0]!.deprecationReason).toBe("manual");
    });

    it("handles 10,000 bullets × a few blocked entries (timing is measured by benchmarks, not here)", () => {
      const bullets = Array.from({ length: 10_000 }, (_, i) =>
        makeBullet({ id: `b-${i}`, content: `Rule about module${i} and feature${i} for the component${i} service` }),
      );
      const entries = [
        blocked("rule about module3 and feature3 for the component3 service", "x0"),
        blocked("Rule about module7 and feature7 for the component7 service", "x1"), // exact
        blocked("RULE ABOUT MODULE7 AND FEATURE7 FOR THE COMPONENT7 SERVICE", "x2"), // same hash: de-duplicated
        blocked("something unrelated entirely", "x3"),
      ];
      const merged = mergePlaybooks(playbook(bullets), playbook([], [], "repo"), entries, NOW);
      expect(merged.bullets).toHaveLength(10_000);
      expect(merged.bullets.filter((b) => b.deprecated).map((b) => b.id)).toEqual(["b-3", "b-7"]);
    });
  });
});
