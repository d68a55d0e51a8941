// Checks the dependency rules of ARCHITECTURE.md §2 on every workspace package:
//  - core depends on nothing of ours and its sources import no Node I/O (node:*, fs, path, …);
//  - adapters (cass, llm, store-*) depend on core (and the shared node-files support package) only,
//    never on each other;
//  - runtime may depend on core and adapters; only apps depend on runtime;
//  - nothing depends on an app, except the CLI on the MCP server app (`cm serve`, ADR 0006) and on the
//    dashboard app (`cm dashboard`, issue 20), which itself uses the MCP server's host checks; internal
//    dependencies use `workspace:^` (dev deps may use workspace:*).
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
  const kind = folder === "apps/mcp"
    ? "server"
    : folder === "apps/dashboard"
    ? "dashboard"
    : folder.startsWith("apps/")
    ? "app"
    : folder === "packages/core"
      ? "core"
      : folder === "packages/runtime"
        ? "runtime"
        : folder === "packages/store-contract"
          ? "contract"
          : folder === "packages/node-files"
            ? "support"
          : "adapter";
  pkgs.set(json.name, { name: json.name, dir, folder, json, kind });
}

const errors = [];
const allowed = {
  core: new Set(),
  // Node file primitives (lock, atomic write, JSONL) shared by the file-backed stores.
  support: new Set(["core"]),
  adapter: new Set(["core", "support"]),
  contract: new Set(["core"]),
  runtime: new Set(["core", "adapter", "support"]),
  // The MCP server is an app (bin `cm-mcp`) that the CLI also starts (`cm serve`): ADR 0006.
  server: new Set(["core", "runtime", "adapter"]),
  // The web dashboard (served by `cm dashboard` and `cm serve`), bundled into the CLI like the MCP server.
  dashboard: new Set(["core", "runtime", "server"]),
  app: new Set(["core", "runtime", "adapter", "server", "dashboard"]),
};
const allowedDev = {
  ...allowed,
  adapter: new Set(["core", "support", "contract"]),
  support: new Set(["core"]),
  core: new Set(),
  runtime: new Set(["core", "adapter", "contract"]),
  server: new Set(["core", "runtime", "adapter", "contract"]),
  dashboard: new Set(["core", "runtime", "server"]),
  app: new Set(["core", "runtime", "adapter", "server", "dashboard", "contract"]),
};

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

/**
 * The code of a source file with comments and the text of string literals blanked out (template
 * literal `${…}` expressions are kept), so that words inside strings and comments do not count.
 */
function codeOnly(text) {
  let out = "";
  let i = 0;
  const braces = []; // template nesting: depth of `{` inside each open `${`
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 2;
      out += " ";
      continue;
    }
    if (c === "'" || c === '"') {
      i++;
      while (i < text.length && text[i] !== c && text[i] !== "\n") i += text[i] === "\\" ? 2 : 1;
      i++;
      out += `${c}${c}`;
      continue;
    }
    if (c === "`" || (c === "}" && braces.length > 0 && braces[braces.length - 1] === 0)) {
      if (c === "}") braces.pop();
      i++;
      while (i < text.length && text[i] !== "`" && !(text[i] === "$" && text[i + 1] === "{")) i += text[i] === "\\" ? 2 : 1;
      if (text[i] === "$") {
        braces.push(0);
        i += 2;
        out += "`${";
      } else {
        i++;
        out += "``";
      }
      continue;
    }
    if (braces.length > 0 && c === "{") braces[braces.length - 1]++;
    if (braces.length > 0 && c === "}") braces[braces.length - 1]--;
    out += c;
    i++;
  }
  return out;
}

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
    const where = relative(root, file);
    if (pkg.kind === "core" && !isTest && /\bprocess\.(env|cwd|argv|stdout|stderr|exit)\b/.test(codeOnly(text))) {
      errors.push(`${where}: core must not touch the process (process.env/cwd/argv/stdout/exit)`);
    }
    for (const m of text.matchAll(importRe)) {
      const spec = m[1] ?? m[2] ?? m[3];
      if (!spec) continue;
      if (pkg.kind === "core" && !isTest && NODE_IO.test(spec)) errors.push(`${where}: core must stay pure, imports "${spec}"`);
      const target = [...pkgs.values()].find((p) => spec === p.name || spec.startsWith(`${p.name}/`));
      if (!target || target === pkg) continue;
      // The CLI's sources are bundled into its dist at build time, so the internal packages they
      // import are devDependencies of the published package (docs/adr/0013-packaging.md).
      const bundled = pkg.folder === "apps/cli";
      const declared = { ...pkg.json.dependencies, ...pkg.json.peerDependencies, ...(isTest || bundled ? pkg.json.devDependencies : {}) };
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
