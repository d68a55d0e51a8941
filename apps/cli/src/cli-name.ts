import { basename } from "node:path";

/**
 * The program name (reference §1.1 getCliName). Kept free of other imports: the `cm` loader
 * (bin.ts) uses it to pick the pre-rendered help without loading the CLI bundle.
 */
export function resolveCliName(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.CASS_MEMORY_CLI_NAME?.trim();
  if (fromEnv) return fromEnv;
  const script = argv[1] ? basename(argv[1]) : "";
  const stem = script.replace(/\.(c|m)?(j|t)s$/, "");
  if (stem === "cm" || stem === "cass-memory") return stem;
  const argv0 = argv[0] ? basename(argv[0]).replace(/\.exe$/i, "") : "";
  if (argv0 && argv0 !== "node" && argv0 !== "bun" && !/^node\d*$/.test(argv0)) return argv0;
  return "cm";
}
