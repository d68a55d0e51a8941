// Discovery over a temp HOME laid out like the real agent locations, env overrides, per-platform
// default roots, configured extra roots, de-duplication, and awkward directory trees.
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { afterAll, beforeAll, describe, expect, it } from "vitest";

import type { AgentSlug, DiscoveryEnv, SessionReader } from "../src/model.js";
import { createSessionReaders, discoverSessions, normalizeAgentKey } from "../src/native/discovery.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
const PI_FILE = "2024-01-15T10-30-00-000Z_abc12345-1234-5678-9abc-def012345678.jsonl";

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), "cass-discovery-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

async function copy(rel: string, dest: string): Promise<void> {
  await mkdir(path.dirname(dest), { recursive: true });
  await cp(path.join(SESSIONS, rel), dest, { recursive: true });
}

function linux(home: string, env: Record<string, string> = {}): DiscoveryEnv {
  return { home, env, platform: "linux" };
}

function countByAgent(found: Array<{ ref: { agent: AgentSlug } }>): Partial<Record<AgentSlug, number>> {
  const counts: Partial<Record<AgentSlug, number>> = {};
  for (const { ref } of found) counts[ref.agent] = (counts[ref.agent] ?? 0) + 1;
  return counts;
}

function reader(agent: AgentSlug): SessionReader {
  return createSessionReaders().find((r) => r.agent === agent)!;
}

describe("registry", () => {
  it("has one reader per agent slug, generic last, and no duplicates", () => {
    const agents = createSessionReaders().map((r) => r.agent);
    expect(agents).toEqual([
      "claude_code",
      "codex",
      "gemini",
      "aider",
      "cline",
      "opencode",
      "pi_agent",
      "chatgpt",
      "copilot",
      "amp",
      "generic",
    ]);
  });

  it("normalises configured agent keys", () => {
    expect(normalizeAgentKey("claude-code")).toBe("claude_code");
    expect(normalizeAgentKey("Copilot_CLI")).toBe("copilot");
    expect(normalizeAgentKey("pi")).toBe("pi_agent");
    expect(normalizeAgentKey("cursor")).toBeNull();
  });
});

describe("discovery in a HOME laid out like the real locations", () => {
  let home: string;

  beforeAll(async () => {
    home = path.join(tmp, "home");
    await copy("claude_code/projects/-test-project/agent-test123.jsonl", path.join(home, ".claude/projects/-test-project/agent-test123.jsonl"));
    await writeFile(path.join(home, ".claude/projects/-test-project/notes.txt"), "not a session");
    await copy("codex/sessions", path.join(home, ".codex/sessions"));
    await copy("gemini/hash123", path.join(home, ".gemini/tmp/hash123"));
    await writeFile(path.join(home, ".gemini/tmp/hash123/logs.json"), "[]");
    await copy("aider/.aider.chat.history.md", path.join(home, "projects/shop/.aider.chat.history.md"));
    await copy("aider/.aider.chat.history.md", path.join(home, "projects/shop/node_modules/dep/.aider.chat.history.md"));
    // Cline under tasks/<id>/ (real layout) and Roo with task dirs as immediate children (FAD layout).
    await copy("cline/task1", path.join(home, ".config/Code/User/globalStorage/saoudrizwan.claude-dev/tasks/task1"));
    await copy("cline/task1", path.join(home, ".config/Cursor/User/globalStorage/rooveterinaryinc.roo-cline/task1"));
    await copy("opencode", path.join(home, ".local/share/opencode/storage"));
    await copy(`pi_agent/sessions/--test-project--/${PI_FILE}`, path.join(home, ".pi/agent/sessions/--test-project--", PI_FILE));
    await copy("chatgpt/conversations-real", path.join(home, ".local/share/cass/chatgpt"));
    await copy("copilot/cli_prompt_output_unicode.events.jsonl", path.join(home, ".copilot/session-state/cli_prompt_output_unicode.events.jsonl"));
    await copy("copilot/cli_truncated_resume.events.jsonl", path.join(home, ".copilot/session-state/s2/events.jsonl"));
    await copy("copilot/legacy_history_human.json", path.join(home, ".copilot/history-session-state/legacy_history_human.json"));
    await copy("amp/thread-001.json", path.join(home, ".local/share/amp/threads/thread-001.json"));
  });

  it("finds every agent's sessions under its default roots", async () => {
    const found = await discoverSessions(createSessionReaders(), linux(home));
    expect(countByAgent(found)).toEqual({
      claude_code: 1,
      codex: 2,
      gemini: 1,
      aider: 1,
      cline: 2,
      opencode: 1,
      pi_agent: 1,
      chatgpt: 3,
      copilot: 3,
      amp: 1,
    });
    for (const { reader: r, ref } of found) {
      expect(r.agent).toBe(ref.agent);
      expect(ref.size).toBeGreaterThan(0);
      expect(ref.mtimeMs).toBeGreaterThan(0);
      expect(path.isAbsolute(ref.path)).toBe(true);
    }
    expect(found.find((f) => f.ref.agent === "aider")!.ref.path).toBe(path.join(home, "projects/shop/.aider.chat.history.md"));
    expect(found.filter((f) => f.ref.agent === "cline").map((f) => path.basename(f.ref.path))).toEqual(["ui_messages.json", "ui_messages.json"]);
    expect(found.find((f) => f.ref.agent === "opencode")!.ref.path).toBe(path.join(home, ".local/share/opencode/storage/session/proj1/ses_test1.json"));
  });

  it("reads every discovered session into at least one conversation", async () => {
    const found = await discoverSessions(createSessionReaders(), linux(home));
    for (const { reader: r, ref } of found) {
      const convs = await r.read(ref);
      expect(convs.length, ref.path).toBeGreaterThan(0);
      for (const conv of convs) {
        expect(conv.agent).toBe(ref.agent);
        expect(conv.messages.length).toBeGreaterThan(0);
      }
    }
    const claude = found.find((f) => f.ref.agent === "claude_code")!;
    const [conv] = await claude.reader.read(claude.ref);
    expect(conv!.messages).toHaveLength(2);
    const aider = found.find((f) => f.ref.agent === "aider")!;
    expect((await aider.reader.read(aider.ref))[0]!.workspace).toBe(path.join(home, "projects/shop"));
  });

  it("adds configured extra roots (dash or underscore keys, ~ expanded) without duplicates", async () => {
    const extra = path.join(tmp, "extra-claude");
    await copy("message_grouping/claude_session.jsonl", path.join(extra, "p/claude_session.jsonl"));
    const transcripts = path.join(home, "transcripts");
    await copy("html_export_edge_cases/single_message.jsonl", path.join(transcripts, "single_message.jsonl"));
    await writeFile(path.join(transcripts, "chat.md"), "## User\nhello\n## Assistant\nhi\n");
    const found = await discoverSessions(createSessionReaders(), linux(home), {
      "claude-code": [extra, extra, `${extra}/`],
      generic: ["~/transcripts", transcripts, path.join(home, ".claude/projects")],
      cursor: ["/nowhere"],
    });
    const counts = countByAgent(found);
    expect(counts.claude_code).toBe(2);
    // The generic root overlapping ~/.claude/projects does not report the Claude file again.
    expect(counts.generic).toBe(2);
    const paths = found.map((f) => path.resolve(f.ref.path));
    expect(new Set(paths).size).toBe(paths.length);
  });
});

describe("concurrent walks", () => {
  it("reports files in reader and root order, whichever walk finishes first, skipping failed roots", async () => {
    // Two fake readers: the later roots answer first, and both readers claim /s/shared.
    const delays: Record<string, number> = { "/a1": 40, "/a2": 20, "/a3": 0, "/b1": 0 };
    const started: string[] = [];
    const startedWhenDone: Record<string, number> = {};
    const reader = (agent: AgentSlug, roots: string[]): SessionReader => ({
      agent,
      defaultRoots: () => roots,
      async discover(root) {
        started.push(root);
        await new Promise((resolve) => setTimeout(resolve, delays[root] ?? 0));
        startedWhenDone[root] = started.length;
        if (root === "/a2") throw new Error("unreadable root");
        return [`${root}/x`, "/s/shared"].map((p) => ({ agent, path: p, mtimeMs: 0, size: 1 }));
      },
      read: async () => [],
    });
    const found = await discoverSessions([reader("claude_code", ["/a1", "/a2", "/a3", "/a1"]), reader("generic", ["/b1"])], linux(tmp));
    expect(found.map((f) => [f.reader.agent, f.ref.path])).toEqual([
      ["claude_code", "/a1/x"],
      ["claude_code", "/s/shared"],
      ["claude_code", "/a3/x"],
      ["generic", "/b1/x"],
    ]);
    // Every root was being walked before the first (slowest) one answered; /a1 only once.
    expect(started).toEqual(["/a1", "/a2", "/a3", "/b1"]);
    expect(startedWhenDone["/a1"]).toBe(4);
  });
});

describe("env overrides", () => {
  it("puts env roots first and discovers sessions there", async () => {
    const base = path.join(tmp, "env");
    const home = path.join(base, "home");
    await mkdir(home, { recursive: true });
    const env = {
      CLAUDE_CONFIG_DIR: path.join(base, "claude"),
      CODEX_HOME: path.join(base, "codex"),
      GEMINI_HOME: path.join(base, "gemini"),
      OPENCODE_STORAGE_ROOT: path.join(base, "opencode-storage"),
      CASS_AIDER_DATA_ROOT: path.join(base, "aider"),
      PI_CODING_AGENT_DIR: path.join(base, "pi"),
      XDG_DATA_HOME: path.join(base, "xdg-data"),
      XDG_CONFIG_HOME: path.join(base, "xdg-config"),
    };
    await copy("claude_code/projects", path.join(env.CLAUDE_CONFIG_DIR, "projects"));
    await copy("codex/sessions", path.join(env.CODEX_HOME, "sessions"));
    await copy("gemini/hash123", path.join(env.GEMINI_HOME, "tmp/hash123"));
    await copy("opencode", env.OPENCODE_STORAGE_ROOT);
    await copy("aider/.aider.chat.history.md", path.join(env.CASS_AIDER_DATA_ROOT, "repo/.aider.chat.history.md"));
    await copy("pi_agent/sessions", path.join(env.PI_CODING_AGENT_DIR, "sessions"));
    await copy("amp/thread-001.json", path.join(env.XDG_DATA_HOME, "amp/thread-001.json"));
    await copy("chatgpt/conversations-real/conv-multipart.json", path.join(env.XDG_DATA_HOME, "cass/chatgpt/conv-multipart.json"));
    await copy("cline/task1", path.join(env.XDG_CONFIG_HOME, "Code/User/globalStorage/saoudrizwan.claude-dev/tasks/t1"));

    const ctx = linux(home, env);
    expect(reader("claude_code").defaultRoots(ctx)[0]).toBe(path.join(env.CLAUDE_CONFIG_DIR, "projects"));
    expect(reader("codex").defaultRoots(ctx)).toEqual([path.join(env.CODEX_HOME, "sessions"), path.join(home, ".codex/sessions")]);
    expect(reader("gemini").defaultRoots(ctx)[0]).toBe(env.GEMINI_HOME);
    expect(reader("opencode").defaultRoots(ctx)[0]).toBe(env.OPENCODE_STORAGE_ROOT);
    expect(reader("opencode").defaultRoots(ctx)[1]).toBe(path.join(env.XDG_DATA_HOME, "opencode/storage"));
    expect(reader("aider").defaultRoots(ctx)).toEqual([env.CASS_AIDER_DATA_ROOT]);
    expect(reader("pi_agent").defaultRoots(ctx)[0]).toBe(path.join(env.PI_CODING_AGENT_DIR, "sessions"));
    expect(reader("amp").defaultRoots(ctx)[0]).toBe(path.join(env.XDG_DATA_HOME, "amp"));
    expect(reader("cline").defaultRoots(ctx)[0]).toBe(path.join(env.XDG_CONFIG_HOME, "Code/User/globalStorage/saoudrizwan.claude-dev"));

    const found = await discoverSessions(createSessionReaders(), ctx);
    expect(countByAgent(found)).toEqual({
      claude_code: 1,
      codex: 2,
      gemini: 1,
      aider: 1,
      cline: 1,
      opencode: 1,
      pi_agent: 1,
      chatgpt: 1,
      amp: 1,
    });
  });
});

describe("per-platform default roots", () => {
  const home = "/Users/ana";

  it("adds the macOS locations", () => {
    const ctx: DiscoveryEnv = { home, env: {}, platform: "darwin" };
    expect(reader("claude_code").defaultRoots(ctx)).toEqual([
      "/Users/ana/.claude/projects",
      "/Users/ana/Library/Application Support/Claude/claude-code-sessions",
      "/Users/ana/Library/Application Support/Claude/local-agent-mode-sessions",
    ]);
    expect(reader("cline").defaultRoots(ctx)).toContain(
      "/Users/ana/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev",
    );
    expect(reader("cline").defaultRoots(ctx)).toContain(
      "/Users/ana/Library/Application Support/Cursor/User/globalStorage/rooveterinaryinc.roo-cline",
    );
    expect(reader("opencode").defaultRoots(ctx)).toContain("/Users/ana/Library/Application Support/opencode/storage");
    expect(reader("chatgpt").defaultRoots(ctx)[0]).toBe("/Users/ana/Library/Application Support/com.openai.chat");
    expect(reader("amp").defaultRoots(ctx)).toContain("/Users/ana/Library/Application Support/Code/User/globalStorage/sourcegraph.amp");
    expect(reader("generic").defaultRoots(ctx)).toEqual([]);
  });

  it("uses Windows paths and %APPDATA%", () => {
    const ctx: DiscoveryEnv = { home: "C:\\Users\\ana", env: { APPDATA: "D:\\Roaming" }, platform: "win32" };
    expect(reader("codex").defaultRoots(ctx)).toEqual(["C:\\Users\\ana\\.codex\\sessions"]);
    expect(reader("claude_code").defaultRoots(ctx)).toEqual(["C:\\Users\\ana\\.claude\\projects"]);
    expect(reader("cline").defaultRoots(ctx)).toContain("D:\\Roaming\\Code\\User\\globalStorage\\saoudrizwan.claude-dev");
    const noAppData: DiscoveryEnv = { home: "C:\\Users\\ana", env: {}, platform: "win32" };
    expect(reader("cline").defaultRoots(noAppData)).toContain(
      "C:\\Users\\ana\\AppData\\Roaming\\Cursor\\User\\globalStorage\\rooveterinaryinc.roo-cline",
    );
    expect(reader("chatgpt").defaultRoots(noAppData)).toEqual([]);
  });
});

describe("awkward trees", () => {
  it("returns nothing for missing roots", async () => {
    for (const r of createSessionReaders()) {
      expect(await r.discover(path.join(tmp, "does-not-exist"))).toEqual([]);
    }
  });

  it("survives symlink loops and dangling links, reporting each file once", async () => {
    const root = path.join(tmp, "loop/projects");
    await copy("claude_code/projects/-test-project/agent-test123.jsonl", path.join(root, "p/agent-test123.jsonl"));
    await symlink(root, path.join(root, "p/back-to-root"));
    await symlink(path.join(root, "p"), path.join(root, "p/self"));
    await symlink(path.join(tmp, "missing-target"), path.join(root, "dangling.jsonl"));
    const refs = await reader("claude_code").discover(root);
    expect(refs.map((r) => path.relative(root, r.path))).toEqual(["p/agent-test123.jsonl"]);
  });

  it("stops at the depth bound", async () => {
    const root = path.join(tmp, "deep");
    await copy("codex/sessions/2025/11/25/rollout-test.jsonl", path.join(root, "a/b/c/d/e/f/g/rollout-deep.jsonl"));
    await copy("codex/sessions/2025/11/25/rollout-test.jsonl", path.join(root, "2025/11/25/rollout-ok.jsonl"));
    const refs = await reader("codex").discover(root);
    expect(refs.map((r) => path.basename(r.path))).toEqual(["rollout-ok.jsonl"]);
  });

  it("accepts a root that is itself a session file", async () => {
    const file = path.join(SESSIONS, "html_export_edge_cases/single_message.jsonl");
    const refs = await reader("generic").discover(file);
    expect(refs.map((r) => r.path)).toEqual([file]);
  });

  it("skips the encrypted ChatGPT stores", async () => {
    const root = path.join(tmp, "com.openai.chat");
    await copy("chatgpt/conversations-real/conv-multipart.json", path.join(root, "conversations-1234/conv.json"));
    await mkdir(path.join(root, "conversations-v3-abcd"), { recursive: true });
    await writeFile(path.join(root, "conversations-v3-abcd/x.json"), "{}");
    await writeFile(path.join(root, "conversations-v3-abcd/y.data"), "encrypted");
    const refs = await reader("chatgpt").discover(root);
    expect(refs.map((r) => path.relative(root, r.path))).toEqual(["conversations-1234/conv.json"]);
  });

  it.skipIf(process.getuid?.() === 0)("ignores unreadable directories", async () => {
    const root = path.join(tmp, "unreadable/sessions");
    await copy("codex/sessions/2025/11/25/rollout-test.jsonl", path.join(root, "2025/11/25/rollout-a.jsonl"));
    await copy("codex/sessions/2025/11/25/rollout-test.jsonl", path.join(root, "2025/11/26/rollout-b.jsonl"));
    await chmod(path.join(root, "2025/11/26"), 0o000);
    try {
      const refs = await reader("codex").discover(root);
      expect(refs.map((r) => path.basename(r.path))).toEqual(["rollout-a.jsonl"]);
    } finally {
      await chmod(path.join(root, "2025/11/26"), 0o755);
    }
  });
});
