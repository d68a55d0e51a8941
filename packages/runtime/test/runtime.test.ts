import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createIdGenerator, createStderrLogger } from "../src/node-ports.js";
import { createRuntime } from "../src/runtime.js";
import { tempDir, writeFile } from "./helpers.js";

let root: string;
let cleanup: () => void;
beforeEach(() => {
  const t = tempDir();
  root = t.path;
  cleanup = t.cleanup;
});
afterEach(() => cleanup());

describe("createRuntime", () => {
  it("resolves paths from HOME and the git root of a subdirectory", async () => {
    const repo = join(root, "work", "proj");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, "a", "b"), { recursive: true });
    const rt = await createRuntime({ env: { HOME: join(root, "home") }, cwd: join(repo, "a", "b"), stderr: () => {} });
    const globalDir = join(root, "home", ".cass-memory");
    expect(rt.paths).toEqual({
      globalDir,
      globalPlaybook: join(globalDir, "playbook.yaml"),
      configPath: join(globalDir, "config.json"),
      repoRoot: repo,
      repoDir: join(repo, ".cass"),
    });
    expect(rt.deps.store.locations.repoDir).toBe(join(repo, ".cass"));
    expect(rt.deps.cliName).toBe("cm");
    expect(rt.deps.config.maxBulletsInContext).toBe(50);
    const health = await rt.deps.episodic.health();
    expect(health.available).toBe(false);
    expect(health.degraded?.reason).toBe("NOT_FOUND");
  });

  it("writes configuration warnings to the stderr callback", async () => {
    writeFile(join(root, "home", ".cass-memory", "config.json"), "nope");
    const lines: string[] = [];
    const rt = await createRuntime({ env: { HOME: join(root, "home") }, cwd: root, stderr: (l) => lines.push(l) });
    expect(rt.warnings).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[cm\] WARNING: Failed to load config from /);
    expect(rt.paths.repoRoot).toBeNull();
  });

  it("rejects an invalid configuration with CONFIG_INVALID", async () => {
    writeFile(join(root, "home", ".cass-memory", "config.json"), JSON.stringify({ semanticWeight: 3 }));
    await expect(createRuntime({ env: { HOME: join(root, "home") }, cwd: root, stderr: () => {} })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
  });
});

describe("node ports", () => {
  it("generates bullet ids in the original's format", () => {
    const ids = createIdGenerator(() => 1_700_000_000_000);
    const id = ids.bulletId();
    expect(id).toMatch(/^b-[0-9a-z]+-[0-9a-z]{6}$/);
    expect(id.split("-")[1]).toBe((1_700_000_000_000).toString(36));
    expect(new Set(Array.from({ length: 50 }, () => ids.bulletId())).size).toBe(50);
    expect(ids.hex(7)).toMatch(/^[0-9a-f]{7}$/);
  });

  it("prefixes logger lines and hides debug unless verbose", () => {
    const lines: string[] = [];
    const quiet = createStderrLogger({ write: (l) => lines.push(l) });
    quiet.debug("hidden");
    quiet.info("hello");
    quiet.warn("careful");
    quiet.error("broken");
    createStderrLogger({ verbose: true, write: (l) => lines.push(l) }).debug("shown");
    expect(lines).toEqual(["[cm] hello", "[cm] WARNING: careful", "[cm] ERROR: broken", "[cm] shown"]);
  });
});
