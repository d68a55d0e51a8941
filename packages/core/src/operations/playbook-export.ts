import * as z from "zod";
import { redactDeep } from "../domain/secrets.js";
import { redactFor } from "./secret-guard.js";
import { defineOperation } from "../operation.js";
import { isActiveBullet, type Bullet } from "../schemas/playbook.js";
import { loadMergedPlaybook } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

export const PlaybookExportInputSchema = lazySchema(() => z.object({
  /** Include deprecated and retired bullets. */
  all: z.boolean().optional(),
}));

export const PlaybookExportResultSchema = lazySchema(() => z.looseObject({
  schema_version: z.number(),
  name: z.string(),
  description: z.string(),
  metadata: z.looseObject({ exportedAt: z.string(), exportedBulletCount: z.number() }),
  deprecatedPatterns: z.array(z.looseObject({ pattern: z.string() })),
  bullets: z.array(z.looseObject({ id: z.string(), content: z.string() })),
}));
export type PlaybookExport = z.output<typeof PlaybookExportResultSchema>;

/**
 * `cm playbook export`: the merged playbook as a shareable document. Session paths and agent names
 * (`sourceSessions`, `sourceAgents`) are left out, as the original does, so an export does not
 * reveal where rules were learned.
 */
export const playbookExportOperation = defineOperation({
  name: "playbook_export",
  command: "playbook:export",
  description: "Export the merged playbook (active rules, or all with `all`).",
  input: PlaybookExportInputSchema,
  output: PlaybookExportResultSchema,
  async run(deps, input): Promise<PlaybookExport> {
    // An export leaves cm: secrets stored by an older version are redacted (issue 21).
    const playbook = redactDeep(await loadMergedPlaybook(deps), (text) => redactFor(deps.config, text));
    const bullets = playbook.bullets.filter((b) => input.all || isActiveBullet(b)).map(stripProvenance);
    return {
      schema_version: playbook.schema_version,
      name: playbook.name,
      description: playbook.description,
      metadata: { ...playbook.metadata, exportedAt: deps.clock.now().toISOString(), exportedBulletCount: bullets.length },
      deprecatedPatterns: playbook.deprecatedPatterns,
      bullets,
    };
  },
});

type ExportedBullet = Pick<Bullet, "id" | "content"> & Record<string, unknown>;

function stripProvenance(bullet: Bullet): ExportedBullet {
  const copy: ExportedBullet = { ...bullet };
  delete copy.sourceSessions;
  delete copy.sourceAgents;
  return copy;
}
