import * as z from "zod";
import { AppError } from "../errors.js";
import { getDecayedCounts, getEffectiveScore } from "../domain/scoring.js";
import { defineOperation } from "../operation.js";
import type { Bullet } from "../schemas/playbook.js";
import { BulletOutputSchema } from "./playbook-list.js";
import { loadMergedPlaybook, requireNonEmpty } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const PlaybookGetInputSchema = lazySchema(() => z.object({ id: z.string() }));

export const PlaybookGetResultSchema = lazySchema(() => z.object({
  bullet: BulletOutputSchema.extend({
    effectiveScore: z.number(),
    decayedHelpful: z.number(),
    decayedHarmful: z.number(),
    ageDays: z.number(),
  }),
}));
export type PlaybookGetResult = z.output<typeof PlaybookGetResultSchema>;

const DAY_MS = 86_400_000;

/** `cm playbook get <id>`: one bullet of the merged playbook (deprecated ones included) with its scores. */
export const playbookGetOperation = defineOperation({
  name: "playbook_get",
  command: "playbook:get",
  description: "Show one playbook rule with its scores.",
  input: PlaybookGetInputSchema,
  output: PlaybookGetResultSchema,
  async run(deps, input): Promise<PlaybookGetResult> {
    const id = requireNonEmpty("id", input.id);
    const playbook = await loadMergedPlaybook(deps);
    const bullet = playbook.bullets.find((b) => b.id === id);
    if (!bullet) {
      const suggestions = suggestIds(playbook.bullets, id);
      throw new AppError("BULLET_NOT_FOUND", `Bullet '${id}' not found`, {
        ...(suggestions.length > 0 ? { hint: `Did you mean: ${suggestions.join(", ")}?` } : {}),
        details: { bulletId: id, ...(suggestions.length > 0 ? { suggestions } : {}) },
      });
    }
    const now = deps.clock.now();
    const { decayedHelpful, decayedHarmful } = getDecayedCounts(bullet, now, deps.config);
    const created = Date.parse(bullet.createdAt);
    const ageDays = Number.isNaN(created) ? 0 : Math.max(0, Math.floor((now.getTime() - created) / DAY_MS));
    return {
      bullet: {
        ...bullet,
        effectiveScore: getEffectiveScore(bullet, now, deps.config),
        decayedHelpful,
        decayedHarmful,
        ageDays,
      },
    };
  },
});

/** Up to three ids that contain / are contained by the needle, then ids sharing its first three characters. */
export function suggestIds(bullets: Bullet[], needle: string): string[] {
  const lower = needle.toLowerCase();
  const out: string[] = [];
  const push = (id: string) => {
    if (out.length < 3 && !out.includes(id)) out.push(id);
  };
  for (const b of bullets) {
    const id = b.id.toLowerCase();
    if (id.includes(lower) || lower.includes(id)) push(b.id);
  }
  const prefix = lower.slice(0, 3);
  if (prefix.length === 3) for (const b of bullets) if (b.id.toLowerCase().startsWith(prefix)) push(b.id);
  return out;
}
