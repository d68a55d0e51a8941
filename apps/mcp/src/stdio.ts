import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createServerContext, type ServerContext, type ServerContextOptions } from "./context.js";
import { SHUTDOWN_GRACE_MS } from "./signals.js";
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
  /**
   * Stops the server once the requests already received have been answered (at most `graceMs`,
   * default SHUTDOWN_GRACE_MS, later ones are dropped). Used at end of input and on signals, so a
   * client that writes a request and closes its end still gets the answer, and the write it
   * asked for is done (with its lock released) rather than cut off half-way.
   */
  close(graceMs?: number): Promise<void>;
  /** Requests received and not yet answered. */
  pending(): number;
}


type JsonRpcId = string | number;
const requestId = (message: unknown): JsonRpcId | undefined => {
  if (typeof message !== "object" || message === null || !("method" in message) || !("id" in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
};
const responseId = (message: unknown): JsonRpcId | undefined => {
  if (typeof message !== "object" || message === null || "method" in message || !("id" in message)) return undefined;
  const id = (message as { id: unknown }).id;
  return typeof id === "string" || typeof id === "number" ? id : undefined;
};

export async function runStdioServer(options: StdioServerOptions = {}): Promise<StdioServerHandle> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const context = options.context ?? (await createServerContext(options));
  const server = createCmMcpServer(context);
  const transport = new StdioServerTransport(options.stdin, options.stdout);
  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  server.server.onclose = () => markClosed();
  await server.connect(transport);

  // Track the requests in flight: ids in from the client, their answers out.
  const inFlight = new Set<JsonRpcId>();
  let drained: (() => void) | null = null;
  const receive = transport.onmessage;
  transport.onmessage = (message: JSONRPCMessage) => {
    const id = requestId(message);
    if (id !== undefined) inFlight.add(id);
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message: JSONRPCMessage) => {
    try {
      await send(message);
    } finally {
      const id = responseId(message);
      if (id !== undefined && inFlight.delete(id) && inFlight.size === 0) drained?.();
    }
  };

  log(`cass-memory MCP server ${context.version} on stdio (tools: ${toolNames().join(", ")}; resources: ${resourceUris().join(", ")})`);
  let closing: Promise<void> | null = null;
  return {
    context,
    closed,
    pending: () => inFlight.size,
    close(graceMs = SHUTDOWN_GRACE_MS) {
      closing ??= (async () => {
        if (inFlight.size > 0) {
          await new Promise<void>((resolve) => {
            drained = resolve;
            setTimeout(resolve, graceMs).unref();
          });
        }
        await server.close();
      })();
      return closing;
    },
  };
}
