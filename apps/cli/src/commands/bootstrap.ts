import type { Command } from "commander";
import { playbookBootstrapOperation, type PlaybookBootstrapResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, tildify, yellow } from "../human.js";

interface BootstrapFlags {
  repo?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

const SKIP_REASONS: Readonly<Record<string, string>> = {
  id_exists: "already in the playbook",
  duplicate_content: "same rule already present",
  blocked: "forgotten earlier",
};

/**
 * `cm playbook bootstrap <starter>`: adds a starter's missing rules to the global playbook, or
 * with `--repo` to `<git root>/.cass/playbook.yaml`. Registered on the `playbook` group.
 */
export function registerBootstrap(playbookCommand: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  playbookCommand
    .command("bootstrap")
    .description("Seed the playbook with a starter's rules (only the missing ones are added)")
    .argument("<starter>", `starter name (see: ${cli} starters)`)
    .option("--repo", "seed <git root>/.cass/playbook.yaml instead of the global playbook")
    .option("--dry-run", "list what would be added without changing anything")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} playbook bootstrap general\n  ${cli} playbook bootstrap typescript --repo --dry-run\n  ${cli} playbook bootstrap python --json\n`,
    )
    .action(async (starter: string, flags: BootstrapFlags) => {
      ctx.begin(playbookBootstrapOperation.command, Boolean(flags.json));
      const result = await run(ctx, playbookBootstrapOperation, {
        starter,
        repo: Boolean(flags.repo),
        dryRun: Boolean(flags.dryRun),
      });
      emit(ctx, result, () => renderBootstrap(result, cli, Boolean(flags.repo)));
    });
}

function renderBootstrap(r: PlaybookBootstrapResult, cli: string, repo: boolean): string[] {
  const lines: string[] = [];
  const where = `the ${r.target} playbook (${tildify(r.targetPath)})`;
  if (r.dryRun) {
    lines.push(yellow(bold("DRY RUN - No changes will be made")), `Starter "${r.name}" (${r.source}) into ${where}:`);
    lines.push(`  would add ${r.added}, skip ${r.skipped}`);
  } else {
    lines.push(green(`${icon.success()} Applied starter "${r.name}" to ${where}: ${r.added} added, ${r.skipped} skipped`));
  }
  for (const b of r.addedBullets) lines.push(`  + [${b.id}] ${b.category}: ${b.content}`);
  for (const s of r.skippedBullets) lines.push(dim(`  = [${s.id}] skipped: ${SKIP_REASONS[s.reason] ?? s.reason}`));
  if (r.dryRun && r.added > 0) lines.push("", `To apply: ${cli} playbook bootstrap ${r.name}${repo ? " --repo" : ""}`);
  return lines;
}
