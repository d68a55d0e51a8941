import type { Layer, LogName, CostEntry, CostTotals } from "../ports.js";
import type { Playbook } from "../schemas/playbook.js";
import type { DiaryEntry, JournalEvent, OnboardingState, ProcessedSession } from "../schemas/records.js";

/**
 * Moving data between stores (`cm storage migrate`): a store's content as independent sections.
 * Each section is read from the source and written to the target as a whole, replacing what the
 * target held for it, so a migration can be interrupted and run again: sections already copied
 * are skipped (resumable), a section copied twice ends the same (idempotent). A section holds
 * records as the port reads them; lines a store cannot parse are counted in `skipped`, never
 * invented.
 */
export type StoreSection =
  | { key: string; kind: "playbook"; layer: Layer; playbook: Playbook | null }
  | { key: string; kind: "journal"; layer: Layer; events: JournalEvent[]; skipped: number }
  /** The blocked log and the legacy toxic log, each entry as its stored JSON object. */
  | { key: string; kind: "blocked"; layer: Layer; blocked: unknown[]; toxic: unknown[]; skipped: number }
  | { key: string; kind: "log"; layer: Layer; log: LogName; records: unknown[]; skipped: number }
  | { key: string; kind: "diaries"; entries: DiaryEntry[]; skipped: number }
  /** One processed-sessions log (`global`, `ws-<8 hex>`). */
  | { key: string; kind: "processed"; log: string; records: ProcessedSession[] }
  | { key: string; kind: "onboarding"; state: OnboardingState | null }
  /** The LLM cost ledger: entries by month (`YYYY-MM`) and the running totals (null when none). */
  | { key: string; kind: "costs"; months: Record<string, CostEntry[]>; totals: CostTotals | null; skipped: number };

export type StoreSectionKind = StoreSection["kind"];

/**
 * Implemented by stores that can take part in a migration. Section keys are stable strings such
 * as `global/playbook`, `repo/log/outcomes`, `diaries`, `processed/ws-1a2b3c4d`, `costs`.
 */
export interface StoreTransfer {
  /** Keys of every section this store holds data for (sections with no data may be omitted). */
  listSections(): Promise<string[]>;
  /** The section with this key (an empty one when the store holds nothing for it). */
  readSection(key: string): Promise<StoreSection>;
  /** Replaces the store's data for this section with the given one, atomically per section. */
  writeSection(section: StoreSection): Promise<void>;
}
