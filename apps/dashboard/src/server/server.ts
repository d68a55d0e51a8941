import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { AppError, type OperationDeps } from "@cass-memory/core";
import { isLoopbackHost } from "@cass-memory/mcp";
import { createDashboardHandler, type DashboardStoreInfo } from "./handler.js";
import { DASHBOARD_PREFIX } from "./constants.js";

/** `cm dashboard`: its own HTTP server on loopback, a random free port and a fresh token by default. */

export const DEFAULT_DASHBOARD_HOST = "127.0.0.1";

export interface DashboardServerOptions {
  deps: OperationDeps;
  uiDir: string;
  /** Default 127.0.0.1. Any other address is accepted (a token is always required) with a warning. */
  host?: string;
  /** Default 0: a free port. */
  port?: number;
  /** Default: 32 random bytes, base64url. */
  token?: string;
  store?: DashboardStoreInfo;
  log?: (line: string) => void;
}

export interface DashboardServerHandle {
  /** `http://host:port/dashboard/#token=…`: opening it signs the page in. */
  url: string;
  /** The URL without the token. */
  baseUrl: string;
  host: string;
  port: number;
  token: string;
  server: Server;
  close(): Promise<void>;
}

export function newDashboardToken(): string {
  return randomBytes(32).toString("base64url");
}

export async function startDashboardServer(options: DashboardServerOptions): Promise<DashboardServerHandle> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const host = (options.host ?? DEFAULT_DASHBOARD_HOST).trim();
  if (host === "") throw new AppError("INVALID_INPUT", "host must be a non-empty string.", { details: { field: "host" } });
  const requestedPort = options.port ?? 0;
  if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
    throw new AppError("INVALID_INPUT", `port must be an integer between 0 and 65535 (got '${requestedPort}').`, {
      details: { field: "port", received: requestedPort },
    });
  }
  const token = options.token?.trim() || newDashboardToken();
  const loopback = isLoopbackHost(host);
  const boundHost = (host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host).toLowerCase();
  let listeningPort = requestedPort;
  const handler = createDashboardHandler({
    deps: options.deps,
    token,
    boundHost,
    port: () => listeningPort,
    // As for `cm serve`: on a non-loopback bind clients use names we cannot know; the token guards it.
    checkRebinding: loopback,
    uiDir: options.uiDir,
    ...(options.store !== undefined ? { store: options.store } : {}),
  });
  const server = createServer((req, res) => {
    if (handler(req, res)) return;
    req.resume();
    if ((req.url ?? "/").split("?")[0] === "/") {
      res.writeHead(302, { location: `${DASHBOARD_PREFIX}/` });
      res.end();
      return;
    }
    const text = JSON.stringify({ ok: false, error: { code: "NOT_FOUND", message: "Not found: the dashboard is at /dashboard/." } });
    res.writeHead(404, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store", "x-content-type-options": "nosniff" });
    res.end(text);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(requestedPort, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    throw new AppError("NETWORK_ERROR", `Cannot listen on ${host}:${requestedPort}: ${error instanceof Error ? error.message : String(error)}`, {
      ...(code === "EADDRINUSE" ? { hint: "Another process uses this port: pick another one with --port, or --port 0 for a free one." } : {}),
      details: { host, port: requestedPort, ...(typeof code === "string" ? { errno: code } : {}) },
      cause: error,
    });
  });
  const port = (server.address() as AddressInfo).port;
  listeningPort = port;
  if (!loopback) log(`Warning: the dashboard is bound to '${host}': anyone who can reach it and has the token can read and change your memory.`);
  const urlHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const baseUrl = `http://${urlHost}:${port}${DASHBOARD_PREFIX}/`;
  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 2000).unref();
    });
    return closing;
  };
  return { url: `${baseUrl}#token=${encodeURIComponent(token)}`, baseUrl, host, port, token, server, close };
}
