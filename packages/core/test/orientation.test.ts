import { describe, expect, it } from "vitest";
import { runOperation } from "../src/operation.js";
import { initOperation } from "../src/operations/init.js";
import { operations } from "../src/operations/index.js";
import { parseProjectFormat, projectOperation } from "../src/operations/project.js";
import { quickstartOperation } from "../src/operations/quickstart.js";
import { playbookBootstrapOperation, startersOperation } from "../src/operations/starters.js";
import { BUILTIN_STARTERS } from "../src/starters/builtin.js";
import { parseStarterFile, starterBulletId } from "../src/starters/starter.js";
import { isAntiPattern, type Bullet } from "../src/schemas/playbook.js";
import { createTestBullet, createTestDeps } from "../src/testing/fakes.js";
import { MEMORY_GLOBAL_DIR, createMemoryStore, type MemoryStore } from "../src/testing/memory-store.js";
import { expectAppError } from "./support.js";

const NOW = "2026-03-01T12:00:00.000Z";

function setup(options: { repo?: boolean } = {}) {
  const store = createMemoryStore({ repo: options.repo ?? false, now: () => NOW });
  const deps = createTestDeps(store);
  deps.clock.set(NOW);
  return { store, deps };
}


function helpful(n: number, at = "2026-02-28T00:00:00.000Z") {
  return Array.from({ length: n }, () => ({ type: "helpful" as const, timestamp: at }));
}

async function seed(store: MemoryStore, bullets: Bullet[], layer: "global" | "repo" = "global") {
  await store.mutatePlaybook(layer, (pb) => void pb.bullets.push(...bullets));
}

function writeStarterFile(store: MemoryStore, relative: string, data: unknown) {
  store.backing.files.set(`${MEMORY_GLOBAL_DIR}/starters/${relative}`, typeof data === "string" ? data : JSON.stringify(data));
}

// --------------------------------------------------------------------------------------- project

describe("project", () => {
  async function projectFixture() {
    const { store, deps } = setup();
    await seed(store, [
      createTestBullet({ id: "b-low", category: "testing", content: "Run the unit tests", feedbackEvents: [] }),
      createTestBullet({ id: "b-high", category: "testing", content: "Run pytest with -x", maturity: "established", helpfulCount: 4, feedbackEvents: helpful(4) }),
      createTestBullet({ id: "b-git", category: "git", content: "Rebase before merging\nalways", maturity: "proven", helpfulCount: 12, feedbackEvents: helpful(12) }),
      createTestBullet({ id: "b-old", category: "git", content: "Deprecated advice", deprecated: true, maturity: "deprecated", state: "retired" }),
      createTestBullet({ id: "b-expired", category: "git", content: "Use the 2025 release branch", validTo: "2026-01-31T00:00:00.000Z" }),
      createTestBullet({ id: "b-future", category: "git", content: "Use the 2027 release branch", validFrom: "2027-01-01T00:00:00.000Z" }),
      createTestBullet({
        id: "b-anti",
        category: "testing",
        content: "AVOID: Skipping flaky tests. Marked harmful 2 times",
        isNegative: true,
        kind: "anti_pattern",
        type: "anti-pattern",
      }),
    ]);
    return { store, deps };
  }

  it("renders AGENTS.md: summary, categories sorted, rules by score, anti-patterns, expired and deprecated left out", async () => {
    const { deps } = await projectFixture();
    const result = await runOperation(projectOperation, deps, {});
    if (!("content" in result)) throw new Error("expected content");
    expect(result.format).toBe("agents.md");
    const md = result.content;
    expect(md.startsWith("# AGENTS.md\n\n> Auto-generated playbook for AI coding assistants.\n> Last updated: 2026-03-01\n")).toBe(true);
    expect(md).toContain("## Summary");
    expect(md).toContain("- Total rules: 4 (3 rules, 1 anti-pattern)");
    expect(md).toContain("- Maturity: 1 proven, 1 established, 2 candidate");
    // Categories in alphabetical order, best score first inside a category.
    expect(md.indexOf("### git")).toBeLessThan(md.indexOf("### testing"));
    expect(md.indexOf("Run pytest with -x")).toBeLessThan(md.indexOf("Run the unit tests"));
    expect(md).toMatch(/- ★ Rebase before merging always \[12\+\/0-\] _\(score: \d+\.\d\)_/);
    expect(md).toMatch(/- ✓ Run pytest with -x \[4\+\/0-\] _\(score: \d+\.\d\)_/);
    expect(md).toContain("- Run the unit tests _(score: 0.0)_");
    expect(md).toContain("## Anti-Patterns (AVOID)");
    expect(md).toContain("- **testing**: Skipping flaky tests. Marked harmful 2 times");
    expect(md).not.toContain("Deprecated advice");
    expect(md).not.toContain("2025 release branch");
    expect(md).not.toContain("2027 release branch");
    // The anti-pattern is not listed among the rules.
    expect(md.slice(0, md.indexOf("## Anti-Patterns"))).not.toContain("Skipping flaky tests");
  });

  it("limits rules per category and hides counts on request", async () => {
    const { deps } = await projectFixture();
    const result = await runOperation(projectOperation, deps, { format: "AGENTS", perCategory: 1, showCounts: false });
    if (!("content" in result)) throw new Error("expected content");
    expect(result.content).toContain("Run pytest with -x");
    expect(result.content).not.toContain("Run the unit tests");
    expect(result.content).not.toContain("[4+/0-]");
  });

  it("renders a CLAUDE.md <project_rules> block with DO NOT lines", async () => {
    const { deps } = await projectFixture();
    const result = await runOperation(projectOperation, deps, { format: "claude" });
    if (!("content" in result)) throw new Error("expected content");
    expect(result.format).toBe("claude.md");
    const md = result.content;
    expect(md.startsWith("<project_rules>\n")).toBe(true);
    expect(md.trimEnd().endsWith("</project_rules>")).toBe(true);
    expect(md).toContain("## git\n\n- Rebase before merging always [12+/0-]");
    expect(md).toContain("## IMPORTANT: Avoid These Patterns\n\n- DO NOT: Skipping flaky tests. Marked harmful 2 times");
    expect(md).not.toContain("DO NOT: AVOID:");
    expect(md).not.toContain("Deprecated advice");
  });

  it("raw and json are the full merged playbook as 2-space JSON; yaml returns the document", async () => {
    const { deps } = await projectFixture();
    for (const format of ["raw", "json"] as const) {
      const result = await runOperation(projectOperation, deps, { format });
      if (!("content" in result)) throw new Error("expected content");
      const parsed = JSON.parse(result.content);
      expect(parsed.bullets.map((b: Bullet) => b.id)).toContain("b-old");
      expect(result.content).toContain('\n  "bullets": [');
    }
    const yaml = await runOperation(projectOperation, deps, { format: "yaml" });
    expect(yaml.format).toBe("yaml");
    if (!("document" in yaml)) throw new Error("expected document");
    expect(yaml.document.bullets).toHaveLength(7);
  });

  it("says so when there are no rules", async () => {
    const { deps } = setup();
    const result = await runOperation(projectOperation, deps, {});
    if (!("content" in result)) throw new Error("expected content");
    expect(result.content).toContain("_No rules yet.");
    expect(result.content).not.toContain("## Anti-Patterns");
  });

  it("rejects an unknown format and a bad per-category with INVALID_INPUT", async () => {
    const { deps } = setup();
    const bad = await expectAppError(runOperation(projectOperation, deps, { format: "html" }), "INVALID_INPUT");
    expect(bad.message).toBe("format must be one of: agents.md, agents, claude.md, claude, raw, json, yaml.");
    expect(bad.exitCode).toBe(2);
    const zero = await expectAppError(runOperation(projectOperation, deps, { perCategory: 0 }), "INVALID_INPUT");
    expect(zero.message).toContain("per-category");
    expect(parseProjectFormat(" Claude.MD ")).toBe("claude.md");
  });
});

// ------------------------------------------------------------------------------------ quickstart

describe("quickstart", () => {
  it("returns the protocol with the program name in every command", async () => {
    const { store } = setup();
    const deps = createTestDeps(store, { cliName: "cass-memory" });
    const data = await runOperation(quickstartOperation, deps, {});
    expect(data.oneCommand).toBe('cass-memory context "<task>" --json');
    expect(data.whatItReturns).toHaveLength(4);
    for (const key of ["relevantBullets", "antiPatterns", "historySnippets", "suggestedCassQueries"]) {
      expect(data.whatItReturns.some((line) => line.startsWith(key))).toBe(true);
    }
    expect(data.inlineFeedbackFormat).toEqual({
      helpful: "// [cass: helpful <id>] - reason",
      harmful: "// [cass: harmful <id>] - reason",
    });
    expect(Object.keys(data.protocol)).toEqual(["start", "work", "feedback", "end"]);
    expect(data.examples).toHaveLength(3);
    for (const example of data.examples) expect(example).toMatch(/^cass-memory context ".+" --json$/);
    expect(JSON.stringify(data)).not.toMatch(/(^|[^-])\bcm (context|mark|remember)/);
  });
});

// -------------------------------------------------------------------------------------- starters

describe("built-in starters", () => {
  it("has the seven starters, each with 6–12 concrete rules, some anti-patterns and unique stable ids", () => {
    expect(BUILTIN_STARTERS.map((s) => s.name)).toEqual(["general", "go", "node", "python", "react", "rust", "typescript"]);
    const ids = new Set<string>();
    for (const starter of BUILTIN_STARTERS) {
      expect(starter.bullets.length).toBeGreaterThanOrEqual(6);
      expect(starter.bullets.length).toBeLessThanOrEqual(12);
      expect(starter.description.length).toBeGreaterThan(20);
      const anti = starter.bullets.filter((b) => b.isNegative);
      expect(anti.length).toBeGreaterThanOrEqual(2);
      for (const b of starter.bullets) {
        expect(b.id).toMatch(new RegExp(`^starter-${starter.name}-[a-z0-9-]+$`));
        expect(ids.has(b.id!)).toBe(false);
        ids.add(b.id!);
        expect(b.content.startsWith("AVOID:")).toBe(b.isNegative === true);
        // Each parses as a custom starter document would.
      }
      expect("starter" in parseStarterFile(`/x/${starter.name}.json`, starter)).toBe(true);
    }
  });
});

describe("starters", () => {
  it("lists built-ins and valid custom files sorted by name; invalid files are ignored with a warning", async () => {
    const { store, deps } = setup();
    writeStarterFile(store, "team.json", { description: "Team rules", bullets: [{ content: "Use conventional commits", category: "git" }] });
    writeStarterFile(store, "custom/python.json", { name: "python", description: "Our Python", bullets: [{ content: "Use uv" }] });
    writeStarterFile(store, "broken.json", "{ not json");
    writeStarterFile(store, "nobullets.json", { name: "empty" });
    const { starters } = await runOperation(startersOperation, deps, {});
    expect(starters.map((s) => `${s.name}:${s.source}`)).toEqual([
      "general:builtin",
      "go:builtin",
      "node:builtin",
      "python:custom",
      "python:builtin",
      "react:builtin",
      "rust:builtin",
      "team:custom",
      "typescript:builtin",
    ]);
    const team = starters.find((s) => s.name === "team")!;
    expect(team).toEqual({ name: "team", description: "Team rules", bulletCount: 1, source: "custom", path: `${MEMORY_GLOBAL_DIR}/starters/team.json` });
    expect(starters.find((s) => s.name === "python" && s.source === "builtin")!.shadowed).toBe(true);
    const warnings = deps.logger.lines.filter((l) => l.level === "warn").map((l) => l.message);
    expect(warnings.some((w) => w.includes("broken.json"))).toBe(true);
    expect(warnings.some((w) => w.includes("nobullets.json"))).toBe(true);
  });

  it("bootstrap adds the missing rules, skips id and content collisions, and journals the change", async () => {
    const { store, deps } = setup();
    const ts = BUILTIN_STARTERS.find((s) => s.name === "typescript")!;
    await seed(store, [
      createTestBullet({ id: ts.bullets[0]!.id!, content: "my own wording", category: "config" }),
      createTestBullet({ id: "b-mine", content: ts.bullets[1]!.content.toUpperCase(), category: "tooling" }),
    ]);
    const result = await runOperation(playbookBootstrapOperation, deps, { starter: "TypeScript" });
    expect(result).toMatchObject({ name: "typescript", source: "builtin", target: "global", dryRun: false, added: ts.bullets.length - 2, skipped: 2 });
    expect(result.skippedBullets.map((s) => s.reason)).toEqual(["id_exists", "duplicate_content"]);
    const playbook = (await store.readPlaybook("global"))!;
    expect(playbook.bullets).toHaveLength(ts.bullets.length);
    const added = playbook.bullets.find((b) => b.id === ts.bullets[2]!.id)!;
    expect(added).toMatchObject({ source: "community", maturity: "candidate", category: ts.bullets[2]!.category, tags: ["typescript"], sourceAgents: [] });
    const anti = playbook.bullets.find((b) => b.id === "starter-typescript-any-and-casts")!;
    expect(isAntiPattern(anti)).toBe(true);
    expect(anti).toMatchObject({ type: "anti-pattern", isNegative: true, kind: "anti_pattern" });
    // The existing rule with the same id was left as it was.
    expect(playbook.bullets.find((b) => b.id === ts.bullets[0]!.id)!.content).toBe("my own wording");

    const journal = await store.readJournal("global");
    const bootstrap = journal.filter((e) => e.operation === "bootstrap");
    expect(bootstrap).toHaveLength(ts.bullets.length - 2);
    expect(bootstrap.every((e) => e.source === "starter:typescript" && e.change === "created")).toBe(true);

    // Applying again adds nothing.
    const again = await runOperation(playbookBootstrapOperation, deps, { starter: "typescript" });
    expect(again.added).toBe(0);
    expect(again.skipped).toBe(ts.bullets.length);
  });

  it("bootstrap --dry-run reports without writing; forgotten (blocked) rules are not re-added", async () => {
    const { store, deps } = setup();
    const go = BUILTIN_STARTERS.find((s) => s.name === "go")!;
    await store.appendBlocked("global", [{ id: "b-gone", content: go.bullets[3]!.content, reason: "forgotten" }]);
    const dry = await runOperation(playbookBootstrapOperation, deps, { starter: "go", dryRun: true });
    expect(dry.dryRun).toBe(true);
    expect(dry.added).toBe(go.bullets.length - 1);
    expect(dry.skippedBullets).toEqual([{ id: go.bullets[3]!.id, content: go.bullets[3]!.content, reason: "blocked" }]);
    expect(store.rawPlaybook("global")).toBeNull();
    expect(await store.readJournal("global")).toEqual([]);
  });

  it("bootstrap into the repo layer, and its errors", async () => {
    const { store, deps } = setup({ repo: true });
    const result = await runOperation(playbookBootstrapOperation, deps, { starter: "react", repo: true });
    expect(result.target).toBe("repo");
    expect(result.targetPath).toBe(store.locations.repoPlaybook);
    expect((await store.readPlaybook("repo"))!.bullets.length).toBe(result.added);
    expect(await store.readPlaybook("global")).toBeNull();

    const unknown = await expectAppError(runOperation(playbookBootstrapOperation, deps, { starter: "cobol" }), "VALIDATION_FAILED");
    expect(unknown.message).toBe('Starter "cobol" not found. Run "cm starters" to list available names.');
    expect(unknown.details).toEqual({ starter: "cobol" });
    expect(unknown.hint).toContain("general, go, node, python, react, rust, typescript");
    await expectAppError(runOperation(playbookBootstrapOperation, deps, { starter: "  " }), "MISSING_REQUIRED");
    const noRepo = setup();
    await expectAppError(runOperation(playbookBootstrapOperation, noRepo.deps, { starter: "go", repo: true }), "CONFIG_INVALID");
  });

  it("a custom starter shadows the built-in; rules without ids get stable derived ids", async () => {
    const { store, deps } = setup();
    writeStarterFile(store, "python.json", {
      name: "python",
      description: "house style",
      bullets: [
        { content: "Use uv for every environment", category: "environment" },
        { content: "AVOID: pip install into the system interpreter", is_negative: true },
      ],
    });
    const result = await runOperation(playbookBootstrapOperation, deps, { starter: "python" });
    expect(result.source).toBe("custom");
    expect(result.added).toBe(2);
    const id = starterBulletId("python", { content: "Use uv for every environment" });
    expect(id).toMatch(/^starter-python-use-uv-for-every-environment-[0-9a-f]{6}$/);
    expect(result.addedBullets.map((b) => b.id)).toContain(id);
    const playbook = (await store.readPlaybook("global"))!;
    const anti = playbook.bullets.find((b) => b.content.startsWith("AVOID"))!;
    expect(anti).toMatchObject({ isNegative: true, kind: "anti_pattern", category: "general" });
  });
});

// ------------------------------------------------------------------------------------ init --starter

describe("init --starter", () => {
  it("seeds a fresh global playbook and reports {added, skipped, name}", async () => {
    const { store, deps } = setup();
    const result = await runOperation(initOperation, deps, { starter: "general" });
    const general = BUILTIN_STARTERS.find((s) => s.name === "general")!;
    expect(result.starter).toEqual({ added: general.bullets.length, skipped: 0, name: "general" });
    expect(result.created).toContain("playbook.yaml");
    expect((await store.readPlaybook("global"))!.bullets).toHaveLength(general.bullets.length);
  });

  it("is allowed on an initialised home and only adds what is missing", async () => {
    const { store, deps } = setup();
    await runOperation(initOperation, deps, {});
    await expectAppError(runOperation(initOperation, deps, {}), "ALREADY_EXISTS");
    const first = await runOperation(initOperation, deps, { starter: "node" });
    expect(first.starter!.added).toBeGreaterThan(0);
    expect(first.created).toEqual([]);
    const second = await runOperation(initOperation, deps, { starter: "node" });
    expect(second.starter).toEqual({ added: 0, skipped: first.starter!.added, name: "node" });
    expect((await store.readPlaybook("global"))!.bullets).toHaveLength(first.starter!.added);
  });

  it("an unknown starter is VALIDATION_FAILED and creates nothing", async () => {
    const { store, deps } = setup();
    const error = await expectAppError(runOperation(initOperation, deps, { starter: "nope" }), "VALIDATION_FAILED");
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe('Starter "nope" not found. Run "cm starters" to list available names.');
    expect((await store.layerStatus("global")).present).toEqual([]);
  });

  it("--force still needs --yes with a starter", async () => {
    const { deps } = setup();
    await runOperation(initOperation, deps, {});
    await expectAppError(runOperation(initOperation, deps, { starter: "go", force: true }), "MISSING_REQUIRED");
  });

  it("seeds the repo playbook with --repo", async () => {
    const { store, deps } = setup({ repo: true });
    const result = await runOperation(initOperation, deps, { repo: true, starter: "rust" });
    expect("cassDir" in result).toBe(true);
    expect(result.starter!.name).toBe("rust");
    expect((await store.readPlaybook("repo"))!.bullets).toHaveLength(result.starter!.added);
    expect((await store.readPlaybook("repo"))!.name).toBe("repo-playbook");
  });
});

describe("registration", () => {
  it("registers the new operations with unique names", () => {
    const names = operations.map((op) => op.name);
    for (const name of ["project", "quickstart", "starters", "playbook_bootstrap"]) expect(names).toContain(name);
    expect(new Set(names).size).toBe(names.length);
  });
});
