import { mkdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  AppError,
  ONBOARDING_STATE_FILE,
  PROCESSED_LOG_DIR,
  PROCESSED_LOG_HEADER,
  createOnboardingState,
  decodeOnboardingState,
  decodeProcessedLog,
  encodeOnboardingState,
  encodeProcessedSessions,
  finalizeOnboardingState,
  processedLogFileName,
} from "@cass-memory/core";
import type { Logger, OnboardingState, ProcessedSession } from "@cass-memory/core";
import { FILE_MODE, atomicWriteFile } from "@cass-memory/node-files";
import { backupFile } from "./diagnostics.js";
import { appendJsonl, readError } from "@cass-memory/node-files";
import { withLock, type LockOptions } from "@cass-memory/node-files";

/**
 * The onboarding state file (`onboarding-state.json`, reference §4.8) and the processed-sessions
 * logs (`reflections/<log>.processed.log`, §4.5) of the global directory, in the original's formats
 * and under the original's lock directories.
 */

export interface OnboardingFilesOptions {
  globalDir: string;
  logger: Logger;
  lockOptions: LockOptions;
}

export interface OnboardingFiles {
  readOnboardingState(): Promise<OnboardingState | null>;
  mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, options?: { nowIso?: string }): Promise<T>;
  appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void>;
  readProcessedSessions(log: string): Promise<ProcessedSession[]>;
}

async function readTextOrNull(path: string): Promise<string | null> {
  try {
    return await readFile(path, "utf8");
  } catch (error) {
    if ((error as { code?: unknown }).code === "ENOENT") return null;
    throw readError(path, error);
  }
}

export function createOnboardingFiles(options: OnboardingFilesOptions): OnboardingFiles {
  const { globalDir, logger, lockOptions } = options;
  const statePath = join(globalDir, ONBOARDING_STATE_FILE);
  const logPath = (log: string): string => join(globalDir, PROCESSED_LOG_DIR, processedLogFileName(log));

  async function readOnboardingState(): Promise<OnboardingState | null> {
    const text = await readTextOrNull(statePath);
    if (text === null) return null;
    const state = decodeOnboardingState(text);
    if (state === null && text.trim() !== "") logger.debug(`Ignoring invalid onboarding state in ${statePath}`);
    return state;
  }

  function mutateOnboardingState<T>(fn: (state: OnboardingState) => T | Promise<T>, options?: { nowIso?: string }): Promise<T> {
    return withLock(
      statePath,
      async () => {
        const text = await readTextOrNull(statePath);
        let state = text === null ? null : decodeOnboardingState(text);
        if (state === null && text !== null && text.trim() !== "") {
          // Starting afresh is what the original does; the damaged file is kept aside first.
          const backup = await backupFile(statePath);
          logger.warn(`Onboarding state ${statePath} was invalid; starting fresh (old file kept as ${backup})`);
        }
        state ??= createOnboardingState(options?.nowIso ?? new Date().toISOString());
        const result = await fn(state);
        await atomicWriteFile(statePath, encodeOnboardingState(finalizeOnboardingState(state, statePath)));
        return result;
      },
      lockOptions,
    );
  }

  async function appendProcessedSessions(log: string, records: ProcessedSession[]): Promise<void> {
    const path = logPath(log);
    const lines = encodeProcessedSessions(records);
    if (lines.length === 0) return;
    await withLock(
      path,
      async () => {
        let size = 0;
        try {
          size = (await stat(path)).size;
        } catch (error) {
          if ((error as { code?: unknown }).code !== "ENOENT") throw readError(path, error);
        }
        // A new (or empty) log starts with the header line the original writes.
        if (size === 0) await writeNew(path, `${PROCESSED_LOG_HEADER}\n${lines.join("\n")}\n`);
        else await appendJsonl(path, lines.map((line) => JSON.parse(line) as unknown));
      },
      lockOptions,
    );
  }

  async function readProcessedSessions(log: string): Promise<ProcessedSession[]> {
    const path = logPath(log);
    const text = await readTextOrNull(path);
    if (text === null) return [];
    const { records, malformed } = decodeProcessedLog(text);
    if (malformed > 0) logger.warn(`Skipped ${malformed} malformed line(s) in ${path}`);
    return records;
  }

  return { readOnboardingState, mutateOnboardingState, appendProcessedSessions, readProcessedSessions };
}

/** Writes a log that is absent or empty (the caller holds its lock). */
async function writeNew(path: string, text: string): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, { mode: FILE_MODE });
  } catch (error) {
    const errno = (error as { code?: unknown }).code;
    throw new AppError(errno === "EACCES" || errno === "EPERM" ? "FILE_PERMISSION_DENIED" : "FILE_WRITE_FAILED", `Failed to write ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: `Check that ${dirname(path)} is writable.`,
      details: { path },
      cause: error,
    });
  }
}
