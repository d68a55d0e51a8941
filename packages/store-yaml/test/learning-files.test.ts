import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, mkdir, readFile, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAppError, localDayKey } from "@cass-memory/core";
import type { AppError, CostEntry, DiaryEntry } from "@cass-memory/core";
import { createYamlStore } from "../src/index.js";
import { tempDir, testLogger, type TestLogger } from "./helpers.js";

/**
 * File-level behaviour of the learning files that the store contract cannot see: where and how
 * diary, cost and lock files are written, mtime ordering, and exclusion against a holder in another
 * process (such as the original cm).
 */

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let logger: TestLogger;
let globalDir = "";

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-learning-"));
  globalDir = join(dir, ".cass-memory");
  logger = testLogger();
});
afterEach(async () => {
  await cleanup();
});

const NOW = new Date("2026-03-15T12:00:00.000Z");

function store(extra: { diaryDir?: string; now?: () => Date; timeoutMs?: number } = {}) {
  return createYamlStore({
    globalDir,
    repoDir: null,
    logger,
    lock: { timeoutMs: extra.timeoutMs ?? 10_000 },
    now: extra.now ?? (() => NOW),
    ...(extra.diaryDir !== undefined ? { diaryDir: extra.diaryDir } : {}),
  });
}

function diary(n: number, extra: Partial<DiaryEntry> = {}): DiaryEntry {
  return {
    id: `diary-${String(n).padStart(16, "0")}`,
    sessionPath: `/home/dev/s${n}.jsonl`,
    timestamp: new Date(Date.UTC(2026, 2, 1, 10, n)).toISOString(),
    agent: "claude",
    status: "success",
    accomplishments: [`did ${n}`],
    decisions: [],
    challenges: [],
    preferences: [],
    keyLearnings: [],
    relatedSessions: [],
    tags: [],
    searchAnchors: [],
    ...extra,
  };
}

const cost = (value: number, n = 0): CostEntry => ({ provider: "openai", model: `m-${n}`, tokensIn: 10, tokensOut: 2, cost: value, timestamp: NOW.toISOString() });

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const caught = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(isAppError(caught), String(caught)).toBe(true);
  return caught as AppError;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  if (typeof child.pid !== "number") throw new Error("no pid");
  return child.pid;
}

async function plantLock(lockDir: string, pid: number, owner: string): Promise<void> {
  await mkdir(lockDir, { recursive: true });
  await writeFile(join(lockDir, "owner"), owner);
  await writeFile(join(lockDir, "pid"), String(pid));
}

/** A live process that is not ours to judge (stands in for another cm holding a lock). */
async function withLiveProcess<T>(fn: (pid: number) => Promise<T>): Promise<T> {
  const sleeper = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => sleeper.once("exit", () => resolve()));
  try {
    if (typeof sleeper.pid !== "number") throw new Error("no pid");
    return await fn(sleeper.pid);
  } finally {
    sleeper.kill();
    await exited;
  }
}

describe("diary files", () => {
  it("are written as <globalDir>/diary/<id>.json, pretty JSON with mode 0600, and no temp file is left", async () => {
    const s = store();
    const entry = diary(1, { workspace: "/home/dev/app", duration: null });
    const path = await s.writeDiary(entry);
    expect(path).toBe(join(globalDir, "diary", `${entry.id}.json`));
    const text = await readFile(path, "utf8");
    expect(JSON.parse(text)).toEqual(entry);
    expect(text).toBe(JSON.stringify(JSON.parse(text), null, 2));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(globalDir, "diary"))).toEqual([`${entry.id}.json`]);
  });

  it("follow the diaryDir option, and nothing is read from the default directory then", async () => {
    const custom = join(dir, "elsewhere", "diaries");
    await store().writeDiary(diary(1)); // default directory
    const s = store({ diaryDir: custom });
    const path = await s.writeDiary(diary(2));
    expect(path).toBe(join(custom, `${diary(2).id}.json`));
    expect((await s.listDiaries()).map((d) => d.id)).toEqual([diary(2).id]);
    expect(await s.readDiary(diary(1).id)).toBeNull();
    expect(await store().readDiary(diary(2).id)).toBeNull();
  });

  it("are listed by file mtime first (newest first), then by timestamp; temp files are ignored", async () => {
    const s = store();
    // d1 has the latest timestamp but the oldest file; d2 and d3 share an mtime.
    const d1 = diary(1, { timestamp: "2026-03-09T00:00:00.000Z" });
    const d2 = diary(2, { timestamp: "2026-03-02T00:00:00.000Z" });
    const d3 = diary(3, { timestamp: "2026-03-03T00:00:00.000Z" });
    for (const d of [d1, d2, d3]) await s.writeDiary(d);
    const setMtime = (d: DiaryEntry, iso: string) => utimes(join(globalDir, "diary", `${d.id}.json`), new Date(iso), new Date(iso));
    await setMtime(d1, "2026-01-01T00:00:00.000Z");
    await setMtime(d2, "2026-02-01T00:00:00.000Z");
    await setMtime(d3, "2026-02-01T00:00:00.000Z");
    await writeFile(join(globalDir, "diary", `${diary(4).id}.json.tmp.0123456789abcdef`), JSON.stringify(diary(4)));
    expect((await s.listDiaries()).map((d) => d.id)).toEqual([d3.id, d2.id, d1.id]);
    expect((await s.listDiaries({ limit: 1 })).map((d) => d.id)).toEqual([d3.id]);
    // Rewriting an entry makes its file the newest.
    await s.writeDiary({ ...d1, tags: ["rewritten"] });
    expect((await s.listDiaries())[0]?.id).toBe(d1.id);
  });

  it("skipped while listing are reported as warnings", async () => {
    const s = store();
    await s.writeDiary(diary(1));
    await writeFile(join(globalDir, "diary", "broken.json"), "{ not json");
    await writeFile(join(globalDir, "diary", "wrong.json"), JSON.stringify({ id: "wrong" }));
    expect((await s.listDiaries()).map((d) => d.id)).toEqual([diary(1).id]);
    const warnings = logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings.some((m) => m.includes("broken.json") && m.includes("not valid JSON"))).toBe(true);
    expect(warnings.some((m) => m.includes("wrong.json"))).toBe(true);
  });

  it("refused ids leave no file anywhere below the temp directory", async () => {
    const s = store();
    for (const id of ["../escape", "../../escape", "sub/escape"]) {
      const error = await errorOf(s.writeDiary(diary(1, { id })));
      expect(error.code).toBe("VALIDATION_FAILED");
      expect(error.message).toContain(id);
    }
    expect(existsSync(join(globalDir, "escape.json"))).toBe(false);
    expect(existsSync(join(dir, "escape.json"))).toBe(false);
    expect(existsSync(join(globalDir, "diary", "sub"))).toBe(false);
  });
});

describe("cost files", () => {
  it("total.json is pretty JSON, the files have mode 0600, and the lock is released", async () => {
    const s = store();
    const totals = await s.costs.record(cost(0.25));
    const totalText = await readFile(join(globalDir, "cost", "total.json"), "utf8");
    expect(totalText).toBe(JSON.stringify(totals, null, 2));
    expect(totalText).toBe(
      JSON.stringify(
        { allTime: 0.25, lastUpdated: NOW.toISOString(), currentMonth: { month: "2026-03", cost: 0.25 }, currentDay: { day: localDayKey(NOW), cost: 0.25 } },
        null,
        2,
      ),
    );
    expect(await readFile(join(globalDir, "cost", "monthly-2026-03.jsonl"), "utf8")).toBe(`${JSON.stringify(cost(0.25))}\n`);
    for (const name of ["total.json", "monthly-2026-03.jsonl"]) expect((await stat(join(globalDir, "cost", name))).mode & 0o777).toBe(0o600);
    expect((await readdir(join(globalDir, "cost"))).sort()).toEqual(["monthly-2026-03.jsonl", "total.json"]);
  });

  it("a torn last line of the monthly file does not swallow the next record", async () => {
    const s = store();
    await s.costs.record(cost(0.25, 1));
    await appendFile(join(globalDir, "cost", "monthly-2026-03.jsonl"), '{"provider": "torn');
    await s.costs.record(cost(0.5, 2));
    const lines = (await readFile(join(globalDir, "cost", "monthly-2026-03.jsonl"), "utf8")).split("\n");
    expect(lines).toEqual([JSON.stringify(cost(0.25, 1)), '{"provider": "torn', JSON.stringify(cost(0.5, 2)), ""]);
    expect((await s.costs.totals()).allTime).toBe(0.75);
  });

  it("waits for a holder of the cost lock in another process, and fails without writing when it does not let go", async () => {
    const s = store({ timeoutMs: 150 });
    await s.costs.record(cost(1, 1));
    await withLiveProcess(async (pid) => {
      const lockDir = join(globalDir, "cost", "total.json.lock.d");
      await plantLock(lockDir, pid, "another-cm");
      const error = await errorOf(s.costs.record(cost(2, 2)));
      expect(error.code).toBe("LOCK_ACQUISITION_FAILED");
      expect((await readFile(join(lockDir, "owner"), "utf8")).trim()).toBe("another-cm");
    });
    // Nothing was written while the lock was held.
    expect((await s.costs.totals()).allTime).toBe(1);
    expect((await readFile(join(globalDir, "cost", "monthly-2026-03.jsonl"), "utf8")).trim().split("\n")).toHaveLength(1);
    // The holder is gone now: its abandoned lock is taken over.
    expect((await s.costs.record(cost(2, 3))).allTime).toBe(3);
  });
});

describe("exclusive locks (files)", () => {
  it("hold reflections/<name>.lock.d with our pid while fn runs, and remove it afterwards, also when fn throws", async () => {
    const s = store();
    const lockDir = join(globalDir, "reflections", "global.processed.log.orchestrator.lock.d");
    const seen = await s.exclusive("global.processed.log.orchestrator", async () => ({
      exists: existsSync(lockDir),
      pid: (await readFile(join(lockDir, "pid"), "utf8")).trim(),
    }));
    expect(seen).toEqual({ exists: true, pid: String(process.pid) });
    expect(existsSync(lockDir)).toBe(false);
    await expect(
      s.exclusive("global.processed.log.orchestrator", async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(existsSync(lockDir)).toBe(false);
  });

  it("a lock held by another live process fails after waitMs, naming the lock and its directory", async () => {
    const s = store();
    const lockDir = join(globalDir, "reflections", "global.processed.log.orchestrator.lock.d");
    await withLiveProcess(async (pid) => {
      await plantLock(lockDir, pid, "another-cm");
      let called = false;
      const error = await errorOf(s.exclusive("global.processed.log.orchestrator", async () => void (called = true), { waitMs: 100 }));
      expect(called).toBe(false);
      expect(error.code).toBe("LOCK_ACQUISITION_FAILED");
      expect(error.message).toContain('"global.processed.log.orchestrator" lock');
      expect(error.details).toMatchObject({ lock: "global.processed.log.orchestrator", lockDir, holderPid: pid });
      expect(error.hint).toContain(lockDir);
      expect(error.retryable).toBe(true);
      // The holder's lock is left alone.
      expect((await readFile(join(lockDir, "owner"), "utf8")).trim()).toBe("another-cm");
    });
  });

  it("a lock left behind by a dead process is taken over at once, even with waitMs 0", async () => {
    const s = store();
    const lockDir = join(globalDir, "reflections", "global.processed.log.orchestrator.lock.d");
    await plantLock(lockDir, deadPid(), "crashed-cm");
    expect(await s.exclusive("global.processed.log.orchestrator", async () => (await readFile(join(lockDir, "owner"), "utf8")).trim(), { waitMs: 0 })).not.toBe("crashed-cm");
    expect(existsSync(lockDir)).toBe(false);
  });

  it("does not collide with the locks of the files it may write while held", async () => {
    const s = store({ timeoutMs: 2_000 });
    // A reflection holds its lock and appends to its processed log and the cost ledger meanwhile.
    const result = await s.exclusive(
      "global.processed.log.orchestrator",
      async () => {
        await s.appendProcessedSessions("global", [{ sessionPath: "/s.jsonl", processedAt: NOW.toISOString(), deltasGenerated: 0 }]);
        return (await s.costs.record(cost(0.5))).allTime;
      },
      { waitMs: 0 },
    );
    expect(result).toBe(0.5);
    expect(await s.readProcessedSessions("global")).toHaveLength(1);
  });
});
