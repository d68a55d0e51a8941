import { defineConfig } from "tsup";

// The library (`createCmMcpServer`, `startHttpServer`, `runStdioServer`, used by `cm serve`), as ESM
// and CommonJS with types for both, and a development executable `dist/cm-mcp.js` (stdio by default)
// used by this package's tests and benchmarks. The executable is not published: the `cm-mcp`
// command belongs to the `cass-memory` package (see docs/adr/0013-packaging.md).
export default defineConfig([
  {
    entry: ["src/index.ts"],
    format: ["esm", "cjs"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: false,
    shims: true,
    splitting: false,
    clean: true,
  },
  {
    entry: { "cm-mcp": "src/bin.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    splitting: false,
    clean: false,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
