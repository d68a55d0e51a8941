import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import { defaultConfig } from "../schemas/config.js";
import { cassAvailableFrom } from "../episodic/availability.js";
import { applyStarter, findStarter } from "./starters.js";
import { lazySchema, lazyValue } from "../schemas/lazy.js";

export const InitInputSchema = lazySchema(() => z.object({
  /** Initialise `<git root>/.cass/` instead of the global directory. */
  repo: z.boolean().optional(),
  force: z.boolean().optional(),
  yes: z.boolean().optional(),
  /** `cassPath` to record in the new config (the original takes it from `CASS_PATH`). */
  cassPath: z.string().optional(),
  /**
   * Seed the new (or existing) playbook with this starter (reference §1.5.1): allowed on an
   * initialised layer, where it only adds the starter's missing rules.
   */
  starter: z.string().optional(),
}));

const StarterAppliedSchema = lazySchema(() => z.object({ added: z.number(), skipped: z.number(), name: z.string() }));

const initCommon = lazyValue(() => ({
  created: z.array(z.string()),
  existed: z.array(z.string()),
  overwritten: z.array(z.string()),
  backups: z.array(z.object({ file: z.string(), backup: z.string() })),
  starter: StarterAppliedSchema.nullable(),
}));
const GlobalInitSchema = lazySchema(() => z.object({ configPath: z.string(), ...initCommon(), cassAvailable: z.boolean() }));
const RepoInitSchema = lazySchema(() => z.object({ cassDir: z.string(), ...initCommon() }));
export const InitResultSchema = lazySchema(() => z.union([GlobalInitSchema, RepoInitSchema]));
export type GlobalInitResult = z.output<typeof GlobalInitSchema>;
export type RepoInitResult = z.output<typeof RepoInitSchema>;

/**
 * `cm init` / `cm init --repo` (reference §1.5.1): creates the global data directory, or a
 * repository's `.cass/`. Existing files are never replaced without `--force --yes`, and are backed
 * up first when they are.
 */
export const initOperation = defineOperation({
  name: "init",
  command: "init",
  description: "Create the global cass-memory directory (or a repository's .cass/ with repo), optionally seeded from a starter playbook.",
  input: InitInputSchema,
  output: InitResultSchema,
  async run(deps, input): Promise<GlobalInitResult | RepoInitResult> {
    const layer = input.repo ? "repo" : "global";
    const { repoDir, globalDir } = deps.store.locations;
    if (layer === "repo" && repoDir === null) {
      throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
        hint: "cd into a git repository first",
      });
    }
    // Resolve the starter before touching anything, so an unknown name changes nothing.
    const starter = input.starter !== undefined ? await findStarter(deps, input.starter) : null;
    const status = await deps.store.layerStatus(layer);
    const complete = status.expected
      .filter((f) => (layer === "global" ? f === "config.json" || f === "playbook.yaml" : true))
      .every((f) => status.present.includes(f));
    if (complete && !input.force && starter === null) {
      throw new AppError(
        "ALREADY_EXISTS",
        layer === "repo" ? "Repo already has .cass/ directory. Use --force to reinitialize." : "Already initialized. Use --force to reinitialize.",
        { hint: "Use --force to reinitialize", details: layer === "repo" ? { cassDir: repoDir } : { globalDir } },
      );
    }
    if (input.force && status.present.length > 0 && !input.yes) {
      throw new AppError("MISSING_REQUIRED", "Refusing to overwrite existing files without --yes", {
        hint: "Use --yes to confirm",
        details: { missing: "confirmation" },
      });
    }
    const nowIso = deps.clock.now().toISOString();
    const seed = async () => {
      if (starter === null) return null;
      const { name, plan } = await applyStarter(deps, layer, starter);
      return { added: plan.add.length, skipped: plan.skipped.length, name };
    };
    if (layer === "repo") {
      const result = await deps.store.initialize("repo", { overwrite: Boolean(input.force), nowIso });
      return { cassDir: repoDir!, ...result, starter: await seed() };
    }
    const config = defaultConfig();
    if (input.cassPath?.trim()) config.cassPath = input.cassPath.trim();
    const result = await deps.store.initialize("global", { overwrite: Boolean(input.force), config, nowIso });
    const applied = await seed();
    const health = await deps.episodic.health();
    return {
      configPath: `${globalDir.replace(/[\\/]+$/, "")}/config.json`,
      ...result,
      cassAvailable: cassAvailableFrom(health),
      starter: applied,
    };
  },
});
