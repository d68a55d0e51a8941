import type { Command } from "commander";
import {
  privacyAllowOperation,
  privacyDenyOperation,
  privacyDisableOperation,
  privacyEnableOperation,
  privacyStatusOperation,
  type CrossAgentSettings,
  type PrivacyStatus,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, yellow } from "../human.js";
import { intOption } from "../options.js";

/**
 * `cm privacy status|enable|disable|allow|deny` (reference §1.5.20). Unlike the original, `status`
 * writes nothing, and the mutations change only `crossAgent` in config.json.
 */
export function registerPrivacy(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const group = program
    .command("privacy")
    .description("Cross-agent enrichment consent and agent allowlist")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} privacy status\n  ${cli} privacy enable claude codex\n  ${cli} privacy allow cursor\n  ${cli} privacy deny cursor --json\n  ${cli} privacy disable\n`,
    );

  group
    .command("status")
    .description("Show consent, the allowlist and session counts per agent")
    .option("--days <n>", "window for the session counts (default 365)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} privacy status\n  ${cli} privacy status --days 30 --json\n`)
    .action(async (flags: { days?: string; json?: boolean }) => {
      ctx.begin(privacyStatusOperation.command, Boolean(flags.json));
      const days = intOption("days", flags.days, 1);
      const result = await run(ctx, privacyStatusOperation, days !== undefined ? { days } : {});
      emit(ctx, result, () => renderStatus(result));
    });

  group
    .command("enable")
    .description("Enable cross-agent enrichment (records consent); agents default to those seen in history")
    .argument("[agents...]", "agents to allow (e.g. claude codex cursor)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} privacy enable\n  ${cli} privacy enable claude codex --json\n`)
    .action(async (agents: string[], flags: { json?: boolean }) => {
      ctx.begin(privacyEnableOperation.command, Boolean(flags.json));
      const result = await run(ctx, privacyEnableOperation, { agents });
      emit(ctx, result, () => [green(`${icon.success()} Cross-agent enrichment enabled`), ...settingsLines(result.crossAgent)]);
    });

  group
    .command("disable")
    .description("Disable cross-agent enrichment (the allowlist is kept)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} privacy disable\n  ${cli} privacy disable --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(privacyDisableOperation.command, Boolean(flags.json));
      const result = await run(ctx, privacyDisableOperation, {});
      emit(ctx, result, () => [green(`${icon.success()} Cross-agent enrichment disabled`), ...settingsLines(result.crossAgent)]);
    });

  group
    .command("allow")
    .description("Add an agent to the allowlist")
    .argument("[agent]", "agent name (e.g. claude)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} privacy allow claude\n  ${cli} privacy allow cursor --json\n`)
    .action(async (agent: string | undefined, flags: { json?: boolean }) => {
      ctx.begin(privacyAllowOperation.command, Boolean(flags.json));
      const result = await run(ctx, privacyAllowOperation, agent !== undefined ? { agent } : {});
      emit(ctx, result, () => [green(`${icon.success()} Allowed agent '${agent!.trim().toLowerCase()}'`), ...settingsLines(result.crossAgent)]);
    });

  group
    .command("deny")
    .description("Remove an agent from the allowlist")
    .argument("[agent]", "agent name (e.g. cursor)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} privacy deny cursor\n  ${cli} privacy deny aider --json\n`)
    .action(async (agent: string | undefined, flags: { json?: boolean }) => {
      ctx.begin(privacyDenyOperation.command, Boolean(flags.json));
      const result = await run(ctx, privacyDenyOperation, agent !== undefined ? { agent } : {});
      emit(ctx, result, () => [green(`${icon.success()} Removed agent '${agent!.trim().toLowerCase()}' from allowlist`), ...settingsLines(result.crossAgent)]);
    });
}

function settingsLines(s: CrossAgentSettings): string[] {
  return [
    `  Cross-agent enrichment: ${s.enabled ? green("ENABLED") : yellow("DISABLED")}`,
    `  Consent given: ${s.consentGiven ? `yes${s.consentDate ? ` (${s.consentDate})` : ""}` : "no"}`,
    `  Allowlist: ${s.agents.length > 0 ? s.agents.join(", ") : "(all agents)"}`,
    `  Audit log: ${s.auditLog ? "on" : "off"}`,
  ];
}

function renderStatus(status: PrivacyStatus): string[] {
  const lines = [bold("Privacy Status"), ...settingsLines(status.crossAgent), ""];
  const counts = status.cass.sessionCountsByAgent;
  if (!status.cass.available || counts === null) {
    lines.push(`History: not available (session counts unknown)`);
  } else {
    const entries = Object.entries(counts);
    lines.push(`Sessions in the last ${status.cass.timelineDays} days:${entries.length === 0 ? " none" : ""}`);
    for (const [agent, n] of entries) lines.push(`  ${icon.bullet()} ${agent}: ${n}`);
  }
  lines.push("", "Commands:", ...Object.values(status.notes).map((n) => dim(`  ${n}`)));
  return lines;
}
