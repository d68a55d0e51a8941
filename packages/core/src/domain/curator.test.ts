import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultConfig } from "../schemas/config.js";
import { createEmptyPlaybook, isActiveBullet, type Bullet, type Playbook } from "../schemas/playbook.js";
import type { Delta } from "../schemas/records.js";
import {
  AUTO_DEPRECATE_REASON,
  NEGATIVE_RULE_HARMFUL_REASON,
  REINFORCED_EXACT,
  REINFORCED_SIMILAR,
  agentFromSessionPath,
  curatePlaybook,
  deprecateBullet,
  invertToAntiPattern,
  newBullet,
  type CurateContext,
} from "./curator.js";
import { hashContent } from "./text.js";
import { T0, events, makeBullet, sequentialIds } from "./test-support.js";

const config = defaultConfig();
const NOW_ISO = T0.toISOString();

function pb(bullets: Bullet[]): Playbook {
  const p = createEmptyPlaybook(NOW_ISO);
  p.bullets = bullets;
  return p;
}
function ctx(reference: Playbook, prefix = "b-new"): CurateContext {
  return { reference, config, now: T0, ids: sequentialIds(prefix) };
}
const add = (content: string, extra: Partial<Extract<Delta, { type: "add" }>> = {}): Delta => ({
  type: "add",
  bullet: { content, category: "testing" },
  reason: "",
  sourceSession: "/home/u/.claude/projects/x/s1.jsonl",
  ...extra,
});

describe("agentFromSessionPath", () => {
  it.each([
    ["/home/u/.claude/projects/a.jsonl", "claude"],
    ["/home/u/.cursor/x", "cursor"],
    ["/home/u/.codex/sessions/y.jsonl", "codex"],
    ["/repo/.aider.chat.history.md", "aider"],
    ["/home/u/.pi/agent/sessions/z.jsonl", "pi_agent"],
    ["C:\\Users\\u\\.pi\\agent\\sessions\\z.jsonl", "pi_agent"],
    ["/tmp/random.log", "unknown"],
    ["", "unknown"],
  ])("%s → %s", (path, agent) => expect(agentFromSessionPath(path)).toBe(agent));
});

describe("newBullet / deprecateBullet / invertToAntiPattern", () => {
  it("applies the add defaults", () => {
    const b = newBullet({ content: "Run tests first", category: "testing", sourceSession: "/x/.codex/s.jsonl" }, { config, now: T0, ids: sequentialIds() });
    expect(b).toEqual({
      id: "b-new-1",
      scope: "global",
      category: "testing",
      content: "Run tests first",
      source: "learned",
      type: "rule",
      isNegative: false,
      kind: "workflow_rule",
      state: "draft",
      maturity: "candidate",
      helpfulCount: 0,
      harmfulCount: 0,
      feedbackEvents: [],
      confidenceDecayHalfLifeDays: 90,
      createdAt: NOW_ISO,
      updatedAt: NOW_ISO,
      pinned: false,
      deprecated: false,
      sourceSessions: ["/x/.codex/s.jsonl"],
      sourceAgents: ["codex"],
      tags: [],
    });
  });
  it("lets explicit fields override and ignores undefined", () => {
    const b = newBullet(
      { content: "c", category: "k", kind: "project_convention", scope: "workspace", workspace: "/w", sourceAgents: ["unknown"], sourceSessions: ["manual-cli"], reasoning: undefined },
      { config, now: T0, ids: sequentialIds() },
    );
    expect(b).toMatchObject({ kind: "project_convention", scope: "workspace", workspace: "/w", sourceAgents: ["unknown"], sourceSessions: ["manual-cli"] });
    expect("reasoning" in b).toBe(false);
  });
  it("deprecates into a copy", () => {
    const b = makeBullet({ replacedBy: "old" });
    const d = deprecateBullet(b, "why", NOW_ISO);
    expect(d).toMatchObject({ deprecated: true, deprecatedAt: NOW_ISO, deprecationReason: "why", state: "retired", maturity: "deprecated", updatedAt: NOW_ISO });
    expect(d.replacedBy).toBeUndefined();
    expect(deprecateBullet(b, "why", NOW_ISO, "b-2").replacedBy).toBe("b-2");
    expect(b.deprecated).toBe(false);
  });
  it("inverts a rule into an anti-pattern", () => {
    const b = makeBullet({ content: "Always cache API responses", harmfulCount: 3, tags: ["perf"], workspace: "/w", scope: "workspace", sourceSessions: ["s"] });
    const a = invertToAntiPattern(b, { config, now: T0, ids: sequentialIds("b-anti") });
    expect(a).toMatchObject({
      id: "b-anti-1",
      content: "AVOID: cache API responses. Marked harmful 3 times",
      kind: "anti_pattern",
      type: "anti-pattern",
      isNegative: true,
      state: "active",
      maturity: "candidate",
      scope: "workspace",
      workspace: "/w",
      tags: ["perf", "inverted", "anti-pattern"],
      sourceSessions: ["s"],
      feedbackEvents: [],
      helpfulCount: 0,
      harmfulCount: 0,
    });
    expect(a.sourceSessions).not.toBe(b.sourceSessions);
  });
});

describe("curatePlaybook: add and dedup", () => {
  it("adds a new bullet with delta metadata and reasoning", () => {
    const target = pb([]);
    const r = curatePlaybook(target, [add("Run the migration script before tests", { reason: " learned it ", bullet: { content: "Run the migration script before tests", category: "db", tags: ["db"], kind: "project_convention" } })], ctx(target));
    expect(r.applied).toBe(1);
    expect(r.playbook.bullets).toHaveLength(1);
    expect(r.playbook.bullets[0]).toMatchObject({ id: "b-new-1", category: "db", tags: ["db"], kind: "project_convention", reasoning: "learned it", sourceAgents: ["claude"] });
    expect(r.decisions).toEqual([expect.objectContaining({ action: "applied", bulletId: "b-new-1" })]);
    expect(target.bullets).toHaveLength(0);
  });
  it("reinforces an exact duplicate in the target", () => {
    const existing = makeBullet({ id: "b1", content: "Run the migration script before tests" });
    const target = pb([existing]);
    const r = curatePlaybook(target, [add("  run THE migration script before tests ")], ctx(target));
    expect(r.playbook.bullets).toHaveLength(1);
    expect(r.playbook.bullets[0]!.helpfulCount).toBe(1);
    expect(r.playbook.bullets[0]!.feedbackEvents[0]).toMatchObject({ type: "helpful", context: REINFORCED_EXACT, timestamp: NOW_ISO });
    expect(existing.helpfulCount).toBe(0);
  });
  it("skips an exact duplicate that lives in the other layer, or is deprecated", () => {
    const target = pb([]);
    const reference = pb([makeBullet({ id: "g1", content: "Run the migration script before tests" })]);
    const r = curatePlaybook(target, [add("Run the migration script before tests")], ctx(reference));
    expect(r.skipped).toBe(1);
    expect(r.playbook.bullets).toHaveLength(0);
    const dep = pb([makeBullet({ id: "d1", content: "Run the migration script before tests", deprecated: true })]);
    const r2 = curatePlaybook(dep, [add("Run the migration script before tests")], ctx(dep));
    expect(r2.skipped).toBe(1);
    expect(r2.playbook.bullets).toHaveLength(1);
  });
  it("reinforces a similar bullet (Jaccard ≥ threshold inclusive), preferring active over deprecated", () => {
    // 17 shared of 20 → 0.85 exactly (inclusive)
    const words = Array.from({ length: 20 }, (_, i) => `w${i}x`);
    const active = makeBullet({ id: "act", content: words.join(" ") });
    const deprecated = makeBullet({ id: "dep", content: words.join(" "), deprecated: true });
    const target = pb([deprecated, active]);
    const r = curatePlaybook(target, [add(words.slice(0, 17).join(" "))], ctx(target));
    expect(r.applied).toBe(1);
    const act = r.playbook.bullets.find((b) => b.id === "act")!;
    expect(act.feedbackEvents[0]!.context).toBe(REINFORCED_SIMILAR);
    // only-deprecated similar match → skip
    const t2 = pb([deprecated]);
    const r2 = curatePlaybook(t2, [add(words.slice(0, 18).join(" "))], ctx(t2));
    expect(r2.skipped).toBe(1);
    expect(r2.playbook.bullets).toHaveLength(1);
    // below threshold → new bullet
    const r3 = curatePlaybook(pb([active]), [add(words.slice(0, 16).join(" "))], ctx(pb([active])));
    expect(r3.playbook.bullets).toHaveLength(2);
  });
  it("counts bullets added earlier in the same batch", () => {
    const target = pb([]);
    const r = curatePlaybook(target, [add("Prefer pnpm over npm in this repo"), add("prefer PNPM over npm in this repo")], ctx(target));
    expect(r.playbook.bullets).toHaveLength(1);
    expect(r.playbook.bullets[0]!.helpfulCount).toBe(1);
    expect(r.applied).toBe(2);
  });
  it("records conflicts but still adds", () => {
    const target = pb([makeBullet({ id: "c1", content: "Always use mocks for database tests" })]);
    const r = curatePlaybook(target, [add("Never use mocks for database tests please")], ctx(target));
    expect(r.conflicts).toEqual([expect.objectContaining({ conflictingBulletId: "c1", newBulletContent: "Never use mocks for database tests please" })]);
    expect(r.playbook.bullets).toHaveLength(2);
  });

  it("property: adding the same content twice never yields two active bullets with equal hash", () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{2,8}( [a-z]{2,8}){0,6}$/), { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
        (contents, picks) => {
          const target = pb([]);
          const deltas = picks.map((p) => add(contents[p % contents.length]!));
          const once = curatePlaybook(target, deltas, ctx(target));
          const twice = curatePlaybook(once.playbook, deltas, ctx(once.playbook, "b-again"));
          for (const r of [once, twice]) {
            const hashes = r.playbook.bullets.filter(isActiveBullet).map((b) => hashContent(b.content));
            expect(new Set(hashes).size).toBe(hashes.length);
          }
        },
      ),
    );
  });
});

describe("curatePlaybook: feedback, replace, deprecate, merge", () => {
  it("records helpful/harmful once per session", () => {
    const target = pb([makeBullet({ id: "b1" })]);
    const deltas: Delta[] = [
      { type: "helpful", bulletId: "b1", sourceSession: "s1", context: "nice" },
      { type: "helpful", bulletId: "b1", sourceSession: "s1" },
      { type: "harmful", bulletId: "b1", sourceSession: "s1", reason: "Outdated" },
      { type: "harmful", bulletId: "b1", sourceSession: "s2", reason: "weird text" },
      { type: "helpful", bulletId: "missing", sourceSession: "s1" },
    ];
    const r = curatePlaybook(target, deltas, ctx(target));
    expect(r.applied).toBe(3);
    expect(r.skipped).toBe(2);
    const b = r.playbook.bullets[0]!;
    expect(b.helpfulCount).toBe(1);
    expect(b.harmfulCount).toBe(2);
    expect(b.lastValidatedAt).toBe(NOW_ISO);
    expect(b.feedbackEvents).toEqual([
      { type: "helpful", timestamp: NOW_ISO, sessionPath: "s1", context: "nice" },
      { type: "harmful", timestamp: NOW_ISO, sessionPath: "s1", reason: "outdated" },
      { type: "harmful", timestamp: NOW_ISO, sessionPath: "s2", reason: "other", context: "weird text" },
    ]);
    expect(r.decisions.map((d) => d.action)).toEqual(["applied", "skipped", "applied", "applied", "skipped"]);
  });
  it("replaces content and deprecates with replacedBy", () => {
    const target = pb([makeBullet({ id: "b1" }), makeBullet({ id: "b2", content: "other rule" })]);
    const r = curatePlaybook(
      target,
      [
        { type: "replace", bulletId: "b1", newContent: "Use pnpm workspaces" },
        { type: "deprecate", bulletId: "b2", reason: "obsolete", replacedBy: "b1" },
        { type: "deprecate", bulletId: "nope", reason: "" },
      ],
      ctx(target),
    );
    expect(r.playbook.bullets[0]!.content).toBe("Use pnpm workspaces");
    expect(r.playbook.bullets[1]).toMatchObject({ deprecated: true, deprecationReason: "obsolete", replacedBy: "b1" });
    expect([r.applied, r.skipped]).toEqual([2, 1]);
    expect(target.bullets[0]!.content).toBe("Use pnpm for installs");
  });
  it("merges bullets into a new one and deprecates the sources", () => {
    const target = pb([makeBullet({ id: "m1", category: "cat1", tags: ["a"] }), makeBullet({ id: "m2", content: "x y", tags: ["a", "b"] })]);
    const r = curatePlaybook(target, [{ type: "merge", bulletIds: ["m1", "m2"], mergedContent: "Combined rule" }, { type: "merge", bulletIds: ["m1"], mergedContent: "x" }], ctx(target));
    expect([r.applied, r.skipped]).toEqual([1, 1]);
    const merged = r.playbook.bullets.find((b) => b.id === "b-new-1")!;
    expect(merged).toMatchObject({ content: "Combined rule", category: "cat1", tags: ["a", "b"], sourceSessions: ["merged"] });
    for (const id of ["m1", "m2"]) {
      expect(r.playbook.bullets.find((b) => b.id === id)).toMatchObject({ deprecated: true, deprecationReason: "Merged into b-new-1", replacedBy: "b-new-1" });
    }
  });
});

describe("curatePlaybook: post-processing", () => {
  it("inverts a harmful rule into an anti-pattern", () => {
    const target = pb([makeBullet({ id: "h1", content: "Use global singletons for config", harmfulCount: 3, feedbackEvents: events("harmful", 3) })]);
    const r = curatePlaybook(target, [], ctx(target));
    expect(r.inversions).toEqual([{ originalId: "h1", antiPatternId: "b-new-1" }]);
    expect(r.playbook.bullets[0]).toMatchObject({ deprecated: true, deprecationReason: "Inverted to anti-pattern: b-new-1", replacedBy: "b-new-1" });
    expect(r.playbook.bullets[1]).toMatchObject({ content: "AVOID: global singletons for config. Marked harmful 3 times", kind: "anti_pattern" });
    expect(r.pruned).toBe(0);
  });
  it("deprecates a harmful negative rule instead of inverting it", () => {
    const target = pb([makeBullet({ id: "n1", isNegative: true, feedbackEvents: events("harmful", 3) })]);
    const r = curatePlaybook(target, [], ctx(target));
    expect(r.inversions).toEqual([]);
    expect(r.pruned).toBe(1);
    expect(r.playbook.bullets[0]).toMatchObject({ deprecated: true, deprecationReason: NEGATIVE_RULE_HARMFUL_REASON });
  });
  it("does not invert when helpful feedback outweighs (harmful ≤ 2×helpful)", () => {
    const target = pb([makeBullet({ id: "x", maturity: "proven", feedbackEvents: [...events("harmful", 3), ...events("helpful", 20)] })]);
    const r = curatePlaybook(target, [], ctx(target));
    expect(r.inversions).toEqual([]);
  });
  it("promotes and records promotions", () => {
    const target = pb([makeBullet({ id: "p1", feedbackEvents: events("helpful", 10) }), makeBullet({ id: "p2", feedbackEvents: events("helpful", 3) })]);
    const r = curatePlaybook(target, [], ctx(target));
    expect(r.promotions).toEqual([
      { bulletId: "p1", from: "candidate", to: "proven" },
      { bulletId: "p2", from: "candidate", to: "established" },
    ]);
    expect(r.playbook.bullets[0]!.promotedAt).toBe(NOW_ISO);
  });
  it("auto-deprecates below −pruneHarmfulThreshold and demotes on negative scores", () => {
    const target = pb([
      // 2 harmful (< 2.99, no inversion): score (0 - 8) * 1.0 = -8 → auto-deprecate
      makeBullet({ id: "a1", maturity: "established", feedbackEvents: events("harmful", 2) }),
      // established, 1 helpful + 0.3 harmful → (1 - 1.2) * 1 = -0.2 → candidate
      makeBullet({ id: "a2", maturity: "established", feedbackEvents: [...events("helpful", 1), { type: "harmful", timestamp: NOW_ISO, decayedValue: 0.3 }] }),
    ]);
    const r = curatePlaybook(target, [], ctx(target));
    expect(r.playbook.bullets[0]).toMatchObject({ deprecated: true, deprecationReason: AUTO_DEPRECATE_REASON });
    expect(r.playbook.bullets[1]!.maturity).toBe("candidate");
    expect(r.pruned).toBe(1);
  });
  it("never inverts, demotes or auto-deprecates pinned bullets", () => {
    const target = pb([
      makeBullet({ id: "pin1", pinned: true, maturity: "established", feedbackEvents: events("harmful", 5) }),
      makeBullet({ id: "pin2", pinned: true, maturity: "proven", feedbackEvents: events("harmful", 1) }),
    ]);
    const r = curatePlaybook(target, [{ type: "harmful", bulletId: "pin2", sourceSession: "s" }], ctx(target));
    expect(r.inversions).toEqual([]);
    expect(r.pruned).toBe(0);
    expect(r.playbook.bullets.map((b) => [b.maturity, b.deprecated])).toEqual([
      ["established", false],
      ["proven", false],
    ]);
  });
});

describe("curatePlaybook: determinism, idempotency, purity", () => {
  const bulletArb = fc.record({
    id: fc.constantFrom("b1", "b2", "b3"),
    helpful: fc.nat({ max: 12 }),
    harmful: fc.nat({ max: 5 }),
    maturity: fc.constantFrom("candidate", "established", "proven") as fc.Arbitrary<"candidate" | "established" | "proven">,
    pinned: fc.boolean(),
  });
  const playbookArb = fc.uniqueArray(bulletArb, { selector: (b) => b.id, minLength: 1, maxLength: 3 }).map((specs) =>
    pb(
      specs.map((s) =>
        makeBullet({
          id: s.id,
          content: `rule number ${s.id} about topic ${s.id}`,
          maturity: s.maturity,
          pinned: s.pinned,
          feedbackEvents: [...events("helpful", s.helpful, T0, 5), ...events("harmful", s.harmful, T0, 5)],
        }),
      ),
    ),
  );
  const feedbackArb = fc.record({
    type: fc.constantFrom("helpful", "harmful") as fc.Arbitrary<"helpful" | "harmful">,
    bulletId: fc.constantFrom("b1", "b2", "b3"),
    sourceSession: fc.constantFrom("/s/a.jsonl", "/s/b.jsonl"),
  });

  it("property: a helpful/harmful delta applied twice (same session) equals applying it once", () => {
    fc.assert(
      fc.property(playbookArb, feedbackArb, (target, delta) => {
        const once = curatePlaybook(target, [delta as Delta], ctx(target));
        const twice = curatePlaybook(target, [delta as Delta, delta as Delta], ctx(target));
        expect(twice.playbook).toEqual(once.playbook);
        const again = curatePlaybook(once.playbook, [delta as Delta], ctx(once.playbook, "b-x"));
        expect(again.playbook.bullets.map((b) => b.feedbackEvents.length)).toEqual(once.playbook.bullets.map((b) => b.feedbackEvents.length));
      }),
    );
  });

  it("property: never mutates its inputs and is deterministic", () => {
    fc.assert(
      fc.property(playbookArb, fc.array(feedbackArb, { maxLength: 6 }), fc.boolean(), (target, fb, withAdd) => {
        const deltas: Delta[] = [...(fb as Delta[]), ...(withAdd ? [add("a brand new rule about caching"), add("rule number b1 about topic b1")] : [])];
        const before = structuredClone(target);
        const deltasBefore = structuredClone(deltas);
        const r1 = curatePlaybook(target, deltas, ctx(target));
        const r2 = curatePlaybook(target, deltas, ctx(target));
        expect(target).toEqual(before);
        expect(deltas).toEqual(deltasBefore);
        expect(r1).toEqual(r2);
      }),
    );
  });
});
