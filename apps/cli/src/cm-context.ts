import { registerContext } from "./commands/context.js";
import { createRootProgram } from "./root-program.js";
import { runMain } from "./run-cli.js";

/**
 * `cm context` alone (dist/cm-context.cjs): the root program with only this command, so that the
 * loader (bin.ts) runs it without loading every other command and its dependencies.
 */
runMain((ctx) => {
  const program = createRootProgram(ctx);
  registerContext(program, ctx);
  return program;
});
