import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

const filesIn = (dir: string) => readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile()).sort();

describe("cm init", () => {
  it("creates exactly the four global files, reported in order", () => {
    const r = cm(["init", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(Object.keys(env)).toEqual(["success", "command", "timestamp", "data", "metadata"]);
    expect(env.success).toBe(true);
    expect(env.command).toBe("init");
    expect(env.data.created).toEqual(["config.json", "playbook.yaml", "blocked.log", "usage.jsonl"]);
    expect(env.data.configPath).toBe(join(home, ".cass-memory", "config.json"));
    expect(Object.keys(env.metadata)).toEqual(["executionMs", "version"]);
    const pkg = JSON.parse(readFileSync(join(__dirname, "..", "package.json"), "utf8"));
    expect(env.metadata.version).toBe(pkg.version);
    expect(filesIn(join(home, ".cass-memory"))).toEqual(["blocked.log", "config.json", "playbook.yaml", "usage.jsonl"]);
    const config = JSON.parse(readFileSync(join(home, ".cass-memory", "config.json"), "utf8"));
    expect(config.maxBulletsInContext).toBe(50);
  });

  it("refuses a second init with ALREADY_EXISTS (exit 2) and leaves files alone", () => {
    cm(["init"], { home });
    const before = readFileSync(join(home, ".cass-memory", "config.json"), "utf8");
    const r = cm(["init", "--json"], { home });
    expect(r.code).toBe(2);
    const env = r.json();
    expect(env.success).toBe(false);
    expect(Object.keys(env)).toEqual(["success", "command", "timestamp", "error", "metadata"]);
    expect(env.error.code).toBe("ALREADY_EXISTS");
    expect(env.error.exitCode).toBe(2);
    expect(env.error.recovery.length).toBeGreaterThan(0);
    expect(readFileSync(join(home, ".cass-memory", "config.json"), "utf8")).toBe(before);
  });

  it("requires --yes with --force, then backs up and rewrites", () => {
    cm(["init"], { home });
    const noYes = cm(["init", "--force", "--json"], { home });
    expect(noYes.code).toBe(2);
    expect(noYes.json().error.code).toBe("MISSING_REQUIRED");
    expect(noYes.json().error.message).toBe("Refusing to overwrite existing files without --yes");

    const r = cm(["init", "--force", "--yes", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data.backups.length).toBeGreaterThanOrEqual(2);
    for (const b of data.backups) expect(existsSync(b.backup)).toBe(true);
    expect(readdirSync(join(home, ".cass-memory")).some((f) => /^config\.json\.backup\.\d+$/.test(f))).toBe(true);
  });

  it("prints a human error on stderr (not stdout) without --json", () => {
    cm(["init"], { home });
    const r = cm(["init"], { home });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("cm: error: Already initialized. Use --force to reinitialize.");
    expect(r.stderr).toContain("Recovery:");
    expect(r.stderr).toContain("Hint: Use --force to reinitialize");
  });

  it("init --repo outside a git repository is CONFIG_INVALID (exit 3)", () => {
    const dir = join(home, "not-a-repo");
    mkdirSync(dir);
    const r = cm(["init", "--repo", "--json"], { home, cwd: dir });
    expect(r.code).toBe(3);
    const env = r.json();
    expect(env.command).toBe("init:repo");
    expect(env.error.code).toBe("CONFIG_INVALID");
    expect(env.error.message).toBe("Not in a git repository. Run from within a git repo.");
    expect(env.error.docs).toBe("README.md#-troubleshooting");
  });

  it("init --repo from a subdirectory creates .cass/ at the git root", () => {
    const repo = join(home, "proj");
    gitInit(repo);
    const sub = join(repo, "src", "lib");
    mkdirSync(sub, { recursive: true });
    const r = cm(["init", "--repo", "--json"], { home, cwd: sub });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("init:repo");
    expect(env.data.cassDir).toBe(join(repo, ".cass"));
    expect(existsSync(join(repo, ".cass", "playbook.yaml"))).toBe(true);
    expect(existsSync(join(repo, ".cass", "blocked.log"))).toBe(true);
    expect(existsSync(join(sub, ".cass"))).toBe(false);
    expect(cm(["init", "--repo", "--json"], { home, cwd: sub }).json().error.code).toBe("ALREADY_EXISTS");
  });
});
