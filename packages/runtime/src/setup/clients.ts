import { isAbsolute, join, resolve } from "node:path";
import { AppError } from "@cass-memory/core";
import { homeDir } from "../paths.js";

/**
 * The MCP clients `cm setup` knows: where each keeps its MCP server configuration (per scope) and
 * the shape of a server entry in it. Pure: paths are computed from an injected environment and
 * platform, nothing is read or written here.
 */

type Env = Record<string, string | undefined>;

export const SETUP_CLIENTS = ["claude-code", "codex", "cursor", "vscode", "gemini", "windsurf"] as const;
export type SetupClient = (typeof SETUP_CLIENTS)[number];

export const SETUP_SCOPES = ["user", "project"] as const;
export type SetupScope = (typeof SETUP_SCOPES)[number];

/** The name of our entry in every client's server map. */
export const MCP_SERVER_NAME = "cass-memory";
/** The stdio server's executable (package `@cass-memory/mcp`). */
export const DEFAULT_MCP_COMMAND = "cm-mcp";

export type McpTransport = { kind: "stdio"; command: string; args: string[] } | { kind: "http"; url: string };

/** One server entry as the client's file holds it (a JSON object, or the keys of a TOML table). */
export type ServerEntry = Record<string, unknown>;

export interface ClientSpec {
  readonly client: SetupClient;
  /** Human name ("Claude Code"). */
  readonly label: string;
  readonly format: "json" | "toml";
  readonly defaultScope: SetupScope;
  readonly scopes: readonly SetupScope[];
  /** JSON clients: the top-level key holding the server map. */
  readonly containerKey: string;
  /** Keys of our entry that cm owns: replaced on every run. */
  readonly managedKeys: readonly string[];
  /** Keys only valid for a stdio server: removed from an existing entry when switching to HTTP. */
  readonly stdioOnlyKeys: readonly string[];
  /** Keys only valid for an HTTP server: removed from an existing entry when switching to stdio. */
  readonly httpOnlyKeys: readonly string[];
  entry(transport: McpTransport): ServerEntry;
  /** Things the user should know after writing (restart, trust, …). */
  notes(scope: SetupScope, transport: McpTransport): string[];
}

const stdioArgs = (t: Extract<McpTransport, { kind: "stdio" }>) => ({ command: t.command, args: [...t.args] });

const SPECS: Record<SetupClient, ClientSpec> = {
  "claude-code": {
    client: "claude-code",
    label: "Claude Code",
    format: "json",
    defaultScope: "user",
    scopes: ["user", "project"],
    containerKey: "mcpServers",
    managedKeys: ["type", "command", "args", "url"],
    stdioOnlyKeys: ["env"],
    httpOnlyKeys: ["headers"],
    entry: (t) => (t.kind === "stdio" ? { type: "stdio", ...stdioArgs(t) } : { type: "http", url: t.url }),
    notes: (scope) => [
      "Restart Claude Code (or run /mcp) to load the server; check it with: claude mcp list",
      ...(scope === "project" ? ["Claude Code asks each user to approve servers from a project's .mcp.json on first use."] : []),
    ],
  },
  codex: {
    client: "codex",
    label: "Codex",
    format: "toml",
    defaultScope: "user",
    scopes: ["user", "project"],
    containerKey: "mcp_servers",
    managedKeys: ["command", "args", "url"],
    stdioOnlyKeys: ["env", "env_vars", "cwd"],
    httpOnlyKeys: ["bearer_token_env_var", "http_headers", "env_http_headers"],
    entry: (t) => (t.kind === "stdio" ? stdioArgs(t) : { url: t.url }),
    notes: (scope, t) => [
      "Start a new Codex session to load the server; check it with: codex mcp list",
      ...(scope === "project" ? ["Codex reads a project's .codex/config.toml only when the project is trusted."] : []),
      ...(t.kind === "http" ? ["url servers need a Codex version with Streamable HTTP support; if yours has none, use the stdio default."] : []),
    ],
  },
  cursor: {
    client: "cursor",
    label: "Cursor",
    format: "json",
    defaultScope: "user",
    scopes: ["user", "project"],
    containerKey: "mcpServers",
    managedKeys: ["type", "command", "args", "url"],
    stdioOnlyKeys: ["env", "envFile"],
    httpOnlyKeys: ["headers"],
    entry: (t) => (t.kind === "stdio" ? stdioArgs(t) : { url: t.url }),
    notes: () => ["Cursor picks up the change in Settings → MCP (toggle the server or restart Cursor)."],
  },
  vscode: {
    client: "vscode",
    label: "VS Code",
    format: "json",
    defaultScope: "project",
    scopes: ["user", "project"],
    containerKey: "servers",
    managedKeys: ["type", "command", "args", "url"],
    stdioOnlyKeys: ["env", "envFile", "cwd"],
    httpOnlyKeys: ["headers"],
    entry: (t) => (t.kind === "stdio" ? { type: "stdio", ...stdioArgs(t) } : { type: "http", url: t.url }),
    notes: (scope) => [
      "In VS Code, start the server from the mcp.json code lens or 'MCP: List Servers' (Copilot agent mode).",
      ...(scope === "user" ? ["This is the default profile's mcp.json; other profiles keep their own (use --scope project or add it there)."] : []),
    ],
  },
  gemini: {
    client: "gemini",
    label: "Gemini CLI",
    format: "json",
    defaultScope: "user",
    scopes: ["user", "project"],
    containerKey: "mcpServers",
    managedKeys: ["command", "args", "url", "httpUrl"],
    stdioOnlyKeys: ["env", "cwd"],
    httpOnlyKeys: ["headers"],
    entry: (t) => (t.kind === "stdio" ? stdioArgs(t) : { httpUrl: t.url }),
    notes: () => ["Restart Gemini CLI to load the server; check it with /mcp."],
  },
  windsurf: {
    client: "windsurf",
    label: "Windsurf",
    format: "json",
    defaultScope: "user",
    scopes: ["user"],
    containerKey: "mcpServers",
    managedKeys: ["command", "args", "url", "serverUrl"],
    stdioOnlyKeys: ["env"],
    httpOnlyKeys: ["headers"],
    entry: (t) => (t.kind === "stdio" ? stdioArgs(t) : { serverUrl: t.url }),
    notes: () => ["Refresh the MCP servers in Windsurf's Cascade panel (or restart Windsurf) to load the server."],
  },
};

export function isSetupClient(value: string): value is SetupClient {
  return (SETUP_CLIENTS as readonly string[]).includes(value);
}

/** The spec of a client; INVALID_INPUT listing the valid names for anything else. */
export function clientSpec(client: string): ClientSpec {
  const name = client.trim().toLowerCase();
  if (!isSetupClient(name)) {
    throw new AppError("INVALID_INPUT", `Unknown client "${client}". Valid clients: ${SETUP_CLIENTS.join(", ")}.`, {
      hint: `Run 'cm setup <client>' with one of: ${SETUP_CLIENTS.join(", ")}`,
      details: { field: "client", received: client, allowed: [...SETUP_CLIENTS] },
    });
  }
  return SPECS[name];
}

/** The scope to use: the given one (validated for the client) or the client's default. */
export function resolveScope(spec: ClientSpec, scope: string | undefined): SetupScope {
  if (scope === undefined) return spec.defaultScope;
  const value = scope.trim().toLowerCase();
  if (!(SETUP_SCOPES as readonly string[]).includes(value)) {
    throw new AppError("INVALID_INPUT", `--scope must be one of: ${SETUP_SCOPES.join(", ")}.`, {
      details: { field: "scope", received: scope, allowed: [...SETUP_SCOPES] },
    });
  }
  if (!spec.scopes.includes(value as SetupScope)) {
    throw new AppError("INVALID_INPUT", `${spec.label} has no ${value}-scope MCP configuration; supported: ${spec.scopes.join(", ")}.`, {
      details: { field: "scope", received: scope, allowed: [...spec.scopes] },
    });
  }
  return value as SetupScope;
}

export interface PathContext {
  env: Env;
  platform: NodeJS.Platform;
  /** The project root (git root) for project scope; null outside a repository. */
  projectRoot: string | null;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim() !== "" ? value.trim() : undefined;
}

/** VS Code's per-user data directory (`<appData>/Code/User`), as Electron resolves appData. */
function vscodeUserDir(env: Env, platform: NodeJS.Platform): string {
  const home = homeDir(env);
  if (platform === "darwin") return join(home, "Library", "Application Support", "Code", "User");
  if (platform === "win32") return join(nonEmpty(env.APPDATA) ?? join(home, "AppData", "Roaming"), "Code", "User");
  return join(nonEmpty(env.XDG_CONFIG_HOME) ?? join(home, ".config"), "Code", "User");
}

/** The project root a project-scope file goes under; CONFIG_INVALID outside a repository. */
export function requireProjectRoot(root: string | null, client: string): string {
  if (root !== null) return root;
  throw new AppError("CONFIG_INVALID", "Not in a git repository. Run from within a git repo.", {
    hint: "cd into the repository to configure, or use --scope user",
    details: { client, scope: "project" },
  });
}

/** The configuration file of a client for a scope. Project scope needs a project root. */
export function clientConfigPath(client: SetupClient, scope: SetupScope, ctx: PathContext): string {
  const home = homeDir(ctx.env);
  if (scope === "project") {
    const root = requireProjectRoot(ctx.projectRoot, client);
    switch (client) {
      case "claude-code":
        return join(root, ".mcp.json");
      case "codex":
        return join(root, ".codex", "config.toml");
      case "cursor":
        return join(root, ".cursor", "mcp.json");
      case "vscode":
        return join(root, ".vscode", "mcp.json");
      case "gemini":
        return join(root, ".gemini", "settings.json");
      case "windsurf":
        break;
    }
    throw new AppError("INVALID_INPUT", `${SPECS[client].label} has no project-scope MCP configuration.`, { details: { client, scope } });
  }
  switch (client) {
    case "claude-code":
      return join(home, ".claude.json");
    case "codex":
      return join(nonEmpty(ctx.env.CODEX_HOME) ?? join(home, ".codex"), "config.toml");
    case "cursor":
      return join(home, ".cursor", "mcp.json");
    case "vscode":
      return join(vscodeUserDir(ctx.env, ctx.platform), "mcp.json");
    case "gemini":
      return join(home, ".gemini", "settings.json");
    case "windsurf":
      return join(home, ".codeium", "windsurf", "mcp_config.json");
  }
}

export interface TransportOptions {
  /** Executable for the stdio server (default `cm-mcp`, looked up on the client's PATH). */
  command?: string | undefined;
  /** Configure the Streamable HTTP endpoint instead of stdio. */
  http?: string | undefined;
  cwd: string;
  platform: NodeJS.Platform;
}

/**
 * The transport to configure. A command containing a path separator is made absolute (clients
 * start servers from directories of their choosing); a bare name is left to the client's PATH.
 * On Windows the npm shim `cm-mcp.cmd` cannot be spawned directly, so the command is run through
 * `cmd /c` unless it is an `.exe`.
 */
export function resolveTransport(options: TransportOptions): McpTransport {
  if (options.http !== undefined && options.command !== undefined) {
    throw new AppError("INVALID_INPUT", "--http and --command cannot be combined: choose the HTTP or the stdio transport.", {
      details: { field: "http" },
    });
  }
  if (options.http !== undefined) {
    const raw = options.http.trim();
    let url: URL | null = null;
    try {
      url = new URL(raw);
    } catch {
      url = null;
    }
    if (url === null || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new AppError("INVALID_INPUT", `--http must be an http:// or https:// URL (got "${options.http}").`, {
        hint: "e.g. --http http://127.0.0.1:8765/mcp (start the server with: cm serve)",
        details: { field: "http", received: options.http },
      });
    }
    return { kind: "http", url: raw };
  }
  let command = (options.command ?? DEFAULT_MCP_COMMAND).trim();
  if (command === "") {
    throw new AppError("INVALID_INPUT", "--command must not be empty.", { details: { field: "command" } });
  }
  const windows = options.platform === "win32";
  const hasSeparator = command.includes("/") || (windows && command.includes("\\"));
  if (hasSeparator && !isAbsolute(command)) command = resolve(options.cwd, command);
  if (windows && !/\.exe$/i.test(command)) return { kind: "stdio", command: "cmd", args: ["/c", command] };
  return { kind: "stdio", command, args: [] };
}
