import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import type { OperationDeps } from "@cass-memory/core";
import { createRuntime, type Runtime, type RuntimeOptions } from "@cass-memory/runtime";
import { createAdmissionController, resolveAdmissionLimits, type AdmissionController } from "./admission.js";
import { packageVersion } from "./version.js";

/**
 * What every request of one server process shares: the runtime (configuration, store, history
 * source, learning components — built once, never per request), the admission controller and the
 * server's working directory (the default workspace of `cm_context`).
 */
export interface ServerContext {
  readonly runtime: Runtime;
  /** The runtime's deps, with the audit-journal actor set to `mcp`. */
  readonly deps: OperationDeps;
  /** Canonical working directory of the server. */
  readonly cwd: string;
  /** Version reported in `serverInfo`. */
  readonly version: string;
  readonly env: NodeJS.ProcessEnv;
  readonly admission: AdmissionController;
}

export interface ServerContextOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Reported in `serverInfo` (default: this package's version). */
  version?: string;
  /** An existing runtime to use (its env/cwd should match `env`/`cwd`). */
  runtime?: Runtime;
  /** Extra options for the runtime created when `runtime` is absent (e.g. `loadLlm`, `verbose`). */
  runtimeOptions?: Omit<RuntimeOptions, "env" | "cwd">;
}

/** Name reported in `serverInfo` (the original's). */
export const SERVER_NAME = "cass-memory";
/** Journal actor of mutations made through MCP tools. */
export const MCP_ACTOR = "mcp";

function canonical(path: string): string {
  const absolute = resolve(path);
  try {
    return realpathSync(absolute);
  } catch {
    return absolute;
  }
}

export async function createServerContext(options: ServerContextOptions = {}): Promise<ServerContext> {
  const env = options.env ?? process.env;
  const cwd = canonical(options.cwd ?? process.cwd());
  const version = options.version ?? packageVersion();
  const runtime =
    // A server reads the same playbook on every call: keep it parsed while the file is unchanged.
    options.runtime ?? (await createRuntime({ cliName: "cm", version, memoizeReads: true, ...options.runtimeOptions, env, cwd }));
  return {
    runtime,
    deps: { ...runtime.deps, actor: MCP_ACTOR },
    cwd,
    version,
    env,
    admission: createAdmissionController(resolveAdmissionLimits(runtime.config, env)),
  };
}
