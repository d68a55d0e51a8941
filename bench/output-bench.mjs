// Output-size benchmark (run after `pnpm build`): what `cm context` hands an agent, per format.
//
// Writes a realistic playbook (bench/generate-playbook.mjs: 1,000 rules in the original's YAML,
// each with its feedback events) into a temporary HOME with no session history (so `degraded` is
// reported, as for a user without cass), then for a few tasks runs `cm context "<task>" --limit 10`
// in each format and the MCP `cm_context` tool (stdio, default arguments + limit 10), and reports
// bytes and estimated tokens (characters ÷ 4, the estimate `--max-tokens` uses) in total and per
// rule, and the ratio to today's full `--json`. Prints a Markdown table and updates docs/benchmarks.md.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatePlaybookYaml } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const CM = join(root, "apps/cli/dist/cm.js");
const MCP = join(root, "apps/mcp/dist/cm-mcp.js");
const SIZE = Number(process.env.BENCH_SIZE ?? 1000);
const LIMIT = 10;
const TASKS = [
  "fix typescript error handling in the auth service after the 401 bug",
  "write tests for the billing API without mocking the file system",
  "speed up database writes in the worker queue",
  "rebase my feature branch and open a pull request",
];
const FORMATS = [
  { name: "`--json` (full, today's shape)", args: ["--json"], base: true },
  { name: "`--compact --json`", args: ["--compact", "--json"] },
  { name: "`--format toon`", args: ["--format", "toon"] },
  { name: "`--compact --format toon`", args: ["--compact", "--format", "toon"] },
  { name: "`--format markdown`", args: ["--format", "markdown"] },
  { name: "`--compact --format markdown`", args: ["--compact", "--format", "markdown"] },
];

for (const bin of [CM, MCP]) {
  if (!existsSync(bin)) {
    console.error(`${bin} is missing: run \`pnpm build\` first.`);
    process.exit(1);
  }
}

const home = mkdtempSync(join(tmpdir(), "cm-output-bench-"));
const env = { ...process.env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none" };
for (const key of ["CASS_MEMORY_HOME", "CASS_MEMORY_EPISODIC", "CM_OUTPUT_FORMAT", "TOON_DEFAULT_FORMAT", "TOON_STATS", "CASS_PATH"]) delete env[key];

/** Rules in a printed result: from the envelope for JSON/TOON, from the rule lines for markdown. */
function countRules(format, stdout) {
  if (format.args.includes("markdown")) return stdout.split("\n").filter((l) => l.startsWith("- **")).length;
  if (format.args.includes("--json")) {
    const data = JSON.parse(stdout).data;
    return data.relevantBullets.length + data.antiPatterns.length;
  }
  // TOON: the `[N]` of the two rule lists.
  let n = 0;
  for (const m of stdout.matchAll(/^ {2}(?:relevantBullets|antiPatterns)\[(\d+)\]/gm)) n += Number(m[1]);
  return n;
}

function runCli(task, format) {
  const r = spawnSync(process.execPath, [CM, "context", task, "--limit", String(LIMIT), ...format.args], { cwd: home, env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cm context failed (${r.status}): ${r.stderr}`);
  return { bytes: Buffer.byteLength(r.stdout), chars: r.stdout.length, rules: countRules(format, r.stdout) };
}

/** `cm_context` over stdio with the default arguments (compact view, default budget) and limit 10. */
async function runMcp(tasks) {
  const child = spawn(process.execPath, [MCP], { cwd: home, env, stdio: ["pipe", "pipe", "ignore"] });
  let buffer = "";
  const waiting = new Map();
  child.stdout.on("data", (d) => {
    buffer += d.toString();
    let nl;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      if (line.trim() === "") continue;
      const msg = JSON.parse(line);
      waiting.get(msg.id)?.(msg);
    }
  });
  let id = 0;
  const request = (method, params) =>
    new Promise((resolve) => {
      const n = ++id;
      waiting.set(n, resolve);
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: n, method, params })}\n`);
    });
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "output-bench", version: "1" } });
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  const out = [];
  for (const task of tasks) {
    const msg = await request("tools/call", { name: "cm_context", arguments: { task, limit: LIMIT } });
    if (msg.error || msg.result?.isError) throw new Error(`cm_context failed: ${JSON.stringify(msg).slice(0, 300)}`);
    const text = msg.result.content[0].text;
    const data = msg.result.structuredContent;
    out.push({ bytes: Buffer.byteLength(text), chars: text.length, rules: data.relevantBullets.length + data.antiPatterns.length });
  }
  child.stdin.end();
  child.kill("SIGTERM");
  return out;
}

const rows = [];
try {
  mkdirSync(join(home, ".cass-memory"), { recursive: true });
  writeFileSync(join(home, ".cass-memory", "playbook.yaml"), generatePlaybookYaml(SIZE));
  // Warm-up: the first call builds and saves the ranking index.
  runCli(TASKS[0], FORMATS[0]);
  const measure = (name, results) => {
    const sum = (k) => results.reduce((a, r) => a + r[k], 0);
    rows.push({ name, bytes: sum("bytes") / results.length, tokens: Math.ceil(sum("chars") / 4) / results.length, rules: sum("rules") / results.length });
  };
  for (const format of FORMATS) measure(format.name, TASKS.map((t) => runCli(t, format)));
  measure("MCP `cm_context` default (compact JSON text)", await runMcp(TASKS));
} finally {
  rmSync(home, { recursive: true, force: true });
}

const base = rows[0];
const fmt = (n, d = 0) => n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} × ${cpus()[0]?.model.trim() ?? "CPU"}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}: \`cm context "<task>" --limit ${LIMIT}\` on a generated ${fmt(SIZE)}-rule playbook (feedback events as the original writes them), no session history (so \`degraded\` is included), averaged over ${TASKS.length} tasks. Tokens ≈ characters ÷ 4.`,
  "",
  "| output | rules | bytes | est. tokens | bytes / rule | tokens / rule | vs full `--json` |",
  "|---|---:|---:|---:|---:|---:|---:|",
  ...rows.map(
    (r) =>
      `| ${r.name} | ${fmt(r.rules, 1)} | ${fmt(r.bytes)} | ${fmt(r.tokens)} | ${fmt(r.bytes / r.rules)} | ${fmt(r.tokens / r.rules)} | ${r === base ? "100 %" : `**${fmt((r.bytes / base.bytes) * 100, 1)} %**`} |`,
  ),
].join("\n");
console.log(table);
updateBenchmarkDoc("output", "Output size: what `cm context` hands an agent", table);
