import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "./fake-openai.js";
import { assertBuilt, cm, cmAsync, tempHome } from "./helpers.js";

const SESSIONS = fileURLToPath(new URL("../../../fixtures/cass/sessions/", import.meta.url));
const LEARNING = fileURLToPath(new URL("../../../fixtures/learning/", import.meta.url));
const HELPFUL_RULE = "b-mh2k3p9x-q7w2e1";
const HARMFUL_RULE = "b-mh2k3q1a-z9y8x7";
const SHOP_SESSION = "5f1c2a7e-9d41-4b8e-a3c2-6e0f1d2b9a11.jsonl";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

/** The fixture sessions (cass's and our learning ones) where each agent keeps them. */
function layOutSessions(root: string): void {
  cpSync(join(SESSIONS, "claude_code", "projects"), join(root, ".claude", "projects"), { recursive: true });
  cpSync(join(SESSIONS, "codex", "sessions"), join(root, ".codex", "sessions"), { recursive: true });
  cpSync(join(SESSIONS, "gemini"), join(root, ".gemini", "tmp"), { recursive: true });
  cpSync(join(LEARNING, "claude"), join(root, ".claude", "projects"), { recursive: true });
  cpSync(join(LEARNING, "codex"), join(root, ".codex", "sessions"), { recursive: true });
}

/** A global playbook holding the two rules the learning sessions give inline feedback on. */
function seedPlaybook(root: string): void {
  expect(cm(["init", "--json"], { home: root }).code).toBe(0);
  const bullet = (id: string, content: string, category: string) =>
    `  - id: ${id}\n    content: ${JSON.stringify(content)}\n    category: ${category}\n    createdAt: "2026-10-01T00:00:00.000Z"\n    updatedAt: "2026-10-01T00:00:00.000Z"\n`;
  writeFileSync(
    join(root, ".cass-memory", "playbook.yaml"),
    `schema_version: 2\nname: playbook\ndescription: test\nmetadata:\n  createdAt: "2026-10-01T00:00:00.000Z"\nbullets:\n` +
      bullet(HELPFUL_RULE, "Run database migrations inside a single transaction", "database") +
      bullet(HARMFUL_RULE, "Use fake timers to speed up React component tests", "testing"),
  );
}

function writeConfig(root: string, patch: Record<string, unknown>): void {
  const path = join(root, ".cass-memory", "config.json");
  const current = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeFileSync(path, JSON.stringify({ ...current, ...patch }, null, 2));
}

const env = (extra: Record<string, string | undefined> = {}) => ({ PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, CASS_PATH: undefined, ...extra });
const reflect = (args: string[], extra: Record<string, string | undefined> = {}) =>
  cm(["reflect", "--days", "100000", "--max-sessions", "50", "--json", ...args], { home, env: env(extra) });

function bullets(): Array<Record<string, any>> {
  const r = cm(["playbook", "list", "--all", "--json"], { home, env: env() });
  expect(r.code, r.stderr).toBe(0);
  return r.json().data.bullets;
}

describe("cm reflect without an LLM (CASS_MEMORY_LLM=none)", () => {
  it("learns from the fixture sessions once, records them as processed, and can be reverted", () => {
    layOutSessions(home);
    seedPlaybook(home);
    const first = reflect([], { CASS_MEMORY_LLM: "none" });
    expect(first.code, first.stderr).toBe(0);
    const data = first.json().data;
    expect(data.mode).toBe("deterministic");
    expect(data.errors).toEqual([]);
    expect(data.sessionsProcessed).toBeGreaterThanOrEqual(5);
    expect(data.runId).toMatch(/^run-/);

    const all = bullets();
    const learned = all.filter((b) => b.id !== HELPFUL_RULE && b.id !== HARMFUL_RULE);
    expect(learned.some((b) => /pg_isready/.test(b.content))).toBe(true);
    expect(learned.some((b) => /setTimeout/.test(b.content) && b.isNegative === true)).toBe(true);
    for (const b of learned) expect(b.sourceSessions[0]).toMatch(/\.jsonl?$/);
    expect(all.find((b) => b.id === HELPFUL_RULE)!.helpfulCount).toBe(1);
    expect(all.find((b) => b.id === HARMFUL_RULE)!.harmfulCount).toBe(1);

    // Processed log and diaries on disk, in the original's formats.
    const log = readFileSync(join(home, ".cass-memory", "reflections", "global.processed.log"), "utf8").trim().split("\n");
    expect(log[0]).toMatch(/^# JSONL format/);
    expect(log.length - 1).toBe(data.sessionsProcessed);
    const diaries = readdirSync(join(home, ".cass-memory", "diary")).filter((n) => n.endsWith(".json"));
    expect(diaries.length).toBeGreaterThanOrEqual(data.sessionsProcessed - 2);
    const diary = JSON.parse(readFileSync(join(home, ".cass-memory", "diary", diaries[0]!), "utf8"));
    expect(diary.id).toMatch(/^diary-[0-9a-f]{16}$/);

    const second = reflect([], { CASS_MEMORY_LLM: "none" });
    expect(second.code).toBe(0);
    expect(second.json().data.sessionsProcessed).toBe(0);

    // Revert the run: exactly the seeded playbook again.
    const undo = cm(["undo", "--run", data.runId, "--json"], { home, env: env() });
    expect(undo.code, undo.stderr).toBe(0);
    expect(undo.json().data.removed.length).toBe(learned.length);
    const restored = bullets();
    expect(restored.map((b) => b.id).sort()).toEqual([HELPFUL_RULE, HARMFUL_RULE]);
    for (const b of restored) expect([b.helpfulCount, b.harmfulCount]).toEqual([0, 0]);
    const again = cm(["undo", "--run", data.runId, "--json"], { home, env: env() });
    expect(again.code).toBe(2);
    expect(again.json().error.code).toBe("INVALID_INPUT");
  });

  it("--dry-run writes nothing; --session picks one file; human output names the mode", () => {
    layOutSessions(home);
    seedPlaybook(home);
    const session = join(home, ".claude", "projects", "-work-shop-api", SHOP_SESSION);
    const dry = reflect(["--session", session, "--dry-run"], { CASS_MEMORY_LLM: "none" });
    expect(dry.code, dry.stderr).toBe(0);
    const deltas = dry.json().data.deltas;
    expect(deltas.some((d: any) => d.type === "add" && /pg_isready/.test(d.bullet.content))).toBe(true);
    expect(deltas).toContainEqual(expect.objectContaining({ type: "helpful", bulletId: HELPFUL_RULE }));
    expect(existsSync(join(home, ".cass-memory", "reflections", "global.processed.log"))).toBe(false);
    expect(bullets()).toHaveLength(2);

    const human = cm(["reflect", "--session", session], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain("deterministic (no LLM)");
    expect(human.stdout).toContain("Reflection complete.");
    expect(human.stdout).toMatch(/undo --run run-/);
    // improve is the friendly alias; the session is processed already.
    const improve = cm(["improve", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(improve.json().data.sessions[0]).toMatchObject({ status: "skipped", reason: "already processed" });
  });

  it("two reflections started together never process a session twice", async () => {
    layOutSessions(home);
    seedPlaybook(home);
    const args = ["reflect", "--days", "100000", "--max-sessions", "50", "--json"];
    const [a, b] = await Promise.all([cmAsync(args, { home, env: env({ CASS_MEMORY_LLM: "none" }) }), cmAsync(args, { home, env: env({ CASS_MEMORY_LLM: "none" }) })]);
    // The second one either waits for the first (and finds nothing left) or, when the first takes
    // longer than the wait, gives up with LOCK_ACQUISITION_FAILED; it never reflects in parallel.
    const results = [a, b].flatMap((r) => {
      if (r.code !== 0) {
        expect(r.json().error.code, r.stderr).toBe("LOCK_ACQUISITION_FAILED");
        expect(r.json().error.message).toMatch(/Another reflection is already running/);
        return [];
      }
      return [r.json().data];
    });
    expect(results.length).toBeGreaterThanOrEqual(1);
    const processed = results.flatMap((d) => d.sessions.filter((s: any) => s.status === "processed").map((s: any) => s.path));
    expect(new Set(processed).size).toBe(processed.length);
    const log = readFileSync(join(home, ".cass-memory", "reflections", "global.processed.log"), "utf8").trim().split("\n").slice(1);
    const paths = log.map((l) => JSON.parse(l).sessionPath);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.length).toBe(processed.length);
    // The learned rules exist once each.
    const contents = bullets().map((x) => x.content);
    expect(new Set(contents).size).toBe(contents.length);
  });

  it("rejects bad flags with exit 2 and a hint", () => {
    seedPlaybook(home);
    const r = cm(["reflect", "--days", "0", "--json"], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe("INVALID_INPUT");
    const missing = cm(["undo", "--json"], { home, env: env() });
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("MISSING_REQUIRED");
  });

  it("diary writes one entry per session and lists them", () => {
    layOutSessions(home);
    seedPlaybook(home);
    const session = join(home, ".codex", "sessions", "2026", "11", "20");
    const file = join(session, readdirSync(session)[0]!);
    const r = cm(["diary", file, "--json"], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(r.code, r.stderr).toBe(0);
    const entry = r.json().data.entry;
    expect(entry.sessionPath).toBe(file);
    // A failing test run, then 20 passing runs and "Perfect, ship it.": the end decides.
    expect(entry.status).toBe("success");
    // No placeholder text: key learnings are the lessons the session states.
    expect(entry.keyLearnings.some((k: string) => /^Session:/.test(k))).toBe(false);
    expect(entry.keyLearnings).toEqual(expect.arrayContaining([expect.stringMatching(/^Never use fixed setTimeout sleeps/)]));
    expect(existsSync(r.json().data.path)).toBe(true);
    const list = cm(["diary", "--list", "--json"], { home, env: env() });
    expect(list.json().data.entries.map((e: any) => e.id)).toEqual([entry.id]);
    const missing = cm(["diary", join(home, "nope.jsonl"), "--json"], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(missing.code).toBe(2);
    expect(missing.json().error.code).toBe("SESSION_NOT_FOUND");
  });

  it("audit needs an LLM and says how to get one", () => {
    seedPlaybook(home);
    const r = cm(["audit", "--json"], { home, env: env({ CASS_MEMORY_LLM: "none" }) });
    expect(r.code).toBe(7);
    expect(r.json().error.code).toBe("MISSING_API_KEY");
    expect(r.json().error.hint).toMatch(/OPENAI_API_KEY|baseUrl/);
  });
});

// ------------------------------------------------------------------------------------------------
// The LLM path, against a fake OpenAI-compatible server on 127.0.0.1.

const DIARY_REPLY = {
  status: "success",
  accomplishments: ["Fixed the flaky OrdersList test by awaiting findAllByRole"],
  decisions: ["Dropped fake timers because they stall msw handlers"],
  challenges: ["Rows render only after the mocked fetch resolves"],
  preferences: [],
  keyLearnings: ["findBy queries wait for async rendering"],
  tags: ["react", "testing"],
};

const LLM_RULE = "In React Testing Library, await findAllByRole for rows that render after a mocked fetch";
const REFINED_RULE = "In React Testing Library tests, await findAllByRole('row') for table rows rendered after an msw-mocked fetch";

function reflectorReply(extra: unknown[] = []) {
  return {
    deltas: [
      { type: "add", bullet: { content: LLM_RULE, category: "testing", kind: null, type: null, isNegative: null, scope: null, workspace: null, searchPointer: null, tags: ["react"] }, reason: "flaky test fixed this way", sourceSession: null },
      { type: "harmful", bulletId: HARMFUL_RULE, sourceSession: null, reason: "caused_bug", context: "fake timers stall msw" },
      ...extra,
    ],
  };
}

/** A one-message Claude Code session from yesterday in project `project`. */
function writeHistory(root: string, project: string, id: string, text: string): void {
  const dir = join(root, ".claude", "projects", project);
  mkdirSync(dir, { recursive: true });
  const at = new Date(Date.now() - 86_400_000).toISOString();
  const line = (role: string, content: string) => JSON.stringify({ type: role, cwd: "/work/web-old", sessionId: id, message: { role, content }, timestamp: at });
  writeFileSync(join(dir, `${id}.jsonl`), [line("user", "Why is the React table test flaky?"), line("assistant", text)].join("\n") + "\n");
}

async function llmHome(fake: FakeOpenAI, config: Record<string, unknown> = {}): Promise<string> {
  layOutSessions(home);
  seedPlaybook(home);
  writeConfig(home, { provider: "openai", model: "test-model", baseUrl: fake.url, ...config });
  const dir = join(home, ".codex", "sessions", "2026", "11", "20");
  return join(dir, readdirSync(dir)[0]!);
}

describe("cm reflect with an LLM (fake OpenAI-compatible server)", () => {
  let fake: FakeOpenAI;
  afterEach(async () => fake?.close());

  it("produces the diary, deltas, verdicts and curated bullets the scripted model implies", async () => {
    fake = await startFakeOpenAI({
      diary: [{ json: DIARY_REPLY }],
      // A malformed reply first: the client must retry and use the second.
      reflector: [{ text: "Sure! Here are some ideas: use findBy." }, { json: reflectorReply() }, { json: { deltas: [] } }],
      validator: [{ json: { verdict: "REFINE", confidence: 0.8, reason: "more precise", supporting: ["s1"], contradicting: [], suggestedRefinement: REFINED_RULE } }],
    });
    const session = await llmHome(fake);
    // Earlier sessions about the same thing, one that went well and one that did not: ambiguous
    // evidence, so the gate asks the validator, whose refinement becomes the rule.
    writeHistory(home, "-work-web-old", "a1", "The rows test now awaits findAllByRole after the mocked fetch and I fixed the flaky React table test.");
    writeHistory(home, "-work-web-old", "a2", "error: findAllByRole timed out waiting for rows after the mocked fetch in the React table test.");
    const r = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "native" }) });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(data.mode).toBe("llm");
    expect(data.model).toEqual({ provider: "openai", model: "test-model" });
    expect(data.errors).toEqual([]);
    expect(data.fallbacks).toEqual([]);
    expect(fake.requests.filter((q) => q.component === "reflector").length).toBeGreaterThanOrEqual(2);
    for (const q of fake.requests) expect(q.body.model).toBe("test-model");

    const diary = JSON.parse(readFileSync(join(home, ".cass-memory", "diary", `${data.sessions[0].diaryId}.json`), "utf8"));
    expect(diary.accomplishments).toEqual(DIARY_REPLY.accomplishments);
    expect(diary.sessionPath).toBe(session);

    expect(data.validation).toEqual([expect.objectContaining({ content: LLM_RULE, valid: true, verdict: "REFINE" })]);
    expect(fake.requests.filter((q) => q.component === "validator")).toHaveLength(1);
    const all = bullets();
    const added = all.find((b) => b.id !== HELPFUL_RULE && b.id !== HARMFUL_RULE);
    expect(added?.content).toBe(REFINED_RULE);
    expect(added?.sourceSessions).toEqual([session]);
    expect(all.find((b) => b.id === HARMFUL_RULE)!.harmfulCount).toBe(1);
    // Token usage is recorded (a local server costs nothing).
    const month = readdirSync(join(home, ".cass-memory", "cost")).find((n) => n.startsWith("monthly-"));
    expect(month).toBeDefined();
    const entries = readFileSync(join(home, ".cass-memory", "cost", month!), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(entries.length).toBe(fake.requests.length);
    expect(entries[0]).toMatchObject({ model: "test-model", tokensIn: 1200, tokensOut: 300 });
  });

  it("secrets caught by the sanitiser never reach the model: every request body is checked", async () => {
    // Assembled from pieces so that secret scanners do not flag this file.
    const aws = ["AK", "IA", "R7T2M9QX4WZ8LP3N"].join("");
    const github = ["gh", "p_", "k3J9vQ2LmX8rT5wY1zN4bC7dF0gH6sA2eR9u"].join("");
    const dbPassword = "Zx8qLr2vT9mW";
    const urlPassword = "S3cr3tPw0rd";
    const internal = "ACME-INTERNAL-493817";
    const secrets = [aws, github, dbPassword, urlPassword, internal];
    const rule = "Load the deploy credentials from the vault instead of pasting them into the deploy script";
    fake = await startFakeOpenAI({
      diary: [{ json: { ...DIARY_REPLY, accomplishments: ["Moved the deploy credentials to the vault"] } }],
      reflector: [
        { json: { deltas: [{ type: "add", bullet: { content: rule, category: "security", kind: null, type: null, isNegative: null, scope: null, workspace: null, searchPointer: null, tags: null }, reason: "stated", sourceSession: null }] } },
        { json: { deltas: [] } },
      ],
      validator: [{ json: { verdict: "ACCEPT", confidence: 0.7, reason: "fine", supporting: [], contradicting: [], suggestedRefinement: null } }],
    });
    layOutSessions(home);
    seedPlaybook(home);
    writeConfig(home, { provider: "openai", model: "test-model", baseUrl: fake.url, sanitization: { enabled: true, extraPatterns: ["ACME-INTERNAL-[0-9]{6}"] } });
    // The session: secrets in the user's words, the assistant's words and a tool result.
    const dir = join(home, ".claude", "projects", "-work-deploy");
    mkdirSync(dir, { recursive: true });
    const at = new Date(Date.now() - 3_600_000).toISOString();
    const line = (role: string, content: unknown) => JSON.stringify({ type: role, cwd: "/work/deploy", sessionId: "sec-1", message: { role, content }, timestamp: at });
    const session = join(dir, "sec-1.jsonl");
    writeFileSync(
      session,
      [
        line("user", `The deploy script fails. It has AWS_ACCESS_KEY_ID=${aws} and GITHUB_TOKEN=${github} pasted in, ticket ${internal}.`),
        line("assistant", [{ type: "text", text: `I see DB_PASSWORD="${dbPassword}" in deploy.sh too. I'll load the deploy credentials from the vault instead.` }, { type: "tool_use", id: "t1", name: "Bash", input: { command: "cat deploy.sh" } }]),
        line("user", [{ type: "tool_result", tool_use_id: "t1", content: `export DATABASE_URL=postgres://app:${urlPassword}@db:5432/app\nexport GITHUB_TOKEN=${github}` }]),
        line("assistant", "Done: the deploy script now loads the deploy credentials from the vault, and the deploy passes."),
      ].join("\n") + "\n",
    );
    // History about the same thing (one success, one failure) so the validator is asked, with snippets holding secrets.
    writeHistory(home, "-work-deploy-old", "h1", `I fixed the deploy by loading the deploy credentials from the vault; the old script had ${github} in it.`);
    writeHistory(home, "-work-deploy-old", "h2", `error: the deploy credentials in the script (${aws}) were rejected and the deploy from the vault failed with ${internal}.`);

    const r = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "native" }) });
    expect(r.code, r.stderr).toBe(0);
    const components = new Set(fake.requests.map((q) => q.component));
    expect(components).toEqual(new Set(["diary", "reflector", "validator"]));
    for (const request of fake.requests) {
      const body = JSON.stringify(request.body);
      for (const secret of secrets) expect(body.includes(secret), `${request.component} request contains a secret`).toBe(false);
    }
    // The secret-bearing text itself was sent, redacted.
    const diaryBody = JSON.stringify(fake.requests.find((q) => q.component === "diary")!.body);
    expect(diaryBody).toContain("[AWS_ACCESS_KEY]");
    expect(diaryBody).toContain("[GITHUB_PAT]");
    expect(diaryBody).toContain("[CREDENTIAL_REDACTED]");
    expect(diaryBody).toContain("[REDACTED]");
    const validatorBody = JSON.stringify(fake.requests.find((q) => q.component === "validator")!.body);
    expect(validatorBody).toContain("[GITHUB_PAT]");
    // Nor does anything stored hold them.
    const stored = [readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8"), ...readdirSync(join(home, ".cass-memory", "diary")).map((n) => readFileSync(join(home, ".cass-memory", "diary", n), "utf8"))].join("\n");
    for (const secret of secrets) expect(stored.includes(secret)).toBe(false);
  });

  it("llmFallback none with no usable model fails the run instead of quietly going deterministic", async () => {
    layOutSessions(home);
    seedPlaybook(home);
    writeConfig(home, { provider: "openai", model: "test-model", llmFallback: "none" });
    const dir = join(home, ".codex", "sessions", "2026", "11", "20");
    const session = join(dir, readdirSync(dir)[0]!);
    const before = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    const r = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "none", OPENAI_API_KEY: undefined }) });
    expect(r.code, r.stderr).toBe(7);
    expect(r.json().error.code).toBe("MISSING_API_KEY");
    expect(r.json().error.message).toMatch(/llmFallback is "none"/);
    expect(readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8")).toBe(before);
    expect(existsSync(join(home, ".cass-memory", "reflections", "global.processed.log"))).toBe(false);
    // Allowed to fall back (the default): the deterministic path runs and says so.
    writeConfig(home, { llmFallback: "deterministic" });
    const ok = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "none", OPENAI_API_KEY: undefined }) });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.json().data.mode).toBe("deterministic");
  });

  it("a model that keeps replying garbage is retried, then reported; the playbook is untouched", async () => {
    fake = await startFakeOpenAI({ diary: [{ json: DIARY_REPLY }], reflector: [{ text: "{ not json" }] });
    const session = await llmHome(fake, { llmFallback: "none" });
    const before = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    const r = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "none" }) });
    // llmFallback "none": the failed reflector fails the command (LLM exit code, error envelope).
    expect(r.code, r.stderr).toBe(7);
    const error = r.json().error;
    expect(error.message).toMatch(/malformed/i);
    expect(error.message).toMatch(/llmFallback is "none"/);
    expect(error.details).toMatchObject({ component: "reflector", llmFallback: "none" });
    expect(fake.requests.filter((q) => q.component === "reflector").length).toBe(3);
    // Nothing half-written: no diary either.
    expect(existsSync(join(home, ".cass-memory", "diary")) ? readdirSync(join(home, ".cass-memory", "diary")) : []).toEqual([]);
    expect(readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8")).toBe(before);
    expect(existsSync(join(home, ".cass-memory", "reflections", "global.processed.log"))).toBe(false);
  });

  it("a $0 daily budget blocks every LLM call; the deterministic path still runs when allowed", async () => {
    fake = await startFakeOpenAI({ diary: [{ json: DIARY_REPLY }], reflector: [{ json: reflectorReply() }] });
    const session = await llmHome(fake, { budget: { dailyLimit: 0, monthlyLimit: 20, warningThreshold: 80, currency: "USD" } });
    const r = await cmAsync(["reflect", "--session", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "none" }) });
    expect(r.code, r.stderr).toBe(0);
    const data = r.json().data;
    expect(fake.requests).toEqual([]);
    // Every stage that switched is listed (the diary writer failed; the reflector was then not tried),
    // and since no LLM call answered, the run was deterministic.
    expect(data.fallbacks.map((f: any) => f.component)).toEqual(["diaryWriter", "reflector"]);
    expect(data.fallbacks.every((f: any) => f.code === "LLM_BUDGET_EXCEEDED")).toBe(true);
    expect(data.mode).toBe("deterministic");
    expect(data.sessionsProcessed).toBe(1);
    expect(bullets().some((b) => /setTimeout/.test(b.content))).toBe(true);

    writeConfig(home, { llmFallback: "none" });
    const strict = await cmAsync(["diary", session, "--json"], { home, env: env({ CASS_MEMORY_EPISODIC: "none" }) });
    expect(strict.code).toBe(7);
    expect(strict.json().error.code).toBe("LLM_BUDGET_EXCEEDED");
    expect(strict.json().error.message).toMatch(/Daily budget exceeded/);
    expect(strict.json().error.message).toMatch(/llmFallback is "none", so nothing was written/);
    expect(readdirSync(join(home, ".cass-memory", "diary")).length).toBe(1); // only the earlier deterministic run's
    expect(fake.requests).toEqual([]);
  });
});
