// Issue 17 (history half) at the adapter level: the generic reader over real transcript shapes,
// unreadable files counted and explained by the native source's health, the agent taken from the
// reader (`describe`), and the auto source with the fake `cass` executable (a failing cass is
// still reported; sessions are listed through `timeline` when `sessions` fails).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { createAutoSource } from "../src/auto-source.js";
import { createCassCliSource } from "../src/cass-cli/source.js";
import { createSessionReaders, discoverSessions } from "../src/native/discovery.js";
import { createNativeSource } from "../src/native/native-source.js";
import { createAiderReader } from "../src/native/readers/aider.js";
import { agentSlugFrom, createGenericReader } from "../src/native/readers/generic.js";
import { explainUnreadable } from "../src/native/unreadable.js";

const FAKE_CASS = fileURLToPath(new URL("./fake-cass/cass", import.meta.url));
/** Where the fake cass's sessions and timeline point (the real fixture files). */
const FIXTURE_SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cm-history-truth-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const jsonl = (records: unknown[]): string => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

function write(name: string, text: string | Buffer): string {
  const path = join(dir, "exports", name);
  mkdirSync(join(dir, "exports"), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const ref = (path: string) => ({ agent: "generic" as const, path, mtimeMs: Date.now(), size: 1 });

function nativeOver(root: string) {
  const home = join(dir, "home");
  mkdirSync(home, { recursive: true });
  return createNativeSource({
    readers: createSessionReaders(),
    discover: discoverSessions,
    discoveryEnv: { home, env: {}, platform: "linux" },
    extraRoots: { generic: [root] },
    indexDir: join(dir, "index"),
  });
}

describe("generic reader", () => {
  it("reads plain role/content lines and lines wrapped in `message`, and a JSONL file saved as .json", async () => {
    const reader = createGenericReader();
    const plain = write("plain.jsonl", jsonl([{ role: "user", content: "Fix the login bug" }, { role: "assistant", content: "Awaited the refresh." }]));
    const wrapped = write("wrapped.json", jsonl([{ message: { role: "user", content: "Add retries" } }, { message: { role: "assistant", content: "Added backoff." } }]));
    for (const [path, first] of [
      [plain, "Fix the login bug"],
      [wrapped, "Add retries"],
    ] as const) {
      const [conversation] = await reader.read(ref(path));
      expect(conversation?.messages.map((m) => [m.role, m.content])).toEqual([
        ["user", first],
        ["assistant", expect.any(String)],
      ]);
      expect(conversation?.agent).toBe("generic");
      expect(conversation?.title).toBe(first);
    }
  });

  it("honours the agent a transcript names (agent, agentSlug), normalised to a slug; role words are not agents", async () => {
    const reader = createGenericReader();
    const named = write("named.jsonl", jsonl([{ agentSlug: "Claude-Code", role: "user", content: "hello there" }]));
    expect((await reader.read(ref(named)))[0]?.agent).toBe("claude_code");
    const agent = write("agent.jsonl", jsonl([{ agent: "cursor", role: "user", content: "hello there" }]));
    expect((await reader.read(ref(agent)))[0]?.agent).toBe("cursor");
    expect(agentSlugFrom("assistant")).toBeNull();
    expect(agentSlugFrom("rm -rf /")).toBeNull();
    expect(agentSlugFrom("x".repeat(65))).toBeNull();
    expect(agentSlugFrom("pi")).toBe("pi_agent");
  });

  it("the Aider reader leaves JSON and JSONL files to the generic reader", async () => {
    const plain = write("plain.jsonl", jsonl([{ role: "user", content: "Fix the login bug" }]));
    const array = write("array.json", '[\n  {"role": "user", "content": "hi"}\n]\n');
    const aider = createAiderReader();
    expect(await aider.read({ ...ref(plain), agent: "aider" })).toEqual([]);
    expect(await aider.read({ ...ref(array), agent: "aider" })).toEqual([]);
    const text = write("notes.md", "#### add a test\n\nAdded the test.\n");
    expect(await aider.read({ ...ref(text), agent: "aider" })).toEqual([]);
    const copy = write("history-copy.md", "# aider chat started at 2026-01-02 10:00:00\n\n#### add a test\n\nAdded the test.\n");
    expect((await aider.read({ ...ref(copy), agent: "aider" }))[0]?.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
  });
});

describe("unreadable session files", () => {
  it("explains why a file held no session", async () => {
    expect(await explainUnreadable(write("empty.jsonl", ""), "generic")).toBe("empty file");
    expect(await explainUnreadable(write("bin.jsonl", Buffer.from([0x7b, 0, 1])), "generic")).toBe("binary file, not a transcript");
    expect(await explainUnreadable(write("broken.jsonl", "nope {{\n"), "generic")).toBe("not valid JSON or JSONL");
    expect(await explainUnreadable(write("obj.json", '{"a":1}'), "codex")).toBe("valid JSON, but no messages in a format the Codex reader knows");
    expect(await explainUnreadable(write("lines.jsonl", '{"a":1}\n{"b":2}\n'), "claude_code")).toBe(
      "valid JSONL, but no messages in a format the Claude Code reader knows",
    );
    expect(await explainUnreadable(write("half.jsonl", '{"a":1}\nnot json\n'), "generic")).toMatch(/^1 of 2 lines looked at are not valid JSON/);
    expect(await explainUnreadable(join(dir, "gone.jsonl"), "generic")).toMatch(/disappeared/);
  });

  it("native health counts only readable sessions and lists the unreadable files per agent with reasons", async () => {
    write("plain.jsonl", jsonl([{ role: "user", content: "Fix the login bug" }, { role: "assistant", content: "Done." }]));
    write("named.json", jsonl([{ agent: "codex", role: "user", content: "Rotate keys" }]));
    write("broken.jsonl", "nope {{\n");
    write("settings.json", '{"theme":"dark"}');
    const native = nativeOver(join(dir, "exports"));
    const health = await native.health();
    expect(health.available).toBe(true);
    expect(health.files).toBe(4);
    expect(health.sessions).toBe(2);
    expect(health.agents).toEqual({ codex: 1, generic: 1 });
    expect(health.unreadable).toEqual({
      count: 2,
      byAgent: { generic: 2 },
      files: [
        { path: join(dir, "exports", "broken.jsonl"), agent: "generic", reason: "not valid JSON or JSONL" },
        { path: join(dir, "exports", "settings.json"), agent: "generic", reason: "valid JSON, but no messages in a format the generic transcript reader knows" },
      ],
    });
    // listSessions agrees with the health count.
    expect(await native.listSessions({})).toHaveLength(2);
    // describe: the agent the reader read the file as.
    expect(await native.describe(join(dir, "exports", "named.json"))).toEqual({ agent: "codex" });
    expect(await native.describe(join(dir, "exports", "broken.jsonl"))).toBeNull();
  });

  it("a root of only unreadable files is not available, and says why", async () => {
    write("broken.jsonl", "nope {{\n");
    const health = await nativeOver(join(dir, "exports")).health();
    expect(health.available).toBe(false);
    expect(health.sessions).toBe(0);
    expect(health.degraded?.message).toMatch(/1 session file\(s\) found, but none could be read \(e\.g\. .*broken\.jsonl: not valid JSON or JSONL\)/);
  });
});

describe("auto source over the fake cass executable", () => {
  const cassWith = (env: Record<string, string>) =>
    createCassCliSource({ cassPath: FAKE_CASS, env: { ...process.env, FAKE_CASS_HOME: join(dir, "home"), ...env }, fallbackPaths: [] });

  it("reports cass's failure (reason, fix, who answered) while native readers answer the search", async () => {
    write("plain.jsonl", jsonl([{ role: "user", content: "webpack build is slow" }, { role: "assistant", content: "Enabled the persistent cache." }]));
    const auto = createAutoSource({
      cass: cassWith({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-index" }),
      native: nativeOver(join(dir, "exports")),
    });
    const result = await auto.search("webpack", { limit: 5 });
    expect(result.hits.map((h) => h.source_path)).toEqual([join(dir, "exports", "plain.jsonl")]);
    expect(result.degraded).toMatchObject({ available: false, reason: "INDEX_MISSING", answeredBy: "native" });
    expect(result.degraded?.suggestedFix?.length).toBeGreaterThan(0);
  });

  it("lists sessions through `cass timeline` when `cass sessions` fails, even while cass health is failing", async () => {
    const log = join(dir, "calls.jsonl");
    const cass = cassWith({ FAKE_CASS_MODE: "exit", FAKE_CASS_MODE_ON: "sessions", FAKE_CASS_EXIT_CODE: "9", FAKE_CASS_HEALTH: "not_initialized", FAKE_CASS_LOG: log });
    const auto = createAutoSource({ cass, native: nativeOver(join(dir, "nothing")) });
    const sessions = await auto.listSessions({ days: 365 });
    expect(sessions.length).toBeGreaterThan(0);
    expect(sessions.every((s) => s.path.startsWith(FIXTURE_SESSIONS))).toBe(true);
    const { readFileSync } = await import("node:fs");
    const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => (JSON.parse(l) as { argv: string[] }).argv[0]);
    expect(calls).toEqual(expect.arrayContaining(["sessions", "timeline"]));
  });
});
