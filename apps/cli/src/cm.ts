import { CommanderError } from "commander";
import { AppError } from "@cass-memory/core";
import { argvWantsJson, createCliContext } from "./cli-context.js";
import { runExamples } from "./commands/examples.js";
import { runInfo } from "./commands/info.js";
import { reportError } from "./errors.js";
import { applyGlobalFlags, buildProgram, checkWidth } from "./program.js";

/** Entry of the `cm` / `cass-memory` binaries. */
async function main(argv: string[]): Promise<number> {
  const { verbose, width } = applyGlobalFlags(argv.slice(2));
  const ctx = createCliContext(argv, { verbose: verbose || /^(1|true)$/i.test(process.env.CASS_MEMORY_VERBOSE ?? "") });

  const releaseLocks = () => {
    try {
      ctx.loadedRuntimeModule?.releaseAllLocks();
    } catch {
      // exiting anyway
    }
  };
  process.once("SIGINT", () => {
    releaseLocks();
    process.exit(130);
  });
  process.once("SIGTERM", () => {
    releaseLocks();
    process.exit(143);
  });

  // --info and --examples answer wherever they appear, before commander sees the arguments.
  const special = interceptedFlag(argv.slice(2));
  try {
    checkWidth(width, ctx.cliName);
    if (special === "info") await runInfo(ctx, argvWantsJson(argv.slice(2)));
    else if (special === "examples") runExamples(ctx, argvWantsJson(argv.slice(2)));
    else await buildProgram(ctx).parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return 0;
      // Commander has printed its message (and usage) on stderr. A usage error is bad input:
      // exit 2, and in JSON mode the error envelope on stdout as for every other failure.
      const usage = usageError(error, ctx.cliName, argv.slice(2));
      if (!ctx.current.json) return usage.exitCode;
      error = usage;
    }
    return reportError(error, {
      command: ctx.current.command,
      json: ctx.current.json,
      ...(ctx.current.toon ? { toon: true } : {}),
      cliName: ctx.cliName,
      startedAt: ctx.startedAt,
      verbose: ctx.verbose,
    });
  }
}

/** The AppError (exit 2) for a commander parse error: unknown command or option, missing argument or value, missing subcommand. */
function usageError(error: CommanderError, cli: string, args: readonly string[]): AppError {
  const command = args.filter((a) => !a.startsWith("-")).slice(0, 2).join(" ");
  const missing = /missing|argument missing/i.test(error.message) || error.code === "commander.help";
  const message = error.code === "commander.help" ? `${command === "" ? cli : `${cli} ${command}`} needs a command` : error.message.replace(/^error:\s*/i, "").trim();
  return new AppError(missing ? "MISSING_REQUIRED" : "INVALID_INPUT", message, {
    hint: `Run '${cli}${command === "" ? "" : ` ${command.split(" ")[0]}`} --help' for the commands and options.`,
    details: { commanderCode: error.code },
  });
}

/** `info` when `--info` is among the arguments (before any `--`), else `examples` for `--examples`. */
function interceptedFlag(args: readonly string[]): "info" | "examples" | null {
  const end = args.indexOf("--");
  const scanned = end === -1 ? args : args.slice(0, end);
  if (scanned.includes("--info")) return "info";
  if (scanned.includes("--examples")) return "examples";
  return null;
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`cm: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
