import { defineConfig, type Options } from "tsup";

/**
 * The build of every library package: ESM (`.js`) and CommonJS (`.cjs`) for Node 20, with type
 * declarations for both (`.d.ts`, `.d.cts`), so that `import` and `require` each get their own
 * module format and types (see docs/adr/0013-packaging.md). No source maps: they are not published.
 * `shims` gives the CommonJS build a working `import.meta.url`.
 */
export function packageBuild(entry: string[] = ["src/index.ts"], overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm", "cjs"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: false,
    shims: true,
    // Shared chunks in both formats: CommonJS entry points of one package then share one copy of
    // each module (one AppError class for `.` and `./testing`).
    splitting: true,
    clean: true,
    ...overrides,
  });
}
