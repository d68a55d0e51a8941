import { join } from "node:path";
import type { Command } from "commander";
import { initOperation, type GlobalInitResult, type RepoInitResult } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, green, icon, tildify, yellow } from "../human.js";
import { ask, isInteractive } from "../options.js";
import { writeStderr } from "../output.js";

interface InitFlags {
  force?: boolean;
  yes?: boolean;
  repo?: boolean;
  interactive?: boolean;
  starter?: string;
  json?: boolean;
}

/** `cm init` / `cm init --repo` (reference §1.5.1). */
export function registerInit(program: Command, ctx: CliContext): void {
  program
    .command("init")
    .description("Initialize the global cass-memory directory (or a repository's .cass/ with --repo)")
    .option("-f, --force", "reinitialize: back up and rewrite existing files")
    .option("-y, --yes", "confirm overwriting with --force")
    .option("--repo", "initialize <git root>/.cass/ instead of the global directory")
    .option("--no-interactive", "never prompt")
    .option("--starter <name>", "seed the playbook with a starter (see: starters); allowed when already initialized")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${ctx.cliName} init\n  ${ctx.cliName} init --starter typescript\n  ${ctx.cliName} init --repo --starter general\n  ${ctx.cliName} init --repo\n  ${ctx.cliName} init --force --yes --json\n`)
    .action(async (flags: InitFlags) => {
      const json = Boolean(flags.json);
      ctx.begin(flags.repo ? "init:repo" : "init", json);
      let yes = Boolean(flags.yes);
      if (flags.force && !yes && !json && flags.interactive !== false && isInteractive()) {
        const answer = await ask("Existing files will be backed up and overwritten. Continue? [y/N] ");
        yes = /^y(es)?$/i.test(answer);
      }
      const cassPath = process.env.CASS_PATH?.trim();
      const result = await run(ctx, initOperation, {
        repo: Boolean(flags.repo),
        force: Boolean(flags.force),
        yes,
        ...(cassPath ? { cassPath } : {}),
        ...(flags.starter !== undefined ? { starter: flags.starter } : {}),
      });
      if (!json && "configPath" in result && !result.cassAvailable) {
        writeStderr(`${icon.warning()} cass is not available. Some features will not work.\n  Install: cargo install coding-agent-search (https://github.com/Dicklesworthstone/coding_agent_session_search)`);
      }
      emit(ctx, result, () => ("cassDir" in result ? renderRepo(result as RepoInitResult) : renderGlobal(ctx, result as GlobalInitResult)));
    });
}

interface CommonResult {
  created: string[];
  existed: string[];
  overwritten: string[];
  backups: Array<{ file: string; backup: string }>;
  starter: { added: number; skipped: number; name: string } | null;
}

function renderCommon(dir: string, r: CommonResult): string[] {
  const lines: string[] = [];
  for (const f of r.created) lines.push(green(`${icon.success()} Created ${dir}/${f}`));
  for (const f of r.existed) if (!r.overwritten.includes(f)) lines.push(`${icon.bullet()} ${dir}/${f} already exists`);
  if (r.backups.length > 0) {
    lines.push("Backups created:");
    for (const b of r.backups) lines.push(`  ${tildify(b.file)} -> ${tildify(b.backup)}`);
  }
  if (r.overwritten.length > 0) lines.push(`Overwritten: ${r.overwritten.join(", ")}`);
  if (r.starter !== null) {
    lines.push(green(`${icon.success()} Applied starter "${r.starter.name}" (${r.starter.added} added, ${r.starter.skipped} skipped)`));
  }
  return lines;
}

function renderGlobal(ctx: CliContext, r: GlobalInitResult): string[] {
  const dir = tildify(r.configPath.replace(/[\\/]config\.json$/, ""));
  const cli = ctx.cliName;
  return [
    ...renderCommon(dir, r),
    "",
    bold(`${cli} initialized successfully.`),
    `Created/verified: ${dir}`,
    "",
    "Next steps (copy/paste):",
    `  ${cli} context "<task>" --json`,
    `  ${cli} playbook add "<rule>" --category <category>`,
    `  ${cli} init --repo    # project-specific rules in <repo>/.cass/`,
    ...(r.starter === null ? [`  ${cli} starters       # seed the playbook: ${cli} init --starter <name>`] : []),
    `  ${cli} quickstart     # how agents should use ${cli}`,
  ];
}

function renderRepo(r: RepoInitResult): string[] {
  return [
    "Initializing repo-level .cass/ structure",
    ...renderCommon(".cass", r).map((l) => l.replace(join(r.cassDir), ".cass")),
    "",
    bold("Repo-level cass-memory initialized!"),
    yellow("Remember: Commit .cass/ to version control so your team shares these rules."),
  ];
}
