// Bundle size of @cass-memory/core for a browser app (issue 16): what esbuild (bundle, minify,
// platform browser, ESM) keeps of core's built dist/ for a few typical imports, through the package's
// exports map (so sideEffects and the subpath entry points count as they do for users). Prints the
// table and writes it to docs/benchmarks.md ("Bundle size"). Needs `pnpm --filter @cass-memory/core build`.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
// esbuild comes with tsup (a root devDependency).
const esbuild = createRequire(createRequire(join(root, "package.json")).resolve("tsup"))("esbuild");

const cases = [
  ["one scoring function", `import { getEffectiveScore } from "@cass-memory/core/scoring"; console.log(getEffectiveScore);`],
  ["the ranker", `import { rankBulletsForTask } from "@cass-memory/core/ranking"; console.log(rankBulletsForTask);`],
  ["the curator", `import { curatePlaybook } from "@cass-memory/core/curator"; console.log(curatePlaybook);`],
  ["the three above, from their subpaths", `import { getEffectiveScore } from "@cass-memory/core/scoring"; import { rankBulletsForTask } from "@cass-memory/core/ranking"; import { curatePlaybook } from "@cass-memory/core/curator"; console.log(getEffectiveScore, rankBulletsForTask, curatePlaybook);`],
  ["the three above, from the root `@cass-memory/core`", `import { getEffectiveScore, rankBulletsForTask, curatePlaybook } from "@cass-memory/core"; console.log(getEffectiveScore, rankBulletsForTask, curatePlaybook);`],
  ["one schema (`BulletSchema`, needs zod)", `import { BulletSchema } from "@cass-memory/core/schemas"; console.log(BulletSchema);`],
  ["everything (`import * as core`)", `import * as core from "@cass-memory/core"; console.log(core);`],
];

const work = mkdtempSync(join(tmpdir(), "cm-bundle-"));
try {
  mkdirSync(join(work, "node_modules", "@cass-memory"), { recursive: true });
  symlinkSync(join(root, "packages", "core"), join(work, "node_modules", "@cass-memory", "core"), "dir");
  const rows = [];
  for (const [label, code] of cases) {
    const entry = join(work, "entry.mjs");
    writeFileSync(entry, code);
    const result = await esbuild.build({ entryPoints: [entry], bundle: true, minify: true, platform: "browser", format: "esm", write: false, metafile: true, logLevel: "silent", absWorkingDir: work, preserveSymlinks: false });
    const out = result.outputFiles[0].contents;
    const inputs = Object.entries(Object.values(result.metafile.outputs)[0].inputs);
    const zod = inputs.filter(([path]) => path.includes("/zod/")).reduce((sum, [, v]) => sum + v.bytesInOutput, 0);
    rows.push({ label, bytes: out.length, gzip: gzipSync(out).length, zod });
  }
  const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} with esbuild ${esbuild.version} (bundle, minify, platform browser, ESM) over core's built dist through its exports map; \`pnpm bench:bundle\` (bench/bundle-size.mjs).`,
    "",
    "| import | minified | gzip | of which zod |",
    "|---|---:|---:|---:|",
    ...rows.map((r) => `| ${r.label} | ${kb(r.bytes)} | ${kb(r.gzip)} | ${r.zod === 0 ? "none" : kb(r.zod)} |`),
  ].join("\n");
  console.log(table);
  if (process.env.BENCH_NO_DOC !== "1") updateBenchmarkDoc("bundle", "Bundle size of `@cass-memory/core`", table);
} finally {
  rmSync(work, { recursive: true, force: true });
}
