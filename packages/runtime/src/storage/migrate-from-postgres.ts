import { createHash } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  AppError,
  isPlainObject,
  migrateSections,
  redactingTransfer,
  summarizeSection,
  verifySections,
  type Layer,
  type SectionSummary,
} from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/store-yaml";
import type { Runtime } from "../runtime.js";
import { openStore, type PostgresStoreHandle } from "./backend.js";
import { layerFiles } from "./layout.js";
import type { MigrateStorageOptions, MigrateStorageResult } from "./migrate.js";
import {
  MIGRATION_LOCK,
  PROGRESS_FILE,
  PROGRESS_VERSION,
  finishInstall,
  installStaged,
  keyLayer,
  layerDirOf,
  requireTransfer,
  sameLayers,
  stagingDir,
  stagingDirs,
  timestamp,
  verificationError,
} from "./migrate-common.js";

/**
 * `cm storage migrate --to yaml|sqlite` while the memory lives in PostgreSQL: copies this machine's
 * layers out of the team database into the usual file staging directories (`<globalDir>/.migrate-<to>/`,
 * `<repo>/.cass/.migrate-<to>/`), section by section with progress saved in the global staging
 * directory's progress.json, verifies every section against the database, and only then installs the
 * files (earlier files of the target backend go to `backups/storage-<timestamp>/`) and writes
 * `storage.backend`. The database is only read: it keeps its rows for the other machines, and
 * whoever owns it drops them when they like.
 *
 * The source fingerprint is each migrated space's change counter (bumped by every write, from any
 * machine): a run resumed after someone wrote to the database starts over instead of mixing old
 * and new sections, and a write during the run stops it before anything is switched.
 */

type FileBackend = "yaml" | "sqlite";

interface Progress {
  version: number;
  from: "postgres";
  to: FileBackend;
  layers: Layer[];
  repoDir: string | null;
  fingerprint: string;
  startedAt: string;
  updatedAt: string;
  completed: string[];
}

async function readProgressFile(path: string): Promise<Progress | null> {
  try {
    const value = JSON.parse(await readFile(path, "utf8")) as unknown;
    if (!isPlainObject(value) || value.version !== PROGRESS_VERSION || !Array.isArray(value.completed) || typeof value.fingerprint !== "string") return null;
    return value as unknown as Progress;
  } catch {
    return null;
  }
}

/** The change counters of the migrated spaces, hashed with where they live (the URL never lands in the progress file). */
async function databasePrint(store: PostgresStoreHandle, layers: readonly Layer[]): Promise<{ print: string; counters: Partial<Record<Layer, number>> }> {
  const hash = createHash("sha256");
  hash.update(`postgres\n${store.database.url}\n${store.database.schema}\n`);
  const counters: Partial<Record<Layer, number>> = {};
  for (const layer of layers) {
    const changes = await store.changeCounter(layer);
    counters[layer] = changes;
    hash.update(`${layer}\t${layer === "global" ? store.database.spaces.global : store.database.spaces.repo}\t${changes}\n`);
  }
  return { print: hash.digest("hex"), counters };
}

export async function migrateFromPostgres(rt: Runtime, options: MigrateStorageOptions & { to: FileBackend }): Promise<MigrateStorageResult> {
  const { to } = options;
  const from = "postgres" as const;
  const dryRun = Boolean(options.dryRun);
  const now = options.now ?? (() => rt.deps.clock.now());
  const cli = rt.deps.cliName;
  const live = rt.storage.dirs;
  const configPath = rt.paths.configPath;
  const warnings: string[] = [];
  const openOptions = {
    logger: rt.deps.logger,
    parseCache: false as const,
    cliName: cli,
    ...(rt.storage.loadSqlite ? { loadSqlite: rt.storage.loadSqlite } : {}),
    ...(rt.storage.loadPostgres ? { loadPostgres: rt.storage.loadPostgres } : {}),
  };

  const sourceOpened = await openStore("postgres", live, openOptions);
  const db = sourceOpened.store as PostgresStoreHandle;
  try {
    const spaces = db.database.spaces;
    // The first query: an unreachable database stops here (NETWORK_ERROR, exit 5), before any file is written.
    const layers: Layer[] = ["global"];
    if (live.repoDir !== null && spaces.repo !== null && (await db.spaceHoldsData(spaces.repo))) layers.push("repo");
    const inScope = (key: string): boolean => layers.includes(keyLayer(key));
    const databaseNote = `The database ${db.database.url} was left as it was (other machines keep using it; drop its rows when nobody needs them).`;
    const base = {
      from,
      to,
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
    const progressPath = join(stagingDir(live.globalDir, to), PROGRESS_FILE);

    if (dryRun) {
      const source = requireTransfer(db.transfer, "postgres");
      const keys = (await source.listSections()).filter(inScope);
      const summaries: SectionSummary[] = [];
      for (const key of keys) summaries.push(summarizeSection(await source.readSection(key)));
      const { print } = await databasePrint(db, layers);
      const previous = await readProgressFile(progressPath);
      const resumable = previous !== null && previous.from === from && previous.to === to && previous.repoDir === live.repoDir && sameLayers(previous.layers, layers) && previous.fingerprint === print;
      const completed = new Set(resumable ? previous.completed : []);
      const copied = summaries.filter((s) => !completed.has(s.key));
      const backups: MigrateStorageResult["backups"] = [];
      for (const layer of layers) {
        const names = (await layerFiles(to, live, layer)).map((f) => f.name);
        if (names.length > 0) backups.push({ layer, dir: join(layerDirOf(live, layer), "backups", "storage-<timestamp>"), files: names });
      }
      return {
        ...base,
        status: "planned",
        resumed: resumable,
        message: `Would copy ${copied.length} section(s) of the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${db.database.url} to ${to}${resumable ? ` (resuming: ${summaries.length - copied.length} already copied)` : ""}, verify them and switch storage.backend to ${to}. The database would not be changed. Nothing was changed.`,
        sections: {
          total: summaries.length,
          copied: copied.length,
          alreadyCompleted: summaries.length - copied.length,
          records: copied.reduce((n, s) => n + s.records, 0),
          skippedLines: summaries.reduce((n, s) => n + s.skipped, 0),
        },
        plan: summaries,
        backups,
      };
    }

    return await db.exclusive(MIGRATION_LOCK, run, { waitMs: 0 });

    async function run(): Promise<MigrateStorageResult> {
      const source = redactingTransfer(requireTransfer(db.transfer, "postgres"), rt.deps.config);
      const stage = stagingDirs(live, to);
      const start = await databasePrint(db, layers);

      // Resume or start afresh.
      const previous = await readProgressFile(progressPath);
      let restarted: string | undefined;
      let progress: Progress;
      if (previous !== null && previous.from === from && previous.to === to && previous.repoDir === live.repoDir && sameLayers(previous.layers, layers) && previous.fingerprint === start.print) {
        progress = { ...previous, updatedAt: now().toISOString() };
      } else {
        if (previous !== null) {
          restarted = previous.from === from && previous.fingerprint !== start.print ? "the database changed since the interrupted run (another process wrote to it)" : "an interrupted run of a different migration was discarded";
        }
        for (const dir of [stagingDir(live.globalDir, to), ...(live.repoDir !== null ? [stagingDir(live.repoDir, to)] : [])]) {
          await rm(dir, { recursive: true, force: true });
        }
        const at = now().toISOString();
        progress = { version: PROGRESS_VERSION, from, to, layers, repoDir: live.repoDir, fingerprint: start.print, startedAt: at, updatedAt: at, completed: [] };
      }
      const saveProgress = async (): Promise<void> => {
        progress.updatedAt = now().toISOString();
        await atomicWriteFile(progressPath, `${JSON.stringify(progress, null, 2)}\n`);
      };
      await saveProgress();
      const resumed = restarted === undefined && previous !== null && progress.completed.length > 0;

      const target = await openStore(to, stage, openOptions);
      let copiedResult;
      let verification;
      try {
        const transfer = requireTransfer(target.store.transfer, to);
        const keys = (await source.listSections()).filter(inScope);
        copiedResult = await migrateSections(source, transfer, {
          completed: new Set(progress.completed),
          keys,
          onSection: async (p) => {
            progress.completed.push(p.key);
            await saveProgress();
            await options.onProgress?.({ phase: "copy", key: p.key, index: p.index, total: p.total, records: p.records });
          },
        });
        verification = await verifySections(source, transfer, {
          include: inScope,
          onSection: (p) => options.onProgress?.({ phase: "verify", ...p }),
        });
        // Another machine's write since the start: stop before switching (the next run starts over).
        if ((await databasePrint(db, layers)).print !== progress.fingerprint) {
          throw new AppError("LOCK_ACQUISITION_FAILED", `Another process wrote to the database ${db.database.url} during the migration; nothing was switched.`, {
            hint: `Run '${cli} storage migrate --to ${to}' again: it starts over from the current data. Pause other ${cli} processes using the database (agents, '${cli} serve', other machines) for a consistent copy.`,
            details: { from, to, database: db.database.url },
            retryable: true,
          });
        }
        if (verification.differences.length > 0) {
          // Copy the differing sections once more (e.g. staged files removed since an interrupted run); a difference that persists fails the run.
          const bad = new Set(verification.differences.map((d) => d.key));
          await migrateSections(source, transfer, { completed: new Set(), keys: [...bad] });
          const again = await verifySections(source, transfer, { include: (key) => bad.has(key) });
          if (again.differences.length > 0) {
            const still = new Set(again.differences.map((d) => d.key));
            progress.completed = progress.completed.filter((key) => !still.has(key));
            await saveProgress();
            throw verificationError(again.differences, from, to, cli);
          }
        }
      } finally {
        // Closed before its files move (SQLite: checkpoints the WAL into the database file).
        target.close();
      }
      // Commit: move this machine's earlier files of the target backend aside, install the staged ones, switch the config.
      const { stamp, backups, installed, configUpdated } = await installStaged({
        from,
        to,
        live,
        stage,
        layers,
        now: now(),
        cli,
        onProgress: options.onProgress,
        mutateConfigFile: (fn) => db.mutateConfigFile(fn),
      });

      // Switched. The record has no file fingerprints of the source (it is the database, see sourceChangeCounters).
      const record = {
        from,
        to,
        layers,
        repoDir: live.repoDir,
        at: now().toISOString(),
        sourceFingerprints: {},
        database: db.database.url,
        sourceChangeCounters: start.counters,
        backups,
      };
      await finishInstall({ live, stage, layers, to, stamp, record, envBackend: rt.storage.envBackend, warnings });
      const skippedLines = Object.values(verification.skipped).reduce((n, v) => n + v, 0);
      if (skippedLines > 0) warnings.push(`${skippedLines} unreadable record(s) of the database were not copied (they stay in the database).`);
      const redacted = source.tally();
      if (redacted.total > 0) {
        warnings.push(`${redacted.total} secret(s) found in the database were redacted in the ${to} copy (${Object.entries(redacted.byKind).map(([k, n]) => `${k}: ${n}`).join(", ")}); the database still holds them.`);
      }
      const copied = copiedResult.copied;
      return {
        ...base,
        status: "migrated",
        resumed,
        ...(restarted !== undefined ? { restarted } : {}),
        message: `Migrated the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${db.database.url} to ${to}: ${verification.keys.length} section(s) verified; storage.backend is now ${to}. ${databaseNote}`,
        sections: {
          total: copiedResult.keys.length,
          copied: copied.length,
          alreadyCompleted: copiedResult.alreadyCompleted.length,
          records: copied.reduce((n, s) => n + s.records, 0),
          skippedLines,
        },
        verified: { sections: verification.keys.length },
        ...(redacted.total > 0 ? { secretsRedacted: redacted } : {}),
        backups,
        installed,
        config: { path: configPath, updated: configUpdated },
      };
    }
  } finally {
    sourceOpened.close();
  }
}

