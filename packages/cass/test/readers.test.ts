// Every native reader against the real session fixtures (fixtures/cass/sessions), plus the
// format variants the fixtures do not cover, written to a temp dir.
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { NormalizedConversation, SessionFileRef, SessionReader } from "../src/model.js";
import { createAiderReader } from "../src/native/readers/aider.js";
import { createAmpReader } from "../src/native/readers/amp.js";
import { createChatGptReader } from "../src/native/readers/chatgpt.js";
import { createClaudeCodeReader } from "../src/native/readers/claude-code.js";
import { createClineReader } from "../src/native/readers/cline.js";
import { createCodexReader } from "../src/native/readers/codex.js";
import { createCopilotReader } from "../src/native/readers/copilot.js";
import { createGeminiReader, guessWorkspace } from "../src/native/readers/gemini.js";
import { createGenericReader } from "../src/native/readers/generic.js";
import { createOpenCodeReader } from "../src/native/readers/opencode.js";
import { createPiAgentReader } from "../src/native/readers/pi-agent.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "cass-readers-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function refAt(reader: SessionReader, file: string): Promise<SessionFileRef> {
  const info = await stat(file);
  return { agent: reader.agent, path: file, mtimeMs: info.mtimeMs, size: info.size };
}

async function readFixture(reader: SessionReader, rel: string): Promise<NormalizedConversation[]> {
  return reader.read(await refAt(reader, path.join(SESSIONS, rel)));
}

/** Writes a temp file (creating parents) and reads it. */
async function readWritten(reader: SessionReader, rel: string, body: string): Promise<NormalizedConversation[]> {
  const file = path.join(tmp, rel);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, body);
  return reader.read(await refAt(reader, file));
}

function jsonl(...records: unknown[]): string {
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}

function only(convs: NormalizedConversation[]): NormalizedConversation {
  expect(convs).toHaveLength(1);
  return convs[0]!;
}

function summary(conv: NormalizedConversation): Array<[string, string]> {
  return conv.messages.map((m) => [m.role, m.content]);
}

describe("claude code reader", () => {
  const reader = createClaudeCodeReader();

  it("reads agent-test123.jsonl as one conversation with two messages", async () => {
    const conv = only(await readFixture(reader, "claude_code/projects/-test-project/agent-test123.jsonl"));
    expect(conv.agent).toBe("claude_code");
    expect(conv.externalId).toBe("test-session");
    expect(conv.workspace).toBe("/test/project");
    expect(conv.title).toBe("Help me implement smartedgar matrix completion");
    expect(conv.messages.map((m) => [m.idx, m.role, m.lineNumber])).toEqual([
      [0, "user", 1],
      [1, "assistant", 2],
    ]);
    expect(conv.messages[1]!.author).toBe("claude-opus-4");
    expect(conv.messages[1]!.content).toContain("I'll help you implement matrix completion using CMA-ES optimization.");
    expect(conv.messages[1]!.content).toContain("[tool: Read]");
    expect(conv.messages[1]!.content).toContain("/test/file.rs");
    expect(conv.startedAt).toBe(Date.parse("2025-11-12T18:31:18.697Z"));
    expect(conv.endedAt).toBe(Date.parse("2025-11-12T18:31:32.217Z"));
  });

  it("renders tool results (incl. errors) as tool messages", async () => {
    const conv = only(await readFixture(reader, "message_grouping/claude_session.jsonl"));
    expect(conv.messages).toHaveLength(10);
    expect(conv.messages.map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "assistant",
      "tool",
      "assistant",
      "user",
      "assistant",
      "tool",
      "assistant",
    ]);
    expect(conv.messages[2]!.content).toMatch(/^\[tool result\] # Project Title/);
    expect(conv.messages[3]!.content).toContain("[tool: Glob]");
    expect(conv.messages[3]!.content).toContain("[tool: Bash]");
    expect(conv.messages[8]!.content).toMatch(/^\[tool error\] error: could not compile/);
    expect(conv.workspace).toBeNull();
  });

  it("skips empty and summary records and keeps the edge-case messages", async () => {
    const conv = only(await readFixture(reader, "message_grouping/edge_cases.jsonl"));
    expect(conv.messages.some((m) => m.content === "")).toBe(false);
    expect(conv.messages.some((m) => m.content.includes("你好世界! 🎉🚀 مرحبا العالم Привет мир"))).toBe(true);
    expect(conv.messages.find((m) => m.lineNumber === 2)?.content).toBe('[tool: Read] {"file_path":"/test.txt"}');
  });

  it("merges streamed records of one assistant message and ignores meta lines for the title", async () => {
    const conv = only(
      await readWritten(
        reader,
        "claude/split.jsonl",
        jsonl(
          { type: "user", isMeta: true, cwd: "/w", sessionId: "s1", message: { role: "user", content: "Caveat: local commands" }, timestamp: "2025-01-01T00:00:00Z" },
          { type: "user", message: { role: "user", content: "Fix the login bug" }, timestamp: "2025-01-01T00:00:01Z" },
          { type: "assistant", message: { id: "m1", role: "assistant", model: "claude-x", content: [{ type: "thinking", thinking: "hmm" }] }, timestamp: "2025-01-01T00:00:02Z" },
          { type: "assistant", message: { id: "m1", role: "assistant", model: "claude-x", content: [{ type: "text", text: "Looking." }] }, timestamp: "2025-01-01T00:00:03Z" },
          { type: "assistant", message: { id: "m1", role: "assistant", model: "claude-x", content: [{ type: "tool_use", name: "Bash", input: { command: "ls" } }] }, timestamp: "2025-01-01T00:00:04Z" },
          { type: "file-history-snapshot", snapshot: {} },
        ),
      ),
    );
    expect(conv.title).toBe("Fix the login bug");
    expect(summary(conv)).toEqual([
      ["user", "Caveat: local commands"],
      ["user", "Fix the login bug"],
      ["assistant", 'Looking.\n\n[tool: Bash] {"command":"ls"}'],
    ]);
    expect(conv.messages[2]!.lineNumber).toBe(4);
  });
});

describe("codex reader", () => {
  const reader = createCodexReader();

  it("reads rollout-test.jsonl: user, reasoning, assistant with the session_meta cwd", async () => {
    const conv = only(await readFixture(reader, "codex/sessions/2025/11/25/rollout-test.jsonl"));
    expect(conv.agent).toBe("codex");
    expect(conv.externalId).toBe("2025/11/25/rollout-test");
    expect(conv.workspace).toBe("/test/soldier/project");
    expect(conv.messages.map((m) => [m.role, m.author, m.lineNumber])).toEqual([
      ["user", null, 2],
      ["assistant", "reasoning", 3],
      ["assistant", null, 4],
    ]);
    expect(conv.messages[0]!.content).toBe("Help me implement soldier matrix completion cma-es");
    expect(conv.messages[2]!.content).toBe("Here's how to implement matrix completion with CMA-ES optimization");
    expect(conv.startedAt).toBe(Date.parse("2025-09-30T15:42:34.559Z"));
  });

  it("renders event_msg tool_call", async () => {
    const conv = only(await readFixture(reader, "codex/sessions/2025/11/26/rollout-tool-call.jsonl"));
    expect(conv.messages).toHaveLength(3);
    expect(conv.messages[1]!.content).toBe(
      '[tool: bash] {"cmd":"rg -n tool_call src/connectors/codex.rs","cwd":"/test/soldier/project"}',
    );
  });

  it("renders function calls and function output", async () => {
    const conv = only(await readFixture(reader, "message_grouping/codex_session.jsonl"));
    expect(conv.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
    expect(conv.messages[1]!.content).toContain("[tool: shell]");
    expect(conv.messages[2]!.content).toBe("[tool result: shell] ./src/main.py\n./src/utils.py\n./tests/test_main.py");
  });

  it("keeps one copy of prompts and replies written both as response_item and event_msg", async () => {
    const ts = "2025-10-01T10:00:00.000Z";
    const conv = only(
      await readWritten(
        reader,
        ".codex/sessions/2025/10/01/rollout-dup.jsonl",
        jsonl(
          { timestamp: ts, type: "session_meta", payload: { id: "dup", cwd: "/repo" } },
          { timestamp: ts, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>" }] } },
          { timestamp: ts, type: "response_item", payload: { type: "message", role: "user", content: [{ type: "input_text", text: "run the tests" }] } },
          { timestamp: ts, type: "event_msg", payload: { type: "user_message", message: "run the tests" } },
          { timestamp: ts, type: "turn_context", payload: { cwd: "/repo" } },
          { timestamp: ts, type: "response_item", payload: { type: "function_call", name: "shell", arguments: '{"command":["pytest"]}', call_id: "c1" } },
          { timestamp: ts, type: "response_item", payload: { type: "function_call_output", call_id: "c1", output: '{"output":"3 passed","metadata":{"exit_code":0}}' } },
          { timestamp: ts, type: "event_msg", payload: { type: "agent_message", message: "All tests pass." } },
          { timestamp: ts, type: "response_item", payload: { type: "message", role: "assistant", content: [{ type: "output_text", text: "All tests pass." }] } },
        ),
      ),
    );
    expect(conv.externalId).toBe("2025/10/01/rollout-dup");
    expect(conv.title).toBe("run the tests");
    expect(summary(conv)).toEqual([
      ["system", "<environment_context>\n<cwd>/repo</cwd>\n</environment_context>"],
      ["user", "run the tests"],
      ["assistant", '[tool: shell] {"command":["pytest"]}'],
      ["tool", "[tool result] 3 passed"],
      ["assistant", "All tests pass."],
    ]);
    expect(conv.messages[1]!.lineNumber).toBe(3);
  });

  it("reads the legacy rollout JSON", async () => {
    const conv = only(
      await readWritten(
        reader,
        ".codex/sessions/rollout-2025-04-01-abc.json",
        JSON.stringify({
          session: { id: "legacy-1", timestamp: "2025-04-01T08:00:00Z", instructions: "" },
          items: [
            { type: "message", role: "user", content: [{ type: "input_text", text: "legacy question" }] },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "legacy answer" }] },
          ],
        }),
      ),
    );
    expect(conv.externalId).toBe("rollout-2025-04-01-abc");
    expect(summary(conv)).toEqual([
      ["user", "legacy question"],
      ["assistant", "legacy answer"],
    ]);
    expect(conv.startedAt).toBe(Date.parse("2025-04-01T08:00:00Z"));
  });
});

describe("gemini reader", () => {
  const reader = createGeminiReader();

  it("reads the chat JSON and maps model to assistant", async () => {
    const conv = only(await readFixture(reader, "gemini/hash123/chats/session-test.json"));
    expect(conv.externalId).toBe("test-session-1");
    expect(summary(conv)).toEqual([
      ["user", "Gemini hello"],
      ["assistant", "Hello from Gemini!"],
    ]);
    expect(conv.messages.every((m) => m.lineNumber === 1)).toBe(true);
    expect(conv.startedAt).toBe(Date.parse("2024-01-01T12:00:00Z"));
    expect(conv.endedAt).toBe(Date.parse("2024-01-01T12:05:00Z"));
    expect(conv.workspace).toBeNull();
  });

  it("guesses the workspace from paths in the messages", async () => {
    expect(guessWorkspace(["edit /home/ana/shop/src/a.ts", "and /home/ana/shop/README.md", "see /tmp/x"])).toBe("/home/ana/shop");
    expect(guessWorkspace(["no paths here"])).toBeNull();
    const conv = only(
      await readWritten(
        reader,
        "gemini/h/chats/session-2.json",
        JSON.stringify({
          sessionId: "g2",
          messages: [
            { type: "user", content: [{ text: "Look at /Users/bo/app/main.go please" }], timestamp: "2024-02-01T00:00:00Z" },
            { type: "gemini", content: "Done", toolCalls: [{ name: "read_file", args: { path: "/Users/bo/app/main.go" } }] },
            { type: "info", content: "ignored" },
          ],
        }),
      ),
    );
    expect(conv.workspace).toBe("/Users/bo/app");
    expect(summary(conv)).toEqual([
      ["user", "Look at /Users/bo/app/main.go please"],
      ["assistant", 'Done\n\n[tool: read_file] {"path":"/Users/bo/app/main.go"}'],
    ]);
  });
});

describe("aider reader", () => {
  const reader = createAiderReader();

  it("reads the fixture with #### as user and > as tool output", async () => {
    const ref = await refAt(reader, path.join(SESSIONS, "aider/.aider.chat.history.md"));
    const conv = only(await reader.read(ref));
    expect(conv.title).toBe("Aider Chat: aider");
    expect(conv.workspace).toBe(path.join(SESSIONS, "aider"));
    expect(conv.messages.map((m) => [m.role, m.content, m.lineNumber])).toEqual([
      ["tool", "/add src/main.rs", 2],
      ["assistant", "Added src/main.rs to the chat.", 4],
      ["user", "/add src/main.rs", 6],
      ["tool", "Please refactor.", 8],
      ["assistant", "Sure, here is the code.", 10],
    ]);
    expect(conv.startedAt).toBe(Math.round(ref.mtimeMs));
    expect(conv.endedAt).toBe(Math.round(ref.mtimeMs));
    expect(conv.messages.every((m) => m.createdAt === null)).toBe(true);
  });

  it("splits sessions at the chat-started headers and joins multi-line prompts", async () => {
    const body = [
      "# aider chat started at 2024-05-01 10:00:00",
      "",
      "> Aider v0.50.0",
      "> Model: gpt-4o",
      "",
      "#### add a retry to fetch()",
      "#### with exponential backoff",
      "",
      "Here is the change:",
      "",
      "```python",
      "def fetch(): ...",
      "```",
      "",
      "> Applied edit to net.py",
      "",
      "# aider chat started at 2024-05-02 09:30:00",
      "",
      "#### now add tests",
      "",
      "Sure.",
      "",
    ].join("\r\n");
    const convs = await readWritten(reader, "proj/.aider.chat.history.md", body);
    expect(convs).toHaveLength(2);
    expect(convs[0]!.externalId).toBe("2024-05-01 10:00:00");
    expect(summary(convs[0]!)).toEqual([
      ["tool", "Aider v0.50.0\nModel: gpt-4o"],
      ["user", "add a retry to fetch()\nwith exponential backoff"],
      ["assistant", "Here is the change:\n\n```python\ndef fetch(): ...\n```"],
      ["tool", "Applied edit to net.py"],
    ]);
    expect(convs[0]!.title).toBe("Aider Chat: proj");
    expect(convs[0]!.startedAt).toBe(new Date(2024, 4, 1, 10, 0, 0).getTime());
    expect(convs[0]!.endedAt).toBe(new Date(2024, 4, 2, 9, 30, 0).getTime());
    expect(summary(convs[1]!)).toEqual([
      ["user", "now add tests"],
      ["assistant", "Sure."],
    ]);
    expect(convs[1]!.messages[0]!.lineNumber).toBe(19);
  });
});

describe("cline reader", () => {
  const reader = createClineReader();

  it("prefers ui_messages.json and takes the title from task_metadata.json", async () => {
    const conv = only(await readFixture(reader, "cline/task1/ui_messages.json"));
    expect(conv.externalId).toBe("task1");
    expect(conv.title).toBe("Cline fixture task");
    expect(summary(conv)).toEqual([
      ["user", "Hello Cline"],
      ["assistant", "Hi from Cline"],
    ]);
    expect(conv.startedAt).toBe(1700000000000);
  });

  it("falls back to api_conversation_history.json", async () => {
    const dir = path.join(tmp, "cline-api/task2");
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, "api_conversation_history.json"),
      JSON.stringify([
        { role: "user", content: [{ type: "text", text: "<task>add auth</task>\n# Current Working Directory (/home/dev/site) Files" }] },
        { role: "assistant", content: [{ type: "text", text: "Adding auth." }, { type: "tool_use", name: "write_to_file", input: { path: "auth.ts" } }] },
      ]),
    );
    const conv = only(await reader.read(await refAt(reader, path.join(dir, "api_conversation_history.json"))));
    expect(conv.workspace).toBe("/home/dev/site");
    expect(conv.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(conv.messages[1]!.content).toBe('Adding auth.\n\n[tool: write_to_file] {"path":"auth.ts"}');
  });

  it("maps real Cline say/ask records and finds the cwd in api_req_started", async () => {
    const conv = only(
      await readWritten(
        reader,
        "cline-real/tasks/1700/ui_messages.json",
        JSON.stringify([
          { ts: 1700000000000, type: "say", say: "task", text: "Refactor the parser" },
          { ts: 1700000000100, type: "say", say: "api_req_started", text: JSON.stringify({ request: "<task>..</task>\n# Current Working Directory (/home/dev/parser) Files\n" }) },
          { ts: 1700000000200, type: "say", say: "text", text: "I'll read the parser first." },
          { ts: 1700000000300, type: "ask", ask: "tool", text: JSON.stringify({ tool: "readFile", path: "src/parser.ts" }) },
          { ts: 1700000000400, type: "ask", ask: "command", text: "npm test" },
          { ts: 1700000000500, type: "say", say: "command_output", text: "1 passing" },
          { ts: 1700000000600, type: "say", say: "checkpoint_created" },
          { ts: 1700000000700, type: "say", say: "completion_result", text: "Done." },
        ]),
      ),
    );
    expect(conv.workspace).toBe("/home/dev/parser");
    expect(conv.title).toBe("Refactor the parser");
    expect(summary(conv)).toEqual([
      ["user", "Refactor the parser"],
      ["assistant", "I'll read the parser first."],
      ["assistant", '[tool: readFile] {"path":"src/parser.ts"}'],
      ["assistant", "[tool: execute_command] npm test"],
      ["tool", "[tool result] 1 passing"],
      ["assistant", "Done."],
    ]);
  });
});

describe("opencode reader", () => {
  it("joins session, messages and parts from the JSON storage", async () => {
    const conv = only(await readFixture(createOpenCodeReader(), "opencode/session/proj1/ses_test1.json"));
    expect(conv.externalId).toBe("ses_test1");
    expect(conv.title).toBe("OpenCode JSON Session");
    expect(conv.workspace).toBe("/tmp/test-project");
    expect(conv.messages.map((m) => [m.role, m.author, m.createdAt])).toEqual([
      ["user", null, 1700000001000],
      ["assistant", "claude-3-opus", 1700000002000],
    ]);
    expect(conv.messages[0]!.content).toBe("Hello, can you help me with Rust?");
    expect(conv.startedAt).toBe(1700000000000);
    expect(conv.endedAt).toBe(1700000005000);
  });
});

describe("pi agent reader", () => {
  it("reads the session line, messages, tool calls and tool results", async () => {
    const conv = only(
      await readFixture(
        createPiAgentReader(),
        "pi_agent/sessions/--test-project--/2024-01-15T10-30-00-000Z_abc12345-1234-5678-9abc-def012345678.jsonl",
      ),
    );
    expect(conv.externalId).toBe("abc12345-1234-5678-9abc-def012345678");
    expect(conv.workspace).toBe("/Users/test/project");
    expect(conv.messages.map((m) => [m.role, m.lineNumber, m.createdAt])).toEqual([
      ["user", 2, 1705315801000],
      ["assistant", 3, 1705315805000],
      ["user", 4, 1705315810000],
      ["assistant", 5, 1705315815000],
      ["tool", 6, 1705315816000],
    ]);
    expect(conv.messages[1]!.author).toBe("claude-sonnet-4-20250514");
    expect(conv.messages[1]!.content).not.toContain("The user wants to understand");
    expect(conv.messages[3]!.content).toContain("[tool: read]");
    expect(conv.messages[4]!.content).toBe('[tool result: read] fn main() {\n    println!("Hello, world!");\n}');
    expect(conv.startedAt).toBe(Date.parse("2024-01-15T10:30:00.000Z"));
  });
});

describe("chatgpt reader", () => {
  const reader = createChatGptReader();

  it("prefers conversation_id when id is absent and converts float seconds", async () => {
    const conv = only(await readFixture(reader, "chatgpt/conversations-real/conv-conversation-id.json"));
    expect(conv.externalId).toBe("chatgpt-desktop-conv-alt-001");
    expect(conv.title).toBe("Conversation ID Fixture");
    expect(conv.messages.map((m) => [m.role, m.author, m.createdAt])).toEqual([
      ["user", null, 1701000000250],
      ["assistant", "gpt-4o", 1701000001750],
    ]);
    expect(conv.messages[1]!.content).toBe("Confirmed.\n\nThe connector should prefer conversation_id when id is absent.");
  });

  it("joins multiple parts", async () => {
    const conv = only(await readFixture(reader, "chatgpt/conversations-real/conv-multipart.json"));
    expect(conv.externalId).toBe("chatgpt-multipart-001");
    expect(summary(conv)).toEqual([["user", "First paragraph.\n\nSecond paragraph.\n\n```rust\nfn main() {}\n```"]]);
  });

  it("flattens structured parts and marks images", async () => {
    const conv = only(await readFixture(reader, "chatgpt/conversations-real/conv-structured-parts.json"));
    expect(summary(conv)).toEqual([
      ["user", "Leading plain text.\n\nStructured text block that current parsing does not flatten.\n\n[image]\n\nTrailing plain text."],
      ["assistant", "Assistant structured-only block currently drops."],
    ]);
  });

  it("follows current_node and reads web-export arrays", async () => {
    const convs = await readWritten(
      reader,
      "chatgpt/export/conversations.json",
      JSON.stringify([
        {
          id: "a",
          title: "Branches",
          current_node: "n3",
          mapping: {
            root: { parent: null, message: null },
            n1: { parent: "root", message: { author: { role: "user" }, content: { content_type: "text", parts: ["q"] }, create_time: 1700000000 } },
            n2: { parent: "n1", message: { author: { role: "assistant" }, content: { content_type: "text", parts: ["abandoned"] }, create_time: 1700000001 } },
            n3: { parent: "n1", message: { author: { role: "assistant" }, content: { content_type: "text", parts: ["kept"] }, create_time: 1700000002 } },
          },
        },
        { id: "b", title: "Empty", mapping: {} },
        "not a conversation",
      ]),
    );
    const conv = only(convs);
    expect(summary(conv)).toEqual([
      ["user", "q"],
      ["assistant", "kept"],
    ]);
  });
});

describe("copilot reader", () => {
  const reader = createCopilotReader();

  it("reads CLI events and keeps unicode intact", async () => {
    const conv = only(await readFixture(reader, "copilot/cli_prompt_output_unicode.events.jsonl"));
    expect(conv.externalId).toBe("cli-session-001");
    expect(conv.workspace).toBe("/workspaces/demo-unicode");
    expect(summary(conv)).toEqual([
      ["user", "How should Copilot handle cafe\u0301 ✅ and emoji?"],
      ["assistant", "Keep Unicode intact: cafe\u0301 ✅ should round-trip."],
    ]);
  });

  it("skips the truncated line and recovers", async () => {
    const conv = only(await readFixture(reader, "copilot/cli_truncated_resume.events.jsonl"));
    expect(conv.workspace).toBe("/workspaces/recovery");
    expect(conv.messages.map((m) => [m.role, m.content, m.lineNumber])).toEqual([
      ["user", "Recover after truncated line", 1],
      ["assistant", "Recovered after truncation.", 3],
    ]);
  });

  it("reads the legacy history JSON (human → user)", async () => {
    const conv = only(await readFixture(reader, "copilot/legacy_history_human.json"));
    expect(conv.workspace).toBe("/workspaces/legacy-copilot");
    expect(conv.messages.map((m) => [m.role, m.content, m.createdAt])).toEqual([
      ["user", "Summarize unicode Ω handling 🚀", 1700003000000],
      ["assistant", "Unicode stays normalized and searchable.", 1700003001000],
    ]);
  });

  it("reads the data-envelope event form", async () => {
    const conv = only(
      await readWritten(
        reader,
        "copilot/s/events.jsonl",
        jsonl(
          { type: "session.start", data: { sessionId: "s-9", cwd: "/src/app" }, timestamp: "2025-09-01T00:00:00Z" },
          { type: "user.message", data: { content: "list files" }, timestamp: "2025-09-01T00:00:01Z" },
          { type: "assistant.message", data: { content: "", toolRequests: [{ name: "bash", arguments: { command: "ls" } }] }, timestamp: "2025-09-01T00:00:02Z" },
          { type: "tool.execution_complete", data: { toolName: "bash", result: { content: "a.ts" } }, timestamp: "2025-09-01T00:00:03Z" },
        ),
      ),
    );
    expect(conv.externalId).toBe("s-9");
    expect(conv.workspace).toBe("/src/app");
    expect(summary(conv)).toEqual([
      ["user", "list files"],
      ["assistant", '[tool: bash] {"command":"ls"}'],
      ["tool", "[tool result: bash] a.ts"],
    ]);
  });
});

describe("amp reader", () => {
  it("reads the thread JSON", async () => {
    const conv = only(await readFixture(createAmpReader(), "amp/thread-001.json"));
    expect(conv.externalId).toBe("thread-001");
    expect(conv.title).toBe("Amp sample thread");
    expect(conv.messages.map((m) => [m.role, m.content, m.createdAt])).toEqual([
      ["user", "Hello", 1700000000000],
      ["assistant", "Hi there", 1700000005000],
    ]);
  });
});

describe("generic reader", () => {
  const reader = createGenericReader();

  it("reads the normalised envelope JSONL with system and tool records", async () => {
    const conv = only(await readFixture(reader, "html_export_edge_cases/all_message_types.jsonl"));
    // The file names its agent ("agent": "claude_code"): that is the session's agent (issue 17).
    expect(conv.agent).toBe("claude_code");
    expect(conv.externalId).toBe("all-types-001");
    expect(conv.workspace).toBe("/home/dev/project");
    expect(conv.messages[0]!.role).toBe("system");
    const tool = conv.messages.find((m) => m.role === "tool");
    expect(tool?.content).toContain("[tool: Read]");
    expect(tool?.content).toContain("[tool result] fn main()");
  });

  it("reads heavy unicode content unchanged", async () => {
    const conv = only(await readFixture(reader, "html_export_edge_cases/unicode_heavy.jsonl"));
    expect(conv.messages.length).toBeGreaterThan(1);
    const all = conv.messages.map((m) => m.content).join("\n");
    expect(all).toMatch(/[\u4e00-\u9fff]/);
    expect(all).toMatch(/\p{Extended_Pictographic}/u);
  });

  it("skips invalid lines and keeps line numbers of the valid ones", async () => {
    const conv = only(await readFixture(reader, "html_export_malformed/invalid_json.jsonl"));
    expect(conv.messages.map((m) => [m.content, m.lineNumber])).toEqual([
      ["Valid first message", 1],
      ["Valid third message after invalid one", 3],
      ["Final valid message", 5],
    ]);
  });

  it("drops a truncated last line", async () => {
    const conv = only(await readFixture(reader, "html_export_malformed/truncated.jsonl"));
    expect(conv.messages.map((m) => m.content)).toEqual(["This is a complete message", "This message is complete too"]);
  });

  it("tolerates missing fields and wrong types", async () => {
    const missing = only(await readFixture(reader, "html_export_malformed/missing_fields.jsonl"));
    expect(missing.messages.map((m) => m.content)).toEqual([
      "Missing sessionId",
      "Missing workspace",
      "Missing agent",
      "Missing type field",
      "Missing role in message",
    ]);
    const wrong = only(await readFixture(reader, "html_export_malformed/wrong_types.jsonl"));
    expect(wrong.externalId).toBe("wrong-001");
    expect(wrong.workspace).toBe("/home/dev/project");
    expect(wrong.messages.find((m) => m.content === "timestamp is number")?.createdAt).toBe(1705315200000);
    expect(wrong.messages.find((m) => m.content === "string instead of object")).toBeDefined();
  });

  it("returns nothing for an empty session", async () => {
    expect(await readFixture(reader, "html_export_edge_cases/empty_session.jsonl")).toEqual([]);
  });

  it("reads records with OpenAI-style tool_calls and ms times", async () => {
    const conv = only(await readFixture(reader, "message_grouping/opencode_session.jsonl"));
    expect(conv.externalId).toBe("ses_opencode_test");
    expect(conv.messages[0]!.createdAt).toBe(1705313000000);
    expect(conv.messages[1]!.content).toContain("[tool: Write]");
    expect(conv.messages[2]!.role).toBe("tool");
  });

  it("reads JSON arrays and {messages} documents", async () => {
    const arr = only(
      await readWritten(reader, "generic/a.json", JSON.stringify([{ role: "human", content: "hi" }, { role: "ai", content: "hello" }])),
    );
    expect(summary(arr)).toEqual([
      ["user", "hi"],
      ["assistant", "hello"],
    ]);
    const doc = only(
      await readWritten(reader, "generic/b.json", JSON.stringify({ title: "Doc", messages: [{ role: "user", text: "q" }] })),
    );
    expect(doc.title).toBe("Doc");
    expect(summary(doc)).toEqual([["user", "q"]]);
  });

  it("reads Markdown transcripts with role markers", async () => {
    const conv = only(
      await readWritten(
        reader,
        "generic/t.md",
        ["# Debugging session", "", "## User", "Why does the build fail?", "", "## Assistant", "A missing import.", "", "**User:** thanks", "Assistant: you're welcome"].join("\n"),
      ),
    );
    expect(conv.title).toBe("Debugging session");
    expect(conv.messages.map((m) => [m.role, m.content, m.lineNumber])).toEqual([
      ["user", "Why does the build fail?", 3],
      ["assistant", "A missing import.", 6],
      ["user", "thanks", 9],
      ["assistant", "you're welcome", 10],
    ]);
  });

  it("indexes a Markdown file without markers as one message", async () => {
    const conv = only(await readWritten(reader, "generic/notes.md", "# Notes\n\nUse pnpm, not npm.\n"));
    expect(summary(conv)).toEqual([["user", "# Notes\n\nUse pnpm, not npm."]]);
  });
});
