import type { Command } from "commander";
import {
  noOutcomesReason,
  OUTCOME_NO_SIGNAL_REASON,
  outcomeApplyOperation,
  outcomeOperation,
  type OutcomeApplyResult,
  type OutcomeResult,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { fixed, green, icon, yellow } from "../human.js";
import { intOption } from "../options.js";

interface OutcomeFlags {
  session?: string;
  duration?: string;
  errors?: string;
  retries?: boolean;
  sentiment?: string;
  text?: string;
  json?: boolean;
}

interface OutcomeApplyFlags {
  session?: string;
  limit?: string;
  json?: boolean;
}

/** `cm outcome <status> <rules>` and `cm outcome-apply` (reference §1.5.22, §1.5.23). */
export function registerOutcome(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("outcome")
    .description("Report how a task went and which rules it used; records implicit feedback on those rules")
    .argument("<status>", "success | failure | mixed | partial")
    .argument("<rules>", "comma-separated rule ids the task used")
    .option("--session <path>", "session the outcome belongs to (default: cli-manual)")
    .option("--duration <seconds>", "how long the task took, in seconds")
    .option("--errors <count>", "how many errors the task met")
    .option("--retries", "the task needed retries")
    .option("--sentiment <value>", "the user's tone: positive | negative | neutral")
    .option("--text <notes>", "notes (logged, sanitised); the sentiment is detected from them when --sentiment is absent")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        "Examples:",
        `  ${cli} outcome success b-abc123,b-def456 --duration 300`,
        `  ${cli} outcome failure b-abc123 --errors 3 --retries --json`,
        `  ${cli} outcome mixed b-abc123 --text "that worked, thanks" --session ~/.claude/projects/x/s1.jsonl`,
        "",
      ].join("\n"),
    )
    .action(async (status: string, rules: string, flags: OutcomeFlags) => {
      ctx.begin(outcomeOperation.command, Boolean(flags.json));
      const duration = intOption("duration", flags.duration, 0);
      const errors = intOption("errors", flags.errors, 0);
      const result = await run(ctx, outcomeOperation, {
        status,
        rules,
        ...(flags.session !== undefined ? { session: flags.session } : {}),
        ...(duration !== undefined ? { duration } : {}),
        ...(errors !== undefined ? { errors } : {}),
        ...(flags.retries ? { retries: true } : {}),
        ...(flags.sentiment !== undefined ? { sentiment: flags.sentiment } : {}),
        ...(flags.text !== undefined ? { text: flags.text } : {}),
      });
      const soft = "feedbackRecorded" in result;
      emit(ctx, result, () => renderOutcome(result), soft ? { effect: false, reason: OUTCOME_NO_SIGNAL_REASON } : undefined);
    });

  program
    .command("outcome-apply")
    .description("Apply logged outcomes as implicit feedback again (idempotent); fills in rules from the context log")
    .option("--session <id>", "only the outcomes of this session")
    .option("--limit <n>", "how many of the newest logged outcomes to apply", "50")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      ["", "Examples:", `  ${cli} outcome-apply`, `  ${cli} outcome-apply --session ~/.codex/sessions/s1.jsonl --json`, `  ${cli} outcome-apply --limit 10`, ""].join("\n"),
    )
    .action(async (flags: OutcomeApplyFlags) => {
      ctx.begin(outcomeApplyOperation.command, Boolean(flags.json));
      const limit = intOption("limit", flags.limit);
      const result = await run(ctx, outcomeApplyOperation, {
        ...(flags.session !== undefined ? { session: flags.session } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      const soft = "outcomesFound" in result;
      emit(ctx, result, () => renderOutcomeApply(result), soft ? { effect: false, reason: noOutcomesReason(result.session) } : undefined);
    });
}

function renderOutcome(result: OutcomeResult): string[] {
  if ("feedbackRecorded" in result) {
    return [yellow(`${OUTCOME_NO_SIGNAL_REASON}.`), `  Rules provided: ${result.rulesProvided.join(", ")}`];
  }
  const lines: string[] = [];
  if (result.applied > 0) {
    lines.push(green(`${icon.success()} Recorded implicit ${result.type} feedback (${fixed(result.weight, 2)}) for ${result.applied} rule(s)`));
  } else if (result.missing.length === 0) {
    lines.push(`No rule was updated (the feedback was already recorded).`);
  }
  if (result.missing.length > 0) lines.push(yellow(`Skipped missing rules: ${result.missing.join(", ")}`));
  return lines;
}

function renderOutcomeApply(result: OutcomeApplyResult): string[] {
  if ("outcomesFound" in result) return [yellow(`${noOutcomesReason(result.session)}.`)];
  const already = result.alreadyApplied > 0 ? ` (${result.alreadyApplied} already recorded)` : "";
  const lines =
    "session" in result
      ? [green(`Applied outcome feedback for session ${result.session}: ${result.applied} updates${already}`)]
      : [green(`Applied outcome feedback for ${result.totalOutcomes} outcomes: ${result.applied} updates${already}`)];
  if (result.missing.length > 0) lines.push(yellow(`Missing rules: ${result.missing.join(", ")}`));
  return lines;
}
