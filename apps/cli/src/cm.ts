import { CommanderError } from "commander";
import { argvWantsJson, createCliContext } from "./cli-context.js";
import { runExamples } from "./commands/examples.js";
import { runInfo } from "./commands/info.js";
import { reportError } from "./errors.js";
import { applyGlobalFlags, buildProgram } from "./program.js";

/** Entry of the `cm` / `cass-memory` binaries. */
async function main(argv: string[]): Promise<number> {
  const { verbose } = applyGlobalFlags(argv.slice(2));
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
    if (special === "info") await runInfo(ctx, argvWantsJson(argv.slice(2)));
    else if (special === "examples") runExamples(ctx, argvWantsJson(argv.slice(2)));
    else await buildProgram(ctx).parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
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
