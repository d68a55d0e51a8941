import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import { emit, type CliContext } from "../cli-context.js";
import { green, icon, tildify, yellow } from "../human.js";
import { writeStderr } from "../output.js";

interface GuardFlags {
  install?: boolean;
  git?: boolean;
  json?: boolean;
}

/**
 * `cm guard --install | --git` (reference §1.5.25): installs the HOT STOVE guard that blocks
 * commands (Claude Code PreToolUse) and commits (git pre-commit) matching an active trauma.
 */
export function registerGuard(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("guard")
    .description("Install the trauma guard (HOT STOVE): a Claude Code hook and/or a git pre-commit hook")
    .option("--install", "Claude Code: write .claude/hooks/trauma_guard.py and its PreToolUse entry in .claude/settings.json")
    .option("--git", "git: write the pre-commit guard that checks added lines against active traumas")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        "Both guards read the active traumas of ~/.cass-memory/traumas.jsonl and <repo>/.cass/traumas.jsonl",
        "(see 'cm trauma list'); they need python3 and let everything through when it is missing.",
        "Installing twice changes nothing; a changed file is backed up as <file>.backup.<epoch-ms>.",
        "",
        "Examples:",
        `  ${cli} guard --install`,
        `  ${cli} guard --git --json`,
        `  ${cli} guard --install --git`,
        "",
      ].join("\n"),
    )
    .action(async (flags: GuardFlags) => {
      const json = Boolean(flags.json);
      ctx.begin("guard", json);
      if (!flags.install && !flags.git) {
        throw new AppError("MISSING_REQUIRED", "Missing required flag: --install or --git", {
          hint: `${cli} guard --install (Claude Code) or ${cli} guard --git (pre-commit)`,
          details: { missing: "--install or --git" },
        });
      }
      const { installClaudeGuard, installGitGuard } = await import("@cass-memory/runtime");
      const claude = flags.install ? await installClaudeGuard() : undefined;
      const git = flags.git ? await installGitGuard() : undefined;
      for (const warning of claude?.warnings ?? []) writeStderr(`${icon.warning()} ${warning}`);
      // One flag: the original's data shape. Both: the two results side by side.
      const data = claude !== undefined && git !== undefined ? { claude, git } : (claude ?? git);
      emit(ctx, data, () => {
        const lines: string[] = [];
        if (claude !== undefined) {
          lines.push(
            claude.scriptWritten ? green(`${icon.success()} Installed ${tildify(claude.scriptPath)}`) : `${icon.bullet()} ${tildify(claude.scriptPath)} is up to date`,
            claude.alreadyInstalled ? `${icon.bullet()} Verified ${tildify(claude.settingsPath)}` : green(`${icon.success()} Updated ${tildify(claude.settingsPath)}`),
            claude.message,
          );
          if (claude.backup !== undefined) lines.push(`  backup: ${tildify(claude.backup)}`);
        }
        if (git !== undefined) {
          lines.push(git.alreadyInstalled ? `${icon.bullet()} ${git.message} (${tildify(git.hookPath)})` : green(`${icon.success()} ${git.message} (${tildify(git.hookPath)})`));
          if (git.backup !== undefined) lines.push(`  backup: ${tildify(git.backup)}`);
        }
        lines.push(yellow(`Add patterns with: ${cli} trauma add "<regex>" --message "<what happened>"`));
        return lines;
      });
    });
}
