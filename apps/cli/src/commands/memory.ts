import type { Command } from "commander";
import {
  AppError,
  forgetOperation,
  historyOperation,
  recallOperation,
  rememberOperation,
  undoOperation,
  undoRunOperation,
  type HistoryResult,
  type RecallResult,
  type UndoResult,
  type UndoRunResult,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, cyan, dim, fixed, green, icon, layoutWidth, wrap, yellow } from "../human.js";
import { ask, intOption, isInteractive } from "../options.js";
import { defineAdd } from "./playbook.js";

/**
 * The rule lifecycle verbs: `remember` (add with provenance), `recall` (search), `forget`
 * (block + deprecate, optionally invert), `undo` (restore / remove feedback / hard delete) and
 * `history` (the rule's audit journal).
 */
export function registerMemory(program: Command, ctx: CliContext): void {
  defineAdd(program.command("remember"), ctx, rememberOperation);
  registerRecall(program, ctx);
  registerForget(program, ctx);
  registerUndo(program, ctx);
  registerHistory(program, ctx);
}

// -------------------------------------------------------------------------------------------- recall

function registerRecall(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("recall")
    .description("Search what the memory knows about a topic: playbook rules and past sessions")
    .argument("<query>", "what to look for")
    .option("--limit <n>", "maximum number of rules and of history snippets (default 10)")
    .option("--days <n>", "history lookback in days (default: config sessionLookbackDays)")
    .option("--no-history", "search the playbook only")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} recall "database migrations"\n  ${cli} recall "flaky e2e tests" --no-history --json\n`)
    .action(async (query: string, flags: { limit?: string; days?: string; history?: boolean; json?: boolean }) => {
      ctx.begin(recallOperation.command, Boolean(flags.json));
      const limit = intOption("limit", flags.limit);
      const days = intOption("days", flags.days);
      const result = await run(ctx, recallOperation, {
        query,
        ...(limit !== undefined ? { limit } : {}),
        ...(days !== undefined ? { days } : {}),
        ...(flags.history === false ? { history: false } : {}),
      });
      emit(ctx, result, () => renderRecall(result, cli));
    });
}

function renderRecall(r: RecallResult, cli: string): string[] {
  const width = layoutWidth();
  const lines = [bold(`RECALL: ${r.query}`), "", bold(`RULES (${r.bullets.length})`)];
  if (r.bullets.length === 0) lines.push("  (No matching rules)", dim(`  ${icon.tip()}Add one: ${cli} remember "<rule>"`));
  for (const b of r.bullets) {
    const anti = b.isNegative === true || b.kind === "anti_pattern";
    lines.push(`  ${cyan(`[${b.id}] ${b.category}${anti ? " • AVOID" : ""} • relevance ${fixed(b.relevanceScore, 2)} • score ${fixed(b.effectiveScore, 2)}`)}`);
    lines.push(...wrap(b.content, width, "    "));
  }
  lines.push("", bold(`HISTORY (${r.historySnippets.length})`));
  if (r.historySnippets.length === 0) {
    lines.push(r.degraded?.cass ? yellow(`  ${icon.warning()} History unavailable (cass: ${r.degraded.cass.reason}).`) : "  (No matching history)");
  }
  r.historySnippets.forEach((h, i) => {
    lines.push(`  ${i + 1}. ${h.agent} ${icon.bullet()} ${h.sessionPath}:${h.line_number}`);
    lines.push(...wrap(h.snippet, width, "     "));
  });
  return lines;
}

// -------------------------------------------------------------------------------------------- forget

function registerForget(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("forget")
    .description("Forget a rule: block it and deprecate it (undo with 'undo <id>')")
    .argument("<bulletId>", "the rule's id")
    .option("--reason <text>", "why the rule is wrong (required)")
    .option("--invert", "replace it with the anti-pattern 'AVOID: <rule>. <reason>'")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} forget b-abc123 --reason "We moved to date-fns"\n  ${cli} forget b-abc123 --reason "Mocks hid a broken migration" --invert --json\n`,
    )
    .action(async (bulletId: string, flags: { reason?: string; invert?: boolean; json?: boolean }) => {
      ctx.begin(forgetOperation.command, Boolean(flags.json));
      const result = await run(ctx, forgetOperation, {
        bulletId,
        ...(flags.reason !== undefined ? { reason: flags.reason } : {}),
        ...(flags.invert ? { invert: true } : {}),
      });
      emit(ctx, result, () => {
        const lines = [green(`${icon.success()} Forgot bullet ${result.bulletId}`)];
        if (result.antiPatternId) lines.push(`  Inverted to anti-pattern: ${result.antiPatternId}`);
        lines.push(dim(`  ${icon.tip()}Changed your mind? ${cli} undo ${result.bulletId}`));
        return lines;
      });
    });
}

// ---------------------------------------------------------------------------------------------- undo

interface UndoFlags {
  run?: string;
  feedback?: boolean;
  hard?: boolean;
  yes?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

function registerUndo(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("undo")
    .description("Restore a deprecated or forgotten rule, remove its last feedback, or delete it for good")
    .argument("[bulletId]", "the rule's id (omit with --run)")
    .option("--run <runId>", "revert every change one reflection run made (the run id printed by reflect)")
    .option("--feedback", "remove the rule's last feedback event instead")
    .option("--hard", "delete the rule permanently (needs --yes, or typing DELETE on a terminal)")
    .option("--yes", "confirm --hard")
    .option("--dry-run", "show what would change without changing anything")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} undo b-abc123\n  ${cli} undo b-abc123 --feedback --json\n  ${cli} undo b-abc123 --hard --yes\n  ${cli} undo --run run-m3k2x9-4f2a1c --dry-run\n`,
    )
    .action(async (bulletId: string | undefined, flags: UndoFlags) => {
      ctx.begin(undoOperation.command, Boolean(flags.json));
      if (flags.run !== undefined) {
        if (bulletId !== undefined || flags.feedback || flags.hard) {
          throw new AppError("INVALID_INPUT", "--run reverts a whole reflection run; it takes no bullet id, --feedback or --hard.", {
            hint: `${cli} undo --run <runId>`,
          });
        }
        const reverted = await run(ctx, undoRunOperation, { runId: flags.run, ...(flags.dryRun ? { dryRun: true } : {}) });
        emit(ctx, reverted, () => renderUndoRun(reverted));
        return;
      }
      if (bulletId === undefined) {
        throw new AppError("MISSING_REQUIRED", "A bullet id (or --run <runId>) is required.", {
          hint: `${cli} undo b-abc123   or   ${cli} undo --run <runId>`,
          details: { missing: "bulletId" },
        });
      }
      let yes = Boolean(flags.yes);
      if (flags.hard && !yes && !flags.dryRun && !flags.json && isInteractive()) {
        yes = (await ask(`Type DELETE to permanently delete ${bulletId}: `)) === "DELETE";
      }
      const result = await run(ctx, undoOperation, {
        bulletId,
        ...(flags.feedback ? { feedback: true } : {}),
        ...(flags.hard ? { hard: true } : {}),
        ...(yes ? { yes: true } : {}),
        ...(flags.dryRun ? { dryRun: true } : {}),
      });
      emit(ctx, result, () => renderUndo(result));
    });
}

function renderUndoRun(r: UndoRunResult): string[] {
  const lines = [bold(r.dryRun ? "DRY RUN - No changes will be made" : "REVERT REFLECTION RUN"), `Run: ${r.runId}`];
  if (r.removed.length > 0) lines.push(`  Removed rules: ${r.removed.join(", ")}`);
  if (r.restored.length > 0) lines.push(`  Restored rules: ${r.restored.join(", ")}`);
  if (r.feedbackRemoved > 0) lines.push(`  Feedback events removed: ${r.feedbackRemoved}`);
  for (const c of r.conflicts) lines.push(dim(`  Kept ${c.bulletId}.${c.field}: ${c.reason}`));
  lines.push(green(`${icon.success()} ${r.message}`));
  return lines;
}

function renderUndo(r: UndoResult): string[] {
  if ("plan" in r) {
    const p = r.plan;
    return [
      bold("DRY RUN - No changes will be made"),
      `Action: ${p.action.toUpperCase()} bullet ${p.bulletId} (${p.location})`,
      `  ${p.preview}`,
      `Would: ${p.wouldChange}`,
      `To apply: ${p.applyCommand}`,
    ];
  }
  switch (r.action) {
    case "hard-delete":
      return [bold("HARD DELETE"), `Bullet ${r.bulletId} has been permanently deleted.`, `  ${r.preview}`, green(`${icon.success()} ${r.message}`)];
    case "undo-feedback":
      return [
        bold("UNDO FEEDBACK"),
        `  Helpful: ${r.before.helpfulCount} → ${r.after.helpfulCount}`,
        `  Harmful: ${r.before.harmfulCount} → ${r.after.harmfulCount}`,
        green(`${icon.success()} ${r.message}`),
      ];
    default: {
      const lines = [
        bold("UN-DEPRECATE"),
        `  State: ${r.before.state} → ${r.after.state}`,
        `  Maturity: ${r.before.maturity} → ${r.after.maturity}${r.restoredFromJournal ? " (from the audit journal)" : ""}`,
      ];
      if (r.unblocked > 0) lines.push(`  Removed from the blocked log (${r.unblocked} entr${r.unblocked === 1 ? "y" : "ies"})`);
      if (r.antiPatternDeprecated) lines.push(`  Retired the anti-pattern it had become: ${r.antiPatternDeprecated}`);
      lines.push(green(`${icon.success()} ${r.message}`));
      return lines;
    }
  }
}

// ------------------------------------------------------------------------------------------- history

function registerHistory(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("history")
    .description("Show every recorded change of a rule (the audit journal), oldest first")
    .argument("<bulletId>", "the rule's id")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} history b-abc123\n  ${cli} history b-abc123 --json\n`)
    .action(async (bulletId: string, flags: { json?: boolean }) => {
      ctx.begin(historyOperation.command, Boolean(flags.json));
      const result = await run(ctx, historyOperation, { bulletId });
      emit(ctx, result, () => renderHistory(result));
    });
}

function describeChange(e: HistoryResult["events"][number]): string {
  const after = e.after ?? {};
  const before = e.before ?? {};
  switch (e.change) {
    case "created":
      return `created: ${String(after.content ?? "")}`;
    case "deleted":
      return `deleted: ${String(before.content ?? "")}`;
    case "feedback": {
      const feedback = Array.isArray(after.feedback) ? (after.feedback as Array<{ type?: string }>) : [];
      return `feedback: ${feedback.map((f) => f.type ?? "?").join(", ") || "changed"}`;
    }
    case "content":
      return `content: ${String(before.content ?? "")} → ${String(after.content ?? "")}`;
    default: {
      const fields = Object.keys(after).filter((k) => k !== "feedback");
      return `${e.change}: ${fields.map((k) => `${k} ${JSON.stringify(before[k] ?? null)} → ${JSON.stringify(after[k] ?? null)}`).join(", ")}`;
    }
  }
}

function renderHistory(r: HistoryResult): string[] {
  const width = layoutWidth();
  const lines = [bold(`HISTORY: ${r.bulletId}`), dim(r.location ? `Lives in the ${r.location} playbook` : "No longer in any playbook")];
  if (r.note) lines.push("", r.note);
  for (const e of r.events) {
    lines.push("", `${e.timestamp} ${icon.bullet()} ${e.operation} ${icon.bullet()} ${e.actor}${e.source ? ` ${icon.bullet()} ${e.source}` : ""}`);
    lines.push(...wrap(describeChange(e), width, "  "));
    if (e.reason) lines.push(...wrap(`reason: ${e.reason}`, width, "  ").map(dim));
  }
  return lines;
}
