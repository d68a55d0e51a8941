import { CommanderError } from "commander";
import { createCliContext } from "./cli-context.js";
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

  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode;
    return reportError(error, {
      command: ctx.current.command,
      json: ctx.current.json,
      cliName: ctx.cliName,
      startedAt: ctx.startedAt,
      verbose: ctx.verbose,
    });
  }
}

main(process.argv).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`cm: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
