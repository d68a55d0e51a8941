import { registerMark } from "./commands/mark.js";
import { createRootProgram } from "./root-program.js";
import { runMain } from "./run-cli.js";

/**
 * `cm mark` alone (dist/cm-mark.cjs): the root program with only this command, so that the
 * loader (bin.ts) runs it without loading every other command and its dependencies.
 */
runMain((ctx) => {
  const program = createRootProgram(ctx);
  registerMark(program, ctx);
  return program;
});
