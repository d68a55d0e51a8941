import type { Command } from "commander";
import { validateOperation, type ValidateResult } from "@cass-memory/core";
import { emit, runLearning, type CliContext } from "../cli-context.js";
import { bold, dim, fixed, green, noEmoji, red, tildify, wrap, yellow, layoutWidth } from "../human.js";

interface ValidateFlags {
  verbose?: boolean;
  json?: boolean;
}

/** Evidence lines shown in the human output (all of them are in the JSON). */
const EVIDENCE_SHOWN = 5;
const SNIPPET_CHARS = 140;

/** `cm validate "<rule>"` (reference §1.5.12). */
export function registerValidate(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("validate")
    .description("Check a proposed rule against session history before adding it (evidence gate, then a validator)")
    .argument("<rule>", "the proposed rule, quoted")
    .option("--verbose", "show the evidence gate's keywords and counts")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} validate "Always run database migrations inside a transaction"\n  ${cli} validate "Never mock the database in integration tests" --verbose --json\n`,
    )
    .action(async (rule: string, flags: ValidateFlags) => {
      ctx.begin(validateOperation.command, Boolean(flags.json));
      // The root program also declares --verbose and may take the flag first: honour either.
      const verbose = Boolean(flags.verbose) || ctx.verbose;
      const result = await runLearning(ctx, validateOperation, { rule, ...(verbose ? { verbose: true } : {}) });
      emit(ctx, result, () => renderValidation(result));
    });
}

function verdictColour(verdict: ValidateResult["verdict"]): (text: string) => string {
  return verdict === "ACCEPT" ? green : verdict === "REJECT" ? red : yellow;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

export function renderValidation(r: ValidateResult): string[] {
  const width = layoutWidth();
  const lines = ["", bold(`${noEmoji() ? "" : "🔬 "}Validation Result`)];
  lines.push(...wrap(`Rule: ${r.proposedRule}`, width));
  lines.push(`Verdict: ${verdictColour(r.verdict)(r.verdict)} (confidence ${fixed(r.confidence, 2)})`);
  lines.push(...wrap(`Reason: ${r.reason}`, width));
  if (r.refinedRule !== undefined) lines.push("", bold("Refined Rule:"), ...wrap(r.refinedRule, width));
  if (r.gate !== undefined) {
    const g = r.gate;
    lines.push(
      "",
      bold("Evidence gate:"),
      `  Keywords: ${g.keywords.length > 0 ? g.keywords.join(", ") : "(none)"}`,
      `  Sessions: ${g.sessionCount} (${g.successCount} success, ${g.failureCount} failure)`,
      `  Gate: ${g.passed ? "passed" : "failed"} (${g.suggestedState}) — ${g.reason}`,
      `  Validator: ${r.mode === "llm" ? "LLM" : "deterministic"}`,
    );
  }
  if (r.evidence.length > 0) {
    lines.push("", bold("Evidence (history):"));
    for (const e of r.evidence.slice(0, EVIDENCE_SHOWN)) lines.push(`- ${tildify(e.session)}: ${oneLine(e.snippet, SNIPPET_CHARS)} (${e.outcome})`);
    if (r.evidence.length > EVIDENCE_SHOWN) lines.push(dim(`  … and ${r.evidence.length - EVIDENCE_SHOWN} more (--json lists all)`));
  }
  if (r.degraded?.cass !== undefined) {
    lines.push("", yellow(`History unavailable (${r.degraded.cass.reason}): ${r.degraded.cass.message}`));
    for (const fix of r.degraded.cass.suggestedFix ?? []) lines.push(dim(`  ${fix}`));
  }
  if (r.fallback !== undefined) lines.push("", yellow(`The LLM validator failed (${r.fallback.reason}); the deterministic validator answered.`));
  return lines;
}
