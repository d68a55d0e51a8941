// Readers on hostile input: huge files, oversized lines and messages, BOM/CRLF, unicode, empty and
// binary files; plus the shared timestamp/clip helpers.
import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { SessionFileRef, SessionReader } from "../src/model.js";
import { createSessionReaders } from "../src/native/discovery.js";
import { createClaudeCodeReader } from "../src/native/readers/claude-code.js";
import { createCodexReader } from "../src/native/readers/codex.js";
import { createPiAgentReader } from "../src/native/readers/pi-agent.js";
import { MAX_CONTENT_CHARS, MAX_MESSAGES, clip, readLines, toMs } from "../src/native/readers/util.js";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "cass-robust-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function refAt(reader: SessionReader, file: string): Promise<SessionFileRef> {
  const info = await stat(file);
  return { agent: reader.agent, path: file, mtimeMs: info.mtimeMs, size: info.size };
}

/** Streams `count` lines produced by `line(i)` to a file. */
async function writeLines(file: string, count: number, line: (i: number) => string): Promise<void> {
  const out = createWriteStream(file);
  for (let i = 0; i < count; i += 1) {
    if (!out.write(line(i) + "\n")) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
}

function claudeLine(i: number, text: string): string {
  return JSON.stringify({
    type: i % 2 === 0 ? "user" : "assistant",
    cwd: "/big/repo",
    sessionId: "big",
    message: { role: i % 2 === 0 ? "user" : "assistant", content: text },
    uuid: `u-${i}`,
    timestamp: new Date(1_700_000_000_000 + i * 1000).toISOString(),
  });
}

describe("large files", () => {
  it("reads a ~20 MB JSONL to the end, keeping only the messages", async () => {
    const file = path.join(tmp, "big-progress.jsonl");
    const filler = "x".repeat(1000);
    const total = 20_000;
    await writeLines(file, total, (i) =>
      i === total - 1
        ? claudeLine(0, "the last line is the only user message")
        : JSON.stringify({ type: "progress", data: { output: filler, n: i } }),
    );
    expect((await stat(file)).size).toBeGreaterThan(20 * 1024 * 1024);
    const reader = createClaudeCodeReader();
    const convs = await reader.read(await refAt(reader, file));
    expect(convs).toHaveLength(1);
    expect(convs[0]!.messages).toHaveLength(1);
    expect(convs[0]!.messages[0]!.lineNumber).toBe(total);
    expect(convs[0]!.messages[0]!.content).toBe("the last line is the only user message");
  });

  it("caps the number of messages per conversation", async () => {
    const file = path.join(tmp, "big-messages.jsonl");
    const total = MAX_MESSAGES + 2_500;
    await writeLines(file, total, (i) => claudeLine(i, `message number ${i} ${"y".repeat(900)}`));
    expect((await stat(file)).size).toBeGreaterThan(10 * 1024 * 1024);
    const reader = createClaudeCodeReader();
    const [conv] = await reader.read(await refAt(reader, file));
    expect(conv!.messages).toHaveLength(MAX_MESSAGES);
    expect(conv!.messages[MAX_MESSAGES - 1]!.idx).toBe(MAX_MESSAGES - 1);
    expect(conv!.messages[MAX_MESSAGES - 1]!.lineNumber).toBe(MAX_MESSAGES);
    expect(conv!.workspace).toBe("/big/repo");
  });

  it("clips a huge message to the content cap", async () => {
    const file = path.join(tmp, "huge-message.jsonl");
    await writeFile(file, claudeLine(0, "z".repeat(1_000_000)) + "\n" + claudeLine(1, "after") + "\n");
    const reader = createClaudeCodeReader();
    const [conv] = await reader.read(await refAt(reader, file));
    expect(conv!.messages[0]!.content.length).toBeLessThanOrEqual(MAX_CONTENT_CHARS);
    expect(conv!.messages[0]!.content).toMatch(/…\[truncated\]$/);
    expect(conv!.messages[1]!.content).toBe("after");
  });

  it("skips lines longer than the line limit without buffering them", async () => {
    const file = path.join(tmp, "long-line.txt");
    await writeFile(file, `short one\n${"q".repeat(50_000)}\nshort two\n${"w".repeat(5_000)}`);
    const lines: Array<[number, string]> = [];
    for await (const line of readLines(file, 1024)) lines.push([line.lineNumber, line.text]);
    expect(lines).toEqual([
      [1, "short one"],
      [3, "short two"],
    ]);
  });
});

describe("encodings and line endings", () => {
  it("handles a BOM, CRLF line endings and unicode", async () => {
    const file = path.join(tmp, "bom-crlf.jsonl");
    const body =
      "\uFEFF" +
      [
        claudeLine(0, "Ünïcödé 你好 🎉🚀 مرحبا — cafe\u0301"),
        "",
        "{garbage",
        claudeLine(1, "réponse ✅"),
      ].join("\r\n") +
      "\r\n";
    await writeFile(file, body, "utf8");
    const reader = createClaudeCodeReader();
    const [conv] = await reader.read(await refAt(reader, file));
    expect(conv!.messages.map((m) => [m.content, m.lineNumber])).toEqual([
      ["Ünïcödé 你好 🎉🚀 مرحبا — cafe\u0301", 1],
      ["réponse ✅", 4],
    ]);
  });

  it("splits multi-byte characters across stream chunks correctly", async () => {
    const file = path.join(tmp, "multibyte.jsonl");
    // 300 KB of 4-byte emoji crosses the 256 KiB read chunk boundary mid-character.
    const text = "🚀".repeat(75_000);
    await writeFile(file, claudeLine(0, text) + "\n");
    const reader = createClaudeCodeReader();
    const [conv] = await reader.read(await refAt(reader, file));
    const content = conv!.messages[0]!.content;
    expect(content.startsWith("🚀🚀🚀")).toBe(true);
    expect(content).not.toContain("\uFFFD");
  });
});

describe("degenerate files", () => {
  it("every reader returns [] for empty, binary and missing files", async () => {
    const empty = path.join(tmp, "empty.jsonl");
    const binary = path.join(tmp, "binary.json");
    const binaryMd = path.join(tmp, "binary.md");
    const bytes = Buffer.from([0, 159, 146, 150, 0xff, 0xfe, 10, 123, 0, 10]);
    await writeFile(empty, "");
    await writeFile(binary, bytes);
    await writeFile(binaryMd, bytes);
    for (const reader of createSessionReaders()) {
      for (const file of [empty, binary, binaryMd]) {
        expect(await reader.read(await refAt(reader, file)), `${reader.agent} ${file}`).toEqual([]);
      }
      const missing: SessionFileRef = { agent: reader.agent, path: path.join(tmp, "missing.jsonl"), mtimeMs: 0, size: 0 };
      expect(await reader.read(missing)).toEqual([]);
    }
  });

  it("skips malformed lines in Codex and Pi sessions", async () => {
    const codexFile = path.join(tmp, "rollout-bad.jsonl");
    await writeFile(
      codexFile,
      [
        JSON.stringify({ timestamp: "2025-01-01T00:00:00Z", type: "session_meta", payload: { id: "x", cwd: "/p" } }),
        '{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message",',
        "[1,2,3]",
        JSON.stringify({ timestamp: "2025-01-01T00:00:02Z", type: "response_item", payload: { type: "message", role: "user", content: "plain string content" } }),
        JSON.stringify({ timestamp: 5, type: "event_msg", payload: "not an object" }),
        JSON.stringify({ type: "event_msg", payload: { type: "agent_message", message: "ok" } }),
      ].join("\n"),
    );
    const codex = createCodexReader();
    const [conv] = await codex.read(await refAt(codex, codexFile));
    expect(conv!.workspace).toBe("/p");
    expect(conv!.messages.map((m) => [m.role, m.content, m.lineNumber, m.createdAt])).toEqual([
      ["user", "plain string content", 4, Date.parse("2025-01-01T00:00:02Z")],
      ["assistant", "ok", 6, null],
    ]);

    const piFile = path.join(tmp, "pi-bad.jsonl");
    await writeFile(
      piFile,
      [
        JSON.stringify({ type: "session", id: "p1", cwd: "/pi", timestamp: "2025-01-01T00:00:00Z" }),
        JSON.stringify({ type: "message", message: "oops" }),
        JSON.stringify({ type: "message", message: { role: "user", content: 42 } }),
        "not json",
        JSON.stringify({ type: "message", message: { role: "assistant", content: [{ type: "text", text: "fine" }, null, 7] } }),
      ].join("\n"),
    );
    const pi = createPiAgentReader();
    const [piConv] = await pi.read(await refAt(pi, piFile));
    expect(piConv!.messages.map((m) => [m.role, m.content, m.lineNumber])).toEqual([
      ["user", "42", 3],
      ["assistant", "fine\n\n7", 5],
    ]);
  });
});

describe("helpers", () => {
  it("normalises timestamps to milliseconds", () => {
    expect(toMs("2025-11-12T18:31:18.697Z")).toBe(1762972278697);
    expect(toMs(1701000000.25)).toBe(1701000000250);
    expect(toMs(1700000000000)).toBe(1700000000000);
    expect(toMs("1700000000000")).toBe(1700000000000);
    expect(toMs("1701000000")).toBe(1701000000000);
    expect(toMs("yesterday-ish")).toBeNull();
    expect(toMs(Number.NaN)).toBeNull();
    expect(toMs(null)).toBeNull();
    expect(toMs({})).toBeNull();
  });

  it("clips without splitting a surrogate pair", () => {
    const text = "a".repeat(20) + "🚀".repeat(20);
    const out = clip(text, 40);
    expect(out.length).toBeLessThanOrEqual(40);
    expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
    expect(out.endsWith("…[truncated]")).toBe(true);
    expect(clip("short", 40)).toBe("short");
  });
});
