// Builds the dashboard page into dist/ui/: index.html (from src/ui/static) plus one JS bundle and one
// CSS file in dist/ui/assets/ (uPlot and its stylesheet included). No CDN, no inline script or style,
// so the page runs under the server's CSP (script-src 'self'; style-src 'self').
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/ui");
const assets = join(out, "assets");

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
cpSync(join(root, "src/ui/static"), out, { recursive: true });

await build({
  entryPoints: { app: join(root, "src/ui/main.ts") },
  outdir: assets,
  bundle: true,
  format: "esm",
  platform: "browser",
  target: ["chrome100", "firefox100", "safari15"],
  minify: true,
  sourcemap: false,
  legalComments: "eof",
  logLevel: "warning",
  absWorkingDir: root,
});

for (const name of ["index.html", "assets/app.js", "assets/app.css"]) {
  const file = join(out, name);
  if (!existsSync(file)) throw new Error(`build-ui: ${name} was not produced`);
}
const sizes = readdirSync(assets).map((f) => `${f} ${(statSync(join(assets, f)).size / 1024).toFixed(1)} KB`);
process.stderr.write(`build-ui: dist/ui (${sizes.join(", ")})\n`);
