import { resolve } from "node:path";
import type { Command } from "commander";
import { auditOperation, diaryOperation, reflectOperation, traumaScanOperation, type AuditResult, type Delta, type DiaryEntry, type DiaryResult, type ReflectResult, type TraumaScanResult } from "@cass-memory/core";
import { emit, run, runLearning, type CliContext } from "../cli-context.js";
import { bold, cyan, dim, green, icon, red, tildify, yellow } from "../human.js";
import { intOption } from "../options.js";

/**
 * The learning commands: `reflect` (alias `improve`), `diary` and `audit` (reference §1.5.14,
 * §1.5.16). Progress goes to stderr; stdout holds the result only.
 */
export function registerReflect(program: Command, ctx: CliContext): void {
  registerReflectCommand(program, ctx, "reflect", ["ref"], "Learn from recent agent sessions: diaries → proposed rules → validation → curated playbook");
  registerReflectCommand(program, ctx, "improve", [], "Same as reflect: turn recent sessions into playbook rules");
  registerDiary(program, ctx);
  registerAudit(program, ctx);
}

interface ReflectFlags {
  days?: string;
  maxSessions?: string;
  agent?: string;
  workspace?: string;
  session?: string;
  dryRun?: boolean;
  json?: boolean;
}

function registerReflectCommand(program: Command, ctx: CliContext, name: string, aliases: string[], description: string): void {
  const cli = ctx.cliName;
  const command = program
    .command(name)
    .description(description)
    .option("--days <n>", "look back this many days for sessions (default: config sessionLookbackDays, 7)")
    .option("--max-sessions <n>", "process at most this many sessions (default 5)")
    .option("--agent <name>", "only sessions of this agent (claude, codex, gemini, …)")
    .option("--workspace <path>", "only sessions of this workspace; uses its own processed log")
    .option("--session <path>", "reflect on this one session file")
    .option("--dry-run", "show the deltas that would be applied; write nothing")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} ${name}\n  ${cli} ${name} --days 14 --max-sessions 10 --json\n  ${cli} ${name} --session ~/.claude/projects/app/1234.jsonl --dry-run\n  CASS_MEMORY_LLM=none ${cli} ${name}   # no LLM: deterministic diaries and lessons\n\nEach run that changes the playbook prints a run id; '${cli} undo --run <id>' reverts it.\n`,
    )
    .action(async (flags: ReflectFlags) => {
      ctx.begin(reflectOperation.command, Boolean(flags.json));
      const days = intOption("days", flags.days);
      const maxSessions = intOption("max-sessions", flags.maxSessions);
      const result = await runLearning(ctx, reflectOperation, {
        ...(days !== undefined ? { days } : {}),
        ...(maxSessions !== undefined ? { maxSessions } : {}),
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
        ...(flags.workspace !== undefined ? { workspace: resolve(flags.workspace) } : {}),
        ...(flags.session !== undefined ? { session: resolve(expandTilde(flags.session)) } : {}),
        ...(flags.dryRun ? { dryRun: true } : {}),
      });
      emit(ctx, result, () => renderReflect(result, cli, flags.workspace));
    });
  for (const alias of aliases) command.alias(alias);
}

function expandTilde(path: string): string {
  const home = process.env.HOME;
  return path.startsWith("~/") && home ? `${home}${path.slice(1)}` : path;
}

function renderReflect(r: ReflectResult, cli: string, workspace?: string): string[] {
  const lines = [bold(r.dryRun ? "REFLECT (dry run)" : "REFLECT"), `Workspace: ${workspace ?? "global"}`, dim(`Mode: ${modeLabel(r)}`)];
  for (const f of r.fallbacks) lines.push(yellow(`${icon.warning()} LLM ${f.component} switched to the deterministic one (${f.code ?? "error"}): ${f.reason}`));
  if (r.sessionsProcessed === 0) {
    const skipped = r.sessions.filter((s) => s.status === "skipped");
    for (const s of skipped) lines.push(dim(`  Skipped ${tildify(s.path)}: ${s.reason ?? ""}`));
    lines.push("No new sessions to reflect on.");
    for (const e of r.errors) lines.push(red(`  ${e}`));
    return lines;
  }
  for (const s of r.sessions) {
    const badge = s.status === "failed" ? red(icon.failure()) : s.status === "skipped" ? dim("-") : green(icon.success());
    const detail = s.status === "processed" ? `${s.deltas} delta(s)${s.rejected > 0 ? `, ${s.rejected} rejected by validation` : ""}` : (s.reason ?? "");
    lines.push(`  ${badge} ${tildify(s.path)} ${dim(`(${s.agent})`)} ${detail}`);
  }
  if (r.dryRun) {
    lines.push("", bold("DRY RUN - nothing was written"), `Sessions processed: ${r.sessionsProcessed}`, `Deltas generated: ${r.deltasGenerated}`);
    const deltas = r.deltas ?? [];
    const counts = new Map<string, number>();
    for (const d of deltas) counts.set(d.type, (counts.get(d.type) ?? 0) + 1);
    if (counts.size > 0) lines.push(`  ${[...counts].map(([t, n]) => `${t}: ${n}`).join(", ")}`);
    for (const d of deltas.slice(0, 10)) lines.push(`  ${describeDelta(d)}`);
    if (deltas.length > 10) lines.push(dim(`  … ${deltas.length - 10} more (use --json for all)`));
    return lines;
  }
  lines.push("", green(`${icon.success()} Reflection complete.`), `  Sessions processed: ${r.sessionsProcessed}`, `  Deltas generated: ${r.deltasGenerated}`);
  const unvalidated = r.validation.filter((v) => v.valid && v.unvalidated === true).length;
  if (unvalidated > 0) lines.push(yellow(`  Unvalidated: ${unvalidated} rule(s) had no history to check them against; added as draft candidates.`));
  for (const [label, c] of [["Global Updates:", r.global], ["Repo Updates:", r.repo]] as const) {
    if (c === undefined) continue;
    lines.push(bold(label), `  Applied: ${c.applied}`, `  Skipped: ${c.skipped}`, `  Inversions: ${c.inversions.length}`);
    if (c.conflicts.length > 0) lines.push(yellow(`  Conflicts to review: ${c.conflicts.length}`));
  }
  if (r.autoOutcome !== undefined) {
    const a = r.autoOutcome;
    lines.push(bold("Auto-Outcome Recording:"), `  Outcomes recorded: ${a.outcomesRecorded}`, `  Feedback applied: ${a.feedbackApplied}`, `  Inline feedback: ${a.inlineFeedbackDeltas}`);
    if (a.missingRules.length > 0) lines.push(dim(`  Unknown rule ids: ${a.missingRules.join(", ")}`));
  }
  if (r.errors.length > 0) {
    lines.push(red(`Errors (${r.errors.length}):`));
    for (const e of r.errors) lines.push(red(`  ${e}`));
  }
  if (r.runId !== undefined) lines.push(dim(`Run id: ${r.runId} — revert it with: ${cli} undo --run ${r.runId}`));
  return lines;
}

function modeLabel(r: ReflectResult): string {
  const model = r.model !== undefined ? `${r.model.provider}/${r.model.model}` : "LLM";
  if (r.mode === "llm") return `LLM (${model})`;
  if (r.mode === "mixed") return `mixed: LLM (${model}) until a stage failed, deterministic after`;
  return r.model !== undefined ? `deterministic (the LLM ${model} failed)` : "deterministic (no LLM)";
}

function describeDelta(d: Delta): string {
  switch (d.type) {
    case "add":
      return `${green("ADD")}  [${d.bullet.category}] ${d.bullet.content}`;
    case "replace":
      return `${cyan("REPLACE")}  ${d.bulletId} → ${d.newContent}`;
    case "deprecate":
      return `${yellow("DEPRECATE")}  ${d.bulletId} (${d.reason})`;
    case "helpful":
      return `${green("HELPFUL")}  ${d.bulletId}`;
    case "harmful":
      return `${red("HARMFUL")}  ${d.bulletId}${d.reason ? ` (${d.reason})` : ""}`;
    case "merge":
      return `${cyan("MERGE")}  ${d.bulletIds.join(", ")} → ${d.mergedContent}`;
  }
}

// --------------------------------------------------------------------------------------------- diary

function registerDiary(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("diary")
    .description("Summarise one session into a diary entry (accomplishments, decisions, challenges, learnings), or list entries")
    .argument("[session]", "the session file")
    .option("--list", "list saved diary entries, newest first")
    .option("--limit <n>", "with --list: at most this many (default 20)")
    .option("--dry-run", "show the entry without saving it")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} diary ~/.claude/projects/app/1234.jsonl\n  ${cli} diary ~/.codex/sessions/2026/11/20/rollout.jsonl --dry-run --json\n  ${cli} diary --list --limit 5\n`,
    )
    .action(async (session: string | undefined, flags: { list?: boolean; limit?: string; dryRun?: boolean; json?: boolean }) => {
      ctx.begin(diaryOperation.command, Boolean(flags.json));
      const limit = intOption("limit", flags.limit);
      const result = await runLearning(ctx, diaryOperation, {
        ...(session !== undefined ? { session: resolve(expandTilde(session)) } : {}),
        ...(flags.list ? { list: true } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(flags.dryRun ? { dryRun: true } : {}),
      });
      emit(ctx, result, () => renderDiary(result));
    });
}

function renderDiary(r: DiaryResult): string[] {
  if (r.entries !== undefined) {
    if (r.entries.length === 0) return ["No diary entries yet. Create one with 'cm diary <session>' or 'cm reflect'."];
    return r.entries.flatMap((e) => [`${bold(e.id)} ${dim(e.timestamp)} ${statusBadge(e.status)} ${dim(e.agent)}`, `  ${tildify(e.sessionPath)}`, ...(e.keyLearnings[0] ? [`  ${e.keyLearnings[0]}`] : [])]);
  }
  const e = r.entry as DiaryEntry;
  const lines = [bold(`DIARY ${e.id}`), `Session: ${tildify(e.sessionPath)} (${e.agent})`, `Status: ${statusBadge(e.status)}`];
  const section = (title: string, items: readonly string[]): void => {
    if (items.length === 0) return;
    lines.push(bold(title));
    for (const item of items) lines.push(`  - ${item}`);
  };
  section("Accomplishments", e.accomplishments);
  section("Decisions", e.decisions);
  section("Challenges", e.challenges);
  section("Preferences", e.preferences);
  section("Key learnings", e.keyLearnings);
  if (e.tags.length > 0) lines.push(dim(`Tags: ${e.tags.join(", ")}`));
  for (const f of r.fallbacks ?? []) lines.push(yellow(`${icon.warning()} LLM failed; used the deterministic writer: ${f.reason}`));
  lines.push(r.path !== undefined ? green(`${icon.success()} Saved to ${tildify(r.path)}`) : dim("Dry run: not saved."));
  return lines;
}

function statusBadge(status: string): string {
  return status === "success" ? green(status) : status === "failure" ? red(status) : yellow(status);
}

// --------------------------------------------------------------------------------------------- audit

function registerAudit(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("audit")
    .description("Check recent sessions for violations of the playbook's rules (needs an LLM)")
    .option("--days <n>", "look back this many days (default 7)")
    .option("--limit <n>", "audit at most this many sessions, newest first (default 20)")
    .option("--trauma", "scan sessions for destructive commands (DOOM patterns) instead; no LLM needed")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} audit\n  ${cli} audit --days 30 --limit 50 --json\n  ${cli} audit --trauma --days 30\n`)
    .action(async (flags: { days?: string; limit?: string; trauma?: boolean; json?: boolean }) => {
      ctx.begin(auditOperation.command, Boolean(flags.json));
      if (flags.trauma) {
        const scanDays = intOption("days", flags.days);
        const scan = await run(ctx, traumaScanOperation, scanDays !== undefined ? { days: scanDays } : {});
        emit(ctx, scan, () => renderTraumaScan(scan, cli));
        return;
      }
      const days = intOption("days", flags.days);
      const limit = intOption("limit", flags.limit);
      const result = await runLearning(ctx, auditOperation, {
        ...(days !== undefined ? { days } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
      emit(ctx, result, () => renderAudit(result, days ?? 7));
    });
}

function renderTraumaScan(r: TraumaScanResult, cli: string): string[] {
  const lines: string[] = [];
  if (r.degraded) lines.push(yellow(`${icon.warning()} Session history unavailable (${r.degraded.cass.reason}): ${r.degraded.cass.message}`));
  if (r.candidates.length === 0) return [...lines, "No potential traumas found (or maybe you hid them well)."];
  for (const c of r.candidates) {
    lines.push(red(bold("[TRAUMA CANDIDATE]")) + ` ${c.description}`, `  Session:  ${tildify(c.sessionPath)}`, `  Pattern:  ${cyan(c.matchedPattern)}`, `  Evidence: ${c.evidence}`, dim(`  Context:  ${c.context.replace(/\s+/g, " ")}`), "");
  }
  lines.push(`To register one: ${cli} trauma add "<pattern>" --severity CRITICAL --message "..."`);
  return lines;
}

function renderAudit(r: AuditResult, days: number): string[] {
  if (r.stats.sessionsScanned === 0 && r.errors.length === 0) return [`No sessions found in the last ${days} days.`];
  const lines = [
    bold(`AUDIT RESULTS (last ${days} days)`),
    `Sessions scanned: ${r.stats.sessionsScanned}`,
    `Rules checked: ${r.stats.rulesChecked}`,
    `Violations found: ${r.stats.violationsFound}`,
  ];
  for (const v of r.violations) {
    const tag = v.severity === "high" ? red("[HIGH]") : yellow(`[${v.severity.toUpperCase()}]`);
    lines.push(`${tag} Rule ${v.bulletId}: ${v.bulletContent}`, `  ${tildify(v.sessionPath)}`, dim(`  ${v.evidence}`));
  }
  for (const e of r.errors) lines.push(red(`  ${e}`));
  return lines;
}
