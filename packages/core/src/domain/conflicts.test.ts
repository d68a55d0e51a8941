import { describe, expect, it } from "vitest";
import { CONFLICT_REASONS, detectConflicts } from "./conflicts.js";
import { makeBullet } from "./test-support.js";

describe("detectConflicts", () => {
  it("flags negation conflicts on overlapping subjects", () => {
    const existing = [makeBullet({ id: "b1", content: "Always use mocks for database tests" })];
    const out = detectConflicts("Never use mocks for database tests", existing);
    expect(out).toEqual([{ bulletId: "b1", content: "Always use mocks for database tests", reason: CONFLICT_REASONS.negation }]);
  });
  it("flags opposite directives when both sides are negative but one also demands", () => {
    const existing = [makeBullet({ id: "b2", content: "Avoid global state in handlers" })];
    const out = detectConflicts("You must avoid global state in handlers unless cached", existing);
    // both negative (avoid) → no negation conflict; new is positive (must) and old negative → opposite.
    expect(out.map((c) => c.reason)).toEqual([CONFLICT_REASONS.opposite]);
  });
  it("flags scope conflicts (always vs exception)", () => {
    const existing = [makeBullet({ id: "b3", content: "Ensure retries on network calls" })];
    const out = detectConflicts("Retries on network calls only when idempotent", existing);
    expect(out.map((c) => c.reason)).toEqual([CONFLICT_REASONS.scope]);
  });
  it("uses whole-word markers (user is not use)", () => {
    const existing = [makeBullet({ id: "b4", content: "The user profile page loads settings" })];
    expect(detectConflicts("The user profile page loads settings lazily", existing)).toEqual([]);
  });
  it("ignores low overlap and inactive bullets", () => {
    expect(detectConflicts("Never deploy on Fridays", [makeBullet({ id: "x", content: "Always write unit tests for parsers" })])).toEqual([]);
    const retired = makeBullet({ id: "r", content: "Always use mocks for database tests", deprecated: true });
    expect(detectConflicts("Never use mocks for database tests", [retired])).toEqual([]);
    expect(detectConflicts("", [makeBullet({ id: "y", content: "Always use mocks" })])).toEqual([]);
  });
  it("needs 0.2 overlap without markers, 0.1 with", () => {
    // No markers anywhere: 1 shared token of 8 → 0.125 < 0.2 → nothing (and no reason anyway)
    expect(detectConflicts("alpha beta gamma delta", [makeBullet({ content: "alpha zeta eta theta iota" })])).toEqual([]);
    // With a marker: 0.125 ≥ 0.1 and negation differs → conflict
    const out = detectConflicts("never alpha beta gamma", [makeBullet({ id: "m", content: "alpha zeta eta theta iota" })]);
    expect(out.map((c) => c.bulletId)).toEqual(["m"]);
  });
});
