import type { Command } from "commander";
import { usageOperation, type UsageResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, noEmoji, red, tildify, yellow } from "../human.js";

/** Width of the budget progress bars. */
const BAR_WIDTH = 30;

/** `cm usage` (reference §1.5.11): LLM spending against the budget limits. */
export function registerUsage(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("usage")
    .description("Show LLM spending (today, this month, all time) against the budget limits")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        "Budget limits (config.json, \"budget\"): a positive limit blocks LLM calls once reached,",
        "0 blocks every LLM call, a negative value means no limit.",
        "",
        "Examples:",
        `  ${cli} usage`,
        `  ${cli} usage --json`,
        "",
      ].join("\n"),
    )
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(usageOperation.command, Boolean(flags.json));
      const result = await run(ctx, usageOperation, {});
      const rt = await ctx.runtime();
      emit(ctx, result, () => renderUsage(result, tildify(rt.paths.configPath)));
    });
}

const usd4 = (n: number): string => `$${n.toFixed(4)}`;
const usd2 = (n: number): string => `$${n.toFixed(2)}`;

function tone(spent: number, limit: number): (text: string) => string {
  if (limit < 0) return green;
  if (limit === 0 || spent >= limit) return red;
  return spent >= limit * 0.8 ? yellow : green;
}

function spendLine(label: string, spent: number, limit: number): string {
  const amount = tone(spent, limit)(usd4(spent));
  if (limit < 0) return `${label}${amount} (no limit)`;
  if (limit === 0) return `${label}${amount} / ${usd2(0)} (LLM calls blocked)`;
  return `${label}${amount} / ${usd2(limit)} (${((spent / limit) * 100).toFixed(1)}%)`;
}

/** A 30-character bar, or a note when the limit is 0 (blocked) or negative (none). */
export function progressBar(spent: number, limit: number, width = BAR_WIDTH): string {
  if (limit < 0) return dim("(no limit set)");
  if (limit === 0) return red(`${usd2(0)} limit: LLM calls are blocked`);
  const ratio = Math.min(Math.max(spent / limit, 0), 1);
  const filled = Math.round(ratio * width);
  const bar = "█".repeat(filled) + "░".repeat(width - filled);
  return tone(spent, limit)(bar);
}

function warning(period: "Daily" | "Monthly", spent: number, limit: number): string | null {
  if (limit === 0) return red(`${icon.warning()} ${period} budget is ${usd2(0)}: LLM calls are blocked.`);
  if (limit > 0 && spent >= limit) return red(`${icon.warning()} ${period} budget limit reached! LLM calls will be blocked.`);
  return null;
}

function renderUsage(r: UsageResult, configPath: string): string[] {
  const lines = [
    bold(`${noEmoji() ? "" : "📊 "}LLM Usage Statistics`),
    "",
    spendLine("Today:    ", r.today, r.dailyLimit),
    spendLine("Month:    ", r.month, r.monthlyLimit),
    `All-time: ${usd4(r.total)}`,
  ];
  const warnings = [warning("Daily", r.today, r.dailyLimit), warning("Monthly", r.month, r.monthlyLimit)].filter((w): w is string => w !== null);
  if (warnings.length > 0) lines.push("", ...warnings);
  lines.push(
    "",
    bold("Budget Progress"),
    "",
    `Daily:   ${progressBar(r.today, r.dailyLimit)}`,
    `Monthly: ${progressBar(r.month, r.monthlyLimit)}`,
    "",
    dim(`${icon.tip()}Configure limits in ${configPath} under 'budget' (0 blocks LLM calls, a negative value means no limit)`),
  );
  return lines;
}
