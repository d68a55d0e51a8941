import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import type { HookSetupResult, SetupResult } from "@cass-memory/runtime";
import { emit, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, tildify } from "../human.js";
import { writeStderr, writeStdout } from "../output.js";

interface SetupFlags {
  scope?: string;
  command?: string;
  http?: string;
  dryRun?: boolean;
  agentsMd?: boolean;
  hooks?: boolean;
  uninstall?: boolean;
  json?: boolean;
}

/** Client → user file → project file, for the help text. */
const FILE_TABLE: Array<[string, string, string]> = [
  ["claude-code", "user*: ~/.claude.json, key mcpServers", "project: .mcp.json"],
  ["codex", "user*: ~/.codex/config.toml, [mcp_servers.cass-memory]", "project: .codex/config.toml"],
  ["cursor", "user*: ~/.cursor/mcp.json, key mcpServers", "project: .cursor/mcp.json"],
  ["vscode", "user: <VS Code user dir>/mcp.json, key servers", "project*: .vscode/mcp.json"],
  ["gemini", "user*: ~/.gemini/settings.json, key mcpServers", "project: .gemini/settings.json"],
  ["windsurf", "user*: ~/.codeium/windsurf/mcp_config.json, key mcpServers", ""],
];

/** `cm setup <client>`: writes the client's MCP configuration for cm-mcp (the work is in runtime's setupClient). */
export function registerSetup(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("setup")
    .description("Configure an MCP client (claude-code, codex, cursor, vscode, gemini, windsurf) to use the cm-mcp server")
    .argument("<client>", "claude-code | codex | cursor | vscode | gemini | windsurf")
    .option("--scope <scope>", "user (all projects) or project (this repository); default: project for vscode, user otherwise")
    .option("--command <path>", "the stdio server executable (default: cm-mcp on the client's PATH)")
    .option("--http <url>", "configure the Streamable HTTP endpoint of 'cm serve' instead of stdio")
    .option("--dry-run", "print what would be written; change nothing")
    .option("--agents-md", "also add a short cass-memory block to AGENTS.md (CLAUDE.md for claude-code when present) at the repository root")
    .option("--hooks", "also install lifecycle hooks (rules on each prompt, HOT STOVE shell guard, learning at session end) running 'cm hook'")
    .option("--uninstall", "with --hooks: remove cm's hook entries (other hooks are kept); the MCP entry is left as it is")
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        'Files written (server name "cass-memory"; * = default scope):',
        ...FILE_TABLE.map(([client, user, project]) => `  ${client.padEnd(12)} ${user.padEnd(58)} ${project}`.trimEnd()),
        "An existing file is merged (other servers and keys are kept) and backed up as <file>.backup.<epoch-ms>.",
        "",
        "Hook files written by --hooks (cm's entries run '<node> <cm.js> hook <client> <event>'):",
        "  claude-code  ~/.claude/settings.json | .claude/settings.json: UserPromptSubmit, SessionEnd, PreToolUse (Bash)",
        "  codex        ~/.codex/hooks.json | .codex/hooks.json: UserPromptSubmit, PreToolUse (Bash)",
        "  gemini       ~/.gemini/settings.json | .gemini/settings.json: BeforeAgent, SessionEnd, BeforeTool (run_shell_command)",
        "  cursor       ~/.cursor/hooks.json | .cursor/hooks.json: sessionStart, beforeShellExecution",
        "  windsurf     ~/.codeium/windsurf/hooks.json | .windsurf/hooks.json: pre_run_command",
        "  vscode       none (see docs/hooks.md)",
        "",
        "Examples:",
        `  ${cli} setup claude-code`,
        `  ${cli} setup codex --dry-run`,
        `  ${cli} setup vscode --scope project --agents-md`,
        `  ${cli} setup cursor --command /usr/local/bin/cm-mcp --json`,
        `  ${cli} setup gemini --http http://127.0.0.1:8765/mcp`,
        `  ${cli} setup claude-code --hooks --dry-run`,
        `  ${cli} setup claude-code --hooks --uninstall`,
        "",
      ].join("\n"),
    )
    .action(async (client: string, flags: SetupFlags) => {
      const json = Boolean(flags.json);
      ctx.begin("setup", json);
      const { clientSpec, hookClientSpec, setupClient, setupHooks } = await import("@cass-memory/runtime");
      if (flags.uninstall && !flags.hooks) {
        throw new AppError("INVALID_INPUT", "--uninstall removes cm's hook entries: use it with --hooks.", {
          hint: `${cli} setup ${client} --hooks --uninstall`,
          details: { field: "uninstall" },
        });
      }
      // Refuse a client without hooks, or a hook file cm cannot rewrite, before anything is written.
      if (flags.hooks) {
        hookClientSpec(client);
        await setupHooks({ client, scope: flags.scope, uninstall: Boolean(flags.uninstall), dryRun: true });
      }
      // Hooks alone: --uninstall, or a scope the client's MCP configuration does not have
      // (Windsurf's MCP file is user-only, its hooks also exist per project).
      const scope = flags.scope?.trim().toLowerCase();
      const mcpScopeMissing = flags.hooks === true && scope !== undefined && !(clientSpec(client).scopes as readonly string[]).includes(scope);
      if (flags.hooks && (flags.uninstall || mcpScopeMissing)) {
        const hooks = await setupHooks({ client, scope: flags.scope, uninstall: Boolean(flags.uninstall), dryRun: Boolean(flags.dryRun) });
        if (mcpScopeMissing && !flags.uninstall) hooks.notes.push(`${clientSpec(client).label} has no ${scope}-scope MCP configuration, so only the hooks were written; '${cli} setup ${client}' writes the user-scope server entry.`);
        if (!flags.uninstall) hooks.notes.push(daemonNote(cli));
        if (!json) for (const w of hooks.warnings) writeStderr(`Warning: ${w}`);
        if (hooks.dryRun && !json) {
          renderHooksDryRun(hooks);
          return;
        }
        emit(ctx, { client: hooks.client, hooks }, () => renderHooks(hooks), hooks.warnings.length > 0 ? { warnings: hooks.warnings } : undefined);
        return;
      }
      const result: SetupResult & { hooks?: HookSetupResult } = await setupClient({
        client,
        scope: flags.scope,
        command: flags.command,
        http: flags.http,
        dryRun: Boolean(flags.dryRun),
        agentsMd: Boolean(flags.agentsMd),
        cliName: cli,
      });
      if (flags.hooks) {
        result.hooks = await setupHooks({ client, scope: flags.scope, dryRun: Boolean(flags.dryRun) });
        result.hooks.notes.push(daemonNote(cli));
      }
      const hookWarnings = result.hooks?.warnings ?? [];
      if (!json) for (const w of hookWarnings) writeStderr(`Warning: ${w}`);
      const label = clientSpec(result.client).label;
      if (result.dryRun && !json) {
        renderDryRun(result, label);
        if (result.hooks !== undefined) renderHooksDryRun(result.hooks);
        return;
      }
      emit(ctx, result, () => [...render(result, label), ...(result.hooks !== undefined ? renderHooks(result.hooks) : [])], hookWarnings.length > 0 ? { warnings: hookWarnings } : undefined);
    });
}

function describeTransport(r: SetupResult): string {
  if (r.transport === "http") return `${String(r.config.url ?? r.config.httpUrl ?? r.config.serverUrl)} (HTTP)`;
  const args = Array.isArray(r.config.args) ? (r.config.args as string[]) : [];
  return `${[String(r.config.command), ...args].join(" ")} (stdio)`;
}

function render(r: SetupResult, label: string): string[] {
  const lines: string[] = [];
  if (r.action === "unchanged") {
    lines.push(`${icon.bullet()} ${label}: ${tildify(r.path)} already has server "${r.server}" → ${describeTransport(r)}; nothing changed`);
  } else {
    lines.push(green(`${icon.success()} ${label}: ${r.action} ${tildify(r.path)} (${r.scope} scope)`));
    lines.push(`  server "${r.server}" → ${describeTransport(r)}`);
    if (r.backup !== undefined) lines.push(`  backup: ${tildify(r.backup)}`);
  }
  if (r.agentsMd !== undefined) {
    lines.push(
      r.agentsMd.action === "unchanged"
        ? `${icon.bullet()} ${tildify(r.agentsMd.path)} already has the cass-memory block; nothing changed`
        : green(`${icon.success()} ${r.agentsMd.action} the cass-memory block in ${tildify(r.agentsMd.path)}`),
    );
  }
  if (r.action !== "unchanged" && r.notes.length > 0) {
    lines.push("", bold("Next:"), ...r.notes.map((n) => `  ${n}`));
  }
  return lines;
}

/** Dry run (human): the content of each file goes to stdout, what would happen to stderr. */
function renderDryRun(r: SetupResult, label: string): void {
  const verb = r.action === "unchanged" ? "would leave unchanged" : `would ${r.action === "created" ? "create" : "update"}`;
  writeStderr(dim(`# dry run (${label}, ${r.scope} scope): ${verb} ${tildify(r.path)}; nothing written`));
  writeStdout(ensureNewline(r.content ?? ""));
  if (r.agentsMd !== undefined) {
    const agentsVerb = r.agentsMd.action === "unchanged" ? "would leave unchanged" : `would ${r.agentsMd.action === "created" ? "create" : "update"}`;
    writeStderr(dim(`# dry run: ${agentsVerb} ${tildify(r.agentsMd.path)}`));
    writeStdout(ensureNewline(r.agentsMd.content ?? ""));
  }
}

function ensureNewline(text: string): string {
  return text === "" || text.endsWith("\n") ? text : `${text}\n`;
}

function describeEntry(e: HookSetupResult["entries"][number]): string {
  return `${e.event}${e.matcher !== undefined ? ` (${e.matcher})` : ""}`;
}

function renderHooks(h: HookSetupResult): string[] {
  const lines: string[] = [];
  if (h.action === "unchanged") {
    lines.push(`${icon.bullet()} hooks: ${tildify(h.path)} ${h.uninstall ? "has no cm hooks" : "already has cm's hooks"}; nothing changed`);
  } else {
    lines.push(green(`${icon.success()} hooks: ${h.action} ${tildify(h.path)} (${h.scope} scope)`));
    if (h.backup !== undefined) lines.push(`  backup: ${tildify(h.backup)}`);
  }
  for (const e of h.entries) lines.push(`  ${e.status.padEnd(9)} ${describeEntry(e)}${e.reason !== undefined ? dim(` (${e.reason})`) : ""}`);
  if (!h.uninstall) {
    const command = h.entries.find((e) => e.status !== "removed" && e.status !== "skipped")?.command;
    if (command !== undefined) lines.push(dim(`  command: ${command}`));
  }
  if (h.action !== "unchanged" && h.notes.length > 0) lines.push(...h.notes.map((n) => `  ${n}`));
  return lines;
}

function renderHooksDryRun(h: HookSetupResult): void {
  const verb = h.action === "unchanged" ? "would leave unchanged" : `would ${h.action === "created" ? "create" : h.action === "removed" ? "remove cm's hooks from" : "update"}`;
  writeStderr(dim(`# dry run (hooks, ${h.scope} scope): ${verb} ${tildify(h.path)}; nothing written`));
  writeStdout(ensureNewline(h.content ?? ""));
}

/** Hooks run cm on every prompt and shell command: the resident process answers them faster. */
function daemonNote(cli: string): string {
  return `The hooks run ${cli} on every prompt and shell command; '${cli} daemon start' (or CASS_MEMORY_DAEMON=auto in the agent's environment) answers them in about half the time.`;
}
