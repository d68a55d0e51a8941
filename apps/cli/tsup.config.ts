import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

// Two outputs:
//  - dist/cm-main.cjs: the whole CLI bundled into one CommonJS file (no module resolution through
//    pnpm's symlinks at start-up; CommonJS so that a vm.Script can reuse V8's code cache);
//  - dist/cm.js: the executable, a tiny ESM loader that runs cm-main.cjs with that cache.
// The package version is injected at build time (`__CM_VERSION__`).
export default defineConfig([
  {
    entry: { "cm-main": "src/cm.ts" },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: true,
    clean: true,
    splitting: false,
    noExternal: [/.*/],
    define: { __CM_VERSION__: JSON.stringify(pkg.version) },
  },
  {
    entry: { cm: "src/bin.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    clean: false,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
