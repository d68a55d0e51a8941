import { cp, readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createYamlStore } from "../src/index.js";
import { FIXTURE_HOME, tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let repoDir = "";
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir("cm-fixture-"));
  globalDir = join(dir, "home", ".cass-memory");
  repoDir = join(dir, "repo", ".cass");
  await cp(join(FIXTURE_HOME, "home"), join(dir, "home"), { recursive: true });
  await cp(join(FIXTURE_HOME, "repo"), join(dir, "repo"), { recursive: true });
});
afterEach(async () => {
  await cleanup();
});

function open() {
  return createYamlStore({ globalDir, repoDir, logger: testLogger(), parseCache: false });
}

/** Every key/value of the raw file must still be there (defaults may be added, nothing lost). */
function expectSuperset(actual: unknown, raw: unknown, path = "$"): void {
  if (Array.isArray(raw)) {
    expect(Array.isArray(actual), path).toBe(true);
    expect((actual as unknown[]).length, path).toBe(raw.length);
    raw.forEach((item, i) => expectSuperset((actual as unknown[])[i], item, `${path}[${i}]`));
  } else if (raw !== null && typeof raw === "object") {
    expect(actual !== null && typeof actual === "object", path).toBe(true);
    for (const [key, value] of Object.entries(raw)) expectSuperset((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
  } else {
    expect(actual, path).toEqual(raw);
  }
}

describe("round trip of files written by the original cm", () => {
  for (const layer of ["global", "repo"] as const) {
    it(`${layer}: loads, survives a no-op mutation without losing anything`, async () => {
      const file = layer === "global" ? join(globalDir, "playbook.yaml") : join(repoDir, "playbook.yaml");
      const original = await readFile(file, "utf8");
      const raw = parse(original) as unknown;
      const before = await open().readPlaybook(layer);
      expect(before).not.toBeNull();
      expectSuperset(before, raw);
      await open().mutatePlaybook(layer, () => undefined);
      const after = await open().readPlaybook(layer);
      expect(after).toEqual(before);
      expectSuperset(parse(await readFile(file, "utf8")), raw);
      if (layer === "repo") {
        // nothing to normalise in the repo file: the rewrite is byte-identical, comment header included
        expect(await readFile(file, "utf8")).toBe(original);
      } else {
        expect(before?.bullets.map((b) => b.id)).toContain("b-mwrs7w7k-ujy1rs");
        expect(before?.bullets[0]?.feedbackEvents[4]).toMatchObject({ decayedValue: 1.3, context: "success, sentiment+" });
      }
    });
  }

  it("keeps the key order of the original for known fields", async () => {
    await open().mutatePlaybook("global", () => undefined);
    const rewritten = parse(await readFile(join(globalDir, "playbook.yaml"), "utf8")) as { bullets: Array<Record<string, unknown>> };
    const raw = parse(await readFile(join(FIXTURE_HOME, "home/.cass-memory/playbook.yaml"), "utf8")) as { bullets: Array<Record<string, unknown>> };
    const first = Object.keys(rewritten.bullets[0] ?? {});
    expect(first).toEqual(Object.keys(raw.bullets[0] ?? {}));
  });

  it("reads the fixture's blocked log and JSONL logs without malformed lines", async () => {
    const s = open();
    expect(await s.readBlocked("global")).toEqual([
      {
        id: "b-mwrs7wnh-bnm8y3",
        content: "Run the migration dry-run against a copy of production data before deploying",
        reason: "Superseded by the staging pipeline",
        forgottenAt: "2026-11-22T11:57:11.967Z",
      },
    ]);
    expect(await s.readBlocked("repo")).toEqual([]);
    for (const log of ["outcomes", "traumas", "context-log", "usage"] as const) {
      const result = await s.readLog("global", log);
      expect(result.malformed, log).toBe(0);
      expect(result.records.length, log).toBe(log === "usage" ? 0 : 1);
    }
    expect((await s.readLog("repo", "traumas")).records).toHaveLength(1);
    expect(await s.layerStatus("global")).toEqual({
      present: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"],
      expected: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"],
    });
    expect((await s.initialize("global", { overwrite: false, nowIso: "2026-01-01T00:00:00.000Z" })).existed).toHaveLength(4);
    expect((await readdir(globalDir)).filter((n) => n.includes(".backup."))).toEqual([]);
  });
});
