import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { AppError, isPlainObject, migrateSections, redactingTransfer, verifySections, type Layer } from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/store-yaml";
import type { Runtime } from "../runtime.js";
import { defaultLoadPostgres, openStore, type PostgresStoreHandle } from "./backend.js";
import { fingerprint, layerHasData } from "./layout.js";
import { redactDatabaseUrl } from "./postgres.js";
import type { MigrateStorageOptions, MigrateStorageResult } from "./migrate.js";
import { MIGRATION_LOCK, PROGRESS_FILE, PROGRESS_VERSION, keyLayer, requireTransfer } from "./migrate-common.js";

/**
 * `cm storage migrate --to postgres`: copies this machine's memory (yaml or sqlite) into the
 * database under staging space keys (`migrate:<space>`), section by section with progress saved in
 * `<globalDir>/.migrate-postgres/progress.json` (an interrupted run resumes after the last copied
 * section while the source is unchanged), verifies every section against the source, then renames
 * the staging spaces to the live ones in one transaction and writes `storage.backend: "postgres"`.
 * A live space that already holds data (another machine migrated first) is never overwritten.
 * The source files are only read.
 */

interface Progress {
  version: number;
  from: string;
  layers: Layer[];
  spaces: string[];
  fingerprint: string;
  completed: string[];
}

function stagingSpace(space: string): string {
  return `migrate:${space}`;
}

export async function migrateToPostgres(rt: Runtime, options: MigrateStorageOptions): Promise<MigrateStorageResult> {
  const dirs = rt.storage.dirs;
  const from = rt.storage.backend;
  const configPath = rt.paths.configPath;
  const cli = rt.deps.cliName;
  const dryRun = Boolean(options.dryRun);
  const warnings: string[] = [];
  const layers: Layer[] = ["global"];
  if (dirs.repoDir !== null && (await layerHasData(from, dirs, "repo"))) layers.push("repo");
  const base = {
    from,
    to: "postgres" as const,
    backendBefore: from,
    dryRun,
    layers,
    resumed: false,
    sections: { total: 0, copied: 0, alreadyCompleted: 0, records: 0, skippedLines: 0 },
    backups: [] as MigrateStorageResult["backups"],
    installed: [] as MigrateStorageResult["installed"],
    config: { path: configPath, updated: false },
    warnings,
  };
  if (from === "postgres") return { ...base, layers: [], status: "unchanged", message: "Already using postgres; nothing to migrate." };

  const openOptions = { logger: rt.deps.logger, parseCache: false as const, cliName: cli };
  const live = await openStore("postgres", dirs, openOptions);
  const liveStore = live.store as PostgresStoreHandle;
  const spaces = liveStore.database.spaces;
  const layerSpaces = layers.map((layer) => (layer === "global" ? spaces.global : (spaces.repo as string)));
  try {
    // Unreachable database, or a layer another machine already moved in: stop before copying anything.
    for (const space of layerSpaces) {
      if (await liveStore.spaceHoldsData(space)) {
        throw new AppError("CONFIG_INVALID", `The database ${liveStore.database.url} already holds the ${space} layer; nothing was copied.`, {
          hint: `Another machine moved its memory in first. Use it as it is (set storage.backend "postgres" in ${configPath}), and bring your own rules over with '${cli} playbook export' then '${cli} playbook import'.`,
          details: { database: liveStore.database.url, space },
        });
      }
    }
    const source = redactingTransfer(requireTransfer(rt.deps.store.transfer, from), rt.deps.config);
    const inScope = (key: string): boolean => layers.includes(keyLayer(key));
    const keys = (await source.listSections()).filter(inScope);
    if (dryRun) {
      return {
        ...base,
        status: "planned",
        message: `Would copy ${keys.length} section(s) of the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${from} into ${liveStore.database.url}, verify them and switch storage.backend to postgres. Nothing was changed.`,
        sections: { ...base.sections, total: keys.length, copied: keys.length },
      };
    }
    return await rt.deps.store.exclusive(MIGRATION_LOCK, async () => {
      const progressDir = join(dirs.globalDir, ".migrate-postgres");
      const progressFile = join(progressDir, PROGRESS_FILE);
      const print = await fingerprint(from, dirs, layers);
      const previous = await readProgress(progressFile);
      const resumable = previous !== null && previous.from === from && previous.fingerprint === print && previous.spaces.join("\n") === layerSpaces.join("\n");
      const progress: Progress = resumable ? previous : { version: PROGRESS_VERSION, from, layers, spaces: layerSpaces, fingerprint: print, completed: [] };
      const stagingGlobal = stagingSpace(spaces.global);
      const stagingRepo = spaces.repo === null ? null : stagingSpace(spaces.repo);
      const stagingOpened = await openStagingStore(rt, stagingGlobal, stagingRepo, openOptions);
      const stage = stagingOpened.store as PostgresStoreHandle;
      try {
        if (!resumable) {
          await stage.dropSpace(stagingGlobal);
          if (stagingRepo !== null) await stage.dropSpace(stagingRepo);
        }
        await atomicWriteFile(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
        const transfer = requireTransfer(stage.transfer, "postgres");
        const copied = await migrateSections(source, transfer, {
          completed: new Set(progress.completed),
          keys,
          onSection: async (p) => {
            progress.completed.push(p.key);
            await atomicWriteFile(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
            await options.onProgress?.({ phase: "copy", key: p.key, index: p.index, total: p.total, records: p.records });
          },
        });
        const verification = await verifySections(source, transfer, { include: inScope, onSection: (p) => options.onProgress?.({ phase: "verify", ...p }) });
        if (verification.differences.length > 0) {
          const first = verification.differences[0];
          progress.completed = progress.completed.filter((key) => !verification.differences.some((d) => d.key === key));
          await atomicWriteFile(progressFile, `${JSON.stringify(progress, null, 2)}\n`);
          throw new AppError("INTERNAL_ERROR", `Verification failed: ${verification.differences.length} section(s) differ between ${from} and the staged database copy (first: ${first?.key} at ${first?.path}). Nothing was switched.`, {
            hint: `Run '${cli} storage migrate --to postgres' again to copy the differing sections once more.`,
            details: { differences: verification.differences },
          });
        }
        if ((await fingerprint(from, dirs, layers)) !== print) {
          throw new AppError("LOCK_ACQUISITION_FAILED", `Another process wrote to the ${from} store during the migration; nothing was switched.`, {
            hint: `Stop other ${cli} processes and run '${cli} storage migrate --to postgres' again.`,
            retryable: true,
          });
        }
        await options.onProgress?.({ phase: "commit", message: "Switching the staged layers live" });
        await liveStore.renameSpaces(layers.map((layer) => (layer === "global" ? { from: stagingGlobal, to: spaces.global } : { from: stagingRepo as string, to: spaces.repo as string })));
        let configUpdated = false;
        await rt.deps.store.mutateConfigFile((config) => {
          const storage = isPlainObject(config.storage) ? config.storage : {};
          if (storage.backend !== "postgres") configUpdated = true;
          config.storage = { ...storage, backend: "postgres" };
        });
        await rm(progressDir, { recursive: true, force: true }).catch(() => undefined);
        const skippedLines = Object.values(verification.skipped).reduce((n, v) => n + v, 0);
        if (skippedLines > 0) warnings.push(`${skippedLines} unreadable line(s) of the ${from} data were not copied (they stay in the ${from} files).`);
        if (rt.storage.envBackend !== null) warnings.push(`CASS_MEMORY_STORAGE=${rt.storage.envBackend} is set: it overrides storage.backend. Unset it to use postgres.`);
        return {
          ...base,
          status: "migrated" as const,
          resumed: resumable && copied.alreadyCompleted.length > 0,
          message: `Migrated the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${from} to ${redactDatabaseUrl(dirs.postgres?.url ?? "")}: ${verification.keys.length} section(s) verified; storage.backend is now postgres. The ${from} data was left as it was.`,
          sections: {
            total: copied.keys.length,
            copied: copied.copied.length,
            alreadyCompleted: copied.alreadyCompleted.length,
            records: copied.copied.reduce((n, s) => n + s.records, 0),
            skippedLines,
          },
          verified: { sections: verification.keys.length },
          installed: layers.map((layer, i) => ({ layer, files: [`${liveStore.database.url}#${layerSpaces[i]}`] })),
          config: { path: configPath, updated: configUpdated },
          ...(source.tally().total > 0 ? { secretsRedacted: source.tally() } : {}),
        };
      } finally {
        stagingOpened.close();
      }
    }, { waitMs: 0 });
  } finally {
    live.close();
  }
}

async function openStagingStore(rt: Runtime, globalSpace: string, repoSpace: string | null, openOptions: Parameters<typeof openStore>[2]) {
  const dirs = rt.storage.dirs;
  const loaded = await (openOptions.loadPostgres ?? defaultLoadPostgres)();
  const settings = dirs.postgres as NonNullable<typeof dirs.postgres>;
  const store = loaded.createPostgresStore({
    url: settings.url as string,
    globalDir: dirs.globalDir,
    repoDir: repoSpace === null ? null : dirs.repoDir,
    globalSpace,
    ...(repoSpace !== null ? { repoSpace } : {}),
    ...(settings.schema !== undefined ? { schema: settings.schema } : {}),
    logger: openOptions.logger,
  });
  return { store, close: () => void store.close().catch(() => undefined) };
}

async function readProgress(path: string): Promise<Progress | null> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as unknown;
    if (!isPlainObject(value) || value.version !== PROGRESS_VERSION || !Array.isArray(value.completed) || !Array.isArray(value.spaces)) return null;
    return value as unknown as Progress;
  } catch {
    return null;
  }
}
