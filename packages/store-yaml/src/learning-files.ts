import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  COST_DIR,
  COST_TOTAL_FILE,
  DIARY_ID,
  decodeDiaryText,
  diaryEntryForWrite,
  addCost,
  decodeCostTotals,
  isAppError,
  monthlyCostFile,
} from "@cass-memory/core";
import type { CostLedger, DiaryEntry, Logger } from "@cass-memory/core";
import { appendJsonl, atomicWriteFile, listDir, withLock, withNamedLock, type LockOptions } from "@cass-memory/node-files";

/**
 * The working-memory and spending files of the global directory: diary entries
 * (`<diaryDir>/<id>.json`, reference §4.4), the cost ledger (`cost/`, §4.9) and named locks
 * (`reflections/<name>.lock.d`; reflect uses `<log>.processed.log.orchestrator`, the name the original locks, so the two never reflect at once).
 */


export interface LearningFilesOptions {
  globalDir: string;
  diaryDir: string;
  logger: Logger;
  lockOptions: LockOptions;
  now: () => Date;
}

export function createLearningFiles(options: LearningFilesOptions) {
  const { globalDir, diaryDir, logger, lockOptions, now } = options;
  const costDir = join(globalDir, COST_DIR);
  const totalPath = join(costDir, COST_TOTAL_FILE);

  async function readDiaryFile(path: string): Promise<DiaryEntry | null> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch {
      return null;
    }
    const decoded = decodeDiaryText(text, path);
    if ("entry" in decoded) return decoded.entry;
    logger.warn(decoded.warning);
    return null;
  }

  async function writeDiary(entry: DiaryEntry): Promise<string> {
    const data = diaryEntryForWrite(entry);
    const path = join(diaryDir, `${data.id}.json`);
    await atomicWriteFile(path, JSON.stringify(data, null, 2));
    return path;
  }

  async function readDiary(id: string): Promise<DiaryEntry | null> {
    if (!DIARY_ID.test(id)) return null;
    return readDiaryFile(join(diaryDir, `${id}.json`));
  }

  async function listDiaries(listOptions: { sessionPath?: string; limit?: number } = {}): Promise<DiaryEntry[]> {
    const names = (await listDir(diaryDir)).filter((name) => name.endsWith(".json"));
    const found: Array<{ entry: DiaryEntry; mtimeMs: number }> = [];
    for (let i = 0; i < names.length; i += 64) {
      const batch = await Promise.all(
        names.slice(i, i + 64).map(async (name) => {
          const path = join(diaryDir, name);
          const [entry, info] = await Promise.all([readDiaryFile(path), stat(path).catch(() => null)]);
          return entry === null ? null : { entry, mtimeMs: info?.mtimeMs ?? 0 };
        }),
      );
      for (const item of batch) {
        if (item === null) continue;
        if (listOptions.sessionPath !== undefined && item.entry.sessionPath !== listOptions.sessionPath) continue;
        found.push(item);
      }
    }
    found.sort((a, b) => b.mtimeMs - a.mtimeMs || b.entry.timestamp.localeCompare(a.entry.timestamp));
    const limited = listOptions.limit !== undefined ? found.slice(0, Math.max(0, listOptions.limit)) : found;
    return limited.map((item) => item.entry);
  }

  const costs: CostLedger = {
    async totals() {
      const text = await readFile(totalPath, "utf8").catch(() => undefined);
      return decodeCostTotals(text, now());
    },
    async record(entry) {
      return withLock(
        totalPath,
        async () => {
          const at = now();
          await appendJsonl(join(costDir, monthlyCostFile(at)), [entry]);
          const text = await readFile(totalPath, "utf8").catch(() => undefined);
          const next = addCost(decodeCostTotals(text, at), entry, at);
          await atomicWriteFile(totalPath, JSON.stringify(next, null, 2));
          return next;
        },
        lockOptions,
      );
    },
  };

  async function exclusive<T>(name: string, fn: () => Promise<T>, exclusiveOptions: { waitMs?: number } = {}): Promise<T> {
    return withNamedLock(join(globalDir, "reflections"), name, fn, { ...lockOptions, ...exclusiveOptions });
  }

  return { writeDiary, readDiary, listDiaries, costs, exclusive };
}
