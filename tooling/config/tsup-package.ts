import { defineConfig, type Options } from "tsup";

/** The build of every library package: ESM for Node 20 with type declarations and source maps. */
export function packageBuild(entry: string[] = ["src/index.ts"], overrides: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    target: "node20",
    platform: "node",
    dts: true,
    sourcemap: true,
    clean: true,
    ...overrides,
  });
}
