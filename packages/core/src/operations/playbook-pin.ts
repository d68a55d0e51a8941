import * as z from "zod";
import { AppError } from "../errors.js";
import { requireWithinLimit } from "../domain/input-limits.js";
import { defineOperation } from "../operation.js";
import { refuseRandomLabels, refuseSecrets } from "./secret-guard.js";
import { locateBullet, mutatePlaybookJournaled, requireBulletIndex, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm playbook pin|unpin <id>` and `cm playbook category <id> <category>` (beyond the original,
 * which only had the `pinned`/`pinnedReason` fields): edits made in the layer that holds the rule,
 * under the store's lock, journalled as `update` events with the fields' before/after values.
 */

export const PlaybookPinInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  /** true pins (the curator then never demotes or auto-deprecates the rule), false unpins. */
  pinned: z.boolean(),
  reason: z.string().optional(),
}));

export const PlaybookPinResultSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  pinned: z.boolean(),
  pinnedReason: z.string().optional(),
  /** false when the rule already was in the requested state (nothing written). */
  changed: z.boolean(),
}));
export type PlaybookPinResult = z.output<typeof PlaybookPinResultSchema>;

function notFound(deps: { cliName: string }, bulletId: string): AppError {
  return new AppError("BULLET_NOT_FOUND", `Bullet ${bulletId} not found`, {
    hint: `List the rules with: ${deps.cliName} playbook list --all`,
    details: { bulletId },
  });
}

export const playbookPinOperation = defineOperation({
  name: "playbook_pin",
  command: "playbook:pin",
  description: "Pin a playbook rule (the curator never demotes or auto-deprecates a pinned rule), or unpin it.",
  input: PlaybookPinInputSchema,
  output: PlaybookPinResultSchema,
  async run(deps, input): Promise<PlaybookPinResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    const reason = input.reason?.trim() || undefined;
    if (!input.pinned && reason !== undefined) {
      throw new AppError("INVALID_INPUT", "A reason is given only when pinning.", {
        hint: `${deps.cliName} playbook unpin ${bulletId}`,
        details: { field: "reason" },
      });
    }
    requireWithinLimit("reason", reason, "reasonBytes", deps.config, "Give the reason in a sentence.");
    refuseSecrets(deps.config, "reason", reason);
    const located = await locateBullet(deps, bulletId);
    if (!located) throw notFound(deps, bulletId);
    return mutatePlaybookJournaled(deps, located.layer, { operation: "update", ...(reason !== undefined ? { reason } : {}) }, (playbook) => {
      const index = requireBulletIndex(playbook, bulletId, `Bullet ${bulletId} not found`);
      const bullet = playbook.bullets[index]!;
      const nextReason = input.pinned ? (reason ?? bullet.pinnedReason) : undefined;
      const changed = bullet.pinned !== input.pinned || bullet.pinnedReason !== nextReason;
      if (changed) {
        const updated = { ...bullet, pinned: input.pinned, updatedAt: deps.clock.now().toISOString() };
        if (nextReason !== undefined) updated.pinnedReason = nextReason;
        else delete updated.pinnedReason;
        playbook.bullets[index] = updated;
      }
      return { bulletId, pinned: input.pinned, ...(nextReason !== undefined ? { pinnedReason: nextReason } : {}), changed };
    }, { bulletIds: [bulletId] });
  },
});

export const PlaybookCategoryInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  category: z.string(),
}));

export const PlaybookCategoryResultSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  previousCategory: z.string(),
  category: z.string(),
  /** false when the rule already had this category (nothing written). */
  changed: z.boolean(),
}));
export type PlaybookCategoryResult = z.output<typeof PlaybookCategoryResultSchema>;

export const playbookCategoryOperation = defineOperation({
  name: "playbook_category",
  command: "playbook:category",
  description: "Change the category of a playbook rule.",
  input: PlaybookCategoryInputSchema,
  output: PlaybookCategoryResultSchema,
  async run(deps, input): Promise<PlaybookCategoryResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    const category = requireNonEmpty("category", input.category, `${deps.cliName} playbook category ${bulletId} testing`);
    requireWithinLimit("category", category, "categoryBytes", deps.config, "Use a short category name (testing, git, security).");
    refuseSecrets(deps.config, "category", category);
    refuseRandomLabels(deps.config, "category", [category]);
    const located = await locateBullet(deps, bulletId);
    if (!located) throw notFound(deps, bulletId);
    return mutatePlaybookJournaled(deps, located.layer, { operation: "update" }, (playbook) => {
      const index = requireBulletIndex(playbook, bulletId, `Bullet ${bulletId} not found`);
      const bullet = playbook.bullets[index]!;
      const previousCategory = bullet.category;
      const changed = previousCategory !== category;
      if (changed) playbook.bullets[index] = { ...bullet, category, updatedAt: deps.clock.now().toISOString() };
      return { bulletId, previousCategory, category, changed };
    }, { bulletIds: [bulletId] });
  },
});
