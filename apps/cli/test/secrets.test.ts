import { mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { secretSamples, type SecretSample } from "../../../bench/secrets/corpus.mjs";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { BIN, assertBuilt, cm, cmAsync, tempHome, type RunResult } from "./helpers.js";

// Issue 21 item 2, end to end: secrets fed through every way into cm (add, remember, forget,
// mark, outcome, MCP memory_remember and cm_context, a session file read by reflect and context,
// an LLM reflect against a fake OpenAI-compatible server) must leave no trace in any file under
// HOME (the planted session files aside), in any captured stdout/stderr, or in any LLM request.

/** One generated sample per kind (fixed seed: the same fake secrets on every run). */
const SAMPLES: SecretSample[] = (() => {
  const seen = new Set<string>();
  return secretSamples().filter((s) => (seen.has(s.kind) ? false : (seen.add(s.kind), true)));
})();

/** What must not appear: each line of a secret (PEM bodies span lines) and a middle slice of long ones. */
function needles(secret: string): string[] {
  const out: string[] = [];
  for (const part of secret.split("\n")) {
    if (part.length >= 8) out.push(part);
    if (part.length >= 24) out.push(part.slice(6, 22));
  }
  return out;
}
const ALL_NEEDLES = SAMPLES.flatMap((s) => needles(s.secret).map((n) => ({ kind: s.kind, needle: n })));

function leaks(text: string): string[] {
  return ALL_NEEDLES.filter(({ needle }) => text.includes(needle)).map(({ kind }) => kind);
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) out.push(...filesUnder(path));
    else if (st.isFile()) out.push(path);
  }
  return out;
}

let home: string;
let cleanup: () => void;
let outside: string;
const outputs: Array<{ what: string; text: string }> = [];
const record = (what: string, r: RunResult): RunResult => {
  outputs.push({ what: `${what} stdout`, text: r.stdout }, { what: `${what} stderr`, text: r.stderr });
  return r;
};

beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  outside = realpathSync(mkdtempSync(join(tmpdir(), "cm-secrets-in-")));
  outputs.length = 0;
});
afterEach(() => {
  cleanup();
  rmSync(outside, { recursive: true, force: true });
});

const env = (extra: Record<string, string | undefined> = {}) => ({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, CASS_PATH: undefined, CASS_MEMORY_EPISODIC: "native", ...extra });
const run = (what: string, args: string[], extra: Record<string, string | undefined> = {}) => record(what, cm(args, { home, env: env({ CASS_MEMORY_LLM: "none", ...extra }) }));

/** A Claude Code session in project `project` whose messages carry `texts`; returns its path. */
function writeSession(project: string, id: string, texts: string[]): string {
  const dir = join(home, ".claude", "projects", project);
  mkdirSync(dir, { recursive: true });
  const at = new Date(Date.now() - 3_600_000).toISOString();
  const line = (role: string, content: string) => JSON.stringify({ type: role, cwd: "/work/app", sessionId: id, message: { role, content }, timestamp: at });
  const lines = [line("user", `Deploy the billing service; the config has ${texts[0]} in it`)];
  for (const text of texts) {
    lines.push(line("assistant", `I found the deploy failure. Always rotate credentials after a leak: the config held ${text}. Never commit .env files with keys.`));
    lines.push(line("user", `Next: ${text}`));
  }
  const path = join(dir, `${id}.jsonl`);
  writeFileSync(path, lines.join("\n") + "\n");
  return path;
}

function expectRefused(r: RunResult): void {
  expect(r.code, r.stderr).toBe(2);
  const error = r.json().error;
  expect(error.code).toBe("SECRET_DETECTED");
  expect(error.hint ?? JSON.stringify(r.json())).toMatch(/placeholder such as <API_KEY>/);
}

describe("secrets never stored, printed or sent (issue 21)", () => {
  it("has at least 15 kinds in the end-to-end sample", () => {
    expect(SAMPLES.length).toBeGreaterThanOrEqual(15);
  });

  it("refuses or redacts every secret on every path, leaving none in files, output or LLM requests", async () => {
    expect(run("init", ["init", "--json"]).code).toBe(0);
    const clean = run("add clean", ["add", "Run the test suite before pushing to main", "--category", "testing", "--json"]);
    expect(clean.code, clean.stderr).toBe(0);
    const ruleId = clean.json().data.bullet.id as string;

    // Rules, tags and evidence with a secret are refused (exit 2, kind named, nothing written).
    const journalBefore = readFileSync(join(home, ".cass-memory", "events.jsonl"), "utf8");
    for (const s of SAMPLES) expectRefused(run(`add ${s.kind}`, ["add", `Use this in deploys: ${s.text}`, "--json"]));
    for (const s of SAMPLES.slice(0, 4)) expectRefused(run(`remember ${s.kind}`, ["remember", "Check the deploy key", "--tag", "ops", "--tag", s.secret, "--json"]));
    expectRefused(run("remember evidence", ["remember", "Rotate keys after a leak", "--evidence", `log:deploy.log:${SAMPLES[5]!.text}`, "--json"]));
    expect(readFileSync(join(home, ".cass-memory", "events.jsonl"), "utf8")).toBe(journalBefore);

    // Reasons of forget and mark are stored in the playbook: refused too.
    expectRefused(run("forget", ["forget", ruleId, "--reason", `it leaked ${SAMPLES[3]!.text}`, "--json"]));
    expectRefused(run("mark", ["mark", ruleId, "--harmful", "--reason", `wrong key ${SAMPLES[6]!.text}`, "--json"]));
    expectRefused(run("remove", ["playbook", "remove", ruleId, "--reason", `rotated ${SAMPLES[14]!.text}`, "--json"]));

    // Outcome notes are a log, not a rule: redacted and recorded.
    const outcome = run("outcome", ["outcome", "success", ruleId, "--text", `worked after setting ${SAMPLES[9]!.text}`, "--json"]);
    expect(outcome.code, outcome.stderr).toBe(0);

    // An error that would echo its input (an unknown id made of a secret) prints it redacted.
    const missing = run("mark unknown", ["mark", SAMPLES[2]!.secret, "--helpful", "--json"]);
    expect(missing.code).toBe(2);

    // Imports redact and count instead of failing.
    const importFile = join(outside, "import.json");
    writeFileSync(importFile, JSON.stringify([{ content: `Deploy with ${SAMPLES[8]!.text}`, category: "ops" }, { content: "Prefer small commits", category: "git" }]));
    const imported = run("import", ["playbook", "import", importFile, "--json"]);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.json().data.added).toBe(2);
    expect(imported.json().data.secretsRedacted.total).toBeGreaterThanOrEqual(1);

    // A session carrying every secret (also in its title): reflect (no LLM), then context / recall.
    const sessionA = writeSession("-work-app", "sess-a", SAMPLES.map((s) => s.text));
    const reflected = run("reflect", ["reflect", "--days", "100000", "--json"]);
    expect(reflected.code, reflected.stderr).toBe(0);
    expect(reflected.json().data.sessionsProcessed).toBeGreaterThanOrEqual(1);
    const ctx = run("context", ["context", "deploy the billing service config credentials", "--json"]);
    expect(ctx.code, ctx.stderr).toBe(0);
    expect(ctx.json().data.historySnippets.length).toBeGreaterThan(0);
    run("context secret task", ["context", `fix deploy with ${SAMPLES[10]!.text}`, "--json"]);
    run("recall", ["recall", "billing deploy credentials", "--json"]);
    run("context human", ["context", "deploy the billing service config credentials"]);

    // MCP: memory_remember refused with SECRET_DETECTED; cm_context answers redacted.
    const mcp = new Client({ name: "secrets-test", version: "1.0.0" });
    const mcpEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith("MCP_") && !k.startsWith("CASS_")) mcpEnv[k] = v;
    Object.assign(mcpEnv, { HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_EPISODIC: "native", PATH: env().PATH });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, "serve", "--stdio"], cwd: home, env: mcpEnv, stderr: "pipe" });
    let mcpStderr = "";
    transport.stderr?.on("data", (d: Buffer) => (mcpStderr += d.toString()));
    await mcp.connect(transport);
    for (const s of SAMPLES.slice(0, 5)) {
      const r = await mcp.callTool({ name: "memory_remember", arguments: { content: `Remember ${s.text}` } });
      expect(r.isError).toBe(true);
      const text = JSON.stringify(r.content);
      expect(text).toContain("SECRET_DETECTED");
      outputs.push({ what: `mcp remember ${s.kind}`, text });
    }
    const mcpCtx = await mcp.callTool({ name: "cm_context", arguments: { task: `deploy billing with ${SAMPLES[12]!.text}`, full: true } });
    outputs.push({ what: "mcp cm_context", text: JSON.stringify(mcpCtx) });
    await mcp.close();
    outputs.push({ what: "mcp stderr", text: mcpStderr });

    // An LLM reflect of a second session: nothing secret in any request, nor in what it learns
    // even when the model echoes a secret back.
    const fake: FakeOpenAI = await startFakeOpenAI({
      diary: [{ json: { status: "success", accomplishments: [`Deployed with ${SAMPLES[0]!.text}`], decisions: [], challenges: [], preferences: [], keyLearnings: ["Rotate keys"], tags: ["ops"] } }],
      reflector: [
        { json: { deltas: [{ type: "add", bullet: { content: `Set ${SAMPLES[7]!.text} before deploying billing`, category: "ops", kind: null, type: null, isNegative: null, scope: null, workspace: null, searchPointer: null, tags: ["ops"] }, reason: "seen in session", sourceSession: null }] } },
        { json: { deltas: [] } },
      ],
      validator: [{ json: { verdict: "ACCEPT", confidence: 0.9, reason: "ok", supporting: [], contradicting: [], suggestedRefinement: null } }],
    });
    try {
      const config = JSON.parse(readFileSync(join(home, ".cass-memory", "config.json"), "utf8")) as Record<string, unknown>;
      writeFileSync(join(home, ".cass-memory", "config.json"), JSON.stringify({ ...config, provider: "openai", model: "test-model", baseUrl: fake.url }, null, 2));
      const sessionB = writeSession("-work-app", "sess-b", SAMPLES.map((s) => s.text).reverse());
      const llm = record("reflect llm", await cmAsync(["reflect", "--session", sessionB, "--json"], { home, env: env() }));
      expect(llm.code, llm.stderr).toBe(0);
      expect(llm.json().data.mode).toBe("llm");
      expect(fake.requests.length).toBeGreaterThanOrEqual(2);
      for (const q of fake.requests) expect(leaks(JSON.stringify(q.body)), `LLM ${q.component} request`).toEqual([]);
      const planted = new Set([sessionA, sessionB]);

      // Every file under HOME but the planted sessions, and every captured output: no secret.
      const files = filesUnder(home).filter((f) => !planted.has(f));
      expect(files.some((f) => f.endsWith("playbook.yaml"))).toBe(true);
      expect(files.some((f) => f.includes(`${join(".cass-memory", "diary")}`))).toBe(true);
      const fileLeaks = files.flatMap((f) => leaks(readFileSync(f, "latin1")).map((kind) => `${f.slice(home.length)}: ${kind}`));
      expect(fileLeaks).toEqual([]);
      const outputLeaks = outputs.flatMap((o) => leaks(o.text).map((kind) => `${o.what}: ${kind}`));
      expect(outputLeaks).toEqual([]);
      // The redaction is visible where the text was kept.
      expect(readFileSync(join(home, ".cass-memory", "outcomes.jsonl"), "utf8")).toMatch(/\[[A-Z_]+\]/);
    } finally {
      await fake.close();
    }
  }, 180_000);

  it("doctor counts stored secrets by kind, --fix redacts them with a backup", () => {
    expect(run("init", ["init", "--json"]).code).toBe(0);
    const dir = join(home, ".cass-memory");
    // Secrets stored by an older cm: in the playbook, the journal, blocked.log, outcomes, a diary.
    const yaml = readFileSync(join(dir, "playbook.yaml"), "utf8").replace(/bullets:.*$/s, "bullets:\n") +
      `  - id: b-old1\n    content: ${JSON.stringify(`Deploy with ${SAMPLES[0]!.text}`)}\n    category: ops\n    createdAt: "2026-01-01T00:00:00.000Z"\n    updatedAt: "2026-01-01T00:00:00.000Z"\n`;
    writeFileSync(join(dir, "playbook.yaml"), yaml);
    writeFileSync(join(dir, "blocked.log"), JSON.stringify({ id: "b-x", content: `uses ${SAMPLES[4]!.text}`, reason: "bad", forgottenAt: "2026-01-01T00:00:00.000Z" }) + "\n");
    writeFileSync(join(dir, "outcomes.jsonl"), JSON.stringify({ sessionId: "s", outcome: "success", rulesUsed: ["b-old1"], notes: SAMPLES[6]!.text, recordedAt: "2026-01-01T00:00:00.000Z", path: join(dir, "outcomes.jsonl") }) + "\n");
    writeFileSync(join(dir, "events.jsonl"), JSON.stringify({ id: "e1", timestamp: "2026-01-01T00:00:00.000Z", operation: "add", change: "created", bulletId: "b-old1", layer: "global", actor: "cm", hashBefore: null, hashAfter: "0123456789abcdef", after: { content: `Deploy with ${SAMPLES[0]!.text}` } }) + "\n");
    mkdirSync(join(dir, "diary"), { recursive: true });
    writeFileSync(join(dir, "diary", "diary-0001.json"), JSON.stringify({ id: "diary-0001", sessionPath: "/s.jsonl", timestamp: "2026-01-01T00:00:00.000Z", agent: "claude", status: "success", accomplishments: [`set ${SAMPLES[13]!.text}`], decisions: [], challenges: [], preferences: [], keyLearnings: [], tags: [], searchAnchors: [] }));

    const scan = run("doctor", ["doctor", "--json"]);
    expect(scan.code, scan.stderr).toBe(0);
    const check = scan.json().data.checks.find((c: { category: string }) => c.category === "Secrets");
    expect(check.status).toBe("warn");
    expect(check.details.total).toBeGreaterThanOrEqual(5);
    expect(Object.keys(check.details.byKind).length).toBeGreaterThanOrEqual(3);
    expect(check.details.sections.map((s: { key: string }) => s.key)).toEqual(expect.arrayContaining(["global/playbook", "global/journal", "global/blocked", "global/log/outcomes", "diaries"]));
    expect(scan.json().data.fixableIssues.map((i: { id: string }) => i.id)).toContain("redact-secrets");

    // What leaves cm before the fix (AGENTS.md, an export) is redacted all the same.
    const agentsMd = join(outside, "AGENTS.md");
    expect(run("project", ["project", "--output", agentsMd, "--json"]).code).toBe(0);
    expect(readFileSync(agentsMd, "utf8")).toContain("Deploy with");
    expect(leaks(readFileSync(agentsMd, "utf8"))).toEqual([]);
    const exported = run("export", ["playbook", "export", "--yaml"]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain("Deploy with");
    expect(leaks(exported.stdout)).toEqual([]);

    const fixed = run("doctor fix", ["doctor", "--fix", "--no-interactive", "--json"]);
    expect(fixed.code, fixed.stderr).toBe(0);
    const result = fixed.json().data.fixResults.find((r: { id: string }) => r.id === "redact-secrets");
    expect(result.success, result.message).toBe(true);
    expect(result.backups.length).toBeGreaterThan(0);
    const after = fixed.json().data.checks.find((c: { category: string }) => c.category === "Secrets");
    expect(after.status).toBe("pass");
    // Backups (ours under backups/, the store's own <file>.backup.<ms>) keep the originals by design.
    const live = filesUnder(home).filter((f) => !f.includes(`${join(".cass-memory", "backups")}`) && !/\.backup\.\d+$/.test(f));
    expect(live.flatMap((f) => leaks(readFileSync(f, "latin1")).map((k) => `${f}: ${k}`))).toEqual([]);
    // The backup keeps the originals (that is its point), readable by the owner only.
    const backups = result.backups as string[];
    expect(backups.some((b) => leaks(readFileSync(b, "latin1")).length > 0)).toBe(true);
    for (const b of backups) expect(statSync(b).mode & 0o077).toBe(0);
    expect(leaks(scan.stdout + fixed.stdout + scan.stderr + fixed.stderr)).toEqual([]);
    // The rule itself is still there, its secret replaced.
    const list = run("list", ["playbook", "list", "--json"]).json().data.bullets as Array<{ id: string; content: string }>;
    expect(list.find((b) => b.id === "b-old1")?.content).toMatch(/^Deploy with .*\[[A-Z_]+\]/);
  });

  it("JSON output redacts a stored secret in every rule and field that repeats it", () => {
    expect(run("init", ["init", "--json"]).code).toBe(0);
    const dir = join(home, ".cass-memory");
    // An older cm stored the same secret in three rules (content, reasoning, a tag) and another
    // secret once; the output reuses the redaction of each repeated string.
    const secret = SAMPLES[0]!.text;
    const other = SAMPLES[5]!.text;
    const bullet = (id: string, content: string) =>
      `  - id: ${id}\n    content: ${JSON.stringify(content)}\n    category: ops\n    reasoning: ${JSON.stringify(`seen with ${secret}`)}\n    tags: [${JSON.stringify(secret)}]\n    createdAt: "2026-01-01T00:00:00.000Z"\n    updatedAt: "2026-01-01T00:00:00.000Z"\n`;
    const yaml = readFileSync(join(dir, "playbook.yaml"), "utf8").replace(/bullets:.*$/s, "bullets:\n") +
      bullet("b-rep1", `Deploy the billing service with ${secret}`) +
      bullet("b-rep2", `Deploy the billing service with ${secret}`) +
      bullet("b-rep3", `Deploy the billing worker with ${other}`);
    writeFileSync(join(dir, "playbook.yaml"), yaml);
    for (const [what, args] of [
      ["context", ["context", "deploy the billing service", "--json"]],
      ["list", ["playbook", "list", "--json"]],
    ] as const) {
      const r = run(what, [...args]);
      expect(r.code, r.stderr).toBe(0);
      expect(leaks(r.stdout)).toEqual([]);
      const bullets = (what === "context" ? r.json().data.relevantBullets : r.json().data.bullets) as Array<{ id: string; content: string; reasoning: string; tags: string[] }>;
      const shown = bullets.filter((b) => b.id.startsWith("b-rep"));
      expect(shown.map((b) => b.id).sort()).toEqual(["b-rep1", "b-rep2", "b-rep3"]);
      for (const b of shown) {
        expect(b.content).toMatch(/^Deploy the billing (service|worker) with .*\[[A-Z_]+\]/);
        expect(b.reasoning).toMatch(/^seen with .*\[[A-Z_]+\]/);
        expect(b.tags).toHaveLength(1);
        expect(b.tags[0]).toMatch(/\[[A-Z_]+\]/);
      }
    }
  });

  it("storage migrate redacts and counts; doctor scans and fixes the SQLite store too", () => {
    expect(run("init", ["init", "--json"]).code).toBe(0);
    const configPath = join(home, ".cass-memory", "config.json");
    const setSanitization = (enabled: boolean) => {
      const config = JSON.parse(readFileSync(configPath, "utf8")) as Record<string, any>;
      config.sanitization = { ...(config.sanitization ?? {}), enabled };
      writeFileSync(configPath, JSON.stringify(config, null, 2));
    };
    // With sanitization off (the user's choice), secrets are stored as given.
    setSanitization(false);
    expect(run("add yaml", ["add", `Deploy with ${SAMPLES[2]!.text}`, "--json"]).code).toBe(0);
    setSanitization(true);
    const migrated = run("migrate", ["storage", "migrate", "--to", "sqlite", "--json"]);
    expect(migrated.code, migrated.stderr).toBe(0);
    const data = migrated.json().data;
    expect(data.status).toBe("migrated");
    expect(data.secretsRedacted.total).toBeGreaterThanOrEqual(2); // the rule and its journal event
    expect(Object.keys(data.secretsRedacted.byKind)).toContain(SAMPLES[2]!.kind);
    const sqlite = filesUnder(home).filter((f) => /\.sqlite(-wal)?$/.test(f));
    expect(sqlite.length).toBeGreaterThan(0);
    expect(sqlite.flatMap((f) => leaks(readFileSync(f, "latin1")))).toEqual([]);

    // A secret stored in SQLite (sanitization off again), then found and redacted by doctor.
    setSanitization(false);
    expect(run("add sqlite", ["add", `Use ${SAMPLES[11]!.text} for payments`, "--json"]).code).toBe(0);
    setSanitization(true);
    const scan = run("doctor sqlite", ["doctor", "--json"]);
    const check = scan.json().data.checks.find((c: { category: string }) => c.category === "Secrets");
    expect(check.status).toBe("warn");
    expect(check.details.byKind[SAMPLES[11]!.kind]).toBeGreaterThanOrEqual(1);
    const fixed = run("doctor sqlite fix", ["doctor", "--fix", "--no-interactive", "--json"]);
    const result = fixed.json().data.fixResults.find((r: { id: string }) => r.id === "redact-secrets");
    expect(result.success, result.message).toBe(true);
    expect(result.backups.some((b: string) => b.endsWith(".sqlite"))).toBe(true);
    expect(fixed.json().data.checks.find((c: { category: string }) => c.category === "Secrets").status).toBe("pass");
    const rules = run("list sqlite", ["playbook", "list", "--json"]).json().data.bullets as Array<{ content: string }>;
    expect(rules.some((b) => b.content.startsWith("Use ") && b.content.endsWith(" for payments"))).toBe(true);
    expect(leaks(JSON.stringify(rules))).toEqual([]);
    const live = filesUnder(home).filter((f) => /\.sqlite(-wal)?$/.test(f) && !f.includes("backups"));
    expect(live.flatMap((f) => leaks(readFileSync(f, "latin1")).map((k) => `${f}: ${k}`))).toEqual([]);
  });

  it("playbook remove --hard purges the rule's text from the journal, keeping ids and a content hash", () => {
    expect(run("init", ["init", "--json"]).code).toBe(0);
    const text = "Ask the ops channel before touching the billing cron schedule";
    const added = run("add", ["add", text, "--json"]);
    const id = added.json().data.bullet.id as string;
    expect(run("mark", ["mark", id, "--helpful", "--json"]).code).toBe(0);
    const journal = join(home, ".cass-memory", "events.jsonl");
    expect(readFileSync(journal, "utf8")).toContain("billing cron");
    const removed = run("remove", ["playbook", "remove", id, "--hard", "--yes", "--json"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.json().data.journalPurged).toBeGreaterThanOrEqual(3);
    const events = readFileSync(journal, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(readFileSync(journal, "utf8")).not.toContain("billing cron");
    const mine = events.filter((e) => e.bulletId === id);
    expect(mine.map((e) => e.operation)).toEqual(["add", "feedback", "remove"]);
    for (const e of mine) {
      expect(e).toMatchObject({ purged: true, contentSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(e.before).toBeUndefined();
      expect(e.after).toBeUndefined();
    }
  });
});
