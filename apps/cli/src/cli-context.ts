import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Operation } from "@cass-memory/core";
import { redactFor, runOperation } from "@cass-memory/core";
import type { Runtime } from "@cass-memory/runtime";
import { encodeToon, envWantsToon } from "./formats.js";
import { printJson, printLine, setOutputRedactor, successEnvelope, writeStdout, type SuccessExtras } from "./output.js";
import { VERSION } from "./version.js";
import { resolveCliName } from "./cli-name.js";

export { resolveCliName };

/**
 * State shared by the commands of one invocation: the program name, start time, which command
 * is running and whether it answers in JSON (so the error reporter knows how to answer), and the
 * runtime, created lazily (so `--help`/`--version` never load the store or the configuration).
 */

type AnyOperation = Operation<any, any>;
export type OpInput<Op extends AnyOperation> = Parameters<Op["run"]>[1];
export type OpOutput<Op extends AnyOperation> = Awaited<ReturnType<Op["run"]>>;

export interface CliContext {
  readonly cliName: string;
  readonly startedAt: number;
  readonly argv: readonly string[];
  readonly verbose: boolean;
  /** Where errors are reported: envelope command id and output mode (`toon`: the envelope as TOON). */
  current: { command: string; json: boolean; toon?: boolean };
  /** Declares the running command; call first thing in an action. */
  begin(command: string, json: boolean, toon?: boolean): void;
  runtime(): Promise<Runtime>;
  /** The runtime module once loaded (signal handlers use its releaseAllLocks). */
  loadedRuntimeModule: typeof import("@cass-memory/runtime") | null;
  /** Closes the runtime if one was created (a resident process, after each command). */
  dispose(): Promise<void>;
  /** True in the resident process (`cm daemon`): the command must not end the process itself. */
  readonly resident: boolean;
  /** The exit code a command asks for without throwing (`cm hook`'s answers); 0 unless set. */
  exitCode: number;
}

/**
 * Loads the separately bundled LLM layer (`dist/cm-llm.cjs`, next to this bundle). From sources
 * (tests importing the CLI modules) it falls back to the package itself.
 */
export async function loadLlm(): Promise<typeof import("@cass-memory/llm")> {
  const bundled = join(__dirname, "cm-llm.cjs");
  if (existsSync(bundled)) return require(bundled) as typeof import("@cass-memory/llm");
  return import("@cass-memory/llm");
}

/**
 * Loads the SQLite store (`@cass-memory/store-sqlite`), only when `storage.backend` is sqlite. It is
 * bundled into cm-main.cjs as a lazily run module, so better-sqlite3 (a native module, left to
 * `require`) is loaded only here. `cm serve` hands this loader to the server's runtime, so that
 * cm-serve.cjs need not bundle the store.
 */
export function loadSqliteStore(): Promise<typeof import("@cass-memory/store-sqlite")> {
  return import("@cass-memory/store-sqlite");
}

/**
 * Loads the PostgreSQL store (`@cass-memory/store-postgres`), only when `storage.backend` is
 * postgres; like the SQLite store it is a lazily run module of this bundle (pg too), and `cm serve`
 * hands this loader to the server's runtime.
 */
export function loadPostgresStore(): Promise<typeof import("@cass-memory/store-postgres")> {
  return import("@cass-memory/store-postgres");
}

/**
 * True when argv asks for TOON (`--format toon`), or asks for no format while the environment
 * defaults to TOON (used before a command has declared its mode).
 */
export function argvWantsToon(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]?.toLowerCase();
    if (a === "--") break;
    if ((a === "--format" && argv[i + 1]?.toLowerCase() === "toon") || a === "--format=toon") return true;
    if (a === "--format" || a?.startsWith("--format=") || a === "--json" || a === "-j") return false;
  }
  return envWantsToon(env);
}

/** True when argv asks for JSON anywhere (used before a command has declared its mode). */
export function argvWantsJson(argv: readonly string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    if (a === "--json" || a === "-j") return true;
    if (a === "--format" && argv[i + 1]?.toLowerCase() === "json") return true;
    if (a?.toLowerCase() === "--format=json") return true;
  }
  return false;
}

export function createCliContext(argv: readonly string[], options: { verbose: boolean; resident?: boolean }): CliContext {
  const cliName = resolveCliName(argv);
  let runtimePromise: Promise<Runtime> | null = null;
  const ctx: CliContext = {
    cliName,
    startedAt: Date.now(),
    argv,
    verbose: options.verbose,
    current: argvWantsToon(argv.slice(2)) ? { command: cliName, json: true, toon: true } : { command: cliName, json: argvWantsJson(argv.slice(2)) },
    begin(command, json, toon) {
      ctx.current = toon ? { command, json: true, toon: true } : { command, json };
    },
    runtime() {
      runtimePromise ??= import("@cass-memory/runtime").then((mod) => {
        ctx.loadedRuntimeModule = mod;
        // `cm storage …` reports data left in the other backend itself (no start-up warning).
        const quietStorageWarning = argv.slice(2).find((a) => !a.startsWith("-")) === "storage";
        return mod.createRuntime({
          cliName,
          verbose: options.verbose,
          version: VERSION,
          loadLlm,
          loadSqliteStore,
          loadPostgresStore,
          quietStorageWarning,
          ...(options.resident ? { resident: true } : {}),
        });
      }).then((rt) => {
        // From here on, output is redacted with the configured scanner (extras, allowlist).
        const config = rt.deps.config;
        setOutputRedactor(config.sanitization.enabled ? (text) => redactFor(config, text) : (text) => text);
        return rt;
      });
      return runtimePromise;
    },
    loadedRuntimeModule: null,
    resident: Boolean(options.resident),
    exitCode: 0,
    async dispose() {
      if (runtimePromise === null) return;
      try {
        (await runtimePromise).close();
      } catch {
        // no runtime was created: nothing to close
      }
    },
  };
  return ctx;
}

/** Runs an operation against the runtime's deps. */
export async function run<Op extends AnyOperation>(ctx: CliContext, op: Op, input: OpInput<Op>): Promise<OpOutput<Op>> {
  const rt = await ctx.runtime();
  return (await runOperation(op, rt.deps, input as never)) as OpOutput<Op>;
}

/**
 * Runs an operation that learns from sessions (reflect, diary, validate, audit): the runtime's
 * learning components — LLM-backed or deterministic — are loaded first, only for these commands.
 */
export async function runLearning<Op extends AnyOperation>(ctx: CliContext, op: Op, input: OpInput<Op>): Promise<OpOutput<Op>> {
  const rt = await ctx.runtime();
  const learning = await rt.learning();
  return (await runOperation(op, { ...rt.deps, learning }, input as never)) as OpOutput<Op>;
}

/** Prints a result: the success envelope in JSON (or TOON) mode, else the human rendering (if any). */
export function emit(ctx: CliContext, data: unknown, human: () => string | string[] | null, extras?: SuccessExtras): void {
  if (ctx.current.json) {
    const envelope = successEnvelope(ctx.current.command, data, ctx.startedAt, extras);
    if (ctx.current.toon) writeStdout(`${encodeToon(envelope)}\n`);
    else printJson(envelope);
    return;
  }
  const text = human();
  if (text === null) return;
  printLine(Array.isArray(text) ? text.join("\n") : text);
}
