// Parse-cache benchmark: a 10,000-bullet playbook in the original's format, cold parse vs cache hit.
// Run after `pnpm --filter @cass-memory/store-yaml build`:  node test/bench/parse-cache-bench.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dist = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
const { createYamlStore, toYaml } = await import(dist);
const silent = { debug() {}, info() {}, warn() {}, error() {} };
const COUNT = Number(process.argv[2] ?? 10_000);

const dir = mkdtempSync(join(tmpdir(), "cm-bench-"));
const globalDir = join(dir, ".cass-memory");
const now = new Date("2026-01-01T00:00:00.000Z").getTime();
const words = "always check the token expiry and clock skew before debugging authentication errors in staging".split(" ");
const bullets = Array.from({ length: COUNT }, (_, i) => {
  const t = new Date(now + i * 1000).toISOString();
  return {
    id: `b-${(now + i).toString(36)}-${(i * 7919).toString(36).padStart(6, "0").slice(-6)}`,
    scope: "global",
    category: ["debugging", "testing", "performance", "workflow"][i % 4],
    content: Array.from({ length: 14 }, (_, j) => words[(i + j) % words.length]).join(" ") + ` (rule ${i})`,
    source: "learned",
    type: "rule",
    isNegative: false,
    kind: "workflow_rule",
    state: "active",
    maturity: "established",
    helpfulCount: 3,
    harmfulCount: 1,
    feedbackEvents: [
      { type: "helpful", timestamp: t, sessionPath: `/home/dev/.claude/projects/app/s${i}.jsonl` },
      { type: "helpful", timestamp: t, sessionPath: `/home/dev/.codex/sessions/s${i}.jsonl` },
    ],
    confidenceDecayHalfLifeDays: 90,
    createdAt: t,
    updatedAt: t,
    pinned: false,
    deprecated: false,
    sourceSessions: [`/home/dev/.claude/projects/app/s${i}.jsonl`, "manual-cli"],
    sourceAgents: ["claude", "codex"],
    tags: ["auth", "debugging", `t${i % 50}`],
  };
});
const playbook = {
  schema_version: 2,
  name: "playbook",
  description: "Auto-generated from cass-memory reflections",
  metadata: { createdAt: new Date(now).toISOString(), totalReflections: 0, totalSessionsProcessed: 0 },
  deprecatedPatterns: [],
  bullets,
};
let t = performance.now();
const text = toYaml(playbook);
const stringifyMs = performance.now() - t;
const path = join(globalDir, "playbook.yaml");
execFileSync("mkdir", ["-p", globalDir]);
writeFileSync(path, text);
const size = statSync(path).size;

const fresh = () => createYamlStore({ globalDir, repoDir: null, logger: silent });
const Y = createRequire(dist)("yaml");
t = performance.now();
Y.parse(text);
const yamlOnlyMs = performance.now() - t;
t = performance.now();
const cold = await fresh().readPlaybook("global"); // parse + validate + write cache
const coldMs = performance.now() - t;
const hits = [];
for (let i = 0; i < 5; i += 1) {
  t = performance.now();
  const hit = await fresh().readPlaybook("global");
  hits.push(performance.now() - t);
  if (hit.bullets.length !== cold.bullets.length) throw new Error("cache hit differs");
}
// Whole process: node start + import dist + cache-hit read (what `cm context` pays for the store).
const script = `import { createYamlStore } from ${JSON.stringify(dist)};
const s = createYamlStore({ globalDir: ${JSON.stringify(globalDir)}, repoDir: null, logger: { debug() {}, info() {}, warn() {}, error() {} } });
const pb = await s.readPlaybook("global"); if (pb.bullets.length !== ${COUNT}) process.exit(1);`;
const proc = [];
for (let i = 0; i < 5; i += 1) {
  t = performance.now();
  execFileSync(process.execPath, ["--input-type=module", "-e", script]);
  proc.push(performance.now() - t);
}
t = performance.now();
execFileSync(process.execPath, ["-e", ""]);
const bareNode = performance.now() - t;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const f = (n) => `${n.toFixed(0)} ms`;
process.stdout.write(
  [
    `bullets: ${COUNT}, playbook.yaml: ${(size / 1e6).toFixed(2)} MB (toYaml ${f(stringifyMs)})`,
    `yaml.parse alone:                 ${f(yamlOnlyMs)}`,
    `readPlaybook cold (parse+zod+cache write): ${f(coldMs)}`,
    `readPlaybook cache hit (median of 5):      ${f(median(hits))}`,
    `whole process, cache hit (median of 5):    ${f(median(proc))}  (bare node: ${f(bareNode)})`,
  ].join("\n") + "\n",
);
if (process.env.KEEP) process.stdout.write(globalDir + "\n"); else rmSync(dir, { recursive: true, force: true });
