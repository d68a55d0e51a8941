import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/**
 * Path helpers of the composition root: the home directory, `~` expansion, the global data
 * directory (reference §3.3) and the git root (found by walking up, no `git` subprocess).
 */

type Env = Record<string, string | undefined>;

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value : undefined;
}

/** The user's home: `$HOME`, else `$USERPROFILE`, else the OS's idea of it. */
export function homeDir(env: Env = process.env): string {
  return nonEmpty(env.HOME) ?? nonEmpty(env.USERPROFILE) ?? homedir();
}

/** Expands a leading `~` (alone, or followed by `/` or `\`) to the home directory. */
export function expandHome(path: string, env: Env = process.env): string {
  if (path === "~") return homeDir(env);
  if (path.startsWith("~/") || path.startsWith("~\\")) return join(homeDir(env), path.slice(2));
  return path;
}

/**
 * The global data directory: `CASS_MEMORY_HOME` (with `~` expanded), else
 * `$XDG_DATA_HOME/cass-memory`, else `~/.cass-memory`. Always absolute.
 */
export function resolveGlobalDir(env: Env = process.env): string {
  const explicit = nonEmpty(env.CASS_MEMORY_HOME);
  if (explicit !== undefined) return resolve(expandHome(explicit.trim(), env));
  const xdg = nonEmpty(env.XDG_DATA_HOME);
  if (xdg !== undefined) return resolve(expandHome(xdg.trim(), env), "cass-memory");
  return join(homeDir(env), ".cass-memory");
}

/**
 * The root of the git work tree containing `cwd`: the nearest ancestor (or `cwd` itself) holding a
 * `.git` directory or file (worktrees and submodules use a `.git` file). Null outside a repository.
 */
export function findGitRoot(cwd: string): string | null {
  let dir = resolve(cwd);
  for (;;) {
    try {
      const st = statSync(join(dir, ".git"), { throwIfNoEntry: false });
      if (st !== undefined && (st.isDirectory() || st.isFile())) return dir;
    } catch {
      // unreadable: keep walking up
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}
