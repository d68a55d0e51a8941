import { describe, expect, it } from "vitest";
import { isCanonicalBullet, isCanonicalBulletInOrder, isCanonicalJournalEventInOrder, isCanonicalPlaybookHeadInOrder } from "../src/schemas/bullet-check.js";
import { parseJournalEventForWrite, validatePlaybookForWrite } from "../src/schemas/codec.js";
import { JournalEventSchema } from "../src/schemas/records.js";
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

/** Variants of a canonical playbook head (everything but the bullets), as writers and hand edits make them. */
function headVariant(playbook: Record<string, unknown>, rnd: () => number): Record<string, unknown> {
  const pattern = { pattern: "var ", deprecatedAt: NOW, reason: "use const", replacement: "const " };
  switch (Math.floor(rnd() * 16)) {
    case 0: // a pattern and the last reflection, in the schema's order
      return { ...playbook, metadata: { createdAt: NOW, lastReflection: NOW, totalReflections: 2, totalSessionsProcessed: 3 }, deprecatedPatterns: [pattern] };
    case 1: // metadata keys in another order
      return { ...playbook, metadata: { totalReflections: 0, createdAt: NOW, totalSessionsProcessed: 0 } };
    case 2: // a pattern whose keys are in another order, or snake_case
      return { ...playbook, deprecatedPatterns: [rnd() < 0.5 ? { reason: "r", pattern: "p", deprecatedAt: NOW } : { pattern: "p", deprecated_at: NOW, reason: "r" }] };
    case 3: // top-level keys shuffled
      return reorder(playbook, shuffled(Object.keys(playbook), rnd));
    case 4: // an unknown key before the schema's own, or after them
      return rnd() < 0.5 ? reorder({ ...playbook, customTop: 1 }, ["customTop", ...Object.keys(playbook)]) : { ...playbook, customTop: { nested: [1] } };
    case 5: // a default missing
      return Object.fromEntries(Object.entries(playbook).filter(([k]) => k !== (rnd() < 0.5 ? "description" : "schema_version")));
    case 6: // snake_case key the schema renames
      return reorder({ ...playbook, deprecated_patterns: [] }, Object.keys(playbook).filter((k) => k !== "deprecatedPatterns").concat("deprecated_patterns"));
    case 7: // a timestamp given as a Date, or empty
      return { ...playbook, metadata: { createdAt: rnd() < 0.5 ? new Date(NOW) : "", totalReflections: 0, totalSessionsProcessed: 0 } };
    case 8: // invalid or non-finite numbers, an optional field present but undefined
      return rnd() < 0.5 ? { ...playbook, schema_version: Number.NaN } : { ...playbook, metadata: { createdAt: NOW, lastReflection: undefined, totalReflections: 0, totalSessionsProcessed: 0 } };
    case 9: // a name of the wrong type, or metadata missing
      return rnd() < 0.5 ? { ...playbook, name: 7 } : Object.fromEntries(Object.entries(playbook).filter(([k]) => k !== "metadata"));
    default:
      return playbook;
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
    let fastHead = 0;
    for (let round = 0; round < 600; round++) {
      const count = 1 + Math.floor(rnd() * 4);
      const bullets = Array.from({ length: count }, () => variant(Math.floor(rnd() * 1000), rnd));
      const extra = rnd() < 0.2 ? { customTop: true } : rnd() < 0.1 ? { name: 7 } : {};
      const playbook = headVariant(playbookOf(bullets, extra), rnd);
      if (bullets.every(isCanonicalBulletInOrder)) fast++;
      if (isCanonicalPlaybookHeadInOrder(playbook)) fastHead++;
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
    // Both paths were exercised, for the rules and for the head.
    expect(fast).toBeGreaterThan(20);
    expect(fast).toBeLessThan(600);
    expect(fastHead).toBeGreaterThan(100);
    expect(fastHead).toBeLessThan(500);
  });
});

describe("parseJournalEventForWrite", () => {
  /** Variants of a canonical event the way operations and hand-written callers make them. */
  function eventVariant(rnd: () => number): unknown {
    const base = JournalEventSchema.parse({
      id: "ev-1",
      timestamp: NOW,
      operation: "feedback",
      change: "feedback",
      bulletId: "b-1",
      layer: "global",
      actor: "cm",
      hashBefore: "0123456789abcdef",
      hashAfter: null,
    }) as Record<string, unknown>;
    switch (Math.floor(rnd() * 14)) {
      case 0: // optional fields in their places, with changed-field records
        return { ...reorder(base, ["id", "timestamp", "operation", "change", "bulletId", "layer", "actor"]), source: "/s.jsonl", reason: "r", hashBefore: null, hashAfter: "x", before: { helpfulCount: 1 }, after: { helpfulCount: 2, tags: ["a"] } };
      case 1: // optional fields appended after the hashes (the schema puts them in their places)
        return { ...base, source: "cli", runId: "run-1" };
      case 2: // keys shuffled
        return reorder(base, shuffled(Object.keys(base), rnd));
      case 3: // unknown keys before or after the schema's own
        return rnd() < 0.5 ? { ...base, extra: { x: 1 } } : reorder({ ...base, extra: 1 }, ["extra", ...Object.keys(base)]);
      case 4: // the actor default missing
        return Object.fromEntries(Object.entries(base).filter(([k]) => k !== "actor"));
      case 5: // empty required strings, a layer of another name
        return rnd() < 0.5 ? { ...base, bulletId: "" } : { ...base, layer: "team" };
      case 6: // a timestamp as a Date
        return { ...base, timestamp: new Date(NOW) };
      case 7: // a hash missing or of the wrong type
        return rnd() < 0.5 ? Object.fromEntries(Object.entries(base).filter(([k]) => k !== "hashAfter")) : { ...base, hashBefore: 3 };
      case 8: // changed-field records that are not plain, or hold __proto__ as a key
        return rnd() < 0.5 ? { ...base, before: ["a"] } : { ...base, after: JSON.parse('{"__proto__": {"x": 1}, "tags": []}') as unknown };
      case 9: // an optional field present but undefined, or of the wrong type
        return rnd() < 0.5 ? { ...base, reason: undefined } : { ...base, runId: 7 };
      default:
        return base;
    }
  }

  it("returns exactly what the schema returns, or fails as it does, for many events", () => {
    const rnd = random(21);
    let fast = 0;
    for (let round = 0; round < 800; round++) {
      const event = eventVariant(rnd);
      if (isCanonicalJournalEventInOrder(event)) fast++;
      const expected = outcome(() => JournalEventSchema.parse(structuredClone(event)));
      const actual = outcome(() => parseJournalEventForWrite(structuredClone(event)));
      expect(actual, JSON.stringify(event)).toEqual(expected);
    }
    expect(fast).toBeGreaterThan(150);
    expect(fast).toBeLessThan(700);
  });

  it("gives new objects: the caller's event and its records are not shared", () => {
    const event = { id: "ev-2", timestamp: NOW, operation: "o", change: "c", bulletId: "b", layer: "repo", actor: "a", hashBefore: null, hashAfter: null, after: { n: 1 } };
    const parsed = parseJournalEventForWrite(event);
    expect(parsed).toEqual(event);
    expect(parsed).not.toBe(event);
    expect(parsed.after).not.toBe(event.after);
  });
});
