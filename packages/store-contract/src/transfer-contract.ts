import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { isAppError } from "@cass-memory/core";
import type { CostEntry, DiaryEntry, JournalEvent, Layer, LogName, Store, StoreSection, StoreTransfer } from "@cass-memory/core";
import { AWKWARD_STRINGS, NOW_ISO, UNKNOWN_BULLET_FIELDS, makeBullet } from "./awkward-values.js";
import type { MaybePromise, StoreContractContext, StoreContractOptions } from "./run-store-contract.js";

/**
 * Contract of the section-wise transfer (`Store.transfer`, used by `cm storage migrate`): a store
 * filled through its normal methods is copied section by section into a fresh store of the same
 * kind, and every section reads back deep-equal; writes replace a section wholesale and are
 * idempotent. Registered by `runStoreContract` inside its own `describe`.
 */

export interface TransferContractSetup<S extends Store> {
  makeStore: (ctx: StoreContractContext) => MaybePromise<S>;
  options: StoreContractOptions<S>;
  context: () => StoreContractContext;
  setNow: (date: Date | null) => void;
  slow: number;
}

const ALL_LOGS: readonly LogName[] = ["outcomes", "context-log", "traumas", "usage", "privacy-audit", "reflection-runs"];
const JANUARY = new Date("2026-01-15T12:00:00.000Z");
const FEBRUARY = new Date("2026-02-10T09:30:00.000Z");
const DIARY_COUNT = 60;

/** Another pair of directories beside the context's (fresh per test, removed with it). */
function siblingContext(ctx: StoreContractContext, name: string): StoreContractContext {
  const root = dirname(dirname(ctx.globalDir));
  return {
    globalDir: join(root, name, "home", ".cass-memory"),
    repoDir: ctx.repoDir === null ? null : join(root, name, "repo", ".cass"),
    now: ctx.now,
  };
}

function transferOf(store: Store): StoreTransfer {
  expect(store.transfer, "the store implements transfer").toBeDefined();
  return store.transfer as StoreTransfer;
}

async function appErrorCode(promise: Promise<unknown>): Promise<string> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected an AppError").toBeDefined();
  expect(isAppError(caught), String(caught)).toBe(true);
  return (caught as { code: string }).code;
}

function event(n: number, layer: Layer): JournalEvent {
  return {
    id: `ev-${layer}-${n}`,
    timestamp: NOW_ISO,
    operation: "add",
    change: "created",
    bulletId: `b-${layer}-${n}`,
    layer,
    actor: "contract ✓",
    hashBefore: null,
    hashAfter: "0123456789abcdef",
    after: { content: AWKWARD_STRINGS[n % AWKWARD_STRINGS.length], category: "general" },
    futureEventField: { kept: [1, "two"] },
  } as JournalEvent;
}

function diary(n: number): DiaryEntry {
  const text = AWKWARD_STRINGS[n % AWKWARD_STRINGS.length] as string;
  return {
    id: `diary-${n.toString(16).padStart(16, "0")}`,
    sessionPath: `/home/dev/.claude/projects/app-é/s${n} 🚀.jsonl`,
    // Not in the order of writing: the listing order (last written first) must survive the copy.
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, (n * 37) % DIARY_COUNT)).toISOString(),
    agent: n % 2 === 0 ? "claude" : "codex",
    ...(n % 3 === 0 ? { workspace: "/home/dev/app" } : {}),
    duration: n % 4 === 0 ? null : n * 1.5,
    status: (["success", "failure", "mixed"] as const)[n % 3],
    accomplishments: [text],
    decisions: n % 5 === 0 ? [] : [`decision ${n}: ${text}`],
    challenges: [],
    preferences: [],
    keyLearnings: [text, "null"],
    relatedSessions: n % 7 === 0 ? [{ sessionPath: "/s.jsonl", agent: "gemini", relevanceScore: 0.5, snippet: text, futureField: true }] : [],
    tags: [text],
    searchAnchors: [],
    ...(n % 6 === 0 ? { futureDiaryField: { nested: [n, null] } } : {}),
  } as DiaryEntry;
}

function logRecords(log: LogName, layer: Layer): unknown[] {
  return [
    { log, layer, text: AWKWARD_STRINGS.join(" | "), nested: { list: [1, "two", null, true], empty: {} } },
    ...AWKWARD_STRINGS.slice(0, 12).map((value, i) => ({ i, value, unicode: "日本語 ✓ 🚀" })),
    "a bare string record",
    42,
    null,
    [],
  ];
}

function costEntry(n: number): CostEntry {
  return { provider: "openai", model: `gpt-test-${n} ✓`, tokensIn: 1000 + n, tokensOut: 200 + n, cost: n / 64, timestamp: new Date(Date.UTC(2026, 0, 15, 12, 0, n)).toISOString() };
}

/** Fills every kind of record through the store's normal methods. */
async function fill(store: Store, setNow: (date: Date | null) => void): Promise<void> {
  for (const layer of ["global", "repo"] as const) {
    await store.mutatePlaybook(layer, (pb, tx) => {
      pb.description = `${layer}: ${AWKWARD_STRINGS.join(" | ")}`;
      (pb as Record<string, unknown>).futureTopLevel = { nested: ["x", 1, null], flag: false };
      pb.metadata = { ...pb.metadata, totalReflections: 3, futureMeta: "kept ✓" } as typeof pb.metadata;
      pb.deprecatedPatterns.push({ pattern: "var ", deprecatedAt: NOW_ISO, reason: "use let", replacement: "let " });
      AWKWARD_STRINGS.forEach((value, i) => {
        pb.bullets.push(
          makeBullet(`b-${layer}-${i}`, {
            content: value.trim() === "" ? `blank #${i}` : value,
            category: i % 2 === 0 ? "testing" : value || "empty",
            tags: [value, "tag"],
            ...(i % 5 === 0 ? { ...UNKNOWN_BULLET_FIELDS } : {}),
            feedbackEvents:
              i % 3 === 0
                ? [
                    { type: "helpful", timestamp: NOW_ISO, sessionPath: `/s/${i}.jsonl`, context: value, decayedValue: 1.3 },
                    { type: "harmful", timestamp: NOW_ISO, reason: "future_reason", futureEventField: i } as never,
                  ]
                : [],
            helpfulCount: i % 3 === 0 ? 1 : 0,
            harmfulCount: i % 3 === 0 ? 1 : 0,
          }),
        );
      });
      tx.journal([event(1, layer), event(2, layer)]);
    });
    await store.mutatePlaybook(layer, (pb, tx) => {
      const first = pb.bullets[0];
      if (first) first.pinned = true;
      tx.journal([event(3, layer)]);
    });
    await store.appendBlocked(layer, [
      { id: `b-blocked-${layer}`, content: "Blocked rule ✓ \"quoted\" # hash", reason: "no", forgottenAt: NOW_ISO, futureField: [1] } as never,
      { id: `b-blocked-${layer}-2`, content: AWKWARD_STRINGS.join("\n") },
    ]);
    for (const log of ALL_LOGS) {
      if (layer === "repo" && (log === "usage" || log === "privacy-audit")) {
        await store.appendLog(layer, log, []);
        continue;
      }
      await store.appendLog(layer, log, logRecords(log, layer));
    }
  }
  for (let n = 0; n < DIARY_COUNT; n += 1) await store.writeDiary(diary(n));
  await store.appendProcessedSessions("global", [
    { sessionPath: "/home/dev/.claude/projects/app/s1.jsonl", processedAt: NOW_ISO, deltasGenerated: 0 },
    { sessionPath: "/home/dev/é 🚀/s2.jsonl", processedAt: NOW_ISO, diaryId: "diary-0000000000000001", deltasGenerated: 3, futureField: "kept" } as never,
  ]);
  await store.appendProcessedSessions("ws-0123abcd", [{ sessionPath: "/ws/s3.jsonl", processedAt: NOW_ISO, deltasGenerated: 1 }]);
  await store.mutateOnboardingState(
    (state) => {
      state.processedSessions.push({ path: "/home/dev/é/🚀.jsonl", processedAt: NOW_ISO, rulesExtracted: 2, skipped: false, futureField: 1 } as never);
      state.processedSessions.push({ path: "/home/dev/s2.jsonl", processedAt: NOW_ISO, rulesExtracted: 0, skipped: true });
      (state as Record<string, unknown>).futureTop = { x: "kept" };
    },
    { nowIso: NOW_ISO },
  );
  setNow(JANUARY);
  await store.costs.record(costEntry(1));
  await store.costs.record(costEntry(2));
  setNow(FEBRUARY);
  await store.costs.record(costEntry(3));
}

/** The keys a filled store lists (repo `usage` and `privacy-audit` stay empty). */
function expectedKeys(): string[] {
  const layer = (l: Layer, logs: readonly LogName[]): string[] => [`${l}/playbook`, `${l}/journal`, `${l}/blocked`, ...logs.map((log) => `${l}/log/${log}`)];
  return [
    ...layer("global", ALL_LOGS),
    ...layer("repo", ["outcomes", "context-log", "traumas", "reflection-runs"]),
    "diaries",
    "processed/global",
    "processed/ws-0123abcd",
    "onboarding",
    "costs",
  ];
}

async function readAll(transfer: StoreTransfer, keys: readonly string[]): Promise<StoreSection[]> {
  const sections: StoreSection[] = [];
  for (const key of keys) sections.push(await transfer.readSection(key));
  return sections;
}

export function registerTransferContract<S extends Store>(setup: TransferContractSetup<S>): void {
  const { makeStore, options, context, setNow, slow } = setup;

  describe("transfer (storage migration)", () => {
    it(
      "lists every section of a filled store, each as its port methods read it",
      async () => {
        const ctx = context();
        const store = await makeStore(ctx);
        const transfer = transferOf(store);
        expect(await transfer.listSections()).toEqual([]);
        await fill(store, setNow);
        const keys = await transfer.listSections();
        expect(keys).toEqual(expectedKeys());
        const byKey = new Map((await readAll(transfer, keys)).map((s) => [s.key, s]));
        for (const layer of ["global", "repo"] as const) {
          const playbook = byKey.get(`${layer}/playbook`);
          expect(playbook).toEqual({ key: `${layer}/playbook`, kind: "playbook", layer, playbook: await store.readPlaybook(layer) });
          expect(playbook?.kind === "playbook" ? playbook.playbook?.bullets.length : -1).toBe(AWKWARD_STRINGS.length);
          expect(byKey.get(`${layer}/journal`)).toEqual({ key: `${layer}/journal`, kind: "journal", layer, events: await store.readJournal(layer), skipped: 0 });
          expect((await store.readJournal(layer)).map((e) => e.id)).toEqual([1, 2, 3].map((n) => `ev-${layer}-${n}`));
          const blocked = byKey.get(`${layer}/blocked`);
          expect(blocked).toMatchObject({ kind: "blocked", layer, toxic: [], skipped: 0 });
          expect(blocked?.kind === "blocked" ? blocked.blocked : []).toEqual(await store.readBlocked(layer));
          for (const log of ALL_LOGS) {
            const section = await transfer.readSection(`${layer}/log/${log}`);
            const { records, malformed } = await store.readLog(layer, log);
            expect(section).toEqual({ key: `${layer}/log/${log}`, kind: "log", layer, log, records, skipped: malformed });
          }
        }
        const diaries = byKey.get("diaries");
        expect(diaries).toEqual({ key: "diaries", kind: "diaries", entries: await store.listDiaries(), skipped: 0 });
        expect(diaries?.kind === "diaries" ? diaries.entries.length : 0).toBe(DIARY_COUNT);
        expect(byKey.get("processed/global")).toEqual({ key: "processed/global", kind: "processed", log: "global", records: await store.readProcessedSessions("global") });
        expect(byKey.get("onboarding")).toEqual({ key: "onboarding", kind: "onboarding", state: await store.readOnboardingState() });
        const costs = byKey.get("costs");
        expect(costs?.kind === "costs" ? Object.keys(costs.months) : []).toEqual(["2026-01", "2026-02"]);
        expect(costs?.kind === "costs" ? costs.months["2026-01"] : []).toEqual([costEntry(1), costEntry(2)]);
        setNow(FEBRUARY);
        expect(costs?.kind === "costs" ? costs.totals : null).toEqual(await store.costs.totals());
      },
      slow,
    );

    it(
      "copies every section into an empty store: every section, listing and port read is the same",
      async () => {
        const ctx = context();
        const source = await makeStore(ctx);
        await fill(source, setNow);
        const keys = await transferOf(source).listSections();
        const sections = await readAll(transferOf(source), keys);
        const targetCtx = siblingContext(ctx, "target");
        const target = await makeStore(targetCtx);
        for (const section of sections) await transferOf(target).writeSection(section);

        // Read through a second instance ("another process") on the target's data.
        const reopened = await makeStore(targetCtx);
        expect(await transferOf(reopened).listSections()).toEqual(keys);
        expect(await readAll(transferOf(reopened), keys)).toEqual(sections);
        for (const layer of ["global", "repo"] as const) {
          expect(await reopened.readPlaybook(layer)).toEqual(await source.readPlaybook(layer));
          expect(await reopened.readJournal(layer)).toEqual(await source.readJournal(layer));
          expect(await reopened.readBlocked(layer)).toEqual(await source.readBlocked(layer));
          for (const log of ALL_LOGS) expect(await reopened.readLog(layer, log)).toEqual(await source.readLog(layer, log));
        }
        expect(await reopened.listDiaries()).toEqual(await source.listDiaries());
        expect(await reopened.listDiaries({ limit: 5 })).toEqual(await source.listDiaries({ limit: 5 }));
        expect(await reopened.readDiary(diary(7).id)).toEqual(diary(7));
        expect(await reopened.readProcessedSessions("global")).toEqual(await source.readProcessedSessions("global"));
        expect(await reopened.readProcessedSessions("ws-0123abcd")).toEqual(await source.readProcessedSessions("ws-0123abcd"));
        expect(await reopened.readOnboardingState()).toEqual(await source.readOnboardingState());
        setNow(FEBRUARY);
        expect(await reopened.costs.totals()).toEqual(await source.costs.totals());
        // The copy keeps working as a store: mutations, appends and a new diary (listed first).
        await reopened.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-after-copy")));
        expect((await reopened.readPlaybook("global"))?.bullets.map((b) => b.id).slice(-2)).toEqual([`b-global-${AWKWARD_STRINGS.length - 1}`, "b-after-copy"]);
        await reopened.appendProcessedSessions("global", [{ sessionPath: "/after.jsonl", processedAt: NOW_ISO, deltasGenerated: 0 }]);
        expect((await reopened.readProcessedSessions("global")).map((r) => r.sessionPath).at(-1)).toBe("/after.jsonl");
        const later = { ...diary(DIARY_COUNT + 1), timestamp: "2030-01-01T00:00:00.000Z" };
        await reopened.writeDiary(later);
        expect((await reopened.listDiaries({ limit: 1 }))[0]?.id).toBe(later.id);
        const costsAfter = await reopened.costs.record(costEntry(9));
        expect(costsAfter.allTime).toBeCloseTo((1 + 2 + 3 + 9) / 64, 10);
      },
      slow,
    );

    it(
      "writing a section replaces what the target held, and writing it twice equals writing it once",
      async () => {
        const ctx = context();
        const source = await makeStore(ctx);
        await fill(source, setNow);
        const keys = await transferOf(source).listSections();
        const sections = await readAll(transferOf(source), keys);

        const target = await makeStore(siblingContext(ctx, "target"));
        // The target already holds other data in the same sections.
        await target.mutatePlaybook("global", (pb, tx) => {
          pb.bullets.push(makeBullet("b-stale"));
          tx.journal([{ ...event(99, "global"), id: "ev-stale" }]);
        });
        await target.appendBlocked("repo", [{ id: "b-stale-blocked", content: "stale" }]);
        await target.appendLog("global", "outcomes", [{ stale: true }]);
        await target.writeDiary({ ...diary(500), id: "diary-stale" });
        await target.appendProcessedSessions("global", [{ sessionPath: "/stale.jsonl", processedAt: NOW_ISO, deltasGenerated: 9 }]);
        setNow(new Date("2025-12-01T00:00:00.000Z"));
        await target.costs.record(costEntry(40));

        for (let round = 0; round < 2; round += 1) {
          for (const section of sections) await transferOf(target).writeSection(section);
          expect(await transferOf(target).listSections()).toEqual(keys);
          expect(await readAll(transferOf(target), keys)).toEqual(sections);
        }
        expect((await target.readPlaybook("global"))?.bullets.some((b) => b.id === "b-stale")).toBe(false);
        expect((await target.readJournal("global")).some((e) => e.id === "ev-stale")).toBe(false);
        expect(await target.readDiary("diary-stale")).toBeNull();
        expect((await target.listDiaries()).length).toBe(DIARY_COUNT);
        expect((await target.readLog("global", "outcomes")).records).toEqual(logRecords("outcomes", "global"));
        const costs = await transferOf(target).readSection("costs");
        expect(costs.kind === "costs" ? Object.keys(costs.months) : []).toEqual(["2026-01", "2026-02"]);
      },
      slow,
    );

    it("an empty section clears the target's records and is no longer listed", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      const transfer = transferOf(store);
      await store.appendLog("global", "outcomes", [{ a: 1 }]);
      await store.appendBlocked("global", [{ id: "b-x", content: "x" }]);
      await store.writeDiary(diary(1));
      await store.appendProcessedSessions("global", [{ sessionPath: "/p.jsonl", processedAt: NOW_ISO, deltasGenerated: 0 }]);
      await store.mutateOnboardingState(() => undefined, { nowIso: NOW_ISO });
      setNow(JANUARY);
      await store.costs.record(costEntry(1));
      expect(await transfer.listSections()).toEqual(["global/blocked", "global/log/outcomes", "diaries", "processed/global", "onboarding", "costs"]);
      for (const key of ["global/blocked", "global/log/outcomes", "diaries", "processed/global", "onboarding", "costs"]) {
        const empty = (await transferOf(await makeStore(siblingContext(ctx, "empty"))).readSection(key)) as StoreSection;
        await transfer.writeSection(empty);
        expect(await transfer.readSection(key)).toEqual(empty);
      }
      expect(await transfer.listSections()).toEqual([]);
      expect((await store.readLog("global", "outcomes")).records).toEqual([]);
      expect(await store.readBlocked("global")).toEqual([]);
      expect(await store.listDiaries()).toEqual([]);
      expect(await store.readProcessedSessions("global")).toEqual([]);
      expect(await store.readOnboardingState()).toBeNull();
      setNow(JANUARY);
      expect((await store.costs.totals()).allTime).toBe(0);
    });

    for (const layer of ["global", "repo"] as const) {
      it(`${layer}: a null playbook section removes the layer's playbook; a later mutation starts afresh`, async () => {
        const ctx = context();
        const store = await makeStore(ctx);
        const transfer = transferOf(store);
        await store.mutatePlaybook(layer, (pb) => void pb.bullets.push(makeBullet("b-gone")));
        expect(await store.readPlaybook(layer)).not.toBeNull();
        const removal: StoreSection = { key: `${layer}/playbook`, kind: "playbook", layer, playbook: null };
        await transfer.writeSection(removal);
        await transfer.writeSection(removal);
        expect(await store.readPlaybook(layer)).toBeNull();
        expect(await (await makeStore(ctx)).readPlaybook(layer)).toBeNull();
        expect(await transfer.readSection(`${layer}/playbook`)).toEqual(removal);
        expect(await transfer.listSections()).not.toContain(`${layer}/playbook`);
        await store.mutatePlaybook(layer, (pb) => void pb.bullets.push(makeBullet("b-new")));
        expect((await store.readPlaybook(layer))?.bullets.map((b) => b.id)).toEqual(["b-new"]);
        // A playbook written after a removal is read as written, also by a store that read before.
        const replacement = { ...(await store.readPlaybook(layer))!, bullets: [makeBullet("b-replaced")] };
        await transfer.writeSection({ key: `${layer}/playbook`, kind: "playbook", layer, playbook: null });
        await transfer.writeSection({ key: `${layer}/playbook`, kind: "playbook", layer, playbook: replacement });
        expect((await store.readPlaybook(layer))?.bullets.map((b) => b.id)).toEqual(["b-replaced"]);
      });
    }

    it("the legacy toxic log is a part of the blocked section, kept apart from the blocked log", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      const section: StoreSection = {
        key: "repo/blocked",
        kind: "blocked",
        layer: "repo",
        blocked: [{ id: "b-1", content: "blocked ✓", futureField: 1 }],
        toxic: [{ id: "b-toxic", content: "toxic rule", reason: "legacy" }],
        skipped: 0,
      };
      await transferOf(store).writeSection(section);
      expect(await transferOf(store).readSection("repo/blocked")).toEqual(section);
      expect((await store.readBlocked("repo")).map((e) => e.id)).toEqual(["b-1", "b-toxic"]);
      // Removing from the blocked log leaves the legacy log alone.
      expect(await store.removeBlocked("repo", ["b-1", "b-toxic"])).toBe(1);
      expect(await transferOf(store).readSection("repo/blocked")).toEqual({ ...section, blocked: [] });
      const copy = await makeStore(siblingContext(ctx, "target"));
      await transferOf(copy).writeSection(await transferOf(store).readSection("repo/blocked"));
      expect((await copy.readBlocked("repo")).map((e) => e.id)).toEqual(["b-toxic"]);
    });

    it.skipIf(!options.appendRaw)("lines that cannot be parsed are counted in skipped and not carried", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      await store.appendLog("global", "outcomes", [{ n: 1 }]);
      await options.appendRaw?.(ctx, "global", "outcomes", '{"torn": \n', store);
      await store.appendLog("global", "outcomes", [{ n: 2 }]);
      await store.appendBlocked("repo", [{ id: "b-1", content: "one" }]);
      await options.appendRaw?.(ctx, "repo", "blocked", "not json at all\n", store);
      const log = await transferOf(store).readSection("global/log/outcomes");
      expect(log).toEqual({ key: "global/log/outcomes", kind: "log", layer: "global", log: "outcomes", records: [{ n: 1 }, { n: 2 }], skipped: 1 });
      const blocked = await transferOf(store).readSection("repo/blocked");
      expect(blocked).toMatchObject({ blocked: [{ id: "b-1", content: "one" }], toxic: [], skipped: 1 });
      const target = await makeStore(siblingContext(ctx, "target"));
      await transferOf(target).writeSection(log);
      await transferOf(target).writeSection(blocked);
      expect(await transferOf(target).readSection("global/log/outcomes")).toEqual({ ...log, skipped: 0 });
      expect(await transferOf(target).readSection("repo/blocked")).toEqual({ ...blocked, skipped: 0 });
    });

    it.skipIf(!options.writeRawGlobalFile)("damaged diary entries are counted in skipped and not carried", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      await store.writeDiary(diary(1));
      await options.writeRawGlobalFile?.(ctx, "diary/diary-broken.json", "{ not json", store);
      await options.writeRawGlobalFile?.(ctx, "diary/diary-invalid.json", JSON.stringify({ id: "diary-invalid" }), store);
      expect(await transferOf(store).listSections()).toEqual(["diaries"]);
      const section = await transferOf(store).readSection("diaries");
      expect(section).toEqual({ key: "diaries", kind: "diaries", entries: [diary(1)], skipped: 2 });
      const target = await makeStore(siblingContext(ctx, "target"));
      await transferOf(target).writeSection(section);
      expect(await transferOf(target).readSection("diaries")).toEqual({ ...section, skipped: 0 });
    });

    it("rejects unknown keys and invalid sections, writing nothing", async () => {
      const ctx = context();
      const store = await makeStore(ctx);
      const transfer = transferOf(store);
      await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-keep")));
      await store.writeDiary(diary(1));
      for (const key of ["global/nothing", "elsewhere/playbook", "global/log/unknown", "processed/not-a-log", "", "diaries/x"]) {
        expect(await appErrorCode(transfer.readSection(key)), key).toBe("INVALID_INPUT");
      }
      const before = await readAll(transfer, await transfer.listSections());
      const invalid: unknown[] = [
        { key: "global/journal", kind: "playbook", layer: "global", playbook: null },
        { key: "global/playbook", kind: "playbook", layer: "repo", playbook: null },
        { key: "global/playbook", kind: "playbook", layer: "global", playbook: { bullets: [{ id: 5 }] } },
        { key: "diaries", kind: "diaries", entries: [{ ...diary(2), id: "../escape" }], skipped: 0 },
        { key: "diaries", kind: "diaries", entries: [diary(2), diary(2)], skipped: 0 },
        { key: "diaries", kind: "diaries", entries: [{ id: "diary-no-session" }], skipped: 0 },
        { key: "global/journal", kind: "journal", layer: "global", events: [{ id: "ev" }], skipped: 0 },
        { key: "processed/global", kind: "processed", log: "global", records: [{ processedAt: NOW_ISO }] },
        { key: "onboarding", kind: "onboarding", state: { version: 2 } },
        { key: "costs", kind: "costs", months: { "2026-13": [] }, totals: null, skipped: 0 },
        { key: "global/log/outcomes", kind: "log", layer: "global", log: "traumas", records: [], skipped: 0 },
      ];
      for (const section of invalid) {
        expect(await appErrorCode(transfer.writeSection(section as StoreSection)), JSON.stringify(section)).toBe("VALIDATION_FAILED");
      }
      expect(await readAll(transfer, await transfer.listSections())).toEqual(before);
    });

    it("outside a repository: no repo sections; reading one gives it empty, writing one fails with CONFIG_INVALID", async () => {
      const ctx = context();
      const outside: StoreContractContext = { ...ctx, repoDir: null };
      const store = await makeStore(outside);
      await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-1")));
      expect(await transferOf(store).listSections()).toEqual(["global/playbook"]);
      expect(await transferOf(store).readSection("repo/playbook")).toEqual({ key: "repo/playbook", kind: "playbook", layer: "repo", playbook: null });
      expect(await transferOf(store).readSection("repo/log/traumas")).toEqual({ key: "repo/log/traumas", kind: "log", layer: "repo", log: "traumas", records: [], skipped: 0 });
      const code = await appErrorCode(transferOf(store).writeSection({ key: "repo/log/traumas", kind: "log", layer: "repo", log: "traumas", records: [{ a: 1 }], skipped: 0 }));
      expect(code).toBe("CONFIG_INVALID");
    });
  });
}
