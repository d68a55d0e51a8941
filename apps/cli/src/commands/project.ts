import { constants as fsConstants } from "node:fs";
import { chmod, copyFile, realpath, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
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
  parents?: boolean;
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
    .option("--force", "overwrite the --output file if it exists (it is backed up first)")
    .option("--parents", "create the --output file's missing parent directories")
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
        await refuseStoreFile(outputPath, ctx);
        previousMode = await modeOf(outputPath);
        if (!flags.force && previousMode !== null) {
          throw new AppError("ALREADY_EXISTS", `Refusing to overwrite existing file: ${outputPath}`, {
            hint: `Re-run with: ${cli} project --output "${outputPath}" --force`,
            details: { path: outputPath },
          });
        }
        if (!flags.parents && !(await isDirectory(dirname(outputPath)))) {
          throw new AppError("FILE_NOT_FOUND", `The directory of ${outputPath} does not exist.`, {
            hint: `Create it first, or re-run with --parents to create it: ${cli} project --output "${flags.output}" --parents`,
            details: { path: outputPath, directory: dirname(outputPath) },
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
        // What --force replaces is kept: <file>.backup.<epoch-ms>, with its mode.
        const backup = previousMode !== null ? await backupFile(outputPath) : undefined;
        await atomicWriteFile(outputPath, content);
        // The atomic write creates a private (0600) file; a projected AGENTS.md is meant to be
        // shared, so keep the mode of the file it replaced, or use the usual 0644 for a new one.
        await chmod(outputPath, previousMode ?? 0o644).catch(() => undefined);
        const data = { outputPath, format: result.format, bytesWritten: Buffer.byteLength(content, "utf8"), ...(backup !== undefined ? { backup } : {}) };
        emit(ctx, data, () => [green(`${icon.success()} Exported to ${tildify(outputPath)}`), ...(backup !== undefined ? [`  backup of the previous file: ${tildify(backup)}`] : [])]);
        return;
      }
      if (ctx.current.json) emit(ctx, { format: result.format, content }, () => null);
      else writeStdout(content);
    });
}

/**
 * Refuses an output inside cm's own data (the global data directory, the repository's `.cass/`,
 * the configured playbook or database): a projection written there would replace live memory
 * with Markdown. Paths are compared after resolving symbolic links.
 */
async function refuseStoreFile(outputPath: string, ctx: CliContext): Promise<void> {
  const rt = await ctx.runtime();
  const real = async (path: string): Promise<string> => {
    // The output may not exist yet: resolve its directory and keep the name.
    try {
      return await realpath(path);
    } catch {
      try {
        return join(await realpath(dirname(path)), basename(path));
      } catch {
        return path;
      }
    }
  };
  const target = await real(outputPath);
  const dirs = [rt.paths.globalDir, ...(rt.paths.repoDir !== null ? [rt.paths.repoDir] : [])];
  const files = [rt.paths.globalPlaybook, rt.paths.configPath, rt.storage.dirs.sqlitePath, rt.storage.dirs.playbookPath];
  const inside = async (dir: string): Promise<boolean> => {
    const rel = relative(await real(dir), target);
    return rel === "" || (rel.split(sep)[0] !== ".." && !isAbsolute(rel));
  };
  for (const dir of dirs) {
    if (await inside(dir)) {
      throw new AppError("INVALID_INPUT", `Refusing to write the projection into cass-memory's own data: ${outputPath}`, {
        hint: `Write it where agents read it, e.g. --output AGENTS.md in your repository (not inside ${dir}).`,
        details: { path: outputPath, storeDir: dir },
      });
    }
  }
  for (const file of files) {
    if ((await real(file)) === target) {
      throw new AppError("INVALID_INPUT", `Refusing to overwrite a cass-memory store file: ${outputPath}`, {
        hint: "Write the projection to another file, e.g. --output AGENTS.md.",
        details: { path: outputPath },
      });
    }
  }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => null))?.isDirectory() ?? false;
}

/** A byte copy `<file>.backup.<epoch-ms>` (a free name, same mode); returns its path. */
async function backupFile(path: string): Promise<string> {
  for (let stamp = Date.now(); ; stamp++) {
    const backup = `${path}.backup.${stamp}`;
    try {
      await copyFile(path, backup, fsConstants.COPYFILE_EXCL);
      await chmod(backup, (await stat(path)).mode & 0o7777).catch(() => undefined);
      return backup;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") {
        throw new AppError("FILE_WRITE_FAILED", `Could not back up ${path} before overwriting it: ${error instanceof Error ? error.message : String(error)}`, {
          details: { path },
          cause: error,
        });
      }
    }
  }
}

/** Permission bits of an existing file, or null when there is none (or it cannot be seen: the write then reports the real problem). */
async function modeOf(path: string): Promise<number | null> {
  try {
    return (await stat(path)).mode & 0o7777;
  } catch {
    return null;
  }
}
