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
      return createNullEpisodicSource(null, "none");
    case "cass":
      return cass();
    case "native":
      return native();
    default:
      return createAutoSource({ cass: locateExecutable(w.config.cassPath, w.env, home) !== null ? cass() : null, native: native() });
  }
}
