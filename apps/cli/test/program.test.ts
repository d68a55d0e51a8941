import { fileURLToPath } from "node:url";
import { cpSync, readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CLI_DIR, assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const FIXTURE = fileURLToPath(new URL("../../../fixtures/original-home", import.meta.url));

describe("program", () => {
  it("prints the package version", () => {
    const pkg = JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8"));
    for (const flag of ["--version", "-V"]) {
      const r = cm([flag], { home });
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`${pkg.version}\n`);
    }
  });

  it("shows help with the agent banner, and help on stderr with exit 2 (a usage error) without a command", () => {
    const help = cm(["--help"], { home });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Start here (agents):\n  cm context "<task>" --json');
    expect(help.stdout).toContain("Global options:");
    const bare = cm([], { home });
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe("");
    expect(bare.stderr).toContain("Usage: cm");
    expect(cm(["playbook"], { home }).code).toBe(2);
    expect(cm(["playbook"], { home }).stderr).toContain("Usage: cm playbook");
  });

  it("reports commander parse errors with exit 2: usage on stderr, and with --json an error envelope on stdout", () => {
    const unknown = cm(["frobnicate", "--json"], { home });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'frobnicate'");
    expect(unknown.json()).toMatchObject({ success: false, error: { code: "INVALID_INPUT", exitCode: 2 } });
    expect(unknown.json().error.message).toContain("unknown command 'frobnicate'");
    expect(unknown.json().error.hint).toBe("Run 'cm frobnicate --help' for the commands and options.");
    const missingArg = cm(["mark"], { home });
    expect(missingArg.code).toBe(2);
    expect(missingArg.stdout).toBe("");
    expect(missingArg.stderr).toContain("missing required argument");
    const missingValue = cm(["context", "task", "--limit"], { home });
    expect(missingValue.code).toBe(2);
    expect(cm(["context", "task", "--no-such-flag", "--json"], { home }).json().error).toMatchObject({ code: "INVALID_INPUT", message: "unknown option '--no-such-flag'" });
  });

  it("refuses a --width that is not a number of columns (exit 2)", () => {
    for (const width of ["NaN", "0", "-5", "1e3", "abc"]) {
      const r = cm(["stats", "--width", width, "--json"], { home });
      expect(r.code, width).toBe(2);
      expect(r.json().error).toMatchObject({ code: "INVALID_INPUT", message: "width must be an integer between 20 and 1000." });
    }
    expect(cm(["stats", "--width", "100", "--json"], { home }).code).toBe(0);
  });

  it("never passes terminal escape sequences from stored text to a terminal, while --json keeps the text", () => {
    const evil = "Rotate keys \u001b]0;owned\u0007weekly \u001b[2J\u001b]52;c;ZXZpbA==\u0007now\u009b31m";
    const id = cm(["playbook", "add", evil, "--json"], { home }).json().data.bullet.id as string;
    const human = cm(["playbook", "get", id], { home });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Rotate keys weekly now");
    expect(human.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    const colored = cm(["playbook", "get", id], { home, env: { NO_COLOR: undefined, FORCE_COLOR: "1" } });
    expect(colored.stdout).not.toContain("\u001b]");
    expect(colored.stdout).not.toContain("\u001b[2J");
    expect(colored.stdout).toContain("\u001b["); // cm's own colours stay
    expect(cm(["playbook", "get", id, "--json"], { home }).json().data.bullet.content).toBe(evil);
  });

  it("accepts global options anywhere", () => {
    const r = cm(["context", "some task", "--no-emoji", "--width", "60", "--no-color"], { home });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[!] Local history unavailable");
    expect(r.stdout).not.toContain("\u001b[");
    const verbose = cm(["ls", "--json", "--verbose"], { home });
    expect(verbose.json().success).toBe(true);
    expect(verbose.stderr).toMatch(/\[cm\] /);
  });

  it("turns a schema-invalid config into CONFIG_INVALID naming the file (exit 3)", () => {
    mkdirSync(join(home, ".cass-memory"), { recursive: true });
    const path = join(home, ".cass-memory", "config.json");
    writeFileSync(path, JSON.stringify({ provider: "invalid-provider" }));
    const r = cm(["context", "task", "--json"], { home });
    expect(r.code).toBe(3);
    const err = r.json().error;
    expect(err.code).toBe("CONFIG_INVALID");
    expect(err.message).toMatch(/^Configuration validation failed: provider/);
    expect(err.hint).toContain(path);
  });

  it("uses CASS_MEMORY_CLI_NAME in hints", () => {
    const r = cm(["context", "", "--json"], { home, env: { CASS_MEMORY_CLI_NAME: "cass-memory" } });
    expect(r.json().error.hint).toBe('Example: cass-memory context "fix the login bug" --json');
  });
});

describe("the original cm's data", () => {
  it("loads the fixture home: list and context return the original's bullets", () => {
    cpSync(join(FIXTURE, "home"), join(home, "h"), { recursive: true });
    const h = join(home, "h");
    const list = cm(["playbook", "list", "--json"], { home: h });
    expect(list.code).toBe(0);
    const ids = list.json().data.bullets.map((b: { id: string }) => b.id);
    expect(ids).toEqual([
      "b-mwrs7w7k-ujy1rs",
      "starter-react-effect-deps",
      "starter-react-stable-keys",
      "starter-react-conditional-guards",
      "starter-react-accessibility",
      "b-mwrs87q5-ue2upf",
    ]);
    // deprecated (harmful feedback) and forgotten (blocked.log) bullets are not active
    expect(ids).not.toContain("b-mwrs7wfk-ob00id");
    expect(ids).not.toContain("b-mwrs7wnh-bnm8y3");

    const ctx = cm(["context", "debug 401 errors after deploy", "--json"], { home: h });
    expect(ctx.code).toBe(0);
    const data = ctx.json().data;
    // the original logged exactly this result for this task (context-log.jsonl in the fixture)
    expect(data.relevantBullets.map((b: { id: string }) => b.id)).toEqual(["b-mwrs7w7k-ujy1rs"]);
    expect(data.antiPatterns).toEqual([]);
    expect(data.relevantBullets[0].content).toBe("Always check JWT expiry and clock skew before debugging 401s");
  });

  it("merges the fixture repo layer inside a git repository", () => {
    cpSync(join(FIXTURE, "home"), join(home, "h"), { recursive: true });
    const repo = join(home, "repo");
    cpSync(join(FIXTURE, "repo"), repo, { recursive: true });
    gitInit(repo);
    const r = cm(["playbook", "list", "--json"], { home: join(home, "h"), cwd: repo });
    expect(r.code).toBe(0);
    expect(r.json().data.bullets.length).toBeGreaterThanOrEqual(6);
  });
});
