import { basename } from "node:path";
import type { Command } from "commander";
import {
  AppError,
  describeSimilarityMode,
  similarOperation,
  staleOperation,
  statsOperation,
  topOperation,
  whyOperation,
  type SimilarResult,
  type StaleResult,
  type StatsResult,
  type TopResult,
  type WhyResult,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, cyan, dim, divider, fixed, green, icon, layoutWidth, noEmoji, red, tildify, wrap, yellow } from "../human.js";
import { intOption, oneOf, parseStrictInt } from "../options.js";
import { beginWithFormat, reportTokenStats, type FormatFlags } from "../formats.js";

/**
 * The insight commands (reference §1.5.3, §1.5.6–§1.5.9): `stats`, `top`, `stale`, `why` and
 * `similar`. All read the merged playbook and never change it.
 */
export function registerInsight(program: Command, ctx: CliContext): void {
  registerStats(program, ctx);
  registerTop(program, ctx);
  registerStale(program, ctx);
  registerWhy(program, ctx);
  registerSimilar(program, ctx);
}

// ------------------------------------------------------------------------------------------ helpers

/** Emoji followed by a space, or nothing with --no-emoji. */
function emoji(symbol: string): string {
  return noEmoji() ? "" : `${symbol} `;
}

/** One line, at most `max` characters, "…" marking a cut. */
function truncate(text: string, max: number): string {
  const flat = text.trim().replace(/\s+/g, " ");
  return flat.length > max ? `${flat.slice(0, Math.max(1, max - 1))}…` : flat;
}

function scoreColour(score: number): (text: string) => string {
  return score >= 5 ? green : score >= 0 ? (t: string) => t : red;
}

// -------------------------------------------------------------------------------------------- stats

function registerStats(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("stats")
    .description("Playbook health dashboard: counts, score distribution, top, at-risk, stale and duplicate rules")
    .option("-j, --json", "output a JSON envelope")
    .option("--format <format>", "output format: json or toon (overrides --json)")
    .option("--stats", "print the output's token count on stderr (structured output only)")
    .addHelpText("after", `\nExamples:\n  ${cli} stats\n  ${cli} stats --json\n`)
    .action(async (flags: FormatFlags) => {
      beginWithFormat(ctx, statsOperation.command, flags);
      const result = await run(ctx, statsOperation, {});
      reportTokenStats(ctx, flags, result);
      emit(ctx, result, () => renderStats(result));
    });
}

function renderStats(s: StatsResult): string[] {
  const lines = ["", bold(`${emoji("📊")}Playbook Health Dashboard`), `Total Bullets: ${s.total}`];
  const group = (title: string, counts: Record<string, number>) => {
    lines.push("", bold(`${title}:`));
    const entries = Object.entries(counts);
    if (entries.length === 0) lines.push("  (none)");
    for (const [key, n] of entries) lines.push(`  ${key}: ${n}`);
  };
  group("By Scope", s.byScope);
  group("By State", s.byState);
  group("By Kind", s.byKind);
  const d = s.scoreDistribution;
  lines.push(
    "",
    bold("Score Distribution:"),
    `  ${emoji("🌟")}Excellent (>=10): ${d.excellent}`,
    `  ${emoji("✅")}Good (5-<10):     ${d.good}`,
    `  ${emoji("⚪")}Neutral (0-5):    ${d.neutral}`,
    `  ${emoji("⚠️")}At Risk (<0):     ${d.atRisk}`,
  );
  if (s.topPerformers.length > 0) {
    lines.push("", bold(`${emoji("🏆")}Top Performers (effective score):`));
    s.topPerformers.forEach((b, i) => lines.push(`  ${i + 1}. [${b.id}] ${truncate(b.content, 60)} (${fixed(b.score, 1)})`));
  }
  if (s.mostHelpful.length > 0) {
    lines.push("", bold(`${emoji("👍")}Most Helpful (feedback count):`));
    s.mostHelpful.forEach((b, i) => lines.push(`  ${i + 1}. [${b.id}] ${truncate(b.content, 60)} (${b.helpfulCount})`));
  }
  lines.push("", bold(`${emoji("⚠️")}At Risk: ${s.atRiskCount}`), bold(`${emoji("🕐")}Stale (${s.staleThresholdDays}d+): ${s.staleCount}`));
  if (s.expiredCount > 0 || s.notYetValidCount > 0) {
    lines.push(bold(`${emoji("⌛")}Outside validity: ${s.expiredCount} expired, ${s.notYetValidCount} not yet valid`));
  }
  const pairs = (title: string, list: StatsResult["mergeCandidates"]) => {
    if (list.length === 0) return;
    lines.push("", bold(title));
    for (const p of list) lines.push(`  - ${p.a} ${noEmoji() ? "<->" : "↔"} ${p.b} (sim ${p.similarity})`);
  };
  pairs(`${emoji("🔀")}Merge Candidates (similarity ≥ 0.8):`, s.mergeCandidates);
  pairs(`${emoji("🧠")}Semantic Merge Candidates (similarity ≥ 0.85):`, s.semanticMergeCandidates);
  return lines;
}

// ---------------------------------------------------------------------------------------------- top

interface TopFlags {
  json?: boolean;
  scope?: string;
  category?: string;
}

function registerTop(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("top")
    .description("Show the most effective rules (by decayed effective score)")
    .argument("[count]", "how many rules (default 10)")
    .option("--scope <scope>", "global, workspace or all (default all)")
    .option("--category <cat>", "only this category (case-insensitive)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} top\n  ${cli} top 5 --category testing --json\n  ${cli} top 20 --scope workspace\n`)
    .action(async (countArg: string | undefined, flags: TopFlags) => {
      ctx.begin(topOperation.command, Boolean(flags.json));
      const count = intOption("count", countArg);
      const result = await run(ctx, topOperation, {
        ...(count !== undefined ? { count } : {}),
        ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
        ...(flags.category !== undefined ? { category: flags.category } : {}),
      });
      emit(ctx, result, () => renderTop(result, cli));
    });
}

function renderTop(r: TopResult, cli: string): string[] {
  const width = layoutWidth();
  if (r.bullets.length === 0) {
    const lines = [yellow("No bullets found matching the criteria.")];
    if (r.filters.scope !== "all" || r.filters.category !== null) {
      lines.push(dim(`Filters: scope=${r.filters.scope}, category=${r.filters.category ?? "any"}`));
    }
    return lines;
  }
  const filters = [
    ...(r.filters.scope !== "all" ? [`scope: ${r.filters.scope}`] : []),
    ...(r.filters.category !== null ? [`category: ${r.filters.category}`] : []),
  ];
  const lines = [bold("TOP"), divider(width), dim(`Showing ${r.bullets.length} bullets${filters.length > 0 ? ` ${icon.bullet()} ${filters.join(", ")}` : ""}`), ""];
  for (const b of r.bullets) {
    lines.push(`${bold(`${b.rank}. [${b.id}]`)} ${icon.bullet()} score ${scoreColour(b.score)(fixed(b.score, 1))} ${icon.bullet()} ${b.maturity} ${icon.bullet()} ${b.category}/${b.scope}`);
    lines.push(...wrap(b.content, width, "  "));
    lines.push(dim(`  Feedback: ${b.feedback.helpful}× helpful, ${b.feedback.harmful}× harmful ${icon.bullet()} Last used: ${b.lastUsed}`), "");
  }
  lines.push(dim(`${icon.tip()}Use '${cli} playbook get <id>' to inspect, or '${cli} why <id>' for provenance.`));
  return lines;
}

// -------------------------------------------------------------------------------------------- stale

interface StaleFlags {
  json?: boolean;
  days?: string;
  scope?: string;
  expiring?: string;
}

function registerStale(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("stale")
    .description("Find rules without recent feedback (and, with --expiring, rules about to expire)")
    .option("--days <n>", "staleness threshold in days (default 90; 0 lists every active rule)")
    .option("--scope <scope>", "global, workspace or all (default all)")
    .option("--expiring <days>", "also list rules whose validTo falls within the next <days> days")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} stale\n  ${cli} stale --days 30 --json\n  ${cli} stale --expiring 14\n`)
    .action(async (flags: StaleFlags) => {
      ctx.begin(staleOperation.command, Boolean(flags.json));
      const days = intOption("days", flags.days, 0);
      const expiring = intOption("expiring", flags.expiring, 0);
      const result = await run(ctx, staleOperation, {
        ...(days !== undefined ? { days } : {}),
        ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
        ...(expiring !== undefined ? { expiring } : {}),
      });
      emit(ctx, result, () => renderStale(result, cli));
    });
}

function renderStale(r: StaleResult, cli: string): string[] {
  const width = layoutWidth();
  const filter = r.filters.scope !== "all" ? ` ${icon.bullet()} scope: ${r.filters.scope}` : "";
  const lines: string[] = [];
  if (r.expiring !== undefined) {
    lines.push(bold(`EXPIRING (within ${r.expiring.withinDays} days)`), divider(width));
    if (r.expiring.bullets.length === 0) lines.push(green("No rules expire in that window."));
    for (const b of r.expiring.bullets) {
      const when = b.expiresInDays === 0 ? "today" : `in ${b.expiresInDays}d`;
      lines.push(`${yellow(when)} ${bold(`[${b.id}]`)} ${b.category}/${b.scope} ${icon.bullet()} ${b.maturity} ${icon.bullet()} valid to ${b.validTo.slice(0, 10)}`);
      lines.push(...wrap(b.content, width, "  "));
    }
    lines.push("");
  }
  lines.push(bold("STALE"), divider(width), dim(`Threshold: ${r.threshold}+ days ${icon.bullet()} Found: ${r.count}/${r.totalActive}${filter}`), "");
  if (r.bullets.length === 0) {
    lines.push(green("No stale bullets found."), dim(`All ${r.totalActive} active bullets have recent feedback.`));
    lines.push(dim(`${icon.tip()}Try '${cli} stale --days 0' to review everything.`));
    return lines;
  }
  for (const b of r.bullets) {
    lines.push(`${yellow(`${b.daysSinceLastFeedback}d`)} ${bold(`[${b.id}]`)} ${b.category}/${b.scope} ${icon.bullet()} ${b.maturity} ${icon.bullet()} score ${scoreColour(b.score)(fixed(b.score, 1))}`);
    lines.push(...wrap(b.content, width, "  "));
    lines.push(
      dim(b.lastFeedback.timestamp ? `  Last feedback: ${b.lastFeedback.timestamp.slice(0, 10)} (${b.lastFeedback.action ?? "unknown"})` : "  Last feedback: (none yet)"),
    );
    lines.push(...wrap(b.recommendation, width, "  ").map(cyan), "");
  }
  const negative = r.bullets.filter((b) => b.score < 0);
  const veryStale = r.bullets.filter((b) => b.daysSinceLastFeedback > 180);
  const candidates = r.bullets.filter((b) => b.maturity === "candidate" && b.daysSinceLastFeedback > 90);
  lines.push(bold("Next actions"), divider(width));
  if (negative.length > 0) {
    lines.push(red(`- ${negative.length} with negative scores → review/forget (${cli} forget <id> --reason "...")`));
    lines.push(dim(`  IDs: ${negative.slice(0, 5).map((b) => b.id).join(", ")}${negative.length > 5 ? ` (+${negative.length - 5} more)` : ""}`));
  }
  if (veryStale.length > 0) lines.push(yellow(`- ${veryStale.length} >180 days stale → consider deprecating candidates`));
  if (candidates.length > 0) lines.push(`- ${candidates.length} stale candidates → validate or remove`);
  lines.push(dim(`${icon.tip()}Use '${cli} playbook get <id>' to inspect, then '${cli} mark <id> --helpful|--harmful'.`));
  return lines;
}

// ---------------------------------------------------------------------------------------------- why

function registerWhy(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("why")
    .description("Explain where a rule comes from: reasoning, sources, evidence, feedback and change history")
    .argument("<bulletId>", "the rule's id (a unique prefix or fragment is enough)")
    .option("--verbose", "more sources, feedback and history")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} why b-abc123\n  ${cli} why b-abc --verbose --json\n`)
    .action(async (bulletId: string, flags: { json?: boolean; verbose?: boolean }) => {
      ctx.begin(whyOperation.command, Boolean(flags.json));
      // The root program also declares --verbose and may take the flag first: honour either.
      const verbose = Boolean(flags.verbose) || ctx.verbose;
      const result = await run(ctx, whyOperation, { bulletId, verbose });
      emit(ctx, result, () => renderWhy(result, verbose, cli));
    });
}

function renderWhy(r: WhyResult, verbose: boolean, cli: string): string[] {
  const width = layoutWidth();
  const rule = divider(width);
  const b = r.bullet;
  const status = r.currentStatus;
  const lines = [bold("WHY"), rule, `${bold(`[${b.id}]`)} ${b.category} ${icon.bullet()} ${b.maturity} ${icon.bullet()} score ${scoreColour(b.score)(fixed(b.score, 1))}`, ""];
  lines.push(bold("Summary"), rule);
  lines.push(`  Created:  ${b.createdAt.slice(0, 10)} (${b.daysAgo} days ago)`);
  lines.push(`  Feedback: ${status.helpfulCount} helpful / ${status.harmfulCount} harmful ${icon.bullet()} ${status.effectiveness}`, "");
  lines.push(bold("Rule"), rule, ...wrap(b.content, width, "  "), "");
  lines.push(bold("Reasoning"), rule);
  if (r.reasoning) lines.push(...wrap(verbose ? r.reasoning : truncate(r.reasoning, 400), width, "  ").map(dim));
  else lines.push(dim("  (No original reasoning recorded)"));
  lines.push("", bold(`Sources (${r.sourceSessions.length})`), rule);
  if (r.sourceSessions.length === 0) lines.push(dim("  (No source sessions recorded)"));
  r.sourceSessions.forEach((s, i) => {
    const short = s.path.split(/[\\/]/).slice(-2).join("/");
    lines.push(`  ${i + 1}. ${cyan(short)}${s.date ? dim(` ${icon.bullet()} ${s.date}`) : ""}`);
    if (s.snippet) lines.push(...wrap(`"${truncate(s.snippet, 140)}"`, width, "     ").map(dim));
  });
  lines.push("");
  if (r.evidence.length > 0) {
    lines.push(bold("Evidence"), rule);
    for (const e of r.evidence) lines.push(...wrap(`${icon.bullet()} ${truncate(e, 180)}`, width, "  ").map(green));
    lines.push("");
  }
  const p = r.provenance;
  if (p.evidence.length > 0 || p.verification !== null || p.validFrom !== null || p.validTo !== null) {
    lines.push(bold("Provenance"), rule);
    for (const item of p.evidence) {
      lines.push(...wrap(`${icon.bullet()} [${item.type}] ${item.uri}${item.note ? ` (${item.note})` : ""}`, width, "  "));
    }
    if (p.verification !== null) {
      const v = p.verification;
      const where = v.type === "regex" && v.path ? ` in ${v.path}` : "";
      lines.push(`  Verification: ${v.type} ${v.pattern}${where} (expect ${v.mode ?? "exists"})`);
    }
    if (p.validFrom !== null || p.validTo !== null) {
      const window = `${p.validFrom?.slice(0, 10) ?? "…"} to ${p.validTo?.slice(0, 10) ?? "…"}`;
      const state = p.validity === "expired" ? red(" (expired)") : p.validity === "not_yet_valid" ? yellow(" (not yet valid)") : "";
      lines.push(`  Valid: ${window}${state}`);
    }
    lines.push("");
  }
  if (r.diaryEntries.length > 0) {
    lines.push(bold("Related diary entries"), rule);
    for (const d of r.diaryEntries) lines.push(...wrap(`${d.date}: ${truncate(d.content, 200)}`, width, "  ").map(dim));
    lines.push("");
  }
  if (r.feedbackHistory.length > 0) {
    const shown = verbose ? 10 : 5;
    lines.push(bold(`Feedback history (${status.helpfulCount} helpful, ${status.harmfulCount} harmful)`), rule);
    for (const f of r.feedbackHistory.slice(0, shown)) {
      const badge = f.type === "helpful" ? green(icon.success()) : red(icon.failure());
      const session = f.sessionPath ? ` ${icon.bullet()} ${basename(f.sessionPath)}` : "";
      const detail =
        f.type === "harmful"
          ? [f.reason, f.context ? truncate(f.context, 80) : undefined].filter(Boolean).join(": ")
          : f.context
            ? truncate(f.context, 80)
            : "";
      lines.push(`  ${f.timestamp.slice(0, 10)} ${badge} ${f.type}${session}${detail ? ` ${icon.bullet()} ${detail}` : ""}`);
    }
    if (r.feedbackHistory.length > shown) lines.push(dim(`  … (${r.feedbackHistory.length - shown} more)`));
    lines.push("");
  }
  if (r.journal.length > 0) {
    lines.push(bold(`Change history (${r.journal.length}${r.journal.length >= (verbose ? 20 : 8) ? "+" : ""})`), rule);
    for (const j of r.journal) {
      const when = j.timestamp.slice(0, 16).replace("T", " ");
      const why = j.reason ? ` ${icon.bullet()} ${truncate(j.reason, 80)}` : "";
      lines.push(`  ${when} ${j.operation}/${j.change} by ${j.actor}${j.layer === "repo" ? " (repo)" : ""}${why}`);
    }
    lines.push("");
  }
  lines.push(dim(`${icon.tip()}Next: '${cli} playbook get ${b.id}' or '${cli} mark ${b.id} --helpful|--harmful --reason "..."'`));
  return lines;
}

// ------------------------------------------------------------------------------------------ similar

interface SimilarFlags extends FormatFlags {
  limit?: string;
  threshold?: string;
  scope?: string;
}

/** The original's strict float syntax; anything else is NaN (and then rejected). */
function parseStrictFloat(raw: string): number {
  const trimmed = raw.trim();
  return /^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(trimmed) ? Number(trimmed) : Number.NaN;
}

function registerSimilar(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("similar")
    .description("Find rules similar to a text (keyword similarity, or embeddings when semanticSearchEnabled is on)")
    .argument("<query>", "the text to compare rules with")
    .option("--limit <n>", "maximum number of results (default 5)")
    .option("--threshold <t>", "minimum similarity between 0 and 1 (default 0.7)")
    .option("--scope <scope>", "global, workspace or all (default all)")
    .option("-j, --json", "output a JSON envelope")
    .option("--format <format>", "output format: json or toon (overrides --json)")
    .option("--stats", "print the output's token count on stderr (structured output only)")
    .addHelpText("after", `\nExamples:\n  ${cli} similar "run tests before pushing"\n  ${cli} similar "jwt expiry" --threshold 0.3 --limit 10 --json\n`)
    .action(async (query: string, flags: SimilarFlags) => {
      beginWithFormat(ctx, similarOperation.command, flags);
      const limit = flags.limit !== undefined ? parseStrictInt(flags.limit) : undefined;
      if (limit !== undefined && Number.isNaN(limit)) {
        throw new AppError("INVALID_INPUT", "--limit must be an integer >= 1", { details: { query } });
      }
      const threshold = flags.threshold !== undefined ? parseStrictFloat(flags.threshold) : undefined;
      if (threshold !== undefined && Number.isNaN(threshold)) {
        throw new AppError("INVALID_INPUT", "--threshold must be between 0 and 1", { details: { query } });
      }
      const result = await run(ctx, similarOperation, {
        query,
        ...(limit !== undefined ? { limit } : {}),
        ...(threshold !== undefined ? { threshold } : {}),
        ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
      });
      reportTokenStats(ctx, flags, result);
      const rt = await ctx.runtime();
      emit(ctx, result, () => renderSimilar(result, describeSimilarityMode(result.mode, rt.config, tildify(rt.paths.configPath)), cli));
    });
}

function renderSimilar(r: SimilarResult, modeLine: string, cli: string): string[] {
  const width = layoutWidth();
  const lines = [bold("SIMILAR"), divider(width), dim(`Query: ${r.query}`), (r.mode === "semantic" ? green : yellow)(modeLine), ""];
  if (r.results.length === 0) {
    lines.push(dim("No matches found."), dim(`${icon.tip()}Try lowering the threshold: ${cli} similar "<query>" --threshold 0.5`));
    return lines;
  }
  lines.push(bold(`Matches (${r.results.length})`), divider(width), "");
  r.results.forEach((m, i) => {
    lines.push(`${bold(`${i + 1}. [${m.id}]`)} ${icon.bullet()} sim ${fixed(m.similarity, 2)} ${icon.bullet()} score ${fixed(m.effectiveScore, 1)} ${icon.bullet()} ${m.category}/${m.scope}`);
    lines.push(...wrap(m.preview, width, "  "), "");
  });
  lines.push(dim(`${icon.tip()}Use '${cli} playbook get <id>' to see full details.`));
  return lines;
}
