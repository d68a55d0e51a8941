// Builds the dashboard page into dist/ui/: index.html (from src/ui/static) plus one JS bundle and one
// CSS file in dist/ui/assets/ (uPlot and its stylesheet included). No CDN, no inline script or style,
// so the page runs under the server's CSP (script-src 'self'; style-src 'self').
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = join(root, "dist/ui");
const assets = join(out, "assets");

rmSync(out, { recursive: true, force: true });
mkdirSync(assets, { recursive: true });
cpSync(join(root, "src/ui/static"), out, { recursive: true });

// uPlot is MIT-licensed: its notice travels with the bundle that contains it.
const require = createRequire(import.meta.url);
const uplotDir = dirname(require.resolve("uplot/package.json"));
const uplotVersion = JSON.parse(readFileSync(join(uplotDir, "package.json"), "utf8")).version;
const uplotLicense = readFileSync(join(uplotDir, "LICENSE"), "utf8").replace(/\*\//g, "* /").trim();
const banner = `/*! Includes uPlot ${uplotVersion} (https://github.com/leeoniya/uPlot):\n${uplotLicense}\n*/`;

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
  banner: { js: banner, css: banner },
  logLevel: "warning",
  absWorkingDir: root,
});

for (const name of ["index.html", "assets/app.js", "assets/app.css"]) {
  const file = join(out, name);
  if (!existsSync(file)) throw new Error(`build-ui: ${name} was not produced`);
}
const sizes = readdirSync(assets).map((f) => `${f} ${(statSync(join(assets, f)).size / 1024).toFixed(1)} KB`);
process.stderr.write(`build-ui: dist/ui (${sizes.join(", ")})\n`);
