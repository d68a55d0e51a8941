import * as z from "zod";
import { AppError } from "../errors.js";
import { deprecateBullet, newBullet } from "../domain/curator.js";
import { defineOperation } from "../operation.js";
import { refuseSecrets } from "./secret-guard.js";
import { locateBullet, mutatePlaybookJournaled, requireBulletIndex, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const ForgetInputSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  reason: z.string().optional(),
  invert: z.boolean().optional(),
}));

export const ForgetResultSchema = lazySchema(() => z.object({
  bulletId: z.string(),
  action: z.literal("forgotten"),
  inverted: z.boolean(),
  antiPatternId: z.string().optional(),
}));
export type ForgetResult = z.output<typeof ForgetResultSchema>;

/** Source session recorded on the anti-pattern `forget --invert` creates (reference §1.5.15). */
export const FORGET_SOURCE_SESSION = "forget-command";

/**
 * `cm forget <id> --reason <why>`: puts the rule on its layer's blocked log (so the merged view
 * keeps it out even if a reflection re-learns it), deprecates it, and with `invert` adds the
 * anti-pattern "AVOID: …" in its place (reference §1.5.15). `cm undo <id>` reverses it.
 */
export const forgetOperation = defineOperation({
  name: "memory_forget",
  command: "forget",
  description: "Forget a playbook rule: block it and deprecate it, optionally inverting it into an anti-pattern.",
  input: ForgetInputSchema,
  output: ForgetResultSchema,
  async run(deps, input): Promise<ForgetResult> {
    const bulletId = requireNonEmpty("bulletId", input.bulletId);
    const reason = input.reason?.trim() ?? "";
    if (reason === "") {
      throw new AppError("MISSING_REQUIRED", "Reason required for forget", {
        hint: `${deps.cliName} forget ${bulletId} --reason "why this rule is wrong"`,
        details: { missing: "reason", usage: `${deps.cliName} forget <bulletId> --reason <reason>` },
      });
    }
    refuseSecrets(deps.config, "reason", reason);
    const located = await locateBullet(deps, bulletId);
    if (!located) throw new AppError("BULLET_NOT_FOUND", `Bullet ${bulletId} not found`, { details: { bulletId } });

    const now = deps.clock.now();
    const nowIso = now.toISOString();
    const notFound = `Bullet ${bulletId} not found`;
    const { antiPatternId, content } = await mutatePlaybookJournaled(deps, located.layer, { operation: "forget", reason }, (playbook) => {
      const index = requireBulletIndex(playbook, bulletId, notFound);
      const original = playbook.bullets[index]!;
      let inverted: string | undefined;
      if (input.invert) {
        const anti = newBullet(
          {
            content: `AVOID: ${original.content.trim().replace(/[.\s]+$/, "")}. ${reason}`,
            category: original.category,
            scope: original.scope,
            workspace: original.workspace,
            type: "anti-pattern",
            isNegative: true,
            kind: "anti_pattern",
            tags: [...original.tags, "inverted"],
            sourceSession: FORGET_SOURCE_SESSION,
            sourceAgents: ["unknown"],
          },
          { config: deps.config, now, ids: deps.ids },
        );
        playbook.bullets.push(anti);
        inverted = anti.id;
      }
      playbook.bullets[index] = deprecateBullet(original, reason, nowIso, inverted);
      return { antiPatternId: inverted, content: original.content };
    }, { bulletIds: [bulletId] });
    // Blocked after the deprecation is on disk: a failure here leaves a deprecated rule (still out
    // of context), never a blocked entry for a rule that was not forgotten.
    await deps.store.appendBlocked(located.layer, [
      { id: bulletId, content, reason, forgottenAt: nowIso },
    ]);
    return {
      bulletId,
      action: "forgotten",
      inverted: antiPatternId !== undefined,
      ...(antiPatternId !== undefined ? { antiPatternId } : {}),
    };
  },
});
