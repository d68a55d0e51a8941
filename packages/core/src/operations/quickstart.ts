import * as z from "zod";
import { defineOperation } from "../operation.js";
import { lazySchema } from "../schemas/lazy.js";

/**
 * `cm quickstart` (reference §1.5.19): the working protocol for an agent, as data. The data keys
 * are the original's, so agents that parse them keep working; the text is ours and names the
 * commands this implementation has.
 */

export const QuickstartResultSchema = lazySchema(() => z.object({
  summary: z.string(),
  oneCommand: z.string(),
  expectations: z.object({ degradedMode: z.string(), privacy: z.string(), remoteHistory: z.string() }),
  whatItReturns: z.array(z.string()),
  doNotDo: z.array(z.string()),
  operatorNote: z.object({ automation: z.string(), health: z.string() }),
  soloUser: z.object({ description: z.string(), manualReflection: z.array(z.string()), onboarding: z.array(z.string()) }),
  inlineFeedbackFormat: z.object({ helpful: z.string(), harmful: z.string() }),
  protocol: z.object({ start: z.string(), work: z.string(), feedback: z.string(), end: z.string() }),
  examples: z.array(z.string()),
}));
export type QuickstartResult = z.output<typeof QuickstartResultSchema>;

/** The quick-start data for a program called `cli`. Pure. */
export function quickstartData(cli: string): QuickstartResult {
  return {
    summary:
      "cass-memory is a procedural memory for coding agents: a playbook of short rules (with helpful/harmful feedback, decay and maturity) plus search over past agent sessions. Ask it for context before a task, tell it which rules helped or hurt, and record what you learn.",
    oneCommand: `${cli} context "<task>" --json`,
    expectations: {
      degradedMode:
        "History comes from the cass CLI when it is installed, otherwise from your agents' own session files (Claude Code, Codex, Gemini CLI, …). When neither has anything, context still returns playbook rules; historySnippets is empty and data.degraded.cass says why and how to fix it. This is a normal state, not a failure. The first call on a large history may index for a few seconds and return partial history (degraded reason TIMEOUT); later calls are fast.",
      privacy:
        "Everything stays on this machine: rules live in the global data directory (~/.cass-memory by default) and in <repo>/.cass/, and history comes from the local index of your agents' session files. Secrets are redacted from history snippets before they are shown.",
      remoteHistory: "History is searched on this machine only (session files found locally, or the local cass index and any remote sources configured in cass).",
    },
    whatItReturns: [
      "relevantBullets: playbook rules that match the task, best first, each with an id you can give feedback on",
      "antiPatterns: known mistakes to avoid for this kind of task",
      "historySnippets: excerpts of past sessions that dealt with something similar (empty in degraded mode)",
      "suggestedCassQueries: searches to dig further into session history",
    ],
    doNotDo: [
      "Do not edit playbook.yaml by hand while agents are running; use the commands, which lock and journal every change.",
      "Do not mark a rule helpful just because it was shown; mark it when it changed what you did.",
      "Do not record one-off facts (a file name, today's bug) as rules; record what the next agent should do differently.",
      "Do not parse human output; pass --json and read stdout (diagnostics go to stderr).",
    ],
    operatorNote: {
      automation:
        "Put the protocol in the agent's instructions (AGENTS.md or CLAUDE.md); `" +
        cli +
        " project --output AGENTS.md` writes the current rules there as well.",
      health: `Run \`${cli} doctor\` when something looks wrong: it checks the data directory, configuration, playbooks and each history source (cass, native session files).`,
    },
    soloUser: {
      description: "Working alone without automation: the same commands, run by hand at the start and end of a task.",
      manualReflection: [
        `${cli} remember "<what the next agent should do>" --category <area>`,
        `${cli} mark <id> --helpful   # or --harmful --reason outdated`,
        `${cli} forget <id> --reason "<why it is wrong>"`,
        `${cli} undo <id>             # restore a forgotten or deprecated rule`,
        `${cli} history <id>          # every recorded change to a rule`,
      ],
      onboarding: [
        `${cli} init --starter <name>   # seed the playbook (see: ${cli} starters)`,
        `${cli} init --repo             # project rules in <repo>/.cass/, commit them`,
        `${cli} playbook bootstrap <name> --repo --dry-run`,
      ],
    },
    inlineFeedbackFormat: {
      helpful: "// [cass: helpful <id>] - reason",
      harmful: "// [cass: harmful <id>] - reason",
    },
    protocol: {
      start: `Before working, run \`${cli} context "<task>" --json\` and read relevantBullets and antiPatterns.`,
      work: "Apply the rules that fit; when a rule is wrong for this codebase, note its id instead of following it.",
      feedback: `Say which rules mattered: \`${cli} mark <id> --helpful\` or \`--harmful --reason <why>\`, or leave an inline comment such as // [cass: helpful <id>] - reason.`,
      end: `Record new lessons with \`${cli} remember "<rule>" --category <area>\` and check what exists with \`${cli} recall "<topic>" --json\`.`,
    },
    examples: [
      `${cli} context "implement JWT authentication" --json`,
      `${cli} context "fix the flaky payment webhook test" --json`,
      `${cli} context "migrate the build from webpack to vite" --json`,
    ],
  };
}

export const quickstartOperation = defineOperation({
  name: "quickstart",
  command: "quickstart",
  description: "How an agent should use cass-memory: the one command, the protocol and the feedback formats.",
  input: lazySchema(() => z.object({})),
  output: QuickstartResultSchema,
  async run(deps): Promise<QuickstartResult> {
    return quickstartData(deps.cliName);
  },
});
