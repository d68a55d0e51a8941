import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { doctorOperation, type DoctorInput, type DoctorResult } from "../src/operations/doctor.js";
import { initOperation } from "../src/operations/init.js";
import {
  DEFAULT_CROSS_AGENT_AGENTS,
  privacyAllowOperation,
  privacyDenyOperation,
  privacyDisableOperation,
  privacyEnableOperation,
  privacyStatusOperation,
} from "../src/operations/privacy.js";
import { defaultConfig, type Config } from "../src/schemas/config.js";
import { createNullEpisodicSource } from "../src/episodic/null-source.js";
import { createFakeEpisodicSource, createTestDeps } from "../src/testing/fakes.js";
import { MEMORY_GLOBAL_DIR, createMemoryStore, type MemoryStore } from "../src/testing/memory-store.js";
import type { OperationDeps, RuntimeReport, Store } from "../src/ports.js";
import { expectAppError } from "./support.js";

const NOW = "2026-03-04T05:06:07.000Z";
const CONFIG_PATH = `${MEMORY_GLOBAL_DIR}/config.json`;

interface SetupOptions {
  repo?: boolean;
  init?: boolean;
  cass?: boolean;
  report?: RuntimeReport;
  config?: Config;
  sessions?: Array<{ path: string; agent: string }>;
}

async function setup(options: SetupOptions = {}) {
  const store = createMemoryStore({ repo: options.repo ?? true, now: () => NOW });
  const deps = createTestDeps(store, {
    episodic: options.cass === false ? createNullEpisodicSource() : createFakeEpisodicSource({ sessions: options.sessions ?? [] }),
    runtimeReport: options.report ?? { version: "9.9.9", llmCredentials: ["ANTHROPIC_API_KEY"], configProblems: [] },
    ...(options.config ? { config: options.config } : {}),
  });
  deps.clock.set(NOW);
  if (options.init !== false) {
    await runOperation(initOperation, deps, {});
    if (options.repo !== false) await runOperation(initOperation, deps, { repo: true });
  }
  return { store, deps };
}

const doctor = (deps: OperationDeps, input: DoctorInput = {}) => runOperation(doctorOperation, deps, input);

function check(result: DoctorResult, category: string, item: string) {
  const found = result.checks.find((c) => c.category.startsWith(category) && c.item === item);
  if (!found) throw new Error(`no ${category}/${item} in ${JSON.stringify(result.checks.map((c) => `${c.category}/${c.item}`))}`);
  return found;
}

function snapshot(store: MemoryStore) {
  return { files: [...store.backing.files.entries()].sort(), dirs: [...store.backing.dirs].sort() };
}


describe("doctor", () => {
  it("reports an initialized installation with history and an API key as healthy", async () => {
    const { deps } = await setup();
    const result = await doctor(deps);
    expect(result.checks.filter((c) => c.status !== "pass")).toEqual([]);
    expect(result).toMatchObject({ version: "9.9.9", generatedAt: NOW, overallStatus: "healthy", fixableIssues: [], recommendedActions: [] });
    expect(result.fixPlan).toBeUndefined();
    expect(result.fixResults).toBeUndefined();
    expect(result.selfTest).toBeUndefined();
    expect(check(result, "Cass Integration", "cass").message).toBe("fake available (version test)");
    expect(check(result, "LLM Configuration", "Provider").message).toBe("Provider: anthropic, model: claude-sonnet-5 (ANTHROPIC_API_KEY set)");
    expect(check(result, "Sanitization Pattern Health", "Pattern Health").message).toBe("19 built-in + 0 custom patterns; no false positives on benign samples");
    expect(check(result, "Trauma System", "Database").message).toBe("Loaded 0 trauma patterns");
    expect(doctorOperation.output.parse(result)).toEqual(result);
  });

  it("without cass is unhealthy and recommends installing it first", async () => {
    const { deps } = await setup({ cass: false, report: { llmCredentials: [] } });
    const result = await doctor(deps);
    expect(result.overallStatus).toBe("unhealthy");
    expect(result.version).toBe("unknown");
    expect(check(result, "Cass Integration", "cass")).toMatchObject({ status: "fail", message: "cass CLI not found" });
    expect(check(result, "LLM Configuration", "Provider")).toMatchObject({
      status: "warn",
      message: "LLM not configured (optional): no API key for anthropic (set ANTHROPIC_API_KEY); cm works without an LLM",
    });
    expect(result.recommendedActions).toEqual([
      { label: "Install cass (enables history)", command: "cargo install coding-agent-search", reason: "Session history search is disabled without cass.", urgency: "high" },
      { label: "Configure an LLM API key (optional)", reason: expect.stringContaining("LLM not configured"), urgency: "low" },
    ]);
  });

  it("reports a store without diagnostics instead of failing", async () => {
    const { store, deps } = await setup();
    const { diagnose: _d, applyFix: _a, ...bare } = store;
    const plain: Store = bare;
    const result = await doctor({ ...deps, store: plain }, { fix: true, dryRun: true });
    expect(check(result, "Storage", "Diagnostics")).toMatchObject({ status: "warn", message: "storage backend provides no diagnostics" });
    expect(result.overallStatus).toBe("degraded");
    expect(result.fixPlan).toEqual({ enabled: true, dryRun: true, interactive: false, force: false, wouldApply: [], wouldSkip: [] });
  });

  it("turns a store that throws while diagnosing into a failed check", async () => {
    const { store, deps } = await setup();
    const broken: Store = { ...store, diagnose: () => Promise.reject(new Error("disk on fire")) };
    const result = await doctor({ ...deps, store: broken });
    expect(check(result, "Storage", "Diagnostics")).toMatchObject({ status: "fail", message: "Storage diagnostics failed: disk on fire" });
  });

  it("--fix --dry-run plans without writing anything", async () => {
    const { store, deps } = await setup({ init: false });
    const before = snapshot(store);
    const result = await doctor(deps, { fix: true, dryRun: true });
    expect(snapshot(store)).toEqual(before);
    expect(result.fixResults).toBeUndefined();
    expect(result.fixPlan).toEqual({
      enabled: true,
      dryRun: true,
      interactive: false,
      force: false,
      wouldApply: ["missing-global-dir", "missing-config", "missing-playbook", "missing-blocked-log", "missing-diary-dir", "missing-repo-cass-dir"],
      wouldSkip: [],
    });
    expect(result.fixableIssues[0]).toMatchObject({ id: "missing-global-dir", severity: "fail", safety: "safe", howToFix: ["cm doctor --fix --no-interactive"] });
    expect(result.recommendedActions.map((a) => [a.label, a.urgency])).toEqual([
      ["Initialize global storage", "high"],
      ["Apply fixes for real", "medium"],
      ["Initialize repo-level memory (optional)", "low"],
    ]);
    expect(result.recommendedActions[1]!.command).toBe("cm doctor --fix --no-interactive");
  });

  it("--fix applies the safe fixes, then reports the state after them", async () => {
    const { store, deps } = await setup({ init: false });
    const result = await doctor(deps, { fix: true });
    expect(result.fixResults?.map((r) => [r.id, r.success])).toEqual([
      ["missing-global-dir", true],
      ["missing-config", true],
      ["missing-playbook", true],
      ["missing-blocked-log", true],
      ["missing-diary-dir", true],
      ["missing-repo-cass-dir", true],
    ]);
    expect(result.overallStatus).toBe("healthy");
    expect(result.fixableIssues).toEqual([]);
    expect(JSON.parse(store.backing.files.get(CONFIG_PATH)!)).toEqual(defaultConfig());
    // Healthy now: a second --fix has nothing to do.
    const again = await doctor(deps, { fix: true });
    expect(again.fixResults).toBeUndefined();
    expect(again.fixPlan?.wouldApply).toEqual([]);
  });

  it("skips cautious fixes without --force and applies them, with a backup, with it", async () => {
    let rechecks = 0;
    const { store, deps } = await setup({
      report: {
        llmCredentials: ["ANTHROPIC_API_KEY"],
        configProblems: ["Failed to load config from config.json"],
        recheckConfig: async () => {
          rechecks += 1;
          return [];
        },
      },
    });
    store.backing.files.set(CONFIG_PATH, "{ broken");
    const plain = await doctor(deps);
    expect(check(plain, "Configuration", "config.json").status).toBe("fail");
    expect(plain.fixableIssues).toEqual([
      expect.objectContaining({ id: "reset-config", safety: "cautious", howToFix: ["cm doctor --fix --force --no-interactive"] }),
    ]);
    expect(plain.recommendedActions[0]).toMatchObject({ label: "Repair config.json", command: "cm doctor --fix --force --no-interactive", urgency: "high" });
    expect(plain.recommendedActions.map((a) => a.label)).toContain("Apply cautious fixes (files are backed up first)");

    const noForce = await doctor(deps, { fix: true });
    expect(noForce.fixPlan?.wouldSkip).toEqual([{ id: "reset-config", reason: "requires --force" }]);
    expect(noForce.fixResults).toBeUndefined();
    expect(store.backing.files.get(CONFIG_PATH)).toBe("{ broken");
    expect(check(noForce, "Configuration", "Effective configuration").message).toBe("Failed to load config from config.json");
    expect(rechecks).toBe(0);

    const forced = await doctor(deps, { fix: true, force: true, interactive: true });
    expect(forced.fixPlan).toMatchObject({ force: true, interactive: true, wouldApply: ["reset-config"] });
    const [fixed] = forced.fixResults!;
    expect(fixed).toMatchObject({ id: "reset-config", success: true });
    expect(store.backing.files.get(fixed!.backups![0]!)).toBe("{ broken");
    expect(check(forced, "Configuration", "config.json").status).toBe("pass");
    // the configuration was reloaded after the fix: the startup problem is gone
    expect(rechecks).toBe(1);
    expect(forced.checks.some((c) => c.item === "Effective configuration")).toBe(false);
    expect(forced.overallStatus).toBe("healthy");
  });

  it("offers only a manual fix for a corrupt playbook and never rewrites it", async () => {
    const { store, deps } = await setup();
    store.corrupt("global", "{ nope");
    const result = await doctor(deps, { fix: true, force: true });
    expect(check(result, "Playbook", "Global playbook.yaml").status).toBe("fail");
    expect(result.fixPlan?.wouldSkip).toEqual([{ id: "repair-playbook-global", reason: "manual fix required" }]);
    expect(result.fixResults).toBeUndefined();
    expect(store.rawPlaybook("global")).toBe("{ nope");
    expect(result.fixableIssues[0]!.howToFix?.[0]).toMatch(/^Fix \/memory\/.cass-memory\/playbook.yaml by hand/);
    expect(result.recommendedActions[0]).toMatchObject({ label: "Repair Global playbook.yaml", urgency: "high" });
  });

  it("migrates an old playbook schema keeping its rules", async () => {
    const { store, deps } = await setup();
    const path = store.locations.repoPlaybook!;
    const old = JSON.stringify({ schema_version: 1, name: "old", metadata: { createdAt: NOW }, bullets: [{ id: "b-1", category: "c", content: "keep me", createdAt: NOW, updatedAt: NOW }] });
    store.backing.files.set(path, old);
    const result = await doctor(deps, { fix: true });
    expect(result.fixResults).toEqual([{ id: "migrate-playbook-schema-repo", success: true, message: expect.any(String), backups: [expect.stringMatching(/playbook\.yaml\.backup\.\d+$/)] }]);
    expect(store.backing.files.get(result.fixResults![0]!.backups![0]!)).toBe(old);
    const migrated = await store.readPlaybook("repo");
    expect(migrated?.schema_version).toBe(2);
    expect(migrated?.bullets.map((b) => b.content)).toEqual(["keep me"]);
  });

  it("reports configuration problems the host found", async () => {
    const { deps } = await setup({ report: { llmCredentials: ["ANTHROPIC_API_KEY"], configProblems: ["provider: Invalid option"] } });
    const result = await doctor(deps);
    expect(check(result, "Configuration", "Effective configuration")).toMatchObject({
      status: "fail",
      message: "provider: Invalid option",
    });
    expect(result.overallStatus).toBe("unhealthy");
    expect(result.recommendedActions[0]).toMatchObject({ label: "Fix the configuration", urgency: "high" });
  });

  it("describes the LLM setup honestly", async () => {
    const other = await doctor((await setup({ report: { llmCredentials: ["OPENAI_API_KEY"] } })).deps);
    expect(check(other, "LLM Configuration", "Provider")).toMatchObject({ status: "warn", message: expect.stringContaining("credentials found for: openai") });
    const off = await doctor((await setup({ report: { llmCredentials: [], llmDisabled: true } })).deps);
    expect(check(off, "LLM Configuration", "Provider")).toMatchObject({ status: "pass", message: "LLM disabled (CASS_MEMORY_LLM=none); deterministic mode" });
    const unknown = await doctor((await setup({ report: {} })).deps);
    expect(check(unknown, "LLM Configuration", "Provider").message).toMatch(/the host did not report API keys/);
    const fromConfig = await doctor((await setup({ report: { llmCredentials: [] }, config: { ...defaultConfig(), apiKey: "x".repeat(30) } })).deps);
    expect(check(fromConfig, "LLM Configuration", "Provider")).toMatchObject({ status: "pass", message: "Provider: anthropic, model: claude-sonnet-5 (config.apiKey set)" });
    expect(JSON.stringify(fromConfig)).not.toContain("x".repeat(30));
    // When the host resolves the model as reflect will, that answer wins over the key heuristics.
    const local = await doctor(
      (await setup({ report: { llmCredentials: [], llmStatus: async () => ({ available: true, provider: "openai", model: "qwen3", local: true, baseUrl: "http://127.0.0.1:8080/v1" }) } })).deps,
      { selfTest: true },
    );
    expect(check(local, "LLM Configuration", "Provider")).toMatchObject({ status: "pass", message: expect.stringContaining("local server http://127.0.0.1:8080/v1") });
    expect(local.selfTest?.find((c) => c.item === "LLM System")).toMatchObject({ status: "pass" });
    const missing = await doctor((await setup({ report: { llmCredentials: [], llmStatus: async () => ({ available: false, reason: "no API key for openai", hint: "set OPENAI_API_KEY" }) } })).deps);
    expect(check(missing, "LLM Configuration", "Provider")).toMatchObject({ status: "warn", message: expect.stringContaining("no API key for openai"), details: expect.objectContaining({ hint: "set OPENAI_API_KEY" }) });
  });

  it("flags sanitizer patterns that hit benign text, and a disabled sanitizer", async () => {
    const config = defaultConfig();
    config.sanitization.extraPatterns = ["tokeni[sz]er", "(a+)+"];
    const result = await doctor((await setup({ config })).deps);
    const health = check(result, "Sanitization Pattern Health", "Pattern Health");
    expect(health.status).toBe("warn");
    expect(health.message).toBe('1 pattern match benign text: tokeni[sz]er ("The tokenizer splits text into tokens")');
    const disabled = defaultConfig();
    disabled.sanitization.enabled = false;
    const off = await doctor((await setup({ config: disabled })).deps);
    expect(check(off, "Sanitization Pattern Health", "Pattern Health")).toMatchObject({ status: "warn", message: "Sanitization disabled; breadth checks skipped" });
  });

  it("counts trauma patterns and reports invalid lines", async () => {
    const { store, deps } = await setup();
    const entry = { id: "trauma-1", severity: "FATAL", pattern: "DROP TABLE", scope: "global", status: "active", trigger_event: { session_path: "s", timestamp: NOW }, created_at: NOW };
    await store.appendLog("global", "traumas", [entry, { ...entry, id: "trauma-2", status: "healed" }, { id: "bad" }]);
    store.appendRawLogLine("repo", "traumas", "not json\n");
    const result = await doctor(deps);
    expect(check(result, "Trauma System", "Database")).toMatchObject({ status: "warn", message: "Loaded 1 trauma pattern; 2 invalid lines skipped", details: { active: 1, healed: 1, invalid: 2 } });
  });

  it("runs the self-test with --self-test", async () => {
    const config = { ...defaultConfig(), maxContextBullets: 5 } as Config;
    const { deps } = await setup({ cass: false, report: { llmCredentials: [] }, config });
    const result = await doctor(deps, { selfTest: true });
    expect(result.selfTest?.map((c) => [c.item, c.status])).toEqual([
      ["Playbook Load", "pass"],
      ["Cass Search", "warn"],
      ["Sanitization", "pass"],
      ["Config Validation", "warn"],
      ["LLM System", "fail"],
    ]);
    expect(result.selfTest?.every((c) => c.category === "Self-Test")).toBe(true);
    expect(result.selfTest?.[1]!.message).toBe("Skipped (cass not available)");
    expect(result.selfTest?.[3]!.message).toContain("deprecated key 'maxContextBullets' is ignored");
    // the self-test does not change the overall status
    expect(result.overallStatus).toBe("unhealthy");
  });
});

describe("privacy", () => {
  it("status reports the defaults, session counts per agent, and writes nothing", async () => {
    const { store, deps } = await setup({
      init: false,
      sessions: [
        { path: "/a", agent: "codex" },
        { path: "/b", agent: "claude" },
        { path: "/c", agent: "codex" },
      ],
    });
    const before = snapshot(store);
    const status = await runOperation(privacyStatusOperation, deps, { days: 30 });
    expect(status).toEqual({
      crossAgent: { enabled: false, consentGiven: false, agents: [], auditLog: true },
      cass: { available: true, timelineDays: 30, sessionCountsByAgent: { claude: 1, codex: 2 } },
      notes: { enable: "cm privacy enable [agents...]", disable: "cm privacy disable", allow: "cm privacy allow <agent>", deny: "cm privacy deny <agent>" },
    });
    expect(snapshot(store)).toEqual(before);
    const offline = await runOperation(privacyStatusOperation, (await setup({ cass: false })).deps, {});
    expect(offline.cass).toEqual({ available: false, timelineDays: 365, sessionCountsByAgent: null });
    await expectAppError(runOperation(privacyStatusOperation, deps, { days: 0 }), "INVALID_INPUT");
  });

  it("enable records consent and the allowlist, changing only crossAgent in config.json", async () => {
    const { store, deps } = await setup({ init: false });
    store.backing.files.set(CONFIG_PATH, JSON.stringify({ model: "custom-model", unknownKey: [1, 2], crossAgent: { auditLog: false, extra: "kept" } }));
    const result = await runOperation(privacyEnableOperation, deps, { agents: ["Claude", " codex ", "claude", ""] });
    expect(result).toEqual({ crossAgent: { enabled: true, consentGiven: true, consentDate: NOW, agents: ["claude", "codex"], auditLog: false } });
    const file = JSON.parse(store.backing.files.get(CONFIG_PATH)!);
    expect(file).toEqual({
      model: "custom-model",
      unknownKey: [1, 2],
      crossAgent: { enabled: true, consentGiven: true, consentDate: NOW, agents: ["claude", "codex"], auditLog: false, extra: "kept" },
    });

    deps.clock.advance(86_400_000);
    const again = await runOperation(privacyEnableOperation, deps, { agents: ["aider"] });
    expect(again.crossAgent).toMatchObject({ consentDate: NOW, agents: ["aider"] });
  });

  it("enable without agents uses the agents seen in history, else the default list", async () => {
    const seen = await setup({ sessions: [{ path: "/x", agent: "gemini" }, { path: "/y", agent: "Cursor" }] });
    expect((await runOperation(privacyEnableOperation, seen.deps, {})).crossAgent.agents).toEqual(["cursor", "gemini"]);
    const none = await setup({ cass: false });
    expect((await runOperation(privacyEnableOperation, none.deps, {})).crossAgent.agents).toEqual([...DEFAULT_CROSS_AGENT_AGENTS]);
  });

  it("disable keeps the allowlist; allow and deny edit it", async () => {
    const { store, deps } = await setup();
    await runOperation(privacyEnableOperation, deps, { agents: ["codex"] });
    expect((await runOperation(privacyDisableOperation, deps, {})).crossAgent).toMatchObject({ enabled: false, consentGiven: true, agents: ["codex"] });
    expect((await runOperation(privacyAllowOperation, deps, { agent: "Aider" })).crossAgent.agents).toEqual(["aider", "codex"]);
    expect((await runOperation(privacyAllowOperation, deps, { agent: "aider" })).crossAgent.agents).toEqual(["aider", "codex"]);
    expect((await runOperation(privacyDenyOperation, deps, { agent: "CODEX" })).crossAgent.agents).toEqual(["aider"]);
    expect((await runOperation(privacyDenyOperation, deps, { agent: "nobody" })).crossAgent.agents).toEqual(["aider"]);
    // the rest of the config written by init is untouched
    const file = JSON.parse(store.backing.files.get(CONFIG_PATH)!);
    expect({ ...file, crossAgent: defaultConfig().crossAgent }).toEqual(defaultConfig());

    const missing = await expectAppError(runOperation(privacyAllowOperation, deps, { agent: "  " }), "MISSING_REQUIRED");
    expect(missing.message).toBe("privacy allow requires <agent>");
    expect(missing.exitCode).toBe(2);
    expect((await expectAppError(runOperation(privacyDenyOperation, deps, {}), "MISSING_REQUIRED")).message).toBe("privacy deny requires <agent>");
  });

  it("refuses to rewrite a config whose crossAgent (or whole file) is invalid", async () => {
    const { store, deps } = await setup({ init: false });
    const bad = JSON.stringify({ crossAgent: { agents: "claude" } });
    store.backing.files.set(CONFIG_PATH, bad);
    const error = await expectAppError(runOperation(privacyDisableOperation, deps, {}), "CONFIG_INVALID");
    expect(error.message).toMatch(/^crossAgent in \/memory\/.cass-memory\/config.json is invalid: agents: /);
    expect(store.backing.files.get(CONFIG_PATH)).toBe(bad);
    store.backing.files.set(CONFIG_PATH, "{ not json");
    await expectAppError(runOperation(privacyAllowOperation, deps, { agent: "x" }), "CONFIG_INVALID");
    expect(store.backing.files.get(CONFIG_PATH)).toBe("{ not json");
  });
});
