import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";

const script = join(dirname(fileURLToPath(import.meta.url)), "../scripts/check-boundaries.mjs");
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../..");
const roots: string[] = [];

function pkg(root: string, folder: string, json: Record<string, unknown>, files: Record<string, string> = {}) {
  mkdirSync(join(root, folder, "src"), { recursive: true });
  writeFileSync(join(root, folder, "package.json"), JSON.stringify(json));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, folder, "src", name), text);
}

function fakeRepo(): string {
  const root = mkdtempSync(join(tmpdir(), "cm-boundaries-"));
  roots.push(root);
  pkg(root, "packages/core", { name: "@x/core" }, { "index.ts": 'import { z } from "zod";\nexport const a = z;\n' });
  pkg(root, "packages/store-yaml", { name: "@x/store-yaml", dependencies: { "@x/core": "workspace:^" } }, { "index.ts": 'import { a } from "@x/core";\nexport { a };\n' });
  pkg(root, "packages/cass", { name: "@x/cass", dependencies: { "@x/core": "workspace:^" } }, { "index.ts": "export const c = 1;\n" });
  pkg(root, "packages/runtime", { name: "@x/runtime", dependencies: { "@x/core": "workspace:^", "@x/store-yaml": "workspace:^" } });
  pkg(root, "apps/cli", { name: "@x/cli", dependencies: { "@x/runtime": "workspace:^" } });
  return root;
}

function check(root: string) {
  return spawnSync(process.execPath, [script, root], { encoding: "utf8" });
}

afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

describe("boundary check", () => {
  it("passes on this repository", () => {
    const r = check(repoRoot);
    expect(r.stderr).toContain("Boundary check passed");
    expect(r.status).toBe(0);
  });

  it("passes on a repository that follows the rules", () => {
    expect(check(fakeRepo()).status).toBe(0);
  });

  it("rejects Node I/O in core", () => {
    const root = fakeRepo();
    writeFileSync(join(root, "packages/core/src/io.ts"), 'import { readFileSync } from "node:fs";\nexport const r = readFileSync;\n');
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/core must stay pure, imports "node:fs"/);
  });

  it("rejects process access in core even in files without imports, but not the word inside strings or comments", () => {
    const root = fakeRepo();
    writeFileSync(
      join(root, "packages/core/src/words.ts"),
      'import { z } from "zod";\n// process.env is read by the runtime\nexport const tip = "set process.exitCode, not process.exit()";\nexport const t = `uses ${"process.env"} text`;\nexport const s = z;\n',
    );
    expect(check(root).status).toBe(0);
    writeFileSync(join(root, "packages/core/src/env.ts"), "export const home = `${process.env.HOME}/x`;\n");
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/env\.ts: core must not touch the process/);
  });

  it("rejects one adapter depending on another, and non-workspace:^ ranges", () => {
    const root = fakeRepo();
    pkg(root, "packages/cass", { name: "@x/cass", dependencies: { "@x/core": "workspace:*", "@x/store-yaml": "workspace:^" } }, {
      "index.ts": 'import { a } from "@x/store-yaml";\nexport { a };\n',
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/packages\/cass: dependencies on @x\/store-yaml \(adapter → adapter\) is not allowed/);
    expect(r.stderr).toMatch(/must use "workspace:\^"/);
  });

  it("rejects a package depending on an app, and undeclared imports", () => {
    const root = fakeRepo();
    pkg(root, "packages/runtime", { name: "@x/runtime", dependencies: { "@x/core": "workspace:^", "@x/cli": "workspace:^" } }, {
      "index.ts": 'import { c } from "@x/cass";\nexport { c };\n',
    });
    const r = check(root);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/runtime → app/);
    expect(r.stderr).toMatch(/imports @x\/cass without declaring it/);
  });
});
