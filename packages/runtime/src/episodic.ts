import { accessSync, constants as fsConstants } from "node:fs";
import { delimiter, isAbsolute, join } from "node:path";
import { createAutoSource, createCassCliSource, createNativeSource, createSessionReaders, discoverSessions } from "@cass-memory/cass";
import { createNullEpisodicSource, type Clock, type Config, type EpisodicSource, type Logger } from "@cass-memory/core";
import { homeDir } from "./paths.js";

/** The original's extra places to look for `cass` when it is not on PATH. */
export function defaultCassCandidates(home: string): string[] {
  return [join(home, ".cargo", "bin", "cass"), join(home, ".local", "bin", "cass"), "/usr/local/bin/cass"];
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds the cass executable without running it: `cassPath` itself when it is a path, else the
 * PATH entries, else the usual install locations. Null when there is none — then `auto` never
 * spawns a process, which keeps `cm context` fast on machines without cass.
 */
export function locateExecutable(cassPath: string, env: Readonly<Record<string, string | undefined>>, home: string): string | null {
  const name = cassPath.startsWith("~/") ? join(home, cassPath.slice(2)) : cassPath;
  if (name.includes("/") || isAbsolute(name)) return isExecutable(name) ? name : null;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir !== "" && isExecutable(join(dir, name))) return join(dir, name);
  }
  if (name !== "cass") return null;
  return defaultCassCandidates(home).find(isExecutable) ?? null;
}

/**
 * The configured LLM command (`cliCommand`, its first word) and whether it exists as an
 * executable, for doctor: a command that is not on PATH is not a credential.
 */
export function llmCommandReport(cliCommand: string | undefined, env: Readonly<Record<string, string | undefined>>, home: string): { command: string; found: boolean } | undefined {
  const command = cliCommand?.trim().split(/\s+/)[0] ?? "";
  if (command === "") return undefined;
  return { command, found: locateExecutable(command, env, home) !== null };
}

export interface EpisodicWiring {
  config: Config;
  env: Readonly<Record<string, string | undefined>>;
  globalDir: string;
  logger: Logger;
  clock: Clock;
}

/**
 * The history source `config.episodic` asks for: `cass` (the CLI; reported as degraded when it is
 * missing), `native` (our readers of agents' session files), `auto` (cass when installed and
 * answering, else native) or `none` (no history, nothing reported).
 */
export function createEpisodicSource(w: EpisodicWiring): EpisodicSource {
  const home = homeDir(w.env);
  const cass = () =>
    createCassCliSource({ cassPath: w.config.cassPath, env: w.env, logger: w.logger, fallbackPaths: defaultCassCandidates(home) });
  const native = () =>
    createNativeSource({
      readers: createSessionReaders(),
      discover: discoverSessions,
      discoveryEnv: { home, env: w.env, platform: process.platform },
      extraRoots: w.config.sessionRoots,
      indexDir: join(w.globalDir, ".cache", "episodic"),
      clock: w.clock,
      logger: w.logger,
    });
  switch (w.config.episodic) {
    case "none":
      return withSessionFiles(createNullEpisodicSource(null, "none"), native);
    case "cass":
      return withSessionFiles(cass(), native);
    case "native":
      return native();
    default:
      return createAutoSource({ cass: locateExecutable(w.config.cassPath, w.env, home) !== null ? cass() : null, native: native() });
  }
}

/**
 * A session file named by path (`cm reflect --session`, `cm diary <file>`) is read even when the
 * history source cannot export it: `none` searches nothing but still reads files, and cass falls
 * back to our readers for files it does not know (as the original read them directly, reference
 * §6.4). The native source is only created when that happens.
 */
function withSessionFiles(source: EpisodicSource, native: () => EpisodicSource): EpisodicSource {
  let files: EpisodicSource | null = null;
  const reader = (): EpisodicSource => (files ??= native());
  return {
    name: source.name,
    health: () => source.health(),
    search: (query, options) => source.search(query, options),
    listSessions: (options) => source.listSessions(options),
    async export(path, format) {
      return (await source.export(path, format)) ?? reader().export(path, format);
    },
    async expand(path, line, context) {
      return (await source.expand(path, line, context)) ?? reader().expand(path, line, context);
    },
    async describe(path) {
      return (await source.describe?.(path)) ?? (await reader().describe?.(path)) ?? null;
    },
  };
}
