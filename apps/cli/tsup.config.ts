import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

// The CLI is bundled into one file: it starts ~40% faster than resolving every dependency through
// pnpm's symlinks (see docs/benchmarks.md). commander is CommonJS, so the ESM bundle needs a real
// `require` for its Node built-ins. The package version is injected at build time (`__CM_VERSION__`).
export default defineConfig({
  entry: { cm: "src/cm.ts" },
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: false,
  sourcemap: true,
  clean: true,
  noExternal: [/.*/],
  define: { __CM_VERSION__: JSON.stringify(pkg.version) },
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __cmCreateRequire } from 'node:module'; const require = __cmCreateRequire(import.meta.url);" },
});
