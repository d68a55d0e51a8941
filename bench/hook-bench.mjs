// `pnpm bench:hooks`: how long the installed hook commands take as whole processes, on a playbook of
// 1,000 rules in the original cm's format: the prompt hook (`cm hook claude-code
// user-prompt-submit` with Claude Code's payload on stdin) and the shell guard (`pre-tool-use` with a
// safe Bash command and one active trauma), each as p50/p95 and as a ratio to `node -e 0` measured
// in the same run (so the numbers travel between machines). Also what the prompt hook prints:
// bytes, estimated tokens (chars / 4, the budget's measure) and rules. Both hooks are measured again
// with the resident process running (`cm daemon start`, in a copy of the home). Written to
// docs/benchmarks.md.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { generatePlaybookYaml } from "./generate-playbook.mjs";
import { updateBenchmarkDoc } from "./update-doc.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const cli = join(root, "apps/cli/dist/cm.js");
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const SIZE = Number(process.env.BENCH_SIZE ?? 1000);
const PROMPT = "fix typescript error handling in the auth service after the 401 bug";

if (!existsSync(cli)) {
  console.error("apps/cli/dist/cm.js is missing: run `pnpm build` first.");
  process.exit(1);
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
};

function timed(args, input, env) {
  const start = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: env.HOME, env, input, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`${args.join(" ")} failed (${r.status}): ${r.stderr}`);
  return { ms, stdout: r.stdout, stderr: r.stderr };
}

/**
 * The commands are measured round-robin (one run of each per round), so that load from other
 * processes on the machine falls on all of them alike; one warm-up round first (it fills cm's code
 * cache and the saved ranking index).
 */
function measure(commands) {
  for (const c of commands) timed(c.args, c.input, c.env);
  const times = commands.map(() => []);
  const last = [];
  for (let i = 0; i < RUNS; i++) {
    commands.forEach((c, j) => {
      last[j] = timed(c.args, c.input, c.env);
      times[j].push(last[j].ms);
    });
  }
  return commands.map((c, j) => ({ label: c.label, p50: percentile(times[j], 50), p95: percentile(times[j], 95), last: last[j] }));
}

const home = mkdtempSync(join(tmpdir(), "cm-hook-bench-"));
// The same home again, with the resident process running (`cm daemon start`).
const daemonHome = mkdtempSync(join(tmpdir(), "cm-hook-bench-daemon-"));
const daemonEnv = { PATH: process.env.PATH, HOME: daemonHome, NO_COLOR: "1", CASS_MEMORY_LLM: "none" };
try {
  const dir = join(home, ".cass-memory");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "playbook.yaml"), generatePlaybookYaml(SIZE));
  const trauma = {
    id: "trauma-bench0001",
    severity: "CRITICAL",
    pattern: String.raw`^git\s+push\s+.*--force`,
    scope: "global",
    status: "active",
    trigger_event: { session_path: "manual-entry", timestamp: "2026-11-01T00:00:00.000Z", human_message: "bench" },
    created_at: "2026-11-01T00:00:00.000Z",
  };
  writeFileSync(join(dir, "traumas.jsonl"), `${JSON.stringify(trauma)}\n`);
  cpSync(dir, join(daemonHome, ".cass-memory"), { recursive: true });
  const started = spawnSync(process.execPath, [cli, "daemon", "start", "--json"], { cwd: daemonHome, env: daemonEnv, encoding: "utf8" });
  if (started.status !== 0) throw new Error(`cm daemon start failed (${started.status}): ${started.stderr}${started.stdout}`);
  const env = { PATH: process.env.PATH, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none" };
  const base = { session_id: "bench", transcript_path: join(home, "t.jsonl"), cwd: home };
  const promptInput = JSON.stringify({ ...base, hook_event_name: "UserPromptSubmit", prompt: PROMPT });
  const guardInput = JSON.stringify({ ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "npm test -- --runInBand" } });

  const daemonPrompt = promptInput.replaceAll(JSON.stringify(home).slice(1, -1), JSON.stringify(daemonHome).slice(1, -1));
  const daemonGuard = guardInput.replaceAll(JSON.stringify(home).slice(1, -1), JSON.stringify(daemonHome).slice(1, -1));
  const [nodeBase, version, prompt, guard, promptD, guardD] = measure([
    { label: "`node -e 0`", args: ["-e", "0"], input: "", env },
    { label: "`cm --version` (start-up only)", args: [cli, "--version"], input: "", env },
    { label: "prompt hook (`user-prompt-submit`)", args: [cli, "hook", "claude-code", "user-prompt-submit"], input: promptInput, env },
    { label: "shell guard (`pre-tool-use`, safe command)", args: [cli, "hook", "claude-code", "pre-tool-use"], input: guardInput, env },
    { label: "prompt hook, daemon running", args: [cli, "hook", "claude-code", "user-prompt-submit"], input: daemonPrompt, env: daemonEnv },
    { label: "shell guard, daemon running", args: [cli, "hook", "claude-code", "pre-tool-use"], input: daemonGuard, env: daemonEnv },
  ]);
  if (promptD.last.stdout !== prompt.last.stdout.replaceAll(home, daemonHome)) throw new Error("the prompt hook answered differently through the daemon");

  const out = prompt.last.stdout.trim();
  const context = out === "" ? "" : JSON.parse(out).hookSpecificOutput.additionalContext;
  const rules = (context.match(/^\[[^\]]+\]/gm) ?? []).length;
  const bytes = Buffer.byteLength(out, "utf8");
  if (guard.last.stdout !== "") throw new Error("the shell guard denied a safe command");

  const fmt = (n) => n.toFixed(0);
  const ratio = (n) => (n / nodeBase.p50).toFixed(1);
  const rows = [nodeBase, version, prompt, guard, promptD, guardD].map((s) => `| ${s.label} | ${fmt(s.p50)} | ${fmt(s.p95)} | ${ratio(s.p50)}× | ${ratio(s.p95)}× |`);
  const table = [
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}; ${new Date().toISOString().slice(0, 10)}. ${SIZE.toLocaleString("en")} rules (YAML store), ${RUNS} rounds after one warm-up round (round-robin), load average ${loadavg()[0].toFixed(1)} at the end, wall time of the whole process (\`node cm.js hook claude-code <event>\` with Claude Code's payload on stdin). Run: \`node bench/hook-bench.mjs\`.`,
    "",
    "| command | p50 ms | p95 ms | p50 / `node -e 0` | p95 / `node -e 0` p50 |",
    "|---|---|---|---|---|",
    ...rows,
    "",
    `Prompt hook output for "${PROMPT}": ${bytes} bytes printed ≈ ${Math.ceil(bytes / 4)} tokens (budget 800), ${rules} rules. p95 of the prompt hook is ${((prompt.p95 / 1500) * 100).toFixed(0)} % of the default hard limit (1.5 s); past the limit a hook prints nothing, so a slow machine loses that one answer, never the agent's time. Most of a hook's time is starting Node and loading the CLI, which the resident process (\`cm daemon start\`, last two rows) saves.`,
  ].join("\n");
  console.log(table);
  if (process.env.BENCH_NO_DOC !== "1") updateBenchmarkDoc("hooks", "Hooks: `cm hook` latency and output size", table);
} finally {
  spawnSync(process.execPath, [cli, "daemon", "stop"], { cwd: daemonHome, env: daemonEnv });
  rmSync(home, { recursive: true, force: true });
  rmSync(daemonHome, { recursive: true, force: true });
}
