import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { defaultConfig } from "../schemas/config.js";
import {
  MATURITY_MULTIPLIER,
  calculateMaturityState,
  checkForDemotion,
  checkForPromotion,
  eventWeight,
  formatLastHelpful,
  getDecayedCounts,
  getEffectiveScore,
  getHalfLifeDays,
  isStale,
  scoreBucket,
} from "./scoring.js";
import { DAY, T0, daysBefore, events, makeBullet } from "./test-support.js";

const config = defaultConfig();

describe("half-life", () => {
  it("prefers scoring.decayHalfLifeDays, then defaultDecayHalfLife, then 90", () => {
    expect(getHalfLifeDays(config)).toBe(90);
    expect(getHalfLifeDays({ ...config, scoring: { ...config.scoring, decayHalfLifeDays: 30 } })).toBe(30);
    expect(getHalfLifeDays({ ...config, scoring: { ...config.scoring, decayHalfLifeDays: 0 }, defaultDecayHalfLife: 45 })).toBe(45);
    expect(getHalfLifeDays({ ...config, scoring: { ...config.scoring, decayHalfLifeDays: -1 }, defaultDecayHalfLife: 0 })).toBe(90);
  });
});

describe("eventWeight", () => {
  it.each([
    [0, 1.0],
    [45, 0.707],
    [90, 0.5],
    [180, 0.25],
    [270, 0.125],
  ])("%i days old → %f", (age, expected) => {
    expect(eventWeight({ timestamp: daysBefore(T0, age) }, T0, 90)).toBeCloseTo(expected, 3);
  });
  it("counts future events in full, bad timestamps and non-positive half-lives as 0", () => {
    expect(eventWeight({ timestamp: daysBefore(T0, -10) }, T0, 90)).toBe(1);
    expect(eventWeight({ timestamp: "not a date" }, T0, 90)).toBe(0);
    expect(eventWeight({ timestamp: T0.toISOString() }, T0, 0)).toBe(0);
  });
  it("multiplies by decayedValue (clamped at 0) when finite", () => {
    expect(eventWeight({ timestamp: daysBefore(T0, 90), decayedValue: 2 }, T0, 90)).toBeCloseTo(1);
    expect(eventWeight({ timestamp: T0.toISOString(), decayedValue: -3 }, T0, 90)).toBe(0);
    expect(eventWeight({ timestamp: T0.toISOString(), decayedValue: Number.NaN }, T0, 90)).toBe(1);
  });

  it("property: monotone non-increasing in age, within [0,1], halves at the half-life", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 3650, noNaN: true }),
        fc.double({ min: 0, max: 3650, noNaN: true }),
        fc.double({ min: 1, max: 365, noNaN: true }),
        (a, b, halfLife) => {
          const [young, old] = a <= b ? [a, b] : [b, a];
          const wy = eventWeight({ timestamp: new Date(T0.getTime() - young * DAY).toISOString() }, T0, halfLife);
          const wo = eventWeight({ timestamp: new Date(T0.getTime() - old * DAY).toISOString() }, T0, halfLife);
          expect(wo).toBeLessThanOrEqual(wy + 1e-12);
          expect(wy).toBeGreaterThanOrEqual(0);
          expect(wy).toBeLessThanOrEqual(1);
          const at = eventWeight({ timestamp: new Date(T0.getTime() - young * DAY).toISOString() }, T0, halfLife);
          const later = eventWeight({ timestamp: new Date(T0.getTime() - (young + halfLife) * DAY).toISOString() }, T0, halfLife);
          expect(later).toBeCloseTo(at / 2, 3);
        },
      ),
    );
  });
});

describe("effective score", () => {
  it("uses decayed events, not counters", () => {
    const b = makeBullet({ helpfulCount: 50, feedbackEvents: events("helpful", 2) });
    expect(getDecayedCounts(b, T0, config)).toEqual({ decayedHelpful: 2, decayedHarmful: 0 });
  });
  it("applies the harmful multiplier and the maturity multiplier", () => {
    expect(getEffectiveScore(makeBullet({ maturity: "established", feedbackEvents: events("helpful", 3) }), T0, config)).toBeCloseTo(3);
    expect(getEffectiveScore(makeBullet({ maturity: "established", feedbackEvents: events("harmful", 1) }), T0, config)).toBeCloseTo(-4);
    expect(getEffectiveScore(makeBullet({ maturity: "candidate", feedbackEvents: events("harmful", 1) }), T0, config)).toBeCloseTo(-2);
    expect(getEffectiveScore(makeBullet({ maturity: "proven", feedbackEvents: events("helpful", 2) }), T0, config)).toBeCloseTo(3);
    expect(getEffectiveScore(makeBullet({ maturity: "deprecated", feedbackEvents: events("helpful", 5) }), T0, config)).toBe(0);
    expect(MATURITY_MULTIPLIER).toEqual({ candidate: 0.5, established: 1, proven: 1.5, deprecated: 0 });
  });
  it("buckets scores", () => {
    expect([10, 9.99, 5, 0, -0.01].map(scoreBucket)).toEqual(["excellent", "good", "good", "neutral", "atRisk"]);
  });
});

describe("maturity", () => {
  const state = (fb: ReturnType<typeof events>, extra: Parameters<typeof makeBullet>[0] = {}) =>
    calculateMaturityState(makeBullet({ feedbackEvents: fb, ...extra }), T0, config);

  it("follows the reference check values", () => {
    expect(state(events("helpful", 2))).toBe("candidate");
    expect(state(events("helpful", 3))).toBe("established");
    expect(state(events("helpful", 10))).toBe("proven");
    expect(state(events("harmful", 3))).toBe("deprecated");
    expect(state(events("harmful", 2))).toBe("candidate");
    expect(state([...events("helpful", 10), ...events("harmful", 1)])).toBe("proven"); // ratio 0.0909 < 0.1
    expect(state([...events("helpful", 9), ...events("harmful", 1)])).toBe("established"); // ratio 0.1
  });
  it("uses the 0.01 tolerances on decayed sums", () => {
    // 3 events at ~0.33 days: each ≈ 0.99746, sum ≈ 2.992 ≥ 2.99 → established.
    expect(state(events("helpful", 3, T0, 0.33))).toBe("established");
    // 3 events at 1 day: each ≈ 0.99233, sum ≈ 2.977 < 2.99 → candidate.
    expect(state(events("helpful", 3, T0, 1))).toBe("candidate");
  });
  it("keeps deprecated and pinned bullets as they are", () => {
    expect(state(events("helpful", 20), { deprecated: true })).toBe("deprecated");
    expect(state(events("harmful", 5), { pinned: true, maturity: "established" })).toBe("established");
  });
  it("promotion only moves up", () => {
    expect(checkForPromotion(makeBullet({ maturity: "candidate", feedbackEvents: events("helpful", 3) }), T0, config)).toBe("established");
    expect(checkForPromotion(makeBullet({ maturity: "established", feedbackEvents: events("helpful", 10) }), T0, config)).toBe("proven");
    expect(checkForPromotion(makeBullet({ maturity: "proven", feedbackEvents: [] }), T0, config)).toBe("proven");
    expect(checkForPromotion(makeBullet({ maturity: "established", feedbackEvents: events("helpful", 1) }), T0, config)).toBe("established");
    expect(checkForPromotion(makeBullet({ maturity: "candidate", feedbackEvents: events("harmful", 3) }), T0, config)).toBe("candidate");
  });
  it("demotion: negative score steps down, below −3 auto-deprecates, pinned exempt", () => {
    // established with 1 harmful: -4 < -3 → auto-deprecate
    expect(checkForDemotion(makeBullet({ maturity: "established", feedbackEvents: events("harmful", 1) }), T0, config)).toBe("auto-deprecate");
    // proven, 2 helpful + 1 harmful (half-weight): (2 - 4*0.5)… use decayedValue 0.3: (2 - 1.2) > 0 → stays
    const mild = makeBullet({ maturity: "proven", feedbackEvents: [...events("helpful", 2), { type: "harmful", timestamp: T0.toISOString(), decayedValue: 0.3 }] });
    expect(checkForDemotion(mild, T0, config)).toBe("proven");
    // proven, score (0.5 - 4*0.25)*1.5 = -0.75 → established
    const negative = makeBullet({ maturity: "proven", feedbackEvents: [{ type: "helpful", timestamp: T0.toISOString(), decayedValue: 0.5 }, { type: "harmful", timestamp: T0.toISOString(), decayedValue: 0.25 }] });
    expect(checkForDemotion(negative, T0, config)).toBe("established");
    expect(checkForDemotion({ ...negative, maturity: "established" }, T0, config)).toBe("candidate");
    expect(checkForDemotion({ ...negative, maturity: "candidate" }, T0, config)).toBe("candidate");
    expect(checkForDemotion(makeBullet({ pinned: true, maturity: "established", feedbackEvents: events("harmful", 5) }), T0, config)).toBe("established");
  });
});

describe("staleness and last helpful", () => {
  it("isStale uses the newest feedback, else createdAt", () => {
    const old = makeBullet({ createdAt: daysBefore(T0, 100) });
    expect(isStale(old, 90, T0)).toBe(true);
    expect(isStale({ ...old, feedbackEvents: events("harmful", 1, T0, 10) }, 90, T0)).toBe(false);
    expect(isStale(makeBullet({ createdAt: daysBefore(T0, 90) }), 90, T0)).toBe(false); // strictly greater
    expect(isStale(makeBullet({ createdAt: "garbage" }), 1, T0)).toBe(false);
  });
  it.each([
    [0, "just now"],
    [59 / 86400, "just now"],
    [60 / 86400, "1 minute ago"],
    [5 / 1440, "5 minutes ago"],
    [1 / 24, "1 hour ago"],
    [23 / 24, "23 hours ago"],
    [1, "1 day ago"],
    [6, "6 days ago"],
    [7, "1 week ago"],
    [27, "3 weeks ago"],
    [30, "1 month ago"],
    [300, "10 months ago"],
    [362, "1 year ago"],
    [365 * 3, "3 years ago"],
  ])("formatLastHelpful %f days → %s", (age, expected) => {
    expect(formatLastHelpful(makeBullet({ feedbackEvents: events("helpful", 1, T0, age) }), T0)).toBe(expected);
  });
  it("says Never without helpful events and picks the newest", () => {
    expect(formatLastHelpful(makeBullet({ feedbackEvents: events("harmful", 2) }), T0)).toBe("Never");
    expect(formatLastHelpful(makeBullet({ feedbackEvents: [...events("helpful", 1, T0, 20), ...events("helpful", 1, T0, 2)] }), T0)).toBe("2 days ago");
  });
});
