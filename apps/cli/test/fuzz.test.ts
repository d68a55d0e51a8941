import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prng } from "../../../packages/runtime/test/durability/prng.mjs";
import { BIN, assertBuilt, cm, gitInit, tempHome } from "./helpers.js";

/**
 * Fuzzing the command line: random commands, flags (known, unknown, without their value) and
 * values (empty, negative, NaN, huge, control characters, deep JSON). Bad input is never an
 * internal error: no run exits 1 or dies of a signal, and with --json every failure is one error
 * envelope on stdout. The seed is fixed, so a failure reproduces; the counts are in
 * docs/benchmarks.md.
 */

export const FUZZ_SEED = 20261127;
export const FUZZ_RUNS = 240;

/** Every command path with its positional arguments' shapes (`serve` is left out: it would keep running). */
const COMMANDS: Array<{ path: string[]; args: number }> = [
  { path: ["context"], args: 1 },
  { path: ["mark"], args: 1 },
  { path: ["remember"], args: 1 },
  { path: ["recall"], args: 1 },
  { path: ["outcome"], args: 2 },
  { path: ["outcome-apply"], args: 0 },
  { path: ["reflect"], args: 0 },
  { path: ["diary"], args: 1 },
  { path: ["validate"], args: 1 },
  { path: ["audit"], args: 0 },
  { path: ["usage"], args: 0 },
  { path: ["undo"], args: 1 },
  { path: ["forget"], args: 1 },
  { path: ["history"], args: 1 },
  { path: ["playbook", "list"], args: 0 },
  { path: ["playbook", "get"], args: 1 },
  { path: ["playbook", "add"], args: 1 },
  { path: ["playbook", "remove"], args: 1 },
  { path: ["playbook", "export"], args: 0 },
  { path: ["playbook", "import"], args: 1 },
  { path: ["playbook", "bootstrap"], args: 1 },
  { path: ["stats"], args: 0 },
  { path: ["top"], args: 1 },
  { path: ["stale"], args: 0 },
  { path: ["why"], args: 1 },
  { path: ["similar"], args: 1 },
  { path: ["init"], args: 0 },
  { path: ["setup"], args: 1 },
  { path: ["hook"], args: 2 },
  { path: ["starters"], args: 0 },
  { path: ["storage", "status"], args: 0 },
  { path: ["storage", "migrate"], args: 0 },
  { path: ["doctor"], args: 0 },
  { path: ["privacy", "status"], args: 0 },
  { path: ["privacy", "allow"], args: 1 },
  { path: ["onboard", "status"], args: 0 },
  { path: ["onboard", "sample"], args: 0 },
  { path: ["onboard", "read"], args: 1 },
  { path: ["onboard", "mark-done"], args: 1 },
  { path: ["quickstart"], args: 0 },
  { path: ["project"], args: 0 },
  { path: ["trauma", "list"], args: 0 },
  { path: ["trauma", "add"], args: 1 },
  { path: ["trauma", "heal"], args: 1 },
  { path: ["trauma", "remove"], args: 1 },
  { path: ["guard"], args: 0 },
  { path: ["frobnicate"], args: 1 },
  { path: ["playbook"], args: 0 },
  { path: [], args: 0 },
];

const VALUES = [
  "",
  " ",
  "-1",
  "0",
  "1",
  "3",
  "NaN",
  "1e309",
  "0.5",
  "99999999999999999999",
  "because",
  "helpful",
  "success",
  "json",
  "toon",
  "markdown",
  "global",
  "sqlite",
  "claude-code",
  "user-prompt-submit",
  "b-doesnotexist",
  "trauma-00000000",
  "../../etc/passwd",
  "/etc/passwd",
  "(a+)+$",
  "src/a.ts:(x",
  "x".repeat(10_000),
  "\u001b]0;pwned\u0007title",
  "emoji 🔥 text",
  "--",
  "-",
  "2026-13-45",
  "30d",
];

const UNKNOWN_FLAGS = ["--frob", "--limit=", "-z", "--json=yes", "--no-such-thing"];

/** The options a command's --help lists: [flag, takes a value]. */
function optionsOf(path: string[], home: string): Array<[string, boolean]> {
  const help = spawnSync(process.execPath, [BIN, ...path, "--help"], { encoding: "utf8", env: { ...process.env, HOME: home, NO_COLOR: "1" } }).stdout;
  const options: Array<[string, boolean]> = [];
  for (const line of help.split("\n")) {
    const m = /^\s+(?:-\w, )?(--[\w-]+)( [<[][^>\]]+[>\]])?/.exec(line);
    if (m && m[1] !== "--help") options.push([m[1]!, m[2] !== undefined]);
  }
  return options;
}

let home: string;
let cleanup: () => void;
let workspace: string;
beforeAll(() => {
  assertBuilt();
  ({ home, cleanup } = tempHome());
  workspace = join(home, "ws");
  mkdirSync(workspace, { recursive: true });
  gitInit(workspace);
  mkdirSync(join(workspace, ".claude"));
  writeFileSync(join(workspace, "rules.json"), JSON.stringify([{ content: "Run the tests before pushing" }]));
  expect(cm(["init", "--json"], { home, cwd: workspace }).code).toBe(0);
  expect(cm(["playbook", "add", "Run the linter before pushing", "--json"], { home, cwd: workspace }).code).toBe(0);
});
afterAll(() => cleanup());

describe("fuzzed command lines", () => {
  it(`${FUZZ_RUNS} random invocations: never exit 1, never a signal, every --json failure an envelope`, () => {
    const random = prng(FUZZ_SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const optionCache = new Map<string, Array<[string, boolean]>>();
    const problems: string[] = [];
    const exits = new Map<number, number>();
    for (let run = 0; run < FUZZ_RUNS; run++) {
      const command = pick(COMMANDS);
      const key = command.path.join(" ");
      if (!optionCache.has(key)) optionCache.set(key, optionsOf(command.path, home));
      const options = optionCache.get(key)!;
      const argv = [...command.path];
      const positional = random() < 0.2 ? command.args + 1 : random() < 0.2 ? 0 : command.args;
      for (let i = 0; i < positional; i++) argv.push(pick(VALUES));
      const flagCount = Math.floor(random() * 4);
      // A value-taking flag left without its value takes the next word: "--days --json" sets days to "--json".
      let valueMissing = false;
      for (let i = 0; i < flagCount; i++) {
        const roll = random();
        valueMissing = false;
        if (roll < 0.1) argv.push(pick(UNKNOWN_FLAGS));
        else if (options.length > 0) {
          const [flag, takesValue] = pick(options);
          if (flag === "--yes" || flag === "--force" || flag === "--http") continue; // keep the runs fast and the home usable
          argv.push(flag);
          if (takesValue && !(roll > 0.9 && i === flagCount - 1)) argv.push(pick(VALUES));
          else if (takesValue) valueMissing = true;
        }
      }
      const json = random() < 0.6;
      if (json) argv.push("--json");
      // An envelope is expected when --json really is the output switch (not a value, and not overridden by --format).
      const wantsEnvelope = json && !valueMissing && !argv.includes("--format") && !argv.includes("--");
      const r = spawnSync(process.execPath, [BIN, ...argv], {
        cwd: workspace,
        env: { ...process.env, HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_MEMORY_HOME: "", XDG_DATA_HOME: "", CASS_PATH: "" },
        input: random() < 0.5 ? "" : pick(VALUES),
        encoding: "utf8",
        timeout: 30_000,
      });
      const code = r.status ?? -1;
      exits.set(code, (exits.get(code) ?? 0) + 1);
      const shown = JSON.stringify(argv.map((a) => (a.length > 40 ? `${a.slice(0, 20)}…(${a.length})` : a)));
      if (r.signal !== null || code === 1 || code === -1) {
        problems.push(`${shown} → exit ${code}${r.signal ? ` (${r.signal})` : ""}: ${(r.stderr || r.stdout).split("\n").slice(0, 3).join(" | ")}`);
        continue;
      }
      if (wantsEnvelope && code !== 0) {
        let envelope: { success?: unknown; error?: { code?: unknown; exitCode?: unknown } } | null = null;
        try {
          envelope = JSON.parse(r.stdout);
        } catch {
          envelope = null;
        }
        if (envelope?.success !== false || typeof envelope.error?.code !== "string" || envelope.error.exitCode !== code) {
          problems.push(`${shown} → exit ${code} without an error envelope: ${r.stdout.slice(0, 200)} ${r.stderr.slice(0, 200)}`);
        }
      }
    }
    // CM_FUZZ_REPORT=<file> keeps the exit-code counts (for docs/benchmarks.md).
    if (process.env.CM_FUZZ_REPORT) writeFileSync(process.env.CM_FUZZ_REPORT, `${JSON.stringify({ seed: FUZZ_SEED, runs: FUZZ_RUNS, exits: Object.fromEntries(exits), problems: problems.length })}\n`);
    expect(problems).toEqual([]);
    // The fuzzer must really reach both outcomes.
    expect(exits.get(0) ?? 0).toBeGreaterThan(FUZZ_RUNS / 10);
    expect(exits.get(2) ?? 0).toBeGreaterThan(FUZZ_RUNS / 10);
  }, 600_000);
});
