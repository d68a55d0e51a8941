import { existsSync } from "node:fs";
import { join } from "node:path";
import { AppError } from "@cass-memory/core";
import type { CliContext } from "./cli-context.js";
import { oneOf } from "./options.js";
import { successEnvelope, writeStderr } from "./output.js";
import { VERSION } from "./version.js";

/**
 * Structured output formats (reference §1.2): `--format json|toon` wins, then `--json`, then the
 * environment default (`CM_OUTPUT_FORMAT=toon` or `TOON_DEFAULT_FORMAT=toon`) for the commands
 * that have `--format`. TOON encodes the same envelope as JSON, with the `@toon-format/toon`
 * library (bundled as `dist/cm-toon.cjs`, loaded only when TOON is printed or measured).
 */

export type ToonModule = { encode: (value: unknown) => string; decode: (text: string) => unknown };

let toon: ToonModule | undefined;

/** The TOON encoder, loaded on first use (synchronously: the error reporter needs it too). */
export function loadToon(): ToonModule {
  if (toon !== undefined) return toon;
  const bundled = join(__dirname, "cm-toon.cjs");
  if (!existsSync(bundled)) {
    throw new AppError("INTERNAL_ERROR", `The TOON encoder is missing (${bundled}); reinstall cass-memory.`);
  }
  toon = require(bundled) as ToonModule;
  return toon;
}

/** TOON text of `value` (a trailing newline is added by the printer). */
export function encodeToon(value: unknown): string {
  return loadToon().encode(value);
}

/** True when the environment asks for TOON by default. */
export function envWantsToon(env: NodeJS.ProcessEnv = process.env): boolean {
  return [env.CM_OUTPUT_FORMAT, env.TOON_DEFAULT_FORMAT].some((v) => v?.trim().toLowerCase() === "toon");
}

export interface FormatFlags {
  json?: boolean;
  format?: string;
  stats?: boolean;
}

export type Structured = "json" | "toon" | null;

/**
 * The structured format of a command with `--format` (validated against `allowed`): `--format`
 * first (a non-structured value such as `markdown` gives null), then `--json`, then the
 * environment's TOON default.
 */
export function structuredFormat(flags: FormatFlags, allowed: readonly string[]): Structured {
  if (flags.format !== undefined) {
    const format = oneOf("format", flags.format, allowed);
    return format === "json" || format === "toon" ? format : null;
  }
  if (flags.json) return "json";
  return envWantsToon() ? "toon" : null;
}

/**
 * Declares the running command with its output format (so errors are reported the same way).
 * The format is validated after `begin`, so a bad `--format` is reported in the right mode.
 */
export function beginWithFormat(ctx: CliContext, command: string, flags: FormatFlags, allowed: readonly string[] = ["json", "toon"]): Structured {
  const raw = flags.format?.trim().toLowerCase();
  let guess: Structured;
  if (raw === "json" || raw === "toon") guess = raw;
  else if (raw === undefined) guess = flags.json ? "json" : envWantsToon() ? "toon" : null;
  // A valid text format (markdown) is human output; an invalid one is reported as --json asks.
  else guess = !allowed.includes(raw) && flags.json ? "json" : null;
  ctx.begin(command, guess !== null, guess === "toon");
  return structuredFormat(flags, allowed);
}

/** Tokens as the original's `--stats` counts them: max(characters ÷ 4, words). */
export function statsTokens(text: string): number {
  return Math.max(Math.ceil(text.length / 4), text.split(/\s+/).filter(Boolean).length);
}

/** `--stats` / `TOON_STATS=1|true|yes`: the JSON and TOON sizes of the envelope, on stderr. */
export function reportTokenStats(ctx: CliContext, flags: FormatFlags, data: unknown): void {
  const env = process.env.TOON_STATS?.trim().toLowerCase();
  if (!ctx.current.json || !(flags.stats || env === "1" || env === "true" || env === "yes")) return;
  const envelope = successEnvelope(ctx.current.command, data, ctx.startedAt);
  const json = statsTokens(JSON.stringify(envelope, null, 2));
  const toonTokens = statsTokens(encodeToon(envelope));
  const savings = json > 0 ? Math.round(((json - toonTokens) / json) * 100) : 0;
  writeStderr(`[stats] JSON: ${json} tokens, TOON: ${toonTokens} tokens (${savings}% savings)`);
}

/**
 * The text a success envelope prints as, for measuring before printing (`--max-tokens`): the
 * timestamp has a fixed length and `executionMs` is counted with six digits, so the printed
 * document is never longer than measured.
 */
export function printedEnvelope(command: string, data: unknown, format: "json" | "toon"): string {
  const envelope = {
    success: true,
    command,
    timestamp: new Date(0).toISOString(),
    data,
    metadata: { executionMs: 999_999, version: VERSION },
  };
  return `${format === "toon" ? encodeToon(envelope) : JSON.stringify(envelope, null, 2)}\n`;
}
