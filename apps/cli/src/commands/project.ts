import { chmod, stat } from "node:fs/promises";
import { resolve } from "node:path";
import type { Command } from "commander";
import { AppError, parseProjectFormat, projectOperation } from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { green, icon, tildify } from "../human.js";
import { intOption } from "../options.js";
import { writeStderr, writeStdout } from "../output.js";

interface ProjectFlags {
  format?: string;
  output?: string;
  force?: boolean;
  perCategory?: string;
  top?: string;
  showCounts?: boolean;
  json?: boolean;
}

/**
 * `cm project` (reference §1.5.17): the merged playbook as AGENTS.md, a CLAUDE.md rules block, or
 * raw JSON/YAML, printed or written (atomically) to `--output`.
 */
export function registerProject(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("project")
    .description("Export the playbook for agents: AGENTS.md, CLAUDE.md rules, or raw JSON/YAML")
    .option("--format <fmt>", "agents.md (default), claude.md, raw, json or yaml")
    .option("--output <path>", "write to this file instead of stdout")
    .option("--force", "overwrite the --output file if it exists")
    .option("--per-category <n>", "at most n rules per category, best first (default: all)")
    .option("--top <n>", "deprecated alias of --per-category")
    .option("--no-show-counts", "leave out the [helpful+/harmful-] feedback counts")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} project --output AGENTS.md\n  ${cli} project --format claude.md --per-category 5 >> CLAUDE.md\n  ${cli} project --format yaml --output rules.yaml --force --json\n`,
    )
    .action(async (flags: ProjectFlags) => {
      ctx.begin(projectOperation.command, Boolean(flags.json));
      // Input errors first, before looking at the output file.
      parseProjectFormat(flags.format);
      const top = intOption("top", flags.top);
      let perCategory = intOption("per-category", flags.perCategory);
      if (top !== undefined) {
        if (perCategory !== undefined) writeStderr("Ignoring deprecated --top because --per-category was also provided.");
        else {
          writeStderr("[project] --top is deprecated; use --per-category.");
          perCategory = top;
        }
      }
      let outputPath: string | null = null;
      let previousMode: number | null = null;
      if (flags.output !== undefined) {
        if (flags.output.trim() === "") {
          throw new AppError("INVALID_INPUT", "output must be a non-empty string.", { details: { field: "output", received: flags.output } });
        }
        outputPath = resolve(flags.output);
        previousMode = await modeOf(outputPath);
        if (!flags.force && previousMode !== null) {
          throw new AppError("ALREADY_EXISTS", `Refusing to overwrite existing file: ${outputPath}`, {
            hint: `Re-run with: ${cli} project --output "${outputPath}" --force`,
            details: { path: outputPath },
          });
        }
      }

      const result = await run(ctx, projectOperation, {
        ...(flags.format !== undefined ? { format: flags.format } : {}),
        ...(perCategory !== undefined ? { perCategory } : {}),
        showCounts: flags.showCounts !== false,
      });
      let content: string;
      if ("content" in result) content = result.content;
      else {
        const { toYaml } = await import("@cass-memory/runtime");
        content = toYaml(result.document);
        if (!content.endsWith("\n")) content += "\n";
      }

      if (outputPath !== null) {
        const { atomicWriteFile } = await import("@cass-memory/runtime");
        await atomicWriteFile(outputPath, content);
        // The atomic write creates a private (0600) file; a projected AGENTS.md is meant to be
        // shared, so keep the mode of the file it replaced, or use the usual 0644 for a new one.
        await chmod(outputPath, previousMode ?? 0o644).catch(() => undefined);
        const data = { outputPath, format: result.format, bytesWritten: Buffer.byteLength(content, "utf8") };
        emit(ctx, data, () => green(`${icon.success()} Exported to ${tildify(outputPath)}`));
        return;
      }
      if (ctx.current.json) emit(ctx, { format: result.format, content }, () => null);
      else writeStdout(content);
    });
}

/** Permission bits of an existing file, or null when there is none (or it cannot be seen: the write then reports the real problem). */
async function modeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return null;
  }
}
