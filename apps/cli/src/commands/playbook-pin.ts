import type { Command } from "commander";
import { playbookCategoryOperation, playbookPinOperation, type PlaybookCategoryResult, type PlaybookPinResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { green, icon } from "../human.js";

/**
 * `cm playbook pin <id> [--reason]`, `cm playbook unpin <id>` and `cm playbook category <id> <category>`
 * (beyond the original, which had the fields but no commands; also actions of the dashboard).
 */
export function registerPlaybookPin(group: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  group
    .command("pin")
    .description("Pin a rule: curation never demotes or auto-deprecates it")
    .argument("<id>", "the rule's id")
    .option("--reason <text>", "why the rule is pinned")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} playbook pin b-abc123 --reason "team policy"\n  ${cli} playbook unpin b-abc123\n`)
    .action(async (id: string, flags: { reason?: string; json?: boolean }) => {
      ctx.begin(playbookPinOperation.command, Boolean(flags.json));
      const result = await run(ctx, playbookPinOperation, { bulletId: id, pinned: true, ...(flags.reason !== undefined ? { reason: flags.reason } : {}) });
      emit(ctx, result, () => renderPin(result));
    });
  group
    .command("unpin")
    .description("Unpin a rule (curation may demote it again)")
    .argument("<id>", "the rule's id")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExample:\n  ${cli} playbook unpin b-abc123 --json\n`)
    .action(async (id: string, flags: { json?: boolean }) => {
      ctx.begin("playbook:unpin", Boolean(flags.json));
      const result = await run(ctx, playbookPinOperation, { bulletId: id, pinned: false });
      emit(ctx, result, () => renderPin(result));
    });
  group
    .command("category")
    .description("Change a rule's category")
    .argument("<id>", "the rule's id")
    .argument("<category>", "the new category")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExample:\n  ${cli} playbook category b-abc123 testing\n`)
    .action(async (id: string, category: string, flags: { json?: boolean }) => {
      ctx.begin(playbookCategoryOperation.command, Boolean(flags.json));
      const result = await run(ctx, playbookCategoryOperation, { bulletId: id, category });
      emit(ctx, result, () => renderCategory(result));
    });
}

function renderPin(r: PlaybookPinResult): string {
  if (!r.changed) return `Bullet ${r.bulletId} is already ${r.pinned ? "pinned" : "unpinned"}.`;
  return green(`${icon.success()} ${r.pinned ? "Pinned" : "Unpinned"} bullet ${r.bulletId}${r.pinnedReason !== undefined ? ` (${r.pinnedReason})` : ""}`);
}

function renderCategory(r: PlaybookCategoryResult): string {
  if (!r.changed) return `Bullet ${r.bulletId} already has category ${r.category}.`;
  return green(`${icon.success()} Bullet ${r.bulletId}: category ${r.previousCategory} -> ${r.category}`);
}
