import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation, formatZodIssues } from "../operation.js";
import { BulletSchema, type Bullet } from "../schemas/playbook.js";
import { isPlainObject } from "../schemas/tolerant.js";
import { layerPath, mutatePlaybookJournaled } from "./shared.js";
import { redactCounting, tallyTotal, type SecretTally } from "./secret-guard.js";
import { lazySchema } from "../schemas/lazy.js";

export const PlaybookImportInputSchema = lazySchema(() => z.object({
  /** Absolute path of the imported file (reported back; the front end reads and parses it). */
  file: z.string(),
  /** The parsed content: a cm JSON envelope, an object with `bullets`, or a bare array of bullets. */
  data: z.unknown(),
  replace: z.boolean().optional(),
  repo: z.boolean().optional(),
}));

export const PlaybookImportResultSchema = lazySchema(() => z.object({
  file: z.string(),
  target: z.enum(["global", "repo"]),
  targetPath: z.string(),
  added: z.number(),
  skipped: z.number(),
  updated: z.number(),
  validationWarnings: z.array(z.string()).optional(),
  /** Secrets found in the imported rules and redacted before they were written (counts by kind). */
  secretsRedacted: z.object({ total: z.number(), byKind: z.record(z.string(), z.number()) }).optional(),
}));
export type PlaybookImportResult = z.output<typeof PlaybookImportResultSchema>;

/**
 * `cm playbook import <file>`: merges bullets from a file into the global (or, with `repo`, the
 * repository) playbook. Existing ids are skipped, or replaced with `replace` (reference §1.5.5).
 */
export const playbookImportOperation = defineOperation({
  name: "playbook_import",
  command: "playbook:import",
  description: "Import playbook rules from an exported file.",
  input: PlaybookImportInputSchema,
  output: PlaybookImportResultSchema,
  async run(deps, input): Promise<PlaybookImportResult> {
    const layer = input.repo ? "repo" : "global";
    if (layer === "repo" && deps.store.locations.repoDir === null) {
      throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
        hint: "cd into a git repository first",
      });
    }
    const items = extractBullets(input.data);
    if (items === null) {
      throw new AppError("INVALID_INPUT", "Invalid format: expected bullets array", {
        hint: "Import a file written by 'cm playbook export', an object with a 'bullets' array, or a JSON array of bullets.",
        details: { path: input.file },
      });
    }
    const nowIso = deps.clock.now().toISOString();
    const valid: Bullet[] = [];
    const errors: string[] = [];
    // Imports are not refused for a secret: it is redacted and counted (issue 21).
    const tally: SecretTally = {};
    items.forEach((item, index) => {
      const parsed = BulletSchema.safeParse(fillDefaults(item, nowIso, () => deps.ids.bulletId()));
      if (parsed.success) valid.push(redactCounting(deps.config, parsed.data, tally));
      else errors.push(`bullets[${index}]: ${formatZodIssues(parsed.error)}`);
    });
    if (valid.length === 0 && items.length > 0) {
      throw new AppError("VALIDATION_FAILED", "All bullets failed validation", {
        hint: "Each bullet needs at least 'content' and 'category' strings.",
        details: { errors, path: input.file },
      });
    }
    const counts = await mutatePlaybookJournaled(deps, layer, { operation: "import", source: input.file }, (playbook) => {
      const indexById = new Map(playbook.bullets.map((b, i) => [b.id, i] as const));
      let added = 0;
      let skipped = 0;
      let updated = 0;
      for (const bullet of valid) {
        const existing = indexById.get(bullet.id);
        if (existing === undefined) {
          indexById.set(bullet.id, playbook.bullets.length);
          playbook.bullets.push(bullet);
          added++;
        } else if (input.replace) {
          playbook.bullets[existing] = bullet;
          updated++;
        } else {
          skipped++;
        }
      }
      return { added, skipped, updated };
    });
    return {
      file: input.file,
      target: layer,
      targetPath: layerPath(deps, layer),
      ...counts,
      ...(errors.length > 0 ? { validationWarnings: errors } : {}),
      ...(tallyTotal(tally) > 0 ? { secretsRedacted: { total: tallyTotal(tally), byKind: tally as Record<string, number> } } : {}),
    };
  },
});

function extractBullets(data: unknown): unknown[] | null {
  if (Array.isArray(data)) return data;
  if (!isPlainObject(data)) return null;
  if (data.success === true && "data" in data) return extractBullets(data.data);
  return Array.isArray(data.bullets) ? data.bullets : null;
}

function fillDefaults(item: unknown, nowIso: string, newId: () => string): unknown {
  if (!isPlainObject(item)) return item;
  return {
    ...item,
    id: typeof item.id === "string" && item.id.trim() !== "" ? item.id : newId(),
    createdAt: item.createdAt ?? item.created_at ?? nowIso,
    updatedAt: item.updatedAt ?? item.updated_at ?? nowIso,
  };
}
