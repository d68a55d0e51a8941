import { join } from "node:path";
import type { Command } from "commander";
import { startersOperation, type StartersResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, dim, icon, tildify } from "../human.js";

/** `cm starters` (reference §1.5.18): the built-in and custom starter playbooks. */
export function registerStarters(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("starters")
    .description("List starter playbooks that can seed a playbook (built-in and custom)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} starters\n  ${cli} starters --json\n  ${cli} init --starter typescript\n  ${cli} playbook bootstrap react --repo\n`,
    )
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(startersOperation.command, Boolean(flags.json));
      const result = await run(ctx, startersOperation, {});
      const rt = await ctx.runtime();
      emit(ctx, result, () => renderStarters(result, cli, join(rt.paths.globalDir, "starters")));
    });
}

function rules(n: number): string {
  return `${n} rule${n === 1 ? "" : "s"}`;
}

function renderStarters(result: StartersResult, cli: string, customDir: string): string[] {
  const builtin = result.starters.filter((s) => s.source === "builtin");
  const custom = result.starters.filter((s) => s.source === "custom");
  const lines = [bold("Built-in starters:")];
  for (const s of builtin) {
    lines.push(`  ${icon.bullet()} ${s.name} - ${s.description} (${rules(s.bulletCount)})${s.shadowed ? dim(" [shadowed by a custom starter]") : ""}`);
  }
  lines.push("", bold("Custom starters:"));
  if (custom.length === 0) {
    lines.push(dim(`  (none: add YAML or JSON files {name, description, bullets: [{content, category}]} to ${tildify(customDir)}/)`));
  }
  for (const s of custom) {
    lines.push(`  ${icon.bullet()} ${s.name} - ${s.description || "(no description)"} (${rules(s.bulletCount)})`);
    if (s.path !== undefined) lines.push(dim(`      ${tildify(s.path)}`));
  }
  lines.push("", `Seed a playbook with: ${cli} init --starter=<name>`, `Add to an existing one: ${cli} playbook bootstrap <name> [--repo] [--dry-run]`);
  return lines;
}
