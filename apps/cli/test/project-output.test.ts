import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

/** `cm project --output` never replaces cm's own data, backs up what --force replaces, and creates directories only when asked. */

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  expect(cm(["init", "--json"], { home }).code).toBe(0);
  expect(cm(["playbook", "add", "Run the migrations inside one transaction", "--category", "database", "--json"], { home }).code).toBe(0);
});
afterEach(() => cleanup());

describe("cm project --output", () => {
  it("refuses the live playbook, config and anything in the data directories, even with --force", () => {
    const playbook = join(home, ".cass-memory", "playbook.yaml");
    const before = readFileSync(playbook, "utf8");
    const repo = join(home, "repo");
    mkdirSync(repo);
    gitInit(repo);
    expect(cm(["init", "--repo", "--json"], { home, cwd: repo }).code).toBe(0);
    symlinkSync(join(home, ".cass-memory"), join(home, "memory-link"));
    for (const [target, cwd] of [
      [playbook, home],
      ["~/.cass-memory/config.json".replace("~", home), home],
      [join(home, ".cass-memory", "diary", "notes.md"), home],
      [join(home, "memory-link", "playbook.yaml"), home],
      [".cass/playbook.yaml", repo],
      [".cass/AGENTS.md", repo],
    ] as const) {
      const r = cm(["project", "--output", target, "--force", "--json"], { home, cwd });
      expect(r.code, target).toBe(2);
      expect(r.json().error.code).toBe("INVALID_INPUT");
      expect(r.json().error.message).toMatch(/^Refusing to (write the projection into cass-memory's own data|overwrite a cass-memory store file)/);
      expect(r.json().error.hint).toContain("AGENTS.md");
    }
    expect(readFileSync(playbook, "utf8")).toBe(before);
    expect(cm(["playbook", "list", "--json"], { home }).json().data.bullets).toHaveLength(1);
    expect(readdirSync(join(home, ".cass-memory")).some((f) => f.includes(".backup."))).toBe(false);
  });

  it("backs up the file --force replaces", () => {
    const out = join(home, "AGENTS.md");
    writeFileSync(out, "hand-written notes\n", { mode: 0o640 });
    const r = cm(["project", "--output", out, "--force", "--json"], { home });
    expect(r.code).toBe(0);
    const data = r.json().data;
    expect(data.backup).toMatch(/AGENTS\.md\.backup\.\d+$/);
    expect(readFileSync(data.backup, "utf8")).toBe("hand-written notes\n");
    expect(statSync(data.backup).mode & 0o777).toBe(0o640);
    expect(readFileSync(out, "utf8")).toContain("Run the migrations inside one transaction");
  });

  it("creates missing parent directories only with --parents", () => {
    const out = join(home, "docs", "agents", "AGENTS.md");
    const refused = cm(["project", "--output", out, "--json"], { home });
    expect(refused.code).toBe(4);
    expect(refused.json().error.code).toBe("FILE_NOT_FOUND");
    expect(refused.json().error.hint).toContain("--parents");
    expect(existsSync(join(home, "docs"))).toBe(false);
    const made = cm(["project", "--output", out, "--parents", "--json"], { home });
    expect(made.code).toBe(0);
    expect(readFileSync(out, "utf8")).toContain("Run the migrations inside one transaction");
  });
});
