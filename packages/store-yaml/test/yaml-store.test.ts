import { chmod, mkdir, readFile, readdir, stat, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { defaultConfig } from "@cass-memory/core";
import type { Config } from "@cass-memory/core";
import { atomicWriteFile, createYamlStore, decodePlaybook, fromYaml, toYaml } from "../src/index.js";
import { FIXTURE_HOME, tempDir, testLogger } from "./helpers.js";

let dir = "";
let cleanup: () => Promise<void> = async () => undefined;
let globalDir = "";
let repoDir = "";
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  globalDir = join(dir, "home", ".cass-memory");
  repoDir = join(dir, "repo", ".cass");
});
afterEach(async () => {
  await cleanup();
});

const NOW = "2026-11-22T11:57:08.685Z";

function store(opts: { repo?: boolean } = {}) {
  return createYamlStore({ globalDir, repoDir: opts.repo === false ? null : repoDir, logger: testLogger() });
}

async function mode(path: string): Promise<number> {
  return (await stat(path)).mode & 0o777;
}

const EMPTY_GLOBAL = `schema_version: 2
name: playbook
description: Auto-generated from cass-memory reflections
metadata:
  createdAt: ${NOW}
  totalReflections: 0
  totalSessionsProcessed: 0
deprecatedPatterns: []
bullets: []
`;

describe("initialize", () => {
  it("global: writes the original's files, subdirectories and modes", async () => {
    const config = JSON.parse(await readFile(join(FIXTURE_HOME, "home/.cass-memory/config.json"), "utf8")) as Config;
    const result = await store().initialize("global", { overwrite: false, nowIso: NOW, config });
    expect(result).toEqual({ created: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"], existed: [], overwritten: [], backups: [] });
    // byte-identical to what the original wrote for the same config
    expect(await readFile(join(globalDir, "config.json"), "utf8")).toBe(await readFile(join(FIXTURE_HOME, "home/.cass-memory/config.json"), "utf8"));
    expect(await readFile(join(globalDir, "playbook.yaml"), "utf8")).toBe(EMPTY_GLOBAL);
    expect(await readFile(join(globalDir, "blocked.log"), "utf8")).toBe("");
    expect(await readFile(join(globalDir, "usage.jsonl"), "utf8")).toBe("");
    for (const sub of ["diary", "reflections", "embeddings", "cost"]) expect((await stat(join(globalDir, sub))).isDirectory()).toBe(true);
    for (const file of ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"]) expect(await mode(join(globalDir, file))).toBe(0o600);
    expect(await store().layerStatus("global")).toEqual({
      present: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"],
      expected: ["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"],
    });
  });

  it("global: writes the full default config when none is given", async () => {
    await store().initialize("global", { overwrite: false, nowIso: NOW });
    expect(await readFile(join(globalDir, "config.json"), "utf8")).toBe(JSON.stringify(defaultConfig(), null, 2));
  });

  it("repo: writes the original's playbook byte for byte (comment header included) and never a config", async () => {
    const s = store();
    const result = await s.initialize("repo", { overwrite: false, nowIso: "2026-11-22T11:57:12.927Z" });
    expect(result.created).toEqual(["playbook.yaml", "blocked.log"]);
    expect(await readFile(join(repoDir, "playbook.yaml"), "utf8")).toBe(await readFile(join(FIXTURE_HOME, "repo/.cass/playbook.yaml"), "utf8"));
    expect(await readdir(repoDir)).toEqual(["blocked.log", "playbook.yaml"]);
    expect(existsSync(globalDir)).toBe(false);
    expect(await s.layerStatus("repo")).toEqual({ present: ["playbook.yaml", "blocked.log"], expected: ["playbook.yaml", "blocked.log"] });
  });

  it("overwrite copies existing files to <file>.backup.<epoch-ms> before rewriting", async () => {
    const s = store();
    await s.initialize("global", { overwrite: false, nowIso: NOW });
    await s.mutatePlaybook("global", (pb) => void pb.bullets.push({ id: "b-old", category: "c", content: "old", createdAt: NOW, updatedAt: NOW } as never));
    await s.appendBlocked("global", [{ id: "b-x", content: "x" }]);
    const oldPlaybook = await readFile(join(globalDir, "playbook.yaml"), "utf8");
    const before = Date.now();
    const result = await s.initialize("global", { overwrite: true, nowIso: NOW });
    expect(result.overwritten).toEqual(["config.json", "playbook.yaml"]);
    expect(result.existed).toEqual(["blocked.log", "usage.jsonl"]);
    expect(result.backups.map((b) => b.file)).toEqual([join(globalDir, "config.json"), join(globalDir, "playbook.yaml")]);
    const playbookBackup = result.backups[1]?.backup ?? "";
    expect(playbookBackup).toMatch(new RegExp(`^${join(globalDir, "playbook.yaml").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.backup\\.\\d{13}$`));
    expect(Number(playbookBackup.split(".").pop())).toBeGreaterThanOrEqual(before);
    expect(await readFile(playbookBackup, "utf8")).toBe(oldPlaybook);
    expect(await readFile(join(globalDir, "playbook.yaml"), "utf8")).toBe(EMPTY_GLOBAL);
    // the global blocked log is not reset by a global re-init (reference §1.5.1)
    expect((await s.readBlocked("global")).map((e) => e.id)).toEqual(["b-x"]);
  });

  it("repo overwrite empties blocked.log after backing it up", async () => {
    const s = store();
    await s.initialize("repo", { overwrite: false, nowIso: NOW });
    await s.appendBlocked("repo", [{ id: "b-x", content: "x" }]);
    const result = await s.initialize("repo", { overwrite: true, nowIso: NOW });
    expect(result.overwritten).toEqual(["playbook.yaml", "blocked.log"]);
    expect(await readFile(join(repoDir, "blocked.log"), "utf8")).toBe("");
    const blockedBackup = result.backups.find((b) => b.file === join(repoDir, "blocked.log"))?.backup ?? "";
    expect(await readFile(blockedBackup, "utf8")).toBe('{"id":"b-x","content":"x"}\n');
  });
});

describe("playbook files", () => {
  it("missing file reads as null, empty or comment-only file as an empty playbook", async () => {
    const s = store();
    expect(await s.readPlaybook("global")).toBeNull();
    await mkdir(globalDir, { recursive: true });
    await writeFile(join(globalDir, "playbook.yaml"), "");
    expect((await s.readPlaybook("global"))?.bullets).toEqual([]);
    await writeFile(join(globalDir, "playbook.yaml"), "# just a comment\n\n");
    expect(await s.readPlaybook("global")).toMatchObject({ name: "playbook", bullets: [] });
  });

  it("YAML syntax errors give PLAYBOOK_CORRUPT with path, line and a hint; the file is untouched", async () => {
    await mkdir(globalDir, { recursive: true });
    const path = join(globalDir, "playbook.yaml");
    const bad = "schema_version: 2\nbullets:\n  - id: b-1\n    content: \"unterminated\n";
    await writeFile(path, bad);
    const s = store();
    const error = await s.readPlaybook("global").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "PLAYBOOK_CORRUPT" });
    expect((error as Error).message).toMatch(new RegExp(`^Playbook at ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is invalid: YAML syntax error \\(line \\d+, column \\d+\\)`));
    expect((error as { details: { path: string; line: number } }).details.path).toBe(path);
    expect((error as { details: { line: number } }).details.line).toBeGreaterThanOrEqual(4);
    expect((error as { hint: string }).hint).toContain(path);
    expect((error as { hint: string }).hint).toContain("backup");
    await expect(s.mutatePlaybook("global", (pb) => void (pb.bullets = []))).rejects.toMatchObject({ code: "PLAYBOOK_CORRUPT" });
    expect(await readFile(path, "utf8")).toBe(bad);
    expect((await readdir(globalDir)).sort()).toEqual(["playbook.yaml"]);
  });

  it("schema violations give PLAYBOOK_CORRUPT naming the field and its line", async () => {
    await mkdir(globalDir, { recursive: true });
    const path = join(globalDir, "playbook.yaml");
    const bad = `schema_version: 2\nmetadata:\n  createdAt: ${NOW}\nbullets:\n  - id: b-1\n    category: c\n    content: ok\n    createdAt: ${NOW}\n    updatedAt: ${NOW}\n  - id: b-2\n    category: c\n    content: ok\n    state: sideways\n    createdAt: ${NOW}\n    updatedAt: ${NOW}\n`;
    await writeFile(path, bad);
    const error = await store().readPlaybook("global").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "PLAYBOOK_CORRUPT", details: { path, line: 13 } });
    expect((error as Error).message).toContain("bullets[1].state");
    expect((error as { hint: string }).hint).toContain("line 13");
    expect(await readFile(path, "utf8")).toBe(bad);
  });

  it("a top-level list is corrupt, not an empty playbook", () => {
    expect(() => decodePlaybook("- a\n- b\n", "/x/playbook.yaml")).toThrow(/Playbook at \/x\/playbook.yaml is invalid: expected a mapping/);
  });

  it("keeps the leading comment block when rewriting, and writes 0600 files", async () => {
    await mkdir(globalDir, { recursive: true });
    const path = join(globalDir, "playbook.yaml");
    await writeFile(path, `# my notes\n#   indented comment\n\n${EMPTY_GLOBAL}`);
    await chmod(path, 0o644);
    await store().mutatePlaybook("global", (pb) => void (pb.description = "changed"));
    const text = await readFile(path, "utf8");
    expect(text.startsWith("# my notes\n#   indented comment\n\nschema_version: 2\n")).toBe(true);
    expect(text).toContain("description: changed\n");
    expect(await mode(path)).toBe(0o600);
  });

  it("a new repo playbook created by a mutation gets the repo header", async () => {
    await store().mutatePlaybook("repo", () => undefined);
    expect((await readFile(join(repoDir, "playbook.yaml"), "utf8")).startsWith("# Project-specific playbook rules\n")).toBe(true);
  });

  it("reads playbooks in the original's format with awkward values", async () => {
    await mkdir(globalDir, { recursive: true });
    const text = [
      "schema_version: 1",
      "metadata:",
      "  createdAt: 2025-01-01T00:00:00.000Z",
      "bullets:",
      "  - id: b-awk",
      "    category: \"no\"",
      "    content: |-",
      "      first line   ",
      "      # not a comment",
      "      key: value",
      "    tags: ['yes', \"on\", '~', 'null', '0x1F', '1e3', '2026-01-01', \"it's\", '- dash']",
      "    createdAt: 2025-01-01",
      "    updatedAt: 2025-01-01 10:00:00",
      "    helpful_count: 3",
      "    futureField: {a: [1, b]}",
      "  - id: b-folded",
      "    category: misc",
      "    content: >-",
      "      folded",
      "      text",
      "    createdAt: 2025-01-01T00:00:00Z",
      "    updatedAt: 2025-01-01T00:00:00Z",
      "",
    ].join("\n");
    await writeFile(join(globalDir, "playbook.yaml"), text);
    const pb = await store().readPlaybook("global");
    expect(pb?.schema_version).toBe(1);
    expect(pb?.deprecatedPatterns).toEqual([]);
    const [awk, folded] = pb?.bullets ?? [];
    expect(awk).toMatchObject({
      category: "no",
      content: "first line   \n# not a comment\nkey: value",
      tags: ["yes", "on", "~", "null", "0x1F", "1e3", "2026-01-01", "it's", "- dash"],
      createdAt: "2025-01-01",
      updatedAt: "2025-01-01 10:00:00",
      futureField: { a: [1, "b"] },
    });
    expect(folded?.content).toBe("folded text");
  });
});

describe("atomic writes", () => {
  it("leaves no temp files and writes mode 0600, creating parent directories", async () => {
    const path = join(dir, "a", "b", "file.json");
    await Promise.all(Array.from({ length: 20 }, (_, i) => atomicWriteFile(path, `{"n":${i}}`)));
    expect(await readdir(join(dir, "a", "b"))).toEqual(["file.json"]);
    expect(await readFile(path, "utf8")).toMatch(/^\{"n":\d+\}$/);
    expect(await mode(path)).toBe(0o600);
  });

  it("removes the temp file and throws FILE_WRITE_FAILED when the rename fails", async () => {
    const path = join(dir, "target");
    await mkdir(join(path, "not-empty"), { recursive: true });
    const error = await atomicWriteFile(path, "x").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "FILE_WRITE_FAILED" });
    expect((error as Error).message).toMatch(/^Failed to atomic write to /);
    expect((await readdir(dir)).sort()).toEqual(["target"]);
  });

  it("playbook mutations leave no temp or lock files behind", async () => {
    const s = store();
    for (let i = 0; i < 5; i += 1) await s.mutatePlaybook("global", (pb) => void (pb.metadata.totalReflections = i));
    expect((await readdir(globalDir)).sort()).toEqual(["playbook.yaml"]);
  });
});

describe("logs", () => {
  it("uses the original's file names and 0600 mode; warns about malformed blocked lines", async () => {
    const logger = testLogger();
    const s = createYamlStore({ globalDir, repoDir, logger });
    await s.appendLog("global", "outcomes", [{ a: 1 }]);
    await s.appendLog("global", "context-log", [{ a: 1 }]);
    await s.appendLog("global", "traumas", [{ a: 1 }]);
    await s.appendLog("global", "usage", [{ a: 1 }]);
    await s.appendLog("global", "privacy-audit", [{ a: 1 }]);
    expect((await readdir(globalDir)).sort()).toEqual(["context-log.jsonl", "outcomes.jsonl", "privacy-audit.jsonl", "traumas.jsonl", "usage.jsonl"]);
    expect(await mode(join(globalDir, "outcomes.jsonl"))).toBe(0o600);
    await s.appendBlocked("repo", [{ id: "b-1", content: "one" }]);
    await writeFile(join(repoDir, "toxic.log"), '{"id":"b-legacy","content":"legacy"}\nnot json\n');
    await writeFile(join(globalDir, "toxic_bullets.log"), '{"id":"b-g-legacy","content":"g"}\n');
    expect((await s.readBlocked("repo")).map((e) => e.id)).toEqual(["b-1", "b-legacy"]);
    expect((await s.readBlocked("global")).map((e) => e.id)).toEqual(["b-g-legacy"]);
    expect(logger.lines.some((l) => l.level === "warn" && l.message.includes("toxic.log"))).toBe(true);
    expect(await readFile(join(repoDir, "blocked.log"), "utf8")).toBe('{"id":"b-1","content":"one"}\n');
  });
});

describe("toYaml / fromYaml", () => {
  it("writes in the original's style and reads it back", () => {
    const value = { a: "no", b: "2026-01-01", c: ["x"], d: {}, e: "multi\nline" };
    const text = toYaml(value);
    expect(text.startsWith("a: no\n") || text.startsWith('a: "no"\n')).toBe(true);
    expect(fromYaml(text, "inline")).toEqual(value);
  });

  it("reports syntax errors with source, line and column, using the code given", () => {
    const error = (() => {
      try {
        fromYaml("a: 1\nb: [unclosed\n", "/etc/x.yaml", "CONFIG_INVALID");
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(error).toMatchObject({ code: "CONFIG_INVALID", details: { source: "/etc/x.yaml" } });
    expect((error as Error).message).toMatch(/^Invalid YAML in \/etc\/x.yaml \(line \d+, column \d+\): /);
    expect(() => fromYaml("a: [", "s")).toThrow(expect.objectContaining({ code: "INVALID_INPUT" }) as Error);
  });
});
