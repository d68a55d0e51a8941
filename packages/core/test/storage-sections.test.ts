import { describe, expect, it } from "vitest";
import { isAppError } from "../src/errors.js";
import { checkSection, distinctDiaries, emptySection, layerSectionKeys, parseSectionKey, sectionHoldsData, sectionKeyOf, sortSectionKeys } from "../src/storage/sections.js";
import type { StoreSection } from "../src/storage/transfer.js";
import { createEmptyPlaybook } from "../src/schemas/playbook.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isAppError(error) ? error.code : "not an AppError";
  }
  return undefined;
}

describe("storage section keys", () => {
  it("parses every key a store lists and gives it back unchanged", () => {
    const keys = [...layerSectionKeys("global"), ...layerSectionKeys("repo"), "diaries", "processed/global", "processed/ws-0123abcd", "onboarding", "costs"];
    expect(keys).toHaveLength(2 * 9 + 5);
    for (const key of keys) expect(sectionKeyOf(parseSectionKey(key))).toBe(key);
    expect(parseSectionKey("repo/log/privacy-audit")).toEqual({ kind: "log", layer: "repo", log: "privacy-audit" });
  });

  it("rejects keys no store has with INVALID_INPUT", () => {
    for (const key of ["", "global", "global/", "global/log", "global/log/nope", "team/playbook", "processed/ws-XYZ", "processed/global/x", "costs/2026-01"]) {
      expect(codeOf(() => parseSectionKey(key)), key).toBe("INVALID_INPUT");
    }
  });

  it("sorts keys: global layer, repo layer, diaries, processed logs by name, onboarding, costs", () => {
    const expected = ["global/playbook", "global/log/outcomes", "repo/journal", "repo/log/reflection-runs", "diaries", "processed/global", "processed/ws-00000001", "onboarding", "costs"];
    const shuffled = [expected[7], expected[3], expected[0], expected[8], expected[6], expected[1], expected[4], expected[5], expected[2]] as string[];
    expect(sortSectionKeys(shuffled)).toEqual(expected);
  });

  it("an empty section holds no data; one record or one skipped line does", () => {
    for (const key of ["global/playbook", "repo/journal", "global/blocked", "global/log/usage", "diaries", "processed/global", "onboarding", "costs"]) {
      const empty = emptySection(key);
      expect(empty.key).toBe(key);
      expect(sectionHoldsData(empty), key).toBe(false);
      expect(checkSection(empty)).toEqual(empty);
    }
    expect(sectionHoldsData({ ...(emptySection("global/log/usage") as Extract<StoreSection, { kind: "log" }>), skipped: 1 })).toBe(true);
    expect(sectionHoldsData({ key: "costs", kind: "costs", months: { "2026-01": [] }, totals: null, skipped: 0 })).toBe(false);
    expect(sectionHoldsData({ key: "global/playbook", kind: "playbook", layer: "global", playbook: createEmptyPlaybook("2026-01-01T00:00:00.000Z", "global") })).toBe(true);
  });

  it("checkSection fills a playbook's defaults and keeps unknown fields", () => {
    const playbook = { metadata: { createdAt: "2026-01-01T00:00:00.000Z" }, futureField: [1], bullets: [] };
    const checked = checkSection({ key: "repo/playbook", kind: "playbook", layer: "repo", playbook } as never);
    expect(checked).toMatchObject({ playbook: { schema_version: 2, name: "playbook", deprecatedPatterns: [], futureField: [1] } });
  });

  it("distinctDiaries keeps the first entry of each id and drops ids a store cannot save", () => {
    const entries = [{ id: "d-1", n: 1 }, { id: "d-2", n: 2 }, { id: "d-1", n: 3 }, { id: "../x", n: 4 }, { id: "", n: 5 }];
    expect(distinctDiaries(entries)).toEqual({ entries: [{ id: "d-1", n: 1 }, { id: "d-2", n: 2 }], dropped: 3 });
  });
});
