import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { expandHome, findGitRoot, homeDir, resolveGlobalDir } from "../src/paths.js";
import { tempDir, writeFile } from "./helpers.js";

const cleanups: Array<() => void> = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

describe("homeDir / expandHome", () => {
  it("uses HOME, then USERPROFILE, then the OS home", () => {
    expect(homeDir({ HOME: "/h/one", USERPROFILE: "/h/two" })).toBe("/h/one");
    expect(homeDir({ HOME: "", USERPROFILE: "/h/two" })).toBe("/h/two");
    expect(homeDir({})).toBe(homedir());
  });

  it("expands only a leading ~", () => {
    const env = { HOME: "/home/u" };
    expect(expandHome("~", env)).toBe("/home/u");
    expect(expandHome("~/a/b", env)).toBe(join("/home/u", "a/b"));
    expect(expandHome("/x/~/y", env)).toBe("/x/~/y");
    expect(expandHome("~other/x", env)).toBe("~other/x");
  });
});

describe("resolveGlobalDir", () => {
  it("prefers CASS_MEMORY_HOME with ~ expansion", () => {
    expect(resolveGlobalDir({ HOME: "/home/u", CASS_MEMORY_HOME: "~/mem", XDG_DATA_HOME: "/xdg" })).toBe("/home/u/mem");
  });
  it("falls back to $XDG_DATA_HOME/cass-memory", () => {
    expect(resolveGlobalDir({ HOME: "/home/u", XDG_DATA_HOME: "/xdg" })).toBe("/xdg/cass-memory");
  });
  it("defaults to ~/.cass-memory and ignores empty variables", () => {
    expect(resolveGlobalDir({ HOME: "/home/u", CASS_MEMORY_HOME: "", XDG_DATA_HOME: " " })).toBe("/home/u/.cass-memory");
  });
});

describe("findGitRoot", () => {
  it("finds the root from a nested subdirectory", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    mkdirSync(join(t.path, "repo", ".git"), { recursive: true });
    const sub = join(t.path, "repo", "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect(findGitRoot(sub)).toBe(join(t.path, "repo"));
    expect(findGitRoot(join(t.path, "repo"))).toBe(join(t.path, "repo"));
  });

  it("accepts a .git file (worktree) and stops at the nearest one", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    mkdirSync(join(t.path, "outer", ".git"), { recursive: true });
    writeFile(join(t.path, "outer", "inner", ".git"), "gitdir: ../.git/worktrees/inner\n");
    mkdirSync(join(t.path, "outer", "inner", "pkg"), { recursive: true });
    expect(findGitRoot(join(t.path, "outer", "inner", "pkg"))).toBe(join(t.path, "outer", "inner"));
  });

  it("returns null outside any repository", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    mkdirSync(join(t.path, "plain"), { recursive: true });
    // tmpdir() itself is assumed not to be inside a git work tree.
    expect(findGitRoot(join(t.path, "plain"))).toBeNull();
  });
});
