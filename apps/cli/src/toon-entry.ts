/**
 * Entry of `dist/cm-toon.cjs`: the TOON encoder (`@toon-format/toon`, ESM-only, bundled here into
 * CommonJS), required by `loadToon` only when a command prints TOON (`--format toon`,
 * `CM_OUTPUT_FORMAT=toon`) or reports `--stats`. Keeping it out of `cm-main.cjs` keeps it off the
 * start-up path of every other command.
 */
export { decode, encode } from "@toon-format/toon";
