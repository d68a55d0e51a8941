import { readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type { Command } from "commander";
import {
  AppError,
  MAX_TRAUMA_IMPORT_CHARS,
  traumaAddOperation,
  traumaHealOperation,
  traumaImportOperation,
  traumaListOperation,
  traumaRemoveOperation,
  type TraumaEntry,
} from "@cass-memory/core";
import { emit, run, type CliContext } from "../cli-context.js";
import { bold, cyan, dim, green, icon, red, yellow } from "../human.js";
import { ask, isInteractive } from "../options.js";
import { writeStderr } from "../output.js";

/**
 * `cm trauma list|add|heal|remove|import` (reference §1.5.26): the "hot stove" registry of
 * dangerous command patterns. Envelope command ids are space-separated (`trauma list`, …).
 */
/** Errors of every trauma subcommand are reported with the command id `trauma`, as the original did. */
const TRAUMA_ERROR_COMMAND = "trauma";

/** Prints a success under the subcommand's own id (`trauma list`, …). */
function succeed(ctx: CliContext, command: string, ...rest: Parameters<typeof emit> extends [unknown, ...infer R] ? R : never): void {
  ctx.begin(command, ctx.current.json);
  emit(ctx, ...rest);
}

export function registerTrauma(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  const group = program
    .command("trauma")
    .description("Safety: the registry of dangerous command patterns the guard blocks (hot stove)")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} trauma list\n  ${cli} trauma add "git\\s+push\\s+.*--force" --message "force-pushed over main"\n  ${cli} trauma heal trauma-1a2b3c4d\n  ${cli} trauma remove trauma-1a2b3c4d --force --yes\n  ${cli} trauma import ./traumas.txt --scope project\n`,
    );

  group
    .command("list")
    .alias("ls")
    .description("List the active traumas (healed ones are counted)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} trauma list\n  ${cli} trauma ls --json\n`)
    .action(async (flags: { json?: boolean }) => {
      ctx.begin(TRAUMA_ERROR_COMMAND, Boolean(flags.json));
      const result = await run(ctx, traumaListOperation, {});
      succeed(ctx, traumaListOperation.command, result, () => renderList(result.traumas));
    });

  group
    .command("add")
    .description("Register a dangerous command pattern (a case-insensitive regex)")
    .argument("<pattern>", "regex of the command, e.g. 'git\\s+push\\s+.*--force'")
    .option("--severity <level>", "CRITICAL or FATAL (default CRITICAL)")
    .option("--scope <scope>", "global or project (default global)")
    .option("--message <msg>", "what happened (default \"Manually added trauma.\")")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} trauma add "DROP\\s+TABLE\\s+users" --severity FATAL --message "dropped the users table"\n  ${cli} trauma add "git\\s+push\\s+.*--force" --scope project --json\n\nPatterns that could backtrack catastrophically (e.g. (a+)+, (a|ab)+, \\s*\\s*$) are refused.\n`,
    )
    .action(async (pattern: string, flags: { severity?: string; scope?: string; message?: string; json?: boolean }) => {
      ctx.begin(TRAUMA_ERROR_COMMAND, Boolean(flags.json));
      const result = await run(ctx, traumaAddOperation, {
        pattern,
        ...(flags.severity !== undefined ? { severity: flags.severity } : {}),
        ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
        ...(flags.message !== undefined ? { message: flags.message } : {}),
      });
      succeed(ctx, traumaAddOperation.command, result, () => [green(`${icon.success()} Added trauma ${result.entry.id}`), yellow("The safety guard will now block this pattern.")]);
    });

  group
    .command("heal")
    .description("Mark a trauma healed: it stays recorded but no longer blocks")
    .argument("<id>", "trauma id (trauma-<8 hex>)")
    .option("--scope <scope>", "global, project or all (default all)")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} trauma heal trauma-1a2b3c4d\n  ${cli} trauma heal trauma-1a2b3c4d --scope project --json\n`)
    .action(async (id: string, flags: { scope?: string; json?: boolean }) => {
      ctx.begin(TRAUMA_ERROR_COMMAND, Boolean(flags.json));
      const result = await run(ctx, traumaHealOperation, { id, ...(flags.scope !== undefined ? { scope: flags.scope } : {}) });
      succeed(ctx, traumaHealOperation.command, result, () => [
        green(`${icon.success()} Healed trauma ${id} (${result.updated} entr${result.updated === 1 ? "y" : "ies"})`),
        ...result.updatedPaths.map((p) => dim(`  Updated: ${p}`)),
        yellow("This trauma will no longer block matching commands."),
      ]);
    });

  group
    .command("remove")
    .alias("rm")
    .description("Delete a trauma from the registry (needs --force; asks to confirm unless --yes)")
    .argument("<id>", "trauma id (trauma-<8 hex>)")
    .option("--scope <scope>", "global, project or all (default all)")
    .option("--force", "required: removal deletes the record (prefer heal)")
    .option("-y, --yes", "do not ask for confirmation")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} trauma remove trauma-1a2b3c4d --force\n  ${cli} trauma rm trauma-1a2b3c4d --force --yes --json\n`)
    .action(async (id: string, flags: { scope?: string; force?: boolean; yes?: boolean; json?: boolean }) => {
      ctx.begin(TRAUMA_ERROR_COMMAND, Boolean(flags.json));
      const input = { id, ...(flags.scope !== undefined ? { scope: flags.scope } : {}) };
      // Without --force the operation refuses (MISSING_REQUIRED) before anything is asked.
      if (flags.force && !flags.yes && !(await confirmRemoval(id, flags.scope ?? "all"))) {
        if (ctx.current.json) {
          succeed(ctx, traumaRemoveOperation.command, { removed: 0, checkedPaths: [], updatedPaths: [] }, () => null, { effect: false, reason: "User did not confirm removal" });
        } else if (isInteractive()) writeStderr("Cancelled.");
        return;
      }
      const result = await run(ctx, traumaRemoveOperation, { ...input, force: Boolean(flags.force) });
      succeed(ctx, traumaRemoveOperation.command, result, () => [
        green(`${icon.success()} Removed trauma ${id} (${result.removed} entr${result.removed === 1 ? "y" : "ies"})`),
        ...result.updatedPaths.map((p) => dim(`  Updated: ${p}`)),
      ]);
    });

  group
    .command("import")
    .description("Import patterns from a file: one regex per line, JSON strings, or JSONL objects with \"pattern\"")
    .argument("<file>", "the file to import")
    .option("--scope <scope>", "global or project (default global)")
    .option("--severity <level>", "CRITICAL or FATAL (default CRITICAL)")
    .option("--message <msg>", "reason recorded on each entry (default \"Imported from <file>\")")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText("after", `\nExamples:\n  ${cli} trauma import ./traumas.txt\n  ${cli} trauma import ./traumas.jsonl --scope project --severity FATAL --json\n`)
    .action(async (file: string, flags: { scope?: string; severity?: string; message?: string; json?: boolean }) => {
      ctx.begin(TRAUMA_ERROR_COMMAND, Boolean(flags.json));
      const content = readImportFile(file, cli);
      const result = await run(ctx, traumaImportOperation, {
        content,
        source: file,
        ...(flags.scope !== undefined ? { scope: flags.scope } : {}),
        ...(flags.severity !== undefined ? { severity: flags.severity } : {}),
        ...(flags.message !== undefined ? { message: flags.message } : {}),
      });
      const { warnings, ...data } = result;
      succeed(
        ctx,
        traumaImportOperation.command,
        data,
        () => [
          green(`${icon.success()} Imported ${result.imported} trauma entr${result.imported === 1 ? "y" : "ies"}`),
          ...(warnings.length > 0 ? [yellow(`Warnings (${warnings.length}):`), ...warnings.map((w) => yellow(`  - ${w}`))] : []),
        ],
        warnings.length > 0 ? { warnings } : {},
      );
    });
}

/** The import file's text; FILE_NOT_FOUND when missing, INVALID_INPUT when larger than 1 MiB. */
function readImportFile(file: string, cli: string): string {
  const path = resolve(file.startsWith("~/") ? `${process.env.HOME ?? ""}${file.slice(1)}` : file);
  let size: number;
  try {
    const stats = statSync(path);
    if (!stats.isFile()) throw Object.assign(new Error("not a file"), { code: "ENOENT" });
    size = stats.size;
  } catch {
    throw new AppError("FILE_NOT_FOUND", `File not found: ${file}`, {
      hint: `Provide a readable file path (one pattern per line, or JSONL objects with {"pattern": "..."}), e.g. ${cli} trauma import ./traumas.txt`,
      details: { file },
    });
  }
  if (size > MAX_TRAUMA_IMPORT_CHARS) {
    throw new AppError("INVALID_INPUT", `File is too large to import: ${size} bytes (at most ${MAX_TRAUMA_IMPORT_CHARS}).`, {
      hint: "Split the file into smaller files.",
      details: { file, size, max: MAX_TRAUMA_IMPORT_CHARS },
    });
  }
  return readFileSync(path, "utf8");
}

/** Asks on the terminal to type REMOVE; false when declined or when there is no terminal. */
async function confirmRemoval(id: string, scope: string): Promise<boolean> {
  if (!isInteractive()) return false;
  writeStderr([bold(`Remove trauma ${id} (delete entry from registry)`), `  Trauma id: ${id}`, `  Scope: ${scope}`].join("\n"));
  return (await ask("Type REMOVE to confirm: ")) === "REMOVE";
}

function renderList(traumas: TraumaEntry[]): string[] {
  if (traumas.length === 0) return [green("No active traumas found. (Safe... for now.)")];
  const lines = [bold(`ACTIVE TRAUMAS (${traumas.length})`), dim("These patterns are strictly forbidden by the safety guard."), ""];
  for (const t of traumas) {
    lines.push(`${red(`[${t.severity}]`)} ${bold(t.id)}`);
    lines.push(`  Pattern: ${cyan(t.pattern)}`);
    lines.push(`  Scope:   ${t.scope}`);
    lines.push(`  Reason:  ${t.trigger_event.human_message || "N/A"}`);
    lines.push("");
  }
  return lines;
}
