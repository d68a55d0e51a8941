// History benchmark for the native episodic source (run after `pnpm build`).
//
// Generates a synthetic history of Claude Code sessions (default 2,000 sessions, ~200 MB of JSONL
// in Claude Code's on-disk format, under a temporary HOME), then measures, each in its own child
// process: the first search (cold: discovery, reading every session, building the index), repeated
// searches (warm: the index is reused), a search after one session grew (the active-session case),
// and listing sessions. Wall time includes Node's start-up; "in-process" is the source call alone.
// Prints a Markdown table. Environment: BENCH_SESSIONS (2000), BENCH_MB (200), BENCH_RUNS (5),
// BENCH_KEEP=1 keeps the generated HOME.
import { spawnSync } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, freemem, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { updateBenchmarkDoc } from "./update-doc.mjs";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";
import { prng as rng } from "./prng.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = join(root, "packages/cass/dist/index.js");
const self = fileURLToPath(import.meta.url);
const probe = pathToFileURL(join(root, "bench/rss-probe.mjs")).href;

// ------------------------------------------------------------------------------------------------
// Child mode: one measured operation.

if (process.argv[2] === "--child") {
  const [, , , op, arg] = process.argv;
  const cass = await import(pathToFileURL(dist).href);
  const home = process.env.HOME;
  const source = cass.createNativeSource({
    readers: cass.createSessionReaders(),
    discover: cass.discoverSessions,
    discoveryEnv: { home, env: {}, platform: process.platform },
    indexDir: join(home, ".cass-memory", ".cache", "episodic"),
  });
  const t0 = performance.now();
  let result;
  if (op === "search" || op === "search-budget") {
    // `cm context` gives history 8 s (CONTEXT_HISTORY_TIMEOUT_MS); the index keeps what it built.
    const r = await source.search(arg, { limit: 10, ...(op === "search-budget" ? { timeoutMs: 8_000 } : {}) });
    result = { count: r.hits.length, degraded: r.degraded?.reason ?? null, top: r.hits[0]?.source_path ?? null };
  } else if (op === "sessions") {
    result = { count: (await source.listSessions({ days: 30 })).length };
  } else {
    throw new Error(`unknown op ${op}`);
  }
  process.stdout.write(JSON.stringify({ ...result, ms: performance.now() - t0 }));
  process.exit(0);
}

// ------------------------------------------------------------------------------------------------
// Synthetic history

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 2000);
const TARGET_BYTES = Number(process.env.BENCH_MB ?? 200) * 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

if (!existsSync(dist)) {
  console.error("packages/cass/dist/index.js is missing: run `pnpm build` first.");
  process.exit(1);
}

const rand = rng(42);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const hex = (n) => {
  let s = "";
  for (let i = 0; i < n; i++) s += Math.floor(rand() * 16).toString(16);
  return s;
};
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;

// A vocabulary of pseudo-words with a Zipf distribution, plus real programming words.
const SYL = ["ka", "lo", "mi", "ra", "to", "ne", "su", "de", "vi", "po", "an", "el", "or", "in", "ul", "ex", "ta", "ri", "co", "me", "sa", "ni", "bo", "ge"];
const REAL = (
  "the a to of and in is for that it with on this be as are was by not or from have but at an can will if " +
  "error test build fix function file config server request response token auth user cache database query index migration " +
  "component render state hook effect promise async timeout retry logger handler route module package import export type " +
  "interface schema validate parse string number array object value key map list queue worker thread lock mutex deadlock " +
  "memory leak performance latency deploy docker kubernetes pipeline commit branch merge rebase review lint format compile"
).split(" ");
const pseudo = new Set();
while (pseudo.size < 12_000) {
  let w = "";
  const n = int(2, 4);
  for (let i = 0; i < n; i++) w += pick(SYL);
  pseudo.add(w);
}
const VOCAB = [...REAL, ...pseudo];
const CUM = new Float64Array(VOCAB.length);
{
  let sum = 0;
  for (let i = 0; i < VOCAB.length; i++) CUM[i] = sum += 1 / Math.pow(i + 1, 1.05);
  for (let i = 0; i < VOCAB.length; i++) CUM[i] /= sum;
}
function word() {
  const r = rand();
  let lo = 0;
  let hi = CUM.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (CUM[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return VOCAB[lo];
}
const cap = (w) => w[0].toUpperCase() + w.slice(1);
const makeIdent = () => (rand() < 0.6 ? word() + cap(word()) + (rand() < 0.3 ? cap(word()) : "") : `${word()}_${word()}`);
// A code base has a finite set of identifiers: each project draws from its own pool (Zipf-like).
const POOLS = Array.from({ length: 40 }, () => Array.from({ length: 1500 }, makeIdent));
let pool = POOLS[0];
const ident = () => (rand() < 0.05 ? makeIdent() : pool[Math.floor(pool.length * rand() * rand())]);
function sentence() {
  const n = int(6, 18);
  const ws = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    ws.push(r < 0.08 ? `\`${ident()}\`` : r < 0.1 ? String(int(1, 999)) : word());
  }
  return `${cap(ws.join(" "))}.`;
}
const paragraph = (n) => Array.from({ length: n }, sentence).join(" ");
const path = (proj) => `/home/dev/projects/${proj}/src/${word()}/${word()}-${word()}.ts`;
function codeBlock(lines) {
  const out = [];
  for (let i = 0; i < lines; i++) {
    const r = rand();
    if (r < 0.2) out.push(`export function ${ident()}(${word()}: ${cap(word())}): ${cap(word())} {`);
    else if (r < 0.4) out.push(`  const ${ident()} = await ${ident()}(${word()}, "${word()}-${rand() < 0.1 ? hex(6) : word()}");`);
    else if (r < 0.5) out.push(`  // ${sentence()}`);
    else if (r < 0.6) out.push(`  if (!${ident()}) throw new Error("${sentence()}");`);
    else if (r < 0.7) out.push("}");
    else out.push(`  ${ident()}.${ident()}(${word()});`);
  }
  return out.join("\n");
}

function sessionLines(index, targetBytes, startMs) {
  const proj = `proj-${index % 40}`;
  pool = POOLS[index % 40];
  const cwd = `/home/dev/projects/${proj}`;
  const sessionId = uuid();
  const lines = [];
  let bytes = 0;
  let t = startMs;
  let parent = null;
  const base = () => ({ parentUuid: parent, isSidechain: false, userType: "external", cwd, sessionId, version: "2.0.37", gitBranch: "main" });
  const push = (record) => {
    const line = JSON.stringify(record);
    lines.push(line);
    bytes += line.length + 1;
    parent = record.uuid;
    t += int(2_000, 60_000);
  };
  while (bytes < targetBytes) {
    push({ ...base(), type: "user", message: { role: "user", content: paragraph(int(1, 3)) }, uuid: uuid(), timestamp: new Date(t).toISOString() });
    const steps = int(1, 4);
    for (let s = 0; s < steps && bytes < targetBytes; s++) {
      const toolId = `toolu_${hex(24)}`;
      const file = path(proj);
      const tool = pick(["Read", "Edit", "Bash", "Grep"]);
      const input =
        tool === "Read" ? { file_path: file } : tool === "Edit" ? { file_path: file, old_string: codeBlock(int(2, 8)), new_string: codeBlock(int(2, 8)) } : tool === "Bash" ? { command: `pnpm test ${word()}`, description: sentence() } : { pattern: ident(), path: cwd };
      push({
        ...base(),
        message: {
          id: `msg_${hex(24)}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5-20250929",
          content: [{ type: "text", text: paragraph(int(1, 4)) }, { type: "tool_use", id: toolId, name: tool, input }],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: int(10, 5000), cache_creation_input_tokens: int(0, 2000), cache_read_input_tokens: int(0, 90000), output_tokens: int(10, 800) },
        },
        requestId: `req_${hex(24)}`,
        type: "assistant",
        uuid: uuid(),
        timestamp: new Date(t).toISOString(),
      });
      const output = tool === "Bash" ? `${paragraph(int(1, 3))}\n${Array.from({ length: int(3, 30) }, () => `  ✓ ${sentence()} (${int(1, 900)} ms)`).join("\n")}` : codeBlock(int(20, 120));
      push({
        ...base(),
        type: "user",
        message: { role: "user", content: [{ tool_use_id: toolId, type: "tool_result", content: output }] },
        uuid: uuid(),
        timestamp: new Date(t).toISOString(),
        // Claude Code repeats tool output here; it is not indexed but is a large part of real files.
        toolUseResult: tool === "Read" ? { type: "text", file: { filePath: file, content: output, numLines: output.split("\n").length, startLine: 1, totalLines: 400 } } : { stdout: output, stderr: "", interrupted: false, isImage: false },
      });
    }
    push({
      ...base(),
      message: { id: `msg_${hex(24)}`, type: "message", role: "assistant", model: "claude-sonnet-4-5-20250929", content: [{ type: "text", text: paragraph(int(2, 6)) }], stop_reason: "end_turn", usage: { input_tokens: 100, output_tokens: 300 } },
      type: "assistant",
      uuid: uuid(),
      timestamp: new Date(t).toISOString(),
    });
  }
  return `${lines.join("\n")}\n`;
}

function generate(home) {
  const now = Date.now();
  // Log-normal-ish sizes scaled so that the total is about TARGET_BYTES.
  const weights = Array.from({ length: SESSIONS }, () => Math.exp(rand() * 2.5));
  const total = weights.reduce((a, b) => a + b, 0);
  let bytes = 0;
  let newest = null;
  for (let i = 0; i < SESSIONS; i++) {
    const dir = join(home, ".claude", "projects", `-home-dev-projects-proj-${i % 40}`);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${uuid()}.jsonl`);
    const start = now - Math.floor((i / SESSIONS) * 90 * 86_400_000) - 3_600_000;
    const text = sessionLines(i, Math.max(4_000, (weights[i] / total) * TARGET_BYTES), start);
    writeFileSync(file, text);
    bytes += Buffer.byteLength(text);
    if (i === 0) newest = file;
  }
  return { bytes, newest };
}

// ------------------------------------------------------------------------------------------------
// Measurements

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function measure(home, op, arg) {
  const rssFile = join(home, "rss.txt");
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ["--import", probe, self, "--child", op, arg ?? ""], {
    env: { PATH: process.env.PATH, HOME: home, BENCH_RSS_FILE: rssFile },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  });
  const wallMs = performance.now() - t0;
  if (r.status !== 0) throw new Error(`child ${op} failed (${r.status}): ${r.stderr}`);
  const out = JSON.parse(r.stdout);
  return { wallMs, rssMiB: Number(readFileSync(rssFile, "utf8")) / 1024, ...out };
}

/** Bytes of the index the manifest names (older segments wait ten minutes before deletion). */
function dirBytes(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
  return manifest.segments.reduce((n, s) => n + statSync(join(dir, s.file)).size, 0);
}

const home = mkdtempSync(join(tmpdir(), "cm-history-bench-"));
try {
  const g0 = performance.now();
  const { bytes, newest } = generate(home);
  const genMs = performance.now() - g0;
  console.error(`history-bench: generated ${SESSIONS} sessions, ${(bytes / 2 ** 20).toFixed(0)} MiB in ${(genMs / 1000).toFixed(1)} s`);

  const queries = ["error OR timeout OR retry OR handler", "deadlock OR mutex", "useEffect OR cleanup OR component", "migration OR database OR index OR schema", "kalo OR mira OR deploy"];
  const rows = [];
  const indexDir = join(home, ".cass-memory", ".cache", "episodic");
  const budget1 = measure(home, "search-budget", queries[0]);
  rows.push({ name: "first search with `cm context`'s 8 s budget (cold, stops early, keeps what it indexed)", ...budget1 });
  const budget2 = measure(home, "search-budget", queries[0]);
  rows.push({ name: "second search with the budget (resumes indexing)", ...budget2 });
  rmSync(indexDir, { recursive: true, force: true });
  const cold = measure(home, "search", queries[0]);
  rows.push({ name: "first search (cold: read all sessions, build the index)", ...cold });
  console.error("history-bench: cold done");
  const warm = [];
  for (let i = 0; i < RUNS; i++) warm.push(measure(home, "search", queries[i % queries.length]));
  rows.push({
    name: `repeated search (warm), median of ${RUNS}`,
    wallMs: median(warm.map((w) => w.wallMs)),
    ms: median(warm.map((w) => w.ms)),
    rssMiB: median(warm.map((w) => w.rssMiB)),
    count: warm[0].count,
    maxRss: Math.max(...warm.map((w) => w.rssMiB)),
  });
  // The active session grows between two calls: one file is read again.
  appendFileSync(newest, `${JSON.stringify({ type: "user", message: { role: "user", content: "one more question about the deadlock in the worker pool" }, uuid: uuid(), timestamp: new Date().toISOString(), cwd: "/home/dev/projects/proj-0", sessionId: uuid() })}\n`);
  rows.push({ name: "search after the newest session grew (1 file re-read)", ...measure(home, "search", queries[1]) });
  rows.push({ name: "search right after that (warm, with a delta segment)", ...measure(home, "search", queries[2]) });
  rows.push({ name: "list sessions of the last 30 days (warm)", ...measure(home, "sessions") });

  const indexBytes = dirBytes(indexDir);
  const f = (n, d = 0) => n.toFixed(d);
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${f(totalmem() / 2 ** 30)} GiB RAM (${f(freemem() / 2 ** 30)} free), Node ${process.version}, ${process.platform}`;
  const table = [
    `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}.`,
    `History: ${SESSIONS.toLocaleString("en")} synthetic Claude Code sessions, ${f(bytes / 2 ** 20)} MiB of JSONL; index on disk: ${f(indexBytes / 2 ** 20, 1)} MiB. Each row is one child process (wall time includes Node start-up).`,
    "",
    "| operation | wall time | in-process | peak RSS | results |",
    "|---|---:|---:|---:|---:|",
    ...rows.map(
      (r) =>
        `| ${r.name} | ${f(r.wallMs)} ms | ${f(r.ms)} ms | ${f(r.rssMiB)} MiB${r.maxRss !== undefined ? ` (max ${f(r.maxRss)})` : ""} | ${r.count}${r.degraded ? ` (${r.degraded})` : ""} |`,
    ),
  ].join("\n");
  process.stdout.write(`${table}\n`);
  // Keep docs/benchmarks.md current: the table between the history markers is replaced.
  updateBenchmarkDoc("history", "Native history search", table);
} finally {
  if (process.env.BENCH_KEEP === "1") console.error(`history-bench: kept ${home}`);
  else rmSync(home, { recursive: true, force: true });
}
