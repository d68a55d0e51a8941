import { packageVersion } from "./version.js";

/** `cm-mcp`: the cass-memory MCP server. stdio by default; `--http` serves Streamable HTTP instead. */

const HELP = `Usage: cm-mcp [options]

The cass-memory MCP server: cm's memory as MCP tools and resources.

Options:
  --stdio           serve MCP over stdin/stdout (default)
  --http            serve Streamable HTTP instead (stateless, JSON responses, any path)
  --host <host>     HTTP bind address (default 127.0.0.1; env MCP_HTTP_HOST)
  --port <n>        HTTP port (default 8765; env MCP_HTTP_PORT)
  -V, --version     print the version
  -h, --help        show this help

Environment:
  MCP_HTTP_TOKEN              require 'Authorization: Bearer <token>' or 'X-MCP-Token' (HTTP)
  MCP_HTTP_UNSAFE_NO_TOKEN=1  allow a non-loopback bind without a token (not recommended)
  MCP_CASS_MAX_CONCURRENCY, MCP_CASS_MAX_QUEUE, MCP_CASS_QUEUE_TIMEOUT_MS
                              admission control of history-searching calls

Examples:
  cm-mcp                                   # stdio, for clients that start the server
  cm-mcp --http --port 8765                # http://127.0.0.1:8765/
  MCP_HTTP_TOKEN=secret cm-mcp --http --host 0.0.0.0
`;

interface Args {
  http: boolean;
  host?: string;
  port?: number;
}

function usageError(message: string): never {
  process.stderr.write(`cm-mcp: error: ${message}\nRun 'cm-mcp --help' for usage.\n`);
  process.exit(2);
}

function parseArgs(argv: readonly string[]): Args | "help" | "version" {
  const args: Args = { http: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) usageError(`option '${flag}' needs a value`);
      return v;
    };
    switch (flag) {
      case "-h":
      case "--help":
        return "help";
      case "-V":
      case "-v":
      case "--version":
        return "version";
      case "--stdio":
        args.http = false;
        break;
      case "--http":
        args.http = true;
        break;
      case "--host":
        args.host = value();
        break;
      case "--port": {
        const raw = value();
        if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > 65535) usageError(`--port must be an integer between 1 and 65535 (got '${raw}')`);
        args.port = Number(raw);
        break;
      }
      default:
        usageError(`unknown option '${arg}'`);
    }
  }
  if (!args.http && (args.host !== undefined || args.port !== undefined)) usageError("--host and --port need --http");
  return args;
}

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** Exits after releasing any store lock an interrupted write still holds. */
function exitAfterLocks(code: number): void {
  void import("@cass-memory/runtime")
    .then(({ releaseAllLocks }) => releaseAllLocks(), () => undefined)
    .finally(() => process.exit(code));
}

async function main(): Promise<void> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed === "help") {
    process.stdout.write(HELP);
    return;
  }
  if (parsed === "version") {
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  // Loaded only now, so that --help and --version answer at once.
  const { exitOnSignals } = await import("./signals.js");
  if (parsed.http) {
    const { startHttpServer } = await import("./http.js");
    const handle = await startHttpServer({
      ...(parsed.host !== undefined ? { host: parsed.host } : {}),
      ...(parsed.port !== undefined ? { port: parsed.port } : {}),
      log,
    });
    exitOnSignals(handle.close, log);
    return;
  }
  const { runStdioServer } = await import("./stdio.js");
  const handle = await runStdioServer({ log });
  exitOnSignals(() => handle.close(), log);
  // The client closing our stdin ends the session, once what it already asked for is answered.
  process.stdin.once("end", () => void handle.close().finally(() => exitAfterLocks(0)));
  void handle.closed.then(() => exitAfterLocks(0));
}

main().catch(async (error: unknown) => {
  const { toAppError } = await import("@cass-memory/core");
  const err = toAppError(error);
  process.stderr.write(`cm-mcp: error: ${err.message}\n${err.hint ? `Hint: ${err.hint}\n` : ""}`);
  process.exit(err.exitCode);
});
