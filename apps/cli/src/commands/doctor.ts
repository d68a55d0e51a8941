import type { Command } from "commander";
import { doctorOperation, runOperation, type DoctorCheck, type DoctorInput, type DoctorResult } from "@cass-memory/core";
import type { Runtime } from "@cass-memory/runtime";
import { emit, loadLlm, type CliContext } from "../cli-context.js";
import { beginWithFormat } from "../formats.js";
import { bold, dim, green, icon, noEmoji, red, yellow } from "../human.js";
import { ask, isInteractive } from "../options.js";
import { writeStderr } from "../output.js";
import { VERSION } from "../version.js";

interface DoctorFlags {
  format?: string;
  fix?: boolean;
  dryRun?: boolean;
  force?: boolean;
  interactive?: boolean;
  selfTest?: boolean;
  full?: boolean;
  json?: boolean;
}

/**
 * `cm doctor` / `cm dr` (reference §1.5.13). Always exits 0 unless it crashes: health is in the
 * data. The runtime is created in tolerant mode, so an invalid configuration is reported (and can
 * be fixed) instead of stopping the command, and without the parse cache, so that only `--fix`
 * ever writes.
 */
export function registerDoctor(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("doctor")
    .alias("dr")
    .description("Check system health (storage, config, cass, LLM, sanitizer) and optionally fix problems")
    .option("--format <format>", "output format: json or toon (overrides --json)")
    .option("--fix", "apply safe fixes (files are backed up before they are rewritten)")
    .option("--dry-run", "show what --fix would do without changing anything")
    .option("--force", "also apply cautious fixes (e.g. reset an invalid config.json after backing it up)")
    .option("--no-interactive", "never ask for confirmation")
    .option("--self-test", "also run the self-test (playbook load, search, sanitizer, config, LLM)")
    .option("--full", "same as --self-test")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} doctor\n  ${cli} doctor --json\n  ${cli} doctor --fix --dry-run\n  ${cli} doctor --fix --no-interactive\n  ${cli} doctor --fix --force --no-interactive\n  ${cli} dr --self-test\n`,
    )
    .action(async (flags: DoctorFlags) => {
      const json = beginWithFormat(ctx, doctorOperation.command, flags) !== null;

      const rt = await doctorRuntime(ctx);
      const fix = Boolean(flags.fix);
      const dryRun = Boolean(flags.dryRun);
      const interactive = fix && !dryRun && !json && flags.interactive !== false && isInteractive();
      const input: DoctorInput = {
        fix,
        dryRun,
        force: Boolean(flags.force),
        interactive,
        selfTest: Boolean(flags.selfTest || flags.full),
      };

      let result: DoctorResult;
      let declined = false;
      if (interactive) {
        // Show the plan first and apply it only after the user agrees.
        const planned = await runOperation(doctorOperation, rt.deps, { ...input, dryRun: true });
        const count = planned.fixPlan?.wouldApply.length ?? 0;
        if (count > 0 && planned.overallStatus !== "healthy") {
          writeStderr(renderPlan(planned).join("\n"));
          const answer = await ask(`Apply ${count} fix${count === 1 ? "" : "es"}? [y/N] `);
          if (/^y(es)?$/i.test(answer)) result = await runOperation(doctorOperation, rt.deps, input);
          else {
            result = planned;
            declined = true;
          }
        } else {
          // Nothing to confirm: report as a normal --fix run (which then has nothing to apply).
          result = await runOperation(doctorOperation, rt.deps, input);
        }
      } else {
        result = await runOperation(doctorOperation, rt.deps, input);
      }
      emit(ctx, result, () => renderDoctor(result, declined));
    });
}

async function doctorRuntime(ctx: CliContext): Promise<Runtime> {
  const mod = await import("@cass-memory/runtime");
  ctx.loadedRuntimeModule = mod;
  return mod.createRuntime({ cliName: ctx.cliName, verbose: ctx.verbose, tolerateInvalidConfig: true, parseCache: false, version: VERSION, loadLlm });
}

function badge(status: DoctorCheck["status"]): string {
  if (noEmoji()) return status === "pass" ? green("PASS") : status === "warn" ? yellow("WARN") : red("FAIL");
  return status === "pass" ? "✅" : status === "warn" ? "⚠️ " : "❌";
}

function checkLine(check: DoctorCheck, indent = ""): string {
  const text = `${badge(check.status)} ${check.category}: ${check.item}: ${check.message}`;
  return indent + (check.status === "fail" ? red(text) : check.status === "warn" ? yellow(text) : text);
}

function renderPlan(result: DoctorResult): string[] {
  const plan = result.fixPlan;
  if (!plan) return [];
  const lines = [bold(plan.dryRun ? "Fix plan (dry run, nothing changed):" : "Fix plan:")];
  const byId = new Map(result.fixableIssues.map((i) => [i.id, i]));
  if (plan.wouldApply.length === 0) lines.push("  Nothing to apply.");
  for (const id of plan.wouldApply) lines.push(`  ${icon.bullet()} ${id}${byId.get(id) ? `: ${byId.get(id)!.description}` : ""}`);
  for (const skip of plan.wouldSkip) lines.push(dim(`  ${icon.bullet()} skip ${skip.id} (${skip.reason})`));
  return lines;
}

export function renderDoctor(result: DoctorResult, declined = false): string[] {
  const lines = [bold(noEmoji() ? "System Health Check" : "🏥 System Health Check"), ""];
  // After a declined confirmation the plan was just shown on the terminal.
  if (result.fixPlan && !result.fixResults && !declined) lines.push(...renderPlan(result), "");
  if (declined) lines.push("No fixes applied.", "");
  if (result.fixResults) {
    lines.push(bold("Applied fixes:"));
    for (const r of result.fixResults) {
      lines.push(r.success ? green(`  ${icon.success()} ${r.id}: ${r.message}`) : red(`  ${icon.failure()} ${r.id}: ${r.message}`));
    }
    lines.push("", bold("After fixes:"));
  }
  for (const check of result.checks) lines.push(checkLine(check));
  if (result.selfTest && result.selfTest.length > 0) {
    lines.push("", bold("Self-Test:"));
    for (const check of result.selfTest) lines.push(`  ${badge(check.status)} ${check.item}: ${check.message}`);
  }
  if (result.fixableIssues.length > 0) {
    lines.push("", bold(`Fixable issues (${result.fixableIssues.length}):`));
    for (const issue of result.fixableIssues) {
      lines.push(`  ${icon.bullet()} ${issue.id} [${issue.severity}, ${issue.safety}]: ${issue.description}`);
      for (const step of issue.howToFix ?? []) lines.push(dim(`      ${step}`));
    }
  }
  if (result.recommendedActions.length > 0) {
    lines.push("", bold("Recommended actions:"));
    for (const action of result.recommendedActions) {
      lines.push(`  [${action.urgency}] ${action.label}${action.command ? `: ${action.command}` : ""}`);
      lines.push(dim(`      ${action.reason}`));
    }
  }
  lines.push("");
  if (result.overallStatus === "healthy") lines.push(green(noEmoji() ? "System is healthy! Ready to rock" : "System is healthy! Ready to rock 🚀"));
  else if (result.overallStatus === "degraded") lines.push(yellow("System is running in degraded mode."));
  else lines.push(red("System has critical issues."));
  return lines;
}
