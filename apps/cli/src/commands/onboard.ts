import { resolve } from "node:path";
import type { Command } from "commander";
import {
  RULE_CATEGORIES,
  onboardGapsOperation,
  onboardGuidedOperation,
  onboardMarkDoneOperation,
  onboardPromptOperation,
  onboardReadOperation,
  onboardReadTemplateOperation,
  onboardResetOperation,
  onboardSampleOperation,
  onboardStatusOperation,
  type OnboardGuidedResult,
  type OnboardMarkDoneResult,
  type OnboardOverview,
  type OnboardReadResult,
  type OnboardReadTemplate,
  type OnboardSampleResult,
  type OnboardStatus,
  type PlaybookGapAnalysis,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, cyan, dim, divider, green, icon, layoutWidth, noEmoji, red, tildify, wrap, yellow } from "../human.js";
import { ask, intOption, isInteractive } from "../options.js";
import { writeStderr } from "../output.js";
import { canonicalWorkspace } from "./context.js";

/**
 * `cm onboard status|gaps|sample|read|prompt|guided|mark-done|reset` (reference §1.5.24): the
 * agent mines its own past sessions for playbook rules, with no LLM API involved. Works with any
 * history source; without one, `sample` answers empty with the reason.
 */
export function registerOnboard(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const group = program
    .command("onboard")
    .description("Agent-native onboarding: find past sessions worth mining and turn them into playbook rules")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} onboard status\n  ${cli} onboard gaps --json\n  ${cli} onboard sample --fill-gaps --json\n  ${cli} onboard read ~/.claude/projects/app/session.jsonl --template --json\n  ${cli} onboard mark-done ~/.claude/projects/app/session.jsonl\n`,
    );

  group
    .command("status")
    .description("History availability, playbook size, progress so far and category gaps")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard status\n  ${cli} onboard status --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(onboardStatusOperation.command, Boolean(flags.json));
      const result = await run(ctx, onboardStatusOperation, {});
      emit(ctx, result, () => renderStatus(result));
    });

  group
    .command("gaps")
    .description("Active rules per standard category, and the categories that are empty or thin")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard gaps\n  ${cli} onboard gaps --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(onboardGapsOperation.command, Boolean(flags.json));
      const result = await run(ctx, onboardGapsOperation, {});
      emit(ctx, result, () => renderGaps(result.gapAnalysis, cli));
    });

  group
    .command("sample")
    .description("Past sessions worth mining for rules (already-processed ones are skipped)")
    .option("--limit <n>", "how many sessions to return (default 10)")
    .option("--fill-gaps", "look for sessions about the playbook's empty and thin categories first")
    .option("--include-processed", "also return sessions already processed")
    .option("--workspace <path>", "only sessions of this workspace")
    .option("--agent <name>", "only sessions of this agent (e.g. claude, codex)")
    .option("--days <n>", "how far back to look, in days (default 90)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} onboard sample --json\n  ${cli} onboard sample --fill-gaps --limit 5\n  ${cli} onboard sample --agent claude --days 30 --json\n`,
    )
    .action(async (flags: SampleFlags) => {
      ctx.begin(onboardSampleOperation.command, Boolean(flags.json));
      const limit = intOption("limit", flags.limit);
      const days = intOption("days", flags.days);
      const result = await run(ctx, onboardSampleOperation, {
        ...(limit !== undefined ? { limit } : {}),
        ...(days !== undefined ? { days } : {}),
        ...(flags.fillGaps ? { fillGaps: true } : {}),
        ...(flags.includeProcessed ? { includeProcessed: true } : {}),
        ...(flags.workspace !== undefined ? { workspace: canonicalWorkspace(flags.workspace) } : {}),
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
      });
      emit(ctx, result, () => renderSample(result, Boolean(flags.fillGaps), cli));
    });

  group
    .command("read")
    .description("Print one session (secrets redacted) with the rule-extraction instructions")
    .argument("<path>", "the session file (as listed by onboard sample)")
    .option("--template", "a structured template: metadata, topics, related rules, gaps, rule format")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} onboard read ~/.codex/sessions/2026/01/05/rollout.jsonl\n  ${cli} onboard read ~/.claude/projects/app/session.jsonl --template --json\n`,
    )
    .action(async (rawPath: string, flags: { template?: boolean; json?: boolean }) => {
      const json = Boolean(flags.json);
      const path = resolvePath(rawPath);
      if (flags.template) {
        ctx.begin(onboardReadTemplateOperation.command, json);
        const result = await run(ctx, onboardReadTemplateOperation, { path });
        emit(ctx, result, () => renderTemplate(result, cli));
        return;
      }
      ctx.begin(onboardReadOperation.command, json);
      const result = await run(ctx, onboardReadOperation, { path });
      if (!json && result.sessionContent === null) {
        writeStderr(red(`Failed to read session: ${result.sessionPath}`));
        return;
      }
      emit(ctx, result, () => renderRead(result, cli));
    });

  group
    .command("prompt")
    .description("The instructions for extracting rules from a session")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard prompt\n  ${cli} onboard prompt --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(onboardPromptOperation.command, Boolean(flags.json));
      const result = await run(ctx, onboardPromptOperation, {});
      emit(ctx, result, () => result.extractionPrompt);
    });

  group
    .command("guided")
    .description("Step-by-step onboarding guide for an agent")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard guided\n  ${cli} onboard guided --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(onboardGuidedOperation.command, Boolean(flags.json));
      const result = await run(ctx, onboardGuidedOperation, {});
      emit(ctx, result, () => renderGuided(result, cli));
    });

  group
    .command("mark-done")
    .description("Mark a session as processed without extracting rules (sampling skips it)")
    .argument("<path>", "the session file")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard mark-done ~/.claude/projects/app/session.jsonl\n  ${cli} onboard mark-done /path/to/session.jsonl --json\n`)
    .action(async (rawPath: string, flags: { json?: boolean }) => {
      ctx.begin(onboardMarkDoneOperation.command, Boolean(flags.json));
      const result = await run(ctx, onboardMarkDoneOperation, { path: resolvePath(rawPath) });
      emit(ctx, result, () => renderMarkDone(result));
    });

  group
    .command("reset")
    .description("Forget onboarding progress (which sessions were processed)")
    .option("-y, --yes", "confirm without prompting")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} onboard reset\n  ${cli} onboard reset --yes --json\n`)
    .action(async (flags: { yes?: boolean; json?: boolean }) => {
      const json = Boolean(flags.json);
      ctx.begin(onboardResetOperation.command, json);
      let yes = Boolean(flags.yes);
      if (!yes && !json && isInteractive()) {
        yes = (await ask("Reset onboarding progress? This cannot be undone. [y/N] ")).toLowerCase() === "y";
        if (!yes) {
          writeStderr(dim("Cancelled."));
          return;
        }
      }
      const result = await run(ctx, onboardResetOperation, { yes });
      emit(ctx, result, () => green(`${icon.success()} ${result.message}`));
    });
}

interface SampleFlags {
  limit?: string;
  days?: string;
  fillGaps?: boolean;
  includeProcessed?: boolean;
  workspace?: string;
  agent?: string;
  json?: boolean;
}

/**
 * `~` expanded and resolved against the working directory (session paths are recorded absolute,
 * as the original does). Blank input is passed on so that the operation reports it.
 */
function resolvePath(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed === "") return raw;
  const home = process.env.HOME || process.env.USERPROFILE || "";
  const expanded = trimmed === "~" ? home : trimmed.startsWith("~/") ? `${home}${trimmed.slice(1)}` : trimmed;
  return resolve(expanded);
}

/** "just now", "5 minutes ago", "3 days ago", … for a past ISO timestamp. */
function ago(iso: string, now = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.max(0, Math.floor((now - then) / 1000));
  const unit = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"} ago`;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return unit(Math.floor(seconds / 60), "minute");
  if (seconds < 86_400) return unit(Math.floor(seconds / 3600), "hour");
  const days = Math.floor(seconds / 86_400);
  if (days < 7) return unit(days, "day");
  if (days < 30) return unit(Math.floor(days / 7), "week");
  if (days < 365) return unit(Math.floor(days / 30), "month");
  return unit(Math.floor(days / 365), "year");
}

function kv(rows: Array<[string, string]>): string[] {
  const pad = Math.max(...rows.map(([k]) => k.length)) + 2;
  return rows.map(([k, v]) => `  ${`${k}:`.padEnd(pad)}${v}`);
}

function historyLine(s: OnboardStatus): string {
  const cass = s.historySource !== "cass" ? (s.cassAvailable ? ", cass installed" : ", cass not installed") : "";
  return s.historyAvailable ? `${s.historySource} (available${cass})` : `${s.historySource} (not available${cass})`;
}

function renderStatus(r: OnboardOverview): string[] {
  const { status: s, progress: p, gapAnalysis: g } = r;
  const width = layoutWidth();
  const rows: Array<[string, string]> = [["History source", historyLine(s)]];
  if (s.historyAvailable) rows.push(["Conversations", `${s.totalConversations} in the last year${s.totalMessages > 0 ? ` (${s.totalMessages} messages)` : ""}`]);
  rows.push(["Playbook rules", String(s.playbookRules)], ["Needs onboarding", s.needsOnboarding ? "yes" : "no"]);
  const lines = [bold("ONBOARDING STATUS"), divider(width), ...kv(rows)];
  if (p.hasStarted) {
    lines.push(
      "",
      bold("PROGRESS"),
      divider(width),
      ...kv([
        ["Sessions analyzed", String(p.sessionsProcessed)],
        ["Rules extracted", String(p.rulesExtracted)],
        ["Started", p.startedAt ? ago(p.startedAt) : "never"],
        ["Last activity", p.lastActivity ? ago(p.lastActivity) : "never"],
      ]),
    );
  }
  if (g.gaps.critical.length > 0 || g.gaps.underrepresented.length > 0) {
    lines.push("", bold("GAPS"), divider(width));
    if (g.gaps.critical.length > 0) lines.push(...wrapAfterLabel("  Critical: ", g.gaps.critical.join(", "), width).map(red));
    if (g.gaps.underrepresented.length > 0) lines.push(...wrapAfterLabel("  Low: ", g.gaps.underrepresented.join(", "), width).map(yellow));
  }
  lines.push("", ...wrap(s.recommendation, width).map(yellow));
  return lines;
}

/** `label` then `text` wrapped to `width`, continuation lines indented under the text. */
function wrapAfterLabel(label: string, text: string, width: number): string[] {
  const indent = " ".repeat(label.length);
  const lines = wrap(text, width, indent);
  return lines.map((line, i) => (i === 0 ? label + line.slice(indent.length) : line));
}

function renderGaps(g: PlaybookGapAnalysis, cli: string): string[] {
  const width = layoutWidth();
  const lines = [bold("PLAYBOOK GAP ANALYSIS"), divider(width), dim(`Total rules: ${g.totalRules}`), ""];
  const countOf = (cat: string) => g.byCategory[cat]?.count ?? 0;
  if (g.gaps.critical.length > 0) {
    lines.push(red(bold("CRITICAL (0 rules):")), ...g.gaps.critical.map((c) => red(`  ${icon.failure()} ${c}`)), "");
  }
  if (g.gaps.underrepresented.length > 0) {
    lines.push(yellow(bold("UNDERREPRESENTED (1-2 rules):")), ...g.gaps.underrepresented.map((c) => yellow(`  ${icon.warning()} ${c} (${countOf(c)})`)), "");
  }
  if (g.wellCovered.length > 0) {
    lines.push(green(bold("WELL-COVERED (11+ rules):")), ...g.wellCovered.map((c) => green(`  ${icon.success()} ${c} (${countOf(c)})`)), "");
  }
  const [full, empty] = noEmoji() ? ["#", "."] : ["█", "░"];
  lines.push(bold("CATEGORY BREAKDOWN:"));
  for (const cat of RULE_CATEGORIES) {
    const entry = g.byCategory[cat];
    const n = entry?.count ?? 0;
    const bar = full.repeat(Math.min(20, n)) + empty.repeat(Math.max(0, 20 - n));
    const color = entry?.status === "critical" ? red : entry?.status === "underrepresented" ? yellow : entry?.status === "well-covered" ? green : cyan;
    lines.push(`  ${cat.padEnd(15)} ${color(bar)} ${n}`);
  }
  lines.push("", ...wrap(g.suggestions, width).map(yellow), "", dim(`To sample sessions that fill gaps: ${cli} onboard sample --fill-gaps`));
  return lines;
}

function renderSample(r: OnboardSampleResult, fillGaps: boolean, cli: string): string[] {
  const lines = [bold(fillGaps ? "SAMPLED SESSIONS FOR GAP-FILLING" : "SAMPLED SESSIONS FOR ANALYSIS")];
  if (fillGaps) {
    const analysis = r.gapAnalysis;
    const priority = analysis ? [...analysis.gaps.critical, ...analysis.gaps.underrepresented].slice(0, 3) : [];
    lines.push(dim(priority.length > 0 ? `(prioritized for: ${priority.join(", ")})` : "(no gaps to fill - using diverse sampling)"));
  }
  if (r.filtered > 0) lines.push(dim(`(${r.filtered} already-processed session${r.filtered === 1 ? "" : "s"} filtered out)`));
  const degraded = r.degraded?.cass;
  if (degraded) {
    lines.push(yellow(`${icon.warning()} History unavailable (${r.status.historySource}: ${degraded.reason}).`));
    lines.push(...wrap(degraded.message, layoutWidth(), "  ").map(dim));
    if (degraded.suggestedFix?.length) lines.push(dim(`  Next: ${degraded.suggestedFix.join("; ")}`));
  }
  lines.push("");
  if (r.sessions.length === 0) {
    lines.push(yellow(r.olderSessions ? `No unprocessed sessions found in the last ${r.olderSessions.days} days.` : "No unprocessed sessions found."));
    if (r.olderSessions) lines.push(`${r.olderSessions.sessions} older unprocessed session(s) exist: use ${cyan(r.olderSessions.flag)} to include them.`);
    if (r.progress.sessionsProcessed > 0) {
      lines.push(dim(`You've analyzed ${r.progress.sessionsProcessed} session${r.progress.sessionsProcessed === 1 ? "" : "s"} so far.`));
      lines.push(dim(`Use --include-processed to see them again, or '${cli} onboard reset' to start over.`));
    }
    return lines;
  }
  for (const s of r.sessions) {
    lines.push(cyan(`[${s.agent}] ${basename(s.workspace)}`), dim(`  ${s.path}`));
    if (fillGaps && s.gapScore !== undefined && s.gapScore > 0) lines.push(`  Gap score: ${s.gapScore} (${(s.matchedCategories ?? []).join(", ")})`);
    const flat = s.snippet.replace(/\s+/g, " ").trim();
    lines.push(dim(`  "${flat.length > 80 ? `${flat.slice(0, 80)}...` : flat}"`), "");
  }
  lines.push(dim(`To read a session: ${cli} onboard read <path>`));
  return lines;
}

function basename(path: string): string {
  const trimmed = path.replace(/[\\/]+$/, "");
  const cut = Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"));
  return cut < 0 ? trimmed : trimmed.slice(cut + 1);
}

function renderRead(r: OnboardReadResult, cli: string): string[] {
  const rule = dim((noEmoji() ? "-" : "─").repeat(60));
  return [
    bold(`SESSION: ${r.sessionPath}`),
    rule,
    r.sessionContent ?? "",
    rule,
    "",
    yellow("Now analyze this session and extract rules using:"),
    cyan(`  ${cli} playbook add "Your rule" --category "category" --session ${r.sessionPath}`),
    "",
    dim(`For extraction guidance: ${cli} onboard prompt`),
    dim(`For rich context: ${cli} onboard read <path> --template`),
  ];
}

function renderTemplate(t: OnboardReadTemplate, cli: string): string[] {
  const rule = dim((noEmoji() ? "-" : "─").repeat(60));
  const width = layoutWidth();
  const lines = [bold("SESSION ANALYSIS TEMPLATE"), rule, "", bold("METADATA")];
  lines.push(`  Path: ${tildify(t.metadata.path)}`, `  Agent: ${t.metadata.agent}`, `  Workspace: ${t.metadata.workspaceName}`, `  Lines: ~${t.metadata.messageCount}`);
  if (t.metadata.topicHints.length > 0) lines.push(`  Topics: ${t.metadata.topicHints.join(", ")}`);
  lines.push("", bold("CONTEXT"));
  const gaps = t.context.playbookGaps;
  if (gaps.critical.length > 0) lines.push(red(`  Critical gaps: ${gaps.critical.join(", ")}`));
  if (gaps.underrepresented.length > 0) lines.push(yellow(`  Low coverage: ${gaps.underrepresented.join(", ")}`));
  if (t.context.relatedRules.length > 0) {
    lines.push(cyan("  Related rules (already in the playbook):"));
    for (const r of t.context.relatedRules.slice(0, 3)) {
      const text = r.content.length > 60 ? `${r.content.slice(0, 60)}...` : r.content;
      lines.push(dim(`    ${icon.bullet()} [${r.id}] "${text}" (${Math.round(r.similarity * 100)}%)`));
    }
  }
  if (gaps.critical.length === 0 && gaps.underrepresented.length === 0 && t.context.relatedRules.length === 0) lines.push(dim("  (no gaps, no related rules)"));
  lines.push("", bold("SUGGESTED FOCUS"), ...wrap(t.context.suggestedFocus, width, "  ").map(yellow), "");
  lines.push(bold("SESSION CONTENT"), rule, t.sessionContent, rule, "");
  lines.push(
    bold("EXTRACTION INSTRUCTIONS"),
    dim(`Categories: ${t.extractionFormat.categories.join(", ")}`),
    dim("After analyzing, add rules using:"),
    cyan(`  ${cli} playbook add "Your rule" --category "category" --session ${t.metadata.path}`),
    dim(`Or several at once: ${cli} playbook add --file rules.json --session ${t.metadata.path}`),
    dim(`Full instructions: ${cli} onboard prompt`),
  );
  return lines;
}

function renderGuided(r: OnboardGuidedResult, cli: string): string[] {
  const s = r.status;
  return [
    bold("# Agent-Native Onboarding"),
    "",
    bold("Current status:"),
    s.historyAvailable ? green(`${icon.success()} history available (${s.historySource})`) : red(`${icon.failure()} history not available (${s.historySource})`),
    cyan(`Playbook rules: ${s.playbookRules}`),
    "",
    yellow(bold(s.recommendation)),
    "",
    "---",
    "",
    bold("## How it works"),
    "",
    "You, the coding agent, read your own past sessions and write down what they teach as",
    "playbook rules. No LLM API is called: the analysis happens in your own session.",
    "",
    bold("## Steps"),
    "",
    bold("### 1. Find sessions worth reading"),
    `    ${cli} onboard sample --json            (add --fill-gaps to target thin categories)`,
    "",
    bold("### 2. Read one"),
    `    ${cli} onboard read <session-path> --template --json`,
    "",
    bold("### 3. Extract rules"),
    `    Follow the instructions from '${cli} onboard prompt': specific, actionable, scoped rules.`,
    "",
    bold("### 4. Add them, naming the session"),
    `    ${cli} playbook add "Your rule" --category <category> --session <session-path>`,
    `    ${cli} playbook add --file rules.json --session <session-path>`,
    `    Nothing worth keeping? ${cli} onboard mark-done <session-path>`,
    "",
    bold("### 5. Repeat"),
    "    10-20 varied sessions give a useful first playbook. Check coverage with",
    `    '${cli} onboard gaps' and progress with '${cli} onboard status'.`,
    "",
    bold("## Categories"),
    "",
    `    ${r.categories.join(", ")}`,
    "",
    bold("## Example rules"),
    "",
    ...r.examples.map((e) => `  ${icon.bullet()} ${e.category}: "${e.rule}"`),
  ];
}

function renderMarkDone(r: OnboardMarkDoneResult): string[] {
  const lines = [green(`${icon.success()} Marked as processed: ${r.sessionPath}`)];
  lines.push(dim(r.skipped ? "  (0 rules extracted - session skipped)" : `  (${r.rulesExtracted} rule${r.rulesExtracted === 1 ? "" : "s"} extracted earlier)`));
  return lines;
}
