import { buildProgram } from "./program.js";
import { runMain } from "./run-cli.js";

/** The whole CLI (dist/cm-main.cjs): every command. The `cm` loader (bin.ts) runs it for most command lines. */
runMain(buildProgram);
