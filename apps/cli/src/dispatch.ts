/**
 * Which bundle runs a command line (the `cm` loader, bin.ts) — and so which command lines the
 * resident process (`cm daemon`) may run: the same per-command programs.
 */

/** The root options that take no value and may come before the command's name. */
const ROOT_SWITCHES = new Set(["--no-color", "--no-emoji", "--verbose"]);
/** Options handled before commander (or by it at the root) wherever they appear: the whole CLI answers them. */
const ANYWHERE = new Set(["--info", "--examples", "--help", "-h", "--version", "-V"]);

/** Which bundle runs this command line: a per-command one for the hot commands, else the whole CLI. */
export function bundleFor(args: readonly string[]): "cm-context" | "cm-mark" | "cm-hook" | "cm-main" {
  let command: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    if (ANYWHERE.has(a)) return "cm-main";
    if (command !== undefined) continue;
    if (a === "--width") i++;
    else if (ROOT_SWITCHES.has(a) || a.startsWith("--width=")) continue;
    else if (a.startsWith("-")) return "cm-main";
    else command = a;
  }
  if (command === "context" || command === "ctx") return "cm-context";
  if (command === "mark") return "cm-mark";
  if (command === "hook") return "cm-hook";
  return "cm-main";
}
