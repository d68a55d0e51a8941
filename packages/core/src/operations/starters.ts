import * as z from "zod";
import { AppError } from "../errors.js";
import { defineOperation } from "../operation.js";
import type { Layer, OperationDeps } from "../ports.js";
import { BUILTIN_STARTERS } from "../starters/builtin.js";
import { parseStarterFile, planStarter, type ResolvedStarter, type StarterPlan } from "../starters/starter.js";
import { layerPath, mutatePlaybookJournaled } from "./shared.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm starters` (reference §1.5.18) and applying a starter to a playbook layer (`cm init
 * --starter`, `cm playbook bootstrap`).
 */

/** Built-in starters plus the valid custom starter files (invalid files are reported on the logger and skipped). */
export async function loadStarters(deps: OperationDeps): Promise<ResolvedStarter[]> {
  const custom: ResolvedStarter[] = [];
  for (const file of await deps.store.readStarterFiles()) {
    if (file.error !== undefined || file.data === undefined) {
      deps.logger.warn(`Ignoring starter file ${file.path}: ${file.error ?? "empty file"}`);
      continue;
    }
    const parsed = parseStarterFile(file.path, file.data);
    if ("error" in parsed) {
      deps.logger.warn(`Ignoring starter file ${file.path}: ${parsed.error}`);
      continue;
    }
    custom.push(parsed.starter);
  }
  const builtin: ResolvedStarter[] = BUILTIN_STARTERS.map((s) => ({ ...s, bullets: [...s.bullets], source: "builtin" }));
  return [...custom, ...builtin];
}

/**
 * The starter called `name` (case-insensitive). A custom starter shadows a built-in of the same
 * name; among custom files the first by path wins. Unknown names are VALIDATION_FAILED.
 */
export async function findStarter(deps: OperationDeps, name: string): Promise<ResolvedStarter> {
  const wanted = name.trim().toLowerCase();
  const all = await loadStarters(deps);
  const found = wanted === "" ? undefined : all.find((s) => s.name.toLowerCase() === wanted);
  if (found === undefined) {
    const names = [...new Set(all.map((s) => s.name))].sort();
    throw new AppError("VALIDATION_FAILED", `Starter "${name}" not found. Run "${deps.cliName} starters" to list available names.`, {
      hint: `Available starters: ${names.join(", ")}`,
      details: { starter: name },
    });
  }
  return found;
}

export interface StarterApplication {
  name: string;
  plan: StarterPlan;
}

/**
 * Adds the rules of `starter` that the layer's playbook is missing (see `planStarter`), as one
 * journaled mutation (`bootstrap`, source `starter:<name>`). With `dryRun`, only reads.
 */
export async function applyStarter(
  deps: OperationDeps,
  layer: Layer,
  starter: ResolvedStarter,
  options: { dryRun?: boolean } = {},
): Promise<StarterApplication> {
  const ctx = { config: deps.config, now: deps.clock.now(), ids: deps.ids };
  // The global blocked log applies to the merged view, so it also keeps rules out of the repo layer.
  const blocked = [
    ...(await deps.store.readBlocked("global")),
    ...(layer === "repo" ? await deps.store.readBlocked("repo") : []),
  ];
  if (options.dryRun) {
    const playbook = await deps.store.readPlaybook(layer);
    return { name: starter.name, plan: planStarter(playbook ?? { bullets: [] }, starter, blocked, ctx) };
  }
  const plan = await mutatePlaybookJournaled(deps, layer, { operation: "bootstrap", source: `starter:${starter.name}` }, (playbook) => {
    const planned = planStarter(playbook, starter, blocked, ctx);
    playbook.bullets.push(...planned.add);
    return planned;
  });
  return { name: starter.name, plan };
}

// ------------------------------------------------------------------------------------ cm starters

const StarterSummarySchema = lazySchema(() => z.object({
  name: z.string(),
  description: z.string(),
  bulletCount: z.number(),
  source: z.enum(["builtin", "custom"]),
  path: z.string().optional(),
  /** Set on a built-in hidden by a custom starter of the same name. */
  shadowed: z.boolean().optional(),
}));

export const StartersResultSchema = lazySchema(() => z.object({ starters: z.array(StarterSummarySchema) }));
export type StartersResult = z.output<typeof StartersResultSchema>;

export const startersOperation = defineOperation({
  name: "starters",
  command: "starters",
  description: "List the starter playbooks (built-in and custom) that can seed a playbook.",
  input: lazySchema(() => z.object({})),
  output: StartersResultSchema,
  async run(deps): Promise<StartersResult> {
    const all = await loadStarters(deps);
    const customNames = new Set(all.filter((s) => s.source === "custom").map((s) => s.name.toLowerCase()));
    const starters = all.map((s) => ({
      name: s.name,
      description: s.description,
      bulletCount: s.bullets.length,
      source: s.source,
      ...(s.path !== undefined ? { path: s.path } : {}),
      ...(s.source === "builtin" && customNames.has(s.name.toLowerCase()) ? { shadowed: true } : {}),
    }));
    // By name; for equal names the custom one (which is the one used) first.
    starters.sort((a, b) =>
      a.name.toLowerCase() < b.name.toLowerCase() ? -1 : a.name.toLowerCase() > b.name.toLowerCase() ? 1 : a.source === b.source ? 0 : a.source === "custom" ? -1 : 1,
    );
    return { starters };
  },
});

// --------------------------------------------------------------------------- cm playbook bootstrap

export const PlaybookBootstrapInputSchema = lazySchema(() => z.object({
  starter: z.string(),
  /** Seed `<git root>/.cass/playbook.yaml` instead of the global playbook. */
  repo: z.boolean().optional(),
  /** Report what would be added without writing. */
  dryRun: z.boolean().optional(),
}));

const PlannedBulletSchema = lazySchema(() => z.object({ id: z.string(), category: z.string(), content: z.string() }));

export const PlaybookBootstrapResultSchema = lazySchema(() => z.object({
  name: z.string(),
  source: z.enum(["builtin", "custom"]),
  target: z.enum(["global", "repo"]),
  targetPath: z.string(),
  dryRun: z.boolean(),
  /** Rules added (with dryRun: that would be added). */
  added: z.number(),
  skipped: z.number(),
  addedBullets: z.array(PlannedBulletSchema),
  skippedBullets: z.array(z.object({ id: z.string(), content: z.string(), reason: z.enum(["id_exists", "duplicate_content", "blocked"]) })),
}));
export type PlaybookBootstrapResult = z.output<typeof PlaybookBootstrapResultSchema>;

/** `cm playbook bootstrap <starter>`: seeds the global (or repository) playbook from a starter. */
export const playbookBootstrapOperation = defineOperation({
  name: "playbook_bootstrap",
  command: "playbook:bootstrap",
  description: "Add the rules of a starter playbook that the global (or repository) playbook does not have yet.",
  input: PlaybookBootstrapInputSchema,
  output: PlaybookBootstrapResultSchema,
  async run(deps, input): Promise<PlaybookBootstrapResult> {
    const layer: Layer = input.repo ? "repo" : "global";
    if (input.starter.trim() === "") {
      throw new AppError("MISSING_REQUIRED", "starter is required.", {
        hint: `List the starters with: ${deps.cliName} starters`,
        details: { missing: "starter" },
      });
    }
    if (layer === "repo" && deps.store.locations.repoDir === null) {
      throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
        hint: "cd into a git repository first",
      });
    }
    const starter = await findStarter(deps, input.starter);
    const { plan } = await applyStarter(deps, layer, starter, { dryRun: Boolean(input.dryRun) });
    return {
      name: starter.name,
      source: starter.source,
      target: layer,
      targetPath: layerPath(deps, layer),
      dryRun: Boolean(input.dryRun),
      added: plan.add.length,
      skipped: plan.skipped.length,
      addedBullets: plan.add.map((b) => ({ id: b.id, category: b.category, content: b.content })),
      skippedBullets: plan.skipped,
    };
  },
});
