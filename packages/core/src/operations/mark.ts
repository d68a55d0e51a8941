import * as z from "zod";
import { AppError } from "../errors.js";
import { applyFeedback } from "../domain/feedback.js";
import { getEffectiveScore } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import { MATURITIES } from "../schemas/playbook.js";
import { locateBullet, requireBulletIndex, requireNonEmpty, mutatePlaybookJournaled } from "./shared.js";
import { requireWithinLimit } from "../domain/input-limits.js";
import { refuseSecrets } from "./secret-guard.js";
import { lazySchema } from "../schemas/lazy.js";
import type { FlatFields } from "../schemas/flat-object.js";

export const MarkInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  helpful: z.boolean().optional(),
  harmful: z.boolean().optional(),
  reason: z.string().optional(),
  session: z.string().optional(),
}));

/** MarkInputSchema as a table (Operation.inputFields). */
export const MARK_INPUT_FIELDS: FlatFields = {
  bulletId: ["string", false],
  helpful: ["boolean", true],
  harmful: ["boolean", true],
  reason: ["string", true],
  session: ["string", true],
};

export const MarkResultSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  type: z.enum(["helpful", "harmful"]),
  newState: z.enum(MATURITIES),
  effectiveScore: z.number(),
}));
export type MarkResult = z.output<typeof MarkResultSchema>;

/**
 * `cm mark <id> --helpful|--harmful`: records one feedback event on a bullet, in the layer that
 * holds it (reference §1.5.4). The read-modify-write happens under the store's lock, so concurrent
 * marks never lose each other's events.
 */
export const markOperation = defineOperation({
  name: "cm_feedback",
  command: "mark",
  description: "Record helpful or harmful feedback on a playbook rule.",
  input: MarkInputSchema,
  inputFields: MARK_INPUT_FIELDS,
  output: MarkResultSchema,
  async run(deps, input): Promise<MarkResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    requireWithinLimit("reason", input.reason, "reasonBytes", deps.config, "Give the reason in a sentence.");
    refuseSecrets(deps.config, "reason", input.reason);
    if (Boolean(input.helpful) === Boolean(input.harmful)) {
      throw new AppError("MISSING_REQUIRED", "Must specify exactly one of --helpful or --harmful", {
        hint: `${deps.cliName} mark ${bulletId} --helpful`,
        details: { missing: "helpful|harmful" },
      });
    }
    const type = input.helpful ? "helpful" : "harmful";
    const located = await locateBullet(deps, bulletId);
    if (!located) {
      const { repoPlaybook, globalPlaybook } = deps.store.locations;
      const where = repoPlaybook !== null ? `${repoPlaybook} or ${globalPlaybook}` : globalPlaybook;
      throw new AppError("BULLET_NOT_FOUND", `Bullet ${bulletId} not found in ${where}.`, { details: { bulletId } });
    }
    return mutatePlaybookJournaled(
      deps,
      located.layer,
      { operation: "feedback", ...(input.session !== undefined ? { source: input.session } : {}), ...(input.reason !== undefined ? { reason: input.reason } : {}) },
      (playbook) => {
      const index = requireBulletIndex(playbook, bulletId, `Bullet ${bulletId} not found in ${located.path}.`);
      const now = deps.clock.now();
      const updated = applyFeedback(playbook.bullets[index]!, {
        type,
        ...(input.reason !== undefined ? { reason: input.reason } : {}),
        ...(input.session !== undefined ? { sessionPath: input.session } : {}),
        now,
        config: deps.config,
      });
      playbook.bullets[index] = updated;
      return {
        bulletId,
        type,
        newState: updated.maturity,
        effectiveScore: getEffectiveScore(updated, now, deps.config),
      };
    }, { bulletIds: [bulletId] });
  },
});
