import { registerHook } from "./commands/hook.js";
import { createRootProgram } from "./root-program.js";
import { runMain } from "./run-cli.js";

/**
 * `cm hook` alone (dist/cm-hook.cjs): the commands agents' hooks run on every prompt and tool call,
 * without loading every other command and its dependencies.
 */
runMain((ctx) => {
  const program = createRootProgram(ctx);
  registerHook(program, ctx);
  return program;
});
