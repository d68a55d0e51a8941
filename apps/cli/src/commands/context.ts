import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import { AppError, compactContext, contextOperation, estimateTokens, lookupContext, type CompactContext, type ContextResult } from "@cass-memory/core";
import { emit, type CliContext } from "../cli-context.js";
import { beginWithFormat, printedEnvelope, reportTokenStats } from "../formats.js";
import { bold, cyan, divider, dim, fixed, icon, layoutWidth, red, wrap, yellow } from "../human.js";
import { floatOption, intOption, readStdin } from "../options.js";
import { writeStderr } from "../output.js";

interface ContextFlags {
  json?: boolean;
  limit?: string;
  top?: string;
  history?: string | false;
  days?: string;
  maxTokens?: string;
  minScore?: string;
  workspace?: string;
  format?: string;
  session?: string;
  logContext?: boolean;
  compact?: boolean;
  stats?: boolean;
}

type ScoredBullet = ContextResult["relevantBullets"][number];

/** `cm context <task>` / `cm ctx` (reference §1.5.2): the primary agent command. */
export function registerContext(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("context")
    .alias("ctx")
    .description("Get the rules, pitfalls and history relevant to a task (call before starting work)")
    .argument("[task]", "the task description ('-' or absent: read from stdin)")
    .option("-j, --json", "output a JSON envelope")
    .option("--limit <n>", "maximum number of rules (default: config maxBulletsInContext)")
    .option("--top <n>", "deprecated alias of --limit")
    .option("--history <n>", "maximum number of history snippets (default: config maxHistoryInContext)")
    .option("--no-history", "do not search past sessions")
    .option("--max-tokens <n>", "fit what is printed (in the chosen format) into about n tokens (≈ 4 characters each), lowest ranked first")
    .option("--compact", "token-lean view: each rule as id, content, category, kind, maturity, rounded scores, last helpful, stale reason")
    .option("--min-score <score>", "minimum relevance, 0-1: the share of the best match a rule needs (default: config minRelevanceScore, 0.1)")
    .option("--days <n>", "history lookback in days (default: config sessionLookbackDays)")
    .option("--workspace <path>", "workspace for workspace-scoped rules and history")
    .option("--format <format>", "output format: json, toon or markdown (overrides --json; default from CM_OUTPUT_FORMAT=toon)")
    .option("--stats", "print the JSON and TOON token counts of the output on stderr (structured output only)")
    .option("--session <id>", "session id recorded in the context log")
    .option("--log-context", "append this lookup to the context log (also CASS_CONTEXT_LOG=1)")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} context "fix the login bug" --json\n  ${cli} context "fix the login bug" --compact --format toon\n  ${cli} context "migrate the orders table" --max-tokens 2000 --no-history --json\n  ${cli} ctx "add pagination" --limit 10 --format markdown\n  echo "debug flaky test" | ${cli} context - --json\n`,
    )
    .action(async (taskArg: string | undefined, flags: ContextFlags) => {
      const structured = beginWithFormat(ctx, contextOperation.command, flags, ["json", "markdown", "toon"]);
      const markdown = structured === null && flags.format !== undefined;
      const compact = Boolean(flags.compact);

      let limit = intOption("limit", flags.limit);
      const top = intOption("top", flags.top);
      if (top !== undefined) {
        if (limit !== undefined) writeStderr("[context] Ignoring deprecated --top because --limit was also provided.");
        else {
          writeStderr("[context] --top is deprecated; use --limit.");
          limit = top;
        }
      }
      const noHistory = flags.history === false;
      const history = flags.history === false ? undefined : intOption("history", flags.history);
      const maxTokens = intOption("maxTokens", flags.maxTokens);
      const minScore = floatOption("minScore", flags.minScore, 0);
      const days = intOption("days", flags.days);
      const workspace = flags.workspace !== undefined ? canonicalWorkspace(flags.workspace) : undefined;
      // An empty task is rejected by the operation, with the original's message and hint.
      const task = taskArg === undefined || taskArg === "-" ? (await readStdin()).trim() : taskArg;
      const envLog = process.env.CASS_CONTEXT_LOG?.trim().toLowerCase();
      const view = (r: ContextResult): ContextResult | CompactContext => (compact ? compactContext(r, { verbose: ctx.verbose }) : r);
      // What would be printed, for --max-tokens: the envelope in JSON or TOON, or the text.
      const printed = (r: ContextResult): string =>
        structured !== null
          ? printedEnvelope(contextOperation.command, view(r), structured)
          : `${(markdown ? renderMarkdown(r, compact) : renderHuman(r, cli, compact)).join("\n")}\n`;
      const rt = await ctx.runtime();
      const result = await lookupContext(rt.deps, {
        task,
        ...(workspace !== undefined ? { workspace } : {}),
        currentDir: canonicalWorkspace(process.cwd()),
        ...(limit !== undefined ? { limit } : {}),
        ...(history !== undefined ? { history } : {}),
        ...(days !== undefined ? { days } : {}),
        ...(noHistory ? { noHistory: true } : {}),
        ...(maxTokens !== undefined ? { maxTokens } : {}),
        ...(minScore !== undefined ? { minScore } : {}),
        ...(flags.session !== undefined ? { session: flags.session } : {}),
        logContext: Boolean(flags.logContext) || envLog === "1" || envLog === "true",
      }, {
        measure: (r) => estimateTokens(printed(r)),
        onTrimmed: (removed) => {
          if (!ctx.verbose) return;
          const ids = [...removed.relevantBullets, ...removed.antiPatterns];
          writeStderr(`[context] --max-tokens left out ${ids.length} rule(s)${ids.length > 0 ? `: ${ids.join(", ")}` : ""} and ${removed.historySnippets} history snippet(s)`);
        },
      });
      if (result.traumaWarning) writeStderr(traumaBanner(result.traumaWarning));
      reportTokenStats(ctx, flags, view(result));
      emit(ctx, view(result), () => (markdown ? renderMarkdown(result, compact) : renderHuman(result, cli, compact)));
    });
}

/** `~` expanded, resolved against the cwd, symlinks resolved when the path exists. */
export function canonicalWorkspace(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed === "") {
    throw new AppError("INVALID_INPUT", "workspace must be a non-empty string.", { details: { field: "workspace", received: raw } });
  }
  const home = process.env.HOME || process.env.USERPROFILE || "";
  const expanded = trimmed === "~" ? home : trimmed.startsWith("~/") ? `${home}${trimmed.slice(1)}` : trimmed;
  const absolute = resolve(expanded);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

function traumaBanner(t: NonNullable<ContextResult["traumaWarning"]>): string {
  return [
    red(bold("CRITICAL WARNING: VISCERAL SAFETY INTERVENTION")),
    red(`Pattern: ${t.pattern}`),
    red(`Reason: ${t.reason}`),
    red(`Ref: ${t.reference}`),
    red(bold("DO NOT PROCEED WITHOUT EXTREME CAUTION.")),
  ].join("\n");
}

function bulletHeader(b: ScoredBullet): string {
  const kind = typeof b.kind === "string" ? b.kind : "rule";
  const maturity = typeof b.maturity === "string" ? b.maturity : "candidate";
  return `[${b.id}] ${b.category}/${kind} ${icon.bullet()} relevance ${fixed(b.relevanceScore, 2)} ${icon.bullet()} confidence ${fixed(b.effectiveScore, 2)} ${icon.bullet()} ${maturity}`;
}

function renderBullets(lines: string[], bullets: ScoredBullet[], width: number): void {
  for (const b of bullets) {
    lines.push(`  ${cyan(bulletHeader(b))}`);
    lines.push(...wrap(b.content, width, "    "));
    if (b.stale) lines.push(...wrap(`${icon.warning()} stale: ${b.stale.reason}`, width, "    ").map(yellow));
  }
}

function trimmedNote(t: NonNullable<ContextResult["trimmed"]>): string {
  const rules = t.relevantBullets + t.antiPatterns;
  if (t.estimatedTokens > t.maxTokens) {
    return `Over budget: ≈${t.estimatedTokens} tokens > --max-tokens ${t.maxTokens} with every rule and snippet removed (${rules} rules, ${t.historySnippets} snippets).`;
  }
  return `Trimmed to fit --max-tokens ${t.maxTokens} (≈${t.estimatedTokens} tokens): ${rules} rule${rules === 1 ? "" : "s"} and ${t.historySnippets} history snippet${t.historySnippets === 1 ? "" : "s"} left out.`;
}

/** The compact human view: the rules' text with id and category, no scores, no empty sections. */
function renderCompactHuman(r: ContextResult): string[] {
  const width = layoutWidth();
  const lines = [bold(`CONTEXT FOR: ${r.task}`)];
  const cass = r.degraded?.cass;
  if (cass) lines.push(yellow(`${icon.warning()} ${cassNote(cass)}${cass.suggestedFix?.[0] ? `; next: ${cass.suggestedFix[0]}` : ""}`));
  const rules = (title: string, bullets: ScoredBullet[]) => {
    if (bullets.length === 0) return;
    lines.push(bold(`${title} (${bullets.length})`));
    for (const b of bullets) {
      const tags = [b.category, typeof b.maturity === "string" && b.maturity !== "candidate" ? b.maturity : undefined].filter(Boolean).join(", ");
      lines.push(...wrap(`[${b.id}] (${tags}) ${b.content}${b.stale ? ` [stale: ${b.stale.reason}]` : ""}`, width, "  "));
    }
  };
  rules("RULES", r.relevantBullets);
  rules("PITFALLS", r.antiPatterns);
  if (r.relevantBullets.length === 0 && r.antiPatterns.length === 0) lines.push("(No relevant playbook rules found)");
  if (r.historySnippets.length > 0) {
    lines.push(bold(`HISTORY (${r.historySnippets.length})`));
    for (const h of r.historySnippets) lines.push(...wrap(`${h.agent} ${h.sessionPath}:${h.line_number}: ${h.snippet}`, width, "  "));
  }
  for (const w of r.deprecatedWarnings) lines.push(...wrap(`${icon.warning()} ${w}`, width, ""));
  if (r.olderHistory) lines.push(...wrap(r.olderHistory.message, width, "").map(dim));
  if (r.trimmed) lines.push(...wrap(trimmedNote(r.trimmed), width, "").map(dim));
  return lines;
}

/** One line about a failing cass: unavailable, or failing while another source answered. */
function cassNote(cass: NonNullable<NonNullable<ContextResult["degraded"]>["cass"]>): string {
  return cass.answeredBy !== undefined
    ? `cass failed (${cass.reason}); history from the ${cass.answeredBy} source instead`
    : `History unavailable (cass: ${cass.reason})`;
}

export function renderHuman(r: ContextResult, cli: string, compact = false): string[] {
  if (compact) return renderCompactHuman(r);
  const width = layoutWidth();
  const lines = [bold(`CONTEXT FOR: ${r.task}`), divider(width)];
  if (r.semanticError) lines.push(yellow(`${icon.warning()} Semantic search unavailable, using keyword matching (${r.semanticError}).`));
  const cass = r.degraded?.cass;
  if (cass) {
    lines.push(yellow(`${icon.warning()} ${cass.answeredBy !== undefined ? cassNote(cass) : `Local history unavailable (cass: ${cass.reason})`}.`));
    if (cass.suggestedFix?.[0]) lines.push(dim(`Next: ${cass.suggestedFix[0]}`));
  }
  lines.push("", bold(`PLAYBOOK RULES (${r.relevantBullets.length})`));
  if (r.relevantBullets.length === 0) {
    lines.push("  (No relevant playbook rules found)", dim(`  ${icon.tip()}Add one with '${cli} remember "<rule>"', or mine past sessions: '${cli} onboard guided'.`));
  } else renderBullets(lines, r.relevantBullets, width);
  if (r.antiPatterns.length > 0) {
    lines.push("", bold(`PITFALLS TO AVOID (${r.antiPatterns.length})`));
    renderBullets(lines, r.antiPatterns, width);
  }
  const hist = r.historySnippets;
  lines.push("", bold(hist.length > 3 ? `HISTORY (showing 3 of ${hist.length})` : `HISTORY (${hist.length})`));
  if (hist.length === 0) lines.push("  (No relevant history found)");
  if (r.olderHistory) lines.push(...wrap(r.olderHistory.message, width, "  ").map(dim));
  hist.slice(0, 3).forEach((h, i) => {
    lines.push(`  ${i + 1}. ${h.agent} ${icon.bullet()} ${h.sessionPath}:${h.line_number}`);
    lines.push(...wrap(h.snippet, width, "     "));
  });
  if (r.deprecatedWarnings.length > 0) {
    lines.push("", bold(`WARNINGS (${r.deprecatedWarnings.length})`));
    for (const w of r.deprecatedWarnings) lines.push(...wrap(`${icon.warning()} ${w}`, width, "  "));
  }
  if (r.suggestedCassQueries.length > 0) {
    lines.push("", bold("SUGGESTED SEARCHES"));
    for (const q of r.suggestedCassQueries) lines.push(`  ${q}`);
  }
  if (r.trimmed) lines.push("", ...wrap(trimmedNote(r.trimmed), width, "").map(dim));
  return lines;
}

/** Compact markdown: one line per rule, only the sections that have something. */
function renderCompactMarkdown(r: ContextResult): string[] {
  const rule = (b: ScoredBullet) => {
    const tags = [b.category, typeof b.maturity === "string" && b.maturity !== "candidate" ? b.maturity : undefined].filter(Boolean).join(", ");
    return `- **${b.id}** (${tags}): ${b.content}${b.stale ? ` _(stale: ${b.stale.reason})_` : ""}`;
  };
  const lines = [`# Context for: ${r.task}`];
  if (r.relevantBullets.length > 0) lines.push("", `## Rules (${r.relevantBullets.length})`, ...r.relevantBullets.map(rule));
  if (r.antiPatterns.length > 0) lines.push("", `## Pitfalls (${r.antiPatterns.length})`, ...r.antiPatterns.map(rule));
  if (r.relevantBullets.length === 0 && r.antiPatterns.length === 0) lines.push("", "_No relevant rules._");
  if (r.historySnippets.length > 0) {
    lines.push("", `## History (${r.historySnippets.length})`);
    for (const h of r.historySnippets) lines.push(`- ${h.agent} \`${h.sessionPath}:${h.line_number}\`: ${h.snippet}`);
  }
  const cass = r.degraded?.cass;
  if (r.olderHistory) lines.push("", `_${r.olderHistory.message}_`);
  if (cass) lines.push("", `_${cassNote(cass)}${cass.suggestedFix?.[0] ? `; next: \`${cass.suggestedFix[0]}\`` : ""}._`);
  if (r.deprecatedWarnings.length > 0) lines.push("", "## Warnings", ...r.deprecatedWarnings.map((w) => `- ${w}`));
  if (r.trimmed) lines.push("", `_${trimmedNote(r.trimmed)}_`);
  return lines;
}

export function renderMarkdown(r: ContextResult, compact = false): string[] {
  if (compact) return renderCompactMarkdown(r);
  const rule = (b: ScoredBullet) =>
    `- **${b.id}** (${b.category}/${typeof b.kind === "string" ? b.kind : "rule"}, relevance ${fixed(b.relevanceScore, 2)}, confidence ${fixed(b.effectiveScore, 2)}): ${b.content}${b.stale ? ` _(stale: ${b.stale.reason})_` : ""}`;
  const lines = [`# Context for: ${r.task}`, "", `## Playbook rules (${r.relevantBullets.length})`];
  lines.push(...(r.relevantBullets.length > 0 ? r.relevantBullets.map(rule) : ["_None._"]));
  lines.push("", `## Pitfalls (${r.antiPatterns.length})`);
  lines.push(...(r.antiPatterns.length > 0 ? r.antiPatterns.map(rule) : ["_None._"]));
  lines.push("", `## History (${r.historySnippets.length})`);
  for (const h of r.historySnippets.slice(0, 3)) lines.push(`- ${h.agent} \`${h.sessionPath}:${h.line_number}\`: ${h.snippet}`);
  if (r.historySnippets.length > 3) lines.push(`- … and ${r.historySnippets.length - 3} more`);
  if (r.historySnippets.length === 0) lines.push(r.degraded?.cass ? `_${cassNote(r.degraded.cass)}._` : "_None._");
  if (r.olderHistory) lines.push(`_${r.olderHistory.message}_`);
  lines.push("", `## Warnings (${r.deprecatedWarnings.length})`);
  lines.push(...(r.deprecatedWarnings.length > 0 ? r.deprecatedWarnings.map((w) => `- ${w}`) : ["_None._"]));
  lines.push("", "## Suggested searches");
  lines.push(...(r.suggestedCassQueries.length > 0 ? r.suggestedCassQueries.map((q) => `- \`${q}\``) : ["_None._"]));
  if (r.trimmed) lines.push("", `_${trimmedNote(r.trimmed)}_`);
  return lines;
}
