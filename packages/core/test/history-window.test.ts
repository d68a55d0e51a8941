// Issue 17 (history half), core level: an empty lookback window says when older history exists
// (context and onboard sample), and `cassAvailable` is about the cass CLI only.
import { describe, expect, it } from "vitest";
import { cassAvailableFrom } from "../src/episodic/availability.js";
import { runOperation } from "../src/operation.js";
import { contextOperation } from "../src/operations/context.js";
import { onboardSampleOperation } from "../src/operations/onboard.js";
import type { EpisodicSearchOptions, EpisodicSource, HistoryHit, SessionSummary } from "../src/ports.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";

const NOW = new Date("2026-11-27T12:00:00.000Z");
const DAY = 86_400_000;

/** A source whose history is `ageDays` old: searches with a shorter `days` window find nothing. */
function agedSource(ageDays: number, paths: string[]): EpisodicSource & { searches: EpisodicSearchOptions[] } {
  const at = NOW.getTime() - ageDays * DAY;
  const inWindow = (days: number | undefined) => days === undefined || at >= NOW.getTime() - days * DAY;
  const searches: EpisodicSearchOptions[] = [];
  return {
    name: "aged",
    searches,
    async health() {
      return { available: true, name: "aged" };
    },
    async search(_query, options) {
      searches.push(options);
      if (!inWindow(options.days)) return { hits: [] };
      const hits: HistoryHit[] = paths.map((p) => ({ source_path: p, line_number: 1, agent: "codex", snippet: "rotate the staging database credentials", created_at: at, origin: { kind: "local" } }));
      return { hits };
    },
    async listSessions(options) {
      if (!inWindow(options.days)) return [];
      return paths.map((p): SessionSummary => ({ path: p, agent: "codex", endTime: new Date(at).toISOString() }));
    },
    async export() {
      return null;
    },
    async expand() {
      return null;
    },
  };
}

function depsWith(source: EpisodicSource) {
  const deps = createTestDeps(createMemoryStore({ now: () => NOW.toISOString() }), { episodic: source });
  deps.clock.set(NOW);
  return deps;
}

describe("an empty lookback window", () => {
  it("context reports how many older sessions match and the --days that includes them", async () => {
    const source = agedSource(40, ["/s/a.jsonl", "/s/b.jsonl"]);
    const r = await runOperation(contextOperation, depsWith(source), { task: "rotate the staging database credentials", days: 7 });
    expect(r.historySnippets).toEqual([]);
    expect(r.olderHistory).toEqual({
      sessions: 2,
      days: 7,
      flag: "--days 40",
      message: "No history in the last 7 days, but 2 older session(s) match; use --days 40 to include them.",
    });
    // The probe is a second search without a window.
    expect(source.searches.map((s) => s.days)).toEqual([7, undefined]);
  });

  it("context says nothing extra when the window has history, or when nothing matches at all", async () => {
    const recent = agedSource(2, ["/s/a.jsonl"]);
    const r = await runOperation(contextOperation, depsWith(recent), { task: "rotate the staging database credentials", days: 7 });
    expect(r.historySnippets).toHaveLength(1);
    expect(r.olderHistory).toBeUndefined();
    expect(recent.searches).toHaveLength(1);
    const none = agedSource(40, []);
    expect((await runOperation(contextOperation, depsWith(none), { task: "rotate the staging database credentials", days: 7 })).olderHistory).toBeUndefined();
  });

  it("onboard sample reports older unprocessed sessions instead of only nothing", async () => {
    const source = agedSource(120, ["/s/a.jsonl", "/s/b.jsonl", "/s/c.jsonl"]);
    const r = await runOperation(onboardSampleOperation, depsWith(source), { days: 90 });
    expect(r.sessions).toEqual([]);
    expect(r.olderSessions).toMatchObject({ sessions: 3, days: 90, flag: "--days 120" });
    const wider = await runOperation(onboardSampleOperation, depsWith(agedSource(120, ["/s/a.jsonl"])), { days: 121 });
    expect(wider.sessions.length).toBe(1);
    expect(wider.olderSessions).toBeUndefined();
  });
});

describe("cassAvailableFrom", () => {
  it("is about the cass CLI: installed (even failing) counts, native history does not", () => {
    const native = { available: true, name: "native" };
    const cassMissing = { available: false, name: "cass", degraded: { available: false as const, reason: "NOT_FOUND" as const, message: "no cass" } };
    const cassFailing = { available: false, name: "cass", degraded: { available: false as const, reason: "INDEX_MISSING" as const, message: "index missing" } };
    expect(cassAvailableFrom({ ...native, components: [cassMissing, native] })).toBe(false);
    expect(cassAvailableFrom({ ...native, components: [cassFailing, native] })).toBe(true);
    expect(cassAvailableFrom({ available: true, name: "cass" })).toBe(true);
    expect(cassAvailableFrom(native)).toBe(false);
  });
});
