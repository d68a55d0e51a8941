import { spawn } from "node:child_process";

/**
 * Runs the `cass` binary once: argv only (never a shell), a deadline that kills the child and its
 * process group, and byte caps on stdout and stderr. Never rejects; every way a run can end is a
 * value of {@link RunOutcome}.
 */

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  maxStdoutBytes: number;
  maxStderrBytes: number;
  cwd?: string;
}

export type RunOutcome =
  /** The process ran and exited on its own (any exit code). */
  | { kind: "exited"; code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }
  /** The process could not be started (`ENOENT`, `EACCES`, …). */
  | { kind: "spawn-failed"; errno: string; message: string }
  /** The deadline passed; the process (group) was killed. */
  | { kind: "timeout"; timeoutMs: number; stdout: string; stderr: string }
  /** One stream went over its cap; the process (group) was killed. */
  | { kind: "overflow"; stream: "stdout" | "stderr"; limit: number; stdout: string; stderr: string };

/** How long to wait for the streams to close after a kill before giving up on them. */
const CLOSE_GRACE_MS = 2_000;

const useProcessGroup = process.platform !== "win32";

export function runCass(file: string, args: readonly string[], options: RunOptions): Promise<RunOutcome> {
  return new Promise<RunOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: RunOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      resolve(outcome);
    };

    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(file, [...args], {
        env: options.env,
        stdio: ["ignore", "pipe", "pipe"],
        shell: false,
        windowsHide: true,
        // Own process group, so a timeout can take down anything cass started too.
        detached: useProcessGroup,
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      });
    } catch (error) {
      resolve(spawnFailure(error));
      return;
    }

    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let stopped: { kind: "timeout" } | { kind: "overflow"; stream: "stdout" | "stderr"; limit: number } | undefined;
    let graceTimer: NodeJS.Timeout | undefined;

    const text = (chunks: Buffer[]): string => Buffer.concat(chunks).toString("utf8");
    const stoppedOutcome = (): RunOutcome | undefined => {
      if (stopped === undefined) return undefined;
      if (stopped.kind === "timeout") return { kind: "timeout", timeoutMs: options.timeoutMs, stdout: text(out), stderr: text(err) };
      return { kind: "overflow", stream: stopped.stream, limit: stopped.limit, stdout: text(out), stderr: text(err) };
    };

    const stop = (reason: NonNullable<typeof stopped>): void => {
      if (stopped !== undefined || settled) return;
      stopped = reason;
      killTree(child);
      // If something outside the group still holds the pipes, do not wait for it forever.
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        const outcome = stoppedOutcome();
        if (outcome) finish(outcome);
      }, CLOSE_GRACE_MS);
      graceTimer.unref();
    };

    const deadline = setTimeout(() => stop({ kind: "timeout" }), Math.max(1, options.timeoutMs));

    child.stdout?.on("data", (chunk: Buffer) => {
      if (stopped !== undefined) return;
      outBytes += chunk.length;
      if (outBytes > options.maxStdoutBytes) {
        stop({ kind: "overflow", stream: "stdout", limit: options.maxStdoutBytes });
        return;
      }
      out.push(chunk);
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      if (stopped !== undefined) return;
      errBytes += chunk.length;
      if (errBytes > options.maxStderrBytes) {
        stop({ kind: "overflow", stream: "stderr", limit: options.maxStderrBytes });
        return;
      }
      err.push(chunk);
    });

    child.on("error", (error) => {
      // Emitted when the process could not be spawned (or, rarely, could not be signalled).
      if (child.pid === undefined) finish(spawnFailure(error));
    });

    child.on("close", (code, signal) => {
      const outcome = stoppedOutcome();
      if (outcome) {
        finish(outcome);
        return;
      }
      finish({ kind: "exited", code, signal, stdout: text(out), stderr: text(err) });
    });
  });
}

function spawnFailure(error: unknown): RunOutcome {
  const errno = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "UNKNOWN";
  const message = error instanceof Error ? error.message : String(error);
  return { kind: "spawn-failed", errno, message };
}

function killTree(child: ReturnType<typeof spawn>): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (useProcessGroup) {
    try {
      process.kill(-pid, "SIGKILL");
      return;
    } catch {
      // The group may already be gone; fall back to the child itself.
    }
  }
  try {
    child.kill("SIGKILL");
  } catch {
    // Already exited.
  }
}
