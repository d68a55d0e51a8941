import { defineConfig } from "tsup";

// The library (`createCmMcpServer`, `startHttpServer`, `runStdioServer`, used by `cm serve`) and
// the `cm-mcp` executable (stdio by default).
export default defineConfig([
  {
    entry: ["src/index.ts"],
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
  },
  {
    entry: { "cm-mcp": "src/bin.ts" },
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: true,
    clean: false,
    banner: { js: "#!/usr/bin/env node" },
  },
]);
