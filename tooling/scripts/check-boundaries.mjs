// Checks the dependency rules of ARCHITECTURE.md §2 on every workspace package:
//  - core depends on nothing of ours and its sources import no Node I/O (node:*, fs, path, …);
//  - adapters (cass, llm, store-*) depend on core only, never on each other;
//  - runtime may depend on core and adapters; only apps depend on runtime;
//  - nothing depends on an app; internal dependencies use `workspace:^` (dev deps may use workspace:*).
// Both package.json declarations and actual import statements in src/ are checked.
import { readFileSync, readdirSync, statSync, existsSync } from "node:fs";
import { join, relative } from "node:path";

// The monorepo root: the first argument, or the repository this script lives in.
const root = process.argv[2] ?? new URL("../..", import.meta.url).pathname;
const dirs = ["packages", "apps"].flatMap((d) =>
  existsSync(join(root, d)) ? readdirSync(join(root, d)).map((n) => join(root, d, n)).filter((p) => existsSync(join(p, "package.json"))) : [],
);

const pkgs = new Map();
for (const dir of dirs) {
  const json = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const folder = relative(root, dir);
  const kind = folder.startsWith("apps/")
    ? "app"
    : folder === "packages/core"
      ? "core"
      : folder === "packages/runtime"
        ? "runtime"
        : folder === "packages/store-contract"
          ? "contract"
          : "adapter";
  pkgs.set(json.name, { name: json.name, dir, folder, json, kind });
}

const errors = [];
const allowed = {
  core: new Set(),
  adapter: new Set(["core"]),
  contract: new Set(["core"]),
  runtime: new Set(["core", "adapter"]),
  app: new Set(["core", "runtime", "adapter"]),
};
const allowedDev = { ...allowed, adapter: new Set(["core", "contract"]), core: new Set(), runtime: new Set(["core", "adapter", "contract"]), app: new Set(["core", "runtime", "adapter", "contract"]) };

for (const pkg of pkgs.values()) {
  for (const [field, rules] of [["dependencies", allowed], ["peerDependencies", allowed], ["devDependencies", allowedDev]]) {
    for (const [dep, range] of Object.entries(pkg.json[field] ?? {})) {
      const target = pkgs.get(dep);
      if (!target) continue;
      if (!rules[pkg.kind].has(target.kind)) errors.push(`${pkg.folder}: ${field} on ${dep} (${pkg.kind} → ${target.kind}) is not allowed`);
      if (field === "dependencies" && range !== "workspace:^") errors.push(`${pkg.folder}: ${dep} must use "workspace:^" (has "${range}")`);
    }
  }
}

const NODE_IO = /^(node:|fs$|fs\/|path$|os$|child_process$|net$|http$|https$|crypto$|worker_threads$|readline$|stream$|url$|process$)/;
const importRe = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts|js|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

for (const pkg of pkgs.values()) {
  const src = join(pkg.dir, "src");
  if (!existsSync(src)) continue;
  for (const file of walk(src)) {
    const isTest = /\.test\.[mc]?[jt]s$/.test(file);
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec) continue;
      const where = relative(root, file);
      if (pkg.kind === "core" && !isTest && NODE_IO.test(spec)) errors.push(`${where}: core must stay pure, imports "${spec}"`);
      if (pkg.kind === "core" && !isTest && /\bprocess\.(env|cwd|argv|stdout|stderr|exit)\b/.test(text)) {
        errors.push(`${where}: core must not touch the process (process.env/cwd/argv/stdout/exit)`);
        break;
      }
      const target = [...pkgs.values()].find((p) => spec === p.name || spec.startsWith(`${p.name}/`));
      if (!target || target === pkg) continue;
      const declared = { ...pkg.json.dependencies, ...pkg.json.peerDependencies, ...(isTest ? pkg.json.devDependencies : {}) };
      if (!(target.name in declared)) errors.push(`${where}: imports ${target.name} without declaring it`);
      const rules = isTest ? allowedDev : allowed;
      if (!rules[pkg.kind].has(target.kind)) errors.push(`${where}: ${pkg.kind} may not import ${target.kind} ${target.name}`);
    }
  }
}

if (errors.length > 0) {
  console.error(`Boundary check failed (${errors.length}):`);
  for (const e of errors) console.error(`  - ${e}`);
  process.exit(1);
}
console.error(`Boundary check passed: ${pkgs.size} packages.`);
