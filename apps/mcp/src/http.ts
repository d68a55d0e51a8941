import { createHash, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { isIPv4, isIPv6, type AddressInfo } from "node:net";
import { AppError, MAX_JSON_DEPTH, jsonNestedDeeperThan } from "@cass-memory/core";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { createServerContext, type ServerContext, type ServerContextOptions } from "./context.js";
import { resourceUris } from "./resources.js";
import { SHUTDOWN_GRACE_MS, exitOnSignals } from "./signals.js";
import { createCmMcpServer } from "./server.js";
import { toolNames } from "./tools.js";

/**
 * Streamable HTTP transport on plain node:http, stateless (no sessions) with JSON responses. Any
 * path is accepted (the original's clients POST to `/`). In front of the SDK's transport: auth,
 * DNS-rebinding checks, the 5 MB body limit and the original's status codes.
 */

export const DEFAULT_HTTP_HOST = "127.0.0.1";
export const DEFAULT_HTTP_PORT = 8765;
export const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Protocol version assumed for an `initialize` without one (raw clients of the original). */
export const LEGACY_PROTOCOL_VERSION = "2025-06-18";

export interface HttpServerOptions extends ServerContextOptions {
  /** Default: env MCP_HTTP_HOST, else 127.0.0.1. */
  host?: string;
  /** Default: env MCP_HTTP_PORT, else 8765; 0 picks a free port. */
  port?: number;
  /** Required token; default env MCP_HTTP_TOKEN (trimmed). Empty = no auth. */
  token?: string;
  /** Share a context (runtime, admission) with other servers of this process. */
  context?: ServerContext;
  /** Request body limit in bytes (default 5 MB). */
  maxBodyBytes?: number;
  /** Receives the startup lines and warnings (default: stderr). */
  log?: (line: string) => void;
  /** Close on SIGINT/SIGTERM and exit 130/143 (for executables; default false). */
  handleSignals?: boolean;
  /**
   * Handlers tried before the MCP endpoint, in order (e.g. the dashboard at `/dashboard`): each
   * returns true when it takes the request (and then answers it itself), false to pass it on.
   */
  mounts?: ReadonlyArray<HttpMount>;
}

/** Where a mounted handler runs: the port actually listened on and the bind policy in force. */
export interface HttpMountInfo {
  port: number;
  /** The bound host, lower case, without IPv6 brackets. */
  boundHost: string;
  /** Whether Host/Origin are checked (off only for a token-protected non-loopback bind). */
  checkRebinding: boolean;
}

export type HttpMount = (req: IncomingMessage, res: ServerResponse, info: HttpMountInfo) => boolean;

export interface HttpServerHandle {
  /** `http://host:port/` as clients should use it. */
  url: string;
  host: string;
  port: number;
  /** Whether a token is required. */
  auth: boolean;
  context: ServerContext;
  server: Server;
  /** Stops accepting connections, closes idle ones and waits for the server to close. */
  close(): Promise<void>;
}

const JSON_HEADERS = { "content-type": "application/json" };

function rpcError(code: number, message: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id: null, error: { code, message } });
}

export const UNAUTHORIZED_BODY = rpcError(-32001, "Unauthorized");
export const PAYLOAD_TOO_LARGE_BODY = rpcError(-32600, "Payload too large");
export const BAD_REQUEST_BODY = rpcError(-32700, "Bad request");

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

/**
 * Loopback: the name `localhost`, an IPv4 literal in 127.0.0.0/8 written as four decimal numbers,
 * or the IPv6 loopback `::1` (any spelling, also IPv4-mapped `::ffff:127.x.y.z`). Case- and
 * space-insensitive. Unlike the original's `127.*` prefix test, names such as `127.0.0.1.evil.com`
 * or `127.evil.invalid` are not loopback: they resolve wherever their owner wants.
 */
export function isLoopbackHost(host: string): boolean {
  const h = stripBrackets(host.trim().toLowerCase());
  if (h === "localhost") return true;
  if (isIPv4(h)) return h.startsWith("127.");
  if (!isIPv6(h)) return false;
  const canonical = new URL(`http://[${h}]/`).hostname.slice(1, -1);
  // ::ffff:7fxx:xxxx is the mapped form of 127.x.y.z.
  return canonical === "::1" || /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(canonical);
}

/**
 * A Host header value split into host name and port (null when absent): `name[:port]` with a
 * name of letters, digits, dots and hyphens, or `[IPv6][:port]`. Anything else (`a@b`, spaces
 * inside, an empty value) is null: such a header is refused, never guessed at.
 */
export function parseHostHeader(value: string): { hostname: string; port: number | null } | null {
  const h = value.trim().toLowerCase();
  const match = /^(?:\[([0-9a-f:.]+)\]|([a-z0-9.-]+))(?::(\d{1,5}))?$/.exec(h);
  if (match === null) return null;
  const hostname = match[1] ?? match[2]!;
  if (match[1] !== undefined && !isIPv6(hostname)) return null;
  const port = match[3] !== undefined ? Number(match[3]) : null;
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { hostname, port };
}

/** The host name of a Host header value (`[::1]:8765` → `::1`, `localhost:8765` → `localhost`); "" when malformed. */
export function hostnameOf(hostHeader: string): string {
  return parseHostHeader(hostHeader)?.hostname ?? "";
}

const digest = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest();
/** SHA-256 of a token, the form `requestHasToken` compares against. */
export const tokenDigest = digest;

/** The tokens a request presents: `Authorization: Bearer <t>` (any case, extra spaces) and `X-MCP-Token`. */
function presentedTokens(req: IncomingMessage): string[] {
  const out: string[] = [];
  const auth = req.headers.authorization;
  if (typeof auth === "string") {
    const match = /^\s*bearer\s+(.*?)\s*$/i.exec(auth);
    if (match?.[1]) out.push(match[1]);
  }
  const header = req.headers["x-mcp-token"];
  for (const value of Array.isArray(header) ? header : header !== undefined ? [header] : []) {
    if (value.trim() !== "") out.push(value.trim());
  }
  return out;
}

/** Whether the request presents the token whose digest is `expected` (Bearer or X-MCP-Token; constant-time compare). */
export function requestHasToken(req: IncomingMessage, expected: Buffer): boolean {
  return checkToken(req, expected);
}

function checkToken(req: IncomingMessage, expected: Buffer): boolean {
  let ok = false;
  // Every presented token is compared (no early exit), each in constant time.
  for (const token of presentedTokens(req)) if (timingSafeEqual(digest(token), expected)) ok = true;
  return ok;
}

/**
 * Why a request fails the DNS-rebinding checks, or null when it passes. The Host header is
 * required (HTTP/1.0 requests without one are refused), must name a loopback address or the bound
 * host exactly, and the port the server listens on. An Origin, when sent, must be an http(s) URL
 * of such a host; its port is not checked, so browser-based clients on another local port (an MCP
 * inspector) keep working, while a rebound page always carries its own foreign host name.
 */
export function rebindingProblem(headers: { host?: string | undefined; origin?: string | undefined }, boundHost: string, port: number): string | null {
  const allowed = (name: string): boolean => isLoopbackHost(name) || name === boundHost;
  const host = headers.host;
  if (host === undefined || host.trim() === "") return "Forbidden: a Host header naming this server is required";
  const parsed = parseHostHeader(host);
  if (parsed === null || !allowed(parsed.hostname)) return `Forbidden: Host '${host}' is not allowed`;
  if ((parsed.port ?? 80) !== port) return `Forbidden: Host '${host}' names another port than ${port}`;
  const origin = headers.origin;
  if (origin !== undefined) {
    let name: string | null = null;
    try {
      const url = new URL(origin);
      if (url.protocol === "http:" || url.protocol === "https:") name = stripBrackets(url.hostname.toLowerCase());
    } catch {
      name = null;
    }
    if (name === null || name === "" || !allowed(name)) return `Forbidden: Origin '${origin}' is not allowed`;
  }
  return null;
}

type BodyResult = { ok: true; body: Buffer } | { ok: false };

/** Reads the body; past `max` bytes it is discarded (and the connection cut after 16 × max). */
function readBody(req: IncomingMessage, max: number): Promise<BodyResult> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = Number(req.headers["content-length"]) > max;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) tooLarge = true;
      if (tooLarge) {
        chunks.length = 0;
        if (size > 16 * max) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(tooLarge ? { ok: false } : { ok: true, body: Buffer.concat(chunks) }));
    req.on("error", reject);
  });
}

/** Fills in what a bare `initialize` of the original's clients leaves out (version, capabilities, clientInfo). */
export function normalizeLegacyMessage(message: unknown): unknown {
  if (Array.isArray(message)) return message.map(normalizeLegacyMessage);
  if (typeof message !== "object" || message === null) return message;
  const msg = message as Record<string, unknown>;
  if (msg.method !== "initialize") return message;
  const params = typeof msg.params === "object" && msg.params !== null ? (msg.params as Record<string, unknown>) : {};
  const info = params.clientInfo as Record<string, unknown> | undefined;
  return {
    ...msg,
    params: {
      ...params,
      protocolVersion: typeof params.protocolVersion === "string" && params.protocolVersion !== "" ? params.protocolVersion : LEGACY_PROTOCOL_VERSION,
      capabilities: typeof params.capabilities === "object" && params.capabilities !== null ? params.capabilities : {},
      clientInfo:
        typeof info === "object" && info !== null && typeof info.name === "string" && typeof info.version === "string"
          ? info
          : { name: "unknown", version: "0.0.0" },
    },
  };
}

/** Request headers for the SDK transport; raw clients that accept only JSON (or send no Accept) are let in. */
function transportHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    try {
      headers.append(raw[i]!, raw[i + 1]!);
    } catch {
      // A header the Fetch API refuses is of no use to the transport.
    }
  }
  const accept = headers.get("accept") ?? "";
  if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
    headers.set("accept", "application/json, text/event-stream");
  }
  if (!headers.has("content-type")) headers.set("content-type", "application/json");
  return headers;
}

function send(res: ServerResponse, status: number, body?: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, body !== undefined ? { ...JSON_HEADERS, ...headers } : headers);
  res.end(body);
}

function parsePort(raw: string, source: string): number {
  const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < 1 || value > 65535) {
    throw new AppError("INVALID_INPUT", `${source} must be an integer between 1 and 65535 (got '${raw}').`, {
      details: { field: source, received: raw },
    });
  }
  return value;
}

interface Resolved {
  host: string;
  port: number;
  token: string | undefined;
  warnings: string[];
}

/** Validates host, port and token and applies the bind policy (throws before anything is loaded). */
export function resolveHttpOptions(options: Pick<HttpServerOptions, "host" | "port" | "token" | "env">): Resolved {
  const env = options.env ?? process.env;
  const warnings: string[] = [];
  let host: string;
  if (options.host !== undefined) host = options.host.trim();
  else if (env.MCP_HTTP_HOST !== undefined) {
    host = env.MCP_HTTP_HOST.trim();
    if (host === "") throw new AppError("INVALID_INPUT", "MCP_HTTP_HOST must be a non-empty host name.", { details: { field: "MCP_HTTP_HOST" } });
  } else host = DEFAULT_HTTP_HOST;
  if (host === "") throw new AppError("INVALID_INPUT", "host must be a non-empty string.", { details: { field: "host", received: options.host } });

  let port: number;
  if (options.port !== undefined) {
    if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) {
      throw new AppError("INVALID_INPUT", `port must be an integer between 1 and 65535 (got '${options.port}').`, {
        details: { field: "port", received: options.port },
      });
    }
    port = options.port;
  } else port = env.MCP_HTTP_PORT !== undefined ? parsePort(env.MCP_HTTP_PORT, "MCP_HTTP_PORT") : DEFAULT_HTTP_PORT;

  const token = (options.token ?? env.MCP_HTTP_TOKEN ?? "").trim() || undefined;
  if (!isLoopbackHost(host)) {
    if (token === undefined) {
      if (env.MCP_HTTP_UNSAFE_NO_TOKEN?.trim() !== "1") {
        throw new AppError(
          "INVALID_INPUT",
          `Refusing to bind MCP HTTP server to '${host}' without auth. Set MCP_HTTP_TOKEN or use --host 127.0.0.1.`,
          { details: { host } },
        );
      }
      warnings.push(`WARNING: MCP HTTP server bound to '${host}' WITHOUT auth (MCP_HTTP_UNSAFE_NO_TOKEN=1): anyone who can reach it can read and change your memory.`);
    } else if ((host === "0.0.0.0" || host === "::") && env.NODE_ENV !== "development") {
      warnings.push(`Warning: binding to ${host} exposes the MCP server on every network interface (token required).`);
    }
  }
  return { host, port, token, warnings };
}

/** Starts the HTTP server; resolves once it listens. Throws INVALID_INPUT for a refused bind. */
export async function startHttpServer(options: HttpServerOptions = {}): Promise<HttpServerHandle> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const resolved = resolveHttpOptions(options);
  const { host, token } = resolved;
  const context = options.context ?? (await createServerContext(options));
  const maxBody = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const expected = token !== undefined ? digest(token) : undefined;
  // With a token on a non-loopback bind, clients reach the server by names we cannot know.
  const checkRebinding = !(token !== undefined && !isLoopbackHost(host));
  const boundHost = stripBrackets(host.toLowerCase());
  /** The port actually listened on (the requested one may be 0); set before the first request. */
  let listeningPort = resolved.port;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    for (const mount of options.mounts ?? []) {
      if (mount(req, res, { port: listeningPort, boundHost, checkRebinding })) return;
    }
    if (req.method !== "POST") {
      req.resume();
      send(res, 405, undefined, { allow: "POST" });
      return;
    }
    if (expected !== undefined && !checkToken(req, expected)) {
      req.resume();
      send(res, 401, UNAUTHORIZED_BODY, { "www-authenticate": "Bearer" });
      return;
    }
    if (checkRebinding) {
      const problem = rebindingProblem(req.headers, boundHost, listeningPort);
      if (problem !== null) {
        req.resume();
        send(res, 403, rpcError(-32000, problem));
        return;
      }
    }
    const body = await readBody(req, maxBody);
    if (!body.ok) {
      send(res, 413, PAYLOAD_TOO_LARGE_BODY, { connection: "close" });
      return;
    }
    let parsed: unknown;
    const text = body.body.toString("utf8");
    if (jsonNestedDeeperThan(text)) {
      // Parsing would work, but validating or echoing such a message overflows the stack.
      send(res, 400, rpcError(-32600, `Bad request: JSON nested deeper than ${MAX_JSON_DEPTH} levels`));
      return;
    }
    try {
      parsed = JSON.parse(text);
    } catch {
      send(res, 400, BAD_REQUEST_BODY);
      return;
    }

    const server = createCmMcpServer(context);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    try {
      await server.connect(transport);
      const request = new Request(new URL(req.url ?? "/", "http://localhost"), { method: "POST", headers: transportHeaders(req) });
      const response = await transport.handleRequest(request, { parsedBody: normalizeLegacyMessage(parsed) });
      const headers: Record<string, string> = {};
      response.headers.forEach((value, key) => (headers[key] = value));
      const text = response.body !== null ? await response.text() : undefined;
      // Shutting down: the connection is not kept alive, so closing does not wait for it to idle out.
      if (closing !== null) headers.connection = "close";
      res.writeHead(response.status, headers);
      res.end(text);
    } finally {
      void server.close();
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      context.deps.logger.error(`MCP HTTP request failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) send(res, 500, rpcError(-32603, "Internal error"));
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(resolved.port, host, () => {
      server.off("error", reject);
      resolve();
    });
  }).catch((error: unknown) => {
    const code = (error as { code?: unknown }).code;
    throw new AppError("NETWORK_ERROR", `Cannot listen on ${host}:${resolved.port}: ${error instanceof Error ? error.message : String(error)}`, {
      ...(code === "EADDRINUSE" ? { hint: "Another process uses this port: pick another one with --port." } : {}),
      details: { host, port: resolved.port, ...(typeof code === "string" ? { errno: code } : {}) },
      cause: error,
    });
  });

  const port = (server.address() as AddressInfo).port;
  listeningPort = port;
  const urlHost = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}/`;

  for (const warning of resolved.warnings) log(warning);
  const limits = context.admission.limits;
  log(`MCP HTTP server listening on ${url} (Streamable HTTP, stateless, JSON responses; any path)`);
  log(
    token !== undefined
      ? "Auth: on — send 'Authorization: Bearer <MCP_HTTP_TOKEN>' or 'X-MCP-Token: <MCP_HTTP_TOKEN>'."
      : "Auth: off (loopback only). Set MCP_HTTP_TOKEN to require a token.",
  );
  log(
    limits.maxConcurrent > 0
      ? `Admission: history-searching calls ≤ ${limits.maxConcurrent} at once, queue ${limits.maxQueue === 0 ? "unbounded" : limits.maxQueue}, wait ${limits.queueTimeoutMs === 0 ? "unlimited" : `${limits.queueTimeoutMs} ms`}.`
      : "Admission: disabled.",
  );
  log(`Tools: ${toolNames().join(", ")}`);
  log(`Resources: ${resourceUris().join(", ")}`);

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Requests still running get SHUTDOWN_GRACE_MS to finish, then their connections are cut.
      setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    });
    return closing;
  };

  if (options.handleSignals) exitOnSignals(close, log);

  return { url, host, port, auth: token !== undefined, context, server, close };
}
