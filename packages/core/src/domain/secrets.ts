import { backtrackingProblem } from "./regex-safety.js";

/**
 * The secret detector: one place that decides what counts as a secret, used on every path into
 * and out of cass-memory (rules, evidence, reasons, notes, diaries, session text, LLM prompts,
 * context/recall output, history snippets and titles, logs, error messages).
 *
 * Design:
 * - Each kind is a global regular expression with bounded quantifiers only (no nested quantifiers,
 *   no unbounded backtracking), plus an optional check in code (context words, character classes,
 *   entropy, placeholders). Matching is therefore linear in the input for a fixed set of kinds.
 * - A finding covers only the secret value: for `api_key=VALUE` the key stays visible.
 * - Findings of different kinds that overlap are merged into one span (the more specific kind
 *   names it), so no part of a secret survives because another pattern claimed a piece of it.
 * - Inputs longer than MAX_SCAN_CHARS are scanned in overlapping windows, so the cost stays
 *   bounded per character and a secret crossing a window border is still seen whole.
 * - No value span contains a backslash (PEM blocks aside, which hold whole escapes), so redacting
 *   serialized JSON text never breaks an escape sequence.
 * - `allowlist` entries (literal strings, or `/regex/` patterns) are never treated as secrets.
 * - Replacement tokens are those of the original `cm` where one existed (`[AWS_ACCESS_KEY]`,
 *   `[API_KEY]`, `[TOKEN]`, `[CREDENTIAL_REDACTED]`, `[GITHUB_PAT]`, …) and new ones otherwise.
 *   Redacted text never matches again (redaction is idempotent).
 */

export type SecretKind =
  | "aws_access_key"
  | "aws_secret_key"
  | "github_pat"
  | "github_fine_grained_pat"
  | "github_token"
  | "npm_token"
  | "anthropic_key"
  | "openai_key"
  | "slack_token"
  | "slack_webhook"
  | "stripe_key"
  | "google_api_key"
  | "jwt"
  | "url_credentials"
  | "private_key"
  | "authorization_header"
  | "bearer_token"
  | "secret_assignment"
  | "high_entropy"
  | "custom";

export interface SecretFinding {
  kind: SecretKind;
  /** Offsets into the scanned text; `text.slice(start, end)` is the secret value. */
  start: number;
  end: number;
}

export interface RedactionResult {
  text: string;
  /** Distinct kinds that were redacted, in order of first appearance. */
  found: SecretKind[];
}

export interface SecretScannerOptions {
  enabled?: boolean;
  extraPatterns?: readonly string[];
  allowlist?: readonly string[];
}

export interface SecretScanner {
  detect(text: string): SecretFinding[];
  redact(text: string): RedactionResult;
  /** One message per extra pattern or allowlist pattern that was skipped (never a secret value). */
  warnings: string[];
}

/** Human names of the kinds, for messages ("contains a GitHub token"). Never includes a value. */
export const SECRET_KIND_LABELS: Readonly<Record<SecretKind, string>> = {
  aws_access_key: "AWS access key id",
  aws_secret_key: "AWS secret access key",
  github_pat: "GitHub personal access token",
  github_fine_grained_pat: "GitHub fine-grained token",
  github_token: "GitHub token",
  npm_token: "npm token",
  anthropic_key: "Anthropic API key",
  openai_key: "OpenAI API key",
  slack_token: "Slack token",
  slack_webhook: "Slack webhook URL",
  stripe_key: "Stripe key",
  google_api_key: "Google API key",
  jwt: "JSON Web Token",
  url_credentials: "password in a URL",
  private_key: "private key block",
  authorization_header: "Authorization header credential",
  bearer_token: "bearer token",
  secret_assignment: "secret value assigned to a secret-named key",
  high_entropy: "high-entropy string next to a secret word",
  custom: "match of a sanitization.extraPatterns entry",
};

/** Every kind the built-in detector knows (custom = user extras). */
export const SECRET_KINDS: readonly SecretKind[] = Object.keys(SECRET_KIND_LABELS) as SecretKind[];

/** Windows of this size (with SCAN_OVERLAP overlap) are scanned one after another. */
export const MAX_SCAN_CHARS = 256 * 1024;
const SCAN_OVERLAP = 8 * 1024;
const MAX_PEM_BODY = 16 * 1024;

export const EXTRA_PATTERN_REPLACEMENT = "[REDACTED]";
export const MAX_EXTRA_PATTERN_LENGTH = 256;
/**
 * Why a user-supplied regular expression is refused (too long, invalid, or able to backtrack
 * catastrophically: the static check of regex-safety.ts, the same one trauma patterns pass), or
 * null when it may be compiled with `flags`. Used for sanitisation patterns and verification checks.
 */
export function userRegexProblem(source: string, flags = "i"): string | null {
  if (source.length > MAX_EXTRA_PATTERN_LENGTH) return `longer than ${MAX_EXTRA_PATTERN_LENGTH} characters`;
  try {
    new RegExp(source, flags);
  } catch (error) {
    return `invalid (${error instanceof Error ? error.message : String(error)})`;
  }
  let why: string | null;
  try {
    why = backtrackingProblem(source);
  } catch {
    return "invalid (it could not be analysed)";
  }
  // The reason names parts of the pattern; it is not repeated, as an allowlist entry may be a secret.
  return why === null ? null : "potentially unsafe (it could backtrack catastrophically)";
}

// Prefixes are assembled from pieces so that secret scanners run over this repository do not flag
// the source file itself.
const j = (...parts: string[]) => parts.join("");
const AKIA = j("AK", "IA");
const GHP = j("gh", "p_");
const GH_FINE = j("github", "_pat_");
const NPM = j("np", "m_");
const SK = j("s", "k-");
const SK_ANT = j("s", "k-ant-");
const XOX = j("xo", "x");
const SLACK_HOOK = j("hooks", ".slack", ".com/");
const AIZA = j("AI", "za");
const PRIVATE_KEY = j("PRIVATE", " KEY");

interface Candidate {
  kind: SecretKind;
  start: number;
  end: number;
  replacement: string;
  /** Higher wins when spans overlap (specific token formats over generic heuristics). */
  priority: number;
}

interface Rule {
  kind: SecretKind;
  pattern: RegExp;
  priority: number;
  /** Cheap test of the whole text: when it fails, the rule cannot match and is skipped. */
  hint?: RegExp;
  /** Turns one match into a candidate (value span + replacement), or null to reject it. */
  accept(match: RegExpExecArray, text: string): { start: number; end: number; replacement: string } | null;
}

const whole = (replacement: string) => (m: RegExpExecArray) => ({ start: m.index, end: m.index + m[0].length, replacement });

/** Span of capture group `group` (requires the `d` flag). */
function groupSpan(m: RegExpExecArray, group: number): [number, number] | null {
  const span = m.indices?.[group];
  return span ? [span[0], span[1]] : null;
}

function classes(value: string): { upper: number; lower: number; digit: number; other: number } {
  let upper = 0;
  let lower = 0;
  let digit = 0;
  let other = 0;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 65 && c <= 90) upper++;
    else if (c >= 97 && c <= 122) lower++;
    else if (c >= 48 && c <= 57) digit++;
    else other++;
  }
  return { upper, lower, digit, other };
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(value: string): number {
  if (value.length === 0) return 0;
  const counts = new Map<string, number>();
  for (const ch of value) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  for (const n of counts.values()) {
    const p = n / value.length;
    h -= p * Math.log2(p);
  }
  return h;
}

/** Minimum entropy (bits/char) of a high-entropy candidate. */
export const ENTROPY_THRESHOLD = 3.7;

/** A random-looking token: mixed case and digits, enough distinct symbols. */
function looksRandom(value: string, minLength = 20): boolean {
  if (value.length < minLength) return false;
  const c = classes(value);
  if (c.upper < 2 || c.lower < 2 || c.digit < 2) return false;
  return shannonEntropy(value) >= ENTROPY_THRESHOLD;
}

/**
 * True when `label` (a tag, a category: short words by nature) holds a random-looking token of 20+
 * characters. Such a label is treated as a secret even with no secret word next to it.
 */
export function labelLooksRandom(label: string): boolean {
  if (typeof label !== "string" || label.length < 20) return false;
  return label.split(/[\s,;:=]+/).some((token) => looksRandom(token.replace(/=+$/, "")));
}

/** Placeholder values that are documentation, not secrets: <API_KEY>, ${TOKEN}, [REDACTED], xxxx… */
const PLACEHOLDER = /^(?:<[^>]*>|\$\{[^}]*\}|\$\(?[A-Za-z_][A-Za-z0-9_]*\)?|\{\{[^}]*\}\}|\[[A-Z_]+\]|%[A-Za-z_][A-Za-z0-9_]*%|([x*.#•-])\1{2,}|(?:your|my|the|some|example|sample|dummy|fake|test|placeholder|changeme|redacted|secret|password|passwd|pass|pwd|pw|user|username|token|none|null|undefined|true|false|string|required|optional)(?:[_-][a-z]+){0,4})$/i;

const SECRET_WORDS = ["password", "passwd", "passphrase", "pwd", "secret", "token", "apikey", "api_key", "api-key", "access_key", "accesskey", "private_key", "privatekey", "client_secret", "credential", "credentials", "auth_token"];

/**
 * The key of `key=value` names a secret when it ends in (or has as a `_`/`-`/`.`/camelCase
 * segment) one of the secret words: POSTGRES_PASSWORD, db.password, apiKey, client_secret,
 * GITHUB_TOKEN, secretKey. `tokenizer`, `tokens`, `passwordless` and `author` do not.
 */
const SECRET_WORD_HINT = /pass|pwd|secret|token|key|credential/i;
const NOT_A_VALUE_SUFFIX = /^[_.-]?(?:file|path|env|var|env[_.-]?var|name|id|type|url|uri|length|len|count|field|header|prefix|expiry|expires|ttl|timeout|endpoint|dir|policy|format|hint|label|placeholder|source)s?$/i;

function keyNamesSecret(key: string): string | null {
  if (!SECRET_WORD_HINT.test(key)) return null;
  const lower = key.toLowerCase();
  const normal = lower.replace(/-/g, "_");
  for (const word of SECRET_WORDS) {
    const w = word.replace(/-/g, "_");
    let from = 0;
    for (;;) {
      const at = normal.indexOf(w, from);
      if (at < 0) break;
      from = at + 1;
      const after = key.charAt(at + w.length);
      // The next character must not continue the word in lower case (tokenizer, tokens, passwordless).
      if (after !== "" && /[a-z]/.test(after)) continue;
      // A key about the secret rather than holding it: token_file, password_env_var, secret_name.
      if (NOT_A_VALUE_SUFFIX.test(key.slice(at + w.length))) continue;
      return word;
    }
  }
  return null;
}

function assignmentReplacement(word: string): string {
  if (word.startsWith("api") || word === "apikey") return "[API_KEY]";
  if (word === "token" || word === "auth_token") return "[TOKEN]";
  if (word.startsWith("pass") || word === "pwd") return "[CREDENTIAL_REDACTED]";
  return "[SECRET]";
}

/** Is the assigned value a plausible secret (not a type, a placeholder, a number, code)? */
function assignedValueIsSecret(value: string, quoted: boolean): boolean {
  if (value.length < 6 || value.length > 512) return false;
  if (PLACEHOLDER.test(value)) return false;
  if (/^\d+(?:\.\d+)?$/.test(value)) return false;
  // Code (`jsonwebtoken::{…}`, `{ … }`, calls) and environment variable names (MCP_HTTP_TOKEN).
  if (/^[:{(]/.test(value)) return false;
  if (/^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/.test(value)) return false;
  // Code rather than a literal: calls, member access on env, template references.
  if (!quoted && /[()]|^(?:process\.env|os\.environ|env\.|import\.meta|getenv|self\.|this\.)/i.test(value)) return false;
  if (/^(?:https?:\/\/|file:\/\/|\/|\.\/|~\/)/.test(value) && !/@/.test(value)) return false;
  const c = classes(value);
  if (c.digit === 0 && c.other === 0) return value.length >= (quoted ? 8 : 20); // letters only
  // Lower-case words joined by - or _ (same-origin, read_only): settings, not secrets.
  if (c.digit === 0 && /^[a-z]+(?:[-_ ][a-z]+)*$/.test(value)) return value.length >= 24;
  return true;
}

// The key must hold a secret word (checked in full by keyNamesSecret), so most `word:` / `word=`
// pairs of ordinary text and JSON fail inside the regex without allocating a match.
const ASSIGNMENT = /(?<![A-Za-z0-9_.-])(["']?)([A-Za-z0-9_.-]{0,40}?(?:pass|pwd|secret|token|key|credential)[A-Za-z0-9_.-]{0,30})\1[ \t]{0,8}(?::=|=>|:|=)[ \t]{0,8}(?:"([^"\\\r\n]{1,512})"|'([^'\\\r\n]{1,512})'|([^\s"',;`\\]{1,512}))/gi;

const RULES: readonly Rule[] = [
  {
    kind: "private_key",
    priority: 100,
    pattern: new RegExp(
      `-----BEGIN [A-Z0-9 ]{0,40}${PRIVATE_KEY}(?: BLOCK)?-----(?:[\\s\\S]{1,${MAX_PEM_BODY}}?-----END [A-Z0-9 ]{0,40}${PRIVATE_KEY}(?: BLOCK)?-----|[A-Za-z0-9+/=:,\\s-]{40,${MAX_PEM_BODY}})`,
      "g",
    ),
    hint: /-----BEGIN /,
    accept: whole("[PRIVATE_KEY]"),
  },
  {
    kind: "anthropic_key",
    priority: 95,
    pattern: new RegExp(`(?<![A-Za-z0-9_-])${SK_ANT}[A-Za-z0-9_-]{20,300}`, "g"),
    accept: whole("[ANTHROPIC_KEY]"),
  },
  {
    kind: "openai_key",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_-])${SK}(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,300}`, "g"),
    accept: (m) => (looksRandomLoose(m[0]) ? { start: m.index, end: m.index + m[0].length, replacement: "[OPENAI_KEY]" } : null),
  },
  {
    kind: "github_fine_grained_pat",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_])${GH_FINE}[A-Za-z0-9_]{22,255}`, "g"),
    accept: whole("[GITHUB_PAT]"),
  },
  {
    kind: "github_pat",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_])${GHP}[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])`, "g"),
    accept: whole("[GITHUB_PAT]"),
  },
  {
    kind: "github_token",
    priority: 90,
    pattern: /(?<![A-Za-z0-9_])gh[oursr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])/g,
    accept: whole("[GITHUB_TOKEN]"),
  },
  {
    kind: "npm_token",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_])${NPM}[A-Za-z0-9]{36}(?![A-Za-z0-9_])`, "g"),
    accept: whole("[NPM_TOKEN]"),
  },
  {
    kind: "slack_webhook",
    priority: 90,
    pattern: new RegExp(`https://${SLACK_HOOK.replace(/\./g, "\\.")}(?:services|workflows|triggers)/[A-Za-z0-9_/-]{10,200}`, "g"),
    accept: whole("[SLACK_WEBHOOK]"),
  },
  {
    kind: "slack_token",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_])${XOX}[abposre]-[A-Za-z0-9-]{10,200}`, "g"),
    accept: whole("[SLACK_TOKEN]"),
  },
  {
    kind: "stripe_key",
    priority: 90,
    pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}|(?<![A-Za-z0-9_])pk_live_[A-Za-z0-9]{16,200}/g,
    accept: whole("[STRIPE_KEY]"),
  },
  {
    kind: "google_api_key",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9_-])${AIZA}[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])`, "g"),
    accept: whole("[GOOGLE_API_KEY]"),
  },
  {
    kind: "aws_access_key",
    priority: 90,
    pattern: new RegExp(`(?<![A-Za-z0-9])(?:${AKIA}|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![A-Za-z0-9])`, "g"),
    accept: whole("[AWS_ACCESS_KEY]"),
  },
  {
    kind: "jwt",
    priority: 85,
    pattern: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}/g,
    accept: whole("[JWT]"),
  },
  {
    kind: "url_credentials",
    priority: 80,
    // scheme://user:password@host — the span is `user:password`.
    pattern: /\b([a-zA-Z][a-zA-Z0-9+.-]{1,20}):\/\/([^\s:/@"'<>[\]\\]{0,128}):([^\s@/"'<>\\]{1,256})@(?=[A-Za-z0-9[])/dg,
    hint: /:\/\//,
    accept: (m) => {
      const user = groupSpan(m, 2);
      const pass = groupSpan(m, 3);
      if (!user || !pass) return null;
      const value = m[3] ?? "";
      if (value === "[PASS]" || PLACEHOLDER.test(value)) return null;
      return { start: user[0], end: pass[1], replacement: "[USER]:[PASS]" };
    },
  },
  {
    kind: "authorization_header",
    priority: 75,
    pattern: /\b(?:Proxy-)?Authorization["']?[ \t]{0,4}[:=][ \t]{0,4}["']?(Basic|Bearer|Token|Digest|Bot)[ \t]{1,4}([A-Za-z0-9\-._~+/]{8,4096}=*)/dgi,
    accept: (m) => {
      const scheme = groupSpan(m, 1);
      const value = groupSpan(m, 2);
      if (!scheme || !value || PLACEHOLDER.test(m[2] ?? "")) return null;
      const bearer = (m[1] ?? "").toLowerCase() === "bearer";
      return { start: scheme[0], end: value[1], replacement: bearer ? "[BEARER_TOKEN]" : "[AUTH_CREDENTIAL]" };
    },
  },
  {
    kind: "bearer_token",
    priority: 70,
    pattern: /\bBearer\s{1,4}[A-Za-z0-9\-._~+/]{20,4096}=*/g,
    accept: whole("[BEARER_TOKEN]"),
  },
  {
    kind: "aws_secret_key",
    priority: 65,
    // 40 base64 characters standing alone, accepted only near an AWS / secret word (checked below).
    pattern: /(?<![A-Za-z0-9/+=])[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])/g,
    hint: /aws|secret/i,
    accept: (m, text) => {
      const value = m[0];
      const c = classes(value);
      // Git SHAs and other hex: never. A secret key mixes classes.
      if (/^[0-9a-f]+$/i.test(value)) return null;
      if ((c.upper > 0 ? 1 : 0) + (c.lower > 0 ? 1 : 0) + (c.digit > 0 ? 1 : 0) < 2) return null;
      const before = lineBefore(text, m.index, 64).toLowerCase();
      if (!/aws|secret/.test(before)) return null;
      return { start: m.index, end: m.index + value.length, replacement: "[AWS_SECRET_KEY]" };
    },
  },
  {
    kind: "secret_assignment",
    priority: 60,
    pattern: ASSIGNMENT,
    hint: SECRET_WORD_HINT,
    accept: (m) => {
      const key = m[2] ?? "";
      if (!/^[A-Za-z]/.test(key)) return null;
      const word = keyNamesSecret(key);
      if (word === null) return null;
      const group = m[3] !== undefined ? 3 : m[4] !== undefined ? 4 : 5;
      const value = m[group] ?? "";
      if (!assignedValueIsSecret(value, group !== 5)) return null;
      // The value ends the match (before its closing quote when quoted).
      const end = m.index + m[0].length - (group === 5 ? 0 : 1);
      return { start: end - value.length, end, replacement: assignmentReplacement(word) };
    },
  },
  {
    kind: "high_entropy",
    priority: 50,
    pattern: /(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{20,512}={0,2}(?![A-Za-z0-9+/=_-])/g,
    hint: /pass|secret|token|api[ _-]?key|apikey|private|credential|auth|bearer|key/i,
    accept: (m, text) => {
      if (!looksRandom(m[0].replace(/=+$/, ""))) return null;
      const before = lineBefore(text, m.index, 48).toLowerCase();
      if (!/pass|secret|token|api[ _-]?key|apikey|private|credential|auth|bearer|\bkey\b/.test(before)) return null;
      return { start: m.index, end: m.index + m[0].length, replacement: "[SECRET]" };
    },
  },
];

/** An `sk-` key body is random: some digits and mixed case (`sk-learn-pipeline-…` is not a key). */
function looksRandomLoose(value: string): boolean {
  const body = value.slice(3).replace(/^(?:ant-|proj-|svcacct-|admin-)/, "");
  const c = classes(body);
  return c.digit >= 1 && c.upper >= 1 && c.lower >= 1;
}

/** Up to `max` characters before `index` on the same line. */
function lineBefore(text: string, index: number, max: number): string {
  const from = Math.max(0, index - max);
  const slice = text.slice(from, index);
  const nl = Math.max(slice.lastIndexOf("\n"), slice.lastIndexOf("\r"));
  return nl >= 0 ? slice.slice(nl + 1) : slice;
}

interface CompiledAllow {
  literals: Set<string>;
  patterns: RegExp[];
}

function isAllowed(value: string, allow: CompiledAllow): boolean {
  if (allow.literals.has(value)) return true;
  for (const pattern of allow.patterns) if (pattern.test(value)) return true;
  return false;
}

function scanWindow(text: string, offset: number, extras: readonly RegExp[], allow: CompiledAllow, out: Candidate[]): void {
  for (const rule of RULES) {
    if (rule.hint && !rule.hint.test(text)) continue;
    rule.pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = rule.pattern.exec(text)) !== null) {
      if (m[0].length === 0) {
        rule.pattern.lastIndex++;
        continue;
      }
      const hit = rule.accept(m, text);
      if (hit && hit.end > hit.start && !isAllowed(text.slice(hit.start, hit.end), allow)) {
        out.push({ kind: rule.kind, start: hit.start + offset, end: hit.end + offset, replacement: hit.replacement, priority: rule.priority });
      } else if (!hit) {
        // A rejected match may hide one inside it (`text: API_TOKEN=…` read as key `text`): look
        // again from the next character. Lookbehinds keep the retries to word starts.
        rule.pattern.lastIndex = m.index + 1;
      }
    }
  }
  for (const pattern of extras) {
    pattern.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = pattern.exec(text)) !== null) {
      if (m[0].length === 0) {
        pattern.lastIndex++;
        continue;
      }
      if (isAllowed(m[0], allow)) continue;
      out.push({ kind: "custom", start: m.index + offset, end: m.index + m[0].length + offset, replacement: EXTRA_PATTERN_REPLACEMENT, priority: 40 });
    }
  }
}

/** Candidates merged so that overlapping spans become one; the highest priority names it. */
function resolve(candidates: Candidate[]): Candidate[] {
  candidates.sort((a, b) => a.start - b.start || b.end - a.end || b.priority - a.priority);
  const merged: Candidate[] = [];
  for (const c of candidates) {
    const last = merged[merged.length - 1];
    if (last && c.start < last.end) {
      if (c.end > last.end) last.end = c.end;
      if (c.priority > last.priority) {
        last.kind = c.kind;
        last.replacement = c.replacement;
        last.priority = c.priority;
      }
      continue;
    }
    merged.push({ ...c });
  }
  // A merged span that grew beyond a key=value value keeps its name; the replacement of a span that
  // grew by merging is still a single token, so nothing of either secret remains.
  return merged;
}

function compileAllow(entries: readonly string[] | undefined, warnings: string[]): CompiledAllow {
  const allow: CompiledAllow = { literals: new Set(), patterns: [] };
  for (const raw of entries ?? []) {
    if (typeof raw !== "string" || raw.trim() === "") continue;
    const entry = raw.trim();
    const asRegex = /^\/(.+)\/([a-z]*)$/.exec(entry);
    if (asRegex) {
      const source = asRegex[1] ?? "";
      const flags = (asRegex[2] ?? "").replace(/[gy]/g, "");
      const problem = userRegexProblem(source, flags);
      if (problem !== null) {
        warnings.push(`Skipped sanitization.allowlist pattern #${allow.patterns.length + allow.literals.size + 1}: ${problem}`);
        continue;
      }
      allow.patterns.push(new RegExp(`^(?:${source})$`, flags));
    } else {
      allow.literals.add(entry);
    }
  }
  return allow;
}

function compileExtras(entries: readonly string[] | undefined, warnings: string[]): RegExp[] {
  const extras: RegExp[] = [];
  for (const raw of entries ?? []) {
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
    // A pattern that matches the empty string would insert [REDACTED] between every character.
    if (new RegExp(source, "i").test("")) {
      warnings.push(`Skipped sanitization pattern that matches the empty string: ${source}`);
      continue;
    }
    extras.push(new RegExp(source, "gi"));
  }
  return extras;
}

/** Compiles extras and allowlist once; `detect` / `redact` then run the built-in kinds plus extras. */
export function compileSecretScanner(options: SecretScannerOptions = {}): SecretScanner {
  const warnings: string[] = [];
  const extras = compileExtras(options.extraPatterns, warnings);
  const allow = compileAllow(options.allowlist, warnings);
  const enabled = options.enabled ?? true;

  const detectFull = (text: string): Candidate[] => {
    if (!enabled || typeof text !== "string" || text.length < 6) return [];
    const candidates: Candidate[] = [];
    if (text.length <= MAX_SCAN_CHARS) {
      scanWindow(text, 0, extras, allow, candidates);
    } else {
      for (let from = 0; from < text.length; from += MAX_SCAN_CHARS - SCAN_OVERLAP) {
        scanWindow(text.slice(from, from + MAX_SCAN_CHARS), from, extras, allow, candidates);
        if (from + MAX_SCAN_CHARS >= text.length) break;
      }
    }
    return resolve(candidates);
  };

  return {
    warnings,
    detect(text: string): SecretFinding[] {
      return detectFull(text).map(({ kind, start, end }) => ({ kind, start, end }));
    },
    redact(text: string): RedactionResult {
      const spans = detectFull(text);
      if (spans.length === 0) return { text, found: [] };
      let out = "";
      let at = 0;
      const found: SecretKind[] = [];
      for (const span of spans) {
        out += text.slice(at, span.start) + span.replacement;
        at = span.end;
        if (!found.includes(span.kind)) found.push(span.kind);
      }
      out += text.slice(at);
      return { text: out, found };
    },
  };
}

let defaultScanner: SecretScanner | undefined;
function builtIn(): SecretScanner {
  defaultScanner ??= compileSecretScanner();
  return defaultScanner;
}

/** Secrets in `text` found by the built-in kinds (or by a scanner compiled from `options`). */
export function detectSecrets(text: string, options?: SecretScannerOptions): SecretFinding[] {
  return (options ? compileSecretScanner(options) : builtIn()).detect(text);
}

/** `text` with every secret replaced by its kind's token, and the kinds that were replaced. */
export function redactSecrets(text: string, options?: SecretScannerOptions): RedactionResult {
  return (options ? compileSecretScanner(options) : builtIn()).redact(text);
}

/** "an OpenAI API key and a JWT" — kinds only, never a value. */
export function describeSecretKinds(kinds: readonly SecretKind[]): string {
  const labels = [...new Set(kinds)].map((k) => SECRET_KIND_LABELS[k]);
  if (labels.length <= 1) return labels[0] ?? "a secret";
  return `${labels.slice(0, -1).join(", ")} and ${labels[labels.length - 1]}`;
}

/** Redacts every string inside a JSON-like value (objects, arrays), leaving keys and other types. */
export function redactDeep<T>(value: T, redact: (text: string) => string, depth = 0): T {
  if (depth > 64) return value;
  if (typeof value === "string") return redact(value) as unknown as T;
  if (Array.isArray(value)) {
    let changed = false;
    const out = value.map((v) => {
      const r = redactDeep(v, redact, depth + 1);
      if (r !== v) changed = true;
      return r;
    });
    return (changed ? out : value) as unknown as T;
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const r = redactDeep(v, redact, depth + 1);
      if (r !== v) changed = true;
      out[k] = r;
    }
    return (changed ? out : value) as T;
  }
  return value;
}
