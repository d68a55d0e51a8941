/**
 * The two guard scripts `cm guard` installs (reference §1.5.25, §5.10). They are Python 3 so that
 * they run without Node, exactly where the earlier cm put them, with the same stdin/stdout
 * protocol; existing settings that point at them keep working.
 *
 * Both read the active traumas of the global data directory (`CASS_MEMORY_HOME`, else
 * `$XDG_DATA_HOME/cass-memory`, else `~/.cass-memory`) and of `<git root>/.cass/`, from the storage
 * backend cm uses (`CASS_MEMORY_STORAGE`, else `storage.backend` of config.json): `traumas.jsonl`
 * for YAML, the `logs` table of `cass-memory.sqlite` (opened read-only) for SQLite.
 *
 * Both are fail-open: any problem (no input, bad JSON, unreadable files, a pattern Python cannot
 * compile) means "allow". A pattern that could take long on a hostile
 * command (one written to the file by hand: `cm trauma add` refuses such patterns) cannot hang the
 * agent: commands are cut to 16 KiB, patterns over 512 characters or with a quantified group that
 * itself holds a quantifier are skipped, and an alarm ends the script after a few seconds.
 */

/** Bumped whenever the script text changes; `cm guard --install` rewrites older copies. */
export const GUARD_SCRIPT_VERSION = 3;

/** Shared Python: locating and loading traumas, the safety screen, matching. */
const PYTHON_COMMON = String.raw`
import json
import os
import re
import signal
import subprocess
import sys

MAX_TEXT = 16 * 1024
MAX_PATTERN = 512
# A group with a quantifier inside, itself quantified: (a+)+, (\w*x)*, (a|b+){2,}.
NESTED_QUANTIFIER = re.compile(r"\((?:[^()\\]|\\.)*(?:[+*]|\{\d+,\d*\})(?:[^()\\]|\\.)*\)\s*(?:[+*]|\{\d+,)")


def global_dir():
    explicit = os.environ.get("CASS_MEMORY_HOME", "").strip()
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    xdg = os.environ.get("XDG_DATA_HOME", "").strip()
    if xdg:
        return os.path.join(os.path.abspath(os.path.expanduser(xdg)), "cass-memory")
    return os.path.join(os.path.expanduser("~"), ".cass-memory")


def git_root(cwd):
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            cwd=cwd or None,
            capture_output=True,
            text=True,
            timeout=2,
        )
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    except Exception:
        pass
    return None


def storage_settings(home):
    """The storage backend in use and the global database's path, as cm decides them."""
    backend = os.environ.get("CASS_MEMORY_STORAGE", "").strip().lower()
    path = os.environ.get("CASS_MEMORY_STORAGE_PATH", "").strip()
    storage = {}
    try:
        with open(os.path.join(home, "config.json"), "r", encoding="utf-8") as handle:
            config = json.load(handle)
        if isinstance(config, dict) and isinstance(config.get("storage"), dict):
            storage = config["storage"]
    except (OSError, ValueError):
        pass
    if backend not in ("yaml", "sqlite"):
        backend = storage.get("backend") if storage.get("backend") in ("yaml", "sqlite") else "yaml"
    if not path and isinstance(storage.get("path"), str):
        path = storage["path"].strip()
    database = os.path.join(home, os.path.expanduser(path)) if path else os.path.join(home, "cass-memory.sqlite")
    return backend, database


def file_lines(path):
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            return handle.read(4 * 1024 * 1024).splitlines()
    except OSError:
        return []


def database_lines(path):
    # The SQLite store keeps each trauma as one JSON line in its logs table (read-only here).
    if not os.path.isfile(path):
        return []
    try:
        import sqlite3
        from urllib.parse import quote
        connection = sqlite3.connect("file:%s?mode=ro" % quote(path), uri=True, timeout=1)
        try:
            rows = connection.execute("SELECT line FROM logs WHERE log = 'traumas' ORDER BY seq LIMIT 10000").fetchall()
        finally:
            connection.close()
        return [row[0] for row in rows if isinstance(row[0], str)]
    except Exception:
        return []


def trauma_lines(cwd):
    home = global_dir()
    backend, database = storage_settings(home)
    root = git_root(cwd)
    if backend == "sqlite":
        lines = database_lines(database)
        if root:
            lines += database_lines(os.path.join(root, ".cass", "cass-memory.sqlite"))
        return lines
    lines = file_lines(os.path.join(home, "traumas.jsonl"))
    if root:
        lines += file_lines(os.path.join(root, ".cass", "traumas.jsonl"))
    return lines


def load_active_traumas(cwd):
    traumas = []
    for line in trauma_lines(cwd):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("status") != "active":
            continue
        pattern = entry.get("pattern")
        if isinstance(pattern, str) and pattern:
            traumas.append(entry)
    return traumas


def compile_safe(pattern):
    if len(pattern) > MAX_PATTERN or NESTED_QUANTIFIER.search(pattern):
        return None
    try:
        return re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    except (re.error, RecursionError, OverflowError):
        return None


def first_match(traumas, text):
    text = text[:MAX_TEXT]
    for entry in traumas:
        regex = compile_safe(entry["pattern"])
        if regex is not None and regex.search(text):
            return entry
    return None


def describe(entry):
    trigger = entry.get("trigger_event") if isinstance(entry.get("trigger_event"), dict) else {}
    reason = trigger.get("human_message") or "%s incident" % entry.get("severity", "CRITICAL")
    reference = trigger.get("session_path") or "unknown"
    return reason, reference


def arm_alarm(seconds):
    # The default action of SIGALRM ends the process: a runaway match cannot block the agent.
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(seconds)


def no_emoji():
    return os.environ.get("CASS_MEMORY_NO_EMOJI", "") not in ("", "0", "false")
`;

/** Runs main(); any exception exits 0 (fail-open). */
const PYTHON_ENTRY = String.raw`
if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        sys.exit(0)
`;

/** `.claude/hooks/trauma_guard.py`: Claude Code PreToolUse hook for Bash commands. */
export const CLAUDE_GUARD_SCRIPT = String.raw`#!/usr/bin/env python3
# cass-memory trauma guard (HOT STOVE) for Claude Code, installed by "cm guard --install".
# guard-script-version: ${GUARD_SCRIPT_VERSION}
# Reads Claude Code's PreToolUse hook JSON on stdin. When a Bash command matches an active trauma
# (~/.cass-memory/traumas.jsonl or <repo>/.cass/traumas.jsonl), prints a "deny" decision; otherwise
# prints nothing. Always exits 0 (fail-open): a broken guard must never break the agent.
${PYTHON_COMMON}

def main():
    arm_alarm(5)
    try:
        payload = json.loads(sys.stdin.read(1024 * 1024))
    except Exception:
        return 0
    if not isinstance(payload, dict) or payload.get("tool_name") != "Bash":
        return 0
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str) or not command.strip():
        return 0
    cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else os.environ.get("CLAUDE_PROJECT_DIR")
    entry = first_match(load_active_traumas(cwd), command)
    if entry is None:
        return 0
    reason, reference = describe(entry)
    banner = "[HOT STOVE] VISCERAL SAFETY INTERVENTION" if no_emoji() else "\U0001F525 HOT STOVE: VISCERAL SAFETY INTERVENTION \U0001F525"
    message = "\n".join([
        banner,
        "",
        "BLOCKED: This pattern matches a registered TRAUMA.",
        "Trauma: %s (%s)" % (entry.get("id", "?"), entry.get("severity", "CRITICAL")),
        "Pattern: %s" % entry["pattern"],
        "Reason: %s" % reason,
        "Reference: %s" % reference,
        "",
        "If you MUST run this, heal it first with: cm trauma heal %s" % entry.get("id", "<id>"),
    ])
    sys.stdout.write(json.dumps({
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": message,
        }
    }) + "\n")
    return 0

${PYTHON_ENTRY}`;

/** `.git/hooks/trauma-guard-precommit.py`: blocks commits whose added lines match an active trauma. */
export const GIT_GUARD_SCRIPT = String.raw`#!/usr/bin/env python3
# cass-memory trauma guard (HOT STOVE) for git commits, installed by "cm guard --git".
# guard-script-version: ${GUARD_SCRIPT_VERSION}
# Checks the lines a commit adds (git diff --cached) against the active traumas. Exit 1 blocks the
# commit; anything else (no traumas, no match, a problem reading them) lets it through.
${PYTHON_COMMON}

def added_lines():
    out = subprocess.run(
        ["git", "diff", "--cached", "--unified=0", "--no-color", "--no-ext-diff"],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=20,
    )
    if out.returncode != 0:
        return []
    lines = []
    for line in out.stdout.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            lines.append(line[1:])
    return lines


def main():
    arm_alarm(30)
    traumas = load_active_traumas(os.getcwd())
    if not traumas:
        return 0
    for line in added_lines():
        entry = first_match(traumas, line)
        if entry is None:
            continue
        reason, reference = describe(entry)
        banner = "[HOT STOVE] COMMIT BLOCKED" if no_emoji() else "\U0001F525 HOT STOVE: COMMIT BLOCKED \U0001F525"
        sys.stderr.write("\n".join([
            banner,
            "",
            "An added line matches a registered TRAUMA.",
            "Trauma: %s" % entry.get("id", "?"),
            "Severity: %s" % entry.get("severity", "CRITICAL"),
            "Pattern: %s" % entry["pattern"],
            "Reason: %s" % reason,
            "Reference: %s" % reference,
            "Line: %s" % line[:200],
            "",
            "If this is intended: git commit --no-verify",
            "Or heal the trauma: cm trauma heal %s" % entry.get("id", "<id>"),
        ]) + "\n")
        return 1
    return 0

${PYTHON_ENTRY}`;

/** The lines `cm guard --git` adds to `.git/hooks/pre-commit`. */
export function preCommitSnippet(guardPath: string): string {
  const quoted = `'${guardPath.replace(/'/g, `'\\''`)}'`;
  // Without python3 the guard cannot run: commits then go through (fail-open), as they do for
  // every other problem the guard meets.
  return `# cass-memory trauma guard (HOT STOVE): trauma-guard-precommit\nif command -v python3 >/dev/null 2>&1; then ${quoted} || exit 1; fi\n`;
}
