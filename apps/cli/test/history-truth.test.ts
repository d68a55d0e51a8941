/**
 * Issue 17 (history half): generic transcripts read as such, unreadable session files reported,
 * lookback windows that say when older history exists, the agent taken from the reader, a failing
 * cass still reported while the native readers answer, cass `timeline` discovery, cassAvailable
 * without cass, a missing LLM command not counted as a credential, and `undo --run` keeping rules
 * changed after the run. Every case runs the built `cm` over real files; cass is the fake `cass`
 * executable replaying the contract's goldens.
 */
import { cpSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, tempHome } from "./helpers.js";

const FAKE_CASS = fileURLToPath(new URL("../../../packages/cass/test/fake-cass/cass", import.meta.url));
const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
const LEARNING = fileURLToPath(new URL("../../../fixtures/learning/", import.meta.url));
const SHOP_SESSION = "5f1c2a7e-9d41-4b8e-a3c2-6e0f1d2b9a11.jsonl";
const DAY = 86_400_000;

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

/** No cass anywhere: PATH without it and a CASS_PATH that does not exist. */
const noCass = (extra: Record<string, string | undefined> = {}) => ({
  PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
  CASS_PATH: join(home, "no-such-cass"),
  CASS_MEMORY_LLM: "none",
  ...extra,
});

function writeConfig(patch: Record<string, unknown>): void {
  const dir = join(home, ".cass-memory");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "config.json");
  let current: Record<string, unknown> = {};
  try {
    current = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    current = {};
  }
  writeFileSync(path, JSON.stringify({ ...current, ...patch }, null, 2));
}

function lines(records: unknown[]): string {
  return `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;
}

function setAge(file: string, days: number): void {
  const at = new Date(Date.now() - days * DAY);
  utimesSync(file, at, at);
}

/**
 * A folder of transcripts as other tools export them: three readable (plain role/content lines,
 * lines wrapped in `message`, a JSONL file saved as `.json` naming its agent) and four that are not.
 */
function transcriptFolder(ageDays: number): string {
  const dir = join(home, "exports");
  mkdirSync(dir, { recursive: true });
  const old = new Date(Date.now() - ageDays * DAY).toISOString();
  writeFileSync(
    join(dir, "plain.jsonl"),
    lines([
      { role: "user", content: "Fix the flaky login test in auth.spec.ts", timestamp: old },
      { role: "assistant", content: "The fix was to await the token refresh before asserting.", timestamp: old },
    ]),
  );
  writeFileSync(
    join(dir, "wrapped.jsonl"),
    lines([
      { message: { role: "user", content: "Add retries to the invoice fetcher" }, timestamp: old },
      { message: { role: "assistant", content: "Added exponential backoff to the invoice fetcher." }, timestamp: old },
    ]),
  );
  writeFileSync(
    join(dir, "saved-as.json"),
    lines([
      { agentSlug: "claude-code", role: "user", content: "Rotate the staging database credentials", timestamp: old },
      { role: "assistant", content: "Rotated the staging database credentials with the vault CLI.", timestamp: old },
    ]),
  );
  writeFileSync(join(dir, "broken.jsonl"), "this is not json {{\nnor is this\n");
  writeFileSync(join(dir, "empty.json"), "");
  writeFileSync(join(dir, "binary.jsonl"), Buffer.from([0x7b, 0x00, 0x01, 0x02]));
  writeFileSync(join(dir, "settings.json"), JSON.stringify({ theme: "dark", fontSize: 12 }));
  for (const name of ["plain.jsonl", "wrapped.jsonl", "saved-as.json", "broken.jsonl", "empty.json", "binary.jsonl", "settings.json"]) setAge(join(dir, name), ageDays);
  writeConfig({ sessionRoots: { generic: [dir] } });
  return dir;
}

describe("generic transcripts and unreadable files", () => {
  it("onboard read renders plain and wrapped JSONL (also saved as .json) as conversations, not an Aider chat of raw JSON", () => {
    const dir = transcriptFolder(1);
    for (const [name, first] of [
      ["plain.jsonl", "Fix the flaky login test"],
      ["wrapped.jsonl", "Add retries to the invoice fetcher"],
      ["saved-as.json", "Rotate the staging database credentials"],
    ] as const) {
      const r = cm(["onboard", "read", join(dir, name), "--json"], { home, env: noCass() });
      expect(r.code, r.stderr).toBe(0);
      const content: string = r.json().data.sessionContent;
      expect(content).not.toContain("Aider Chat");
      expect(content).not.toContain('{"role"');
      expect(content).not.toContain('{"message"');
      expect(content).toMatch(/## .*User\n\n/);
      expect(content).toContain(first);
    }
    // The template's metadata names the agent the file names itself, normalised.
    const template = cm(["onboard", "read", join(dir, "saved-as.json"), "--template", "--json"], { home, env: noCass() });
    expect(template.code, template.stderr).toBe(0);
    expect(template.json().data.metadata.agent).toBe("claude_code");
  });

  it("doctor counts only readable sessions, says which files could not be read and why, and agrees with onboard status", () => {
    transcriptFolder(1);
    const doctor = cm(["doctor", "--json"], { home, env: noCass() });
    expect(doctor.code, doctor.stderr).not.toBe(null);
    const check = doctor.json().data.checks.find((c: any) => c.item === "Native session files");
    expect(check.status).toBe("warn");
    expect(check.details.sessions).toBe(3);
    expect(check.details.files).toBe(7);
    expect(check.details.agents).toEqual({ claude_code: 1, generic: 2 });
    expect(check.details.unreadable.count).toBe(4);
    expect(check.details.unreadable.byAgent).toEqual({ generic: 4 });
    const reasons = Object.fromEntries(check.details.unreadable.files.map((f: any) => [f.path.split("/").pop(), f.reason]));
    expect(reasons["broken.jsonl"]).toBe("not valid JSON or JSONL");
    expect(reasons["empty.json"]).toBe("empty file");
    expect(reasons["binary.jsonl"]).toBe("binary file, not a transcript");
    expect(reasons["settings.json"]).toMatch(/^valid JSON, but no messages/);
    expect(check.message).toMatch(/^3 readable sessions .* in 7 session file\(s\); 4 of 7 session file\(s\) could not be read \(generic 4\)/);

    const status = cm(["onboard", "status", "--json"], { home, env: noCass() });
    expect(status.code, status.stderr).toBe(0);
    expect(status.json().data.status.totalConversations).toBe(3);

    // --verbose names the unreadable files on stderr (stdout stays JSON).
    const verbose = cm(["doctor", "--json", "--verbose"], { home, env: noCass() });
    expect(verbose.stderr).toMatch(/Unreadable generic session file .*broken\.jsonl: not valid JSON or JSONL/);
    expect(() => verbose.json()).not.toThrow();
  });
});

describe("lookback windows say when older history exists", () => {
  it("cm context reports matching sessions older than --days, with the flag that includes them", () => {
    transcriptFolder(40);
    const r = cm(["context", "rotate the staging database credentials", "--days", "7", "--json"], { home, env: noCass() });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.historySnippets).toEqual([]);
    expect(data.olderHistory).toMatchObject({ sessions: 1, days: 7 });
    expect(data.olderHistory.flag).toMatch(/^--days (4[01])$/);
    const wider = cm(["context", "rotate the staging database credentials", ...data.olderHistory.flag.split(" "), "--json"], { home, env: noCass() });
    expect(wider.json().data.historySnippets.length).toBeGreaterThan(0);
    expect(wider.json().data.olderHistory).toBeUndefined();

    const human = cm(["context", "rotate the staging database credentials", "--days", "7"], { home, env: noCass() });
    expect(human.stdout).toMatch(/No history in the last 7 days, but 1 older session\(s\) match; use --days 4[01]/);
  });

  it("onboard sample says older unprocessed sessions exist instead of only 'No unprocessed sessions found'", () => {
    transcriptFolder(40);
    const status = cm(["onboard", "status", "--json"], { home, env: noCass() }).json().data.status;
    expect(status.totalConversations).toBe(3);
    const r = cm(["onboard", "sample", "--days", "30", "--json"], { home, env: noCass() });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.sessions).toEqual([]);
    expect(data.olderSessions).toMatchObject({ sessions: 3, days: 30 });
    const human = cm(["onboard", "sample", "--days", "30"], { home, env: noCass() });
    expect(human.stdout).toContain("No unprocessed sessions found in the last 30 days.");
    expect(human.stdout).toMatch(/3 older unprocessed session\(s\) exist: use --days 4[01] to include them\./);
    const wider = cm(["onboard", "sample", "--days", "41", "--json"], { home, env: noCass() });
    expect(wider.json().data.sessions.length).toBeGreaterThan(0);
  });
});

describe("attribution comes from the reader", () => {
  it("a Cline task (saoudrizwan.claude-dev storage) is reflected on as cline, and learned rules name the reader's agent", () => {
    const cline = join(home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "tasks", "task1");
    cpSync(join(SESSIONS, "cline", "task1"), cline, { recursive: true });
    expect(cm(["init", "--json"], { home, env: noCass() }).code).toBe(0);
    const dry = cm(["reflect", "--session", join(cline, "ui_messages.json"), "--dry-run", "--json"], { home, env: noCass() });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json().data.sessions[0].agent).toBe("cline");

    const shop = join(home, ".claude", "projects", "-work-shop-api");
    cpSync(join(LEARNING, "claude", "-work-shop-api"), shop, { recursive: true });
    const run = cm(["reflect", "--session", join(shop, SHOP_SESSION), "--json"], { home, env: noCass() });
    expect(run.code, run.stderr).toBe(0);
    const learned = cm(["playbook", "list", "--all", "--json"], { home, env: noCass() }).json().data.bullets;
    expect(learned.length).toBeGreaterThan(0);
    for (const b of learned) expect(b.sourceAgents).toEqual(["claude_code"]);
  });
});

describe("cass installed but failing", () => {
  const cassEnv = (extra: Record<string, string>) => noCass({ CASS_PATH: FAKE_CASS, CASS_MEMORY_EPISODIC: "auto", FAKE_CASS_HOME: home, ...extra });

  it("cm context reports degraded.cass with reason and fix while the native readers answer, and says which source answered", () => {
    transcriptFolder(1);
    const r = cm(["context", "fix the flaky login test", "--json"], {
      home,
      env: cassEnv({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-index" }),
    });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.historySnippets.length).toBeGreaterThan(0);
    expect(data.historySnippets[0].sessionPath).toMatch(/plain\.jsonl$/);
    expect(data.degraded.cass).toMatchObject({ available: false, reason: "INDEX_MISSING", answeredBy: "native" });
    expect(data.degraded.cass.suggestedFix.length).toBeGreaterThan(0);
    expect(data.degraded.cass.message).toContain("History came from the native session readers instead.");
    const human = cm(["context", "fix the flaky login test"], { home, env: cassEnv({ FAKE_CASS_MODE: "envelope", FAKE_CASS_KIND: "missing-index" }) });
    expect(human.stdout).toContain("cass failed (INDEX_MISSING); history from the native source instead");
  });

  it("privacy status and reflect discover sessions through `cass timeline` when `sessions` fails", () => {
    const log = join(home, "cass-calls.jsonl");
    const env = cassEnv({ FAKE_CASS_MODE: "exit", FAKE_CASS_MODE_ON: "sessions", FAKE_CASS_EXIT_CODE: "9", FAKE_CASS_LOG: log });
    const privacy = cm(["privacy", "status", "--json"], { home, env });
    expect(privacy.code, privacy.stderr).toBe(0);
    const counts = privacy.json().data.cass.sessionCountsByAgent;
    expect(counts).not.toBeNull();
    expect(Object.values(counts as Record<string, number>).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => JSON.parse(l).argv[0]);
    expect(calls).toContain("sessions");
    expect(calls).toContain("timeline");

    writeFileSync(log, "");
    const reflect = cm(["reflect", "--days", "365", "--dry-run", "--json"], { home, env });
    const reflected = reflect.json().data.sessions.map((s: any) => s.path);
    expect(reflected.length).toBeGreaterThan(0);
    expect(reflected.every((p: string) => p.startsWith(SESSIONS))).toBe(true);
    expect(readFileSync(log, "utf8")).toContain('"timeline"');
  });

  it("init and onboard status report cassAvailable false without cass, true with it", () => {
    transcriptFolder(1);
    const init = cm(["init", "--json"], { home, env: noCass() });
    expect(init.code, init.stderr).toBe(0);
    expect(init.json().data.cassAvailable).toBe(false);
    const status = cm(["onboard", "status", "--json"], { home, env: noCass() }).json().data.status;
    expect(status).toMatchObject({ cassAvailable: false, historyAvailable: true, totalConversations: 3 });
    expect(Object.keys(status).slice(0, 2)).toEqual(["cassAvailable", "historySource"]);
    const withCass = cm(["onboard", "status", "--json"], { home, env: cassEnv({ FAKE_CASS_HEALTH: "not_initialized" }) }).json().data.status;
    expect(withCass.cassAvailable).toBe(true);
  });
});

describe("doctor's LLM check", () => {
  it("does not count a configured LLM command that does not exist as a credential", () => {
    expect(cm(["init", "--json"], { home, env: noCass() }).code).toBe(0);
    writeConfig({ provider: "cli", cliCommand: "no-such-llm-command --print" });
    const r = cm(["doctor", "--json"], { home, env: noCass({ CASS_MEMORY_LLM: undefined }) });
    const checks = r.json().data.checks as any[];
    const text = JSON.stringify(checks.filter((c) => /LLM/i.test(c.category) || /LLM/i.test(c.item)));
    expect(text).not.toContain("config.cliCommand");
    const system = checks.find((c) => c.item === "LLM System");
    if (system !== undefined) expect(system.status).not.toBe("pass");

    // An executable that exists does count.
    const bin = join(home, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "my-llm"), "#!/bin/sh\necho ok\n", { mode: 0o755 });
    writeConfig({ provider: "cli", cliCommand: "my-llm --print" });
    const found = cm(["doctor", "--json"], { home, env: noCass({ CASS_MEMORY_LLM: undefined, PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin` }) });
    expect(JSON.stringify(found.json().data.checks)).toContain("config.cliCommand");
  });
});

describe("undo --run keeps rules changed after the run", () => {
  it("a learned rule marked helpful after the run is kept and reported in conflicts; untouched ones are removed", () => {
    cpSync(join(LEARNING, "claude"), join(home, ".claude", "projects"), { recursive: true });
    cpSync(join(LEARNING, "codex"), join(home, ".codex", "sessions"), { recursive: true });
    expect(cm(["init", "--json"], { home, env: noCass() }).code).toBe(0);
    const run = cm(["reflect", "--days", "100000", "--max-sessions", "50", "--json"], { home, env: noCass() });
    expect(run.code, run.stderr).toBe(0);
    const runId: string = run.json().data.runId;
    const learned = cm(["playbook", "list", "--all", "--json"], { home, env: noCass() }).json().data.bullets as any[];
    expect(learned.length).toBeGreaterThanOrEqual(2);
    const kept = learned[0].id as string;
    expect(cm(["mark", kept, "--helpful", "--json"], { home, env: noCass() }).code).toBe(0);

    const dry = cm(["undo", "--run", runId, "--dry-run", "--json"], { home, env: noCass() });
    expect(dry.json().data.conflicts).toEqual([expect.objectContaining({ bulletId: kept })]);

    const undo = cm(["undo", "--run", runId, "--json"], { home, env: noCass() });
    expect(undo.code, undo.stderr).toBe(0);
    const data = undo.json().data;
    expect(data.conflicts).toEqual([expect.objectContaining({ bulletId: kept, reason: expect.stringContaining("the rule was kept") })]);
    expect(data.removed).not.toContain(kept);
    expect(data.removed.length).toBe(learned.length - 1);
    const after = cm(["playbook", "list", "--all", "--json"], { home, env: noCass() }).json().data.bullets as any[];
    expect(after.map((b) => b.id)).toEqual([kept]);
    expect(after[0].helpfulCount).toBe(1);
  });
});
