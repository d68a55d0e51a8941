#!/usr/bin/env node
// A corpus-backed fake `cass` for the source contract tests (test/source-contract.test.ts).
//
// Unlike ./fake-cass.mjs, which replays the robot goldens, this one answers from the agent
// session files under $HOME, the way a real cass would after indexing that HOME: every answer is
// computed by the BUILT native source (packages/cass/dist/index.js) over the same corpus the
// native source is tested on, and printed in cass's robot-mode shapes
// (reference/cass-contract.md §4). So the adapter's process handling, parsing and mapping are
// exercised against real sessions.
//
// Commands (the argv createCassCliSource sends):
//   --version
//   api-version --json --color=never
//   health --json --color=never
//   search --robot --limit N [--days D] [--agent A]... [--workspace W] --color=never -- QUERY
//   sessions --json --limit 0 [--workspace W] [--since=-Nd] --color=never
//   export --format markdown|text|json --color=never -- PATH
//   expand -n LINE -C K --json --color=never -- PATH
// Anything else is an argument error (exit 2, cass's argument_parsing JSON on stderr).
//
// The index lives in $HOME/.cache/corpus-cass (CORPUS_CASS_INDEX_DIR overrides it).

import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const DIST = fileURLToPath(new URL("../../dist/index.js", import.meta.url));
const VERSION = "0.6.25";
const argv = process.argv.slice(2);

// --- argv ---------------------------------------------------------------------------------------

const BOOLEAN_FLAGS = new Set(["--json", "--robot", "--version", "-V"]);
const VALUE_FLAGS = new Set(["--limit", "--days", "--agent", "--workspace", "--since", "--format", "-n", "--line", "-C", "--context", "--color"]);

const dashDash = argv.indexOf("--");
const head = dashDash >= 0 ? argv.slice(0, dashDash) : argv;
const tail = dashDash >= 0 ? argv.slice(dashDash + 1) : [];
const flags = new Map();
const positionals = [];
for (let i = 0; i < head.length; i++) {
  const arg = head[i];
  if (!arg.startsWith("-") || arg === "-") {
    positionals.push(arg);
    continue;
  }
  const eq = arg.indexOf("=");
  const name = eq > 0 ? arg.slice(0, eq) : arg;
  let value = true;
  if (BOOLEAN_FLAGS.has(name)) {
    if (eq > 0) argumentError(`error: unexpected value for '${name}'`);
  } else if (VALUE_FLAGS.has(name)) {
    if (eq > 0) value = arg.slice(eq + 1);
    else if (i + 1 < head.length) value = head[++i];
    else argumentError(`error: a value is required for '${name}' but none was supplied`);
  } else {
    argumentError(`error: unexpected argument '${name}' found`);
  }
  const list = flags.get(name) ?? [];
  list.push(value);
  flags.set(name, list);
}
positionals.push(...tail);

const flag = (name) => flags.get(name)?.at(-1);
const wantsJson = flags.has("--json") || flags.has("--robot");
const command = flags.has("--version") || flags.has("-V") ? "--version" : (positionals.shift() ?? "");

// --- output helpers -----------------------------------------------------------------------------

function out(value) {
  process.stdout.write(typeof value === "string" ? value : `${JSON.stringify(value, null, 2)}\n`);
}

/** cass's standard error envelope (§3.1) on stderr, exit = code. */
function fail(code, kind, message, hint = null) {
  process.stderr.write(`${JSON.stringify({ error: { code, kind, message, hint, retryable: false } }, null, 2)}\n`);
  process.exit(code);
}

/** cass's argument-parsing error (§3.2). */
function argumentError(text) {
  if (argv.includes("--json") || argv.includes("--robot")) {
    process.stderr.write(
      `${JSON.stringify({ status: "error", error: text, kind: "argument_parsing", normalized_attempt: argv.join(" "), hints: ["Run 'cass --help' to see the available commands"] }, null, 2)}\n`,
    );
  } else {
    process.stderr.write(`${text}\n\nCould not parse arguments\n`);
  }
  process.exit(2);
}

/** A non-negative integer flag value, or undefined when absent; an argument error when malformed. */
function intFlag(name) {
  const raw = flag(name);
  if (raw === undefined) return undefined;
  if (typeof raw !== "string" || !/^\d+$/.test(raw)) argumentError(`error: invalid value '${String(raw)}' for '${name}': not a number`);
  return Number(raw);
}

// --- the corpus, through the built native source --------------------------------------------------

if (!existsSync(DIST)) {
  process.stderr.write(`corpus-cass: ${DIST} is missing; run \`pnpm build\` (or \`pnpm --filter @cass-memory/cass build\`) first.\n`);
  process.exit(70);
}
const cass = await import(pathToFileURL(DIST).href);

const home = process.env.HOME || homedir();
const discoveryEnv = { home, env: process.env, platform: process.platform };
const readers = cass.createSessionReaders();
const native = cass.createNativeSource({
  readers,
  discover: cass.discoverSessions,
  discoveryEnv,
  indexDir: process.env.CORPUS_CASS_INDEX_DIR || join(home, ".cache", "corpus-cass"),
});

/** The conversations in a session file, read the way cass's connectors would (null when none). */
async function conversationsOf(path) {
  const abs = resolve(path);
  let info;
  try {
    info = statSync(abs);
  } catch {
    return null;
  }
  if (!info.isFile()) return null;
  const found = await cass.discoverSessions(readers, discoveryEnv);
  const known = found.find((f) => resolve(f.ref.path) === abs);
  const ordered = known ? [known.reader, ...readers.filter((r) => r !== known.reader)] : readers;
  for (const reader of ordered) {
    let conversations;
    try {
      conversations = await reader.read({ agent: reader.agent, path: abs, mtimeMs: info.mtimeMs, size: info.size });
    } catch {
      continue;
    }
    const useful = (conversations ?? []).filter((c) => Array.isArray(c.messages) && c.messages.length > 0);
    if (useful.length > 0) return useful;
  }
  return null;
}

// --- commands -----------------------------------------------------------------------------------

switch (command) {
  case "--version":
    out(`cass ${VERSION} (c0ffee123456 2026-08-22)\n`);
    break;
  case "api-version":
    out({ crate_version: VERSION, build_commit: "c0ffee123456", api_version: 1, contract_version: "1" });
    break;
  case "health":
    await health();
    break;
  case "search":
    await search();
    break;
  case "sessions":
    await sessions();
    break;
  case "export":
    await exportSession();
    break;
  case "expand":
    await expand();
    break;
  default:
    argumentError(`error: unrecognized subcommand '${command}'`);
}

async function health() {
  const started = Date.now();
  const h = await native.health();
  const sessions = typeof h.sessions === "number" ? h.sessions : 0;
  const payload = {
    status: h.available ? "healthy" : "not_initialized",
    healthy: h.available,
    health_level: h.available ? "healthy" : "critical",
    initialized: h.available,
    explanation: h.available ? null : "No sessions have been indexed yet.",
    warnings: [],
    data_dir: join(home, ".cache", "corpus-cass"),
    recommended_action: h.available ? null : "Run 'cass index --full'",
    recommended_commands: h.available ? [] : [{ id: "index", command: "cass index --full", purpose: "build the archive" }],
    errors: h.available ? [] : ["database not initialized yet"],
    latency_ms: Date.now() - started,
    db: { exists: h.available, opened: h.available, conversations: sessions, messages: null, open_error: null, counts_skipped: true, open_skipped: false },
  };
  out(payload);
  // Exit 1 with the payload on stdout is how cass says "not healthy" (§4.4).
  if (!h.available) process.exitCode = 1;
}

async function search() {
  if (!wantsJson) argumentError("error: this fake only answers robot-mode searches (--robot/--json)");
  const query = positionals.join(" ");
  if (query.trim() === "") fail(2, "empty-query", "The search query is empty");
  const limit = intFlag("--limit") ?? 0;
  const days = intFlag("--days");
  const agents = (flags.get("--agent") ?? []).filter((a) => typeof a === "string");
  const workspace = flag("--workspace");
  const started = Date.now();
  const result = await native.search(query, {
    // cass's --limit 0 means "no limit".
    limit: limit > 0 ? limit : 1_000,
    ...(days !== undefined && days > 0 ? { days } : {}),
    ...(agents.length > 0 ? { agents } : {}),
    ...(typeof workspace === "string" ? { workspace } : {}),
  });
  if (result.degraded && result.degraded.reason !== "TIMEOUT") fail(9, "search", result.degraded.message);
  const hits = result.hits.map((h) => ({
    title: h.title ?? "",
    snippet: h.snippet,
    content: h.snippet,
    score: typeof h.score === "number" && Number.isFinite(h.score) ? h.score : 0,
    source_path: h.source_path,
    agent: h.agent,
    workspace: h.workspace ?? "",
    created_at: typeof h.created_at === "number" ? h.created_at : null,
    line_number: h.line_number,
    match_type: "exact",
    source_id: "local",
    origin_kind: "local",
  }));
  out({
    query,
    limit,
    offset: 0,
    count: hits.length,
    total_matches: hits.length,
    hits,
    max_tokens: null,
    request_id: null,
    cursor: null,
    hits_clamped: false,
    budget: {
      elapsed_ms: Date.now() - started,
      budget_ms: 120_000,
      timed_out: result.degraded?.reason === "TIMEOUT",
      skipped_sections: [],
      recommended_next_probe: null,
    },
  });
}

async function sessions() {
  if (!wantsJson) argumentError("error: this fake only answers `sessions --json`");
  const limit = intFlag("--limit") ?? 10;
  const workspace = flag("--workspace");
  const since = flag("--since");
  let days;
  if (typeof since === "string") {
    const m = /^-?(\d+)d$/.exec(since);
    // cass ignores a --since it cannot parse.
    if (m) days = Number(m[1]);
  }
  const list = await native.listSessions({ ...(days !== undefined && days > 0 ? { days } : {}), ...(typeof workspace === "string" ? { workspace } : {}) });
  const rows = [];
  for (const s of list) {
    let modified = null;
    let size = 0;
    try {
      const info = statSync(s.path);
      modified = new Date(info.mtimeMs).toISOString();
      size = info.size;
    } catch {
      // A conversation whose path is not a file of its own: no mtime, like a remote session.
    }
    const conversations = (await conversationsOf(s.path)) ?? [];
    const messages = conversations.flatMap((c) => c.messages);
    rows.push({
      path: s.path,
      workspace: s.workspace ?? null,
      agent: s.agent,
      title: conversations.find((c) => c.title)?.title ?? null,
      source_id: "local",
      origin_host: null,
      modified,
      size_bytes: size,
      message_count: s.messageCount ?? messages.length,
      human_turns: messages.filter((m) => m.role === "user").length,
    });
  }
  out({ sessions: limit > 0 ? rows.slice(0, limit) : rows });
}

async function exportSession() {
  const path = positionals[0];
  const format = flag("--format") ?? "markdown";
  if (!["markdown", "text", "json"].includes(format)) argumentError(`error: invalid value '${format}' for '--format'`);
  if (!path || !existsSync(path)) {
    process.stderr.write(`Error: session file not found: ${path ?? ""}\n`);
    process.exit(3);
  }
  const text = await native.export(path, format);
  if (text === null) {
    process.stderr.write("Error: this session must be indexed before it can be exported (run 'cass index')\n");
    process.exit(9);
  }
  out(text);
}

async function expand() {
  if (!wantsJson) argumentError("error: this fake only answers `expand --json`");
  const path = positionals[0];
  const line = intFlag("-n") ?? intFlag("--line");
  const context = intFlag("-C") ?? intFlag("--context") ?? 3;
  if (line === undefined) argumentError("error: the following required arguments were not provided: --line <LINE>");
  if (!path || !existsSync(path)) fail(3, "file-not-found", `Session file not found: ${path ?? ""}`);
  if (line < 1) fail(2, "invalid-line", "Line numbers start at 1");
  const conversations = await conversationsOf(path);
  if (conversations === null) fail(9, "indexed-session-required", "This session must be indexed before it can be expanded");
  const messages = conversations.flatMap((c) => c.messages);
  // The message starting at the line, else the next one after it, else the last (§4.11).
  let target = messages.findIndex((m) => m.lineNumber === line);
  if (target < 0) target = messages.findIndex((m) => m.lineNumber >= line);
  if (target < 0) target = messages.length - 1;
  const rows = messages.slice(Math.max(0, target - context), target + context + 1).map((m) => ({
    line: m.lineNumber,
    role: m.role || "unknown",
    is_target: m === messages[target],
    content: m.content,
  }));
  out(rows);
}
