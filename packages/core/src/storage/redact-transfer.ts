import type { Config } from "../schemas/config.js";
import { redactCounting, tallyTotal, type SecretTally } from "../operations/secret-guard.js";
import type { StoreSection, StoreTransfer } from "./transfer.js";

export interface RedactingTransfer extends StoreTransfer {
  /** Secrets redacted so far, by kind (each section counted once, however often it is read). */
  tally(): { total: number; byKind: SecretTally };
}

/**
 * A source for `cm storage migrate` whose sections come out with every secret redacted (issue 21:
 * migrations redact and report instead of failing). The copy and the verification both read
 * through it, so the target is compared with the redacted source. Writes pass through unchanged.
 */
export function redactingTransfer(source: StoreTransfer, config: Pick<Config, "sanitization">): RedactingTransfer {
  const perSection = new Map<string, SecretTally>();
  return {
    listSections: () => source.listSections(),
    writeSection: (section) => source.writeSection(section),
    async readSection(key: string): Promise<StoreSection> {
      const section = await source.readSection(key);
      const tally: SecretTally = {};
      const { key: k, kind, ...rest } = section as StoreSection & Record<string, unknown>;
      const clean = redactCounting(config, rest, tally);
      perSection.set(key, tally);
      return clean === rest ? section : ({ key: k, kind, ...clean } as StoreSection);
    },
    tally() {
      const byKind: SecretTally = {};
      for (const t of perSection.values()) for (const [kind, n] of Object.entries(t)) byKind[kind as keyof SecretTally] = (byKind[kind as keyof SecretTally] ?? 0) + (n ?? 0);
      return { total: tallyTotal(byKind), byKind };
    },
  };
}
