import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAppError } from "@cass-memory/core";
import type { BlockedEntry, CostEntry, JournalEvent, Layer, LogName, OnboardingState, Playbook, ProcessedSession, Store } from "@cass-memory/core";
import { AWKWARD_STRINGS, NOW_ISO, UNKNOWN_BULLET_FIELDS, makeBullet } from "./awkward-values.js";
import { ORIGINAL_GLOBAL_PROCESSED_LOG, ORIGINAL_ONBOARDING_STATE } from "./original-files.js";
import { registerLearningContract } from "./learning-contract.js";
import { registerTransferContract } from "./transfer-contract.js";

export interface StoreContractContext {
  /** A fresh, empty temp directory for the global layer (it may not exist yet inside: `<tmp>/home/.cass-memory`). */
  globalDir: string;
  /** `<tmp>/repo/.cass` (not created), or null for a store "outside a git repository". */
  repoDir: string | null;
  /**
   * The test's clock: the store must use it for the cost ledger's day and month buckets and
   * `lastUpdated` (the real time unless a test sets a fake one).
   */
  now: () => Date;
}

export type MaybePromise<T> = T | Promise<T>;

export interface StoreContractOptions<S extends Store> {
  /**
   * Damages the layer's playbook storage so that it cannot be decoded (e.g. invalid YAML). Without
   * this hook the corrupt-storage tests are skipped.
   */
  corrupt?: (ctx: StoreContractContext, layer: Layer, store: S) => MaybePromise<void>;
  /** The raw stored bytes of the layer's playbook (anything deep-comparable), to prove they were left alone. */
  snapshot?: (ctx: StoreContractContext, layer: Layer, store: S) => MaybePromise<unknown>;
  /**
   * Appends `text` verbatim (no newline added) to the layer's log or blocked log, to simulate a
   * damaged or torn line. Without this hook the malformed-line tests are skipped.
   */
  appendRaw?: (ctx: StoreContractContext, layer: Layer, log: LogName | "blocked", text: string, store: S) => MaybePromise<void>;
  /**
   * Runs `processes` OS processes at once on the context's directories; process `p` (0-based) calls
   * `mutatePlaybook("global", …)` `perProcess` times, each call adding one bullet whose id is
   * `concurrentBulletId(p, i)` (any valid bullet). Without this hook the multi-process test is skipped.
   */
  concurrentProcesses?: (ctx: StoreContractContext, plan: { processes: number; perProcess: number }) => Promise<void>;
  /**
   * Replaces a file below the global directory (`name` relative to it, e.g. `onboarding-state.json`,
   * `reflections/global.processed.log`) with raw text. Without this hook the tests of damaged and
   * original-format onboarding files are skipped.
   */
  writeRawGlobalFile?: (ctx: StoreContractContext, name: string, text: string, store: S) => MaybePromise<void>;
  /** The raw text of a file below the global directory (null when absent), to check exact bytes. */
  readRawGlobalFile?: (ctx: StoreContractContext, name: string, store: S) => MaybePromise<string | null>;
  /**
   * Runs one OS process per element of `entries`, all at once, on the context's global directory;
   * process `p` calls `costs.record(e)` for each `e` of `entries[p]`, in order, with the real clock.
   * Without this hook the multi-process cost test is skipped.
   */
  concurrentCostProcesses?: (ctx: StoreContractContext, entries: CostEntry[][]) => Promise<void>;
  /** Plan of the multi-process cost test (default 8 processes × 25 records). */
  concurrentCostPlan?: { processes: number; perProcess: number };
  /**
   * Runs `plan.processes` OS processes at once on the context's global directory; process `p` calls
   * `exclusive(plan.name, fn, { waitMs: 60_000 })` `plan.perProcess` times, where for iteration `i`
   * fn appends the line `enter <p> <i>` to `plan.traceFile`, waits a few milliseconds, then appends
   * `exit <p> <i>`. Without this hook the multi-process lock test is skipped.
   */
  concurrentExclusiveProcesses?: (
    ctx: StoreContractContext,
    plan: { processes: number; perProcess: number; name: string; traceFile: string },
  ) => Promise<void>;
  /** Plan of the multi-process lock test (default 4 processes × 8 holds). */
  concurrentExclusivePlan?: { processes: number; perProcess: number };
  /** Plan of the multi-process test (default 4 processes × 10 mutations). */
  concurrentPlan?: { processes: number; perProcess: number };
  /** Per-test timeout for the slow tests (default 60 000 ms). */
  slowTimeoutMs?: number;
}

export function concurrentBulletId(processIndex: number, iteration: number): string {
  return `proc-${processIndex}-${iteration}`;
}

async function expectAppError(promise: Promise<unknown>, code: string): Promise<unknown> {
  let caught: unknown;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught, `expected AppError ${code}`).toBeDefined();
  expect(isAppError(caught)).toBe(true);
  expect((caught as { code: string }).code).toBe(code);
  return caught;
}

function ids(playbook: Playbook | null): string[] {
  return (playbook?.bullets ?? []).map((b) => b.id);
}

const LOG_NAMES: readonly LogName[] = ["outcomes", "context-log", "traumas", "usage", "privacy-audit"];

/**
 * Registers the store contract (vitest `describe`/`it`) for one Store implementation. `makeStore`
 * is called with fresh temp directories per test, and again with the same directories when a test
 * needs a second instance ("another process") on the same data.
 */
export function runStoreContract<S extends Store>(
  name: string,
  makeStore: (ctx: StoreContractContext) => MaybePromise<S>,
  options: StoreContractOptions<S> = {},
): void {
  const slow = options.slowTimeoutMs ?? 60_000;

  describe(`Store contract: ${name}`, () => {
    let root = "";
    let ctx: StoreContractContext;
    let outside: StoreContractContext;
    let fakeNow: Date | null = null;
    const now = (): Date => (fakeNow === null ? new Date() : new Date(fakeNow.getTime()));

    beforeEach(async () => {
      fakeNow = null;
      root = await mkdtemp(join(tmpdir(), "cm-store-contract-"));
      ctx = { globalDir: join(root, "home", ".cass-memory"), repoDir: join(root, "repo", ".cass"), now };
      outside = { globalDir: ctx.globalDir, repoDir: null, now };
    });
    afterEach(async () => {
      await rm(root, { recursive: true, force: true });
    });

    describe("playbook CRUD", () => {
      it("reads null before anything was written", async () => {
        const store = await makeStore(ctx);
        expect(await store.readPlaybook("global")).toBeNull();
        expect(await store.readPlaybook("repo")).toBeNull();
      });

      it("reports its locations", async () => {
        const store = await makeStore(ctx);
        expect(store.locations.globalDir).toBe(ctx.globalDir);
        expect(store.locations.repoDir).toBe(ctx.repoDir);
        expect(typeof store.locations.globalPlaybook).toBe("string");
        expect(typeof store.locations.repoPlaybook).toBe("string");
      });

      it("mutates an absent playbook starting from an empty one, and returns fn's result", async () => {
        const store = await makeStore(ctx);
        const seen = await store.mutatePlaybook("global", (pb) => {
          const before = { name: pb.name, schema: pb.schema_version, bullets: pb.bullets.length, patterns: pb.deprecatedPatterns.length };
          pb.bullets.push(makeBullet("b-one"));
          return before;
        });
        expect(seen).toEqual({ name: "playbook", schema: 2, bullets: 0, patterns: 0 });
        const read = await store.readPlaybook("global");
        expect(ids(read)).toEqual(["b-one"]);
        expect(read?.bullets[0]).toEqual(makeBullet("b-one"));
        expect(typeof read?.metadata.createdAt).toBe("string");
      });

      it("updates and deletes bullets, keeping order", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => {
          pb.bullets.push(makeBullet("b-1"), makeBullet("b-2"), makeBullet("b-3"));
        });
        await store.mutatePlaybook("global", (pb) => {
          const b2 = pb.bullets.find((b) => b.id === "b-2");
          if (!b2) throw new Error("b-2 missing");
          b2.content = "changed";
          b2.helpfulCount = 3;
          b2.feedbackEvents.push({ type: "helpful", timestamp: NOW_ISO, sessionPath: "/s.jsonl" });
          pb.bullets = pb.bullets.filter((b) => b.id !== "b-1");
        });
        const read = await store.readPlaybook("global");
        expect(ids(read)).toEqual(["b-2", "b-3"]);
        expect(read?.bullets[0]?.content).toBe("changed");
        expect(read?.bullets[0]?.helpfulCount).toBe(3);
        expect(read?.bullets[0]?.feedbackEvents).toEqual([{ type: "helpful", timestamp: NOW_ISO, sessionPath: "/s.jsonl" }]);
      });

      it("a mutation scoped to some bullets changes, removes and appends only what fn did", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => {
          pb.bullets.push(makeBullet("b-1"), makeBullet("b-2"), makeBullet("b-3"), makeBullet("b-4"));
        });
        const seen = await store.mutatePlaybook(
          "global",
          (pb) => {
            const ids = pb.bullets.map((b) => b.id);
            const b2 = pb.bullets.find((b) => b.id === "b-2");
            if (!b2) throw new Error("b-2 missing");
            b2.content = "changed in scope";
            pb.bullets = pb.bullets.filter((b) => b.id !== "b-3");
            pb.bullets.push(makeBullet("b-new"));
            return ids;
          },
          { bulletIds: ["b-2", "b-3", "b-absent"] },
        );
        // A store may hand fn the whole playbook or only the scoped bullets; either way these are there.
        expect(seen).toEqual(expect.arrayContaining(["b-2", "b-3"]));
        const read = await store.readPlaybook("global");
        expect(ids(read)).toEqual(["b-1", "b-2", "b-4", "b-new"]);
        expect(read?.bullets[1]?.content).toBe("changed in scope");
        expect(read?.bullets[0]).toEqual(makeBullet("b-1"));
        expect(read?.bullets[2]).toEqual(makeBullet("b-4"));
        // The next unscoped mutation sees the same thing.
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-last")));
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-1", "b-2", "b-4", "b-new", "b-last"]);
      });

      it("readBullets (where the store has it) gives readPlaybook's bullets with those ids, in order", async () => {
        const store = await makeStore(ctx);
        const read = store.readBullets?.bind(store);
        if (read === undefined) {
          // Optional: without it, locating a rule reads the whole playbook (checked in core's tests).
          expect(store.readBullets).toBeUndefined();
          return;
        }
        expect(await read("global", ["b-1"])).toBeNull();
        await store.mutatePlaybook("global", (pb) => {
          pb.name = "named";
          pb.bullets.push(...Array.from({ length: 12 }, (_, i) => makeBullet(`b-${i}`)));
        });
        await store.mutatePlaybook("global", (pb) => void (pb.bullets.find((b) => b.id === "b-3")!.content = "edited"), { bulletIds: ["b-3"] });
        const whole = (await store.readPlaybook("global"))!;
        for (const wanted of [["b-3"], ["b-11", "b-0", "b-7"], ["b-absent"], ["b-5", "b-absent"]]) {
          const got = await read("global", wanted);
          expect(got).toEqual({ ...whole, bullets: whole.bullets.filter((b) => wanted.includes(b.id)) });
        }
        // The caller may change what it got.
        (await read("global", ["b-3"]))!.bullets[0]!.content = "changed by the caller";
        expect((await read("global", ["b-3"]))?.bullets[0]?.content).toBe("edited");
        expect(await read("repo", ["b-1"])).toBeNull();
      });

      it("fills schema defaults for bullets given with only the required fields", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => {
          pb.bullets.push({ id: "b-min", category: "c", content: "x", createdAt: NOW_ISO, updatedAt: NOW_ISO } as Playbook["bullets"][number]);
        });
        const bullet = (await store.readPlaybook("global"))?.bullets[0];
        expect(bullet).toMatchObject({ id: "b-min", scope: "global", kind: "stack_pattern", state: "draft", maturity: "candidate", helpfulCount: 0, tags: [] });
      });

      it("writes nothing when fn throws, and propagates the error", async () => {
        const store = await makeStore(ctx);
        await expect(
          store.mutatePlaybook("global", (pb) => {
            pb.bullets.push(makeBullet("b-never"));
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        expect(await store.readPlaybook("global")).toBeNull();
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-kept")));
        await expect(
          store.mutatePlaybook("global", async (pb) => {
            pb.bullets = [];
            await Promise.resolve();
            throw new Error("async boom");
          }),
        ).rejects.toThrow("async boom");
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-kept"]);
      });

      it("refuses to write a playbook that fails validation, leaving the stored one unchanged", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-ok")));
        await expectAppError(
          store.mutatePlaybook("global", (pb) => {
            pb.bullets.push({ id: "", content: 5 } as unknown as Playbook["bullets"][number]);
          }),
          "VALIDATION_FAILED",
        );
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-ok"]);
      });

      it("does not let callers alias stored state", async () => {
        const store = await makeStore(ctx);
        let captured: Playbook | undefined;
        await store.mutatePlaybook("global", (pb) => {
          pb.bullets.push(makeBullet("b-alias"));
          captured = pb;
        });
        if (captured?.bullets[0]) captured.bullets[0].content = "mutated after the fact";
        const first = await store.readPlaybook("global");
        if (first?.bullets[0]) first.bullets[0].content = "mutated copy";
        first?.bullets.push(makeBullet("b-ghost"));
        const second = await store.readPlaybook("global");
        expect(ids(second)).toEqual(["b-alias"]);
        expect(second?.bullets[0]?.content).toBe("Rule b-alias");
      });

      it("keeps top-level fields: name, description, metadata, deprecatedPatterns", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => {
          pb.description = "my: description # not a comment";
          pb.metadata.lastReflection = NOW_ISO;
          pb.metadata.totalReflections = 7;
          pb.deprecatedPatterns.push({ pattern: "var ", deprecatedAt: NOW_ISO, reason: "use let", replacement: "let " });
        });
        const read = await store.readPlaybook("global");
        expect(read?.description).toBe("my: description # not a comment");
        expect(read?.metadata).toMatchObject({ lastReflection: NOW_ISO, totalReflections: 7 });
        expect(read?.deprecatedPatterns).toEqual([{ pattern: "var ", deprecatedAt: NOW_ISO, reason: "use let", replacement: "let " }]);
      });
    });

    describe("layers", () => {
      it("keeps the global and repo layers apart, even for the same id", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-same", { content: "global version" }), makeBullet("b-g")));
        expect(await store.readPlaybook("repo")).toBeNull();
        const repoStart = await store.mutatePlaybook("repo", (pb) => {
          const start = { name: pb.name, description: pb.description, count: pb.bullets.length };
          pb.bullets.push(makeBullet("b-same", { content: "repo version" }), makeBullet("b-r"));
          return start;
        });
        expect(repoStart).toEqual({ name: "repo-playbook", description: "Project-specific rules for this repository", count: 0 });
        const global = await store.readPlaybook("global");
        const repo = await store.readPlaybook("repo");
        expect(ids(global)).toEqual(["b-same", "b-g"]);
        expect(ids(repo)).toEqual(["b-same", "b-r"]);
        expect(global?.bullets[0]?.content).toBe("global version");
        expect(repo?.bullets[0]?.content).toBe("repo version");
        expect(repo?.name).toBe("repo-playbook");
      });

      it("outside a repository: repo reads are empty and repo writes fail with CONFIG_INVALID", async () => {
        const store = await makeStore(outside);
        expect(store.locations.repoDir).toBeNull();
        expect(store.locations.repoPlaybook).toBeNull();
        expect(await store.readPlaybook("repo")).toBeNull();
        expect(await store.readBlocked("repo")).toEqual([]);
        expect(await store.readLog("repo", "outcomes")).toEqual({ records: [], malformed: 0 });
        let called = false;
        const error = await expectAppError(
          store.mutatePlaybook("repo", () => {
            called = true;
          }),
          "CONFIG_INVALID",
        );
        expect(called).toBe(false);
        expect((error as Error).message).toBe("Not in a git repository. Run from within a git repo.");
        expect((error as { hint?: string }).hint).toBe("cd into a git repository first");
        await expectAppError(store.appendBlocked("repo", [{ id: "b-x", content: "x" }]), "CONFIG_INVALID");
        await expectAppError(store.appendLog("repo", "outcomes", [{ a: 1 }]), "CONFIG_INVALID");
        await expectAppError(store.initialize("repo", { overwrite: false, nowIso: NOW_ISO }), "CONFIG_INVALID");
        // the global layer still works
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-global")));
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-global"]);
      });
    });

    describe("fidelity", () => {
      it("gives back awkward strings exactly in content, category, tags and other string fields", async () => {
        const store = await makeStore(ctx);
        const bullets = AWKWARD_STRINGS.map((value, i) =>
          makeBullet(`b-awk-${i}`, {
            content: value,
            category: value,
            tags: [value, `${value}-tag`],
            reasoning: value,
            sourceSessions: [value],
            searchPointer: value,
          }),
        );
        await store.mutatePlaybook("global", (pb) => {
          pb.bullets.push(...bullets);
          pb.description = AWKWARD_STRINGS.join(" | ");
        });
        const reopened = await makeStore(ctx);
        const read = await reopened.readPlaybook("global");
        expect(read?.bullets).toHaveLength(bullets.length);
        for (const [i, expected] of bullets.entries()) {
          expect(read?.bullets[i], `awkward value #${i}: ${JSON.stringify(AWKWARD_STRINGS[i])}`).toEqual(expected);
        }
        expect(read?.description).toBe(AWKWARD_STRINGS.join(" | "));
      });

      it("keeps awkward ids and numbers exactly", async () => {
        const store = await makeStore(ctx);
        const bullets = [
          makeBullet("0x1F"),
          makeBullet("1e3", { helpfulCount: 1e21, harmfulCount: 0.1 + 0.2, confidenceDecayHalfLifeDays: 1.5 }),
          makeBullet("no", { feedbackEvents: [{ type: "helpful", timestamp: NOW_ISO, decayedValue: 1.3, context: "yes" }] }),
          makeBullet("2026-01-01", { createdAt: "2026-01-01", updatedAt: "2026-01-01T00:00:00Z" }),
        ];
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(...bullets));
        const read = await (await makeStore(ctx)).readPlaybook("global");
        expect(read?.bullets).toEqual(bullets);
      });

      it("preserves unknown fields at every level", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => {
          Object.assign(pb as Record<string, unknown>, { futureTopLevel: { a: [1, 2] } });
          Object.assign(pb.metadata as Record<string, unknown>, { futureMeta: "m" });
          pb.bullets.push(makeBullet("b-unknown", { ...UNKNOWN_BULLET_FIELDS }));
          pb.bullets.push(
            makeBullet("b-fb", { feedbackEvents: [{ type: "harmful", timestamp: NOW_ISO, reason: "future_reason", futureEventField: 1 } as never] }),
          );
        });
        // A mutation that changes nothing else must keep them too.
        await (await makeStore(ctx)).mutatePlaybook("global", (pb) => {
          pb.metadata.totalSessionsProcessed = 1;
        });
        const read = (await (await makeStore(ctx)).readPlaybook("global")) as Record<string, unknown> & Playbook;
        expect(read.futureTopLevel).toEqual({ a: [1, 2] });
        expect((read.metadata as Record<string, unknown>).futureMeta).toBe("m");
        expect(read.bullets[0]).toEqual(makeBullet("b-unknown", { ...UNKNOWN_BULLET_FIELDS }));
        expect(read.bullets[1]?.feedbackEvents[0]).toEqual({ type: "harmful", timestamp: NOW_ISO, reason: "future_reason", futureEventField: 1 });
      });
    });

    describe("persistence and concurrency", () => {
      it("a second store on the same directories sees the data", async () => {
        const first = await makeStore(ctx);
        await first.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-persist")));
        await first.mutatePlaybook("repo", (pb) => void pb.bullets.push(makeBullet("b-repo-persist")));
        await first.appendBlocked("global", [{ id: "b-blocked", content: "blocked rule" }]);
        await first.appendLog("global", "outcomes", [{ sessionId: "s1" }]);
        const second = await makeStore(ctx);
        expect(ids(await second.readPlaybook("global"))).toEqual(["b-persist"]);
        expect(ids(await second.readPlaybook("repo"))).toEqual(["b-repo-persist"]);
        expect((await second.readBlocked("global")).map((e) => e.id)).toEqual(["b-blocked"]);
        expect((await second.readLog("global", "outcomes")).records).toEqual([{ sessionId: "s1" }]);
        // and writes of the second are seen by the first
        await second.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-second")));
        expect(ids(await first.readPlaybook("global"))).toEqual(["b-persist", "b-second"]);
      });

      it(
        "never loses a write when two store instances mutate concurrently (2 × 50)",
        async () => {
          const a = await makeStore(ctx);
          const b = await makeStore(ctx);
          const tasks: Promise<void>[] = [];
          for (let i = 0; i < 50; i += 1) {
            for (const [label, store] of [["a", a], ["b", b]] as const) {
              tasks.push(
                store.mutatePlaybook("global", async (pb) => {
                  await new Promise((resolve) => setTimeout(resolve, 0));
                  pb.bullets.push(makeBullet(`b-${label}-${i}`));
                  pb.metadata.totalReflections += 1;
                }),
              );
            }
          }
          await Promise.all(tasks);
          const read = await (await makeStore(ctx)).readPlaybook("global");
          const got = new Set(ids(read));
          expect(got.size).toBe(100);
          for (let i = 0; i < 50; i += 1) {
            expect(got.has(`b-a-${i}`)).toBe(true);
            expect(got.has(`b-b-${i}`)).toBe(true);
          }
          expect(read?.metadata.totalReflections).toBe(100);
        },
        slow,
      );

      it(
        "concurrent appends to a log from two instances keep every record",
        async () => {
          const a = await makeStore(ctx);
          const b = await makeStore(ctx);
          await Promise.all(
            Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).appendLog("global", "context-log", [{ i }, { i, second: true }])),
          );
          const { records, malformed } = await a.readLog("global", "context-log");
          expect(malformed).toBe(0);
          expect(records).toHaveLength(80);
          expect(new Set(records.map((r) => (r as { i: number }).i)).size).toBe(40);
        },
        slow,
      );

      it.skipIf(!options.concurrentProcesses)(
        "never loses a write across OS processes",
        async () => {
          const plan = options.concurrentPlan ?? { processes: 4, perProcess: 10 };
          await options.concurrentProcesses?.(ctx, plan);
          const read = await (await makeStore(ctx)).readPlaybook("global");
          const got = new Set(ids(read));
          for (let p = 0; p < plan.processes; p += 1) {
            for (let i = 0; i < plan.perProcess; i += 1) expect(got.has(concurrentBulletId(p, i)), concurrentBulletId(p, i)).toBe(true);
          }
          expect(got.size).toBe(plan.processes * plan.perProcess);
        },
        slow,
      );
    });

    describe("blocked log", () => {
      const entries: BlockedEntry[] = [
        { id: "b-1", content: "Cache auth tokens", reason: "caused_bug", forgottenAt: NOW_ISO },
        { id: "b-2", content: "no", reason: "yes: really # not a comment" },
        { id: "b-3", content: "multi\nline 🚀", forgottenAt: NOW_ISO, futureField: [1] } as BlockedEntry,
      ];

      it("appends and reads entries in order, per layer", async () => {
        const store = await makeStore(ctx);
        expect(await store.readBlocked("global")).toEqual([]);
        await store.appendBlocked("global", entries.slice(0, 2));
        await store.appendBlocked("global", entries.slice(2));
        await store.appendBlocked("repo", [{ id: "b-r", content: "repo only" }]);
        expect(await store.readBlocked("global")).toEqual(entries);
        expect(await store.readBlocked("repo")).toEqual([{ id: "b-r", content: "repo only" }]);
      });

      it("rejects an invalid entry without writing anything", async () => {
        const store = await makeStore(ctx);
        await expectAppError(store.appendBlocked("global", [entries[0] as BlockedEntry, { id: "", content: "x" }]), "VALIDATION_FAILED");
        expect(await store.readBlocked("global")).toEqual([]);
      });

      it.skipIf(!options.appendRaw)("skips malformed lines and entries without id/content", async () => {
        const store = await makeStore(ctx);
        await store.appendBlocked("global", [entries[0] as BlockedEntry]);
        await options.appendRaw?.(ctx, "global", "blocked", '{"id": "no-content"}\nnot json at all\n', store);
        await store.appendBlocked("global", [entries[1] as BlockedEntry]);
        await options.appendRaw?.(ctx, "global", "blocked", '{"torn": "line without newline', store);
        await store.appendBlocked("global", [entries[2] as BlockedEntry]);
        expect(await store.readBlocked("global")).toEqual(entries);
      });
    });

    describe("blocked log removal", () => {
      it("removes only the given ids, per layer, and keeps malformed lines", async () => {
        const store = await makeStore(ctx);
        await store.appendBlocked("global", [
          { id: "b-1", content: "one" },
          { id: "b-2", content: "two" },
          { id: "b-1", content: "one again" },
        ]);
        await store.appendBlocked("repo", [{ id: "b-1", content: "repo one" }]);
        if (options.appendRaw) await options.appendRaw(ctx, "global", "blocked", "not json but kept\n", store);
        expect(await store.removeBlocked("global", ["b-1", "b-missing"])).toBe(2);
        expect((await store.readBlocked("global")).map((e) => e.id)).toEqual(["b-2"]);
        expect((await store.readBlocked("repo")).map((e) => e.id)).toEqual(["b-1"]);
        expect(await store.removeBlocked("global", [])).toBe(0);
        expect(await store.removeBlocked("global", ["b-2"])).toBe(1);
        expect(await store.readBlocked("global")).toEqual([]);
        // Appending after a removal still works.
        await store.appendBlocked("global", [{ id: "b-3", content: "three" }]);
        expect((await store.readBlocked("global")).map((e) => e.id)).toEqual(["b-3"]);
      });

      it("outside a repository, removing from the repo layer removes nothing", async () => {
        const store = await makeStore(outside);
        expect(await store.removeBlocked("repo", ["b-1"])).toBe(0);
      });
    });

    describe("audit journal", () => {
      const event = (n: number, layer: Layer = "global"): JournalEvent => ({
        id: `ev-${n}`,
        timestamp: NOW_ISO,
        operation: "add",
        change: "created",
        bulletId: `b-${n}`,
        layer,
        actor: "contract",
        hashBefore: null,
        hashAfter: "0123456789abcdef",
        after: { content: `rule ${n} 🚀`, category: "general" },
      });

      it("appends the events a mutation queues, in order, per layer", async () => {
        const store = await makeStore(ctx);
        expect(await store.readJournal("global")).toEqual([]);
        await store.mutatePlaybook("global", (pb, tx) => {
          pb.bullets.push(makeBullet("b-1"));
          tx.journal([event(1)]);
          tx.journal([event(2)]);
        });
        await store.mutatePlaybook("repo", (pb, tx) => {
          pb.bullets.push(makeBullet("b-9"));
          tx.journal([event(9, "repo")]);
        });
        await store.mutatePlaybook("global", () => undefined);
        expect((await store.readJournal("global")).map((e) => e.id)).toEqual(["ev-1", "ev-2"]);
        expect(await store.readJournal("global")).toEqual([event(1), event(2)]);
        expect((await store.readJournal("repo")).map((e) => e.id)).toEqual(["ev-9"]);
        expect(await (await makeStore(outside)).readJournal("repo")).toEqual([]);
      });

      it("rewrites one bullet's events under the mutation's lock, queued ones included, leaving the others (rewriteJournal)", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb, tx) => {
          pb.bullets.push(makeBullet("b-1"), makeBullet("b-2"));
          tx.journal([event(1), event(2)]);
        });
        let supported = false;
        await store.mutatePlaybook("global", (pb, tx) => {
          pb.bullets.splice(0, 1);
          tx.journal([{ ...event(1), id: "ev-1-removed", operation: "remove", change: "deleted", before: { content: "rule 1 🚀" } }]);
          if (tx.rewriteJournal === undefined) return;
          supported = true;
          tx.rewriteJournal("b-1", (e) => {
            const { before: _b, after: _a, ...rest } = e;
            return { ...rest, purged: true };
          });
        });
        const events = await store.readJournal("global");
        expect(events.map((e) => e.id)).toEqual(["ev-1", "ev-2", "ev-1-removed"]);
        if (!supported) return;
        for (const e of events.filter((x) => x.bulletId === "b-1")) {
          expect(e.before).toBeUndefined();
          expect(e.after).toBeUndefined();
          expect(e.purged).toBe(true);
        }
        expect(events.find((x) => x.id === "ev-2")).toEqual(event(2));
        expect(JSON.stringify(await store.readJournal("global"))).not.toContain("rule 1");
      });

      it("writes no event when the mutation throws or the playbook is invalid", async () => {
        const store = await makeStore(ctx);
        await expect(
          store.mutatePlaybook("global", (pb, tx) => {
            tx.journal([event(1)]);
            pb.bullets.push(makeBullet("b-1"));
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        await expect(
          store.mutatePlaybook("global", (pb, tx) => {
            tx.journal([event(2)]);
            (pb.bullets as unknown[]).push({ id: "" });
          }),
        ).rejects.toBeDefined();
        expect(await store.readJournal("global")).toEqual([]);
        expect(await store.readPlaybook("global")).toBeNull();
      });

      it("refuses an invalid event with VALIDATION_FAILED and writes nothing, the playbook included", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb, tx) => {
          pb.bullets.push(makeBullet("b-1"));
          tx.journal([event(1)]);
        });
        const bad = [{ ...event(2), bulletId: "" }, { ...event(2), hashBefore: 3 }, { ...event(2), layer: "team" }];
        for (const invalid of bad) {
          await expectAppError(
            store.mutatePlaybook("global", (pb, tx) => {
              pb.bullets.push(makeBullet("b-2"));
              tx.journal([event(3), invalid as unknown as JournalEvent]);
            }),
            "VALIDATION_FAILED",
          );
        }
        expect(await store.readJournal("global")).toEqual([event(1)]);
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-1"]);
      });

      it(
        "concurrent mutations from two instances journal exactly one event each",
        async () => {
          const a = await makeStore(ctx);
          const b = await makeStore(ctx);
          await Promise.all(
            Array.from({ length: 30 }, (_, i) =>
              (i % 2 === 0 ? a : b).mutatePlaybook("global", (pb, tx) => {
                pb.bullets.push(makeBullet(`b-${i}`));
                tx.journal([event(i)]);
              }),
            ),
          );
          const events = await a.readJournal("global");
          expect(events).toHaveLength(30);
          expect(new Set(events.map((e) => e.bulletId))).toEqual(new Set(ids(await a.readPlaybook("global"))));
        },
        slow,
      );
    });

    describe("config file", () => {
      it("creates, then read-modify-writes the global config, keeping unknown keys", async () => {
        const store = await makeStore(ctx);
        const first = await store.mutateConfigFile((raw) => {
          raw.crossAgent = { enabled: true, agents: ["claude"] };
          raw.futureKey = { nested: [1, "two"] };
        });
        expect(first).toEqual({ crossAgent: { enabled: true, agents: ["claude"] }, futureKey: { nested: [1, "two"] } });
        const second = await (await makeStore(ctx)).mutateConfigFile((raw) => {
          (raw.crossAgent as { enabled: boolean }).enabled = false;
        });
        expect(second).toEqual({ crossAgent: { enabled: false, agents: ["claude"] }, futureKey: { nested: [1, "two"] } });
      });

      it("leaves the file alone when fn throws", async () => {
        const store = await makeStore(ctx);
        await store.mutateConfigFile((raw) => void (raw.a = 1));
        await expect(
          store.mutateConfigFile((raw) => {
            raw.a = 2;
            throw new Error("no");
          }),
        ).rejects.toThrow("no");
        expect(await store.mutateConfigFile(() => undefined)).toEqual({ a: 1 });
      });
    });

    describe("logs", () => {
      it("appends and reads records of every log, per layer", async () => {
        const store = await makeStore(ctx);
        for (const log of LOG_NAMES) {
          expect(await store.readLog("global", log)).toEqual({ records: [], malformed: 0 });
          await store.appendLog("global", log, [{ log, n: 1, text: "no\n# not a comment 🚀" }]);
          await store.appendLog("global", log, [{ log, n: 2 }, { log, n: 3, nested: { a: [null, true] } }]);
          await store.appendLog("repo", log, [{ log, repo: true }]);
        }
        for (const log of LOG_NAMES) {
          expect(await store.readLog("global", log)).toEqual({
            records: [{ log, n: 1, text: "no\n# not a comment 🚀" }, { log, n: 2 }, { log, n: 3, nested: { a: [null, true] } }],
            malformed: 0,
          });
          expect(await store.readLog("repo", log)).toEqual({ records: [{ log, repo: true }], malformed: 0 });
        }
      });

      it("appending nothing changes nothing", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "traumas", []);
        expect(await store.readLog("global", "traumas")).toEqual({ records: [], malformed: 0 });
      });

      it.skipIf(!options.appendRaw)("counts malformed lines, skips them, and keeps appending after a torn line", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "outcomes", [{ n: 1 }]);
        await options.appendRaw?.(ctx, "global", "outcomes", "this is not json\n", store);
        await store.appendLog("global", "outcomes", [{ n: 2 }]);
        await options.appendRaw?.(ctx, "global", "outcomes", '{"n": 3, "torn', store);
        await store.appendLog("global", "outcomes", [{ n: 4 }]);
        expect(await store.readLog("global", "outcomes")).toEqual({ records: [{ n: 1 }, { n: 2 }, { n: 4 }], malformed: 2 });
      });
    });

    describe("log rewriting (updateLog)", () => {
      const trauma = (id: string, status = "active") => ({ id, pattern: `p-${id}`, status, trigger_event: { session_path: "manual-entry" } });

      it("keeps, replaces and deletes records in order, per layer, and reports the counts", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "traumas", [trauma("t-1"), trauma("t-2"), trauma("t-3"), trauma("t-2")]);
        await store.appendLog("repo", "traumas", [trauma("t-2")]);
        const seen: unknown[] = [];
        const result = await store.updateLog("global", "traumas", (record) => {
          seen.push(record);
          const r = record as { id: string };
          if (r.id === "t-2") return { ...r, status: "healed" };
          if (r.id === "t-3") return null;
          return r.id === "t-1" ? record : undefined;
        });
        expect(result).toEqual({ replaced: 2, removed: 1 });
        expect(seen).toHaveLength(4);
        expect((await store.readLog("global", "traumas")).records).toEqual([trauma("t-1"), trauma("t-2", "healed"), trauma("t-2", "healed")]);
        expect((await store.readLog("repo", "traumas")).records).toEqual([trauma("t-2")]);
        // Appending after a rewrite still works.
        await store.appendLog("global", "traumas", [trauma("t-4")]);
        expect((await store.readLog("global", "traumas")).records.map((r) => (r as { id: string }).id)).toEqual(["t-1", "t-2", "t-2", "t-4"]);
      });

      it("changes nothing when fn keeps everything, when the log is missing, and outside a repository", async () => {
        const store = await makeStore(ctx);
        expect(await store.updateLog("global", "traumas", () => null)).toEqual({ replaced: 0, removed: 0 });
        await store.appendLog("global", "traumas", [trauma("t-1")]);
        expect(await store.updateLog("global", "traumas", (r) => r)).toEqual({ replaced: 0, removed: 0 });
        expect((await store.readLog("global", "traumas")).records).toEqual([trauma("t-1")]);
        const outsideStore = await makeStore(outside);
        expect(await outsideStore.updateLog("repo", "traumas", () => null)).toEqual({ replaced: 0, removed: 0 });
      });

      it("deleting every record leaves an empty log that can be appended to", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "outcomes", [{ n: 1 }, { n: 2 }]);
        expect(await store.updateLog("global", "outcomes", () => null)).toEqual({ replaced: 0, removed: 2 });
        expect(await store.readLog("global", "outcomes")).toEqual({ records: [], malformed: 0 });
        await store.appendLog("global", "outcomes", [{ n: 3 }]);
        expect((await store.readLog("global", "outcomes")).records).toEqual([{ n: 3 }]);
      });

      it.skipIf(!options.appendRaw)("keeps lines that are not valid JSON, without showing them to fn", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "traumas", [trauma("t-1")]);
        await options.appendRaw?.(ctx, "global", "traumas", "not json but kept\n", store);
        await store.appendLog("global", "traumas", [trauma("t-2")]);
        const seen: string[] = [];
        const result = await store.updateLog("global", "traumas", (record) => {
          seen.push((record as { id: string }).id);
          return (record as { id: string }).id === "t-1" ? null : record;
        });
        expect(result).toEqual({ replaced: 0, removed: 1 });
        expect(seen).toEqual(["t-1", "t-2"]);
        expect(await store.readLog("global", "traumas")).toEqual({ records: [trauma("t-2")], malformed: 1 });
      });

      it("a second store on the same directories sees the rewrite", async () => {
        const store = await makeStore(ctx);
        await store.appendLog("global", "traumas", [trauma("t-1"), trauma("t-2")]);
        await store.updateLog("global", "traumas", (r) => ((r as { id: string }).id === "t-1" ? { ...(r as object), status: "healed" } : r));
        const other = await makeStore(ctx);
        expect((await other.readLog("global", "traumas")).records).toEqual([trauma("t-1", "healed"), trauma("t-2")]);
      });
    });

    describe("initialize and layerStatus", () => {
      it("global: creates every expected file, then reports them as existing", async () => {
        const store = await makeStore(ctx);
        const before = await store.layerStatus("global");
        expect(before.expected.length).toBeGreaterThan(0);
        expect(before.present).toEqual([]);
        const first = await store.initialize("global", { overwrite: false, nowIso: NOW_ISO });
        expect([...first.created].sort()).toEqual([...before.expected].sort());
        expect(first.existed).toEqual([]);
        expect(first.overwritten).toEqual([]);
        expect(first.backups).toEqual([]);
        const after = await store.layerStatus("global");
        expect([...after.present].sort()).toEqual([...after.expected].sort());
        const playbook = await store.readPlaybook("global");
        expect(playbook).toMatchObject({ schema_version: 2, name: "playbook", bullets: [], deprecatedPatterns: [] });
        expect(playbook?.metadata.createdAt).toBe(NOW_ISO);
        const second = await store.initialize("global", { overwrite: false, nowIso: NOW_ISO });
        expect(second.created).toEqual([]);
        expect([...second.existed].sort()).toEqual([...before.expected].sort());
      });

      it("without overwrite only missing files are created and data is kept", async () => {
        const store = await makeStore(ctx);
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-keep")));
        await store.appendBlocked("global", [{ id: "b-gone", content: "blocked" }]);
        const result = await store.initialize("global", { overwrite: false, nowIso: NOW_ISO });
        expect(result.existed).toContain("blocked.log");
        expect(result.created).not.toContain("blocked.log");
        expect(result.overwritten).toEqual([]);
        expect(ids(await store.readPlaybook("global"))).toEqual(["b-keep"]);
        expect((await store.readBlocked("global")).map((e) => e.id)).toEqual(["b-gone"]);
      });

      it("global overwrite backs up and resets the playbook", async () => {
        const store = await makeStore(ctx);
        await store.initialize("global", { overwrite: false, nowIso: NOW_ISO });
        await store.mutatePlaybook("global", (pb) => void pb.bullets.push(makeBullet("b-old")));
        const result = await store.initialize("global", { overwrite: true, nowIso: "2026-02-02T00:00:00.000Z" });
        expect(result.overwritten.length).toBeGreaterThan(0);
        expect(result.backups.length).toBe(result.overwritten.length);
        for (const backup of result.backups) expect(backup.backup).toMatch(/\.backup\.\d+$/);
        expect(result.backups.map((b) => b.backup.replace(/\.backup\.\d+$/, ""))).toEqual(result.backups.map((b) => b.file));
        expect(result.created).toEqual([]);
        const playbook = await store.readPlaybook("global");
        expect(playbook?.bullets).toEqual([]);
        expect(playbook?.metadata.createdAt).toBe("2026-02-02T00:00:00.000Z");
      });

      it("repo: creates its files, and overwrite resets playbook and blocked log with backups", async () => {
        const store = await makeStore(ctx);
        const status = await store.layerStatus("repo");
        expect(status.present).toEqual([]);
        const first = await store.initialize("repo", { overwrite: false, nowIso: NOW_ISO });
        expect([...first.created].sort()).toEqual([...status.expected].sort());
        const playbook = await store.readPlaybook("repo");
        expect(playbook).toMatchObject({ name: "repo-playbook", description: "Project-specific rules for this repository", bullets: [] });
        await store.mutatePlaybook("repo", (pb) => void pb.bullets.push(makeBullet("b-repo")));
        await store.appendBlocked("repo", [{ id: "b-x", content: "x" }]);
        const again = await store.initialize("repo", { overwrite: true, nowIso: NOW_ISO });
        expect([...again.overwritten].sort()).toEqual([...status.expected].sort());
        expect(again.backups).toHaveLength(status.expected.length);
        expect(await store.readBlocked("repo")).toEqual([]);
        expect((await store.readPlaybook("repo"))?.bullets).toEqual([]);
        // the global layer is not touched by a repo init
        expect((await store.layerStatus("global")).present).toEqual([]);
      });

      it("outside a repository the repo layer reports nothing present", async () => {
        const store = await makeStore(outside);
        const status = await store.layerStatus("repo");
        expect(status.present).toEqual([]);
        expect(status.expected.length).toBeGreaterThan(0);
      });
    });

    describe("onboarding state", () => {
      const STATE_FILE = "onboarding-state.json";
      const session = (n: number, rules = 0, extra: Record<string, unknown> = {}) => ({
        path: `/home/dev/.claude/projects/app/s${n}.jsonl`,
        processedAt: NOW_ISO,
        rulesExtracted: rules,
        ...extra,
      });

      it("reads null before anything was written; a mutation starts from a fresh version-1 state and recomputes the stats", async () => {
        const store = await makeStore(ctx);
        expect(await store.readOnboardingState()).toBeNull();
        const seen = await store.mutateOnboardingState((state) => {
          const before = { version: state.version, sessions: state.processedSessions.length, stats: { ...state.stats } };
          state.processedSessions.push(session(1, 2), session(2, 0, { skipped: true }));
          state.stats = { totalSessionsProcessed: 99, totalRulesExtracted: 99 };
          state.lastUpdatedAt = NOW_ISO;
          return before;
        }, { nowIso: NOW_ISO });
        expect(seen).toEqual({ version: 1, sessions: 0, stats: { totalSessionsProcessed: 0, totalRulesExtracted: 0 } });
        const read = await (await makeStore(ctx)).readOnboardingState();
        expect(read).not.toBeNull();
        expect(read?.version).toBe(1);
        expect(read?.startedAt).toBe(NOW_ISO);
        expect(read?.lastUpdatedAt).toBe(NOW_ISO);
        expect(read?.processedSessions).toEqual([session(1, 2), session(2, 0, { skipped: true })]);
        expect(read?.stats).toEqual({ totalSessionsProcessed: 2, totalRulesExtracted: 2 });
      });

      it("keeps unknown fields of the state and of its entries", async () => {
        const store = await makeStore(ctx);
        await store.mutateOnboardingState((state) => {
          (state as Record<string, unknown>).futureField = { nested: [1, "two"] };
          state.processedSessions.push(session(1, 1, { note: "kept 🚀" }));
        });
        await store.mutateOnboardingState((state) => {
          state.processedSessions.push(session(2));
        });
        const read = (await store.readOnboardingState()) as (OnboardingState & { futureField?: unknown }) | null;
        expect(read?.futureField).toEqual({ nested: [1, "two"] });
        expect(read?.processedSessions[0]).toEqual(session(1, 1, { note: "kept 🚀" }));
        expect(read?.stats).toEqual({ totalSessionsProcessed: 2, totalRulesExtracted: 1 });
      });

      it("writes nothing when fn throws or leaves the state invalid", async () => {
        const store = await makeStore(ctx);
        await store.mutateOnboardingState((state) => void state.processedSessions.push(session(1, 1)));
        const before = await store.readOnboardingState();
        await expect(
          store.mutateOnboardingState((state) => {
            state.processedSessions.push(session(2));
            throw new Error("boom");
          }),
        ).rejects.toThrow("boom");
        await expectAppError(
          store.mutateOnboardingState((state) => {
            state.processedSessions.push(session(3, -1));
          }),
          "VALIDATION_FAILED",
        );
        expect(await store.readOnboardingState()).toEqual(before);
      });

      it(
        "never loses an entry when two store instances mutate concurrently (2 × 20)",
        async () => {
          const a = await makeStore(ctx);
          const b = await makeStore(ctx);
          await Promise.all(
            Array.from({ length: 40 }, (_, i) =>
              (i % 2 === 0 ? a : b).mutateOnboardingState(async (state) => {
                await new Promise((resolve) => setTimeout(resolve, 0));
                state.processedSessions.push(session(i, 1));
              }),
            ),
          );
          const read = await a.readOnboardingState();
          expect(new Set(read?.processedSessions.map((s) => s.path)).size).toBe(40);
          expect(read?.stats).toEqual({ totalSessionsProcessed: 40, totalRulesExtracted: 40 });
        },
        slow,
      );

      it.skipIf(!options.writeRawGlobalFile)("an invalid file or another version reads as null, and the next mutation starts afresh", async () => {
        const store = await makeStore(ctx);
        const write = (text: string) => options.writeRawGlobalFile?.(ctx, STATE_FILE, text, store);
        const valid = { version: 1, startedAt: NOW_ISO, lastUpdatedAt: NOW_ISO, processedSessions: [session(1, 3)], stats: { totalSessionsProcessed: 1, totalRulesExtracted: 3 } };
        for (const text of ["{ not json", "[]", "null", "", JSON.stringify({ ...valid, version: 2 }), JSON.stringify({ ...valid, processedSessions: [{ path: 1 }] })]) {
          await write(text);
          expect(await store.readOnboardingState(), text).toBeNull();
        }
        await write(JSON.stringify({ ...valid, version: 2 }));
        await store.mutateOnboardingState((state) => void state.processedSessions.push(session(9)));
        const read = await store.readOnboardingState();
        expect(read?.version).toBe(1);
        // Without options.nowIso a fresh state is dated by the store's own clock.
        expect(Number.isNaN(Date.parse(read?.startedAt ?? ""))).toBe(false);
        expect(read?.processedSessions).toEqual([session(9)]);
        expect(read?.stats).toEqual({ totalSessionsProcessed: 1, totalRulesExtracted: 0 });
      });

      it.skipIf(!options.writeRawGlobalFile)("loads the state file the original cm wrote, and keeps it on a mutation", async () => {
        const text = ORIGINAL_ONBOARDING_STATE;
        const store = await makeStore(ctx);
        await options.writeRawGlobalFile?.(ctx, STATE_FILE, text, store);
        const read = await store.readOnboardingState();
        expect(read).toEqual(JSON.parse(text));
        await store.mutateOnboardingState((state) => void state.processedSessions.push(session(2, 4)));
        const after = await store.readOnboardingState();
        expect(after?.startedAt).toBe(read?.startedAt);
        expect(after?.processedSessions).toEqual([...(read?.processedSessions ?? []), session(2, 4)]);
        expect(after?.stats).toEqual({ totalSessionsProcessed: 2, totalRulesExtracted: 4 });
        if (options.readRawGlobalFile) {
          // Pretty JSON with 2-space indentation, as the original writes it.
          expect(await options.readRawGlobalFile(ctx, STATE_FILE, store)).toBe(JSON.stringify(after, null, 2));
        }
      });
    });

    describe("processed-sessions logs", () => {
      const HEADER = '# JSONL format: {"sessionPath":..., "processedAt":...}';
      const record = (n: number, extra: Partial<ProcessedSession> = {}): ProcessedSession => ({
        sessionPath: `/home/dev/.codex/sessions/s${n}.jsonl`,
        processedAt: NOW_ISO,
        deltasGenerated: n,
        ...extra,
      });

      it("appends and reads records in order, per log, starting a new log with the original's header", async () => {
        const store = await makeStore(ctx);
        expect(await store.readProcessedSessions("global")).toEqual([]);
        await store.appendProcessedSessions("global", [record(1), record(2, { diaryId: "diary-0123456789abcdef" })]);
        await store.appendProcessedSessions("global", [record(3)]);
        await store.appendProcessedSessions("ws-0a1b2c3d", [record(7)]);
        await store.appendProcessedSessions("global", []);
        expect(await (await makeStore(ctx)).readProcessedSessions("global")).toEqual([record(1), record(2, { diaryId: "diary-0123456789abcdef" }), record(3)]);
        expect(await store.readProcessedSessions("ws-0a1b2c3d")).toEqual([record(7)]);
        expect(await store.readProcessedSessions("ws-ffffffff")).toEqual([]);
        if (options.readRawGlobalFile) {
          const raw = await options.readRawGlobalFile(ctx, "reflections/global.processed.log", store);
          expect(raw?.split("\n")[0]).toBe(HEADER);
          expect(raw?.split("\n").filter((l) => l.startsWith("#"))).toHaveLength(1);
        }
      });

      it("rejects bad log names and invalid records without writing anything", async () => {
        const store = await makeStore(ctx);
        for (const log of ["", "ws-XYZ", "../global", "ws-0123abcd/../x", "Global"]) {
          await expectAppError(store.appendProcessedSessions(log, [record(1)]), "INVALID_INPUT");
          await expectAppError(store.readProcessedSessions(log), "INVALID_INPUT");
        }
        await expectAppError(store.appendProcessedSessions("global", [record(1), { processedAt: NOW_ISO } as unknown as ProcessedSession]), "VALIDATION_FAILED");
        expect(await store.readProcessedSessions("global")).toEqual([]);
      });

      it(
        "concurrent appends from two instances keep every record and write the header once",
        async () => {
          const a = await makeStore(ctx);
          const b = await makeStore(ctx);
          await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).appendProcessedSessions("global", [record(i)])));
          const read = await a.readProcessedSessions("global");
          expect(read).toHaveLength(30);
          expect(new Set(read.map((r) => r.sessionPath)).size).toBe(30);
          if (options.readRawGlobalFile) {
            const raw = (await options.readRawGlobalFile(ctx, "reflections/global.processed.log", a)) ?? "";
            expect(raw.split("\n").filter((l) => l === HEADER)).toHaveLength(1);
          }
        },
        slow,
      );

      it.skipIf(!options.writeRawGlobalFile)("reads the original's log, legacy tab-separated lines, and skips damaged lines", async () => {
        const original = ORIGINAL_GLOBAL_PROCESSED_LOG;
        const store = await makeStore(ctx);
        await options.writeRawGlobalFile?.(ctx, "reflections/global.processed.log", original, store);
        expect(await store.readProcessedSessions("global")).toEqual([
          { sessionPath: "/home/dev/.claude/projects/app/s1.jsonl", processedAt: "2026-11-22T11:57:12.500Z", deltasGenerated: 0 },
        ]);
        const legacy = [
          "# id\tsessionPath\tprocessedAt\tdeltasProposed\tdeltasApplied",
          "diary-aaaa\t/old/s1.jsonl\t2025-01-01T00:00:00.000Z\t3\t0",
          "-\t/old/s2.jsonl\t2025-01-02T00:00:00.000Z\t0\t0",
          "not a record",
          '{"sessionPath": "/new/s3.jsonl", "processedAt": "2025-01-03T00:00:00.000Z", "deltasGenerated": 2}',
          '{"torn": ',
          "",
        ].join("\n");
        await options.writeRawGlobalFile?.(ctx, "reflections/ws-0123abcd.processed.log", legacy, store);
        expect(await store.readProcessedSessions("ws-0123abcd")).toEqual([
          { sessionPath: "/old/s1.jsonl", processedAt: "2025-01-01T00:00:00.000Z", diaryId: "diary-aaaa", deltasGenerated: 3 },
          { sessionPath: "/old/s2.jsonl", processedAt: "2025-01-02T00:00:00.000Z", deltasGenerated: 0 },
          { sessionPath: "/new/s3.jsonl", processedAt: "2025-01-03T00:00:00.000Z", deltasGenerated: 2 },
        ]);
        // Appending to a log the original wrote keeps its lines and adds no second header.
        await store.appendProcessedSessions("global", [record(5)]);
        expect((await store.readProcessedSessions("global")).map((r) => r.sessionPath)).toEqual(["/home/dev/.claude/projects/app/s1.jsonl", record(5).sessionPath]);
        if (options.readRawGlobalFile) {
          const raw = (await options.readRawGlobalFile(ctx, "reflections/global.processed.log", store)) ?? "";
          expect(raw.startsWith(original)).toBe(true);
        }
      });
    });

    registerLearningContract({
      makeStore,
      options,
      context: () => ctx,
      setNow: (date) => {
        fakeNow = date;
      },
      slow,
    });

    registerTransferContract({
      makeStore,
      options,
      context: () => ctx,
      setNow: (date) => {
        fakeNow = date;
      },
      slow,
    });

    describe.skipIf(!options.corrupt)("corrupt storage", () => {
      for (const layer of ["global", "repo"] as const) {
        it(`${layer}: reads and mutations fail with PLAYBOOK_CORRUPT and leave the damaged data as it was`, async () => {
          const store = await makeStore(ctx);
          await store.mutatePlaybook(layer, (pb) => void pb.bullets.push(makeBullet("b-before")));
          await options.corrupt?.(ctx, layer, store);
          const before = await options.snapshot?.(ctx, layer, store);
          const error = await expectAppError(store.readPlaybook(layer), "PLAYBOOK_CORRUPT");
          expect((error as Error).message).toMatch(/^Playbook at .+ is invalid: /);
          expect((error as { hint?: string }).hint ?? "").not.toBe("");
          let called = false;
          await expectAppError(
            store.mutatePlaybook(layer, (pb) => {
              called = true;
              pb.bullets = [];
            }),
            "PLAYBOOK_CORRUPT",
          );
          expect(called).toBe(false);
          await expectAppError((await makeStore(ctx)).mutatePlaybook(layer, () => undefined), "PLAYBOOK_CORRUPT");
          await store.initialize(layer, { overwrite: false, nowIso: NOW_ISO });
          if (options.snapshot) expect(await options.snapshot(ctx, layer, store)).toEqual(before);
          // the other layer is unaffected
          const other: Layer = layer === "global" ? "repo" : "global";
          await store.mutatePlaybook(other, (pb) => void pb.bullets.push(makeBullet("b-other")));
          expect(ids(await store.readPlaybook(other))).toContain("b-other");
        });
      }
    });
  });
}
