import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ORIGINAL_GLOBAL_PROCESSED_LOG, ORIGINAL_ONBOARDING_STATE } from "../src/original-files.js";

// The suite embeds two files of the original cm so that it runs outside this repository; they
// must stay byte-for-byte the repository's fixtures.
const home = new URL("../../../fixtures/original-home/home/.cass-memory/", import.meta.url);

describe("embedded files of the original cm", () => {
  it("equal fixtures/original-home", () => {
    expect(ORIGINAL_ONBOARDING_STATE).toBe(readFileSync(new URL("onboarding-state.json", home), "utf8"));
    expect(ORIGINAL_GLOBAL_PROCESSED_LOG).toBe(readFileSync(new URL("reflections/global.processed.log", home), "utf8"));
  });
});
