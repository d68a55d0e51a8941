// Shared set-up of the browser tests, scripts/screenshots.mjs and bench/dashboard-bench.mjs: the built
// `cm` on a temp home seeded through the real CLI, `cm dashboard` as a subprocess, and Chromium
// (Debian's) driven by playwright-core. Types in harness.d.mts.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = dirname(fileURLToPath(import.meta.url));
export const REPO = resolve(HERE, "../../..");
export const CM = join(REPO, "apps/cli/dist/cm.js");
const SESSIONS = join(REPO, "fixtures/cass/sessions");
const LEARNING = join(REPO, "fixtures/learning");

// ------------------------------------------------------------------------------------ chromium

/** @returns {string | null} */
export function chromiumPath() {
  // An explicit CHROMIUM_PATH is the only candidate (so a wrong one is reported, not silently replaced).
  const candidates = process.env.CHROMIUM_PATH ? [process.env.CHROMIUM_PATH] : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
  return candidates.find((p) => existsSync(p)) ?? null;
}

/** In CI a missing Chromium fails the tests (.ci/run installs it); locally they are skipped with a message. */
export function browserAvailability() {
  if (chromiumPath()) return { run: true };
  const reason = "Chromium not found (set CHROMIUM_PATH or `apt-get install -y chromium`)";
  if (process.env.CI === "true" || process.env.CI === "1") return { run: true, reason };
  process.stderr.write(`[dashboard browser tests] skipped: ${reason}\n`);
  return { run: false, reason };
}

export async function launchChromium(userDataRoot) {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("Chromium not found: the browser tests need it in CI (.ci/run installs Debian's chromium) — set CHROMIUM_PATH or install it");
  // playwright-core starts Chromium with a fresh --user-data-dir of its own (a temp dir per launch,
  // removed on close) and refuses one in `args`; TMPDIR points it into the caller's scratch dir.
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    env: { ...process.env, TMPDIR: userDataRoot },
    timeout: 60_000,
  });
  return { browser, close: () => browser.close() };
}

// ------------------------------------------------------------------------------------ cm

export function tempHome() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), "cm-dash-")));
  const env = { ...process.env, HOME: home, NO_COLOR: "1", PATH: `${dirname(process.execPath)}:/usr/bin:/bin` };
  for (const key of Object.keys(env)) {
    if (/^(CASS_|CM_|MCP_HTTP_|OPENAI_|ANTHROPIC_|GOOGLE_GENERATIVE|OLLAMA_)/.test(key) || key === "XDG_DATA_HOME") delete env[key];
  }
  return { home, env, cleanup: () => rmSync(home, { recursive: true, force: true }) };
}

export function cm(h, args, extraEnv = {}, input = "") {
  const r = spawnSync(process.execPath, [CM, ...args], { cwd: h.home, env: { ...h.env, ...extraEnv }, encoding: "utf8", timeout: 60_000, input });
  if (r.status !== 0) throw new Error(`cm ${args.join(" ")} exited ${r.status}\n${r.stdout}\n${r.stderr}`);
  if (!args.includes("--json")) return r.stdout;
  return JSON.parse(r.stdout).data;
}

/** Lays the fixture sessions where the agents keep them (for a deterministic `cm reflect`). */
function layOutSessions(root) {
  cpSync(join(SESSIONS, "claude_code", "projects"), join(root, ".claude", "projects"), { recursive: true });
  cpSync(join(SESSIONS, "codex", "sessions"), join(root, ".codex", "sessions"), { recursive: true });
  cpSync(join(LEARNING, "claude"), join(root, ".claude", "projects"), { recursive: true });
  cpSync(join(LEARNING, "codex"), join(root, ".codex", "sessions"), { recursive: true });
}

/** Seeds a home through the real CLI: rules, feedback, a reflection run, a trauma and a logged context request. */
export function seed(h, options = {}) {
  cm(h, ["init", "--json"]);
  const add = (content, ...rest) => cm(h, ["playbook", "add", content, ...rest, "--json"]).bullet.id;
  // Plain rules in one process (`--file -`); the ones with a tag or an expiry date one by one.
  const batch = {
    typecheck: ["Run pnpm typecheck before committing TypeScript changes", "typescript"],
    timersYes: ["Always use fake timers in React component tests", "testing"],
    timersNo: ["Never use fake timers in React component tests", "testing"],
    harmful: ["Disable the flaky checkout test instead of fixing it", "testing"],
    risky: ["Retry failed deploys automatically without looking at the logs", "ci"],
  };
  const added = cm(h, ["playbook", "add", "--file", "-", "--json"], {}, JSON.stringify(Object.values(batch).map(([content, category]) => ({ content, category })))).added;
  const idOf = (content) => {
    const found = added.find((b) => b.content === content);
    if (!found) throw new Error(`seed: "${content}" was not added`);
    return found.id;
  };
  const ids = {
    lint: add("Run the linter before pushing to the main branch", "--category", "workflow", "--tag", "lint"),
    lintDup: add("Run the linter before pushing to main branch", "--category", "workflow"),
    typecheck: idOf(batch.typecheck[0]),
    timersYes: idOf(batch.timersYes[0]),
    timersNo: idOf(batch.timersNo[0]),
    expiring: add("Node 20 is the CI image", "--category", "ci", "--valid-to", "10d"),
    harmful: idOf(batch.harmful[0]),
    risky: idOf(batch.risky[0]),
  };
  cm(h, ["mark", ids.typecheck, "--helpful", "--json"]);
  cm(h, ["mark", ids.typecheck, "--helpful", "--json"]);
  cm(h, ["mark", ids.harmful, "--harmful", "--reason", "caused_bug", "--json"]);
  cm(h, ["mark", ids.harmful, "--harmful", "--reason", "wasted_time", "--json"]);
  cm(h, ["trauma", "add", "git\\s+push\\s+.*--force", "--severity", "FATAL", "--message", "force-pushed over a release branch", "--json"]);
  let runId = "";
  if (options.reflect !== false) {
    layOutSessions(h.home);
    const run = cm(h, ["reflect", "--days", "100000", "--max-sessions", "50", "--json"], { CASS_MEMORY_LLM: "none" });
    runId = run.runId;
  }
  // After the run (which retires rules whose score went negative, like `harmful` above): one at-risk rule.
  cm(h, ["mark", ids.risky, "--harmful", "--reason", "wasted_time", "--json"]);
  const task = "run the linter before pushing";
  const context = cm(h, ["context", task, "--log-context", "--json"]);
  const returned = [...(context.relevantBullets ?? []), ...(context.antiPatterns ?? [])].map((b) => b.id);
  cm(h, ["mark", ids.lint, "--helpful", "--json"]);
  return { runId, ids, task, returned, markedAfterTask: ids.lint };
}

export function allBullets(h) {
  return cm(h, ["playbook", "list", "--all", "--json"]).bullets;
}

export function getBullet(h, id) {
  const data = cm(h, ["playbook", "get", id, "--json"]);
  return data.bullet ?? data;
}

// ------------------------------------------------------------------------------------ cm dashboard

/** Starts `cm dashboard --no-open --json --port 0` and reads its URL (with #token=) from the first JSON line. */
export function startDashboard(h, extraArgs = []) {
  const child = spawn(process.execPath, [CM, "dashboard", "--no-open", "--json", "--port", "0", ...extraArgs], { cwd: h.home, env: h.env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => fail(new Error(`cm dashboard did not print its URL within 60 s\n${out}\n${err}`)), 60_000);
    const fail = (e) => {
      clearTimeout(timer);
      child.kill("SIGTERM");
      reject(e);
    };
    child.stderr.on("data", (d) => (err += d.toString()).length > 100_000 && (err = err.slice(-50_000)));
    child.on("exit", (code) => fail(new Error(`cm dashboard exited ${code} before serving\n${out}\n${err}`)));
    child.stdout.on("data", (d) => {
      out += d.toString();
      const match = /https?:\/\/[^\s"]+#token=[A-Za-z0-9_\-.~%]+/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      const url = match[0];
      const token = decodeURIComponent(url.split("#token=")[1] ?? "");
      const stop = () =>
        new Promise((done) => {
          if (child.exitCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        });
      resolvePromise({ url, origin: new URL(url).origin, token, child, stop });
    });
  });
}

/** A free TCP port on 127.0.0.1 (for `cm serve --port`, which has no port 0 report). */
function freePort() {
  return new Promise((resolvePromise, reject) => {
    const probe = createServer();
    probe.on("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolvePromise(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Starts `cm serve` (HTTP, loopback) and waits for its "Dashboard: <url>" line; `token` sets MCP_HTTP_TOKEN. */
export async function startServe(h, token) {
  const port = await freePort();
  const env = { ...h.env, ...(token ? { MCP_HTTP_TOKEN: token } : {}) };
  const child = spawn(process.execPath, [CM, "serve", "--port", String(port)], { cwd: h.home, env, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => fail(new Error(`cm serve did not announce the dashboard within 60 s\n${err}`)), 60_000);
    const fail = (e) => {
      clearTimeout(timer);
      child.kill("SIGTERM");
      reject(e);
    };
    child.on("exit", (code) => fail(new Error(`cm serve exited ${code}\n${err}`)));
    child.stdout.resume();
    child.stderr.on("data", (d) => {
      err += d.toString();
      if (err.length > 100_000) err = err.slice(-50_000);
      const match = /Dashboard: (http:\/\/\S+?\/dashboard\/)/.exec(err);
      if (!match) return;
      clearTimeout(timer);
      child.removeAllListeners("exit");
      const base = match[1];
      const stop = () =>
        new Promise((done) => {
          if (child.exitCode !== null) return done();
          child.once("exit", () => done());
          child.kill("SIGTERM");
          setTimeout(() => child.kill("SIGKILL"), 10_000).unref();
        });
      resolvePromise({ url: token ? `${base}#token=${encodeURIComponent(token)}` : base, origin: new URL(base).origin, token: token ?? "", child, stop });
    });
  });
}
