import { AppError } from "../errors.js";
import { compileSecretScanner, describeSecretKinds, labelLooksRandom, redactDeep, type SecretKind, type SecretScanner } from "../domain/secrets.js";
import type { Config } from "../schemas/config.js";

/**
 * Refusal of secrets on the way in (issue 21): text that becomes part of the playbook (rule content,
 * category, tags, evidence, feedback and forget reasons) is checked before anything is written; a
 * secret stops the operation with SECRET_DETECTED (exit 2). The message names the kind only.
 */

const scanners = new WeakMap<object, SecretScanner>();

/** The scanner of `config.sanitization` (compiled once per config object). */
export function secretScannerFor(config: Pick<Config, "sanitization">): SecretScanner {
  const key = config.sanitization as object;
  let scanner = scanners.get(key);
  if (!scanner) {
    scanner = compileSecretScanner(config.sanitization);
    scanners.set(key, scanner);
  }
  return scanner;
}

/** Redacts `text` with the configured scanner (identity when sanitization is disabled). */
export function redactFor(config: Pick<Config, "sanitization">, text: string): string {
  if (typeof text !== "string" || text === "") return text;
  return secretScannerFor(config).redact(text).text;
}

function stringsOf(value: unknown, out: string[], depth = 0): void {
  if (depth > 16 || out.length > 10_000) return;
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) stringsOf(v, out, depth + 1);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value as Record<string, unknown>)) stringsOf(v, out, depth + 1);
}

/** The kinds of secret in `value` (a string, or strings inside arrays/objects). */
export function secretKindsIn(config: Pick<Config, "sanitization">, value: unknown): SecretKind[] {
  if (!config.sanitization.enabled) return [];
  const strings: string[] = [];
  stringsOf(value, strings);
  const scanner = secretScannerFor(config);
  const kinds: SecretKind[] = [];
  for (const s of strings) for (const f of scanner.detect(s)) if (!kinds.includes(f.kind)) kinds.push(f.kind);
  return kinds;
}

export const SECRET_HINT = "Replace it with a placeholder such as <API_KEY>; cm never stores secrets";

/**
 * Throws SECRET_DETECTED when a label (tag, category) holds a random-looking token: labels are
 * short words, so a 20+ character high-entropy string there is treated as a secret.
 */
export function refuseRandomLabels(config: Pick<Config, "sanitization">, field: string, labels: ReadonlyArray<string | undefined>): void {
  if (!config.sanitization.enabled) return;
  if (!labels.some((l) => l !== undefined && labelLooksRandom(l))) return;
  throw new AppError("SECRET_DETECTED", `The ${field} contains a secret (${describeSecretKinds(["high_entropy"])}). Nothing was written.`, {
    hint: SECRET_HINT,
    details: { field, kinds: ["high_entropy"] },
  });
}

/** Throws SECRET_DETECTED when `value` (named `field` in the message) holds a secret. */
export function refuseSecrets(config: Pick<Config, "sanitization">, field: string, value: unknown): void {
  const kinds = secretKindsIn(config, value);
  if (kinds.length === 0) return;
  throw new AppError("SECRET_DETECTED", `The ${field} contains a secret (${describeSecretKinds(kinds)}). Nothing was written.`, {
    hint: SECRET_HINT,
    details: { field, kinds },
  });
}

/** Counts of redacted secrets by kind (never values), as imports, migrations and doctor report them. */
export type SecretTally = Partial<Record<SecretKind, number>>;

/**
 * Redacts every string inside `value` (keys kept), adding what was found to `tally`. Returns the
 * same object when nothing was found.
 */
export function redactCounting<T>(config: Pick<Config, "sanitization">, value: T, tally: SecretTally): T {
  if (!config.sanitization.enabled) return value;
  const scanner = secretScannerFor(config);
  return redactDeep(value, (text) => {
    const findings = scanner.detect(text);
    if (findings.length === 0) return text;
    for (const f of findings) tally[f.kind] = (tally[f.kind] ?? 0) + 1;
    return scanner.redact(text).text;
  });
}

export function tallyTotal(tally: SecretTally): number {
  return Object.values(tally).reduce((a, b) => a + (b ?? 0), 0);
}
