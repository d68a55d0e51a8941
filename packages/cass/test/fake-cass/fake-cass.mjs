// A fake `cass` (coding-agent-search) for the adapter's tests. It replays the robot-mode goldens
// in fixtures/cass/robot (de-scrubbed unless FAKE_CASS_DESCRUB=0) and derives the commands that
// have no golden (sessions, timeline, expand, export) from fixtures/cass/sessions.
//
// Behaviour is chosen by environment variables:
//   FAKE_CASS_LOG            file to append one JSON line per call: {argv, env}
//   FAKE_CASS_MODE           ok (default) | hang | crash | garbage | empty | envelope | partial |
//                            overflow | stderr-overflow | exit (FAKE_CASS_EXIT_CODE, FAKE_CASS_STDERR)
//   FAKE_CASS_MODE_ON        subcommands the mode applies to, comma-separated (default "search";
//                            "--version" names the version probe; "*" means every call)
//   FAKE_CASS_KIND           error kind for MODE=envelope (fixtures/cass/robot/error_envelope_kinds.json)
//   FAKE_CASS_MESSAGE        message for MODE=envelope (default: the golden's or a generic one)
//   FAKE_CASS_BUILD          current (default) | mid (sessions without --since) |
//                            old (no sessions) | ancient (no sessions, no api-version, bare-array search)
//   FAKE_CASS_API_VERSION    api_version to report
//   FAKE_CASS_SEARCH_FIXTURE search_robot (default) | pre-budget | minimal | zero-hits
//   FAKE_CASS_SEARCH_SHAPE   object (default) | array
//   FAKE_CASS_DROP_FIELDS    hit fields to delete, comma-separated (e.g. "snippet")
//   FAKE_CASS_CREATED_AT     keep (default) | seconds | iso | digits | null | scrubbed | missing
//   FAKE_CASS_DESCRUB        "0" keeps the goldens' placeholders ("[TIMESTAMP]", …)
//   FAKE_CASS_HEALTH         healthy (default) | not_initialized | rebuilding | db-open-error
//   FAKE_CASS_TIMELINE_SHAPE object (default) | array | none
//   FAKE_CASS_EXPORT         ok (default) | unknown (only "=== UNKNOWN ===" headers)
//   FAKE_CASS_PID_FILE       MODE=hang writes {pid, grandchild} here
//   FAKE_CASS_HOME           replaces [TEST_HOME] (default /home/fake)

import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const env = process.env;
const argv = process.argv.slice(2);
const FIXTURES = fileURLToPath(new URL("../../../../fixtures/cass/", import.meta.url));
const DAY = 86_400_000;

if (env.FAKE_CASS_LOG) {
  const seen = {};
  for (const key of ["CODING_AGENT_SEARCH_NO_UPDATE_PROMPT", "CASS_OUTPUT_FORMAT", "TOON_DEFAULT_FORMAT"]) seen[key] = env[key] ?? null;
  appendFileSync(env.FAKE_CASS_LOG, `${JSON.stringify({ argv, env: seen })}\n`);
}

// --- argv -------------------------------------------------------------------------------------

const BOOLEAN_FLAGS = new Set(["--json", "--robot", "--robot-meta", "--full", "--version", "-V", "--binary-only"]);
const dashDash = argv.indexOf("--");
const head = dashDash >= 0 ? argv.slice(0, dashDash) : argv;
const tail = dashDash >= 0 ? argv.slice(dashDash + 1) : [];
const flags = new Map();
const positionals = [];
for (let i = 0; i < head.length; i++) {
  const arg = head[i];
  if (arg.startsWith("-")) {
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    let value = true;
    if (eq > 0) value = arg.slice(eq + 1);
    else if (!BOOLEAN_FLAGS.has(arg) && i + 1 < head.length) value = head[++i];
    const list = flags.get(name) ?? [];
    list.push(value);
    flags.set(name, list);
  } else positionals.push(arg);
}
positionals.push(...tail);
const flag = (name) => flags.get(name)?.at(-1);
const isVersion = flags.has("--version") || flags.has("-V");
const command = isVersion ? "--version" : positionals.shift() ?? "";
const wantsJson = flags.has("--json") || flags.has("--robot");

// --- helpers ----------------------------------------------------------------------------------

const build = env.FAKE_CASS_BUILD ?? "current";
const missing = new Set({ current: [], mid: [], old: ["sessions"], ancient: ["sessions", "api-version"] }[build] ?? []);
const home = env.FAKE_CASS_HOME ?? "/home/fake";

function readJson(rel) {
  return JSON.parse(readFileSync(`${FIXTURES}${rel}`, "utf8"));
}

function descrub(value) {
  if (env.FAKE_CASS_DESCRUB === "0") return value;
  if (Array.isArray(value)) return value.map(descrub);
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, descrub(v)]));
  if (typeof value !== "string") return value;
  const exact = {
    "[TIMESTAMP]": new Date().toISOString(),
    "[VERSION]": "0.6.25",
    "[BUILD_COMMIT]": "2a1fc6f88ec2",
    "[BUILD_COMMIT_DATE]": "2026-08-22",
    "[ELAPSED_MS]": 12,
    "[LATENCY_MS]": 3,
    "[AGE_SECONDS]": 30,
    "[RESULT_SNIPPET]": "fixed the token refresh **bug** in auth middleware",
    "[RESULT_CONTENT]": "We fixed the token refresh bug in the auth middleware and added a regression test.",
  };
  if (value in exact) return exact[value];
  if (/^\[LIVE_[A-Z_]+\]$/.test(value)) return 0;
  return value.replaceAll("[TEST_HOME]", home).replaceAll("[REPO]", "/repo").replaceAll("[UUID]", "00000000-0000-4000-8000-000000000000");
}

function out(value) {
  process.stdout.write(typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);
}

function fail(code, kind, message, hint = null) {
  process.stderr.write(`${JSON.stringify({ error: { code, kind, message, hint, retryable: code === 3 } }, null, 2)}\n`);
  process.exit(code);
}

function argumentError(text) {
  if (wantsJson) {
    const payload = {
      status: "error",
      error: text,
      kind: "argument_parsing",
      normalized_attempt: argv.join(" "),
      examples: ["cass search \"query\" --robot --limit 5"],
      hints: ["Run 'cass --help' to see the available commands"],
      common_mistakes: [],
      flag_syntax: { correct: ["--limit 5", "--robot", "--json"], incorrect: ["--limt 5", "-limit 5", "--Limit"] },
    };
    process.stderr.write(`${JSON.stringify(payload, null, 2)}\n`);
  } else {
    process.stderr.write(`${text}\n\nCould not parse arguments\n`);
  }
  process.exit(2);
}

// --- failure modes ----------------------------------------------------------------------------

const mode = env.FAKE_CASS_MODE ?? "ok";
const modeOn = (env.FAKE_CASS_MODE_ON ?? "search").split(",").map((s) => s.trim());
const modeApplies = mode !== "ok" && (modeOn.includes("*") || modeOn.includes(command));

if (modeApplies) {
  switch (mode) {
    case "hang": {
      // A grandchild that holds the pipes: only killing the process group ends the run cleanly.
      const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "inherit"] });
      if (env.FAKE_CASS_PID_FILE) writeFileSync(env.FAKE_CASS_PID_FILE, JSON.stringify({ pid: process.pid, grandchild: child.pid }));
      setInterval(() => {}, 1000);
      break;
    }
    case "crash":
      process.stdout.write("\u0000\u0001{garbage");
      process.stderr.write("thread 'main' panicked at src/lib.rs:42:7:\nindex out of bounds \u0000\u00ff\n");
      process.exit(101);
      break;
    case "garbage":
      out('{"query": "x", "hits": [ {"source_path": ');
      process.exit(0);
      break;
    case "empty":
      process.exit(0);
      break;
    case "exit":
      if (env.FAKE_CASS_STDERR) process.stderr.write(`${env.FAKE_CASS_STDERR}\n`);
      process.exit(Number(env.FAKE_CASS_EXIT_CODE ?? 1));
      break;
    case "envelope": {
      const kinds = readJson("robot/error_envelope_kinds.json").kinds;
      const kind = env.FAKE_CASS_KIND ?? "unknown";
      const code = kinds[kind]?.exit_codes?.[0] ?? 9;
      const goldens = {
        "missing-db": () => readJson("robot/stats_missing_db.json").error,
        "missing-index": () => ({
          message: `cass has not been initialized in ${home}/.local/share/coding-agent-search yet, so search cannot run until the first index completes.`,
          hint: "Run 'cass index --full' once to discover local sessions and build the initial archive.",
        }),
        "pack-empty-query": () => readJson("robot/pack_empty_query.json").error,
      };
      const golden = goldens[kind]?.() ?? {};
      fail(code, kind, descrub(env.FAKE_CASS_MESSAGE ?? golden.message ?? `fake ${kind} failure`), golden.hint ? descrub(golden.hint) : null);
      break;
    }
    case "overflow":
    case "stderr-overflow": {
      const stream = mode === "overflow" ? process.stdout : process.stderr;
      const chunk = "x".repeat(64 * 1024);
      let written = 0;
      const pump = () => {
        while (written < 16 * 1024 * 1024) {
          written += chunk.length;
          if (!stream.write(chunk)) {
            stream.once("drain", pump);
            return;
          }
        }
      };
      pump();
      setInterval(() => {}, 1000);
      break;
    }
    default:
      break; // "partial" is handled by the search command
  }
}

if (!(modeApplies && ["hang", "overflow", "stderr-overflow"].includes(mode))) main();

// --- commands ---------------------------------------------------------------------------------

function main() {
  if (missing.has(command)) argumentError(`error: unrecognized subcommand '${command}'`);
  switch (command) {
    case "--version":
      out(
        { current: "cass 0.6.25 (2a1fc6f88ec2 2026-08-22)\n", mid: "cass 0.6.20\n", old: "cass 0.4.1\n", ancient: "cass 0.1.41\n" }[build] ??
          "cass 0.6.25\n",
      );
      return;
    case "api-version": {
      const payload = descrub(readJson(build === "current" ? "robot/api_version.json" : "robot/legacy/cli_contract_api_version.json"));
      if (env.FAKE_CASS_API_VERSION) payload.api_version = Number(env.FAKE_CASS_API_VERSION);
      out(payload);
      return;
    }
    case "health":
      return health();
    case "search":
      return search();
    case "sessions":
      return sessions();
    case "timeline":
      return timeline();
    case "expand":
      return expand();
    case "export":
      return exportSession();
    default:
      argumentError(`error: unrecognized subcommand '${command}'`);
  }
}

function health() {
  const payload = descrub(readJson("robot/health.json"));
  const variant = env.FAKE_CASS_HEALTH ?? "healthy";
  if (variant === "not_initialized") {
    out(payload);
    process.exit(1);
  }
  Object.assign(payload, { initialized: true, errors: [], explanation: null, recommended_action: null, recommended_commands: [] });
  Object.assign(payload.db, { exists: true, opened: true, conversations: 3, messages: 12 });
  if (variant === "healthy") {
    Object.assign(payload, { status: "healthy", healthy: true, health_level: "healthy" });
    out(payload);
    return;
  }
  if (variant === "rebuilding") Object.assign(payload, { status: "rebuilding", healthy: false, errors: ["index rebuild in progress"] });
  if (variant === "db-open-error") {
    Object.assign(payload, { status: "unhealthy", healthy: false, errors: ["database cannot be opened"] });
    Object.assign(payload.db, { opened: false, open_error: "database disk image is malformed" });
  }
  out(payload);
  process.exit(1);
}

function search() {
  const limit = Number(flag("--limit") ?? 0);
  const query = positionals.join(" ");
  const files = {
    search_robot: "robot/search_robot.json",
    "pre-budget": "robot/search_robot.pre-budget.a4c22677.json",
    minimal: "robot/search_fields_minimal_claude_regression.json",
    "zero-hits": "robot/search_robot_zero_hits_suggestions.088e4669.json",
  };
  const payload = descrub(readJson(files[env.FAKE_CASS_SEARCH_FIXTURE ?? "search_robot"] ?? files.search_robot));
  payload.query = query;
  payload.limit = limit;
  const variant = env.FAKE_CASS_CREATED_AT ?? "keep";
  const drop = (env.FAKE_CASS_DROP_FIELDS ?? "").split(",").filter((f) => f !== "");
  for (const hit of payload.hits) {
    for (const field of drop) delete hit[field];
    if (!("created_at" in hit) && variant === "keep") continue;
    const ms = typeof hit.created_at === "number" ? hit.created_at : 1764619673394;
    if (variant === "seconds") hit.created_at = Math.floor(ms / 1000);
    else if (variant === "iso") hit.created_at = new Date(ms).toISOString();
    else if (variant === "digits") hit.created_at = String(ms);
    else if (variant === "null") hit.created_at = null;
    else if (variant === "scrubbed") hit.created_at = "[TIMESTAMP]";
    else if (variant === "missing") delete hit.created_at;
  }
  if (limit > 0) payload.hits = payload.hits.slice(0, limit);
  payload.count = payload.hits.length;
  if (modeApplies && mode === "partial") {
    payload.budget = { elapsed_ms: 120000, budget_ms: 120000, timed_out: true, skipped_sections: ["semantic_refinement"], recommended_next_probe: null };
  }
  const shape = env.FAKE_CASS_SEARCH_SHAPE ?? (build === "ancient" ? "array" : "object");
  out(shape === "array" ? payload.hits : payload);
}

/** Sessions derived from the real fixture files, with mtimes relative to now. */
function fixtureSessions() {
  const now = Date.now();
  return [
    { rel: "sessions/claude_code/projects/-test-project/agent-test123.jsonl", agent: "claude_code", workspace: "/test-project", title: "Help me implement smartedgar matrix completion", ageDays: 1, messages: 2 },
    { rel: "sessions/codex/sessions/2025/11/25/rollout-test.jsonl", agent: "codex", workspace: "/repo", title: null, ageDays: 3, messages: 3 },
    { rel: "sessions/gemini/hash123/chats/session-test.json", agent: "gemini", workspace: "/repo", title: "Gemini chat", ageDays: 20, messages: 2 },
  ].map((s) => ({ ...s, path: `${FIXTURES}${s.rel}`, modifiedMs: now - s.ageDays * DAY }));
}

/** `-7d`, `7d` → a cutoff in ms (undefined when absent or not understood). */
function sinceCutoff(value) {
  if (typeof value !== "string") return undefined;
  const m = /^-?(\d+)d$/.exec(value);
  return m ? Date.now() - Number(m[1]) * DAY : undefined;
}

function sessions() {
  if (build === "mid" && flags.has("--since")) argumentError("error: unexpected argument '--since' found");
  const cutoff = sinceCutoff(flag("--since"));
  const workspace = flag("--workspace");
  const list = fixtureSessions()
    .filter((s) => cutoff === undefined || s.modifiedMs >= cutoff)
    .filter((s) => typeof workspace !== "string" || s.workspace === workspace)
    .map((s) => ({
      path: s.path,
      workspace: s.workspace,
      agent: s.agent,
      title: s.title,
      source_id: "local",
      origin_host: null,
      modified: new Date(s.modifiedMs).toISOString(),
      size_bytes: 100,
      message_count: s.messages,
      human_turns: 1,
    }));
  out({ sessions: list });
}

function timeline() {
  const cutoff = sinceCutoff(flag("--since")) ?? Date.now() - 7 * DAY;
  const agents = flags.get("--agent") ?? [];
  const rows = fixtureSessions()
    .filter((s) => s.modifiedMs >= cutoff)
    .filter((s) => agents.length === 0 || agents.includes(s.agent))
    .map((s, i) => ({
      id: i + 1,
      agent: s.agent,
      title: s.title,
      started_at: s.modifiedMs - 3_600_000,
      ended_at: s.modifiedMs,
      source_path: s.path,
      message_count: s.messages,
      source_id: "local",
      origin_kind: "local",
      origin_host: null,
    }));
  const range = { start: cutoff, end: Date.now() };
  const shape = env.FAKE_CASS_TIMELINE_SHAPE ?? "object";
  if (shape === "none") {
    out({ range, total_sessions: rows.length, sessions: rows });
    return;
  }
  const groups = {};
  for (const row of rows) {
    const key = `${new Date(row.started_at).toISOString().slice(0, 13).replace("T", " ")}:00`;
    (groups[key] ??= []).push(row);
  }
  if (shape === "array") {
    out({ groups: Object.entries(groups).map(([date, sessions]) => ({ date, sessions })) });
    return;
  }
  out({ range, total_sessions: rows.length, groups });
}

function flatten(content) {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") return part;
        if (part?.type === "tool_use") return `[Tool: ${part.name} - ${part.input?.description ?? ""}]`;
        if (typeof part?.text === "string") return part.text;
        if (part?.content !== undefined) return flatten(part.content);
        return "";
      })
      .filter((s) => s !== "")
      .join("\n");
  }
  return "";
}

function readRecords(path) {
  return readFileSync(path, "utf8")
    .split(/\r?\n/)
    .map((line, i) => ({ line: i + 1, text: line }))
    .filter((r) => r.text.trim() !== "")
    .map((r) => {
      try {
        return { line: r.line, record: JSON.parse(r.text) };
      } catch {
        return { line: r.line, record: { content: r.text } };
      }
    });
}

function expand() {
  const path = positionals[0];
  const line = Number(flag("-n") ?? flag("--line"));
  const context = Number(flag("-C") ?? flag("--context") ?? 3);
  if (!path || !existsSync(path)) fail(3, "file-not-found", `Session file not found: ${path}`);
  if (!Number.isInteger(line) || line < 1) fail(2, "invalid-line", "Line numbers start at 1");
  if (!path.endsWith(".jsonl")) fail(9, "indexed-session-required", "This session must be indexed before it can be expanded");
  const records = readRecords(path);
  let target = records.findIndex((r) => r.line >= line);
  if (target < 0) target = records.length - 1;
  const rows = records.slice(Math.max(0, target - context), target + context + 1).map((r) => ({
    line: r.line,
    role: r.record.role ?? r.record.message?.role ?? r.record.payload?.role ?? r.record.type ?? "unknown",
    is_target: r.line === records[target].line,
    content: flatten(r.record.content ?? r.record.message?.content ?? r.record.payload?.content ?? ""),
  }));
  out(rows);
}

function exportSession() {
  const path = positionals[0];
  const format = flag("--format") ?? "markdown";
  if (!path || !existsSync(path)) {
    process.stderr.write(`Error: session file not found: ${path}\n`);
    process.exit(3);
  }
  if (!path.endsWith(".jsonl")) {
    process.stderr.write("Error: this session must be indexed before it can be exported (run 'cass index')\n");
    process.exit(9);
  }
  const records = readRecords(path);
  if (format === "json") {
    out(records.map((r) => r.record));
    return;
  }
  if (env.FAKE_CASS_EXPORT === "unknown") {
    // What an old cass printed when it could not tell the records' roles apart.
    out(records.map(() => "=== UNKNOWN ===\n\n").join(""));
    return;
  }
  const messages = records
    .map((r) => ({
      role: r.record.message?.role ?? r.record.role ?? r.record.payload?.role ?? "unknown",
      content: flatten(r.record.message?.content ?? r.record.content ?? r.record.payload?.content ?? ""),
    }))
    .filter((m) => m.content !== "");
  if (format === "text") {
    out(messages.map((m) => `=== ${m.role.toUpperCase()} ===\n\n${m.content}\n\n`).join(""));
    return;
  }
  out(`# Session\n\n---\n\n${messages.map((m) => `## ${m.role}\n\n${m.content}\n\n---\n\n`).join("")}`);
}
