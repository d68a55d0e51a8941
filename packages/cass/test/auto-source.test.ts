import { describe, expect, it } from "vitest";
import type { DegradedInfo, HistoryHit } from "@cass-memory/core";
import { createFakeEpisodicSource } from "@cass-memory/core/testing";
import { createAutoSource } from "../src/auto-source.js";

const hit = (path: string, snippet: string): HistoryHit => ({ source_path: path, line_number: 1, agent: "claude_code", snippet, origin: { kind: "local" } });
const INDEX_MISSING: DegradedInfo = { available: false, reason: "INDEX_MISSING", message: "cass index missing", suggestedFix: ["cass index --full"] };
const NO_SESSIONS: DegradedInfo = { available: false, reason: "NOT_FOUND", message: "no session files" };

describe("auto episodic source", () => {
  it("uses cass when it answers", async () => {
    const cass = createFakeEpisodicSource({ hits: [hit("/c.jsonl", "webpack from cass")] });
    const native = createFakeEpisodicSource({ hits: [hit("/n.jsonl", "webpack from native")] });
    const auto = createAutoSource({ cass, native });
    const result = await auto.search("webpack", { limit: 5 });
    expect(result.hits.map((h) => h.source_path)).toEqual(["/c.jsonl"]);
    expect(native.calls).toHaveLength(0);
    expect((await auto.health()).name).toBe("fake");
  });

  it("falls back to native when cass is degraded, still reporting cass's failure and who answered", async () => {
    const cass = createFakeEpisodicSource({ degraded: INDEX_MISSING });
    const native = createFakeEpisodicSource({ hits: [hit("/n.jsonl", "webpack from native")] });
    const auto = createAutoSource({ cass, native });
    const result = await auto.search("webpack", { limit: 5 });
    expect(result).toEqual({
      hits: [hit("/n.jsonl", "webpack from native")],
      degraded: { ...INDEX_MISSING, message: "cass index missing History came from the 'fake' source instead.", answeredBy: "fake" },
    });

    const both = createAutoSource({ cass, native: createFakeEpisodicSource({ degraded: NO_SESSIONS }) });
    expect((await both.search("webpack", { limit: 5 })).degraded).toEqual(INDEX_MISSING);
    expect((await both.health()).degraded).toEqual(INDEX_MISSING);
  });

  it("without cass and without session files, reports NOT_FOUND with cass's and the native fixes", async () => {
    const auto = createAutoSource({ cass: null, native: createFakeEpisodicSource({ degraded: NO_SESSIONS }) });
    // The fake reports its degraded from search already; an empty native source with no degraded on search:
    const empty = createFakeEpisodicSource();
    const emptyNative = { ...empty, health: async () => ({ available: false, name: "native", degraded: NO_SESSIONS }) };
    const result = await createAutoSource({ cass: null, native: emptyNative }).search("webpack", { limit: 5 });
    expect(result.hits).toEqual([]);
    expect(result.degraded).toMatchObject({ reason: "NOT_FOUND", suggestedFix: ["cargo install coding-agent-search", "cass index"] });
    expect(result.degraded?.message).toMatch(/cass is not installed and no agent session files were found\. no session files/);
    expect((await auto.health()).degraded?.reason).toBe("NOT_FOUND");
  });

  it("without cass uses native for everything, and export falls back from cass to native", async () => {
    const native = createFakeEpisodicSource({ hits: [hit("/n.jsonl", "redis timeout")], exports: { "/n.jsonl": "session text" } });
    const auto = createAutoSource({ cass: null, native });
    expect((await auto.search("redis", { limit: 5 })).hits).toHaveLength(1);
    expect(await auto.export("/n.jsonl", "text")).toBe("session text");
    const withCass = createAutoSource({ cass: createFakeEpisodicSource({ exports: {} }), native });
    expect(await withCass.export("/n.jsonl", "text")).toBe("session text");
    expect(await withCass.export("/missing.jsonl", "text")).toBeNull();
  });
});
