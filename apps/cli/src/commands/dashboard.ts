import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Command } from "commander";
import { AppError } from "@cass-memory/core";
import { emit, loadLlm, loadPostgresStore, loadSqliteStore, type CliContext } from "../cli-context.js";
import { intOption } from "../options.js";
import { withUnredacted } from "../output.js";
import { VERSION } from "../version.js";

type DashboardModule = Pick<
  typeof import("@cass-memory/mcp"),
  "createServerContext" | "exitOnSignals"
> &
  Pick<typeof import("@cass-memory/dashboard"), "dashboardStoreInfo" | "startDashboardServer">;

/** The separately bundled server (`dist/cm-serve.cjs`, which holds the dashboard too); from sources, the packages. */
async function loadDashboard(): Promise<DashboardModule> {
  const bundled = join(__dirname, "cm-serve.cjs");
  if (existsSync(bundled)) return require(bundled) as DashboardModule;
  const [mcp, dashboard] = await Promise.all([import("@cass-memory/mcp"), import("@cass-memory/dashboard")]);
  return { ...mcp, ...dashboard };
}

/**
 * The built page: `dist/dashboard-ui/` beside the CLI bundle (copied there by the CLI's build), else
 * (running from sources) the dashboard package's `dist/ui/`.
 */
export function dashboardUiDir(): string {
  const bundled = join(__dirname, "dashboard-ui");
  if (existsSync(bundled)) return bundled;
  try {
    return join(dirname(require.resolve("@cass-memory/dashboard/package.json")), "dist", "ui");
  } catch {
    return bundled;
  }
}

/** Whether a browser can be opened here: always on macOS and Windows, with a display on Linux/BSD. */
export function canOpenBrowser(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): boolean {
  if (platform === "darwin" || platform === "win32") return true;
  return Boolean(env.DISPLAY?.trim() || env.WAYLAND_DISPLAY?.trim());
}

function openBrowser(url: string): boolean {
  const [command, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", '""', url.replace(/&/g, "^&")]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(command, args, { stdio: "ignore", detached: true });
    child.on("error", () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

interface DashboardFlags {
  host?: string;
  port?: string;
  token?: string;
  open?: boolean;
  json?: boolean;
}

/**
 * `cm dashboard`: the web dashboard on its own HTTP server (127.0.0.1, a free port, a fresh token
 * unless given), opened in the browser when there is a display. Runs until Ctrl-C / SIGTERM.
 */
export function registerDashboard(program: Command, ctx: CliContext): void {
  const cli = ctx.cliName;
  program
    .command("dashboard")
    .description("Open the web dashboard of the playbook (local server, token-protected)")
    .option("--host <host>", "bind address (default 127.0.0.1); anything else exposes the dashboard to the network (token still required)")
    .option("--port <n>", "port (default 0: a free port)")
    .option("--token <token>", "the access token (default: a random one per start)")
    .option("--no-open", "do not open a browser; just print the URL")
    .option("-j, --json", "print {url, host, port} as a JSON envelope (then keep serving)")
    .addHelpText(
      "after",
      `\nExamples:\n  ${cli} dashboard                       # opens http://127.0.0.1:<port>/dashboard/#token=…\n  ${cli} dashboard --no-open --port 8766\n  ${cli} dashboard --json --no-open       # for scripts: the URL as JSON\n\nAlso served by '${cli} serve' at /dashboard (with its MCP_HTTP_TOKEN, if any). Ctrl-C stops it.\n`,
    )
    .action(async (flags: DashboardFlags) => {
      ctx.begin("dashboard", Boolean(flags.json));
      const port = intOption("port", flags.port, 0);
      if (port !== undefined && port > 65535) {
        throw new AppError("INVALID_INPUT", "port must be <= 65535.", { hint: `${cli} dashboard --port 8766`, details: { field: "port", received: port } });
      }
      if (flags.host !== undefined && flags.host.trim() === "") {
        throw new AppError("INVALID_INPUT", "host must be a non-empty string.", { hint: `${cli} dashboard --host 127.0.0.1` });
      }
      if (flags.token !== undefined && flags.token.trim().length < 8) {
        throw new AppError("INVALID_INPUT", "token must be at least 8 characters.", { hint: `${cli} dashboard   (a random token is made for you)` });
      }
      const uiDir = dashboardUiDir();
      if (!existsSync(join(uiDir, "index.html"))) {
        throw new AppError("FILE_NOT_FOUND", `The dashboard page is missing (${uiDir}).`, {
          hint: "Reinstall cass-memory; from sources, build it with 'pnpm --filter @cass-memory/dashboard build'.",
          details: { path: uiDir },
        });
      }
      const mod = await loadDashboard();
      const log = (line: string): void => void process.stderr.write(`${line}\n`);
      const context = await mod.createServerContext({ version: VERSION, runtimeOptions: { loadLlm, loadSqliteStore, loadPostgresStore, verbose: ctx.verbose } });
      const handle = await mod.startDashboardServer({
        deps: context.deps,
        uiDir,
        store: mod.dashboardStoreInfo(context.runtime),
        log,
        ...(flags.host !== undefined ? { host: flags.host.trim() } : {}),
        ...(port !== undefined ? { port } : {}),
        ...(flags.token !== undefined ? { token: flags.token.trim() } : {}),
      });
      const close = async (): Promise<void> => {
        await handle.close();
        context.runtime.close();
      };
      mod.exitOnSignals(close, log);
      const opened = flags.open !== false && canOpenBrowser() ? openBrowser(handle.url) : false;
      // The token is ours, made to be read: exempt from the output's secret redaction.
      withUnredacted([handle.token], () =>
        emit(ctx, { url: handle.url, host: handle.host, port: handle.port }, () => [
          `Dashboard: ${handle.url}`,
          opened ? "Opened in your browser. Ctrl-C stops the server." : "Open the URL above in a browser (it carries the access token). Ctrl-C stops the server.",
        ]),
      );
      // Serve until a signal ends the process (the program exits when an action returns).
      await new Promise<never>(() => undefined);
    });
}
