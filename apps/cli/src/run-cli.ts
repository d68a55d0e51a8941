import { CommanderError, type Command } from "commander";
import { AppError } from "@cass-memory/core";
import { argvWantsJson, createCliContext, type CliContext } from "./cli-context.js";
import { reportError } from "./errors.js";
import { applyGlobalFlags, checkWidth } from "./root-program.js";
import { VERSION } from "./version.js";

/**
 * Runs one `cm` command line with the program `build` returns: the whole CLI (cm.ts) or only the
 * command being run (cm-context.ts, cm-mark.ts). Everything around commander — global flags,
 * --info/--examples/-v/version, signals, usage errors and the exit code — is done here, once.
 */
export async function runCli(argv: string[], build: (ctx: CliContext) => Command, options: { resident?: boolean } = {}): Promise<number> {
  const { verbose, width } = applyGlobalFlags(argv.slice(2));
  const ctx = createCliContext(argv, { verbose: verbose || /^(1|true)$/i.test(process.env.CASS_MEMORY_VERBOSE ?? ""), ...(options.resident ? { resident: true } : {}) });

  // A resident process (`cm daemon`) runs many command lines: it handles signals itself, and closes
  // each command's runtime when the command is done.
  if (options.resident) {
    try {
      return await runParsed(argv, build, ctx, width);
    } finally {
      await ctx.dispose();
    }
  }
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
  return runParsed(argv, build, ctx, width);
}

async function runParsed(argv: string[], build: (ctx: CliContext) => Command, ctx: CliContext, width: string | undefined): Promise<number> {
  // --info and --examples answer wherever they appear, before commander sees the arguments.
  const special = interceptedFlag(argv.slice(2));
  try {
    checkWidth(width, ctx.cliName);
    if (special === "info") await (await import("./commands/info.js")).runInfo(ctx, argvWantsJson(argv.slice(2)));
    else if (special === "examples") (await import("./commands/examples.js")).runExamples(ctx, argvWantsJson(argv.slice(2)));
    else if (isVersionRequest(argv.slice(2))) process.stdout.write(`${VERSION}\n`);
    else await build(ctx).parseAsync(argv);
    return ctx.exitCode;
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

/**
 * `cm -v` and `cm version` print the version as `--version` and `-V` do (commander's own flag):
 * the version and a newline on stdout, also with --json. Only as the first argument after the
 * global flags, so that a `-v` or `version` elsewhere keeps its meaning.
 */
export function isVersionRequest(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--width") i++;
    else if (a === "--no-color" || a === "--no-emoji" || a === "--verbose" || a.startsWith("--width=")) continue;
    else return a === "-v" || a === "version";
  }
  return false;
}

/** Runs the command line of this process and exits with its code. */
export function runMain(build: (ctx: CliContext) => Command): void {
  runCli(process.argv, build).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`cm: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
