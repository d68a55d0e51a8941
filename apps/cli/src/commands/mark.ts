import type { Command } from "commander";
import { markOperation } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { fixed, green, icon } from "../human.js";

interface MarkFlags {
  helpful?: boolean;
  harmful?: boolean;
  reason?: string;
  session?: string;
  json?: boolean;
}

/** `cm mark <bulletId> --helpful|--harmful` (reference §1.5.4). */
export function registerMark(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("mark")
    .description("Record helpful or harmful feedback on a playbook rule")
    .argument("<bulletId>", "the rule's id")
    .option("--helpful", "the rule helped")
    .option("--harmful", "the rule was wrong or harmful")
    .option("--reason <text>", "why (harmful: caused_bug|wasted_time|contradicted_requirements|wrong_context|outdated|other)")
    .option("--session <path>", "session the feedback comes from")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} mark b-abc123 --helpful\n  ${cli} mark b-abc123 --harmful --reason outdated --json\n`)
    .action(async (bulletId: string, flags: MarkFlags) => {
      ctx.begin(markOperation.command, Boolean(flags.json));
      const result = await run(ctx, markOperation, {
        bulletId,
        ...(flags.helpful ? { helpful: true } : {}),
        ...(flags.harmful ? { harmful: true } : {}),
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
        ...(flags.session !== undefined ? { session: flags.session } : {}),
      });
      emit(ctx, result, () => [
        green(`${icon.success()} Marked bullet ${result.bulletId} as ${result.type}`),
        `  New State: ${result.newState}`,
        `  Effective Score: ${fixed(result.effectiveScore, 2)}`,
      ]);
    });
}
