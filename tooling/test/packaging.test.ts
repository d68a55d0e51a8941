/**
 * The packages as npm users get them (docs/adr/0013-packaging.md). Packs every public package with
 * `pnpm pack` (run after the build, as in tooling/scripts/test-ci.sh), then:
 * - lints each tarball with publint (strict) and, for libraries, arethetypeswrong (node16 profile);
 * - checks that each manifest declares exactly the packages its published code loads;
 * - installs the CLI tarball alone into a fresh npm prefix and runs `cm --version`,
 *   `cm context … --json`, an MCP handshake with `cm-mcp`, and SQLite without better-sqlite3;
 * - installs the core tarball alone into a fresh project and uses it from ESM, CommonJS and
 *   TypeScript (node16 and bundler resolution).
 * Needs the npm registry for the tarballs' third-party dependencies (yaml, zod, …).
 */
import { spawn, spawnSync, type SpawnSyncReturns } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { publint } from "publint";
import { formatMessage } from "publint/utils";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../..");
const require = createRequire(import.meta.url);
const SLOW = 600_000;

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  description?: string;
  keywords?: string[];
  license?: string;
  homepage?: string;
  bugs?: { url?: string };
  repository?: { type?: string; url?: string; directory?: string };
  engines?: { node?: string };
  bin?: Record<string, string>;
  exports?: Record<string, unknown>;
  sideEffects?: boolean;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  optionalDependencies?: Record<string, string>;
}

interface Packed {
  dir: string;
  manifest: Manifest;
  tarball: string;
  /** The tarball extracted (its `package/` folder). */
  contents: string;
}

function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): SpawnSyncReturns<string> {
  return spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: SLOW, ...options });
}

function ok(result: SpawnSyncReturns<string>, what: string): string {
  if (result.status !== 0) throw new Error(`${what} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`);
  return result.stdout;
}

function publicPackageDirs(): string[] {
  const dirs: string[] = [];
  for (const group of ["packages", "apps"]) {
    for (const name of readdirSync(join(repoRoot, group)).sort()) {
      const file = join(repoRoot, group, name, "package.json");
      if (!existsSync(file)) continue;
      const manifest = JSON.parse(readFileSync(file, "utf8")) as Manifest;
      if (manifest.private !== true) dirs.push(join(group, name));
    }
  }
  return dirs;
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

function sizeOf(dir: string): number {
  let total = 0;
  for (const file of filesUnder(dir)) total += statSync(file).size;
  return total;
}

const BUILTINS = new Set(builtinModules);

/** The package name of a bare specifier (`@scope/name/sub` → `@scope/name`), or null for builtins and relative paths. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) return null;
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
  if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/.test(name)) return null;
  return BUILTINS.has(name) ? null : name;
}

/**
 * Packages the published JavaScript loads: static and dynamic `import`, `require` (not inside a
 * string literal: ajv, bundled into the CLI, builds code that mentions `require("ajv/…")`).
 */
function loadedPackages(contents: string): Set<string> {
  const found = new Set<string>();
  const patterns = [
    /(?:^|[^\w$.'"`])(?:__)?require\(\s*"([^"]+)"\s*\)/g,
    /(?:^|[^\w$.'"`])import\(\s*"([^"]+)"\s*\)/g,
    /^(?:import|export)\s*(?:[\w$*{}\s,]+?\s*from\s*)?"([^"]+)";?$/gm,
  ];
  for (const file of filesUnder(contents)) {
    if (!/\.(c|m)?js$/.test(file)) continue;
    const text = readFileSync(file, "utf8");
    for (const pattern of patterns) {
      for (const match of text.matchAll(pattern)) {
        const name = packageOf(match[1]!);
        if (name !== null) found.add(name);
      }
    }
  }
  return found;
}

let work: string;
const packed = new Map<string, Packed>();

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "cm-packaging-"));
  const tarballs = join(work, "tarballs");
  mkdirSync(tarballs);
  for (const dir of publicPackageDirs()) {
    const manifest = JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as Manifest;
    const before = new Set(readdirSync(tarballs));
    ok(run("pnpm", ["pack", "--pack-destination", tarballs], { cwd: join(repoRoot, dir) }), `pnpm pack in ${dir}`);
    const tarball = readdirSync(tarballs).find((f) => !before.has(f) && f.endsWith(".tgz"));
    if (tarball === undefined) throw new Error(`pnpm pack in ${dir} wrote no tarball`);
    const contents = join(work, "contents", manifest.name);
    mkdirSync(contents, { recursive: true });
    ok(run("tar", ["-xzf", join(tarballs, tarball), "-C", contents]), `tar of ${tarball}`);
    // The manifest as published (pnpm replaces workspace: ranges with versions when it packs).
    const published = JSON.parse(readFileSync(join(contents, "package", "package.json"), "utf8")) as Manifest;
    packed.set(manifest.name, { dir, manifest: published, tarball: join(tarballs, tarball), contents: join(contents, "package") });
  }
}, SLOW);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

const dirs = publicPackageDirs();
const names = dirs.map((dir) => (JSON.parse(readFileSync(join(repoRoot, dir, "package.json"), "utf8")) as Manifest).name);
const libraries = names.filter((name) => name !== "cass-memory");

function get(name: string): Packed {
  const p = packed.get(name);
  if (p === undefined) throw new Error(`${name} was not packed`);
  return p;
}

describe("every public package's tarball", { timeout: SLOW }, () => {
  it("includes the CLI, core, the stores, their contract and the MCP server", () => {
    for (const name of ["cass-memory", "@cass-memory/core", "@cass-memory/store-yaml", "@cass-memory/store-sqlite", "@cass-memory/store-contract", "@cass-memory/mcp", "@cass-memory/runtime"]) {
      expect(names).toContain(name);
    }
  });

  it.each(names)("%s: publint --strict finds nothing", async (name) => {
    const p = get(name);
    const tarball = readFileSync(p.tarball);
    const { messages, pkg } = await publint({ pack: { tarball: tarball.buffer.slice(tarball.byteOffset, tarball.byteOffset + tarball.byteLength) }, strict: true, level: "suggestion" });
    expect(messages.map((m) => `${m.type}: ${formatMessage(m, pkg) ?? m.code}`)).toEqual([]);
  }, SLOW);

  it.each(libraries)("%s: arethetypeswrong (node16 profile) finds no problem for ESM or CommonJS consumers", (name) => {
    const attw = join(dirname(require.resolve("@arethetypeswrong/cli/package.json")), "dist/index.js");
    const result = run(process.execPath, [attw, get(name).tarball, "--profile", "node16", "--format", "json", "--no-color"]);
    const report = JSON.parse(result.stdout) as { analysis?: { problems?: Array<{ kind: string; entrypoint?: string; resolutionKind?: string }> } };
    expect(Array.isArray(report.analysis?.problems)).toBe(true);
    // The JSON lists node10 findings too; the node16 profile (and so the exit status) ignores them:
    // subpath exports need node16 or bundler resolution, which every supported consumer has.
    expect(report.analysis!.problems!.filter((p) => p.resolutionKind !== "node10")).toEqual([]);
    expect(result.status, result.stderr).toBe(0);
  }, SLOW);

  it.each(names)("%s: declares exactly the packages its code loads", (name) => {
    const p = get(name);
    const m = p.manifest;
    const loaded = loadedPackages(p.contents);
    loaded.delete(name); // a package.json reading itself
    const declared = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {})]);
    // The CLI's bundles contain our packages; from sources (tests) they fall back to importing
    // them, a code path the bundles never take (they load their sibling dist/cm-*.cjs files).
    const undeclared = [...loaded].filter((pkg) => !declared.has(pkg) && !(name === "cass-memory" && pkg.startsWith("@cass-memory/")));
    expect(undeclared).toEqual([]);
    const unused = Object.keys(m.dependencies ?? {}).filter((pkg) => !loaded.has(pkg));
    expect(unused).toEqual([]);
    // Published manifests name real versions, not the workspace protocol.
    expect(JSON.stringify(m)).not.toContain("workspace:");
  }, SLOW);

  it.each(names)("%s: metadata, README, and no source maps", (name) => {
    const p = get(name);
    const m = JSON.parse(readFileSync(join(p.contents, "package.json"), "utf8")) as Manifest;
    expect(m.description ?? "").not.toBe("");
    expect(m.keywords?.length ?? 0).toBeGreaterThan(0);
    expect(m.license).toBe("MIT");
    expect(m.engines?.node).toBe(">=20.19.0");
    expect(m.homepage).toMatch(/^https:\/\//);
    expect(m.bugs?.url).toMatch(/^https:\/\//);
    expect(m.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    expect(m.repository?.directory).toBe(p.dir);
    expect(existsSync(join(p.contents, "README.md"))).toBe(true);
    expect(existsSync(join(p.contents, "LICENSE"))).toBe(true);
    const files = filesUnder(p.contents).map((f) => relative(p.contents, f));
    expect(files.filter((f) => f.endsWith(".map"))).toEqual([]);
    expect(files.filter((f) => /(^|\/)(src|test)\//.test(f) || f.endsWith(".test.js"))).toEqual([]);
  });

  it("the CLI carries the dashboard's built page (dist/dashboard-ui); the dashboard package itself is private", () => {
    const ui = join(get("cass-memory").contents, "dist", "dashboard-ui");
    expect(readFileSync(join(ui, "index.html"), "utf8")).toContain("<html");
    expect(readdirSync(join(ui, "assets")).some((f) => f.endsWith(".js"))).toBe(true);
    expect(names).not.toContain("@cass-memory/dashboard");
  });

  it("one package owns cm-mcp: the CLI", () => {
    const owners = names.filter((name) => get(name).manifest.bin?.["cm-mcp"] !== undefined);
    expect(owners).toEqual(["cass-memory"]);
  });

  it("core is tree-shakeable: sideEffects false and subpath entry points for its parts", () => {
    const m = get("@cass-memory/core").manifest;
    expect(m.sideEffects).toBe(false);
    expect(Object.keys(m.exports ?? {})).toEqual(expect.arrayContaining([".", "./schemas", "./scoring", "./ranking", "./curator", "./operations", "./testing"]));
  });
});

describe("the CLI installed from its tarball alone (npm i -g)", { timeout: SLOW }, () => {
  let prefix: string;
  let home: string;
  let bin: (name: string) => string;
  let env: NodeJS.ProcessEnv;

  beforeAll(() => {
    prefix = join(work, "global");
    home = join(work, "home");
    mkdirSync(home);
    ok(run("npm", ["install", "--global", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error", get("cass-memory").tarball]), "npm install -g cass-memory");
    bin = (name) => join(prefix, "bin", name);
    // A fresh user: own HOME, no cass, no LLM, nothing inherited from the CI's configuration.
    env = { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, ".cache"), CASS_MEMORY_LLM: "none", CASS_PATH: join(home, "no-cass") };
  }, SLOW);

  it("installs no internal package and no native module: a small install", () => {
    const installed = join(prefix, "lib", "node_modules");
    const nested = join(installed, "cass-memory", "node_modules");
    const all = [installed, ...(existsSync(nested) ? [nested] : [])].flatMap((d) => readdirSync(d).flatMap((n) => (n.startsWith("@") ? readdirSync(join(d, n)).map((s) => `${n}/${s}`) : [n])));
    expect(all.filter((n) => n.startsWith("@cass-memory/") || n === "better-sqlite3")).toEqual([]);
    // The bundles and yaml: a few MB (the issue measured 164 MB with every dependency declared).
    expect(sizeOf(installed)).toBeLessThan(40 * 1024 * 1024);
  });

  it("cm --version prints the package version", () => {
    const result = run(bin("cm"), ["--version"], { env });
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe(get("cass-memory").manifest.version);
    expect(result.status).toBe(0);
  });

  it("cm context … --json answers with the success envelope", () => {
    const result = run(bin("cm"), ["context", "fix the login bug", "--json"], { env, cwd: home });
    expect(result.status, result.stderr).toBe(0);
    const envelope = JSON.parse(result.stdout) as { success: boolean; command: string; data: { task: string; relevantBullets: unknown[] } };
    expect(envelope.success).toBe(true);
    expect(envelope.data.task).toBe("fix the login bug");
    expect(Array.isArray(envelope.data.relevantBullets)).toBe(true);
  });

  it("cm-mcp answers an MCP handshake and lists the tools", async () => {
    const child = spawn(bin("cm-mcp"), [], { env, cwd: home, stdio: ["pipe", "pipe", "pipe"] });
    const answers = new Map<number, { result?: { serverInfo?: { name?: string }; tools?: Array<{ name: string }> }; error?: unknown }>();
    let buffer = "";
    let stderr = "";
    const waiters = new Map<number, () => void>();
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl).trim();
        buffer = buffer.slice(nl + 1);
        if (line === "") continue;
        const message = JSON.parse(line) as { id?: number };
        if (typeof message.id === "number") {
          answers.set(message.id, message);
          waiters.get(message.id)?.();
        }
      }
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const ask = (id: number, method: string, params: unknown) =>
      new Promise<void>((resolve, reject) => {
        waiters.set(id, resolve);
        exited.then(() => reject(new Error(`cm-mcp exited before answering ${method}: ${stderr}`)));
        child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
      });
    try {
      await ask(1, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "packaging-test", version: "1" } });
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      await ask(2, "tools/list", {});
    } finally {
      child.stdin.end();
    }
    expect(await exited).toBe(0);
    expect(answers.get(1)?.result?.serverInfo?.name).toBe("cass-memory");
    expect(answers.get(2)?.result?.tools?.map((t) => t.name)).toContain("cm_context");
  }, SLOW);

  it("SQLite without better-sqlite3: exit 3 with the command that installs it", () => {
    const result = run(bin("cm"), ["context", "x", "--json"], { env: { ...env, CASS_MEMORY_STORAGE: "sqlite" }, cwd: home });
    expect(result.status).toBe(3);
    const envelope = JSON.parse(result.stdout) as { success: boolean; code: string; error: { message: string; hint?: string } | string; hint?: string };
    expect(envelope.success).toBe(false);
    expect(result.stdout).toContain("better-sqlite3, which is not installed");
    expect(result.stdout).toContain("npm install -g better-sqlite3");
    expect(result.stdout).not.toContain("Require stack");
  });
});

describe("core installed from its tarball alone into a fresh project", { timeout: SLOW }, () => {
  let project: string;
  const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");

  beforeAll(() => {
    project = join(work, "core-user");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "core-user", version: "1.0.0", private: true }));
    ok(run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", get("@cass-memory/core").tarball], { cwd: project }), "npm install @cass-memory/core");
  }, SLOW);

  const USE = `
const bullet = createTestBullet({ content: "Check JWT expiry before debugging 401s" });
const score = getEffectiveScore(bullet, new Date("2026-11-27T00:00:00Z"), defaultConfig());
const parsed = BulletSchema.safeParse(bullet);
const error = new AppError("CONFIG_INVALID", "x");
console.log(JSON.stringify({ score: typeof score, parsed: parsed.success, op: contextOperation.name, appError: isAppError(error) }));
`;
  const EXPECTED = { score: "number", parsed: true, op: "cm_context", appError: true };

  it("import from ESM (root and subpaths)", () => {
    writeFileSync(
      join(project, "use.mjs"),
      `import { AppError, isAppError } from "@cass-memory/core";
import { contextOperation } from "@cass-memory/core/operations";
import { getEffectiveScore } from "@cass-memory/core/scoring";
import { BulletSchema, defaultConfig } from "@cass-memory/core/schemas";
import { createTestBullet } from "@cass-memory/core/testing";
${USE}`,
    );
    const result = run(process.execPath, ["use.mjs"], { cwd: project });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual(EXPECTED);
  });

  it("require from CommonJS (root and subpaths), one AppError class across entry points", () => {
    writeFileSync(
      join(project, "use.cjs"),
      `const { AppError, isAppError } = require("@cass-memory/core");
const { contextOperation } = require("@cass-memory/core/operations");
const { getEffectiveScore } = require("@cass-memory/core/scoring");
const { BulletSchema, defaultConfig } = require("@cass-memory/core/schemas");
const { createTestBullet } = require("@cass-memory/core/testing");
if (require("@cass-memory/core/operations").runOperation !== require("@cass-memory/core").runOperation) throw new Error("two copies");
${USE}`,
    );
    const result = run(process.execPath, ["use.cjs"], { cwd: project });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual(EXPECTED);
  });

  it("a minimal import bundled for a browser loads neither zod nor the rest of core", async () => {
    const esbuild = createRequire(require.resolve("tsup"))("esbuild") as typeof import("esbuild");
    const result = await esbuild.build({
      stdin: { contents: `import { getEffectiveScore } from "@cass-memory/core/scoring"; console.log(getEffectiveScore);`, resolveDir: project },
      bundle: true,
      minify: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    // Bytes each input module contributes to the output (modules read but shaken away count 0).
    const zodBytes = (meta: import("esbuild").Metafile) =>
      Object.entries(Object.values(meta.outputs)[0]!.inputs).filter(([path, v]) => path.includes("node_modules/zod/") && v.bytesInOutput > 0).length;
    expect(zodBytes(result.metafile)).toBe(0);
    expect(result.outputFiles[0]!.contents.length).toBeLessThan(8 * 1024);
    // The same import from the package root is tree-shaken too (sideEffects: false).
    const root = await esbuild.build({
      stdin: { contents: `import { getEffectiveScore } from "@cass-memory/core"; console.log(getEffectiveScore);`, resolveDir: project },
      bundle: true,
      minify: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    expect(zodBytes(root.metafile)).toBe(0);
    expect(root.outputFiles[0]!.contents.length).toBeLessThan(8 * 1024);
  });

  const typed = `import { AppError, isAppError, type Bullet } from "@cass-memory/core";
import { contextOperation } from "@cass-memory/core/operations";
import { getEffectiveScore } from "@cass-memory/core/scoring";
import { BulletSchema, defaultConfig } from "@cass-memory/core/schemas";
import { createTestBullet } from "@cass-memory/core/testing";
const bullet: Bullet = createTestBullet({ content: "x" });
const score: number = getEffectiveScore(bullet, new Date(), defaultConfig());
const ok: boolean = BulletSchema.safeParse({}).success && isAppError(new AppError("CONFIG_INVALID", "x"));
export const name: string = contextOperation.name;
// @ts-expect-error: the type of a score is checked (proves the declarations are really loaded)
export const wrong: string = score;
export { ok };
`;

  it.each([
    ["node16 (an .mts and a .cts file)", { module: "node16", moduleResolution: "node16" }, ["use.mts", "use.cts"]],
    ["bundler", { module: "esnext", moduleResolution: "bundler" }, ["use.ts"]],
  ])("TypeScript, %s resolution", (label, options, files) => {
    const dir = join(project, `ts-${label.split(" ")[0]}`);
    mkdirSync(dir, { recursive: true });
    for (const file of files) writeFileSync(join(dir, file), typed);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { ...options, target: "es2022", strict: true, noEmit: true, skipLibCheck: false, types: [] }, files }),
    );
    const result = run(process.execPath, [tsc, "-p", dir], { cwd: project });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  }, SLOW);
});

describe("store-contract used by a third party, from the tarballs, in their own vitest", { timeout: SLOW }, () => {
  it("the README's example store passes the contract", () => {
    const project = join(work, "store-author");
    mkdirSync(join(project, "test"), { recursive: true });
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "store-author", version: "1.0.0", private: true, type: "module" }));
    const vitestRange = (JSON.parse(readFileSync(join(repoRoot, "packages/store-contract/package.json"), "utf8")) as Manifest).peerDependencies?.vitest;
    expect(vitestRange).toBeDefined();
    // Our packages from their tarballs (no registry has them yet), vitest from the registry.
    ok(
      run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", get("@cass-memory/core").tarball, get("@cass-memory/store-contract").tarball, `vitest@${vitestRange}`], { cwd: project }),
      "npm install store-contract",
    );
    const readme = readFileSync(join(repoRoot, "packages/store-contract/README.md"), "utf8");
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(example).toContain("runStoreContract");
    writeFileSync(join(project, "test", "my-store.contract.test.ts"), example!);
    const result = run(process.execPath, [join(project, "node_modules", "vitest", "vitest.mjs"), "run", "--reporter=json", "--outputFile=report.json"], { cwd: project, env: { ...process.env, CI: "true" } });
    const report = JSON.parse(readFileSync(join(project, "report.json"), "utf8")) as { numPassedTests: number; numFailedTests: number; success: boolean };
    expect({ failed: report.numFailedTests, success: report.success }, result.stderr.slice(-4000)).toEqual({ failed: 0, success: true });
    expect(report.numPassedTests).toBeGreaterThan(50);
    expect(result.status).toBe(0);
  });
});

describe("release versions", { timeout: SLOW }, () => {
  it("`changeset version` releases never-published packages as 0.1.0 and bumps no package a major", () => {
    // On a copy of the manifests and the pending changesets (the tree itself is left alone).
    const copy = join(work, "changeset-version");
    mkdirSync(copy);
    for (const file of ["package.json", "pnpm-workspace.yaml"]) writeFileSync(join(copy, file), readFileSync(join(repoRoot, file)));
    mkdirSync(join(copy, ".changeset"));
    for (const file of readdirSync(join(repoRoot, ".changeset"))) writeFileSync(join(copy, ".changeset", file), readFileSync(join(repoRoot, ".changeset", file)));
    const before = new Map<string, string>();
    for (const dir of dirs) {
      mkdirSync(join(copy, dir), { recursive: true });
      const text = readFileSync(join(repoRoot, dir, "package.json"), "utf8");
      writeFileSync(join(copy, dir, "package.json"), text);
      before.set(dir, (JSON.parse(text) as Manifest).version);
    }
    ok(run(join(repoRoot, "node_modules", ".bin", "changeset"), ["version"], { cwd: copy }), "changeset version");
    for (const dir of dirs) {
      const old = before.get(dir)!;
      const next = (JSON.parse(readFileSync(join(copy, dir, "package.json"), "utf8")) as Manifest).version;
      if (old === "0.0.0") expect(`${dir} ${next}`).toBe(`${dir} 0.1.0`);
      else expect(`${dir} ${next.split(".")[0]}`).toBe(`${dir} ${old.split(".")[0]}`);
    }
  });
});
