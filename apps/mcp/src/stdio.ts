import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createServerContext, type ServerContext, type ServerContextOptions } from "./context.js";
import { resourceUris } from "./resources.js";
import { createCmMcpServer } from "./server.js";
import { toolNames } from "./tools.js";

/**
 * The stdio transport: protocol messages only on stdout. Everything else — the runtime's
 * diagnostics, these startup lines — goes to stderr.
 */

export interface StdioServerOptions extends ServerContextOptions {
  /** Share a context (runtime, admission) with other servers of this process. */
  context?: ServerContext;
  /** Default process.stdin / process.stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Receives the startup line (default: stderr). */
  log?: (line: string) => void;
}

export interface StdioServerHandle {
  context: ServerContext;
  /** Resolves when the transport closes (client gone or `close()`). */
  closed: Promise<void>;
  close(): Promise<void>;
}

export async function runStdioServer(options: StdioServerOptions = {}): Promise<StdioServerHandle> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const context = options.context ?? (await createServerContext(options));
  const server = createCmMcpServer(context);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  server.server.onclose = () => markClosed();
  await server.connect(transport);
  log(`cass-memory MCP server ${context.version} on stdio (tools: ${toolNames().join(", ")}; resources: ${resourceUris().join(", ")})`);
  return {
    context,
    closed,
    async close() {
      await server.close();
    },
  };
}
