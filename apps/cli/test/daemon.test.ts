import { spawn, spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, rmSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { assertBuilt, BIN, CLI_DIR, cm, cmAsync, tempHome, type RunOptions, type RunResult } from "./helpers.js";

// The resident process (`cm daemon`), through the built `cm` and a real Unix socket: every command
// here is a real process. The daemon's socket lives in XDG_CACHE_HOME, which each test points at a
// directory of its own, so no daemon is shared with other tests (or the user's).

let home: string;
let cleanup: () => void;
let cache: string;
beforeAll(assertBuilt);
beforeEach(() => {
  ({ home, cleanup } = tempHome());
  cache = join(home, "xdg-cache");
});
afterEach(() => {
  cm(["daemon", "stop", "--json"], opts());
  cleanup();
});

function opts(extra: Partial<RunOptions> = {}): RunOptions {
  return { home, ...extra, env: { XDG_CACHE_HOME: cache, CASS_MEMORY_LLM: "none", ...extra.env } };
}

function status(): { running: boolean; commands?: number; pid?: number; socket: string } {
  const r = cm(["daemon", "status", "--json"], opts());
  expect(r.code).toBe(0);
  return r.json().data;
}

function start(args: string[] = []): { pid: number; socket: string } {
  const r = cm(["daemon", "start", ...args, "--json"], opts());
  expect(r.code, r.stderr).toBe(0);
  const data = r.json().data;
  expect(data.running).toBe(true);
  return data;
}

/** Polls `check` every 50 ms for up to 30 s (the daemon looks at its socket and code every 5 s). */
async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function addRule(content: string, options: Partial<RunOptions> = {}): string {
  const r = cm(["playbook", "add", content, "--category", "auth", "--json"], opts(options));
  expect(r.code, r.stderr).toBe(0);
  return r.json().data.bullet.id as string;
}

/** The envelope without what differs between two runs a moment apart (times, decayed scores). */
function comparable(r: RunResult): unknown {
  const envelope = r.json();
  delete envelope.timestamp;
  delete envelope.metadata.executionMs;
  return JSON.parse(JSON.stringify(envelope, (key, value) => (typeof value === "number" && /score/i.test(key) ? Number(value.toFixed(4)) : value)));
}

describe("cm daemon", () => {
  it("answers cm context with the output, exit code and stdin handling of a command run in its own process", () => {
    addRule("Always check JWT expiry before debugging 401 errors");
    addRule("Rotate refresh tokens on every login");
    expect(status().running).toBe(false);
    start();
    const before = status().commands!;

    const viaDaemon = cm(["context", "debug 401 errors after login", "--json"], opts());
    const own = cm(["context", "debug 401 errors after login", "--json"], opts({ env: { CASS_MEMORY_DAEMON: "0" } }));
    expect(viaDaemon.code).toBe(0);
    expect(viaDaemon.json().data.relevantBullets.length).toBeGreaterThan(0);
    expect(comparable(viaDaemon)).toEqual(comparable(own));

    const human = cm(["context", "debug 401 errors after login"], opts());
    expect(human.stdout).toBe(cm(["context", "debug 401 errors after login"], opts({ env: { CASS_MEMORY_DAEMON: "0" } })).stdout);

    const bad = cm(["context", "x", "--limit", "nope", "--json"], opts());
    expect(bad.code).toBe(2);
    expect(bad.json().error.code).toBe("INVALID_INPUT");

    const piped = cm(["context", "-", "--json"], opts({ input: "rotate tokens at login\n" }));
    expect(piped.code).toBe(0);
    expect(piped.json().data.task).toBe("rotate tokens at login");

    // Four commands went to the daemon; the one with CASS_MEMORY_DAEMON=0 did not.
    expect(status().commands).toBe(before + 4);
  });

  it("runs each command with its caller's home, environment and working directory", () => {
    const other = join(home, "other-home");
    mkdirSync(other);
    addRule("Pin the database driver version in the lockfile");
    addRule("Vacuum the database after bulk deletes", { home: other });
    start();
    const mine = cm(["context", "database driver vacuum", "--json"], opts()).json().data.relevantBullets;
    const theirs = cm(["context", "database driver vacuum", "--json"], opts({ home: other })).json().data.relevantBullets;
    expect(mine.map((b: { content: string }) => b.content)).toEqual(["Pin the database driver version in the lockfile"]);
    expect(theirs.map((b: { content: string }) => b.content)).toEqual(["Vacuum the database after bulk deletes"]);

    // A repository's .cass/ playbook counts only from inside that repository.
    const repo = join(home, "repo");
    mkdirSync(join(repo, ".git"), { recursive: true });
    mkdirSync(join(repo, ".cass"));
    const repoRule = cm(["playbook", "add", "Run the database migrations before the tests", "--category", "db", "--repo", "--json"], opts({ cwd: repo }));
    expect(repoRule.code, repoRule.stderr).toBe(0);
    const inRepo = cm(["context", "database migrations", "--json"], opts({ cwd: repo })).json().data.relevantBullets;
    const outside = cm(["context", "database migrations", "--json"], opts()).json().data.relevantBullets;
    expect(inRepo.map((b: { content: string }) => b.content)).toContain("Run the database migrations before the tests");
    expect(outside.map((b: { content: string }) => b.content)).not.toContain("Run the database migrations before the tests");

    // Environment: output format and emoji come from the caller's variables, per command.
    const toon = cm(["context", "database driver"], opts({ env: { CM_OUTPUT_FORMAT: "toon" } }));
    expect(toon.stdout.trimStart().startsWith("{")).toBe(false);
    expect(toon.stdout).toContain("success: true");
    expect(cm(["context", "database driver", "--json"], opts()).stdout.trimStart().startsWith("{")).toBe(true);
    expect(status().commands).toBeGreaterThanOrEqual(6);
  });

  it("creates files with the caller's umask, not the daemon's", () => {
    addRule("Check JWT expiry before debugging 401 errors");
    start();
    // The first ranking creates ~/.cass-memory/.cache/ with the default mode: 0777 & ~umask.
    const r = spawnSync("sh", ["-c", `umask 002; exec "${process.execPath}" "${BIN}" context "debug 401 errors" --json`], {
      cwd: home,
      env: { ...process.env, HOME: home, XDG_CACHE_HOME: cache, CASS_MEMORY_LLM: "none", CASS_MEMORY_DAEMON: "" },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    expect(status().commands).toBe(1);
    expect(statSync(join(home, ".cass-memory", ".cache")).mode & 0o777).toBe(0o775);
  });

  it("cm mark through the daemon writes the playbook, and later reads see every change on disk", () => {
    const id = addRule("Check the token audience claim on 401 responses");
    start();
    const marked = cm(["mark", id, "--helpful", "--json"], opts());
    expect(marked.code, marked.stderr).toBe(0);
    expect(marked.json().data.bulletId).toBe(id);
    const shown = cm(["playbook", "get", id, "--json"], opts({ env: { CASS_MEMORY_DAEMON: "0" } })).json().data;
    expect(JSON.stringify(shown)).toContain('"helpfulCount":1');

    // A rule added by another process (cm playbook add runs on its own) is seen at once.
    cm(["context", "token audience", "--json"], opts());
    addRule("Log the token audience claim when validation fails");
    const after = cm(["context", "token audience claim", "--json"], opts()).json().data.relevantBullets;
    expect(after.map((b: { content: string }) => b.content)).toContain("Log the token audience claim when validation fails");

    const unknown = cm(["mark", "b-nope", "--helpful", "--json"], opts());
    expect(unknown.code).not.toBe(0);
    expect(unknown.json().success).toBe(false);
    expect(unknown.code).toBe(cm(["mark", "b-nope", "--helpful", "--json"], opts({ env: { CASS_MEMORY_DAEMON: "0" } })).code);
  });

  it("concurrent cm mark calls, some through the daemon and some not, are each applied once", async () => {
    const id = addRule("Check the token audience claim on 401 responses");
    start();
    const runs = Array.from({ length: 8 }, () => cmAsync(["mark", id, "--helpful", "--json"], opts()));
    const results = await Promise.all(runs);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const shown = cm(["playbook", "get", id, "--json"], opts({ env: { CASS_MEMORY_DAEMON: "0" } })).json().data;
    expect(JSON.stringify(shown)).toContain('"helpfulCount":8');
    const served = status().commands!;
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(8);
  });

  it("a command arriving while another runs is run by its caller instead of waiting", async () => {
    addRule("Always check JWT expiry before debugging 401 errors");
    start();
    // This command waits for its stdin, which stays open: the daemon is busy until it ends.
    const first = spawn(process.execPath, [BIN, "context", "-", "--json"], { cwd: home, env: { ...process.env, HOME: home, XDG_CACHE_HOME: cache, CASS_MEMORY_LLM: "none", NO_COLOR: "1" } });
    let firstOut = "";
    first.stdout.on("data", (d: Buffer) => (firstOut += d.toString()));
    const firstDone = new Promise<number | null>((resolve) => first.on("close", resolve));
    await waitFor(() => status().commands === 1, "the daemon to take the first command");

    const second = cm(["context", "debug 401 errors", "--json", "--verbose"], opts());
    expect(second.code).toBe(0);
    expect(second.json().data.relevantBullets.length).toBe(1);
    expect(second.stderr).toContain("the daemon is busy");

    first.stdin.end("debug 401 errors\n");
    expect(await firstDone).toBe(0);
    expect(JSON.parse(firstOut).data.task).toBe("debug 401 errors");
    expect(status().commands).toBe(1);
  });

  it("falls back to running the command itself when the daemon is gone, untrusted or turned off", async () => {
    addRule("Always check JWT expiry before debugging 401 errors");
    const { pid, socket } = start();
    process.kill(pid, "SIGKILL");
    await waitFor(() => status().running === false, "the daemon to die");
    expect(existsSync(socket)).toBe(true); // a stale socket: nobody removed it

    const stale = cm(["context", "debug 401 errors", "--json", "--verbose"], opts());
    expect(stale.code).toBe(0);
    expect(stale.json().data.relevantBullets.length).toBe(1);
    expect(stale.stderr).toContain("no daemon (ECONNREFUSED)");

    // start replaces the stale socket
    start();
    const dir = join(cache, "cass-memory");
    chmodSync(dir, 0o777);
    const untrusted = cm(["context", "debug 401 errors", "--json"], opts());
    expect(untrusted.code).toBe(0);
    const refused = cm(["daemon", "start", "--json"], opts());
    expect(refused.code).toBe(2);
    expect(refused.json().error.message).toContain("writable by other users");
    chmodSync(dir, 0o700);
    expect(status().commands).toBe(0);

    const off = cm(["daemon", "status", "--json"], opts({ env: { CASS_MEMORY_DAEMON: "0" } }));
    expect(off.code).toBe(2);
    expect(off.json().error.message).toContain("CASS_MEMORY_DAEMON=0");
  });

  it("stops on request, when idle, and when its socket is removed; CASS_MEMORY_DAEMON=auto starts it", async () => {
    const { socket } = start();
    const stopped = cm(["daemon", "stop", "--json"], opts());
    expect(stopped.code).toBe(0);
    expect(stopped.json().data.stopped).toHaveLength(1);
    expect(existsSync(socket)).toBe(false);
    expect(cm(["daemon", "stop", "--json"], opts()).json().data.stopped).toEqual([]);

    start(["--idle", "1"]);
    await waitFor(() => status().running === false, "the idle daemon to exit");
    expect(existsSync(socket)).toBe(false);

    const auto = cm(["context", "anything", "--json"], opts({ env: { CASS_MEMORY_DAEMON: "auto" } }));
    expect(auto.code).toBe(0);
    await waitFor(() => status().running, "the automatically started daemon");
    expect(cm(["context", "anything", "--json"], opts({ env: { CASS_MEMORY_DAEMON: "auto" } })).code).toBe(0);
    expect(status().commands).toBe(1);

    // Its socket removed (say, the cache cleared): no one can reach it, so it exits.
    const pid = status().pid!;
    rmSync(socket);
    await waitFor(() => !alive(pid), "the daemon to notice its socket is gone");
  });

  it("exits when the installed code it runs is replaced", async () => {
    // A copy of the build, so that replacing its cm-main.cjs disturbs no other test.
    const dist = join(home, "installed", "dist");
    cpSync(join(CLI_DIR, "dist"), dist, { recursive: true });
    const env = { ...process.env, HOME: home, XDG_CACHE_HOME: cache, CASS_MEMORY_LLM: "none" };
    const started = spawnSync(process.execPath, [join(dist, "cm.js"), "daemon", "start", "--json"], { cwd: home, env, encoding: "utf8" });
    expect(started.status, started.stderr).toBe(0);
    const pid = JSON.parse(started.stdout).data.pid as number;
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dist, "cm-main.cjs"), later, later);
    await waitFor(() => !alive(pid), "the daemon to notice its code was replaced");
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
