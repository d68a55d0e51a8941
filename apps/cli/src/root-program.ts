import { Command } from "commander";
import { AppError } from "@cass-memory/core";
import { argvWantsJson, type CliContext } from "./cli-context.js";
import { VERSION } from "./version.js";

// The root program without its commands: its name, options and help texts. program.ts adds every
// command to it; the per-command entries (cm-context.ts, cm-mark.ts) add only their own, so that
// `cm context` and `cm mark` load only what they need. Both parse a command line the same way.

/**
 * Applies the global flags from a pre-scan of the raw argv, as the original does, so they take
 * effect wherever they appear: --no-color, --no-emoji, --width <n>, --verbose (and --color,
 * --emoji). Returns whether --verbose was given.
 */
export function applyGlobalFlags(args: readonly string[], env: NodeJS.ProcessEnv = process.env): { verbose: boolean; width?: string } {
  let verbose = false;
  let width: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    if (arg === "--no-color") {
      env.NO_COLOR = "1";
      env.FORCE_COLOR = "0";
    } else if (arg === "--color") {
      delete env.NO_COLOR;
      env.FORCE_COLOR = "1";
    } else if (arg === "--no-emoji") env.CASS_MEMORY_NO_EMOJI = "1";
    else if (arg === "--emoji") delete env.CASS_MEMORY_NO_EMOJI;
    else if (arg === "--verbose") {
      verbose = true;
      env.CASS_MEMORY_VERBOSE = "1";
    } else if (arg === "--width" && args[i + 1] !== undefined) env.CASS_MEMORY_WIDTH = width = args[i + 1]!;
    else if (arg.startsWith("--width=")) env.CASS_MEMORY_WIDTH = width = arg.slice("--width=".length);
  }
  return width !== undefined ? { verbose, width } : { verbose };
}

/** `--width` takes a whole number of columns (20-1000); anything else is bad input, not silently ignored. */
export function checkWidth(width: string | undefined, cli: string): void {
  if (width === undefined) return;
  const n = /^\s*\d+\s*$/.test(width) ? Number(width) : Number.NaN;
  if (!(n >= 20 && n <= 1000)) {
    throw new AppError("INVALID_INPUT", "width must be an integer between 20 and 1000.", {
      hint: `${cli} stats --width 100`,
      details: { field: "width", received: width, min: 20, max: 1000 },
    });
  }
}

/** The root program: name, version, global options and help texts, no commands. */
export function createRootProgram(ctx: CliContext): Command {
  const cli = ctx.cliName;
  const program = new Command();
  program
    .name(cli)
    .description("Procedural memory for AI coding agents: playbook rules, feedback and session history")
    .version(VERSION, "-V, --version", "print the version")
    .option("--no-color", "disable colours")
    .option("--no-emoji", "plain-text icons instead of emoji")
    .option("--width <n>", "output width")
    .option("--verbose", "diagnostic [cm] lines on stderr")
    .option("--info", "print versions, paths and playbook sizes, then exit")
    .option("--examples", "print example workflows, then exit")
    .exitOverride();
  if (!argvWantsJson(ctx.argv.slice(2))) program.showHelpAfterError("(add --help for additional information)");
  program.addHelpText("before", `Start here (agents):\n  ${cli} context "<task>" --json\n\nThen:\n  ${cli} quickstart --json\n  ${cli} mark <bulletId> --helpful --json\n`);
  program.addHelpText(
    "after",
    [
      "",
      "Examples:",
      `  ${cli} init`,
      `  ${cli} context "fix the login bug" --json`,
      `  ${cli} playbook add "Always run migrations in a transaction" --category database`,
      `  ${cli} mark b-abc123 --helpful`,
      "",
      "Global options:",
      "  --no-color       disable colours (also NO_COLOR)",
      "  --no-emoji       plain-text icons (also CASS_MEMORY_NO_EMOJI)",
      "  --width <n>      output width (also CASS_MEMORY_WIDTH)",
      "  --verbose        diagnostics on stderr (also CASS_MEMORY_VERBOSE)",
      "  --info           versions, paths and playbook sizes (with --json: an envelope)",
      "  --examples       example workflows (with --json: an envelope)",
      "",
      "Command groups:",
      "  Agent:     context (ctx), mark, remember, recall, outcome, outcome-apply",
      "  Learn:     reflect (ref, improve), diary, validate, audit, usage, undo --run",
      "  Lifecycle: forget, undo, history",
      "  Playbook:  playbook list|get|add|remove|export|import, ls, add, rm",
      "  Insight:   stats, top, stale, why, similar",
      "  Setup:     init, setup <client> [--hooks], hook <client> <event>, serve (MCP), starters, playbook bootstrap",
      "  Storage:   storage status, storage migrate --to sqlite|yaml",
      "  Health:    doctor (dr), privacy status|enable|disable|allow|deny",
      "  Onboard:   onboard status|gaps|sample|read|prompt|guided|mark-done|reset",
      "  Guides:    quickstart, project, --examples, --info",
      "  Safety:    trauma list|add|heal|remove|import, guard --install|--git, audit --trauma",
      "",
    ].join("\n"),
  );
  return program;
}
