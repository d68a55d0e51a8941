import type { FixableIssue, FixResult, HealthCheck, OperationDeps } from "../ports.js";
import type { StoreSection } from "../storage/transfer.js";
import { redactCounting, tallyTotal, type SecretTally } from "./secret-guard.js";

/**
 * `cm doctor`'s secrets check (issue 21): every section of the store (both layers' playbooks,
 * journals, blocked logs, outcomes, context logs, other logs, diaries, processed logs, onboarding
 * state, cost ledger) is read through the store's transfer interface, so the YAML and the SQLite
 * store are scanned alike. Only counts by kind are reported, never a value. The fix redacts every
 * section that holds a secret, after the host has backed up the store's files.
 */

export const SECRETS_CATEGORY = "Secrets";
export const REDACT_SECRETS_FIX = "redact-secrets";

export interface StoredSecretsScan {
  total: number;
  byKind: SecretTally;
  /** Section keys (e.g. `global/playbook`, `repo/journal`, `diaries`) with their counts. */
  sections: Array<{ key: string; count: number }>;
  /** Sections that could not be read. */
  unreadable: string[];
}

function payloadOf(section: StoreSection): { head: { key: string; kind: string }; rest: Record<string, unknown> } {
  const { key, kind, ...rest } = section as StoreSection & Record<string, unknown>;
  return { head: { key, kind }, rest };
}

/** Counts the secrets in every store section; with `fix`, writes the redacted sections back. */
export async function scanStoredSecrets(deps: OperationDeps, fix = false): Promise<StoredSecretsScan | null> {
  const transfer = deps.store.transfer;
  if (!transfer) return null;
  const scan: StoredSecretsScan = { total: 0, byKind: {}, sections: [], unreadable: [] };
  // Scanning is detection regardless of `sanitization.enabled`: a disabled sanitizer still wants to know.
  const config = { sanitization: { ...deps.config.sanitization, enabled: true } };
  for (const key of await transfer.listSections()) {
    let section: StoreSection;
    try {
      section = await transfer.readSection(key);
    } catch {
      scan.unreadable.push(key);
      continue;
    }
    const tally: SecretTally = {};
    const { head, rest } = payloadOf(section);
    const clean = redactCounting(config, rest, tally);
    const count = tallyTotal(tally);
    if (count === 0) continue;
    scan.total += count;
    scan.sections.push({ key, count });
    for (const [kind, n] of Object.entries(tally)) scan.byKind[kind as keyof SecretTally] = (scan.byKind[kind as keyof SecretTally] ?? 0) + (n ?? 0);
    if (fix) await transfer.writeSection({ ...head, ...clean } as StoreSection);
  }
  return scan;
}

function byKindText(byKind: SecretTally): string {
  return Object.entries(byKind)
    .sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0))
    .map(([kind, n]) => `${kind} ${n}`)
    .join(", ");
}

/** The doctor's check and, when secrets are stored, the fixable issue. */
export async function storedSecretsCheck(deps: OperationDeps): Promise<{ check: HealthCheck; issue?: FixableIssue }> {
  const item = "Stored data";
  let scan: StoredSecretsScan | null;
  try {
    scan = await scanStoredSecrets(deps);
  } catch (error) {
    return { check: { category: SECRETS_CATEGORY, item, status: "warn", message: `Could not scan the store for secrets: ${error instanceof Error ? error.message : String(error)}` } };
  }
  if (scan === null) return { check: { category: SECRETS_CATEGORY, item, status: "warn", message: "This store cannot be scanned for secrets (no section access)" } };
  const details = { total: scan.total, byKind: scan.byKind, sections: scan.sections, ...(scan.unreadable.length > 0 ? { unreadable: scan.unreadable } : {}) };
  if (scan.total === 0) {
    return { check: { category: SECRETS_CATEGORY, item, status: "pass", message: "No secrets found in the playbooks, journals, logs or diaries", details } };
  }
  return {
    check: {
      category: SECRETS_CATEGORY,
      item,
      status: "warn",
      message: `${scan.total} secret${scan.total === 1 ? "" : "s"} stored in ${scan.sections.length} section${scan.sections.length === 1 ? "" : "s"} (${byKindText(scan.byKind)}); values are not shown`,
      details,
    },
    issue: {
      id: REDACT_SECRETS_FIX,
      description: `Redact ${scan.total} stored secret${scan.total === 1 ? "" : "s"} in ${scan.sections.map((s) => s.key).join(", ")} (the store's files are backed up first)`,
      category: SECRETS_CATEGORY,
      severity: "warn",
      safety: "safe",
    },
  };
}

/** Applies the fix: backs the store up (the host's job), then redacts every section holding a secret. */
export async function redactStoredSecrets(deps: OperationDeps): Promise<FixResult> {
  const backup = deps.runtimeReport?.backupStore;
  if (!backup) {
    return { id: REDACT_SECRETS_FIX, success: false, message: "This host cannot back the store up, so stored secrets were not redacted" };
  }
  const backups = await backup("secrets");
  const scan = await scanStoredSecrets(deps, true);
  if (scan === null) return { id: REDACT_SECRETS_FIX, success: false, message: "This store cannot be rewritten section by section", backups };
  return {
    id: REDACT_SECRETS_FIX,
    success: true,
    message: `Redacted ${scan.total} secret${scan.total === 1 ? "" : "s"} in ${scan.sections.length} section${scan.sections.length === 1 ? "" : "s"} (${byKindText(scan.byKind)})`,
    backups,
  };
}
