import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  AppError,
  isPlainObject,
  migrateSections,
  redactingTransfer,
  summarizeSection,
  tallyTotal,
  verifySections,
  type Layer,
  type SecretTally,
  type SectionDifference,
  type SectionSummary,
  type StoreTransfer,
  type StorageBackend,
  type MigrateSectionsResult,
  type VerifySectionsResult,
} from "@cass-memory/core";
import { atomicWriteFile } from "@cass-memory/store-yaml";
import type { Runtime } from "../runtime.js";
import { openStore, type OpenedStore, type StoreDirs } from "./backend.js";
import { fingerprint, layerFiles, layerHasData } from "./layout.js";
import { copyStreamedPlaybook, countStreamedPlaybook, playbookKeyLayer, playbookStreaming, verifyStreamedPlaybook, type PlaybookStreaming } from "./migrate-playbook-stream.js";
import { migrateToPostgres } from "./migrate-postgres.js";
import { migrateFromPostgres } from "./migrate-from-postgres.js";
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
 * `cm storage migrate --to <backend>`: copies the memory from one backend to the other, section by
 * section, into a staging store (`<globalDir>/.migrate-<to>/`, `<repo>/.cass/.migrate-<to>/`),
 * verifies every section against the source, then commits: the target backend's existing files
 * are moved to `<dir>/backups/storage-<timestamp>/`, the staged ones renamed into place, and
 * `storage.backend` is written to config.json. The source is only ever read. Progress is saved in
 * the staging directory after each section, so an interrupted run continues where it stopped.
 */

export { MIGRATION_LOCK, stagingDir, stagingDirs } from "./migrate-common.js";

export function otherBackend(backend: StorageBackend): StorageBackend {
  return backend === "yaml" ? "sqlite" : "yaml";
}

/** What `progress.json` in the global staging directory holds. */
export interface MigrationProgress {
  version: number;
  from: StorageBackend;
  to: StorageBackend;
  layers: Layer[];
  repoDir: string | null;
  /** Fingerprint of the source's files when the run started; a different one restarts the copy. */
  fingerprint: string;
  startedAt: string;
  updatedAt: string;
  /** Keys of the sections already copied into the staging store. */
  completed: string[];
}

export async function readProgress(globalDir: string, to: StorageBackend): Promise<MigrationProgress | null> {
  try {
    const value = JSON.parse(await readFile(join(stagingDir(globalDir, to), PROGRESS_FILE), "utf8")) as unknown;
    if (!isPlainObject(value) || value.version !== PROGRESS_VERSION || !Array.isArray(value.completed)) return null;
    return value as unknown as MigrationProgress;
  } catch {
    return null;
  }
}

/** The record a committed migration leaves in `<globalDir>/backups/storage-<timestamp>/migration.json`. */
export interface MigrationRecord {
  from: StorageBackend;
  to: StorageBackend;
  layers: Layer[];
  repoDir: string | null;
  at: string;
  /** Fingerprint of each migrated layer's source data when it was switched away from (status compares them to tell later writes). */
  sourceFingerprints: Partial<Record<Layer, string>>;
  backups: Array<{ layer: Layer; dir: string; files: string[] }>;
}

export type MigrateProgressEvent =
  | { phase: "copy"; key: string; index: number; total: number; records: number }
  | { phase: "verify"; key: string; index: number; total: number; equal: boolean }
  | { phase: "commit"; message: string };

export interface MigrateStorageOptions {
  to: StorageBackend;
  dryRun?: boolean;
  onProgress?: (event: MigrateProgressEvent) => void | Promise<void>;
  /** Clock for timestamps (default: the runtime's). */
  now?: () => Date;
}

export interface MigrateStorageResult {
  /** `migrated`: copied, verified and switched; `unchanged`: nothing to do; `planned`: a dry run. */
  status: "migrated" | "unchanged" | "planned";
  /** The backend the data is copied from (`unchanged`: the backend in use). */
  from: StorageBackend;
  to: StorageBackend;
  /** The backend the runtime used when the command started. */
  backendBefore: StorageBackend;
  dryRun: boolean;
  message: string;
  /** The layers whose data moves (global: the global directory's records too). */
  layers: Layer[];
  /** True when an interrupted run's progress was used. */
  resumed: boolean;
  /** Why an earlier run's progress was discarded (the source changed, another migration, …). */
  restarted?: string;
  sections: {
    total: number;
    /** Copied by this run (dry run: would be copied). */
    copied: number;
    /** Copied by an earlier, interrupted run. */
    alreadyCompleted: number;
    /** Records in the copied sections (bullets, events, log lines, entries, …). */
    records: number;
    /** Lines of the source that could not be parsed: they stay in the source and are not copied. */
    skippedLines: number;
  };
  /** Dry run: what each section holds. */
  plan?: SectionSummary[];
  /** Every section compared after the copy (never present with differences: those fail the run). */
  verified?: { sections: number };
  /** Playbook sections this run copied or verified bullet by bullet (issue 18); absent when none. */
  streamed?: string[];
  /** The target backend's earlier files, moved aside (dry run: that would be moved). */
  backups: Array<{ layer: Layer; dir: string; files: string[] }>;
  /** Where the target's data now lives, per layer. */
  installed: Array<{ layer: Layer; files: string[] }>;
  config: { path: string; updated: boolean };
  warnings: string[];
  /** Secrets found in the source and redacted in the target (counts by kind, never values). */
  secretsRedacted?: { total: number; byKind: Partial<Record<string, number>> };
}

/** Which layers a migration to `to` moves, and from which backend. */
async function planScope(rt: Runtime, to: StorageBackend): Promise<{ from: StorageBackend; layers: Layer[] }> {
  const dirs = rt.storage.dirs;
  const from = otherBackend(to);
  const candidates: Layer[] = dirs.repoDir !== null ? ["global", "repo"] : ["global"];
  if (rt.storage.backend !== to) {
    // Switching: the global layer always (the switch is what matters), the repository's layer when
    // either backend has data for it (so a repository without .cass/ gets none).
    const layers: Layer[] = ["global"];
    if (candidates.includes("repo") && ((await layerHasData(from, dirs, "repo")) || (await layerHasData(to, dirs, "repo")))) layers.push("repo");
    return { from, layers };
  }
  // Already on `to`: move only layers that have no data there yet but some in the other backend
  // (storage.backend was changed first, or a repository still holds the other backend's files).
  const layers: Layer[] = [];
  for (const layer of candidates) {
    if (!(await layerHasData(to, dirs, layer)) && (await layerHasData(from, dirs, layer))) layers.push(layer);
  }
  return { from, layers };
}

async function existingNames(backend: StorageBackend, dirs: StoreDirs, layer: Layer): Promise<string[]> {
  return (await layerFiles(backend, dirs, layer)).map((f) => f.name);
}

/**
 * Runs (or plans, with `dryRun`) a migration of the runtime's store to `to`. See the module comment;
 * errors are AppErrors: LOCK_ACQUISITION_FAILED when another migration runs or the source changed
 * meanwhile (retryable), INTERNAL_ERROR when verification finds differences, filesystem codes when
 * staging or committing fails. Before the config switch, a failure leaves config.json and the
 * source as they were (moves already made are undone) and keeps the staging for a rerun.
 */
export async function migrateStorage(rt: Runtime, options: MigrateStorageOptions): Promise<MigrateStorageResult> {
  if (options.to === "postgres") return migrateToPostgres(rt, options);
  if (rt.storage.backend === "postgres") return migrateFromPostgres(rt, { ...options, to: options.to });
  const { to } = options;
  const dryRun = Boolean(options.dryRun);
  const now = options.now ?? (() => rt.deps.clock.now());
  const cli = rt.deps.cliName;
  const live = rt.storage.dirs;
  const configPath = rt.paths.configPath;
  const { from, layers } = await planScope(rt, to);
  const inScope = (key: string): boolean => layers.includes(keyLayer(key));
  const warnings: string[] = [];
  const envBackend = rt.storage.envBackend;

  const base = {
    from,
    to,
    backendBefore: rt.storage.backend,
    dryRun,
    layers,
    resumed: false,
    sections: { total: 0, copied: 0, alreadyCompleted: 0, records: 0, skippedLines: 0 },
    backups: [] as MigrateStorageResult["backups"],
    installed: [] as MigrateStorageResult["installed"],
    config: { path: configPath, updated: false },
    warnings,
  };

  if (layers.length === 0) {
    const stale = (await layerHasData(from, live, "global")) || (live.repoDir !== null && (await layerHasData(from, live, "repo")));
    return {
      ...base,
      from: rt.storage.backend,
      status: "unchanged",
      message: `Already using ${to}; nothing to migrate.${stale ? ` The ${from} files left from before are not used ('${cli} storage status' lists them).` : ""}`,
    };
  }

  // The source: the runtime's own store when it is the source's backend, else one over the live directories.
  let sourceOpened: OpenedStore | null = null;
  const openOptions = { logger: rt.deps.logger, parseCache: false as const, ...(rt.storage.loadSqlite ? { loadSqlite: rt.storage.loadSqlite } : {}), ...(rt.storage.loadPostgres ? { loadPostgres: rt.storage.loadPostgres } : {}) };
  const sourceStore = rt.storage.backend === from ? rt.deps.store : (sourceOpened = await openStore(from, live, openOptions)).store;
  try {
    const source = requireTransfer(sourceStore.transfer, from);
    if (dryRun) return await plan();
    return await rt.deps.store.exclusive(MIGRATION_LOCK, run, { waitMs: 0 });
  } finally {
    sourceOpened?.close();
  }

  async function plan(): Promise<MigrateStorageResult> {
    const source = requireTransfer(sourceStore.transfer, from);
    const keys = (await source.listSections()).filter(inScope);
    const summaries: SectionSummary[] = [];
    // A large playbook is counted bullet by bullet rather than loaded (issue 18).
    const streaming = playbookStreaming(source, STREAM_TARGET_PROBE, rt.deps.config);
    for (const key of keys) summaries.push(countStreamedPlaybook(streaming, key) ?? summarizeSection(await source.readSection(key)));
    const progress = await readProgress(live.globalDir, to);
    const resumable = progress !== null && progress.from === from && progress.repoDir === live.repoDir && sameLayers(progress.layers, layers) && progress.fingerprint === (await fingerprint(from, live, layers));
    const completed = new Set(resumable ? progress.completed : []);
    const backups: MigrateStorageResult["backups"] = [];
    for (const layer of layers) {
      const names = await existingNames(to, live, layer);
      if (names.length > 0) backups.push({ layer, dir: join(layerDirOf(live, layer), "backups", "storage-<timestamp>"), files: names });
    }
    const copied = summaries.filter((s) => !completed.has(s.key));
    return {
      ...base,
      status: "planned",
      resumed: resumable,
      message: `Would copy ${copied.length} section(s) of the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${from} to ${to}${resumable ? ` (resuming: ${summaries.length - copied.length} already copied)` : ""}, verify them and switch storage.backend to ${to}. Nothing was changed.`,
      sections: {
        total: summaries.length,
        copied: copied.length,
        alreadyCompleted: summaries.length - copied.length,
        records: copied.reduce((n, s) => n + s.records, 0),
        skippedLines: summaries.reduce((n, s) => n + s.skipped, 0),
      },
      plan: summaries,
      backups,
      config: { path: configPath, updated: false },
    };
  }

  async function run(): Promise<MigrateStorageResult> {
    const source = redactingTransfer(requireTransfer(sourceStore.transfer, from), rt.deps.config);
    // Secrets in the source are redacted on the way to the target and counted (issue 21).
    const stage = stagingDirs(live, to);
    const startPrint = await fingerprint(from, live, layers);

    // Resume or start afresh.
    const previous = await readProgress(live.globalDir, to);
    let restarted: string | undefined;
    let progress: MigrationProgress;
    if (previous !== null && previous.from === from && previous.repoDir === live.repoDir && sameLayers(previous.layers, layers) && previous.fingerprint === startPrint) {
      progress = { ...previous, updatedAt: now().toISOString() };
    } else {
      if (previous !== null) {
        restarted = previous.fingerprint !== startPrint && previous.from === from ? `the ${from} data changed since the interrupted run` : "an interrupted run of a different migration was discarded";
      }
      for (const dir of [stagingDir(live.globalDir, to), ...(live.repoDir !== null ? [stagingDir(live.repoDir, to)] : [])]) {
        await rm(dir, { recursive: true, force: true });
      }
      const at = now().toISOString();
      progress = { version: PROGRESS_VERSION, from, to, layers, repoDir: live.repoDir, fingerprint: startPrint, startedAt: at, updatedAt: at, completed: [] };
    }
    const saveProgress = async (): Promise<void> => {
      progress.updatedAt = now().toISOString();
      await atomicWriteFile(join(stagingDir(live.globalDir, to), PROGRESS_FILE), `${JSON.stringify(progress, null, 2)}\n`);
    };
    await saveProgress();
    const resumed = previous !== null && restarted === undefined && progress.completed.length > 0;

    const target = await openStore(to, stage, openOptions);
    let copiedResult;
    let verification;
    let streaming: PlaybookStreaming | null = null;
    try {
      const transfer = requireTransfer(target.store.transfer, to);
      const completed = new Set(progress.completed);
      const keys = (await source.listSections()).filter(inScope);
      // Playbooks are copied and verified bullet by bullet where both stores can (issue 18).
      streaming = playbookStreaming(requireTransfer(sourceStore.transfer, from), transfer, rt.deps.config);
      copiedResult = await copySections(source, transfer, streaming, {
        completed,
        keys,
        onSection: async (p) => {
          progress.completed.push(p.key);
          await saveProgress();
          await options.onProgress?.({ phase: "copy", key: p.key, index: p.index, total: p.total, records: p.records });
        },
      });
      verification = await checkSections(source, transfer, streaming, {
        include: inScope,
        onSection: (p) => options.onProgress?.({ phase: "verify", ...p }),
      });
      // A writer of the source since the start shows up here (and, usually, as differences).
      if ((await fingerprint(from, live, layers)) !== progress.fingerprint) {
        throw new AppError("LOCK_ACQUISITION_FAILED", `Another process wrote to the ${from} store during the migration; nothing was switched.`, {
          hint: `Stop other ${cli} processes (agents, '${cli} serve') and run '${cli} storage migrate --to ${to}' again: it starts over from the current data.`,
          details: { from, to },
          retryable: true,
        });
      }
      if (verification.differences.length > 0) {
        // Copy the differing sections once more (e.g. staged files removed since an interrupted
        // run) and compare them again; a difference that persists fails the run.
        const bad = new Set(verification.differences.map((d) => d.key));
        await copySections(source, transfer, streaming, { completed: new Set(), keys: [...bad] });
        const again = await checkSections(source, transfer, streaming, { include: (key) => bad.has(key) });
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
    // Commit: move the target backend's live files aside, install the staged ones, switch the config.
    const sourcePrints: Partial<Record<Layer, string>> = {};
    for (const layer of layers) sourcePrints[layer] = await fingerprint(from, live, [layer]);
    const { stamp, backups, installed, configUpdated } = await installStaged({
      from,
      to: to as Exclude<StorageBackend, "postgres">,
      live,
      stage,
      layers,
      now: now(),
      cli,
      onProgress: options.onProgress,
      mutateConfigFile: (fn) => rt.deps.store.mutateConfigFile(fn),
    });

    // Switched. Leave a record for `storage status`, then remove the staging directories.
    const record: MigrationRecord = { from, to, layers, repoDir: live.repoDir, at: now().toISOString(), sourceFingerprints: sourcePrints, backups };
    await finishInstall({ live, stage, layers, to, stamp, record, envBackend, warnings });
    const skippedLines = Object.values(verification.skipped).reduce((n, v) => n + v, 0);
    if (skippedLines > 0) {
      warnings.push(`${skippedLines} unreadable line(s) of the ${from} data were not copied (they stay in the ${from} files).`);
    }
    const copied = copiedResult.copied;
    const redacted = mergedTally(source.tally().byKind, streaming);
    if (redacted.total > 0) {
      warnings.push(`${redacted.total} secret(s) found in the ${from} data were redacted in the ${to} copy (${Object.entries(redacted.byKind).map(([k, n]) => `${k}: ${n}`).join(", ")}); the ${from} files still hold them: run '${cli} doctor --fix' on them or delete them.`);
    }
    return {
      ...base,
      status: "migrated",
      resumed,
      ...(restarted !== undefined ? { restarted } : {}),
      message: `Migrated the ${layers.join(" and ")} layer${layers.length === 1 ? "" : "s"} from ${from} to ${to}: ${verification.keys.length} section(s) verified; storage.backend is now ${to}. The ${from} data was left as it was.`,
      sections: {
        total: copiedResult.keys.length,
        copied: copied.length,
        alreadyCompleted: copiedResult.alreadyCompleted.length,
        records: copied.reduce((n, s) => n + s.records, 0),
        skippedLines,
      },
      verified: { sections: verification.keys.length },
      ...(streaming !== null && streaming.streamed.size > 0 ? { streamed: [...streaming.streamed] } : {}),
      ...(redacted.total > 0 ? { secretsRedacted: redacted } : {}),
      backups,
      installed,
      config: { path: configPath, updated: configUpdated },
    };
  }
}

/** Stands for a target that can take streamed playbooks when only counting (dry run). */
const STREAM_TARGET_PROBE = {
  listSections: async () => [],
  readSection: async () => {
    throw new Error("not readable");
  },
  writeSection: async () => undefined,
  writePlaybookStream: async () => 0,
  readPlaybookHead: async () => null,
  readPlaybookBullets: async function* () {},
} as unknown as StoreTransfer;

/**
 * As core's migrateSections, with playbook sections copied bullet by bullet when `streaming`
 * allows (a section the stream reader cannot read goes the whole-section way).
 */
async function copySections(
  source: StoreTransfer,
  target: StoreTransfer,
  streaming: PlaybookStreaming | null,
  options: Parameters<typeof migrateSections>[2],
): Promise<MigrateSectionsResult> {
  const keys = [...new Set(options.keys ?? (await source.listSections()))];
  const copied: SectionSummary[] = [];
  const alreadyCompleted: string[] = [];
  for (const [i, key] of keys.entries()) {
    if (options.completed.has(key)) {
      alreadyCompleted.push(key);
      continue;
    }
    let summary = await copyStreamedPlaybook(streaming, key);
    if (summary === null) {
      streaming?.tallies.delete(key);
      const section = await source.readSection(key);
      if (section.key !== key) throw new Error(`Storage transfer returned section '${section.key}' when asked for '${key}'`);
      await target.writeSection(section);
      summary = summarizeSection(section);
    }
    copied.push(summary);
    await options.onSection?.({ ...summary, index: i + 1, total: keys.length });
  }
  return { keys, copied, alreadyCompleted };
}

/**
 * As core's verifySections, with playbook sections compared bullet by bullet when `streaming`
 * allows; the others (and playbooks the stream reader cannot read) are compared whole by core.
 */
async function checkSections(
  source: StoreTransfer,
  target: StoreTransfer,
  streaming: PlaybookStreaming | null,
  options: { include?: (key: string) => boolean; onSection?: (progress: { key: string; index: number; total: number; equal: boolean }) => void | Promise<void> },
): Promise<VerifySectionsResult> {
  const include = options.include ?? (() => true);
  if (streaming === null) return verifySections(source, target, options);
  const sourceKeys = await source.listSections();
  const total = new Set([...sourceKeys, ...(await target.listSections())].filter(include)).size;
  const streamed: string[] = [];
  const differences: SectionDifference[] = [];
  for (const key of sourceKeys) {
    if (!include(key) || playbookKeyLayer(key) === null) continue;
    const result = await verifyStreamedPlaybook(streaming, key);
    if (result === null) {
      streaming.tallies.delete(key);
      continue;
    }
    streamed.push(key);
    if (result.difference !== null) differences.push(result.difference);
    await options.onSection?.({ key, index: streamed.length, total, equal: result.difference === null });
  }
  const done = new Set(streamed);
  const rest = await verifySections(source, target, {
    include: (key) => include(key) && !done.has(key),
    onSection: (p) => options.onSection?.({ ...p, index: streamed.length + p.index, total }),
  });
  return { keys: [...streamed, ...rest.keys], differences: [...differences, ...rest.differences], skipped: rest.skipped };
}

/** The secrets redacted by the whole-section reads and by the streamed playbooks. */
function mergedTally(whole: SecretTally, streaming: PlaybookStreaming | null): { total: number; byKind: SecretTally } {
  const byKind: SecretTally = { ...whole };
  for (const tally of streaming?.tallies.values() ?? []) {
    for (const [kind, n] of Object.entries(tally)) byKind[kind as keyof SecretTally] = (byKind[kind as keyof SecretTally] ?? 0) + (n ?? 0);
  }
  return { total: tallyTotal(byKind), byKind };
}

