import { describe, expect, it } from "vitest";
import { POSITION_STEP, keptRows, spreadPositions } from "../src/index.js";

describe("sparse row positions", () => {
  it("keeps the longest run of rows already in order and moves the rest", () => {
    // Old positions of the rows now at each index; the row at index 3 moved to the front.
    const matched = [3072, 0, 1024, 2048, undefined];
    const kept = keptRows(matched);
    expect([...kept].sort()).toEqual([1, 2, 3]);
    const positions = spreadPositions(matched, kept);
    expect(positions.slice(1, 4)).toEqual([0, 1024, 2048]);
    expect(positions[0]).toBeLessThan(0);
    expect(positions[4]).toBe(2048 + POSITION_STEP);
  });

  it("places inserted rows strictly between their kept neighbours", () => {
    const matched = [0, undefined, undefined, 1024];
    const positions = spreadPositions(matched, keptRows(matched));
    expect(positions[0]).toBe(0);
    expect(positions[3]).toBe(1024);
    expect(positions[1]).toBeGreaterThan(0);
    expect(positions[2]).toBeGreaterThan(positions[1] as number);
    expect(positions[2]).toBeLessThan(1024);
  });

  it("renumbers everything when a gap has no room left", () => {
    const matched = [5, undefined, undefined, 6];
    expect(spreadPositions(matched, keptRows(matched))).toEqual([0, 1, 2, 3].map((i) => i * POSITION_STEP));
  });
});
