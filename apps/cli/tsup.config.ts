import { readFileSync } from "node:fs";
import { defineConfig } from "tsup";

const pkg = JSON.parse(readFileSync(new URL("./package.json", import.meta.url), "utf8")) as { version: string };

// Four outputs:
//  - dist/cm-main.cjs: the whole CLI bundled into one CommonJS file (no module resolution through
//    pnpm's symlinks at start-up; CommonJS so that a vm.Script can reuse V8's code cache), except
//    the LLM layer;
//  - dist/cm-serve.cjs: the MCP server started by `cm serve`;
//  - dist/cm-llm.cjs: the LLM layer (AI SDK and providers, ~2 MB), required only by the commands
//    that learn from sessions (a dynamic import() inside the cached vm.Script is not reliable);
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
    // Everything is bundled except the LLM layer, which lives in cm-llm.cjs.
    noExternal: [/^(?!@cass-memory\/(llm|mcp)$)/],
    external: ["@cass-memory/llm", "@cass-memory/mcp"],
    define: { __CM_VERSION__: JSON.stringify(pkg.version) },
  },
  {
    // The LLM layer, loaded on demand by reflect, diary, validate and audit (see src/llm.ts).
    entry: { "cm-llm": "src/llm.ts" },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    clean: false,
    splitting: false,
    noExternal: [/.*/],
  },
  {
    // The MCP server (`cm serve`): the MCP SDK and its dependencies, loaded only by that command.
    entry: { "cm-serve": "src/serve.ts" },
    format: ["cjs"],
    outExtension: () => ({ js: ".cjs" }),
    target: "node20",
    platform: "node",
    dts: false,
    sourcemap: false,
    clean: false,
    splitting: false,
    noExternal: [/^(?!@cass-memory\/llm$)/],
    external: ["@cass-memory/llm"],
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
