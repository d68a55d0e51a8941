import * as z from "zod";
import { defineOperation } from "../operation.js";
import { isActiveBullet, isOutsideValidity, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const BulletOutputSchema = lazySchema(() => z.looseObject({ id: z.string(), content: z.string(), category: z.string() }));

export const PlaybookListInputSchema = lazySchema(() => z.object({
  /** Exact, case-sensitive category filter. */
  category: z.string().optional(),
  /** Also deprecated rules and rules outside their validity window (hidden by default). */
  all: z.boolean().optional(),
}));

export const PlaybookListResultSchema = lazySchema(() => z.object({ bullets: z.array(BulletOutputSchema) }));

/**
 * `cm playbook list`: active bullets of the merged playbook (reference §1.5.5), without those
 * outside their validity window; `all` lists every bullet, deprecated and expired included.
 */
export const playbookListOperation = defineOperation({
  name: "playbook_list",
  command: "playbook:list",
  description: "List the active rules of the merged (global + repository) playbook.",
  input: PlaybookListInputSchema,
  output: PlaybookListResultSchema,
  async run(deps, input): Promise<{ bullets: Bullet[] }> {
    const playbook = await loadMergedPlaybook(deps);
    const now = deps.clock.now();
    const bullets = playbook.bullets.filter(
      (b) =>
        (input.all || (isActiveBullet(b) && !isOutsideValidity(b, now))) &&
        (input.category === undefined || b.category === input.category),
    );
    return { bullets };
  },
});
