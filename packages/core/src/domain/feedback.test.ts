import { describe, expect, it } from "vitest";
import { defaultConfig } from "../schemas/config.js";
import { AUTO_DEPRECATION_REASON, applyFeedback, normalizeHarmfulReason } from "./feedback.js";
import { T0, events, makeBullet } from "./test-support.js";

const config = defaultConfig();

describe("normalizeHarmfulReason", () => {
  it("accepts the six reasons case-insensitively", () => {
    expect(normalizeHarmfulReason("caused_bug")).toEqual({ reason: "caused_bug" });
    expect(normalizeHarmfulReason("Wasted_Time")).toEqual({ reason: "wasted_time" });
    expect(normalizeHarmfulReason(" OUTDATED ")).toEqual({ reason: "outdated" });
    expect(normalizeHarmfulReason("contradicted_requirements").reason).toBe("contradicted_requirements");
    expect(normalizeHarmfulReason("wrong_context").reason).toBe("wrong_context");
    expect(normalizeHarmfulReason("other")).toEqual({ reason: "other" });
  });
  it("maps free text to other with the text as context, missing to other", () => {
    expect(normalizeHarmfulReason("broke the build")).toEqual({ reason: "other", context: "broke the build" });
    expect(normalizeHarmfulReason(undefined)).toEqual({ reason: "other" });
    expect(normalizeHarmfulReason("")).toEqual({ reason: "other" });
  });
});

describe("applyFeedback", () => {
  it("records a helpful event with the reason as context, without mutating the input", () => {
    const before = makeBullet();
    const snapshot = structuredClone(before);
    const after = applyFeedback(before, { type: "helpful", reason: "saved time", sessionPath: "/s/1.jsonl", now: T0, config });
    expect(before).toEqual(snapshot);
    expect(after.helpfulCount).toBe(1);
    expect(after.harmfulCount).toBe(0);
    expect(after.updatedAt).toBe(T0.toISOString());
    expect(after.feedbackEvents).toEqual([{ type: "helpful", timestamp: T0.toISOString(), sessionPath: "/s/1.jsonl", context: "saved time" }]);
    expect(after.maturity).toBe("candidate");
  });
  it("records a harmful event with a normalised reason", () => {
    const after = applyFeedback(makeBullet(), { type: "harmful", reason: "it lied", now: T0, config });
    expect(after.feedbackEvents[0]).toEqual({ type: "harmful", timestamp: T0.toISOString(), reason: "other", context: "it lied" });
    expect(after.harmfulCount).toBe(1);
    const known = applyFeedback(makeBullet(), { type: "harmful", reason: "Caused_Bug", now: T0, config });
    expect(known.feedbackEvents[0]).toEqual({ type: "harmful", timestamp: T0.toISOString(), reason: "caused_bug" });
  });
  it("promotes with the third helpful mark", () => {
    let b = makeBullet();
    for (let i = 0; i < 3; i++) b = applyFeedback(b, { type: "helpful", now: T0, config });
    expect(b.maturity).toBe("established");
    expect(b.helpfulCount).toBe(3);
  });
  it("auto-deprecates on the third harmful mark", () => {
    let b = makeBullet({ state: "active" });
    b = applyFeedback(b, { type: "harmful", now: T0, config });
    b = applyFeedback(b, { type: "harmful", now: T0, config });
    expect(b.maturity).toBe("candidate");
    expect(b.deprecated).toBe(false);
    b = applyFeedback(b, { type: "harmful", now: T0, config });
    expect(b).toMatchObject({
      maturity: "deprecated",
      deprecated: true,
      deprecatedAt: T0.toISOString(),
      state: "retired",
      deprecationReason: AUTO_DEPRECATION_REASON,
    });
  });
  it("keeps an existing deprecation reason", () => {
    const b = makeBullet({ feedbackEvents: events("harmful", 2), deprecationReason: "kept" });
    expect(applyFeedback(b, { type: "harmful", now: T0, config }).deprecationReason).toBe("kept");
  });
  it("leaves a pinned bullet's maturity alone", () => {
    const b = makeBullet({ pinned: true, maturity: "established", feedbackEvents: events("harmful", 5) });
    const after = applyFeedback(b, { type: "harmful", now: T0, config });
    expect(after.maturity).toBe("established");
    expect(after.deprecated).toBe(false);
    expect(after.harmfulCount).toBe(1);
  });
});
