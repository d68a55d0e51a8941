import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { jsonErrorLine } from "@cass-memory/runtime";
import { assertBuilt, cm, tempHome } from "./helpers.js";

/**
 * A config.json that cannot be parsed (truncated by a crash or a bad edit) hides the storage
 * settings: reads use the store the data is in, every write stops with exit 3, and doctor's reset
 * keeps that store.
 */

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const run = (...args: string[]) => cm([...args, "--json"], { home });
const contents = () => (run("playbook", "list").json().data.bullets as Array<{ content: string }>).map((b) => b.content).sort();
const configPath = () => join(home, ".cass-memory", "config.json");
function truncateConfig(): void {
  writeFileSync(configPath(), readFileSync(configPath(), "utf8").slice(0, 100));
}

describe("an unreadable config.json", () => {
  it("after a move to SQLite: reads the SQLite memory, refuses every write, and doctor's reset keeps SQLite", () => {
    expect(run("init").code).toBe(0);
    expect(run("playbook", "add", "Rule written while on YAML").code).toBe(0);
    expect(run("storage", "migrate", "--to", "sqlite").code).toBe(0);
    const sqliteRule = run("playbook", "add", "Rule written on SQLite").json().data.bullet.id as string;
    const yamlBefore = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    truncateConfig();

    for (const args of [["playbook", "add", "A rule that must not land anywhere"], ["mark", sqliteRule, "--helpful"], ["forget", sqliteRule, "--reason", "test"]]) {
      const r = run(...args);
      expect(r.code, args.join(" ")).toBe(3);
      const error = r.json().error;
      expect(error.code).toBe("CONFIG_INVALID");
      expect(error.message).toContain(`${configPath()} (line `);
      expect(error.message).toContain("Nothing was changed");
      expect(error.hint).toContain("doctor --fix --force");
      expect(error.hint).toContain("sqlite");
    }
    expect(readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8")).toBe(yamlBefore);
    // Reads still work, on the store the memory is in.
    expect(contents()).toEqual(["Rule written on SQLite", "Rule written while on YAML"]);
    expect(run("context", "rule written on sqlite", "--no-history").code).toBe(0);

    const doctor = run("doctor", "--fix", "--force", "--no-interactive").json().data;
    const reset = doctor.fixResults.find((f: { id: string }) => f.id === "reset-config");
    expect(reset).toMatchObject({ success: true });
    expect(reset.message).toContain("storage.backend kept: sqlite");
    expect(JSON.parse(readFileSync(configPath(), "utf8")).storage.backend).toBe("sqlite");
    expect(run("playbook", "add", "Rule written after the repair").code).toBe(0);
    expect(contents()).toEqual(["Rule written after the repair", "Rule written on SQLite", "Rule written while on YAML"]);
  });

  it("on YAML: context and list work with defaults, writes stop until the file is fixed", () => {
    expect(run("init").code).toBe(0);
    expect(run("playbook", "add", "Keep the lockfile committed").code).toBe(0);
    writeFileSync(configPath(), '{\n  "maxBulletsInContext": 10,\n  "provider": "openai",,\n}\n');
    const refused = run("playbook", "add", "Another rule");
    expect(refused.code).toBe(3);
    expect(refused.json().error.message).toContain("(line 3)");
    expect(contents()).toEqual(["Keep the lockfile committed"]);
    const ctx = run("context", "keep the lockfile committed", "--no-history");
    expect(ctx.code).toBe(0);
    expect(ctx.json().data.relevantBullets).toHaveLength(1);
    writeFileSync(configPath(), "{}\n");
    expect(run("playbook", "add", "Another rule").code).toBe(0);
  });
});

describe("jsonErrorLine", () => {
  it("finds the line of a syntax error, and the last line of truncated input", () => {
    const text = '{\n  "a": 1,\n  "b": tru\n}';
    let message = "";
    try {
      JSON.parse(text);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(jsonErrorLine(text, message)).toBe(3);
    expect(jsonErrorLine('{\n  "a": "x', "Unterminated string in JSON at position 10")).toBe(2);
    expect(jsonErrorLine('{\n  "a": 1,\n', "Unexpected end of JSON input")).toBe(2);
    expect(jsonErrorLine("{}", "something else")).toBeNull();
  });
});
