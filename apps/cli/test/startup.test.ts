import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createCliContext } from "../src/cli-context.js";
import { buildProgram } from "../src/program.js";
import { BIN, CLI_DIR, assertBuilt, tempHome } from "./helpers.js";

// The `cm` loader (dist/cm.js) answers --version and --help itself and runs `context` and `mark`
// from bundles holding only that command. These tests hold it to what the whole CLI
// (dist/cm-main.cjs, every command registered with commander) prints for the same command line.

const MAIN = join(CLI_DIR, "dist", "cm-main.cjs");
const pkg = JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8")) as { version: string };

let home: string;
let cleanup: () => void;
beforeAll(assertBuilt);
beforeEach(() => ({ home, cleanup } = tempHome()));
afterEach(() => cleanup());

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a file of dist/ with node, in a clean environment (stdout is a pipe: not a terminal). */
function runNode(file: string, args: string[], env: Record<string, string> = {}, input = ""): Run {
  const r = spawnSync(process.execPath, [file, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, NO_COLOR: "1", CASS_MEMORY_LLM: "none", CASS_PATH: join(home, "no-cass"), ...env },
    input,
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A JSON envelope without the fields that differ from run to run. */
function stable(stdout: string): unknown {
  const envelope = JSON.parse(stdout) as { timestamp?: unknown; metadata?: { executionMs?: unknown } };
  delete envelope.timestamp;
  if (envelope.metadata) delete envelope.metadata.executionMs;
  return envelope;
}

/** Two rules added through the whole CLI; returns their ids. */
function seedPlaybook(): [string, string] {
  const add = (content: string, category: string): string => {
    const r = runNode(MAIN, ["playbook", "add", content, "--category", category, "--json"]);
    if (r.code !== 0) throw new Error(`playbook add failed: ${r.stderr}${r.stdout}`);
    return (JSON.parse(r.stdout) as { data: { bullet: { id: string } } }).data.bullet.id;
  };
  return [add("Run the failing test alone before changing code", "testing"), add("Narrow unknown errors with instanceof before reading message", "typescript")];
}

describe("cm --version without loading the CLI", () => {
  it("prints the version for --version, -V, -v and version (also with --json and global flags), as commander does", () => {
    const commander = runNode(MAIN, ["--version"]);
    expect(commander).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    for (const args of [["--version"], ["-V"], ["-v"], ["version"], ["version", "--json"], ["-v", "-j"], ["--version", "--json"], ["--no-color", "version"], ["--width", "90", "-v"]]) {
      expect({ args, ...runNode(BIN, args) }).toEqual({ args, ...commander });
    }
  });

  it("the whole CLI answers -v and version too, and only as the command", () => {
    expect(runNode(MAIN, ["-v"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    expect(runNode(MAIN, ["version", "--json"])).toEqual({ code: 0, stdout: `${pkg.version}\n`, stderr: "" });
    // `version` as an argument of another command keeps its meaning.
    seedPlaybook();
    const ctx = runNode(BIN, ["context", "version", "--json"]);
    expect(ctx.code).toBe(0);
    expect(JSON.parse(ctx.stdout).data.task).toBe("version");
  });
});

describe("cm --help rendered at build time", () => {
  it("is exactly what commander prints, for --help, -h and help, as cm and as cass-memory", () => {
    for (const name of ["cm", "cass-memory"]) {
      const env = { CASS_MEMORY_CLI_NAME: name };
      const commander = runNode(MAIN, ["--help"], env);
      expect(commander.code).toBe(0);
      expect(commander.stdout).toContain(`Usage: ${name} [options] [command]`);
      for (const flag of ["--help", "-h", "help"]) expect({ flag, ...runNode(BIN, [flag], env) }).toEqual({ flag, ...commander });
    }
  });

  it("matches the program built from the sources (the file is not stale)", () => {
    const rendered = JSON.parse(readFileSync(join(CLI_DIR, "dist", "cm-help.json"), "utf8")) as { version: string; help: Record<string, string> };
    expect(rendered.version).toBe(pkg.version);
    let out = "";
    const program = buildProgram(createCliContext(["node", "cm"], { verbose: false }));
    program.configureOutput({ writeOut: (text) => (out += text), getOutHelpWidth: () => 80 });
    program.outputHelp();
    expect(rendered.help.cm).toBe(out);
  });

  it("falls back to commander for any other program name", () => {
    const r = runNode(BIN, ["--help"], { CASS_MEMORY_CLI_NAME: "my-cm" });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Usage: my-cm [options] [command]");
    expect(r.stdout).toContain('my-cm context "<task>" --json');
  });
});

describe("context, mark and hook from their own bundles", () => {
  it("print what the whole CLI prints: results, help, usage errors and error envelopes", () => {
    const [one, two] = seedPlaybook();
    const task = "fix the failing test before changing code";
    const same = (args: string[], json: boolean) => {
      const whole = runNode(MAIN, args);
      const alone = runNode(BIN, args);
      expect({ args, code: alone.code, stderr: alone.stderr }).toEqual({ args, code: whole.code, stderr: whole.stderr });
      if (json) expect(stable(alone.stdout)).toEqual(stable(whole.stdout));
      else expect(alone.stdout).toBe(whole.stdout);
      return alone;
    };
    const ctx = same(["context", task, "--json", "--no-history"], true);
    expect(ctx.code).toBe(0);
    expect(JSON.parse(ctx.stdout).data.relevantBullets.map((b: { id: string }) => b.id)).toContain(one);
    same(["--verbose", "ctx", task, "--limit", "1", "--json"], true);
    same(["context", task, "--format", "markdown", "--no-history"], false);
    same(["context", "--help"], false);
    same(["context", task, "--bogus"], false);
    same(["context", task, "--bogus", "--json"], true);
    same(["context", task, "--limit", "x", "--json"], true);
    same(["mark", "--help"], false);
    same(["mark", "b-nope", "--helpful", "--json"], true);
    same(["mark", one], false);
    // A real write through the mark bundle, read back by the whole CLI.
    const marked = runNode(BIN, ["mark", two, "--harmful", "--reason", "outdated", "--json"]);
    expect(marked.code).toBe(0);
    expect(JSON.parse(marked.stdout).data).toMatchObject({ bulletId: two, type: "harmful" });
    const got = runNode(MAIN, ["playbook", "get", two, "--json"]);
    expect(JSON.parse(got.stdout).data.bullet.harmfulCount).toBe(1);
  });

  it("hook: the prompt hook and the shell guard answer as the whole CLI does", () => {
    seedPlaybook();
    const base = { session_id: "s1", transcript_path: join(home, "t.jsonl"), cwd: home };
    const prompt = JSON.stringify({ ...base, hook_event_name: "UserPromptSubmit", prompt: "fix the failing test before changing code" });
    const guard = JSON.stringify({ ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "npm test" } });
    for (const [args, input] of [
      [["hook", "claude-code", "user-prompt-submit"], prompt],
      [["hook", "claude-code", "pre-tool-use"], guard],
      [["hook", "--help"], ""],
      [["hook", "nope-client", "x"], ""],
    ] as const) {
      const whole = runNode(MAIN, [...args], {}, input);
      const alone = runNode(BIN, [...args], {}, input);
      expect({ args, ...alone }).toEqual({ args, ...whole });
    }
    const answered = runNode(BIN, ["hook", "claude-code", "user-prompt-submit"], {}, prompt);
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain("Run the failing test alone");
  });
});

describe("the package's executable (dist/cm.cjs, the CommonJS build of the loader)", () => {
  it("is package.json's bin and answers exactly as dist/cm.js does", () => {
    const manifest = JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(manifest.bin.cm).toBe("./dist/cm.cjs");
    expect(manifest.bin["cass-memory"]).toBe("./dist/cm.cjs");
    const CJS = join(CLI_DIR, "dist", "cm.cjs");
    const [one] = seedPlaybook();
    for (const [args, json] of [
      [["--version"], false],
      [["--help"], false],
      [["context", "run the failing test", "--json"], true],
      [["context", "run the failing test", "--limit", "x", "--json"], true],
      [["mark", "b-nope", "--helpful", "--json"], true],
      [["playbook", "get", one, "--json"], true],
    ] as const) {
      const esm = runNode(BIN, [...args]);
      const cjs = runNode(CJS, [...args]);
      expect({ args, code: cjs.code, stderr: cjs.stderr }).toEqual({ args, code: esm.code, stderr: esm.stderr });
      expect({ args, out: json ? stable(cjs.stdout) : cjs.stdout }).toEqual({ args, out: json ? stable(esm.stdout) : esm.stdout });
    }
  });
});

describe("the bundles the loader runs", () => {
  it("are ASCII-only (read as one-byte strings) and each exists next to the loader", () => {
    for (const bundle of ["cm-main.cjs", "cm-context.cjs", "cm-mark.cjs", "cm-hook.cjs"]) {
      const text = readFileSync(join(CLI_DIR, "dist", bundle), "utf8");
      expect(text.length).toBeGreaterThan(1000);
      const first = text.search(/[^\x00-\x7f]/);
      expect({ bundle, nonAscii: first === -1 ? null : text.slice(Math.max(0, first - 40), first + 10) }).toEqual({ bundle, nonAscii: null });
    }
  });
});
