import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, cm, cmAsync, tempHome } from "./helpers.js";
// @ts-expect-error: the benchmarks' generator is plain JavaScript without types.
import { generatePlaybook, generatePlaybookYaml } from "../../../bench/generate-playbook.mjs";

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

function addRule(content: string, category = "auth"): string {
  const r = cm(["playbook", "add", content, "--category", category, "--json"], { home });
  expect(r.code).toBe(0);
  return r.json().data.bullet.id as string;
}

describe("cm context", () => {
  it("works without init: exit 0, playbook-only, degraded cass NOT_FOUND", () => {
    const r = cm(["context", "debug 401 errors after deploy", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("context");
    expect(env.data.task).toBe("debug 401 errors after deploy");
    expect(env.data.relevantBullets).toEqual([]);
    expect(env.data.degraded.cass.reason).toBe("NOT_FOUND");
    expect(env.data.degraded.cass.available).toBe(false);
    expect(env.data.semanticMode).toBe("keyword");
  });

  it("returns an added rule in relevantBullets (also via the ctx alias and stdin)", () => {
    const id = addRule("Always check JWT expiry before debugging 401 errors");
    const r = cm(["context", "debug 401 errors", "--json"], { home });
    expect(r.code).toBe(0);
    const bullets = r.json().data.relevantBullets;
    expect(bullets.map((b: { id: string }) => b.id)).toEqual([id]);
    expect(bullets[0].relevanceScore).toBeGreaterThan(0);
    expect(bullets[0].embedding).toBeUndefined();

    const viaStdin = cm(["ctx", "-", "--json"], { home, input: "debug 401 errors\n" });
    expect(viaStdin.json().data.task).toBe("debug 401 errors");
    expect(viaStdin.json().data.relevantBullets[0].id).toBe(id);
  });

  it("keeps the ranker's analyses in ~/.cass-memory/.cache/ and answers the same from them, also after edits and damage", () => {
    const secret = addRule("Rotate the session signing secret with a grace period for old cookies");
    addRule("Pin GitHub Actions to a full commit SHA", "ci");
    const task = "everyone is signed out after each deploy";
    const documents = join(home, ".cass-memory", ".cache", "lexical-documents.json");
    const first = cm(["context", task, "--json"], { home });
    expect(first.code).toBe(0);
    const ids = (r: typeof first) => r.json().data.relevantBullets.map((b: { id: string; relevanceScore: number }) => [b.id, b.relevanceScore]);
    expect(ids(first)[0]?.[0]).toBe(secret);
    // The concept map is built from the plan in core's sources: nothing to save.
    expect(existsSync(join(home, ".cass-memory", ".cache", "lexical-concepts.json"))).toBe(false);
    const saved = JSON.parse(readFileSync(documents, "utf8"));
    expect(saved.value).toHaveLength(4);
    // From the saved analyses: the same answer.
    expect(ids(cm(["context", task, "--json"], { home }))).toEqual(ids(first));
    // A new rule is analysed and found; the saved file grows by it.
    const added = addRule("After a deploy, users signed out means the session signing secret changed");
    const withNew = cm(["context", task, "--json"], { home });
    expect(withNew.json().data.relevantBullets.map((b: { id: string }) => b.id)).toContain(added);
    expect(JSON.parse(readFileSync(documents, "utf8")).value).toHaveLength(6);
    // The built index of exactly these texts is saved too (one file per set of texts); damaged,
    // it changes nothing in the answer.
    const cacheDir = join(home, ".cass-memory", ".cache");
    const indexes = () => readdirSync(cacheDir).filter((n) => /^lexical-index-[0-9a-f]{16}\.bin$/.test(n)).map((n) => join(cacheDir, n));
    expect(indexes()).toHaveLength(2); // before and after the rule was added
    for (const file of indexes()) writeFileSync(file, readFileSync(file).subarray(0, 100));
    expect(ids(cm(["context", task, "--json"], { home }))).toEqual(ids(withNew));
    // Damaged files change nothing in the answer and are replaced.
    writeFileSync(documents, "{ not json");
    for (const file of indexes()) writeFileSync(file, "not an index");
    const afterDamage = cm(["context", task, "--json"], { home });
    expect(afterDamage.code).toBe(0);
    expect(ids(afterDamage)).toEqual(ids(withNew));
    expect(JSON.parse(readFileSync(documents, "utf8")).value).toHaveLength(6);
    expect(indexes().some((file) => readFileSync(file).length > 100)).toBe(true);
  });

  it("rejects an empty task with INVALID_INPUT (exit 2) and the reference's hint", () => {
    for (const args of [["context", "   ", "--json"], ["context", "--json"]]) {
      const r = cm(args, { home, input: "" });
      expect(r.code).toBe(2);
      const err = r.json().error;
      expect(err.code).toBe("INVALID_INPUT");
      expect(err.message).toBe("task must be a non-empty string.");
      expect(err.hint).toBe('Example: cm context "fix the login bug" --json');
    }
  });

  it("validates numeric flags and --format", () => {
    const notInt = cm(["context", "task", "--limit", "1.5", "--json"], { home });
    expect(notInt.code).toBe(2);
    expect(notInt.json().error.message).toBe("limit must be an integer.");
    const tooSmall = cm(["context", "task", "--history", "0", "--json"], { home });
    expect(tooSmall.json().error.message).toBe("history must be >= 1.");
    const badFormat = cm(["context", "task", "--format", "xml"], { home });
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain("format must be one of: json, markdown, toon.");
    const formatJson = cm(["context", "task", "--format", "JSON"], { home });
    expect(formatJson.json().success).toBe(true);
  });

  it("honours --limit and warns about the deprecated --top", () => {
    addRule("Check 401 token expiry first");
    addRule("Log 401 responses with request ids");
    const limited = cm(["context", "401 token", "--limit", "1", "--json"], { home });
    expect(limited.json().data.relevantBullets).toHaveLength(1);
    const top = cm(["context", "401 token", "--top", "1", "--json"], { home });
    expect(top.json().data.relevantBullets).toHaveLength(1);
    expect(top.stderr).toContain("[context] --top is deprecated; use --limit.");
    const both = cm(["context", "401 token", "--top", "1", "--limit", "2", "--json"], { home });
    expect(both.json().data.relevantBullets).toHaveLength(2);
    expect(both.stderr).toContain("Ignoring deprecated --top because --limit was also provided.");
  });

  it("renders human text and markdown on stdout", () => {
    addRule("Always check JWT expiry before debugging 401 errors");
    const human = cm(["context", "debug 401 errors"], { home });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^CONTEXT FOR: debug 401 errors\n/);
    expect(human.stdout).toContain("PLAYBOOK RULES (1)");
    const md = cm(["context", "debug 401 errors", "--format", "markdown", "--json"], { home });
    expect(md.stdout).toMatch(/^# Context for: debug 401 errors\n/);
    expect(md.stdout).toContain("## Playbook rules (1)");
  });

  it("appends to the context log with --log-context", () => {
    cm(["init"], { home });
    cm(["context", "debug 401 errors", "--log-context", "--session", "s-1", "--json"], { home });
    const log = readFileSync(join(home, ".cass-memory", "context-log.jsonl"), "utf8").trim().split("\n");
    expect(log).toHaveLength(1);
    expect(JSON.parse(log[0]!)).toMatchObject({ task: "debug 401 errors", session: "s-1", source: "context" });
  });
});

describe("cm mark", () => {
  it("records helpful feedback", () => {
    const id = addRule("Always check JWT expiry before debugging 401 errors");
    const r = cm(["mark", id, "--helpful", "--json"], { home });
    expect(r.code).toBe(0);
    const env = r.json();
    expect(env.command).toBe("mark");
    expect(env.data).toMatchObject({ bulletId: id, type: "helpful", newState: "candidate" });
    expect(typeof env.data.effectiveScore).toBe("number");
    const bullet = cm(["playbook", "get", id, "--json"], { home }).json().data.bullet;
    expect(bullet.helpfulCount).toBe(1);
    expect(bullet.feedbackEvents).toHaveLength(1);
    expect(bullet.feedbackEvents[0].type).toBe("helpful");
  });

  it("on a large playbook it wrote, locates and rewrites only the marked rule", () => {
    // 300 generated rules in the earlier cm's format (≈300 KB, above the parse cache's threshold).
    const dir = join(home, ".cass-memory");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "playbook.yaml"), generatePlaybookYaml(300));
    const ids = generatePlaybook(300).bullets.map((b: { id: string }) => b.id);
    const before = parse(readFileSync(join(dir, "playbook.yaml"), "utf8")).bullets;
    // The first write re-emits the whole file in cm's own format (no layout recorded yet).
    expect(cm(["mark", ids[0]!, "--helpful", "--json"], { home }).code).toBe(0);
    for (const id of [ids[150]!, ids[299]!, ids[0]!]) {
      const r = cm(["mark", id, "--harmful", "--json", "--verbose"], { home });
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().data).toMatchObject({ bulletId: id, type: "harmful" });
      expect(r.stderr).toContain("Read 1 bullet(s) of");
      expect(r.stderr).toContain("Rewrote 1 bullet(s) of");
    }
    const after = parse(readFileSync(join(dir, "playbook.yaml"), "utf8")).bullets as Array<{ id: string; helpfulCount: number; harmfulCount: number }>;
    expect(after.map((b) => b.id)).toEqual(ids);
    const counts = (b: { helpfulCount?: number; harmfulCount?: number }) => [b.helpfulCount ?? 0, b.harmfulCount ?? 0];
    after.forEach((b, i) => {
      const [helpful, harmful] = counts(before[i]);
      const expected = i === 0 ? [helpful! + 1, harmful! + 1] : i === 150 || i === 299 ? [helpful, harmful! + 1] : [helpful, harmful];
      expect(counts(b), b.id).toEqual(expected);
    });
  });

  it("reports an unknown bullet as BULLET_NOT_FOUND (exit 2) and needs exactly one of --helpful/--harmful", () => {
    cm(["init"], { home });
    const r = cm(["mark", "b-nope", "--helpful", "--json"], { home });
    expect(r.code).toBe(2);
    expect(r.json().error.code).toBe("BULLET_NOT_FOUND");
    expect(r.json().error.details).toEqual({ bulletId: "b-nope" });
    const id = addRule("some rule");
    const both = cm(["mark", id, "--helpful", "--harmful", "--json"], { home });
    expect(both.code).toBe(2);
    expect(both.json().error.code).toBe("MISSING_REQUIRED");
  });

  it("loses no event when 16 processes mark the same bullet at once", async () => {
    const id = addRule("Always check JWT expiry before debugging 401 errors");
    const runs = await Promise.all(Array.from({ length: 16 }, () => cmAsync(["mark", id, "--helpful", "--json"], { home })));
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.json().success).toBe(true);
    }
    const text = readFileSync(join(home, ".cass-memory", "playbook.yaml"), "utf8");
    const playbook = parse(text);
    const bullet = playbook.bullets.find((b: { id: string }) => b.id === id);
    expect(bullet.feedbackEvents).toHaveLength(16);
    expect(bullet.helpfulCount).toBe(16);
    // The journal proves mutual exclusion: each mark saw a different number of earlier events.
    const journal = readFileSync(join(home, ".cass-memory", "events.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const seen = journal.filter((e) => e.operation === "feedback").map((e) => e.before.feedbackEvents as number);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 16 }, (_, i) => i));
    expect(cm(["playbook", "list", "--json"], { home }).code).toBe(0);
  });

  it("reports a playbook with a YAML syntax error as PLAYBOOK_CORRUPT and never touches it", () => {
    cm(["init"], { home });
    const path = join(home, ".cass-memory", "playbook.yaml");
    const broken = "schema_version: 2\nbullets:\n  - id: b-1\n    content: [unclosed\n";
    writeFileSync(path, broken);
    for (const args of [
      ["playbook", "list", "--json"],
      ["context", "anything at all", "--json"],
      ["mark", "b-1", "--helpful", "--json"],
      ["playbook", "add", "new rule", "--json"],
    ]) {
      const r = cm(args, { home });
      expect(r.code, args.join(" ")).toBe(3);
      const err = r.json().error;
      expect(err.code).toBe("PLAYBOOK_CORRUPT");
      expect(typeof err.hint).toBe("string");
      expect(err.hint.length).toBeGreaterThan(0);
    }
    expect(readFileSync(path, "utf8")).toBe(broken);
    expect(existsSync(path)).toBe(true);
  });
});
