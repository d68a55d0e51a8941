import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { AppError, type Store, type StorageBackend } from "@cass-memory/core";
import type { UnreadableConfig } from "../config.js";
import type { StoreDirs } from "./backend.js";

/**
 * When config.json cannot be parsed, its `storage` settings are unknown. Two protections:
 * the backend is taken from the data present (so reads show the memory the user actually has),
 * and every write is refused (so nothing lands in a store the user has left).
 */

const isFile = (path: string): boolean => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;

/**
 * The backend the data says is in use: the target of the newest committed migration
 * (`<globalDir>/backups/storage-*​/migration.json`), else SQLite when its database exists and the
 * YAML playbook does not, else YAML.
 */
export function backendFromData(dirs: StoreDirs): StorageBackend {
  try {
    const backups = join(dirs.globalDir, "backups");
    const names = readdirSync(backups).filter((n) => n.startsWith("storage-")).sort().reverse();
    for (const name of names) {
      try {
        const record = JSON.parse(readFileSync(join(backups, name, "migration.json"), "utf8")) as { to?: unknown };
        if (record.to === "sqlite" || record.to === "yaml") return record.to;
      } catch {
        // an unreadable record: look at the one before
      }
    }
  } catch {
    // no backups directory
  }
  return isFile(dirs.sqlitePath) && !isFile(dirs.playbookPath) ? "sqlite" : "yaml";
}

/** The error every write meets while config.json is unreadable. */
export function unreadableConfigError(info: UnreadableConfig, backend: StorageBackend, cliName: string): AppError {
  const where = info.line !== null ? `${info.path} (line ${info.line})` : info.path;
  return new AppError("CONFIG_INVALID", `Refusing to write: ${where} could not be read (${info.message}), so the storage settings are unknown. Nothing was changed.`, {
    hint: `Fix ${info.path} by hand (or restore a ${info.path}.backup.<ms> copy), or run '${cliName} doctor --fix --force' to back it up and reset it; the ${backend} store found in your data is kept.`,
    details: { path: info.path, line: info.line, backend },
  });
}

/** Store methods that change stored data. */
const WRITES = [
  "mutatePlaybook",
  "appendBlocked",
  "removeBlocked",
  "appendLog",
  "updateLog",
  "mutateConfigFile",
  "mutateOnboardingState",
  "appendProcessedSessions",
  "writeDiary",
  "initialize",
] as const;

/** The store with every write refused by `error` (reads, diagnostics and fixes pass through). */
export function refuseWrites(store: Store, error: AppError): Store {
  const guarded: Record<string, unknown> = {};
  for (const name of WRITES) {
    if (typeof (store as unknown as Record<string, unknown>)[name] === "function") guarded[name] = () => Promise.reject(error);
  }
  const costs = { totals: () => store.costs.totals(), record: () => Promise.reject(error) };
  return new Proxy(store, {
    get(target, key, receiver) {
      if (typeof key === "string" && key in guarded) return guarded[key];
      if (key === "costs") return costs;
      return Reflect.get(target, key, receiver);
    },
  });
}
