import { describe, expect, it } from "vitest";
import { backtrackingProblem } from "./regex-safety.js";
import { userRegexProblem } from "./secrets.js";
import { verificationFromFlags } from "./verification.js";

/** One static check for every regex a user supplies: trauma patterns, --verify-regex, sanitiser extras. */
describe("userRegexProblem uses the static backtracking check", () => {
  const evil = ["(a+)+$", "(a|ab)+$", "(\\d|\\w)+x", "\\s*\\s*$", "(\\w+\\s?)*!", ".*.*=.*"];
  const fine = ['"vitest":\\s*"\\^4', "secret-[a-z0-9]+", "^export const \\w+", "TODO\\(\\w+\\)"];

  it("refuses every shape the trauma check refuses, and accepts ordinary patterns", () => {
    for (const source of evil) {
      expect(backtrackingProblem(source), source).not.toBeNull();
      expect(userRegexProblem(source), source).toMatch(/^potentially unsafe \(/);
      expect(() => verificationFromFlags({ regex: `src/a.ts:${source}` }), source).toThrow(/Verification pattern is potentially unsafe/);
    }
    for (const source of fine) expect(userRegexProblem(source), source).toBeNull();
    expect(userRegexProblem("(unclosed")).toMatch(/^invalid/);
  });
});
