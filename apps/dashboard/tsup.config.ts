import { defineConfig } from "tsup";

// The server half (request handler for /dashboard, used by `cm dashboard` and `cm serve`) as ESM with
// types. The page is built separately by scripts/build-ui.mjs into dist/ui/.
export default defineConfig({
  entry: ["src/server/index.ts"],
  format: ["esm"],
  target: "node20",
  platform: "node",
  dts: true,
  sourcemap: false,
  splitting: false,
  clean: true,
});
