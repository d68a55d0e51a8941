/**
 * The `cm` executable (dist/cm.cjs, and dist/cm.js): a small loader in front of the bundled CLI.
 *
 * - `cm --version`, `-V`, `-v` and `version` print the version without loading any bundle.
 * - `cm --help`, `-h` and `help` print the root help rendered at build time by the real commander
 *   program (dist/cm-help.json; a test compares the two), when stdout is not a terminal (commander
 *   then wraps at 80 columns) and the program name is `cm` or `cass-memory`.
 * - `cm context …` / `cm ctx …`, `cm mark …` and `cm hook …` run a bundle holding only that
 *   command (cm-context.cjs, cm-mark.cjs, cm-hook.cjs); every other command line runs the whole
 *   CLI (cm-main.cjs).
 * - `cm context`, `cm mark` and `cm hook` are first offered to the resident process (`cm daemon`),
 *   if one is running for this build (daemon/client.ts).
 *
 * Each bundle runs through a vm.Script with V8's compiled code kept in a per-user cache, so a run
 * skips most of the parsing and compiling (Node 20 has no built-in compile cache; see
 * docs/benchmarks.md). Any problem with the cache only costs speed: the bundle then compiles
 * normally and the cache is rewritten.
 */
import { resolveCliName } from "./cli-name.js";
import { runThroughDaemon } from "./daemon/client.js";
import { daemonLocation, startDaemonInBackground, trustedSocket } from "./daemon/socket.js";
import { bundleFor } from "./dispatch.js";
import { VERSION } from "./version.js";

// Built-in modules through process.getBuiltinModule rather than `import`: this file is an ES module,
// and importing a built-in makes Node build an ES module facade of it, reading every export (for
// node:fs that loads the whole streams implementation through its ReadStream getter).
const { mkdirSync, readdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } = process.getBuiltinModule("node:fs");
const { createRequire, Module } = process.getBuiltinModule("node:module");
const { homedir } = process.getBuiltinModule("node:os");
const { basename, dirname, join } = process.getBuiltinModule("node:path");
const { fileURLToPath } = process.getBuiltinModule("node:url");
const { Script, constants: vmConstants } = process.getBuiltinModule("node:vm");
type Script = import("node:vm").Script;

// This file is built twice: dist/cm.cjs (CommonJS, the package's `bin`: Node starts a CommonJS entry
// ~10 ms sooner than an ES module, whose loader it would otherwise initialise) and dist/cm.js (the
// same loader as an ES module, kept for hook commands and scripts written against that path).
declare const __dirname: string | undefined;
const distDir = typeof __dirname === "string" ? __dirname : dirname(fileURLToPath(import.meta.url));

/** The text to print without loading a bundle, or null when the bundle must answer. */
function answerWithoutBundle(args: readonly string[]): string | null {
  const only = args.length === 1 ? args[0] : args.length === 2 && (args[1] === "--json" || args[1] === "-j") ? args[0] : undefined;
  if (only === "--version" || only === "-V" || only === "-v" || only === "version") return `${VERSION}\n`;
  if (args.length === 1 && (only === "--help" || only === "-h" || only === "help") && !process.stdout.isTTY) {
    const name = resolveCliName(process.argv);
    if (name !== "cm" && name !== "cass-memory") return null;
    try {
      const rendered = JSON.parse(readFileSync(join(distDir, "cm-help.json"), "utf8")) as { version?: string; help?: Record<string, string> };
      const text = rendered.version === VERSION ? rendered.help?.[name] : undefined;
      return typeof text === "string" && text !== "" ? text : null;
    } catch {
      return null;
    }
  }
  return null;
}

function cacheFile(bundlePath: string, bundle: string): string | null {
  if (process.env.CASS_MEMORY_NO_CODE_CACHE === "1") return null;
  const base = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), ".cache");
  const stat = statSync(bundlePath);
  const key = `${process.version}-${process.arch}-${stat.size}-${Math.trunc(stat.mtimeMs)}`;
  return join(base, "cass-memory", `${bundle}-${key}.v8cache`);
}

function loadCached(file: string | null): Buffer | undefined {
  if (file === null) return undefined;
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function saveCache(file: string, bundle: string, script: Script): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk only means the next run compiles again.
    return;
  }
  pruneCaches(file, bundle);
}

/** Removes this bundle's caches of other builds not used for a day (each upgrade leaves one behind). */
function pruneCaches(file: string, bundle: string): void {
  try {
    const dir = dirname(file);
    const dayAgo = Date.now() - 86_400_000;
    for (const name of readdirSync(dir)) {
      if (name === basename(file) || !name.startsWith(`${bundle}-`) || !name.endsWith(".v8cache")) continue;
      const path = join(dir, name);
      if (statSync(path).atimeMs < dayAgo && statSync(path).mtimeMs < dayAgo) unlinkSync(path);
    }
  } catch {
    // Pruning is housekeeping only.
  }
}

/** Runs a CommonJS bundle of dist/ through a vm.Script with V8's code cache. */
function runBundle(bundle: string): void {
  const bundlePath = join(distDir, `${bundle}.cjs`);
  const file = cacheFile(bundlePath, bundle);
  const cachedData = loadCached(file);
  // The build leaves these bundles ASCII-only (tsup.config.ts, asciiOnly; checked by a test), so
  // reading them as Latin-1 gives the same text while skipping UTF-8 decoding (~2x faster here).
  const source = readFileSync(bundlePath, "latin1");
  const script = new Script(Module.wrap(source), {
    filename: bundlePath,
    ...(cachedData ? { cachedData } : {}),
    importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (file !== null && (cachedData === undefined || script.cachedDataRejected)) {
    // Written on exit, so the functions compiled during this run are in the cache too.
    process.once("exit", () => saveCache(file, bundle, script));
  }
  const mod = { exports: {} as unknown };
  const run = script.runInThisContext() as (
    exports: unknown,
    require: NodeJS.Require,
    module: { exports: unknown },
    filename: string,
    dirname: string,
  ) => void;
  run.call(mod.exports, mod.exports, createRequire(bundlePath), mod, bundlePath, dirname(bundlePath));
}

/**
 * `cm context`, `cm mark` and `cm hook` go to the resident process when one of this build is running
 * (`cm daemon start`); it answers them without this process loading anything. Otherwise, or when
 * it cannot take the command, the bundle runs here.
 */
function runCommand(bundle: ReturnType<typeof bundleFor>): void {
  const location = bundle !== "cm-main" ? daemonLocation(distDir, VERSION) : null;
  if (location === null) return runBundle(bundle);
  if (!trustedSocket(location)) {
    // CASS_MEMORY_DAEMON=auto: start one for the commands that follow (this one runs here).
    if (process.env.CASS_MEMORY_DAEMON === "auto") process.once("exit", () => startDaemonInBackground(location, join(distDir, "cm.cjs")));
    return runBundle(bundle);
  }
  const verbose = args.includes("--verbose") || /^(1|true)$/i.test(process.env.CASS_MEMORY_VERBOSE ?? "");
  const debug = (line: string): void => {
    if (verbose) process.stderr.write(`[cm] ${line}\n`);
  };
  void runThroughDaemon(location, debug).then((handled) => {
    if (!handled) runBundle(bundle);
  });
}

const args = process.argv.slice(2);
const answer = answerWithoutBundle(args);
if (answer !== null) process.stdout.write(answer);
else runCommand(bundleFor(args));
