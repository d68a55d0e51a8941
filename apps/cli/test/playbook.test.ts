import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const add = (content: string, category = "general") => cm(["add", content, "--category", category, "--json"], { home }).json().data.bullet.id as string;
const listIds = () => cm(["playbook", "list", "--json"], { home }).json().data.bullets.map((b: { id: string }) => b.id) as string[];

describe("cm playbook", () => {
  it("lists (empty and filtered) and gets bullets", () => {
    const empty = cm(["ls", "--json"], { home });
    expect(empty.code).toBe(0);
    expect(empty.json()).toMatchObject({ command: "playbook:list", data: { bullets: [] } });
    const a = add("Use feature flags for risky launches", "workflow");
    const b = add("Run unit tests before pushing", "testing");
    expect(listIds()).toEqual([a, b]);
    expect(cm(["playbook", "ls", "--category", "testing", "--json"], { home }).json().data.bullets.map((x: { id: string }) => x.id)).toEqual([b]);

    const got = cm(["playbook", "get", a, "--json"], { home });
    expect(got.json().command).toBe("playbook:get");
    expect(got.json().data.bullet).toMatchObject({ id: a, category: "workflow", ageDays: 0 });
    const missing = cm(["playbook", "get", "b-missing", "--json"], { home });
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("BULLET_NOT_FOUND");

    const human = cm(["playbook", "list"], { home });
    expect(human.stdout).toMatch(/^PLAYBOOK RULES \(2\):/);
  });

  it("reports add without content as MISSING_REQUIRED", () => {
    const r = cm(["playbook", "add", "--json"], { home });
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe("MISSING_REQUIRED");
    expect(r.json().error.message).toBe("Content argument required unless using --file");
  });

  it("adds a batch from stdin with --file -, all or nothing", () => {
    const good = [{ content: "Prefer pnpm scripts", category: "tooling" }, { content: "Pin CI images" }];
    const mixed = cm(["playbook", "add", "--file", "-", "--category", "ops", "--json"], { home, input: JSON.stringify([...good, { content: "" }]) });
    expect(mixed.code).toBe(2);
    expect(mixed.json().error).toMatchObject({ code: "INVALID_INPUT", message: "1 of 3 rules in stdin are invalid. Nothing was added." });
    expect(mixed.json().error.details.failed).toEqual([{ content: "", error: expect.stringMatching(/^content: /) }]);
    expect(listIds()).toHaveLength(0);

    const r = cm(["playbook", "add", "--file", "-", "--category", "ops", "--json"], { home, input: JSON.stringify(good) });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data.summary).toEqual({ total: 2, succeeded: 2, skipped: 0, failed: 0 });
    expect(data.added.map((x: { category: string }) => x.category)).toEqual(["tooling", "ops"]);
    expect(listIds()).toHaveLength(2);

    const unreadable = cm(["add", "--file", join(home, "nope.json"), "--json"], { home });
    expect(unreadable.code).toBe(4);
    expect(unreadable.json().error.code).toBe("FILE_NOT_FOUND");
    for (const [input, message] of [
      ["{not json", /invalid JSON/],
      ['{"content": "an object, not an array"}', /expected a JSON array/],
      [`${"[".repeat(20000)}${"]".repeat(20000)}`, /nested deeper than 64 levels/],
      ['[{"content": 42}]', /1 of 1 rules/],
    ] as const) {
      const bad = cm(["add", "--file", "-", "--json"], { home, input });
      expect(bad.code, input.slice(0, 20)).toBe(2);
      expect(bad.json().error.message).toMatch(message);
    }
    expect(listIds()).toHaveLength(2);

    // Input files are bounded (inputLimits.fileBytes), checked before they are read.
    writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ inputLimits: { fileBytes: 64 } }));
    const big = join(home, "big.json");
    writeFileSync(big, JSON.stringify([{ content: "A rule long enough to pass the file limit of sixty-four bytes" }]));
    for (const args of [["add", "--file", big], ["add", "--file", "-"], ["playbook", "import", big]]) {
      const r = cm([...args, "--json"], { home, input: readFileSync(big, "utf8") });
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.json().error.message).toMatch(/over the limit of 64 bytes/);
      expect(r.json().error.hint).toContain("inputLimits.fileBytes");
    }
    expect(listIds()).toHaveLength(2);
  });

  it("removes: dry run, soft, hard without and with --yes", () => {
    const a = add("Rule A");
    const b = add("Rule B");
    const before = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");

    const dry = cm(["playbook", "remove", a, "--dry-run", "--json"], { home });
    expect(dry.code).toBe(0);
    expect(dry.json().data.plan).toMatchObject({ dryRun: true, action: "deprecate", bulletId: a, applyCommand: `cm playbook remove ${a}` });
    expect(readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8")).toBe(before);

    const soft = cm(["rm", a, "--reason", "obsolete", "--json"], { home });
    expect(soft.json()).toMatchObject({ command: "playbook:remove", data: { id: a, action: "deprecated" } });
    expect(listIds()).toEqual([b]);
    expect(cm(["playbook", "get", a, "--json"], { home }).json().data.bullet.deprecated).toBe(true);

    const noYes = cm(["playbook", "remove", b, "--hard", "--json"], { home });
    expect(noYes.code).toBe(2);
    expect(noYes.json().error.code).toBe("MISSING_REQUIRED");
    expect(noYes.json().error.hint).toBe(`cm playbook remove ${b} --hard --yes`);
    expect(listIds()).toEqual([b]);

    const hard = cm(["playbook", "remove", b, "--hard", "--yes", "--json"], { home });
    expect(hard.json().data).toMatchObject({ id: b, action: "deleted" });
    expect(readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8")).not.toContain(b);
    expect(cm(["rm", "b-none", "--json"], { home }).json().error.code).toBe("BULLET_NOT_FOUND");
  });

  it("exports YAML by default and JSON with --json, and imports both back", () => {
    const a = add("Rule A", "alpha");
    const b = add("Rule B", "beta");
    const yamlOut = cm(["playbook", "export"], { home });
    expect(yamlOut.code).toBe(0);
    expect(yamlOut.stdout).toMatch(/^schema_version: 2\n/);
    expect(yamlOut.stdout).toContain(`id: ${a}`);
    expect(yamlOut.stdout).not.toContain("sourceSessions");
    const jsonOut = cm(["playbook", "export", "--json"], { home });
    expect(jsonOut.json().command).toBe("playbook:export");
    expect(jsonOut.json().data.bullets.map((x: { id: string }) => x.id)).toEqual([a, b]);

    const other = tempHome();
    try {
      const yamlFile = join(other.home, "export.yaml");
      writeFileSync(yamlFile, yamlOut.stdout);
      const imported = cm(["playbook", "import", yamlFile, "--json"], { home: other.home });
      expect(imported.code).toBe(0);
      expect(imported.json().data).toMatchObject({ file: yamlFile, target: "global", added: 2, skipped: 0, updated: 0 });
      const again = cm(["playbook", "import", yamlFile, "--json"], { home: other.home });
      expect(again.json().data).toMatchObject({ added: 0, skipped: 2 });
      const envelopeFile = join(other.home, "export.json");
      writeFileSync(envelopeFile, jsonOut.stdout);
      const replaced = cm(["playbook", "import", envelopeFile, "--replace", "--json"], { home: other.home });
      expect(replaced.json().data).toMatchObject({ added: 0, updated: 2 });
      const ids = cm(["ls", "--json"], { home: other.home }).json().data.bullets.map((x: { id: string }) => x.id);
      expect(ids).toEqual([a, b]);
    } finally {
      other.cleanup();
    }
  });

  it("reports import errors: missing file (exit 4) and parse errors (exit 2)", () => {
    const missing = join(home, "missing.json");
    const r = cm(["playbook", "import", missing, "--json"], { home });
    expect(r.code).toBe(4);
    expect(r.json().error).toMatchObject({ code: "FILE_NOT_FOUND", message: `File not found: ${missing}`, details: { path: missing } });
    const bad = join(home, "bad.json");
    writeFileSync(bad, "{ nope");
    const parseErr = cm(["playbook", "import", bad, "--json"], { home });
    expect(parseErr.code).toBe(2);
    expect(parseErr.json().error.code).toBe("INVALID_INPUT");
    expect(parseErr.json().error.message).toMatch(/^Parse error: /);
    const badYaml = join(home, "bad.txt");
    writeFileSync(badYaml, "bullets: [unclosed\n");
    expect(cm(["playbook", "import", badYaml, "--json"], { home }).json().error.message).toMatch(/^Parse error: /);
  });
});
