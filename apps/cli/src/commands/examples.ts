import { emit, type CliContext } from "../cli-context.js";
import { bold, dim } from "../human.js";

/**
 * `cm --examples` (reference §1.1): curated workflows. Intercepted before commander, wherever the
 * flag appears. In JSON the commands have their trailing `# comments` removed.
 */

export interface Workflow {
  title: string;
  description: string;
  commands: string[];
}

export function workflows(cli: string): Workflow[] {
  return [
    {
      title: "Quick Start",
      description: "Set up once, seed the playbook, and ask for context before a task.",
      commands: [
        `${cli} init --starter general  # create ~/.cass-memory and seed it`,
        `${cli} starters  # other starters: typescript, react, python, node, go, rust`,
        `${cli} context "add rate limiting to the API" --json`,
        `${cli} quickstart  # the protocol for agents`,
      ],
    },
    {
      title: "Agent Workflow",
      description: "What an agent does around every task: context first, feedback while working, lessons at the end.",
      commands: [
        `${cli} context "fix the flaky checkout test" --json`,
        `${cli} mark <bulletId> --helpful  # the rule changed what you did`,
        `${cli} mark <bulletId> --harmful --reason outdated`,
        `${cli} remember "Run the payment tests with STRIPE_MOCK=1" --category testing`,
        `${cli} recall "stripe webhooks" --json  # what the memory already knows`,
      ],
    },
    {
      title: "Playbook Management",
      description: "List, add, remove, export and import rules.",
      commands: [
        `${cli} playbook list --category testing`,
        `${cli} playbook add "Use pnpm, never npm, in this monorepo" --category tooling`,
        `${cli} playbook get <bulletId>`,
        `${cli} playbook remove <bulletId> --reason "superseded" --dry-run`,
        `${cli} playbook export > my-rules.yaml`,
        `${cli} playbook import my-rules.yaml`,
        `${cli} playbook bootstrap typescript --dry-run`,
      ],
    },
    {
      title: "Reviewing Rules",
      description: "Find the rules that work, the ones nobody uses, and why each one exists.",
      commands: [
        `${cli} stats`,
        `${cli} top 10`,
        `${cli} stale --days 60`,
        `${cli} why <bulletId>`,
        `${cli} similar "validate request bodies"  # before adding a near-duplicate`,
      ],
    },
    {
      title: "Correcting Mistakes",
      description: "Every change to a rule is journaled: inspect it, take a wrong rule out, and reverse mistakes.",
      commands: [
        `${cli} history <bulletId>`,
        `${cli} forget <bulletId> --reason "wrong for this codebase" --invert`,
        `${cli} undo <bulletId>  # restore a forgotten or deprecated rule`,
        `${cli} undo <bulletId> --feedback  # drop its last feedback event`,
      ],
    },
    {
      title: "Sharing With a Team",
      description: "Keep project rules in the repository and project them into the files agents read.",
      commands: [
        `${cli} init --repo --starter node  # <repo>/.cass/playbook.yaml, commit it`,
        `${cli} playbook import team-rules.yaml --repo`,
        `${cli} project --output AGENTS.md --force`,
        `${cli} project --format claude.md --per-category 5`,
      ],
    },
    {
      title: "Safety Guards (Project Hot Stove)",
      description: "Record commands that once caused a disaster; agents and commits that try them again are stopped.",
      commands: [
        `${cli} trauma add "DROP\\s+TABLE" --message "dropped prod orders table"`,
        `${cli} guard --install  # Claude Code: block matching Bash commands`,
        `${cli} guard --git  # pre-commit: block matching added lines`,
        `${cli} audit --trauma --days 30  # find past incidents in session history`,
        `${cli} trauma heal <traumaId>  # stop blocking it`,
      ],
    },
    {
      title: "System Health",
      description: "Check the installation when something looks wrong.",
      commands: [
        `${cli} --info  # versions, paths, rule counts`,
        `${cli} doctor`,
        `${cli} doctor --fix --dry-run  # what a repair would change`,
        `${cli} privacy status  # cross-agent history settings`,
      ],
    },
  ];
}

/** `command   # comment` → `command`. */
export function stripComment(command: string): string {
  return command.replace(/\s+#\s.*$/, "").trimEnd();
}

export function examplesData(cli: string): { workflows: Workflow[]; tip: string } {
  return {
    workflows: workflows(cli).map((w) => ({ ...w, commands: w.commands.map(stripComment) })),
    tip: `Add --json to any command for one machine-readable JSON document on stdout; start with: ${cli} context "<task>" --json`,
  };
}

export function runExamples(ctx: CliContext, json: boolean): void {
  ctx.begin("examples", json);
  const cli = ctx.cliName;
  emit(ctx, examplesData(cli), () => {
    const lines = [bold(`${cli} workflows`), ""];
    for (const w of workflows(cli)) {
      lines.push(bold(w.title), dim(`  ${w.description}`));
      const split = w.commands.map((c) => {
        const command = stripComment(c);
        return { command, comment: c.slice(command.length).trim() };
      });
      const width = Math.max(...split.filter((x) => x.comment !== "").map((x) => x.command.length), 0);
      for (const { command, comment } of split) lines.push(`    ${comment ? `${command.padEnd(width)}  ${dim(comment)}` : command}`);
      lines.push("");
    }
    lines.push(examplesData(cli).tip);
    return lines;
  });
}
