import { z } from "zod";
import { defineOperation } from "../operation.js";
import { isActiveBullet, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";

export const BulletOutputSchema = z.looseObject({ id: z.string(), content: z.string(), category: z.string() });

export const PlaybookListInputSchema = z.object({
  /** Exact, case-sensitive category filter. */
  category: z.string().optional(),
});

export const PlaybookListResultSchema = z.object({ bullets: z.array(BulletOutputSchema) });

/** `cm playbook list`: active bullets of the merged playbook (reference §1.5.5). */
export const playbookListOperation = defineOperation({
  name: "playbook_list",
  command: "playbook:list",
  description: "List the active rules of the merged (global + repository) playbook.",
  input: PlaybookListInputSchema,
  output: PlaybookListResultSchema,
  async run(deps, input): Promise<{ bullets: Bullet[] }> {
    const playbook = await loadMergedPlaybook(deps);
    const bullets = playbook.bullets.filter(
      (b) => isActiveBullet(b) && (input.category === undefined || b.category === input.category),
    );
    return { bullets };
  },
});
