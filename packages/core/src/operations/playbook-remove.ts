import * as z from "zod";
import { AppError } from "../errors.js";
import { deprecateBullet } from "../domain/curator.js";
import { defineOperation } from "../operation.js";
import type { OperationDeps } from "../ports.js";
import type { JournalEvent } from "../schemas/records.js";
import { sha256Hex } from "../domain/sha256.js";
import { refuseSecrets } from "./secret-guard.js";
import { locateBullet, preview, requireBulletIndex, requireNonEmpty, mutatePlaybookJournaled } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const PlaybookRemoveInputSchema = lazySchema(() => z.object({
  id: z.string(),
  hard: z.boolean().optional(),
  yes: z.boolean().optional(),
  dryRun: z.boolean().optional(),
  reason: z.string().optional(),
}));

const PlanSchema = lazySchema(() => z.object({
  plan: z.object({
    dryRun: z.literal(true),
    action: z.enum(["deprecate", "delete"]),
    bulletId: z.string(),
    path: z.string(),
    preview: z.string(),
    category: z.string(),
    helpfulCount: z.number(),
    harmfulCount: z.number(),
    wouldChange: z.string(),
    applyCommand: z.string(),
  }),
}));
const DeprecatedSchema = lazySchema(() => z.object({ id: z.string(), action: z.literal("deprecated") }));
const DeletedSchema = lazySchema(() => z.object({
  id: z.string(),
  action: z.literal("deleted"),
  path: z.string(),
  preview: z.string(),
  /** Journal events of the rule whose text was purged (id, hashes and a SHA-256 of the content kept). */
  journalPurged: z.number().optional(),
}));

export const PlaybookRemoveResultSchema = lazySchema(() => z.union([PlanSchema, DeprecatedSchema, DeletedSchema]));
export type PlaybookRemoveResult = z.output<typeof PlaybookRemoveResultSchema>;

export const DEFAULT_REMOVE_REASON = "Removed via CLI";

/**
 * `cm playbook remove <id>`: deprecates a bullet (recoverable), or with `--hard --yes` deletes it
 * from its layer's file (reference §1.5.5).
 */
export const playbookRemoveOperation = defineOperation({
  name: "playbook_remove",
  command: "playbook:remove",
  description: "Deprecate a playbook rule, or delete it permanently with hard + yes.",
  input: PlaybookRemoveInputSchema,
  output: PlaybookRemoveResultSchema,
  async run(deps, input): Promise<PlaybookRemoveResult> {
    const id = requireNonEmpty("id", input.id);
    const located = await locateBullet(deps, id);
    if (!located) {
      throw new AppError("BULLET_NOT_FOUND", `Bullet ${id} not found`, { details: { bulletId: id } });
    }
    const cli = deps.cliName;
    const reason = input.reason?.trim() || undefined;
    refuseSecrets(deps.config, "reason", reason);
    if (input.dryRun) {
      const b = located.bullet;
      return {
        plan: {
          dryRun: true,
          action: input.hard ? "delete" : "deprecate",
          bulletId: id,
          path: located.path,
          preview: preview(b.content),
          category: b.category,
          helpfulCount: b.helpfulCount,
          harmfulCount: b.harmfulCount,
          wouldChange: input.hard
            ? "Bullet would be permanently removed from playbook"
            : "Bullet would be marked as deprecated (can be restored with cm undo)",
          applyCommand: input.hard
            ? `${cli} playbook remove ${id} --hard --yes`
            : `${cli} playbook remove ${id}${reason ? ` --reason ${JSON.stringify(reason)}` : ""}`,
        },
      };
    }
    if (input.hard && !input.yes) {
      throw new AppError("MISSING_REQUIRED", "Confirmation required for --hard deletion", {
        hint: `${cli} playbook remove ${id} --hard --yes`,
        details: { missing: "confirmation", bulletId: id },
      });
    }
    const notFound = `Bullet ${id} not found`;
    if (input.hard) {
      const purge = { supported: false, purged: 0 };
      const removedContent = await mutatePlaybookJournaled(deps, located.layer, { operation: "remove", ...(reason ? { reason } : {}) }, (playbook, tx) => {
        const index = requireBulletIndex(playbook, id, notFound);
        const [removed] = playbook.bullets.splice(index, 1);
        // The rule's history loses its text in the same locked write (the remove event included).
        if (tx.rewriteJournal !== undefined) {
          purge.supported = true;
          const contentSha256 = sha256Hex(removed!.content);
          tx.rewriteJournal(id, (event) => {
            const next = purgedEvent(event, contentSha256);
            if (next !== event) purge.purged++;
            return next;
          });
        }
        return removed!.content;
      }, { bulletIds: [id] });
      return { id, action: "deleted", path: located.path, preview: preview(removedContent), ...(purge.supported ? { journalPurged: purge.purged } : {}) };
    }
    await mutatePlaybookJournaled(deps, located.layer, { operation: "remove", reason: reason ?? DEFAULT_REMOVE_REASON }, (playbook) => {
      const index = requireBulletIndex(playbook, id, notFound);
      playbook.bullets[index] = deprecateBullet(playbook.bullets[index]!, reason ?? DEFAULT_REMOVE_REASON, deps.clock.now().toISOString());
    }, { bulletIds: [id] });
    return { id, action: "deprecated" };
  },
});

/**
 * `remove --hard` leaves no copy of the rule's text behind (issue 21): its journal events keep their
 * ids, operations, times and content hashes, and gain `contentSha256` (SHA-256 of the deleted text),
 * but lose the `before`/`after` field snapshots that held the text. An event already purged is
 * returned as it is.
 */
function purgedEvent(event: JournalEvent, contentSha256: string): JournalEvent {
  if (event.before === undefined && event.after === undefined && event.purged === true) return event;
  const { before: _before, after: _after, ...rest } = event;
  return { ...rest, purged: true, contentSha256 };
}
