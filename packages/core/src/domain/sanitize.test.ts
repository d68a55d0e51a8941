import { describe, expect, it } from "vitest";
import { SECRET_PATTERNS, compileSanitizer, sanitize } from "./sanitize.js";

// Fake secrets are assembled at run time so that scanners do not flag this file.
const j = (...parts: string[]) => parts.join("");
const AWS_ID = j("AK", "IA", "IOSFODNN7EXAMPLE");
const AWS_SECRET = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY");
const GH_PAT = j("gh", "p_", "a".repeat(36));
const GH_FINE = j("github", "_pat_", "11ABCDEFG0123456789_abcdefghij");
const SLACK = j("xo", "xb-", "123456789012-abcdefABCDEF");

describe("built-in patterns", () => {
  it("has the 11 patterns of the reference", () => {
    expect(SECRET_PATTERNS).toHaveLength(11);
  });

  it.each([
    ["AWS access key", `key id ${AWS_ID} here`, "key id [AWS_ACCESS_KEY] here"],
    ["AWS secret key", `secret ${AWS_SECRET}`, "secret [AWS_SECRET_KEY]"],
    ["Bearer token", "Authorization: Bearer abcdefghijklmnopqrstuvwxyz.123", "Authorization: [BEARER_TOKEN]"],
    ["API key (keeps key and quotes)", `{"api_key": "ABCDEFGHIJKLMNOPQRSTUVWX1234"}`, `{"api_key": "[API_KEY]"}`],
    ["apiKey reference example", "apiKey: ABCDEFGHIJKLMNOPQRSTUVWX1234", "apiKey: [API_KEY]"],
    ["token", "token=abcdefghijklmnopqrstuvwxyz", "token=[TOKEN]"],
    [
      "PEM private key",
      "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter",
      "before\n[PRIVATE_KEY]\nafter",
    ],
    ["password", `${j("pass", "word")}: "hunter2hunter2"`, `${j("pass", "word")}: "[CREDENTIAL_REDACTED]"`],
    ["GitHub classic PAT", `use ${GH_PAT} now`, "use [GITHUB_PAT] now"],
    ["GitHub fine-grained PAT", `tok ${GH_FINE}`, "tok [GITHUB_PAT]"],
    ["Slack token", `slack ${SLACK}`, "slack [SLACK_TOKEN]"],
    ["database URL", "postgres://admin:s3cr3t@db.example.com:5432/app", "postgres://[USER]:[PASS]@db.example.com:5432/app"],
    // The detector is stricter than the original here: unquoted and short assigned values count.
    ["api key with a short value", "api_key: short_value_123", "api_key: [API_KEY]"],
    ["unquoted password value", `${j("pass", "word")}=hunter2hunter2`, `${j("pass", "word")}=[CREDENTIAL_REDACTED]`],
  ])("redacts %s", (_name, input, expected) => {
    expect(sanitize(input)).toBe(expected);
  });

  it.each([
    ["short AKIA-like id", j("AK", "IA", "SHORT123")],
    ["39-char base64-ish run", "a".repeat(39)],
    ["40 chars followed by punctuation", `${"b".repeat(40)}-x`],
    ["Bearer with short token", "Bearer abc123"],
    ["token word in prose", "the token expired yesterday"],
    ["unterminated PEM header", "-----BEGIN RSA PRIVATE KEY----- truncated"],
    ["short quoted password", `${j("pass", "word")}: "short"`],
    ["ghp_ too short", j("gh", "p_", "abc")],
    ["github_pat_ too short", j("github", "_pat_", "abc")],
    ["xox with wrong letter", j("xo", "xz-", "12345")],
    ["database URL without credentials", "postgres://db.example.com:5432/app"],
  ])("leaves a near miss alone: %s", (_name, input) => {
    expect(sanitize(input)).toBe(input);
  });
});

describe("compileSanitizer", () => {
  it("applies extra patterns case-insensitively with [REDACTED]", () => {
    const s = compileSanitizer({ enabled: true, extraPatterns: ["internal-[0-9]{4}", "  "] });
    expect(s.sanitize("id INTERNAL-1234 and internal-5678")).toBe("id [REDACTED] and [REDACTED]");
    expect(s.warnings).toEqual([]);
  });
  it("skips long, nested-quantifier, empty-matching and invalid patterns with warnings", () => {
    const s = compileSanitizer({ extraPatterns: ["x".repeat(257), "(a+)+", "(.*)*b", "[unclosed", "z*", "ok\\d+"] });
    expect(s.warnings).toHaveLength(5);
    expect(s.warnings[0]).toMatch(/longer than 256/);
    expect(s.warnings[1]).toMatch(/nested quantifier/);
    expect(s.warnings[3]).toMatch(/invalid/);
    expect(s.warnings[4]).toMatch(/empty string/);
    expect(s.sanitize("aaaa ok42 zzz")).toBe("aaaa [REDACTED] zzz");
  });
  it("does nothing when disabled", () => {
    const input = `key ${AWS_ID}`;
    expect(compileSanitizer({ enabled: false, extraPatterns: ["key"] }).sanitize(input)).toBe(input);
    expect(sanitize(input, { enabled: false })).toBe(input);
  });
  it("is reusable (no lastIndex leakage between calls)", () => {
    const s = compileSanitizer();
    for (let i = 0; i < 3; i++) expect(s.sanitize(`x ${GH_PAT}`)).toBe("x [GITHUB_PAT]");
  });
});
