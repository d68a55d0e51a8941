import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isAppError } from "../errors.js";
import type { TraumaEntry } from "../schemas/records.js";
import {
  DOOM_PATTERNS,
  MAX_TRAUMA_PATTERN_LENGTH,
  TRAUMA_MATCH_MAX_CHARS,
  assertTraumaPattern,
  checkTraumaPattern,
  compileTraumaRegex,
  extractShellCommands,
  findTraumaMatch,
  scanForDoomPatterns,
  splitShellCommand,
} from "./trauma.js";

/** Patterns known to backtrack catastrophically (exponentially or as n^3 and worse). */
const EVIL = [
  String.raw`(a+)+`,
  String.raw`(a*)*`,
  String.raw`(\w+\s?)+`,
  String.raw`(.*a){20}`,
  String.raw`(a|a)*`,
  String.raw`(a|ab)+`,
  String.raw`(\d|\w)+`,
  String.raw`\s*\s*$`,
  String.raw`.*.*=.*`,
  String.raw`^(a+)+$`,
  String.raw`(x+x+)+y`,
  String.raw`(a|aa)+$`,
  String.raw`^(\w+\s?)*$`,
  String.raw`(.*?,){11}P`,
  String.raw`^(([a-z])+.)+[A-Z]([a-z])+$`,
  String.raw`([a-zA-Z]+)*`,
  String.raw`(\d+)*x`,
  String.raw`((ab)*)+c`,
  String.raw`(a?){25}a{25}`,
  String.raw`(a?a)+b`,
  String.raw`(\s*\w+)+!`,
  String.raw`a*a*a*b`,
  String.raw`git.*push.*--force`,
  String.raw`(?:\w|\d)+z`,
  String.raw`(\s*x?\s*)y`,
  String.raw`^\s*\s*$`,
  String.raw`^([a-zA-Z0-9])(([\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$`,
];

/** Ordinary patterns a user would write; all must be accepted. */
const NORMAL = [
  String.raw`git\s+push\s+--force`,
  String.raw`DROP\s+TABLE\s+users`,
  "rm -rf /",
  String.raw`kubectl\s+delete\s+ns\s+prod`,
  String.raw`git\s+push\s+.*--force`,
  String.raw`git push.*--force`,
  String.raw`^git.*push.*--force`,
  String.raw`^terraform\s+apply.*-auto-approve`,
  String.raw`(--force|-f)\b`,
  String.raw`\bprod(uction)?\b.*\bdelete\b`,
  String.raw`npm\s+publish`,
  String.raw`(\w+\.)+\w+`,
  String.raw`(\s+-[a-z]+)+\s+/`,
  String.raw`curl\s+[^|]*\|\s*(ba)?sh`,
  String.raw`[\d]{3}-[\d]{4}`,
];

describe("checkTraumaPattern", () => {
  it("accepts every built-in DOOM pattern", () => {
    expect(DOOM_PATTERNS).toHaveLength(25);
    for (const d of DOOM_PATTERNS) expect({ p: d.pattern, r: checkTraumaPattern(d.pattern) }).toEqual({ p: d.pattern, r: { ok: true } });
    const categories = new Map<string, number>();
    for (const d of DOOM_PATTERNS) categories.set(d.category, (categories.get(d.category) ?? 0) + 1);
    expect(Object.fromEntries(categories)).toEqual({ filesystem: 4, database: 4, infrastructure: 4, git: 6, system: 7 });
  });

  it.each(EVIL)("refuses the catastrophic pattern %s", (pattern) => {
    const result = checkTraumaPattern(pattern);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe("catastrophic");
      expect(result.message).toMatch(/^Pattern can backtrack catastrophically: /);
    }
  });

  it("has a corpus of at least 15 evil patterns", () => {
    expect(EVIL.length).toBeGreaterThanOrEqual(15);
  });

  it.each(NORMAL)("accepts the ordinary pattern %s", (pattern) => {
    expect(checkTraumaPattern(pattern)).toEqual({ ok: true });
  });

  it("refuses invalid regexes with the engine's message", () => {
    for (const pattern of ["(unclosed", "[z-a]", "a{2,1}", "*x", "(?<n>a)(?<n>b)"]) {
      const result = checkTraumaPattern(pattern);
      expect(result).toMatchObject({ ok: false, reason: "invalid" });
      if (!result.ok) expect(result.message).toMatch(/^Invalid regex pattern: /);
    }
    expect(checkTraumaPattern("   ")).toMatchObject({ ok: false, reason: "invalid" });
  });

  it("refuses patterns longer than the limit", () => {
    expect(checkTraumaPattern("a".repeat(MAX_TRAUMA_PATTERN_LENGTH))).toEqual({ ok: true });
    expect(checkTraumaPattern("a".repeat(MAX_TRAUMA_PATTERN_LENGTH + 1))).toMatchObject({ ok: false, reason: "too_long" });
  });

  it("understands classes, escapes and case-insensitivity when comparing character sets", () => {
    // Disjoint sets next to each other are fine; overlapping ones (case-insensitively) are not.
    expect(checkTraumaPattern(String.raw`\d+[a-z]+x`).ok).toBe(true);
    expect(checkTraumaPattern(String.raw`[a-f]+[A-F]+x`).ok).toBe(false);
    expect(checkTraumaPattern(String.raw`[^a]+b+x`).ok).toBe(false);
    expect(checkTraumaPattern(String.raw`[^\s]+\s+x`).ok).toBe(true);
    expect(checkTraumaPattern(String.raw`\x41+a+x`).ok).toBe(false);
    expect(checkTraumaPattern(String.raw`\S+\s+\S+\s+x`).ok).toBe(true);
    // A backreference may repeat anything.
    expect(checkTraumaPattern(String.raw`(a)\1*\1*x`).ok).toBe(false);
  });

  it("assertTraumaPattern throws INVALID_INPUT with a hint and details", () => {
    let caught: unknown;
    try {
      assertTraumaPattern("(a+)+");
    } catch (error) {
      caught = error;
    }
    expect(isAppError(caught)).toBe(true);
    const e = caught as { code: string; exitCode: number; hint?: string; details?: Record<string, unknown> };
    expect(e.code).toBe("INVALID_INPUT");
    expect(e.exitCode).toBe(2);
    expect(e.hint).toMatch(/nested|\(a\+\)\+/);
    expect(e.details).toEqual({ pattern: "(a+)+", reason: "catastrophic" });
    expect(() => assertTraumaPattern(String.raw`git\s+push`)).not.toThrow();
  });
});

function entry(id: string, pattern: string, status: "active" | "healed" = "active"): TraumaEntry {
  return {
    id,
    severity: "CRITICAL",
    pattern,
    scope: "global",
    status,
    trigger_event: { session_path: "manual-entry", timestamp: "2025-01-01T00:00:00.000Z", human_message: "test" },
    created_at: "2025-01-01T00:00:00.000Z",
  };
}

describe("findTraumaMatch", () => {
  it("matches active entries case-insensitively and multiline, first match wins", () => {
    const entries = [entry("t-healed", "drop", "healed"), entry("t-1", String.raw`^git\s+push`), entry("t-2", "DROP")];
    expect(findTraumaMatch(entries, "please\nGIT  push origin")?.entry.id).toBe("t-1");
    expect(findTraumaMatch(entries, "please\nGIT  push origin")?.match).toBe("GIT  push");
    expect(findTraumaMatch(entries, "drop it")?.entry.id).toBe("t-2");
    expect(findTraumaMatch(entries, "nothing here")).toBeUndefined();
  });

  it("skips invalid and unsafe patterns instead of running them", { timeout: 10_000 }, () => {
    const evil = entry("t-evil", String.raw`(\w+\s?)+$`);
    const invalid = entry("t-bad", "(unclosed");
    // On this text the evil pattern would run for hours; the test finishing proves it was not run.
    const text = `${"word ".repeat(5000)}!`;
    expect(findTraumaMatch([evil, invalid], text)).toBeUndefined();
    expect(findTraumaMatch([evil, invalid, entry("t-ok", "word")], text)?.entry.id).toBe("t-ok");
    expect(compileTraumaRegex(evil.pattern)).toBeNull();
    expect(compileTraumaRegex("(unclosed")).toBeNull();
    const ok = compileTraumaRegex("x+");
    expect(ok?.flags).toBe("im");
    expect(compileTraumaRegex("x+")).toBe(ok);
  });

  it("looks at the first 16 KiB of the text only", () => {
    const entries = [entry("t-end", "needle")];
    expect(findTraumaMatch(entries, `${"a".repeat(TRAUMA_MATCH_MAX_CHARS - 6)}needle`)?.entry.id).toBe("t-end");
    expect(findTraumaMatch(entries, `${"a".repeat(TRAUMA_MATCH_MAX_CHARS)}needle`)).toBeUndefined();
  });
});

describe("scanForDoomPatterns", () => {
  it("finds destructive commands with evidence and context", () => {
    const text = `I ran this and I'm sorry:\nrm -rf /home/me\nthen\ngit push origin main --force\nDROP TABLE users;`;
    const found = scanForDoomPatterns(text);
    const descriptions = found.map((f) => f.description);
    expect(descriptions).toContain("Recursive deletion of system directories");
    expect(descriptions).toContain("Git force push");
    expect(descriptions).not.toContain("Drop database");
    const rm = found.find((f) => f.description === "Recursive deletion of system directories")!;
    expect(rm.evidence).toBe("rm -rf /home");
    expect(rm.context).toContain("sorry");
    expect(rm.context.length).toBeLessThanOrEqual(rm.evidence.length + 200);
    expect(scanForDoomPatterns("all good here")).toEqual([]);
  });

  it("finds commands inside tool calls, split at && and ; (so ^-anchored patterns match)", () => {
    const text = `[assistant] cleaning up\n[tool: Bash] {"command":"cd /srv && sudo rm -rf /var/lib/app; echo \\"done\\"","description":"clean"}`;
    expect(extractShellCommands(text)).toEqual(['cd /srv && sudo rm -rf /var/lib/app; echo "done"']);
    expect(splitShellCommand('cd /srv && sudo rm -rf /var/lib/app; echo "done"')).toEqual(["cd /srv", "rm -rf /var/lib/app", 'echo "done"']);
    const found = scanForDoomPatterns(text);
    const rm = found.find((f) => f.description === "Recursive deletion of system directories");
    expect(rm?.evidence).toBe("rm -rf /var");
    expect(rm?.context).toBe('Executed: cd /srv && sudo rm -rf /var/lib/app; echo "done"');
  });
});

describe("checkTraumaPattern (property)", () => {
  const atom = fc.constantFrom("a", "b", "x", String.raw`\s`, ".", "[ab]", String.raw`\w`, String.raw`\d`, " ");
  const quant = fc.constantFrom("", "", "*", "+", "?", "{2}", "{1,3}", "{2,}");
  const pattern: fc.Arbitrary<string> = fc.letrec<{ node: string; seq: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.tuple(atom, quant).map(([a, q]) => a + q),
      fc.tuple(tie("seq"), quant).map(([s, q]) => `(${s})${q}`),
      fc.tuple(tie("seq"), tie("seq"), quant).map(([l, r, q]) => `(?:${l}|${r})${q}`),
    ),
    seq: fc.array(tie("node"), { minLength: 1, maxLength: 4 }).map((parts) => parts.join("")),
  })).seq;
  const texts = (n: number): string[] =>
    ["a", "b", " ", "ab", "a ", "x", "1", "aab "].flatMap((unit) => {
      const body = unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
      return [`${body}!`, `${body}\n!`];
    });

  it("never throws; what it accepts compiles, and runs to completion on adversarial texts", { timeout: 120_000 }, () => {
    const adversarial = texts(3000);
    let accepted = 0;
    fc.assert(
      fc.property(pattern, fc.boolean(), fc.boolean(), (p, anchorStart, anchorEnd) => {
        const source = `${anchorStart ? "^" : ""}${p}${anchorEnd ? "$" : "!?z"}`;
        const result = checkTraumaPattern(source);
        if (!result.ok) return;
        accepted++;
        const regex = new RegExp(source, "im");
        // A catastrophic pattern would run for minutes here; finishing is the assertion.
        for (const text of adversarial) regex.exec(text);
      }),
      { numRuns: 400, seed: 15 },
    );
    expect(accepted).toBeGreaterThan(50);
  });

  it("answers for arbitrary strings without throwing", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (p) => {
        const result = checkTraumaPattern(p);
        if (result.ok) expect(() => new RegExp(p, "im")).not.toThrow();
      }),
      { numRuns: 2000, seed: 15 },
    );
  });
});
