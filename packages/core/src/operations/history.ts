import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { Layer } from "../ports.js";
import { JournalEventSchema, type JournalEvent } from "../schemas/records.js";
import { locateBullet, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const HistoryInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
}));

export const HistoryResultSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  /** Where the bullet lives now; null when it was deleted (its events remain). */
  location: z.enum(["global", "repo"]).nullable(),
  /** The bullet's audit-journal events from both layers, oldest first. */
  events: z.array(JournalEventSchema),
  /** Set when the bullet exists but has no events (it predates the journal, e.g. written by the original cm). */
  note: z.string().optional(),
}));
export type HistoryResult = z.output<typeof HistoryResultSchema>;

/**
 * `cm history <bulletId>`: every recorded change of one rule (add, feedback, edits, deprecation,
 * forget, undo, import, curation), from the audit journal beside each playbook.
 */
export const historyOperation = defineOperation({
  name: "memory_history",
  command: "history",
  description: "List the audit-journal events of one playbook rule, oldest first.",
  input: HistoryInputSchema,
  output: HistoryResultSchema,
  async run(deps, input): Promise<HistoryResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    const layers: Layer[] = deps.store.locations.repoDir !== null ? ["global", "repo"] : ["global"];
    const events: JournalEvent[] = [];
    for (const layer of layers) {
      for (const event of await deps.store.readJournal(layer)) if (event.bulletId === bulletId) events.push(event);
    }
    // Stable: within one timestamp the file order (which is the write order) is kept.
    events.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    const located = await locateBullet(deps, bulletId);
    if (events.length === 0 && !located) {
      throw new AppError("BULLET_NOT_FOUND", `Bullet ${bulletId} not found and has no recorded history`, {
        hint: `List rules with: ${deps.cliName} playbook list --json`,
        details: { bulletId },
      });
    }
    return {
      bulletId,
      location: located?.layer ?? null,
      events,
      ...(events.length === 0 ? { note: "No recorded changes: this rule predates the audit journal." } : {}),
    };
  },
});
