import { statSync } from "node:fs";
import type { Command } from "commander";
import { contextOperation, findTraumaMatch, runOperation, topOperation, TraumaEntrySchema, type ContextResult, type TraumaEntry } from "@cass-memory/core";
import type { HookAnswer, HookClient, HookEventSpec, HookRequest, HookRule, Runtime } from "@cass-memory/runtime";
import { loadLlm, loadSqliteStore, type CliContext } from "../cli-context.js";
import { currentCommandIo } from "../output.js";
import { VERSION } from "../version.js";

interface HookFlags {
  maxTokens?: string;
  timeoutMs?: string;
}

/**
 * `cm hook <client> <event>`: the one command a client's hook configuration points at (written by
 * `cm setup <client> --hooks`). Reads the client's hook JSON on stdin and answers in its protocol:
 * relevant rules as additional context (prompt / session start), a deny for a shell command that
 * matches an active trauma, or a detached reflection of the finished session.
 *
 * A hook must never block or break the agent: input is bounded, a hard timer answers nothing and
 * exits 0 when it fires, and any error prints nothing on stdout, one line on stderr, and exits 0.
 */
export function registerHook(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("hook")
    .description("Answer an agent client's lifecycle hook (hook JSON on stdin; installed by 'setup <client> --hooks')")
    .argument("<client>", "claude-code | codex | gemini | cursor | windsurf")
    .argument("<event>", "the client's event, e.g. user-prompt-submit, session-end, pre-tool-use")
    .option("--max-tokens <n>", "budget of the printed context, ≈4 characters per token (default 800; env CASS_MEMORY_HOOK_MAX_TOKENS, config hooks.maxTokens)")
    .option("--timeout-ms <n>", "hard time limit: print nothing and exit 0 when it passes (default 1500; env CASS_MEMORY_HOOK_TIMEOUT_MS, config hooks.timeoutMs)")
    .addHelpText(
      "after",
      [
        "",
        "Events (installed by --hooks):",
        "  claude-code  user-prompt-submit, session-end, pre-tool-use (Bash); also session-start",
        "  codex        user-prompt-submit, pre-tool-use (Bash); also session-start",
        "  gemini       before-agent, session-end, before-tool (run_shell_command); also session-start",
        "  cursor       session-start, before-shell-execution",
        "  windsurf     pre-run-command",
        "",
        "Examples:",
        `  echo '{"prompt":"fix the login bug","cwd":"'$PWD'"}' | ${cli} hook claude-code user-prompt-submit`,
        `  ${cli} setup claude-code --hooks`,
        "",
      ].join("\n"),
    )
    .action(async (client: string, event: string, flags: HookFlags) => {
      ctx.begin("hook", false);
      ctx.exitCode = await runHook(ctx, client, event, flags);
    });
}

type RuntimeModule = typeof import("@cass-memory/runtime");

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

/** One diagnostic line on stderr, at most once per run (`run.warned`). */
function warnOnce(run: { warned: boolean }, message: string): void {
  if (run.warned) return;
  run.warned = true;
  process.stderr.write(`cm hook: ${message.replace(/\s+/g, " ").slice(0, 300)}\n`);
}

/** Reads stdin up to `max` bytes; null when there is more (or stdin is a terminal). */
async function readBoundedStdin(max: number): Promise<string | null> {
  const io = currentCommandIo();
  if (io !== null) {
    const read = await io.readStdin(max);
    return "text" in read && read.text !== "" ? read.text : null;
  }
  if (process.stdin.isTTY) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > max) {
      process.stdin.destroy();
      return null;
    }
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function writeAnswer(answer: HookAnswer): number {
  if (answer.stdout !== "") process.stdout.write(answer.stdout.endsWith("\n") ? answer.stdout : `${answer.stdout}\n`);
  if (answer.stderr !== undefined && answer.stderr !== "") process.stderr.write(`${answer.stderr}\n`);
  return answer.exitCode;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** Config `hooks.maxTokens` / `hooks.timeoutMs` (config.json is loose: unknown keys are kept). */
function hookConfig(rt: Runtime): { maxTokens?: number; timeoutMs?: number } {
  const raw = (rt.config as Record<string, unknown>).hooks;
  if (typeof raw !== "object" || raw === null) return {};
  const h = raw as Record<string, unknown>;
  const pick = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined);
  const maxTokens = pick(h.maxTokens);
  const timeoutMs = pick(h.timeoutMs);
  return { ...(maxTokens !== undefined ? { maxTokens } : {}), ...(timeoutMs !== undefined ? { timeoutMs } : {}) };
}

export async function runHook(ctx: CliContext, clientArg: string, eventArg: string, flags: HookFlags): Promise<number> {
  // Inside a process cm started from a hook (background reflect, cache warm-up) hooks answer
  // nothing: an agent run by such a process must not start another reflection, and so on.
  if (process.env.CASS_MEMORY_HOOK_CHILD === "1") return 0;
  const started = Date.now();
  const explicitTimeout = positiveInt(flags.timeoutMs) ?? positiveInt(process.env.CASS_MEMORY_HOOK_TIMEOUT_MS);
  const explicitTokens = positiveInt(flags.maxTokens) ?? positiveInt(process.env.CASS_MEMORY_HOOK_MAX_TOKENS);
  let mod: RuntimeModule | null = null;
  let clientName = clientArg;
  let eventName = eventArg;
  /** Set once the request is known to rank rules (prompt / session start). */
  let ranking = false;

  const run = { warned: false, timedOut: false };
  const onTimeout = () => {
    // Nothing was printed yet (answers are written in one piece at the end): answer nothing.
    run.timedOut = true;
    const io = currentCommandIo();
    try {
      // A cold ranking (first use of a large playbook) can outlast the limit every time; warm the
      // caches in the background so that the next prompt is answered. The resident process
      // (`cm daemon`) finishes the work itself, which warms them.
      const warmup = ranking && mod !== null && io === null ? mod.spawnWarmup({ node: process.execPath, cmScript: mod.currentCmScript(), cwd: process.cwd() }) : null;
      mod?.appendHookLog({ client: clientName, event: eventName, outcome: "timeout", ms: Date.now() - started, ...(warmup !== null ? { warmup } : {}) });
      if (io === null) mod?.releaseAllLocks();
    } catch {
      // exiting anyway
    }
    // The caller goes now; in the resident process the work goes on, its answer unprinted.
    if (io !== null) io.release(0);
    else process.exit(0);
  };
  let timer = setTimeout(onTimeout, explicitTimeout ?? 1_500);

  try {
    mod = await import("@cass-memory/runtime");
    ctx.loadedRuntimeModule = mod;
    const spec = mod.hookClientSpec(clientArg);
    clientName = spec.client;
    const event = mod.findHookEvent(spec, eventArg);
    if (event === null) {
      warnOnce(run, `${spec.label} event "${eventArg}" is not one cm answers; nothing done.`);
      return 0;
    }
    eventName = event.event;

    const raw = await readBoundedStdin(mod.HOOK_STDIN_MAX_BYTES);
    if (raw === null || raw.trim() === "") return 0;
    let payload: unknown;
    try {
      payload = JSON.parse(raw);
    } catch {
      return 0; // not JSON: answer nothing
    }
    const request = mod.parseHookRequest(spec.client, event, payload);
    if (request === null) return 0;
    ranking = request.action === "prompt" || request.action === "session-start";

    // Test knob: make the work outlast a small --timeout-ms (docs/hooks.md).
    const delay = positiveInt(process.env.CASS_MEMORY_HOOK_TEST_DELAY_MS);
    if (delay !== undefined) await new Promise((r) => setTimeout(r, delay));

    if (request.action === "session-end") return sessionEnd(mod, spec.client, request);

    // Rank in the client's project, so the repository's .cass/ layer is used.
    if (request.cwd !== undefined && isDirectory(request.cwd)) process.chdir(request.cwd);
    const rt = await mod.createRuntime({ cliName: ctx.cliName, version: VERSION, loadLlm, loadSqliteStore, stderr: () => undefined, ...(ctx.resident ? { resident: true } : {}) });
    const config = hookConfig(rt);
    if (explicitTimeout === undefined && config.timeoutMs !== undefined) {
      clearTimeout(timer);
      timer = setTimeout(onTimeout, Math.max(0, config.timeoutMs - (Date.now() - started)));
    }
    const maxTokens = explicitTokens ?? config.maxTokens ?? mod.DEFAULT_HOOK_MAX_TOKENS;

    let answer: HookAnswer | null = null;
    if (request.action === "shell-guard") answer = await shellGuard(mod, rt, spec.client, event, request, ctx.cliName);
    else answer = await rulesAnswer(mod, rt, spec.client, event, request, ctx.cliName, maxTokens);
    rt.close();
    return answer === null || run.timedOut ? 0 : writeAnswer(answer);
  } catch (error) {
    warnOnce(run, error instanceof Error ? error.message : String(error));
    try {
      mod?.appendHookLog({ client: clientName, event: eventName, outcome: "error", message: error instanceof Error ? error.message.slice(0, 500) : String(error) });
    } catch {
      // best effort
    }
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

function sessionEnd(mod: RuntimeModule, client: HookClient, request: HookRequest): number {
  const check = mod.checkTranscriptPath(request.transcriptPath ?? "");
  if (!check.ok) {
    mod.appendHookLog({ client, event: "session-end", outcome: "skipped", reason: check.reason, transcript: request.transcriptPath });
    return 0;
  }
  const spawned = mod.spawnReflect({
    node: process.execPath,
    cmScript: mod.currentCmScript(),
    transcript: check.path,
    client,
    cwd: request.cwd !== undefined && isDirectory(request.cwd) ? request.cwd : undefined,
  });
  mod.appendHookLog(
    spawned.started
      ? { client, event: "session-end", outcome: "reflect-started", transcript: check.path, pid: spawned.pid, output: spawned.output }
      : { client, event: "session-end", outcome: "skipped", reason: spawned.reason, transcript: check.path },
  );
  return 0;
}

type Ranked = ContextResult["relevantBullets"][number];

async function rulesAnswer(
  mod: RuntimeModule,
  rt: Runtime,
  client: HookClient,
  event: HookEventSpec,
  request: HookRequest,
  cliName: string,
  maxTokens: number,
): Promise<HookAnswer | null> {
  let rules: HookRule[];
  let warning: string | undefined;
  let heading: string;
  if (request.action === "prompt") {
    const result = (await runOperation(contextOperation, rt.deps, {
      task: (request.prompt ?? "").slice(0, mod.HOOK_PROMPT_MAX_CHARS),
      noHistory: true,
      currentDir: process.cwd(),
      limit: 20,
    })) as ContextResult;
    const ranked: Array<Ranked & { anti: boolean }> = [
      ...result.relevantBullets.map((b) => ({ ...b, anti: false })),
      ...result.antiPatterns.map((b) => ({ ...b, anti: true })),
    ].sort((a, b) => b.finalScore - a.finalScore);
    rules = ranked.map((b) => ({ id: b.id, content: b.content, antiPattern: b.anti }));
    heading = "cass-memory rules for this prompt (best first):";
    if (result.traumaWarning !== undefined) {
      const t = result.traumaWarning;
      warning = `WARNING (HOT STOVE): this prompt matches a registered trauma. Pattern: ${t.pattern}. Reason: ${t.reason}. Do not run matching commands without explicit approval.`;
    }
  } else {
    const top = await runOperation(topOperation, rt.deps, { count: 10 });
    rules = top.bullets.map((b) => ({ id: b.id, content: b.content }));
    heading = `cass-memory: most effective rules (for a task: ${cliName} context "<task>" --json):`;
  }
  const rendered = mod.renderHookContext({ client, event, rules, ...(warning !== undefined ? { warning } : {}), heading, cliName, maxTokens });
  return rendered.answer;
}

/** Active traumas of the global and the repository layer, global first. */
async function activeTraumas(rt: Runtime): Promise<TraumaEntry[]> {
  const layers = rt.deps.store.locations.repoDir !== null ? (["global", "repo"] as const) : (["global"] as const);
  const out: TraumaEntry[] = [];
  for (const layer of layers) {
    const { records } = await rt.deps.store.readLog(layer, "traumas");
    for (const record of records) {
      const parsed = TraumaEntrySchema.safeParse(record);
      if (parsed.success && parsed.data.status === "active") out.push(parsed.data);
    }
  }
  return out;
}

async function shellGuard(mod: RuntimeModule, rt: Runtime, client: HookClient, event: HookEventSpec, request: HookRequest, cliName: string): Promise<HookAnswer | null> {
  // Core's matcher: bounded input, and invalid or catastrophic patterns are never run.
  const match = findTraumaMatch(await activeTraumas(rt), request.command ?? "");
  if (match === undefined) return null;
  const trauma = match.entry;
  const reason = mod.hotStoveReason(
    {
      id: trauma.id,
      pattern: trauma.pattern,
      reason: trauma.trigger_event.human_message ?? `${trauma.severity} incident`,
      reference: trauma.trigger_event.session_path,
    },
    cliName,
    Boolean(process.env.CASS_MEMORY_NO_EMOJI),
  );
  mod.appendHookLog({ client, event: event.event, outcome: "denied", trauma: trauma.id });
  return mod.denyAnswer(client, event, reason);
}
