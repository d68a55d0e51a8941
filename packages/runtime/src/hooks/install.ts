import { accessSync, constants, existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { AppError } from "@cass-memory/core";
import { findGitRoot } from "../paths.js";
import type { SetupScope } from "../setup/clients.js";
import { applyFile } from "../setup/setup.js";
import { hookClientSpec, hookConfigPath, type HookClient, type HookEventSpec } from "./clients.js";
import { planHookConfig, type HookEntryReport } from "./config.js";

/**
 * `cm setup <client> --hooks`: writes cm's hook entries into the client's hook configuration,
 * merging with what is there (backup first, atomic write, idempotent), or takes them out again
 * (`--uninstall`). The commands written run cm by absolute paths (node and the cm script that is
 * installing them), because GUI clients do not start hooks with the user's shell PATH.
 */

type Env = Record<string, string | undefined>;

export interface HookSetupOptions {
  client: string;
  scope?: string | undefined;
  uninstall?: boolean | undefined;
  dryRun?: boolean | undefined;
  /** The node executable written into the commands (default process.execPath). */
  node?: string | undefined;
  /** The cm script written into the commands (default: the running script, symlinks resolved). */
  cmScript?: string | undefined;
  cwd?: string | undefined;
  env?: Env | undefined;
  platform?: NodeJS.Platform | undefined;
  now?: (() => number) | undefined;
}

export interface HookSetupResult {
  client: HookClient;
  scope: SetupScope;
  path: string;
  action: "created" | "updated" | "unchanged" | "removed";
  backup?: string;
  dryRun: boolean;
  uninstall: boolean;
  entries: HookEntryReport[];
  /** Problems with the commands written (not runnable as written). */
  warnings: string[];
  notes: string[];
  /** Dry run only: the content that would be written. */
  content?: string;
}

/** Quotes one argument for the shell the client runs hook commands with (sh; cmd on Windows). */
export function shellQuote(arg: string, platform: NodeJS.Platform): string {
  if (platform === "win32") return `"${arg.replace(/"/g, '""')}"`;
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command string for one event: `<node> <cm script> hook <client> <event>`. */
export function hookCommand(node: string, cmScript: string, client: HookClient, event: HookEventSpec, platform: NodeJS.Platform): string {
  return [shellQuote(node, platform), shellQuote(cmScript, platform), "hook", client, event.arg].join(" ");
}

/** The running cm script (argv[1], symlinks resolved, so an npm shim points at the real file). */
export function currentCmScript(argv: readonly string[] = process.argv): string {
  const script = argv[1] ?? "";
  try {
    return realpathSync(script);
  } catch {
    return script;
  }
}

/** Why the command as written would not run (empty: it would). */
export function runnableWarnings(node: string, cmScript: string, platform: NodeJS.Platform): string[] {
  const warnings: string[] = [];
  const check = (path: string, what: string, executable: boolean) => {
    try {
      if (!statSync(path).isFile()) {
        warnings.push(`${what} ${path} is not a file; the hook command will not run.`);
        return;
      }
      accessSync(path, executable && platform !== "win32" ? constants.X_OK : constants.R_OK);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      warnings.push(
        code === "ENOENT"
          ? `${what} ${path} does not exist; the hook command will not run. Re-run 'cm setup --hooks' from the cm you want the hooks to use.`
          : `${what} ${path} is not ${executable ? "executable" : "readable"}; the hook command will not run.`,
      );
    }
  };
  check(node, "node executable", true);
  check(cmScript, "cm script", false);
  return warnings;
}

export async function setupHooks(options: HookSetupOptions): Promise<HookSetupResult> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const platform = options.platform ?? process.platform;
  const now = options.now ?? Date.now;
  const spec = hookClientSpec(options.client);
  const scope = resolveScope(spec.scopes, options.scope, spec.label);
  const uninstall = Boolean(options.uninstall);
  const dryRun = Boolean(options.dryRun);
  const node = options.node ?? process.execPath;
  const cmScript = options.cmScript ?? currentCmScript();
  if (cmScript.trim() === "") {
    throw new AppError("INTERNAL_ERROR", "Could not tell which cm script is running, so no hook command can be written.", {
      hint: "Run cm through its installed binary (cm setup <client> --hooks).",
    });
  }
  const path = hookConfigPath(spec.client, scope, { env, projectRoot: findGitRoot(cwd) });
  const commandFor = (event: HookEventSpec) => hookCommand(node, cmScript, spec.client, event, platform);
  const plan = (text: string | null) => planHookConfig({ spec, commandFor, text, path, uninstall });

  const current = existsSync(path) ? readFileSync(path, "utf8") : null;
  const planned = plan(current);
  const warnings = uninstall ? [] : runnableWarnings(node, cmScript, platform);
  const result: HookSetupResult = {
    client: spec.client,
    scope,
    path,
    action: planned.action,
    dryRun,
    uninstall,
    entries: planned.entries,
    warnings,
    notes: uninstall ? [] : spec.notes(scope),
  };
  if (dryRun) {
    result.content = planned.content;
    return result;
  }
  if (planned.action === "unchanged") return result;
  let final = planned;
  const applied = await applyFile(
    path,
    (text) => {
      final = plan(text);
      return { action: final.action === "removed" ? "updated" : final.action, content: final.content };
    },
    { newFileMode: scope === "user" ? 0o600 : 0o644, backup: true, now },
  );
  result.action = applied.action === "unchanged" ? "unchanged" : final.action;
  result.entries = final.entries;
  if (applied.backup !== undefined) result.backup = applied.backup;
  return result;
}

function resolveScope(scopes: readonly SetupScope[], scope: string | undefined, label: string): SetupScope {
  if (scope === undefined) return "user";
  const value = scope.trim().toLowerCase();
  if (value !== "user" && value !== "project") {
    throw new AppError("INVALID_INPUT", "--scope must be one of: user, project.", { details: { field: "scope", received: scope, allowed: ["user", "project"] } });
  }
  if (!scopes.includes(value)) {
    throw new AppError("INVALID_INPUT", `${label} has no ${value}-scope hook configuration; supported: ${scopes.join(", ")}.`, {
      details: { field: "scope", received: scope, allowed: [...scopes] },
    });
  }
  return value;
}

