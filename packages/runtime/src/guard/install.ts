import { spawnSync } from "node:child_process";
import { chmod, readFile, stat, unlink } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { AppError } from "@cass-memory/core";
import { detectJsonLayout, formatJson, isPlainObject, scanJson } from "../setup/json-config.js";
import { applyFile } from "../setup/setup.js";
import { findGitRoot } from "../paths.js";
import { isCmHookCommand } from "../hooks/config.js";
import { CLAUDE_GUARD_SCRIPT, GIT_GUARD_SCRIPT, preCommitSnippet } from "./scripts.js";

/**
 * `cm guard --install` and `cm guard --git` (reference §1.5.25): write the HOT STOVE guard scripts
 * and hook them into Claude Code's project settings or the repository's pre-commit hook. Both are
 * idempotent; a file that is changed is backed up first (`<file>.backup.<epoch-ms>`), a settings
 * file that is not JSON is never rewritten, and an older copy of a script is brought up to date.
 */

export const CLAUDE_GUARD_RELATIVE = join(".claude", "hooks", "trauma_guard.py");
/** The command in `.claude/settings.json`; Claude Code sets CLAUDE_PROJECT_DIR for hooks. */
export const CLAUDE_GUARD_COMMAND = "$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py";
export const GIT_GUARD_FILE = "trauma-guard-precommit.py";
const SCRIPT_MODE = 0o755;

export interface GuardOptions {
  cwd?: string;
  /** Python interpreter used to check that an installed script parses (default `python3`). */
  python?: string;
  now?: () => number;
}

export interface ClaudeGuardResult {
  message: string;
  alreadyInstalled: boolean;
  scriptPath: string;
  settingsPath: string;
  /** The script was written (new, or an older/changed copy replaced). */
  scriptWritten: boolean;
  /** Backup of settings.json made before it was changed. */
  backup?: string;
  warnings: string[];
}

export interface GitGuardResult {
  message: string;
  alreadyInstalled: boolean;
  hookPath: string;
  guardScriptPath: string;
  scriptWritten: boolean;
  backup?: string;
}

/** The directory holding `.claude/`: the working directory, else the root of its repository. */
export async function findClaudeProject(cwd: string): Promise<string | null> {
  const candidates = [resolve(cwd)];
  const root = findGitRoot(cwd);
  if (root !== null && root !== candidates[0]) candidates.push(root);
  for (const dir of candidates) {
    const st = await stat(join(dir, ".claude")).catch(() => null);
    if (st?.isDirectory()) return dir;
  }
  return null;
}

/** Whether `python -c ast.parse(...)` accepts the file: true, false, or null when Python cannot be run. */
export function pythonParses(path: string, python = "python3"): boolean | null {
  const r = spawnSync(python, ["-c", "import ast, sys; ast.parse(open(sys.argv[1], encoding='utf-8').read())", path], {
    encoding: "utf8",
    timeout: 10_000,
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (r.error !== undefined) return null;
  return r.status === 0;
}

/** Writes a script when it is missing or differs, always leaving it executable. Returns whether it was written. */
async function writeScript(path: string, content: string, now: () => number): Promise<boolean> {
  const applied = await applyFile(path, (text) => ({ action: text === null ? "created" : text === content ? "unchanged" : "updated", content }), {
    newFileMode: SCRIPT_MODE,
    backup: false,
    now,
  });
  await chmod(path, SCRIPT_MODE);
  return applied.action !== "unchanged";
}

/** A PreToolUse group whose only hooks are `cm hook claude-code pre-tool-use`. */
function isCmShellGuard(group: unknown): boolean {
  if (!isPlainObject(group) || !Array.isArray(group.hooks) || group.hooks.length === 0) return false;
  return group.hooks.every((hook) => isPlainObject(hook) && isCmHookCommand(hook.command, "claude-code") && /\bpre-tool-use['"]?\s*$/.test(String(hook.command)));
}

/** Does any PreToolUse hook of these settings already run the trauma guard? */
export function settingsHaveGuard(settings: Record<string, unknown>): boolean {
  const hooks = settings.hooks;
  if (!isPlainObject(hooks) || !Array.isArray(hooks.PreToolUse)) return false;
  return hooks.PreToolUse.some((group) => JSON.stringify(group).includes("trauma_guard.py"));
}

function parseSettings(text: string, path: string): Record<string, unknown> {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body.trim() === "") return {};
  const scan = scanJson(body);
  let value: unknown;
  try {
    if (scan.comments > 0 || scan.trailingCommas > 0) throw new Error("comments or trailing commas are not JSON");
    value = JSON.parse(body);
  } catch (error) {
    throw new AppError("CONFIG_INVALID", `Error: Could not parse ${path}: ${error instanceof Error ? error.message : String(error)}`, {
      hint: `Fix the JSON in ${path} (or move it away), then re-run; cm never rewrites a settings file it cannot read.`,
      details: { path },
    });
  }
  if (!isPlainObject(value) || (value.hooks !== undefined && !isPlainObject(value.hooks)) || (isPlainObject(value.hooks) && value.hooks.PreToolUse !== undefined && !Array.isArray(value.hooks.PreToolUse))) {
    throw new AppError("CONFIG_INVALID", `Error: Could not parse ${path}: expected an object whose "hooks.PreToolUse" is a list.`, {
      hint: `Fix ${path} by hand, then re-run.`,
      details: { path },
    });
  }
  return value;
}

/** `cm guard --install`: `.claude/hooks/trauma_guard.py` plus its PreToolUse entry in `.claude/settings.json`. */
export async function installClaudeGuard(options: GuardOptions = {}): Promise<ClaudeGuardResult> {
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now;
  const project = await findClaudeProject(cwd);
  if (project === null) {
    throw new AppError("FILE_NOT_FOUND", "No .claude directory found. Is this a Claude Code project?", {
      hint: "Run from the project's root (the directory holding .claude/), or create it first: mkdir .claude",
      details: { cwd },
    });
  }
  const scriptPath = join(project, CLAUDE_GUARD_RELATIVE);
  const settingsPath = join(project, ".claude", "settings.json");
  const warnings: string[] = [];

  // Read (and validate) the settings before writing anything, so a bad file leaves no script behind.
  const existing = await readFile(settingsPath, "utf8").catch((error: { code?: string }) => {
    if (error.code === "ENOENT") return null;
    throw new AppError("FILE_PERMISSION_DENIED", `Could not read ${settingsPath}: ${String((error as Error).message ?? error)}`, { details: { path: settingsPath } });
  });
  if (existing !== null) parseSettings(existing, settingsPath);

  const scriptWritten = await writeScript(scriptPath, CLAUDE_GUARD_SCRIPT, now);
  const parses = pythonParses(scriptPath, options.python);
  if (parses === false) {
    await unlink(scriptPath).catch(() => undefined);
    throw new AppError("CONFIG_INVALID", `The guard script ${scriptPath} does not parse as Python; it was removed.`, {
      hint: "Check that python3 is Python 3.8 or newer (python3 --version).",
      details: { path: scriptPath },
    });
  }
  if (parses === null) warnings.push("python3 was not found: the guard needs it to run (it lets every command through without it).");

  let already = false;
  const applied = await applyFile(
    settingsPath,
    (text) => {
      const settings = text === null ? {} : parseSettings(text, settingsPath);
      if (settingsHaveGuard(settings)) {
        already = true;
        return { action: "unchanged", content: text ?? "" };
      }
      already = false;
      const hooks = isPlainObject(settings.hooks) ? settings.hooks : {};
      // The script replaces the Node shell guard `cm setup claude-code --hooks` may have installed:
      // one guard per command is enough.
      const pre = (Array.isArray(hooks.PreToolUse) ? hooks.PreToolUse : []).filter((group) => !isCmShellGuard(group));
      hooks.PreToolUse = [...pre, { matcher: "Bash", hooks: [{ type: "command", command: CLAUDE_GUARD_COMMAND }] }];
      settings.hooks = hooks;
      return { action: text === null ? "created" : "updated", content: formatJson(settings, detectJsonLayout(text)) };
    },
    { newFileMode: 0o644, backup: true, now },
  );
  return {
    message: already ? "Trauma guard already installed." : "Trauma guard installed successfully.",
    alreadyInstalled: already,
    scriptPath,
    settingsPath,
    scriptWritten,
    ...(applied.backup !== undefined ? { backup: applied.backup } : {}),
    warnings,
  };
}

function git(args: string[], cwd: string): string | null {
  const r = spawnSync("git", args, { cwd, encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** Already ours: the original's marker strings. */
export function preCommitHasGuard(text: string): boolean {
  return text.includes("trauma-guard-precommit") || text.includes("HOT STOVE");
}

/**
 * The pre-commit hook with our lines added: a new hook is a `#!/bin/sh` script; in an existing one
 * our lines go right after its `#!` line, so a hook that ends with `exit 0` still runs them.
 */
export function addGuardToPreCommit(text: string | null, guardPath: string): string {
  const snippet = preCommitSnippet(guardPath);
  if (text === null || text.trim() === "") return `#!/bin/sh\n${snippet}`;
  if (!text.startsWith("#!")) return `${snippet}${text}`;
  const eol = text.indexOf("\n");
  return eol === -1 ? `${text}\n${snippet}` : `${text.slice(0, eol + 1)}${snippet}${text.slice(eol + 1)}`;
}

/** `cm guard --git`: the guard script in the repository's hooks directory and a call to it from pre-commit. */
export async function installGitGuard(options: GuardOptions = {}): Promise<GitGuardResult> {
  const cwd = options.cwd ?? process.cwd();
  const now = options.now ?? Date.now;
  const top = git(["rev-parse", "--show-toplevel"], cwd);
  const hooksRel = top === null ? null : git(["rev-parse", "--git-path", "hooks"], cwd);
  if (top === null || hooksRel === null) {
    throw new AppError("FILE_NOT_FOUND", "Not in a git repository.", {
      hint: "cd into a git repository (or run git init) first.",
      details: { cwd },
    });
  }
  // --git-path answers relative to the working directory, and follows core.hooksPath.
  const hooksDir = resolve(cwd, hooksRel);
  const guardScriptPath = join(hooksDir, GIT_GUARD_FILE);
  const hookPath = join(hooksDir, "pre-commit");
  const scriptWritten = await writeScript(guardScriptPath, GIT_GUARD_SCRIPT, now);
  let already = false;
  const applied = await applyFile(
    hookPath,
    (text) => {
      already = text !== null && preCommitHasGuard(text);
      if (already) return { action: "unchanged", content: text ?? "" };
      return { action: text === null ? "created" : "updated", content: addGuardToPreCommit(text, guardScriptPath) };
    },
    { newFileMode: SCRIPT_MODE, backup: true, now },
  );
  if (!already) await chmod(hookPath, SCRIPT_MODE);
  return already
    ? { message: "Git pre-commit trauma guard already installed.", alreadyInstalled: true, hookPath, guardScriptPath, scriptWritten }
    : {
        message: "Git pre-commit trauma guard installed successfully.",
        alreadyInstalled: false,
        hookPath,
        guardScriptPath,
        scriptWritten,
        ...(applied.backup !== undefined ? { backup: applied.backup } : {}),
      };
}

/** Health of the Claude Code guard for `cm doctor` (only where `.claude/` exists; null otherwise). */
export async function claudeGuardHealth(options: GuardOptions = {}): Promise<{ status: "pass" | "warn" | "fail"; message: string; details?: unknown } | null> {
  const cwd = options.cwd ?? process.cwd();
  const dotClaude = await stat(join(resolve(cwd), ".claude")).catch(() => null);
  if (!dotClaude?.isDirectory()) return null;
  const scriptPath = join(resolve(cwd), CLAUDE_GUARD_RELATIVE);
  const settingsText = await readFile(join(resolve(cwd), ".claude", "settings.json"), "utf8").catch(() => null);
  let hooked = false;
  let viaCmHook = false;
  if (settingsText !== null) {
    try {
      const settings = JSON.parse(settingsText) as unknown;
      if (isPlainObject(settings)) {
        hooked = settingsHaveGuard(settings);
        const pre = isPlainObject(settings.hooks) && Array.isArray(settings.hooks.PreToolUse) ? settings.hooks.PreToolUse : [];
        viaCmHook = pre.some((group) => /\bhook\s+claude-code\s+pre-tool-use\b/.test(JSON.stringify(group)));
      }
    } catch {
      // unreadable settings: reported as not installed
    }
  }
  const scriptExists = (await stat(scriptPath).catch(() => null))?.isFile() ?? false;
  const shown = relative(resolve(cwd), scriptPath);
  if (hooked && scriptExists) {
    if (pythonParses(scriptPath, options.python) === false) {
      return { status: "fail", message: `${shown} does not parse as Python; reinstall it with: cm guard --install`, details: { scriptPath } };
    }
    return { status: "pass", message: `Installed (${shown}, PreToolUse Bash)`, details: { scriptPath } };
  }
  if (viaCmHook) return { status: "pass", message: "Installed (PreToolUse runs cm hook claude-code pre-tool-use)" };
  if (hooked) return { status: "fail", message: `settings.json runs ${shown}, which is missing; reinstall it with: cm guard --install`, details: { scriptPath } };
  return { status: "warn", message: "Not installed. Block commands that match a trauma with: cm guard --install" };
}
