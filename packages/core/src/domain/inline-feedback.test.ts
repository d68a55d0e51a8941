import { describe, expect, it } from "vitest";
import { parseInlineFeedback } from "./inline-feedback.js";

describe("parseInlineFeedback", () => {
  it("parses the reference examples", () => {
    const text = [
      "function auth() {",
      "  // [cass: helpful b-8f3a2c] - saved time",
      "  # [cass: harmful b-x7k9p1]",
      "  /* [cass: harmful b-blk456] */",
      "  // [cass: helpful b-mn3ot59c-nny4gb]: worked first try",
      "  /* [cass: harmful b-blk457] - block comment */",
      "}",
    ].join("\n");
    expect(parseInlineFeedback(text)).toEqual([
      { type: "helpful", bulletId: "b-8f3a2c", reason: "saved time", lineNumber: 2 },
      { type: "harmful", bulletId: "b-x7k9p1", lineNumber: 3 },
      { type: "harmful", bulletId: "b-blk456", lineNumber: 4 },
      { type: "helpful", bulletId: "b-mn3ot59c-nny4gb", reason: "worked first try", lineNumber: 5 },
      { type: "harmful", bulletId: "b-blk457", reason: "block comment", lineNumber: 6 },
    ]);
  });
  it("ignores malformed markers and empty input", () => {
    expect(parseInlineFeedback("")).toEqual([]);
    expect(parseInlineFeedback("[cass: helpful b-abc] without comment marker")).toEqual([]);
    expect(parseInlineFeedback("// [cass: useful b-abc]")).toEqual([]);
    expect(parseInlineFeedback("// [cass: helpful x-abc]")).toEqual([]);
    expect(parseInlineFeedback("// [cass: helpful b-]")).toEqual([]);
  });
  it("accepts starter rule ids", () => {
    expect(parseInlineFeedback("# [cass: helpful starter-python-use-venv] - right call")).toEqual([
      { type: "helpful", bulletId: "starter-python-use-venv", reason: "right call", lineNumber: 1 },
    ]);
    expect(parseInlineFeedback("// [cass: helpful starter-]")).toEqual([]);
  });
  it("handles CRLF line endings", () => {
    expect(parseInlineFeedback("x\r\n// [cass: helpful b-abc123] - ok\r\n")).toEqual([
      { type: "helpful", bulletId: "b-abc123", reason: "ok", lineNumber: 2 },
    ]);
  });
});
