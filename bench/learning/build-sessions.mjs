#!/usr/bin/env node
/**
 * Renders bench/learning/corpus.mjs into agent-native session files under bench/learning/sessions/
 * and writes bench/learning/expected.json; corpus-holdout.mjs goes to sessions/holdout/ and
 * expected-holdout.json. Deterministic: the same corpus gives the same bytes.
 *   node bench/learning/build-sessions.mjs
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { sessions } from "./corpus.mjs";
import { sessions as heldOut } from "./corpus-holdout.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "sessions");
const BASE = Date.UTC(2026, 10, 20, 9, 0, 0);

function stamp(session, i) {
  return new Date(BASE + session.index * 3_600_000 + i * 20_000).toISOString();
}
function firstLine(text) {
  return text.split("\n")[0].replace(/^\$\s*/, "").replace(/^\[[^\]]*\]\s*/, "");
}
function slug(path) {
  return path.replace(/[^A-Za-z0-9]/g, "-");
}
let prefix = "";
function write(rel, text) {
  const file = join(out, prefix, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  return `sessions/${prefix}${rel}`;
}

const renderers = {
  claude_code(s) {
    const sessionId = `0f1e2d3c-${String(s.index).padStart(4, "0")}-4a5b-8c9d-${s.id.length.toString(16).padStart(12, "0")}`;
    const lines = [];
    let parent = null;
    s.messages.forEach(([kind, text], i) => {
      const uuid = `${sessionId.slice(0, 8)}-m${String(i).padStart(3, "0")}`;
      const common = { parentUuid: parent, isSidechain: false, cwd: s.workspace, sessionId, version: "2.0.37", gitBranch: "main", uuid, timestamp: stamp(s, i) };
      if (kind === "user") lines.push({ ...common, type: "user", message: { role: "user", content: text } });
      else if (kind === "assistant") lines.push({ ...common, type: "assistant", message: { model: "claude-sonnet-4-5", role: "assistant", type: "message", content: [{ type: "text", text }] } });
      else {
        const toolId = `toolu_${s.index}_${i}`;
        lines.push({ ...common, type: "assistant", message: { model: "claude-sonnet-4-5", role: "assistant", type: "message", content: [{ type: "tool_use", id: toolId, name: "Bash", input: { command: firstLine(text) } }] } });
        lines.push({ ...common, uuid: `${uuid}r`, parentUuid: uuid, type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: toolId, content: text }] } });
      }
      parent = uuid;
    });
    return write(`claude_code/projects/${slug(s.workspace)}/${sessionId}.jsonl`, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  },
  codex(s) {
    const day = stamp(s, 0).slice(0, 10).split("-");
    const lines = [{ timestamp: stamp(s, 0), type: "session_meta", payload: { id: `codex-${s.id}`, cwd: s.workspace, cli_version: "0.63.0", git: { branch: "main" } } }];
    s.messages.forEach(([kind, text], i) => {
      const timestamp = stamp(s, i + 1);
      if (kind === "user") lines.push({ timestamp, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text }] } });
      else if (kind === "assistant") lines.push({ timestamp, type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text }] } });
      else {
        const call = `call_${s.index}_${i}`;
        lines.push({ timestamp, type: "response_item", payload: { type: "function_call", name: "shell", arguments: JSON.stringify({ command: ["bash", "-lc", firstLine(text)] }), call_id: call } });
        lines.push({ timestamp, type: "response_item", payload: { type: "function_call_output", call_id: call, output: JSON.stringify({ output: text, metadata: { exit_code: 0 } }) } });
      }
    });
    return write(`codex/sessions/${day[0]}/${day[1]}/${day[2]}/rollout-${stamp(s, 0).slice(0, 19).replace(/:/g, "-")}-${s.id}.jsonl`, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  },
  gemini(s) {
    const hash = `${slug(s.workspace).toLowerCase().replace(/-+/g, "").slice(-12)}${s.index}`;
    const messages = s.messages.map(([kind, text], i) => {
      const timestamp = stamp(s, i);
      if (kind === "user") return { id: `m${i}`, type: "user", content: text, timestamp };
      if (kind === "assistant") return { id: `m${i}`, type: "gemini", content: text, timestamp, model: "gemini-2.5-pro" };
      return { id: `m${i}`, type: "gemini", content: [{ type: "tool_result", content: text }], timestamp, model: "gemini-2.5-pro", toolCalls: [{ name: "run_shell_command", args: { command: firstLine(text) } }] };
    });
    const doc = { sessionId: `gemini-${s.id}`, projectHash: hash, startTime: stamp(s, 0), lastUpdated: stamp(s, s.messages.length), messages };
    return write(`gemini/tmp/${hash}/chats/session-${stamp(s, 0).slice(0, 16).replace(/:/g, "-")}-${s.index}.json`, JSON.stringify(doc, null, 2) + "\n");
  },
  aider(s) {
    const lines = [`# aider chat started at ${stamp(s, 0).slice(0, 19).replace("T", " ")}`, ""];
    for (const [kind, text] of s.messages) {
      if (kind === "user") for (const l of text.split("\n")) lines.push(`#### ${l}`);
      else if (kind === "tool") for (const l of text.split("\n")) lines.push(`> ${l}`);
      else lines.push(...text.split("\n"));
      lines.push("");
    }
    return write(`aider/${s.id}/.aider.chat.history.md`, lines.join("\n"));
  },
  cline(s) {
    const records = s.messages.map(([kind, text], i) => {
      const ts = BASE + s.index * 3_600_000 + i * 20_000;
      if (kind === "user") return { ts, type: "say", say: i === 0 ? "task" : "user_feedback", text };
      if (kind === "assistant") return { ts, type: "say", say: "text", text };
      return { ts, type: "say", say: "command_output", text: text.replace(/^\[execute_command Result:\]\s*/, "") };
    });
    const id = String(BASE / 1000 + s.index * 3600);
    write(`cline/tasks/${id}/task_metadata.json`, JSON.stringify({ files_in_context: [], model_usage: [] }) + "\n");
    return write(`cline/tasks/${id}/ui_messages.json`, JSON.stringify(records, null, 1) + "\n");
  },
};

rmSync(out, { recursive: true, force: true });
function build(list, file, note, offset) {
  const expected = { version: 1, note, sessions: [] };
  list.forEach((s, index) => {
    const render = renderers[s.agent];
    if (!render) throw new Error(`no renderer for ${s.agent}`);
    const path = render({ ...s, index: index + offset });
    expected.sessions.push({ id: s.id, agent: s.agent, file: path, status: s.status, lessons: s.lessons });
  });
  writeFileSync(join(here, file), JSON.stringify(expected, null, 2) + "\n");
  console.log(`${file}: ${list.length} sessions, ${expected.sessions.reduce((n, s) => n + s.lessons.length, 0)} expected lessons`);
}
build(sessions, "expected.json", "Lessons a careful human would keep from each session; written before tuning. See README.md for the matching rule.", 0);
prefix = "holdout/";
build(heldOut, "expected-holdout.json", "Held-out sessions: written after tuning, never tuned on. See README.md for the matching rule.", 100);
