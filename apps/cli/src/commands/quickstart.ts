import type { Command } from "commander";
import { quickstartOperation, type QuickstartResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";

/** `cm quickstart` (reference §1.5.19): the protocol for agents, as JSON data or a Markdown page. */
export function registerQuickstart(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("quickstart")
    .description("How an agent should use cass-memory (read this first)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} quickstart\n  ${cli} quickstart --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(quickstartOperation.command, Boolean(flags.json));
      const data = await run(ctx, quickstartOperation, {});
      emit(ctx, data, () => renderQuickstart(data, cli));
    });
}

/** The quick start as a Markdown document an agent can read top to bottom. */
export function renderQuickstart(d: QuickstartResult, cli: string): string[] {
  return [
    "# cass-memory Quick Start (for Agents)",
    "",
    d.summary,
    "",
    "## The One Command You Need",
    "",
    "Before you start any non-trivial task:",
    "",
    "```bash",
    d.oneCommand,
    "```",
    "",
    "It returns (in `data`):",
    "",
    ...d.whatItReturns.map((line) => `- ${line}`),
    "",
    "Treat the rules as advice from earlier sessions, not as orders: the task and the code in front of you win.",
    "",
    "## What You Should Expect",
    "",
    `- **No session index?** ${d.expectations.degradedMode}`,
    `- **Privacy.** ${d.expectations.privacy}`,
    `- **Remote history.** ${d.expectations.remoteHistory}`,
    `- **Something off?** ${d.operatorNote.health}`,
    "",
    "## Inline Feedback",
    "",
    "While you work, leave a comment next to code a rule shaped, using the rule's id:",
    "",
    "```",
    d.inlineFeedbackFormat.helpful,
    d.inlineFeedbackFormat.harmful,
    "```",
    "",
    `Or record it directly: \`${cli} mark <id> --helpful\`, \`${cli} mark <id> --harmful --reason wrong_context\`.`,
    "Harmful reasons: caused_bug, wasted_time, contradicted_requirements, wrong_context, outdated, other.",
    "",
    "## Protocol",
    "",
    `1. **START:** ${d.protocol.start}`,
    `2. **WORK:** ${d.protocol.work}`,
    `3. **FEEDBACK:** ${d.protocol.feedback}`,
    `4. **END:** ${d.protocol.end}`,
    "",
    "Things not to do:",
    "",
    ...d.doNotDo.map((line) => `- ${line}`),
    "",
    "## Solo Users",
    "",
    d.soloUser.description,
    "",
    "Keeping the playbook up to date by hand:",
    "",
    "```bash",
    ...d.soloUser.manualReflection,
    "```",
    "",
    "Getting started:",
    "",
    "```bash",
    ...d.soloUser.onboarding,
    "```",
    "",
    `Automation: ${d.operatorNote.automation}`,
    "",
    "## Examples",
    "",
    "```bash",
    ...d.examples,
    "```",
    "",
    `Every command takes \`--json\` (one JSON document on stdout, diagnostics on stderr) and \`--help\`. More workflows: \`${cli} --examples\`.`,
  ];
}
