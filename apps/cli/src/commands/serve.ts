import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import { loadLlm, loadPostgresStore, loadSqliteStore, type CliContext } from "../cli-context.js";
import { intOption } from "../options.js";
import { VERSION } from "../version.js";
import { dashboardUiDir } from "./dashboard.js";

type ServeModule = Pick<
  typeof import("@cass-memory/mcp"),
  "createServerContext" | "exitOnSignals" | "resolveHttpOptions" | "runStdioServer" | "startHttpServer"
> &
  Pick<typeof import("@cass-memory/dashboard"), "createDashboardHandler" | "dashboardStoreInfo">;

/** The separately bundled server (`dist/cm-serve.cjs`); from sources, the package itself. */
async function loadServer(): Promise<ServeModule> {
  const bundled = join(__dirname, "cm-serve.cjs");
  if (existsSync(bundled)) return require(bundled) as ServeModule;
  const [mcp, dashboard] = await Promise.all([import("@cass-memory/mcp"), import("@cass-memory/dashboard")]);
  return { ...mcp, ...dashboard };
}

interface ServeFlags {
  host?: string;
  port?: string;
  stdio?: boolean;
}

/**
 * `cm serve` (reference §2): the MCP server over Streamable HTTP (default 127.0.0.1:8765, any
 * path, JSON responses; the original's raw JSON-RPC clients keep working), or over stdio with
 * `--stdio` (the same server as `cm-mcp`). Logs go to stderr; stdout carries protocol only.
 */
export function registerServe(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("serve")
    .description("Run the MCP server: Streamable HTTP on 127.0.0.1:8765 (default) or stdio (--stdio)")
    .option("--host <host>", "HTTP bind address (default 127.0.0.1; env MCP_HTTP_HOST); non-loopback needs MCP_HTTP_TOKEN")
    .option("--port <n>", "HTTP port (default 8765; env MCP_HTTP_PORT)")
    .option("--stdio", "speak MCP over stdin/stdout instead of HTTP (what cm-mcp does)")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} serve                                   # http://127.0.0.1:8765/\n  ${cli} serve --port 9000\n  MCP_HTTP_TOKEN=secret ${cli} serve --host 0.0.0.0\n  ${cli} serve --stdio                           # for clients that launch the server\n\nConfigure a client with '${cli} setup <client>'. Tools: cm_context, cm_feedback, cm_outcome,\nmemory_search, memory_reflect, memory_remember, memory_history; resources cm://playbook,\ncm://diary, cm://outcomes, cm://stats, cm://serve.\n`,
    )
    .action(async (flags: ServeFlags) => {
      ctx.begin("serve", false);
      const port = intOption("port", flags.port);
      if (port !== undefined && port > 65535) {
        throw new AppError("INVALID_INPUT", "port must be <= 65535.", { hint: `${cli} serve --port 8765`, details: { field: "port", received: port } });
      }
      if (flags.host !== undefined && flags.host.trim() === "") {
        throw new AppError("INVALID_INPUT", "host must be a non-empty string.", { hint: `${cli} serve --host 127.0.0.1` });
      }
      if (flags.stdio && (flags.host !== undefined || port !== undefined)) {
        throw new AppError("INVALID_INPUT", "--host and --port apply to HTTP only; drop them with --stdio.", { hint: `${cli} serve --stdio` });
      }
      const server = await loadServer();
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const runtimeOptions = { loadLlm, loadSqliteStore, loadPostgresStore, verbose: ctx.verbose };
      if (flags.stdio) {
        const handle = await server.runStdioServer({ version: VERSION, runtimeOptions, log });
        server.exitOnSignals(handle.close, log);
        process.stdin.once("end", () => void handle.close().finally(() => process.exit(0)));
        await handle.closed;
        process.exit(0);
      }
      const bind = { ...(flags.host !== undefined ? { host: flags.host.trim() } : {}), ...(port !== undefined ? { port } : {}) };
      // The bind policy is checked before anything is loaded; the dashboard uses the same token.
      const { token } = server.resolveHttpOptions(bind);
      const context = await server.createServerContext({ version: VERSION, runtimeOptions });
      const dashboard = server.createDashboardHandler({
        deps: context.deps,
        ...(token !== undefined ? { token } : {}),
        uiDir: dashboardUiDir(),
        store: server.dashboardStoreInfo(context.runtime),
      });
      const handle = await server.startHttpServer({ version: VERSION, runtimeOptions, log, context, mounts: [dashboard], ...bind });
      log(`Dashboard: ${handle.url}dashboard/${token !== undefined ? "#token=<MCP_HTTP_TOKEN>" : ""}`);
      server.exitOnSignals(handle.close, log);
      // Serve until a signal ends the process (the program exits when an action returns).
      await new Promise<never>(() => undefined);
    });
}
