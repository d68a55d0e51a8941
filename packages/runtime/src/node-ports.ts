import { randomBytes, randomInt } from "node:crypto";
import type { Clock, IdGenerator, Logger } from "@cass-memory/core";

/** Node implementations of core's small ports. */

export const systemClock: Clock = {
  now: () => new Date(),
};

const BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz";

/** Bullet ids `b-<Date.now() in base36>-<6 random base36 chars>` as the original writes them. */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  return {
    bulletId() {
      let suffix = "";
      for (let i = 0; i < 6; i++) suffix += BASE36[randomInt(36)];
      return `b-${now().toString(36)}-${suffix}`;
    },
    hex(count: number) {
      if (!Number.isInteger(count) || count <= 0) return "";
      return randomBytes(Math.ceil(count / 2)).toString("hex").slice(0, count);
    },
  };
}

export interface StderrLoggerOptions {
  /** Show debug lines. */
  verbose?: boolean;
  /** Receives one line without its newline; default writes to process.stderr. */
  write?: (line: string) => void;
}

/**
 * Diagnostics on stderr, each line prefixed `[cm] ` (warnings `[cm] WARNING: `, errors
 * `[cm] ERROR: `); debug lines only when verbose. Never touches stdout.
 */
export function createStderrLogger(options: StderrLoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const verbose = Boolean(options.verbose);
  return {
    debug(message) {
      if (verbose) write(`[cm] ${message}`);
    },
    info(message) {
      write(`[cm] ${message}`);
    },
    warn(message) {
      write(`[cm] WARNING: ${message}`);
    },
    error(message) {
      write(`[cm] ERROR: ${message}`);
    },
  };
}
