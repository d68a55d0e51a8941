import { mkdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { AppError, isAppError, localDayKey, monthlyCostFile } from "@cass-memory/core";
import type { CostEntry, CostTotals, DiaryEntry, Store } from "@cass-memory/core";
import type { MaybePromise, StoreContractContext, StoreContractOptions } from "./run-store-contract.js";

/**
 * Contract cases of the learning-loop storage: diary entries (reference §4.4), the cost ledger
 * (§4.9), named exclusive locks, and the `reflection-runs` log. Registered by `runStoreContract`
 * inside its own `describe`, sharing its per-test temp directories and fake clock.
 */

export interface LearningContractSetup<S extends Store> {
  makeStore: (ctx: StoreContractContext) => MaybePromise<S>;
  options: StoreContractOptions<S>;
  /** The current test's context (fresh directories per test). */
  context: () => StoreContractContext;
  /** Sets the time `ctx.now()` returns (null: the real clock). */
  setNow: (date: Date | null) => void;
  slow: number;
}

/** Cost of the `i`-th entry of process `p`: a multiple of 1/64, so that sums in any order are exact. */
export function concurrentCostEntry(processIndex: number, iteration: number, perProcess: number): CostEntry {
  return {
    provider: "contract",
    model: `proc-${processIndex}-${iteration}`,
    tokensIn: 100 + iteration,
    tokensOut: 10 + processIndex,
    cost: (processIndex * perProcess + iteration + 1) / 64,
    timestamp: new Date(Date.UTC(2026, 2, 15, 12, 0, iteration)).toISOString(),
  };
}

async function appErrorOf(promise: Promise<unknown>, code: string): Promise<AppError> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected AppError ${code}`).toBeDefined();
  expect(isAppError(caught), String(caught)).toBe(true);
  expect((caught as AppError).code).toBe(code);
  return caught as AppError;
}

const DIARY_DIR = "diary";

function diary(n: number, extra: Partial<DiaryEntry> = {}): DiaryEntry {
  return {
    id: `diary-${n.toString(16).padStart(16, "0")}`,
    sessionPath: `/home/dev/.claude/projects/app/s${n}.jsonl`,
    timestamp: new Date(Date.UTC(2026, 2, 1, 10, n)).toISOString(),
    agent: "claude",
    status: "success",
    accomplishments: [],
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

/** Every field of §4.4 filled, with awkward values, and fields the schema does not know. */
const FULL_DIARY = {
  id: "diary-0123456789abcdef",
  sessionPath: "/home/dev/.codex/sessions/2026/03/01/rollout-é 🚀.jsonl",
  timestamp: "2026-03-01T10:15:30.123Z",
  agent: "codex",
  workspace: "/home/dev/projects/app",
  duration: 1234.5,
  status: "mixed",
  accomplishments: ["Fixed the 401 after deploy", "no", ""],
  decisions: ["Keep JWT in memory: \"not\" localStorage # really"],
  challenges: ["multi\nline\tchallenge"],
  preferences: ["prefers pnpm"],
  keyLearnings: ["Check token expiry first", "null"],
  relatedSessions: [
    { sessionPath: "/home/dev/.claude/projects/app/s1.jsonl", agent: "claude", relevanceScore: 0.87, snippet: "token refresh…" },
    { sessionPath: "/home/dev/.gemini/s2.json", agent: "gemini", relevanceScore: 0, snippet: "", futureField: [1, "two"] },
  ],
  tags: ["auth", "jwt"],
  searchAnchors: ["401 after deploy", "token expiry"],
  futureTopLevel: { nested: true },
} as unknown as DiaryEntry;

/** A diary file as the original cm writes it (pretty JSON, `duration: null`, no workspace). */
const ORIGINAL_DIARY_TEXT = JSON.stringify(
  {
    id: "diary-8f14e45fceea167a",
    sessionPath: "/home/dev/.claude/projects/-home-dev-app/0b7c5a1e.jsonl",
    timestamp: "2026-11-22T11:57:12.500Z",
    agent: "claude",
    duration: null,
    status: "success",
    accomplishments: ["Added retry with backoff to the upload client"],
    decisions: ["Retry only idempotent requests"],
    challenges: [],
    preferences: [],
    keyLearnings: ["Wrap fetch calls in a retry helper"],
    relatedSessions: [{ sessionPath: "/home/dev/.codex/sessions/a.jsonl", agent: "codex", relevanceScore: 0.42, snippet: "retry logic" }],
    tags: ["networking"],
    searchAnchors: ["retry backoff"],
  },
  null,
  2,
);

const COST_TOTAL = "cost/total.json";

function entry(cost: number, n = 0): CostEntry {
  return { provider: "openai", model: `gpt-test-${n}`, tokensIn: 1000 + n, tokensOut: 200, cost, timestamp: new Date(Date.UTC(2026, 2, 15, 12, 0, n)).toISOString() };
}

function zeroTotals(now: Date): CostTotals {
  return { allTime: 0, lastUpdated: now.toISOString(), currentMonth: { month: now.toISOString().slice(0, 7), cost: 0 }, currentDay: { day: localDayKey(now), cost: 0 } };
}

function jsonLines(text: string | null): unknown[] {
  return (text ?? "")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as unknown);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

export function registerLearningContract<S extends Store>(setup: LearningContractSetup<S>): void {
  const { makeStore, options, context, setNow, slow } = setup;
  const rawWrite = options.writeRawGlobalFile;
  const rawRead = options.readRawGlobalFile;

  describe("diary entries", () => {
    it("gives back every field, also to a second store, and replaces an entry with the same id", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      expect(await store.readDiary(FULL_DIARY.id)).toBeNull();
      const path = await store.writeDiary(FULL_DIARY);
      expect(path.endsWith(`${FULL_DIARY.id}.json`)).toBe(true);
      expect(await store.readDiary(FULL_DIARY.id)).toEqual(FULL_DIARY);
      const second = await makeStore(ctx);
      expect(await second.readDiary(FULL_DIARY.id)).toEqual(FULL_DIARY);
      expect(await second.listDiaries()).toEqual([FULL_DIARY]);
      if (rawRead) expect(JSON.parse((await rawRead(ctx, `${DIARY_DIR}/${FULL_DIARY.id}.json`, store)) ?? "null")).toEqual(FULL_DIARY);

      const replaced = { ...FULL_DIARY, status: "failure", keyLearnings: ["only this"] } as DiaryEntry;
      await second.writeDiary(replaced);
      expect(await store.readDiary(FULL_DIARY.id)).toEqual(replaced);
      expect(await store.listDiaries()).toEqual([replaced]);
    });

    it("fills the schema defaults of a minimal entry, and does not let callers alias it", async () => {
      const store = await makeStore(context());
      const minimal = { id: "diary-minimal", sessionPath: "/s.jsonl", timestamp: "2026-03-01T00:00:00.000Z" } as DiaryEntry;
      await store.writeDiary(minimal);
      const read = await store.readDiary("diary-minimal");
      expect(read).toEqual({
        id: "diary-minimal",
        sessionPath: "/s.jsonl",
        timestamp: "2026-03-01T00:00:00.000Z",
        agent: "unknown",
        status: "mixed",
        accomplishments: [],
        decisions: [],
        challenges: [],
        preferences: [],
        keyLearnings: [],
        relatedSessions: [],
        tags: [],
        searchAnchors: [],
      });
      read?.keyLearnings.push("mutated copy");
      expect((await store.readDiary("diary-minimal"))?.keyLearnings).toEqual([]);
    });

    it.skipIf(!rawWrite)("loads a diary file in the format the original cm writes", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      await rawWrite?.(ctx, `${DIARY_DIR}/diary-8f14e45fceea167a.json`, ORIGINAL_DIARY_TEXT, store);
      const expected = JSON.parse(ORIGINAL_DIARY_TEXT) as DiaryEntry;
      expect(await store.readDiary("diary-8f14e45fceea167a")).toEqual(expected);
      expect(await store.listDiaries()).toEqual([expected]);
      expect(await store.listDiaries({ sessionPath: expected.sessionPath })).toEqual([expected]);
    });

    it("rejects invalid entries and ids with VALIDATION_FAILED and writes nothing; ids cannot leave the diary directory", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      const badIds = ["../x", "../config", "a/b", "/abs", "..\\x", "x y", "", "diary-1/../../x", "dïary"];
      for (const id of badIds) {
        await appErrorOf(store.writeDiary(diary(1, { id })), "VALIDATION_FAILED");
        expect(await store.readDiary(id), id).toBeNull();
      }
      const badEntries = [
        { ...diary(2), status: "great" },
        { ...diary(3), timestamp: undefined },
        { ...diary(4), sessionPath: 7 },
        { ...diary(5), relatedSessions: [{ sessionPath: "/s", agent: "a", relevanceScore: "high", snippet: "" }] },
        { ...diary(6), keyLearnings: "not a list" },
      ] as unknown as DiaryEntry[];
      for (const bad of badEntries) await appErrorOf(store.writeDiary(bad), "VALIDATION_FAILED");
      expect(await store.listDiaries()).toEqual([]);
      for (const n of [2, 3, 4, 5, 6]) expect(await store.readDiary(diary(n).id)).toBeNull();
      if (rawRead) {
        for (const name of ["x.json", "config.json", `${DIARY_DIR}/a/b.json`, `${DIARY_DIR}/abs.json`, "abs.json"]) expect(await rawRead(ctx, name, store), name).toBeNull();
      }
      if (rawWrite) {
        // A valid diary outside the diary directory is not reachable through an id.
        await rawWrite(ctx, "config.json", JSON.stringify(diary(9, { id: "../config" })), store);
        await rawWrite(ctx, "escaped.json", JSON.stringify(diary(10, { id: "escaped" })), store);
        expect(await store.readDiary("../config")).toBeNull();
        expect(await store.readDiary("../escaped")).toBeNull();
        expect(await store.listDiaries()).toEqual([]);
      }
    });

    it.skipIf(!rawWrite)("skips invalid files when listing, and reads them as null", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      await store.writeDiary(diary(1));
      const write = async (name: string, text: string) => rawWrite?.(ctx, `${DIARY_DIR}/${name}`, text, store);
      await write("broken.json", "{ not json");
      await write("empty.json", "");
      await write("array.json", "[]");
      await write("wrong.json", JSON.stringify({ ...diary(2, { id: "wrong" }), sessionPath: 5 }));
      await write("no-id.json", JSON.stringify({ ...diary(3), id: "" }));
      await write("notes.txt", JSON.stringify(diary(4, { id: "notes" })));
      await write("nested/inner.json", JSON.stringify(diary(5, { id: "inner" })));
      await store.writeDiary(diary(6));
      expect((await store.listDiaries()).map((d) => d.id)).toEqual([diary(6).id, diary(1).id]);
      for (const id of ["broken", "empty", "array", "wrong", "no-id", "notes", "missing"]) expect(await store.readDiary(id), id).toBeNull();
    });

    it("lists newest first, filters by sessionPath, and applies the limit", async () => {
      const store = await makeStore(context());
      expect(await store.listDiaries()).toEqual([]);
      const sessionA = "/home/dev/a.jsonl";
      const sessionB = "/home/dev/b.jsonl";
      const written = [1, 2, 3, 4, 5].map((n) => diary(n, { sessionPath: n % 2 === 1 ? sessionA : sessionB }));
      for (const d of written) await store.writeDiary(d);
      const idsOf = (list: DiaryEntry[]) => list.map((d) => d.id);
      const [d1, d2, d3, d4, d5] = written.map((d) => d.id);
      expect(idsOf(await store.listDiaries())).toEqual([d5, d4, d3, d2, d1]);
      expect(idsOf(await store.listDiaries({ sessionPath: sessionA }))).toEqual([d5, d3, d1]);
      expect(idsOf(await store.listDiaries({ sessionPath: sessionB }))).toEqual([d4, d2]);
      expect(idsOf(await store.listDiaries({ limit: 2 }))).toEqual([d5, d4]);
      expect(idsOf(await store.listDiaries({ sessionPath: sessionA, limit: 2 }))).toEqual([d5, d3]);
      expect(idsOf(await store.listDiaries({ sessionPath: sessionB, limit: 10 }))).toEqual([d4, d2]);
      expect(await store.listDiaries({ limit: 0 })).toEqual([]);
      expect(await store.listDiaries({ sessionPath: "/home/dev/none.jsonl" })).toEqual([]);
      expect(await store.listDiaries({ sessionPath: "" })).toEqual([]);
    });
  });

  describe("cost ledger", () => {
    const MARCH = new Date("2026-03-15T12:00:00.000Z");

    it("totals are zeros before anything was recorded", async () => {
      setNow(MARCH);
      const store = await makeStore(context());
      expect(await store.costs.totals()).toEqual(zeroTotals(MARCH));
    });

    it.skipIf(!rawWrite)("a damaged total.json reads as zeros, and the next record starts from zero", async () => {
      setNow(MARCH);
      const ctx = context();
      const store = await makeStore(ctx);
      for (const text of ["{ not json", "", "null", "[]", "42", '"text"', JSON.stringify({ allTime: "lots", currentMonth: 5, currentDay: null })]) {
        await rawWrite?.(ctx, COST_TOTAL, text, store);
        expect(await store.costs.totals(), text).toEqual(zeroTotals(MARCH));
      }
      await rawWrite?.(ctx, COST_TOTAL, JSON.stringify({ allTime: -3, currentMonth: { month: "2026-03", cost: -1 }, currentDay: { day: localDayKey(MARCH), cost: "2" } }), store);
      expect(await store.costs.totals()).toMatchObject({ allTime: 0, currentMonth: { cost: 0 }, currentDay: { cost: 0 } });
      await rawWrite?.(ctx, COST_TOTAL, "{ damaged", store);
      const after = await store.costs.record(entry(0.5));
      expect(after).toEqual({ ...zeroTotals(MARCH), allTime: 0.5, currentMonth: { month: "2026-03", cost: 0.5 }, currentDay: { day: localDayKey(MARCH), cost: 0.5 } });
    });

    it("record appends to the month's JSONL file and keeps total.json in the original's shape", async () => {
      setNow(MARCH);
      const ctx = context();
      const store = await makeStore(ctx);
      const first = await store.costs.record(entry(0.25, 1));
      const expectedFirst: CostTotals = {
        allTime: 0.25,
        lastUpdated: MARCH.toISOString(),
        currentMonth: { month: "2026-03", cost: 0.25 },
        currentDay: { day: localDayKey(MARCH), cost: 0.25 },
      };
      expect(first).toEqual(expectedFirst);
      const later = new Date(MARCH.getTime() + 60_000);
      setNow(later);
      const second = await store.costs.record(entry(0.5, 2));
      const expectedSecond: CostTotals = {
        allTime: 0.75,
        lastUpdated: later.toISOString(),
        currentMonth: { month: "2026-03", cost: 0.75 },
        currentDay: { day: localDayKey(later), cost: 0.75 },
      };
      expect(second).toEqual(expectedSecond);
      expect(await store.costs.totals()).toEqual(expectedSecond);
      expect(await (await makeStore(ctx)).costs.totals()).toEqual(expectedSecond);
      if (rawRead) {
        expect(monthlyCostFile(MARCH)).toBe("monthly-2026-03.jsonl");
        expect(jsonLines(await rawRead(ctx, "cost/monthly-2026-03.jsonl", store))).toEqual([entry(0.25, 1), entry(0.5, 2)]);
        const total = JSON.parse((await rawRead(ctx, COST_TOTAL, store)) ?? "null") as Record<string, unknown>;
        expect(total).toEqual(expectedSecond);
        expect(Object.keys(total).sort()).toEqual(["allTime", "currentDay", "currentMonth", "lastUpdated"]);
        expect(Object.keys(total.currentMonth as object).sort()).toEqual(["cost", "month"]);
        expect(Object.keys(total.currentDay as object).sort()).toEqual(["cost", "day"]);
      }
    });

    it("the day and month buckets restart when the date changes; allTime keeps counting", async () => {
      setNow(MARCH);
      const ctx = context();
      const store = await makeStore(ctx);
      await store.costs.record(entry(1, 1));

      const nextDay = new Date("2026-03-16T12:00:00.000Z");
      setNow(nextDay);
      expect(localDayKey(nextDay)).not.toBe(localDayKey(MARCH));
      expect(await store.costs.totals()).toEqual({
        allTime: 1,
        lastUpdated: MARCH.toISOString(),
        currentMonth: { month: "2026-03", cost: 1 },
        currentDay: { day: localDayKey(nextDay), cost: 0 },
      });
      expect(await store.costs.record(entry(0.5, 2))).toEqual({
        allTime: 1.5,
        lastUpdated: nextDay.toISOString(),
        currentMonth: { month: "2026-03", cost: 1.5 },
        currentDay: { day: localDayKey(nextDay), cost: 0.5 },
      });

      const nextMonth = new Date("2026-04-15T12:00:00.000Z");
      setNow(nextMonth);
      expect(await store.costs.totals()).toEqual({
        allTime: 1.5,
        lastUpdated: nextDay.toISOString(),
        currentMonth: { month: "2026-04", cost: 0 },
        currentDay: { day: localDayKey(nextMonth), cost: 0 },
      });
      expect(await store.costs.record(entry(0.25, 3))).toEqual({
        allTime: 1.75,
        lastUpdated: nextMonth.toISOString(),
        currentMonth: { month: "2026-04", cost: 0.25 },
        currentDay: { day: localDayKey(nextMonth), cost: 0.25 },
      });
      if (rawRead) {
        expect(jsonLines(await rawRead(ctx, "cost/monthly-2026-03.jsonl", store))).toEqual([entry(1, 1), entry(0.5, 2)]);
        expect(jsonLines(await rawRead(ctx, "cost/monthly-2026-04.jsonl", store))).toEqual([entry(0.25, 3)]);
      }
    });

    it("the month is the UTC month of the moment of recording", async () => {
      // 23:30 UTC on the last day of March is April in timezones east of UTC+0:30, but still March in UTC.
      const endOfMarch = new Date("2026-03-31T23:30:00.000Z");
      setNow(endOfMarch);
      const ctx = context();
      const store = await makeStore(ctx);
      const totals = await store.costs.record(entry(0.125, 1));
      expect(totals.currentMonth).toEqual({ month: "2026-03", cost: 0.125 });
      expect(totals.currentDay).toEqual({ day: localDayKey(endOfMarch), cost: 0.125 });
      if (rawRead) expect(jsonLines(await rawRead(ctx, "cost/monthly-2026-03.jsonl", store))).toEqual([entry(0.125, 1)]);
    });

    it.skipIf(!rawWrite)("reads a total.json the original wrote, and continues its totals", async () => {
      setNow(MARCH);
      const ctx = context();
      const store = await makeStore(ctx);
      const original = {
        allTime: 12.5,
        lastUpdated: "2026-03-15T08:00:00.000Z",
        currentMonth: { month: "2026-03", cost: 2.5 },
        currentDay: { day: localDayKey(MARCH), cost: 0.75 },
      };
      await rawWrite?.(ctx, COST_TOTAL, JSON.stringify(original, null, 2), store);
      expect(await store.costs.totals()).toEqual(original);
      expect(await store.costs.record(entry(0.25))).toEqual({
        allTime: 12.75,
        lastUpdated: MARCH.toISOString(),
        currentMonth: { month: "2026-03", cost: 2.75 },
        currentDay: { day: localDayKey(MARCH), cost: 1 },
      });
      // Buckets of another day and month count as zero.
      await rawWrite?.(ctx, COST_TOTAL, JSON.stringify({ ...original, currentMonth: { month: "2025-12", cost: 9 }, currentDay: { day: "2025-12-31", cost: 9 } }), store);
      expect(await store.costs.totals()).toEqual({ ...original, currentMonth: { month: "2026-03", cost: 0 }, currentDay: { day: localDayKey(MARCH), cost: 0 } });
    });

    it("negative and non-finite costs add nothing", async () => {
      setNow(MARCH);
      const store = await makeStore(context());
      await store.costs.record(entry(0.5));
      for (const cost of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
        const totals = await store.costs.record(entry(cost));
        expect(totals.allTime, String(cost)).toBe(0.5);
        expect(totals.currentDay.cost).toBe(0.5);
        expect(totals.currentMonth.cost).toBe(0.5);
      }
    });

    it(
      "concurrent records from two store instances add up exactly",
      async () => {
        setNow(MARCH);
        const ctx = context();
        const a = await makeStore(ctx);
        const b = await makeStore(ctx);
        const entries = Array.from({ length: 40 }, (_, i) => entry((i + 1) / 64, i));
        await Promise.all(entries.map((e, i) => (i % 2 === 0 ? a : b).costs.record(e)));
        const sum = entries.reduce((total, e) => total + e.cost, 0);
        const totals = await a.costs.totals();
        expect(totals.allTime).toBe(sum);
        expect(totals.currentMonth.cost).toBe(sum);
        expect(totals.currentDay.cost).toBe(sum);
        if (rawRead) {
          const lines = jsonLines(await rawRead(ctx, "cost/monthly-2026-03.jsonl", a)) as CostEntry[];
          expect(lines).toHaveLength(40);
          expect(new Set(lines.map((l) => l.model))).toEqual(new Set(entries.map((e) => e.model)));
        }
      },
      slow,
    );

    it.skipIf(!options.concurrentCostProcesses)(
      "concurrent records from OS processes add up exactly",
      async () => {
        const ctx = context();
        const plan = options.concurrentCostPlan ?? { processes: 8, perProcess: 25 };
        const perProcess = Array.from({ length: plan.processes }, (_, p) => Array.from({ length: plan.perProcess }, (_, i) => concurrentCostEntry(p, i, plan.perProcess)));
        const started = new Date();
        await options.concurrentCostProcesses?.(ctx, perProcess);
        const ended = new Date();
        const all = perProcess.flat();
        const store = await makeStore(ctx);
        expect((await store.costs.totals()).allTime).toBe(all.reduce((total, e) => total + e.cost, 0));
        if (rawRead) {
          // The processes use the real clock: a month boundary during the test splits the entries over two files.
          const names = [...new Set([monthlyCostFile(started), monthlyCostFile(ended)])];
          const lines: CostEntry[] = [];
          for (const name of names) lines.push(...(jsonLines(await rawRead(ctx, `cost/${name}`, store)) as CostEntry[]));
          expect(lines).toHaveLength(all.length);
          expect(new Set(lines.map((l) => l.model))).toEqual(new Set(all.map((e) => e.model)));
        }
      },
      slow,
    );
  });

  describe("exclusive locks", () => {
    it(
      "returns fn's result, and holders of one name never overlap, across store instances",
      async () => {
        const ctx = context();
        const a = await makeStore(ctx);
        const b = await makeStore(ctx);
        let active = 0;
        let most = 0;
        const order: number[] = [];
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 === 0 ? a : b).exclusive("reflect-global", async () => {
              active += 1;
              most = Math.max(most, active);
              await sleep(1);
              await Promise.resolve();
              order.push(i);
              active -= 1;
              return i * 10;
            }),
          ),
        );
        expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i * 10));
        expect(most).toBe(1);
        expect([...order].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
      },
      slow,
    );

    it("a held lock fails with LOCK_ACQUISITION_FAILED naming it when waitMs runs out; other names are free", async () => {
      const ctx = context();
      const a = await makeStore(ctx);
      const b = await makeStore(ctx);
      const holding = gate();
      const entered = gate();
      const held = a.exclusive("reflect-global", async () => {
        entered.open();
        await holding.opened;
        return "first";
      });
      await entered.opened;
      let called = 0;
      for (const waitMs of [0, 50]) {
        for (const store of [a, b]) {
          const error = await appErrorOf(
            store.exclusive("reflect-global", async () => void (called += 1), { waitMs }),
            "LOCK_ACQUISITION_FAILED",
          );
          expect(error.message).toContain("reflect-global");
          expect(error.details?.lock).toBe("reflect-global");
        }
      }
      expect(called).toBe(0);
      // Another name is not blocked by this one.
      expect(await b.exclusive("reflect-ws-0123abcd", async () => "other", { waitMs: 0 })).toBe("other");
      // A patient waiter gets the lock once the holder is done.
      const waiter = b.exclusive("reflect-global", async () => "second", { waitMs: 30_000 });
      holding.open();
      expect(await held).toBe("first");
      expect(await waiter).toBe("second");
      expect(await a.exclusive("reflect-global", async () => "free again", { waitMs: 0 })).toBe("free again");
    });

    it("the lock is released when fn throws, and fn's error comes through unchanged", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      const boom = new Error("boom");
      await expect(
        store.exclusive("reflect-global", async () => {
          throw boom;
        }),
      ).rejects.toBe(boom);
      // An error of fn that happens to be a lock failure is not taken for this lock's own.
      const inner = new AppError("LOCK_ACQUISITION_FAILED", "inner lock failure");
      await expect(
        store.exclusive("reflect-global", async () => {
          throw inner;
        }),
      ).rejects.toBe(inner);
      expect(await (await makeStore(ctx)).exclusive("reflect-global", async () => "after", { waitMs: 0 })).toBe("after");
    });

    it("refuses lock names that are not plain file names", async () => {
      const store = await makeStore(context());
      let called = false;
      for (const name of ["", "../x", "a/b", "a b"]) {
        const error = await appErrorOf(
          store.exclusive(name, async () => void (called = true)),
          "INTERNAL_ERROR",
        );
        expect(error.message).toContain("lock name");
      }
      expect(called).toBe(false);
    });

    it.skipIf(!options.concurrentExclusiveProcesses)(
      "holders in different OS processes never overlap",
      async () => {
        const ctx = context();
        const traceFile = join(dirname(ctx.globalDir), "exclusive-trace.log");
        await mkdir(dirname(traceFile), { recursive: true });
        const plan = { ...(options.concurrentExclusivePlan ?? { processes: 4, perProcess: 8 }), name: "reflect-global", traceFile };
        await options.concurrentExclusiveProcesses?.(ctx, plan);
        const trace = (await readFile(traceFile, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
        expect(trace).toHaveLength(plan.processes * plan.perProcess * 2);
        const seen = new Set<string>();
        for (let k = 0; k < trace.length; k += 2) {
          const enter = trace[k] ?? "";
          const exit = trace[k + 1] ?? "";
          expect(enter, `line ${k}`).toMatch(/^enter \d+ \d+$/);
          // The next line is the same holder's exit: nobody entered in between.
          expect(exit, `line ${k + 1}`).toBe(enter.replace(/^enter/, "exit"));
          seen.add(enter);
        }
        expect(seen.size).toBe(plan.processes * plan.perProcess);
      },
      slow,
    );
  });

  describe("reflection-runs log", () => {
    const run = (n: number) => ({
      type: "run",
      runId: `run-${n}`,
      startedAt: "2026-03-01T10:00:00.000Z",
      finishedAt: "2026-03-01T10:00:05.000Z",
      mode: n % 2 === 0 ? "llm" : "deterministic",
      inputs: { days: 7, maxSessions: 20 },
      sessions: [`/home/dev/s${n}.jsonl`],
      deltasGenerated: n,
      applied: { global: n, repo: 0 },
      bulletIds: [`b-${n}`],
      errors: [],
    });

    it("appends and reads records in order, seen by a second store", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      expect(await store.readLog("global", "reflection-runs")).toEqual({ records: [], malformed: 0 });
      await store.appendLog("global", "reflection-runs", [run(1), run(2)]);
      const revert = { type: "revert", runId: "run-1", revertedAt: "2026-03-02T00:00:00.000Z", bulletIds: ["b-1"] };
      await (await makeStore(ctx)).appendLog("global", "reflection-runs", [revert]);
      const expected = { records: [run(1), run(2), revert], malformed: 0 };
      expect(await store.readLog("global", "reflection-runs")).toEqual(expected);
      expect(await (await makeStore(ctx)).readLog("global", "reflection-runs")).toEqual(expected);
      // It is a log of its own.
      expect(await store.readLog("global", "outcomes")).toEqual({ records: [], malformed: 0 });
      if (rawRead) expect(jsonLines(await rawRead(ctx, "reflection-runs.jsonl", store))).toEqual(expected.records);
    });
  });
}
