import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, gitInit, tempHome, type RunOptions } from "./helpers.js";

let home: string;
let cleanup: () => void;
let cacheDir: string;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  // The program's compile cache lives outside HOME so that "writes nothing" can be checked on HOME.
  cacheDir = mkdtempSync(join(tmpdir(), "cm-cache-"));
});
afterEach(() => {
  cleanup();
  rmSync(cacheDir, { recursive: true, force: true });
});

const opts = (extra: Partial<RunOptions> = {}): RunOptions => ({ home, ...extra, env: { XDG_CACHE_HOME: cacheDir, ...extra.env } });
const globalDir = () => join(home, ".cass-memory");
const configPath = () => join(globalDir(), "config.json");

/** Every path below `root` with its content (files) or "<dir>", for before/after comparisons. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(root)) return out;
  for (const rel of readdirSync(root, { recursive: true }).map(String).sort()) {
    const path = join(root, rel);
    out[rel] = statSync(path).isDirectory() ? "<dir>" : readFileSync(path, "utf8");
  }
  return out;
}

function repo(): string {
  const dir = join(home, "proj");
  mkdirSync(dir);
  gitInit(dir);
  return dir;
}

describe("cm doctor", () => {
  it("reports an empty installation without writing anything, and exits 0", () => {
    const before = snapshot(home);
    const r = cm(["doctor", "--json"], opts());
    expect(r.code).toBe(0);
    const { command, data } = r.json();
    expect(command).toBe("doctor");
    expect(data.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(data.overallStatus).toBe("unhealthy");
    expect(data.checks[0]).toMatchObject({ category: "Cass Integration", item: "cass", status: "fail", message: "cass CLI not found" });
    expect(data.fixableIssues.map((i: { id: string }) => i.id)).toEqual(["missing-global-dir", "missing-config", "missing-playbook", "missing-blocked-log", "missing-diary-dir"]);
    expect(data.recommendedActions[0]).toMatchObject({ label: "Install cass (enables history)", urgency: "high" });
    expect(data).not.toHaveProperty("fixPlan");
    expect(snapshot(home)).toEqual(before);
    expect(existsSync(globalDir())).toBe(false);
  });

  it("prints PASS/WARN/FAIL badges with --no-emoji", () => {
    cm(["init"], opts());
    const r = cm(["dr", "--no-emoji"], opts());
    expect(r.code).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe("System Health Check");
    expect(lines).toContain("FAIL Cass Integration: cass: cass CLI not found");
    expect(lines).toContain("PASS Configuration: config.json: Global config.json is valid JSON");
    expect(lines).toContain("WARN Repo .cass/ Structure: Availability: Not in a git repository. Repo-level memory not available.");
    expect(lines.at(-2)).toBe("System has critical issues.");
    expect(r.stdout).not.toMatch(/[✅⚠❌🏥🚀]/u);
  });

  it("--fix --dry-run plans the fixes and changes nothing", () => {
    const cwd = repo();
    mkdirSync(globalDir());
    writeFileSync(configPath(), JSON.stringify({ provider: "invalid-provider" }));
    const before = snapshot(home);
    const r = cm(["doctor", "--fix", "--dry-run", "--json"], opts({ cwd }));
    expect(r.code).toBe(0);
    const { data } = r.json();
    expect(data.fixPlan).toEqual({
      enabled: true,
      dryRun: true,
      interactive: false,
      force: false,
      // config.json was written with the default umask (0644): too open for a file that may hold an API key
      wouldApply: ["missing-playbook", "missing-blocked-log", "missing-diary-dir", "fix-file-permissions", "missing-repo-cass-dir"],
      wouldSkip: [{ id: "reset-config", reason: "requires --force" }],
    });
    expect(data).not.toHaveProperty("fixResults");
    expect(data.recommendedActions.map((a: { label: string }) => a.label)).toContain("Apply fixes for real");
    expect(snapshot(home)).toEqual(before);
  });

  it("runs on an invalid config, and --fix --force backs it up and repairs it", () => {
    const cwd = repo();
    mkdirSync(globalDir());
    const broken = JSON.stringify({ provider: "invalid-provider", model: "mine" });
    writeFileSync(configPath(), broken);
    // Other commands refuse the invalid configuration …
    const refused = cm(["playbook", "list", "--json"], opts({ cwd }));
    expect(refused.code).toBe(3);
    expect(refused.json().error.code).toBe("CONFIG_INVALID");

    // … doctor reports it (defaults in use) …
    const report = cm(["doctor", "--json"], opts({ cwd }));
    expect(report.code).toBe(0);
    const checks = report.json().data.checks as Array<{ item: string; status: string; message: string }>;
    expect(checks.find((c) => c.item === "config.json")).toMatchObject({ status: "fail" });
    expect(checks.find((c) => c.item === "Effective configuration")?.message).toMatch(/provider: .*using the default for 'provider'$/);

    // … and repairs it.
    const fixed = cm(["doctor", "--fix", "--force", "--no-interactive", "--json"], opts({ cwd }));
    expect(fixed.code).toBe(0);
    const data = fixed.json().data;
    const reset = data.fixResults.find((f: { id: string }) => f.id === "reset-config");
    expect(reset).toMatchObject({ success: true });
    expect(reset.backups).toHaveLength(1);
    expect(reset.backups[0]).toMatch(/\/\.cass-memory\/config\.json\.backup\.\d+$/);
    expect(readFileSync(reset.backups[0], "utf8")).toBe(broken);
    expect(JSON.parse(readFileSync(configPath(), "utf8")).provider).toBe("anthropic");
    expect(data.checks.some((c: { item: string }) => c.item === "Effective configuration")).toBe(false);
    expect(data.fixableIssues).toEqual([]);
    expect(readFileSync(join(cwd, ".cass", ".gitignore"), "utf8")).toContain("diary/");
    expect(cm(["playbook", "list", "--json"], opts({ cwd })).code).toBe(0);

    // Running it again changes nothing.
    const after = snapshot(home);
    const again = cm(["doctor", "--fix", "--force", "--no-interactive", "--json"], opts({ cwd }));
    expect(again.json().data.fixPlan.wouldApply).toEqual([]);
    expect(snapshot(home)).toEqual(after);
  });

  it("removes a lock left by a dead process", () => {
    cm(["init"], opts());
    const lock = join(globalDir(), "playbook.yaml.lock.d");
    mkdirSync(lock);
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    writeFileSync(join(lock, "pid"), String(dead));
    writeFileSync(join(lock, "owner"), "crashed");
    const seen = cm(["doctor", "--json"], opts()).json().data;
    expect(seen.checks.find((c: { item: string }) => c.item === "Lock debris")).toMatchObject({ status: "warn" });
    expect(seen.fixableIssues.map((i: { id: string }) => i.id)).toContain("remove-lock-debris");
    const r = cm(["doctor", "--fix", "--no-interactive"], opts());
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`remove-lock-debris: Removed ${lock}`);
    expect(existsSync(lock)).toBe(false);
  });

  it("adds the self-test with --full, and validates --format", () => {
    cm(["init"], opts());
    const full = cm(["doctor", "--full", "--format", "json"], opts()).json().data;
    expect(full.selfTest.map((c: { item: string }) => c.item)).toEqual(["Playbook Load", "Cass Search", "Sanitization", "Config Validation", "LLM System"]);
    const withKey = cm(["doctor", "--self-test", "--json"], opts({ env: { ANTHROPIC_API_KEY: "sk-test-not-real" } }));
    const data = withKey.json().data;
    expect(data.checks.find((c: { category: string }) => c.category === "LLM Configuration").message).toBe(
      "Provider: anthropic, model: claude-sonnet-5 (ANTHROPIC_API_KEY set)",
    );
    expect(withKey.stdout).not.toContain("sk-test-not-real");

    const bad = cm(["doctor", "--format", "xml", "--json"], opts());
    expect(bad.code).toBe(2);
    expect(bad.json().error).toMatchObject({ code: "INVALID_INPUT", message: "format must be one of: json, toon." });
  });
});

describe("cm privacy", () => {
  it("status writes nothing; enable/allow/deny/disable change only crossAgent", () => {
    const before = snapshot(home);
    const status = cm(["privacy", "status", "--json"], opts());
    expect(status.code).toBe(0);
    expect(status.json()).toMatchObject({
      command: "privacy:status",
      data: {
        crossAgent: { enabled: false, consentGiven: false, agents: [], auditLog: true },
        cass: { available: false, timelineDays: 365, sessionCountsByAgent: null },
        notes: { enable: "cm privacy enable [agents...]", disable: "cm privacy disable", allow: "cm privacy allow <agent>", deny: "cm privacy deny <agent>" },
      },
    });
    expect(snapshot(home)).toEqual(before);

    mkdirSync(globalDir());
    writeFileSync(configPath(), JSON.stringify({ model: "my-model", custom: { nested: true } }, null, 2));
    const enabled = cm(["privacy", "enable", "Codex", "claude", "--json"], opts());
    expect(enabled.code).toBe(0);
    expect(enabled.json().command).toBe("privacy:enable");
    const crossAgent = enabled.json().data.crossAgent;
    expect(crossAgent).toMatchObject({ enabled: true, consentGiven: true, agents: ["claude", "codex"], auditLog: true });
    expect(Date.parse(crossAgent.consentDate)).not.toBeNaN();

    expect(cm(["privacy", "allow", "Cursor", "--json"], opts()).json().data.crossAgent.agents).toEqual(["claude", "codex", "cursor"]);
    const denied = cm(["privacy", "deny", "codex"], opts());
    expect(denied.stdout.split("\n")[0]).toBe("✓ Removed agent 'codex' from allowlist");
    const disabled = cm(["privacy", "disable", "--no-emoji"], opts());
    expect(disabled.stdout).toContain("[OK] Cross-agent enrichment disabled");
    expect(disabled.stdout).toContain("Allowlist: claude, cursor");

    const file = JSON.parse(readFileSync(configPath(), "utf8"));
    expect(file).toEqual({
      model: "my-model",
      custom: { nested: true },
      crossAgent: { enabled: false, consentGiven: true, consentDate: crossAgent.consentDate, agents: ["claude", "cursor"], auditLog: true },
    });
    const human = cm(["privacy", "status"], opts());
    expect(human.stdout).toContain("Privacy Status");
    expect(human.stdout).toContain("Cross-agent enrichment: DISABLED");
  });

  it("reports usage errors with the original's codes and never rewrites a broken config", () => {
    const missing = cm(["privacy", "allow", "--json"], opts());
    expect(missing.code).toBe(2);
    expect(missing.json().error).toMatchObject({ code: "MISSING_REQUIRED", message: "privacy allow requires <agent>" });
    expect(cm(["privacy", "status", "--days", "0", "--json"], opts()).json().error.code).toBe("INVALID_INPUT");
    expect(cm(["privacy"], opts()).code).toBe(2);

    mkdirSync(globalDir());
    writeFileSync(configPath(), "{ broken");
    const refused = cm(["privacy", "enable", "claude", "--json"], opts());
    expect(refused.code).toBe(3);
    expect(refused.json().error.code).toBe("CONFIG_INVALID");
    expect(readFileSync(configPath(), "utf8")).toBe("{ broken");
  });
});
