import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const docPath = fileURLToPath(new URL("../docs/benchmarks.md", import.meta.url));

/**
 * Replaces the table between `<!-- bench:<name>:start -->` and `<!-- bench:<name>:end -->` in
 * docs/benchmarks.md, or appends it under `heading` when the markers are not there yet.
 */
export function updateBenchmarkDoc(name, heading, table) {
  const start = `<!-- bench:${name}:start -->`;
  const end = `<!-- bench:${name}:end -->`;
  const section = `${start}\n${table}\n${end}`;
  const doc = existsSync(docPath) ? readFileSync(docPath, "utf8") : "# Benchmarks\n";
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  const next = from >= 0 && to > from ? doc.slice(0, from) + section + doc.slice(to + end.length) : `${doc.trimEnd()}\n\n## ${heading}\n\n${section}\n`;
  writeFileSync(docPath, next);
}
