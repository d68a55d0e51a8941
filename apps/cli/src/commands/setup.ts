import type { Command } from "commander";
import type { SetupResult } from "@cass-memory/runtime";
import { emit, type CliContext } from "../cli-context.js";
import { bold, dim, green, icon, tildify } from "../human.js";
import { writeStderr, writeStdout } from "../output.js";

interface SetupFlags {
  scope?: string;
  command?: string;
  http?: string;
  dryRun?: boolean;
  agentsMd?: boolean;
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
    .option("-j, --json", "output a JSON envelope")
    .addHelpText(
      "after",
      [
        "",
        'Files written (server name "cass-memory"; * = default scope):',
        ...FILE_TABLE.map(([client, user, project]) => `  ${client.padEnd(12)} ${user.padEnd(58)} ${project}`.trimEnd()),
        "An existing file is merged (other servers and keys are kept) and backed up as <file>.backup.<epoch-ms>.",
        "",
        "Examples:",
        `  ${cli} setup claude-code`,
        `  ${cli} setup codex --dry-run`,
        `  ${cli} setup vscode --scope project --agents-md`,
        `  ${cli} setup cursor --command /usr/local/bin/cm-mcp --json`,
        `  ${cli} setup gemini --http http://127.0.0.1:8765/mcp`,
        "",
      ].join("\n"),
    )
    .action(async (client: string, flags: SetupFlags) => {
      const json = Boolean(flags.json);
      ctx.begin("setup", json);
      const { clientSpec, setupClient } = await import("@cass-memory/runtime");
      const result = await setupClient({
        client,
        scope: flags.scope,
        command: flags.command,
        http: flags.http,
        dryRun: Boolean(flags.dryRun),
        agentsMd: Boolean(flags.agentsMd),
        cliName: cli,
      });
      const label = clientSpec(result.client).label;
      if (result.dryRun && !json) {
        renderDryRun(result, label);
        return;
      }
      emit(ctx, result, () => render(result, label));
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
