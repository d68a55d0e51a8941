import { randomBytes, randomInt } from "node:crypto";
import { open, realpath } from "node:fs/promises";
import { isAbsolute, relative, resolve as resolvePath, sep } from "node:path";
import type { Clock, IdGenerator, Logger, WorkspaceFiles } from "@cass-memory/core";

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
  /** Applied to every message before it is written (the secret detector: logs never hold a secret). */
  redact?: (text: string) => string;
}

/**
 * Diagnostics on stderr, each line prefixed `[cm] ` (warnings `[cm] WARNING: `, errors
 * `[cm] ERROR: `); debug lines only when verbose. Never touches stdout.
 */
export function createStderrLogger(options: StderrLoggerOptions = {}): Logger {
  const raw = options.write ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const redact = options.redact;
  const write = redact ? (line: string) => raw(redact(line)) : raw;
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

/** Read-only access to the workspace for bullets' verification checks. */
export function createNodeWorkspaceFiles(): WorkspaceFiles {
  /**
   * The real path of `path` inside the workspace `base`, or null when it does not exist or leads
   * outside it (an absolute path, `..`, or a symbolic link pointing elsewhere). Verification
   * checks come from rules anyone with write access to a playbook can author: they must not
   * reveal anything about files outside the workspace.
   */
  const confined = async (base: string, path: string): Promise<string | null> => {
    try {
      const root = await realpath(base);
      const target = await realpath(isAbsolute(path) ? path : resolvePath(root, path));
      const rel = relative(root, target);
      return rel === "" || (rel.split(sep)[0] !== ".." && !isAbsolute(rel)) ? target : null;
    } catch {
      return null;
    }
  };
  return {
    async exists(base, path) {
      return (await confined(base, path)) !== null;
    },
    async readText(base, path, maxBytes) {
      const target = await confined(base, path);
      if (target === null) return null;
      let handle: Awaited<ReturnType<typeof open>> | undefined;
      try {
        handle = await open(target, "r");
        const buffer = Buffer.alloc(Math.max(0, maxBytes));
        const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
        return buffer.subarray(0, bytesRead).toString("utf8");
      } catch {
        return null;
      } finally {
        await handle?.close();
      }
    },
  };
}
