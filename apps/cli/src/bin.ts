/**
 * The `cm` executable. A tiny loader in front of the bundled CLI (`cm-main.cjs`) that keeps V8's
 * compiled code for the bundle in a per-user cache, so each run skips most of the parsing and
 * compiling of ~1 MB of JavaScript (Node 20 has no built-in compile cache; see
 * docs/benchmarks.md). Any problem with the cache only costs speed: the bundle then compiles
 * normally and the cache is rewritten.
 */
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createRequire, Module } from "node:module";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Script, constants as vmConstants } from "node:vm";

const mainPath = join(dirname(fileURLToPath(import.meta.url)), "cm-main.cjs");

function cacheFile(): string | null {
  if (process.env.CASS_MEMORY_NO_CODE_CACHE === "1") return null;
  const base = process.env.XDG_CACHE_HOME || join(process.env.HOME || homedir(), ".cache");
  const stat = statSync(mainPath);
  const key = `${process.version}-${process.arch}-${stat.size}-${Math.trunc(stat.mtimeMs)}`;
  return join(base, "cass-memory", `cm-main-${key}.v8cache`);
}

function loadCached(file: string | null): Buffer | undefined {
  if (file === null) return undefined;
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

function saveCache(file: string, script: Script): void {
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, script.createCachedData(), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    // A read-only or full disk only means the next run compiles again.
  }
}

const file = cacheFile();
const cachedData = loadCached(file);
const source = readFileSync(mainPath, "utf8");
const script = new Script(Module.wrap(source), {
  filename: mainPath,
  ...(cachedData ? { cachedData } : {}),
  importModuleDynamically: vmConstants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
if (file !== null && (cachedData === undefined || script.cachedDataRejected)) {
  // Written on exit, so the functions compiled during this run are in the cache too.
  process.once("exit", () => saveCache(file, script));
}
const mod = { exports: {} as unknown };
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  dirname: string,
) => void;
run.call(mod.exports, mod.exports, createRequire(mainPath), mod, mainPath, dirname(mainPath));
