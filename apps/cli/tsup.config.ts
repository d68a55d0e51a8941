import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

// The outputs:
//  - dist/cm-main.cjs: the whole CLI bundled into one CommonJS file (no module resolution through
//    pnpm's symlinks at start-up; CommonJS so that a vm.Script can reuse V8's code cache), except
//    the LLM layer;
//  - dist/cm-context.cjs, dist/cm-mark.cjs, dist/cm-hook.cjs: the same CLI with only `context`,
//    `mark` or `hook` (the hot commands of an agent), so that they load a fraction of the code;
//  - dist/cm-help.json: the root `--help` as commander prints it (generated from cm-main.cjs after
//    its build), printed by the loader without loading any bundle;
//  - dist/cm-serve.cjs: the MCP server started by `cm serve`;
//  - dist/cm-llm.cjs: the LLM layer (AI SDK and providers, ~2 MB), required only by the commands
//    that learn from sessions (a dynamic import() inside the cached vm.Script is not reliable);
//  - dist/cm.cjs: the executable (package.json "bin"), a tiny CommonJS loader that answers
//    --version/--help itself and runs one of the bundles above with that cache; dist/cm.js is the
//    same loader as an ES module (the executable of earlier versions, still run by hook commands).
// The package version is injected at build time (`__CM_VERSION__`).
/** One self-contained CommonJS bundle; `external` packages are left to `require`. */
function cjsBundle(entry: Record<string, string>, options: { external?: string[]; main?: boolean; alias?: Record<string, string> } = {}): Options {
  const external = options.external ?? [];
  const pattern = external.map((name) => name.replace(/[/.]/g, "\\$&")).join("|");
  return {
    entry,
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: Boolean(options.main),
    clean: Boolean(options.main),
    splitting: false,
    // Whitespace, comments and redundant syntax go; names stay (stack traces remain readable).
    // A third less to read and to hold as a string on every start (cm-context.cjs 1.71 → 1.20 MB).
    minifyWhitespace: true,
    minifySyntax: true,
    noExternal: [external.length > 0 ? new RegExp(`^(?!(${pattern})$)`) : /.*/],
    external,
    esbuildOptions(esbuild) {
      // Minified output would be one very long line. Line-based tools read it wrongly: publint
      // tells CommonJS from ES modules after cutting each line at its first `//` (a URL in a
      // string then hides the rest of the bundle), so lines are kept under 1,000 characters.
      esbuild.lineLimit = 1000;
      // `import.meta` is empty in CommonJS; the bundled packages that read `import.meta.url` (the
      // YAML store's lazy `yaml` loader) fall back to `require` when it is undefined. Saying so
      // here keeps esbuild from warning about it on every build.
      esbuild.define = { ...esbuild.define, "import.meta.url": "undefined" };
      if (options.alias !== undefined) esbuild.alias = { ...esbuild.alias, ...options.alias };
    },
  };
}

/**
 * Built-in modules that the CLI bundles load on first use instead of at start-up. Their importers
 * (commander and the cass adapter for child_process; hashing and random ids for crypto; the native
 * history index for zlib) are initialised by every command, but most runs never spawn, hash or
 * inflate, and these three cost several milliseconds each to load (crypto alone ~8 ms, with its
 * dozen internal modules). Each import resolves to a generated module whose exports are getters
 * that `require` the real module the first time any of them is read.
 */
const LAZY_BUILTINS = ["child_process", "crypto", "zlib"];
const lazyBuiltins: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "lazy-builtins",
  setup(build) {
    const filter = new RegExp(`^(node:)?(${LAZY_BUILTINS.join("|")})$`);
    // The generated module's own `require("node:…")` stays a real require.
    build.onResolve({ filter }, (args) =>
      args.namespace === "lazy-builtin" ? { path: args.path, external: true } : { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" },
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, (args) => {
      const keys = Object.keys(createRequire(import.meta.url)(args.path) as object);
      return {
        loader: "js",
        contents: [
          `let real;`,
          `const load = () => (real ??= require(${JSON.stringify(`node:${args.path}`)}));`,
          `for (const key of ${JSON.stringify(keys)}) Object.defineProperty(exports, key, { enumerable: true, get: () => load()[key] });`,
        ].join("\n"),
      };
    });
  },
};

/** Externals of every CLI bundle: loaded on demand from their own bundles or packages. */
// pg (the PostgreSQL client, used only by storage.backend "postgres") is bundled too, as a lazily
// run module: required from node_modules it costs ~65 ms per process (32 files compiled without a
// code cache), from the bundle a few. Its optional native binding is left out (noPgNative below).
const cliExternal = ["@cass-memory/llm", "@cass-memory/mcp", "@cass-memory/dashboard", "better-sqlite3", "@toon-format/toon"];

/**
 * pg requires its optional native binding (pg-native) only when a program asks for `pg.native`,
 * and treats MODULE_NOT_FOUND as "not installed". In the bundles that require is a module that
 * throws exactly that error, so the package loads no module it does not declare.
 */
const noPgNative: NonNullable<Options["esbuildPlugins"]>[number] = {
  name: "no-pg-native",
  setup(build) {
    build.onResolve({ filter: /^pg-native$/ }, () => ({ path: "pg-native", namespace: "no-pg-native" }));
    build.onLoad({ filter: /.*/, namespace: "no-pg-native" }, () => ({
      loader: "js",
      contents: `const error = new Error("Cannot find module 'pg-native'"); error.code = "MODULE_NOT_FOUND"; throw error;`,
    }));
  },
};
const version = { __CM_VERSION__: JSON.stringify(pkg.version) };

/**
 * Rewrites a bundle as ASCII: the few non-ASCII characters esbuild leaves (in comments and regular
 * expression literals) become \uXXXX escapes, which mean the same there. Node then reads the file
 * as a one-byte string, and V8 takes half the time to read it and check its code cache.
 */
function asciiOnly(file: string): void {
  const text = readFileSync(file, "utf8");
  const ascii = text.replace(/(\\?)([^\x00-\x7f])/g, (_, backslash: string, c: string) => {
    // `\’` (an identity escape) would become `\\u2019`: refuse rather than change its meaning.
    if (backslash !== "") throw new Error(`${file}: a non-ASCII character after a backslash (${JSON.stringify(c)})`);
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
  if (ascii !== text) writeFileSync(file, ascii);
}

/** Renders the root help with the real program (cm-main.cjs) for both program names, non-TTY (80 columns). */
function renderHelp(): void {
  const help: Record<string, string> = {};
  for (const name of ["cm", "cass-memory"]) {
    help[name] = execFileSync(process.execPath, ["dist/cm-main.cjs", "--help"], {
      encoding: "utf8",
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CASS_MEMORY_CLI_NAME: name, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "inherit"],
    });
  }
  writeFileSync("dist/cm-help.json", `${JSON.stringify({ version: pkg.version, help })}\n`);
}

/** Copies the dashboard's built page (apps/dashboard/dist/ui, built first by turbo) to dist/dashboard-ui/. */
function copyDashboardUi(): void {
  const from = fileURLToPath(new URL("../dashboard/dist/ui", import.meta.url));
  if (!existsSync(join(from, "index.html"))) throw new Error(`${from}/index.html is missing: build @cass-memory/dashboard first`);
  rmSync("dist/dashboard-ui", { recursive: true, force: true });
  cpSync(from, "dist/dashboard-ui", { recursive: true });
}

export default defineConfig([
  // Everything except the LLM layer and the MCP server, which live in their own bundles.
  // better-sqlite3 (a native module, a dependency of this package) is never bundled: the SQLite
  // store that requires it is bundled, but only initialised when `storage.backend` is sqlite (the
  // runtime imports it dynamically, which esbuild turns into a lazily run module), so other runs
  // never load it.
  {
    ...cjsBundle({ "cm-main": "src/cm.ts" }, { main: true, external: cliExternal }),
    define: version,
    esbuildPlugins: [lazyBuiltins, noPgNative],
    // Keep `node:` specifiers, so that the lazy built-ins reach the plugin above.
    removeNodeProtocol: false,
    onSuccess: async () => {
      asciiOnly("dist/cm-main.cjs");
      renderHelp();
    },
  },
  // `cm context`, `cm mark` and `cm hook` alone (the loader picks them from the command line).
  // Core is taken from its sources here (not its dist chunks), so that esbuild keeps only the
  // modules these two commands reach (core has no side effects on import: "sideEffects": false).
  {
    ...cjsBundle(
      { "cm-context": "src/cm-context.ts", "cm-mark": "src/cm-mark.ts", "cm-hook": "src/cm-hook.ts" },
      { external: cliExternal, alias: { "@cass-memory/core": fileURLToPath(new URL("../../packages/core/src/index.ts", import.meta.url)) } },
    ),
    define: version,
    esbuildPlugins: [lazyBuiltins, noPgNative],
    // Keep `node:` specifiers, so that the lazy built-ins reach the plugin above.
    removeNodeProtocol: false,
    onSuccess: async () => {
      asciiOnly("dist/cm-context.cjs");
      asciiOnly("dist/cm-mark.cjs");
      asciiOnly("dist/cm-hook.cjs");
    },
  },
  // The LLM layer, loaded on demand by reflect, diary, validate and audit (see src/llm.ts).
  cjsBundle({ "cm-llm": "src/llm.ts" }),
  // The TOON encoder (ESM-only upstream), loaded only when a command prints TOON (src/formats.ts).
  cjsBundle({ "cm-toon": "src/toon-entry.ts" }),
  // The MCP server (`cm serve`): the MCP SDK and its dependencies, loaded only by that command.
  // The SQLite and PostgreSQL stores are not bundled here either: `cm serve` passes cm-main's
  // loaders to the server (bundled here, the lazily run store modules would also wrap core and zod,
  // which the MCP SDK needs initialised when it loads).
  // It holds the dashboard's server too (`cm dashboard`, `/dashboard` of `cm serve`); the dashboard's
  // built page is copied to dist/dashboard-ui/ so that the installed package serves it.
  {
    ...cjsBundle({ "cm-serve": "src/serve.ts" }, { external: ["@cass-memory/llm", "@cass-memory/store-sqlite", "@cass-memory/store-postgres", "better-sqlite3", "pg"] }),
    onSuccess: async () => copyDashboardUi(),
  },
  {
    entry: { cm: "src/bin.ts", "cm-mcp": "src/mcp-bin.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    clean: false,
    define: version,
    banner: { js: "#!/usr/bin/env node" },
  },
  // The same loader as CommonJS: the package's `bin` (see src/bin.ts).
  {
    entry: { cm: "src/bin.ts" },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    clean: false,
    // `import.meta.url` is read only when `__dirname` is missing (the ES module build).
    define: { ...version, "import.meta.url": "undefined" },
    banner: { js: "#!/usr/bin/env node" },
  },
]);
