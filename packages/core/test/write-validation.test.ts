import { describe, expect, it } from "vitest";
import { isCanonicalBullet, isCanonicalBulletInOrder } from "../src/schemas/bullet-check.js";
import { validatePlaybookForWrite } from "../src/schemas/codec.js";
import { BULLET_KEYS, BulletSchema, PlaybookSchema } from "../src/schemas/playbook.js";
import { createTestBullet } from "../src/testing.js";

/**
 * validatePlaybookForWrite skips BulletSchema for rules already in its output form (keys in its
 * order): whatever it returns must serialise exactly like PlaybookSchema's output, and whatever
 * it refuses must be refused with the same first issue.
 */

const NOW = "2026-01-01T00:00:00.000Z";

function playbookOf(bullets: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schema_version: 2,
    name: "playbook",
    description: "rules",
    metadata: { createdAt: NOW, totalReflections: 0, totalSessionsProcessed: 0 },
    deprecatedPatterns: [],
    bullets,
    ...extra,
  };
}

/** A small deterministic generator (tests must be reproducible). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function shuffled<T>(items: T[], rnd: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function reorder(value: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) out[key] = value[key];
  return out;
}

/** Variants of a canonical rule the way mutations and hand edits make them. */
function variant(i: number, rnd: () => number): unknown {
  const bullet = BulletSchema.parse(createTestBullet({ id: `b-${i}`, content: `Rule ${i}`, createdAt: NOW, updatedAt: NOW, tags: ["a"] })) as Record<string, unknown>;
  switch (i % 12) {
    case 0:
      return bullet;
    case 1: // an optional key added at the end (the schema puts it in its place)
      return { ...bullet, promotedAt: NOW };
    case 2: // an optional key in its place
      return reorder({ ...bullet, promotedAt: NOW }, [...BULLET_KEYS].filter((k) => k === "promotedAt" || k in bullet));
    case 3: // keys shuffled
      return reorder(bullet, shuffled(Object.keys(bullet), rnd));
    case 4: // a key the schema does not know, after its own (kept there)
      return { ...bullet, futureField: { x: 1 } };
    case 5: // an unknown key before a known one
      return reorder({ ...bullet, futureField: 1 }, ["futureField", ...Object.keys(bullet)]);
    case 6: // a feedback event in the schema's order
      return { ...bullet, feedbackEvents: [{ type: "helpful", timestamp: NOW, sessionPath: "/s", context: "ctx" }] };
    case 7: // a feedback event whose keys are in another order
      return { ...bullet, feedbackEvents: [{ timestamp: NOW, type: "helpful", reason: "x" }] };
    case 8: // a default missing
      return Object.fromEntries(Object.entries(bullet).filter(([k]) => k !== "pinned"));
    case 9: // evidence and verification, one of them out of order
      return { ...bullet, evidence: [{ uri: "https://x", type: "doc" }], verification: { type: "regex", pattern: "a", path: "f", mode: "exists" } };
    case 10: // invalid: a count that is not a number
      return { ...bullet, helpfulCount: "3" };
    default: // snake_case key the schema renames
      return reorder({ ...bullet, is_negative: false }, Object.keys(bullet).filter((k) => k !== "isNegative").concat("is_negative"));
  }
}

function outcome(run: () => unknown): { ok: true; json: string } | { ok: false; message: string } {
  try {
    return { ok: true, json: JSON.stringify(run()) };
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
}

describe("validatePlaybookForWrite", () => {
  it("BULLET_KEYS lists BulletSchema's keys in the order it returns them", () => {
    const all: Record<string, unknown> = {};
    for (const key of [...BULLET_KEYS].reverse()) all[key] = undefined;
    const full = { ...all, ...createTestBullet({ id: "b-order", createdAt: NOW, updatedAt: NOW }), promotedAt: NOW, reasoning: "r", scopeKey: "k", validTo: NOW };
    const out = Object.keys(BulletSchema.parse(full));
    expect(out).toEqual([...BULLET_KEYS].filter((k) => out.includes(k)));
  });

  it("recognises rules in the schema's output form, and only those", () => {
    const canonical = BulletSchema.parse(createTestBullet({ createdAt: NOW, updatedAt: NOW }));
    expect(isCanonicalBulletInOrder(canonical)).toBe(true);
    const keys = Object.keys(canonical);
    const swapped = reorder(canonical as Record<string, unknown>, [keys[1]!, keys[0]!, ...keys.slice(2)]);
    expect(isCanonicalBullet(swapped)).toBe(true);
    expect(isCanonicalBulletInOrder(swapped)).toBe(false);
    expect(isCanonicalBulletInOrder({ ...canonical, promotedAt: NOW })).toBe(false);
    expect(isCanonicalBulletInOrder({ ...canonical, futureField: 1 })).toBe(true);
  });

  it("returns exactly what the schema returns, or fails with the same message, for many playbooks", () => {
    const rnd = random(18);
    let fast = 0;
    for (let round = 0; round < 300; round++) {
      const count = 1 + Math.floor(rnd() * 4);
      const bullets = Array.from({ length: count }, () => variant(Math.floor(rnd() * 1000), rnd));
      const extra = rnd() < 0.2 ? { customTop: true } : rnd() < 0.1 ? { name: 7 } : {};
      const playbook = playbookOf(bullets, extra);
      if (bullets.every(isCanonicalBulletInOrder)) fast++;
      const expected = outcome(() => {
        const r = PlaybookSchema.safeParse(structuredClone(playbook));
        if (!r.success) throw new Error(r.error.issues[0]?.message);
        return r.data;
      });
      const actual = outcome(() => validatePlaybookForWrite(structuredClone(playbook), "/p.yaml"));
      if (expected.ok) expect(actual, JSON.stringify(playbook)).toEqual(expected);
      else {
        expect(actual.ok).toBe(false);
        expect((actual as { message: string }).message).toContain(expected.message);
      }
    }
    // Both paths were exercised.
    expect(fast).toBeGreaterThan(10);
    expect(fast).toBeLessThan(300);
  });
});
