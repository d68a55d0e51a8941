import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { doctorOperation } from "../src/operations/doctor.js";
import { CASS_NOT_FOUND_DEGRADED, createNullEpisodicSource } from "../src/episodic/null-source.js";
import { createTestDeps } from "../src/testing/fakes.js";
import { createMemoryStore } from "../src/testing/memory-store.js";
import type { EpisodicHealth, EpisodicSource } from "../src/ports.js";

/** A source whose health is given (like `auto`, reporting cass and the native readers). */
function sourceWithHealth(health: EpisodicHealth): EpisodicSource {
  return { ...createNullEpisodicSource(null), name: health.name, health: async () => health };
}

async function doctorWith(health: EpisodicHealth) {
  const deps = createTestDeps(createMemoryStore({ repo: false }), { episodic: sourceWithHealth(health) });
  const result = await runOperation(doctorOperation, deps, {});
  const find = (category: string, item: string) => result.checks.find((c) => c.category === category && c.item === item);
  return { result, cass: find("Cass Integration", "cass"), native: find("Session History", "Native session files") };
}

const cassMissing: EpisodicHealth = { available: false, name: "cass", degraded: { ...CASS_NOT_FOUND_DEGRADED } };

describe("doctor: history sources", () => {
  it("with native session files, a missing cass is only a warning and the native source passes", async () => {
    const native: EpisodicHealth = { available: true, name: "native", sessions: 3, agents: { claude_code: 1, codex: 2 }, roots: ["/h/.claude/projects"] };
    const { result, cass, native: nat } = await doctorWith({ ...native, components: [cassMissing, native] });
    expect(cass).toMatchObject({ status: "warn", message: expect.stringMatching(/optional/) });
    expect(nat).toMatchObject({ status: "pass", message: "3 readable sessions (claude_code 1, codex 2) in 3 session file(s)" });
    expect(result.recommendedActions.map((a) => a.label)).not.toContain("Install cass (enables history)");
  });

  it("with no history anywhere, cass is a failure (the original's report) and the native check says where it looked", async () => {
    const native: EpisodicHealth = { available: false, name: "native", roots: ["/h/.claude/projects", "/h/.codex/sessions"] };
    const { result, cass, native: nat } = await doctorWith({ ...cassMissing, components: [cassMissing, native] });
    expect(cass?.status).toBe("fail");
    expect(nat).toMatchObject({ status: "warn", details: { roots: ["/h/.claude/projects", "/h/.codex/sessions"] } });
    expect(result.overallStatus).toBe("unhealthy");
    expect(result.recommendedActions.map((a) => a.label)).toContain("Install cass (enables history)");
  });

  it("files found but unreadable make the native check a warning naming the agents, how many, and why", async () => {
    const native: EpisodicHealth = {
      available: true,
      name: "native",
      sessions: 2,
      files: 9,
      agents: { claude_code: 2 },
      roots: ["/h/.claude/projects"],
      unreadable: {
        count: 7,
        byAgent: { generic: 4, cline: 3 },
        files: [{ path: "/x/a.json", agent: "generic", reason: "not valid JSON or JSONL" }],
      },
    };
    const { native: nat } = await doctorWith({ ...native, components: [cassMissing, native] });
    expect(nat).toMatchObject({
      status: "warn",
      message:
        "2 readable sessions (claude_code 2) in 9 session file(s); 7 of 9 session file(s) could not be read (cline 3, generic 4), e.g. /x/a.json: not valid JSON or JSONL",
      details: { sessions: 2, files: 9, unreadable: { count: 7 } },
    });
  });

  it("a single source without components is reported as before", async () => {
    const { cass, native } = await doctorWith({ available: true, name: "cass", version: "0.6.25" });
    expect(cass).toMatchObject({ status: "pass", message: "cass available (version 0.6.25)" });
    expect(native).toBeUndefined();
  });
});
