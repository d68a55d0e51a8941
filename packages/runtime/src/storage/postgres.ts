import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { AppError, type Config } from "@cass-memory/core";

/**
 * The PostgreSQL backend's settings: the connection URL (CASS_MEMORY_DATABASE_URL, else
 * `storage.postgres.url` of the global config; a repository's config can set neither, see
 * REPO_FORBIDDEN_CONFIG_KEYS), the schema, and the key of the repository's rows. Only the store
 * ever sees the URL; everything shown to people uses `redactDatabaseUrl`.
 */

export const DATABASE_URL_ENV = "CASS_MEMORY_DATABASE_URL";

export interface PostgresSettings {
  /** null when neither the variable nor the config sets one. */
  url: string | null;
  urlSource: "env" | "config" | null;
  schema: string | undefined;
  /** Key of the repository layer's rows (`repo:<remote>`), null outside a repository. */
  repoSpace: string | null;
}

/** `postgres://user@host:port/db` — the password and query options never appear. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const user = parsed.username !== "" ? `${decodeURIComponent(parsed.username)}@` : "";
    return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}`;
  } catch {
    return "(an unparseable URL)";
  }
}

/** Hides any password in a text (URLs with credentials, and the configured password itself). */
export function scrubDatabaseSecrets(text: string, url: string | null): string {
  let out = text.replace(/(postgres(?:ql)?:\/\/[^:@/\s]*):[^@\s]*@/gi, "$1:***@");
  if (url !== null) {
    try {
      const password = decodeURIComponent(new URL(url).password);
      if (password.length >= 3) out = out.split(password).join("***");
    } catch {
      // nothing more to hide
    }
  }
  return out;
}

/**
 * The repository's key from its git remote `origin` (`host/owner/name`, credentials, scheme and
 * `.git` dropped), so every clone of one repository on every machine shares its rows; without a
 * remote, the repository directory's name. Read from `.git/config` (no git subprocess).
 */
export function repoKeyOf(repoDir: string): string {
  const root = dirname(repoDir);
  try {
    const text = readFileSync(join(root, ".git", "config"), "utf8").slice(0, 256 * 1024);
    const section = /\[remote "origin"\]([^[]*)/.exec(text)?.[1] ?? "";
    const url = /^\s*url\s*=\s*(.+)$/m.exec(section)?.[1]?.trim();
    if (url !== undefined && url !== "") {
      let key = url.replace(/^[a-z+]+:\/\//i, "").replace(/^[^@/]*@/, "");
      key = key.replace(/^([^/:]+):(?!\d+\/)/, "$1/").replace(/\.git\/?$/, "").replace(/\/+$/, "");
      if (key !== "") return key.toLowerCase().slice(0, 400);
    }
  } catch {
    // no readable git config: fall back to the name
  }
  return `local/${basename(root)}`;
}

export function postgresSettings(config: Config, env: Record<string, string | undefined>, repoDir: string | null): PostgresSettings {
  const fromEnv = env[DATABASE_URL_ENV]?.trim();
  const configured = config.storage.postgres;
  const url = fromEnv !== undefined && fromEnv !== "" ? fromEnv : (configured?.url ?? null);
  const urlSource = fromEnv !== undefined && fromEnv !== "" ? "env" : configured?.url !== undefined ? "config" : null;
  const repoSpace = repoDir === null ? null : `repo:${configured?.repoKey ?? repoKeyOf(repoDir)}`;
  return { url, urlSource, schema: configured?.schema, repoSpace };
}

export function missingDatabaseUrl(cliName: string): AppError {
  return new AppError("CONFIG_INVALID", `storage.backend is "postgres" but no database URL is set.`, {
    hint: `Set ${DATABASE_URL_ENV}=postgres://user:password@host:5432/db (or storage.postgres.url in ~/.cass-memory/config.json), or switch back with '${cliName} storage migrate --to yaml'.`,
    details: { variable: DATABASE_URL_ENV },
  });
}
