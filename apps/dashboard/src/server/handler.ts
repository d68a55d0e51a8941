import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  AppError,
  categoryOf,
  computeDuplicates,
  computeOverview,
  computeRisk,
  computeRules,
  dashboardContextLog,
  dashboardRule,
  dashboardRuns,
  dashboardTraumas,
  forgetOperation,
  jsonNestedDeeperThan,
  loadDashboardPlaybook,
  markOperation,
  MAX_JSON_DEPTH,
  playbookCategoryOperation,
  playbookPinOperation,
  runOperation,
  toAppError,
  undoOperation,
  undoRunOperation,
  type DashboardDuplicates,
  type OperationDeps,
  type Playbook,
  type RuleQuery,
} from "@cass-memory/core";
import { rebindingProblem, requestHasToken, tokenDigest } from "@cass-memory/mcp";
import { DASHBOARD_PREFIX, DASHBOARD_ACTOR, MAX_ACTION_BODY_BYTES } from "./constants.js";
import { indexUiDir, readStaticFile, type StaticFile } from "./static.js";

/** What the overview reports about the store (the host knows it; core does not). */
export interface DashboardStoreInfo {
  backend: string;
  playbookPath?: string;
}

export interface DashboardHandlerOptions {
  /** The operations' dependencies (the runtime's deps); the journal actor becomes `dashboard`. */
  deps: OperationDeps;
  /** Required on every `/dashboard/api/*` request when set (Bearer or X-MCP-Token); none = no auth. */
  token?: string;
  /** The host the server is bound to (lower case, no brackets); loopback names are always accepted. */
  boundHost?: string;
  /** The port listened on (a function when it is known only after listening). */
  port?: number | (() => number);
  /** Check Host and Origin (default true; off only for a token-protected non-loopback bind, as for MCP). */
  checkRebinding?: boolean;
  /** The built page (index.html, assets/). */
  uiDir: string;
  store?: DashboardStoreInfo;
  /** Errors that are not the user's (500s) are reported here (default: the deps' logger). */
  onError?: (error: unknown) => void;
}

/** Per-call facts a host knows only at request time (`cm serve` passes the port it listens on). */
export interface DashboardRequestInfo {
  port?: number;
  boundHost?: string;
  checkRebinding?: boolean;
}

export type DashboardHandler = (req: IncomingMessage, res: ServerResponse, info?: DashboardRequestInfo) => boolean;

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

const COMMON_HEADERS = { "x-content-type-options": "nosniff", "referrer-policy": "no-referrer" };

interface ErrorBody {
  code: string;
  message: string;
  hint?: string;
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
    readonly headers: Record<string, string> = {},
  ) {
    super(body.message);
  }
}

function sendJson(res: ServerResponse, status: number, payload: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(payload);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "cache-control": "no-store",
    "content-length": String(Buffer.byteLength(text)),
    ...COMMON_HEADERS,
    ...headers,
  });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, body: ErrorBody, headers: Record<string, string> = {}): void {
  sendJson(res, status, { ok: false, error: { code: body.code, message: body.message, ...(body.hint !== undefined ? { hint: body.hint } : {}) } }, headers);
}

/** HTTP status for an AppError: the CLI's exit-code category, with not-found and lock/conflict split out. */
export function httpStatusOf(error: AppError): number {
  if (error.code.endsWith("_NOT_FOUND") && categoryOf(error.code) === "user_input") return 404;
  if (error.code === "LOCK_ACQUISITION_FAILED" || error.code === "ALREADY_EXISTS") return 409;
  return categoryOf(error.code) === "user_input" ? 400 : 500;
}

function bad(message: string, _field: string, hint?: string): HttpProblem {
  return new HttpProblem(400, { code: "INVALID_INPUT", message, ...(hint !== undefined ? { hint } : {}) });
}

// ------------------------------------------------------------------------------------ query string

function intParam(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === "") return undefined;
  if (!/^\d{1,9}$/.test(raw)) throw bad(`${name} must be a non-negative integer.`, name);
  return Number(raw);
}

function textParam(params: URLSearchParams, name: string, max = 200): string | undefined {
  const raw = params.get(name);
  if (raw === null || raw === "") return undefined;
  if (raw.length > max) throw bad(`${name} must be at most ${max} characters.`, name);
  return raw;
}

function pageOf(params: URLSearchParams): { offset?: number; limit?: number } {
  const offset = intParam(params, "offset");
  const limit = intParam(params, "limit");
  return { ...(offset !== undefined ? { offset } : {}), ...(limit !== undefined ? { limit } : {}) };
}

// ----------------------------------------------------------------------------------------- bodies

async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    req.resume();
    throw new HttpProblem(415, {
      code: "UNSUPPORTED_MEDIA_TYPE",
      message: "Actions take a JSON body: send 'Content-Type: application/json'.",
    });
  }
  const declared = Number(req.headers["content-length"]);
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = Number.isFinite(declared) && declared > MAX_ACTION_BODY_BYTES;
  await new Promise<void>((resolve, reject) => {
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_ACTION_BODY_BYTES) tooLarge = true;
      if (tooLarge) {
        chunks.length = 0;
        if (size > 16 * MAX_ACTION_BODY_BYTES) req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve());
    req.on("error", reject);
  });
  if (tooLarge) {
    throw new HttpProblem(413, { code: "PAYLOAD_TOO_LARGE", message: `The body is larger than ${MAX_ACTION_BODY_BYTES} bytes.` }, { connection: "close" });
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (jsonNestedDeeperThan(text)) throw bad(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`, "body");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw bad("The body is not valid JSON.", "body");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw bad("The body must be a JSON object.", "body");
  const body = parsed as Record<string, unknown>;
  if (body.confirm !== true) {
    throw new HttpProblem(400, {
      code: "CONFIRMATION_REQUIRED",
      message: "Changes need an explicit confirmation: send \"confirm\": true.",
      hint: "The page asks before sending an action; API clients must set confirm to true.",
    });
  }
  return body;
}

function str(body: Record<string, unknown>, name: string, required: true): string;
function str(body: Record<string, unknown>, name: string, required: false): string | undefined;
function str(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) {
    if (required) throw bad(`${name} is required.`, name);
    return undefined;
  }
  if (typeof value !== "string") throw bad(`${name} must be a string.`, name);
  return value;
}

// ------------------------------------------------------------------------------------------ handler

/** A fingerprint of the playbook's rules (ids, contents, states), so costly results can be cached per revision. */
function playbookFingerprint(playbook: Playbook): string {
  const hash = createHash("sha256");
  for (const b of playbook.bullets) {
    hash.update(`${b.id}\u0000${b.content}\u0000${b.state}\u0000${b.maturity}\u0000${b.deprecated ? 1 : 0}\u0000${b.updatedAt}\n`);
  }
  return hash.digest("hex");
}

/**
 * The `/dashboard` request handler: the page's static files and the JSON API of API.md. Returns
 * false (and leaves the request alone) for paths outside `/dashboard`; otherwise answers it.
 */
export function createDashboardHandler(options: DashboardHandlerOptions): DashboardHandler {
  const deps: OperationDeps = { ...options.deps, actor: DASHBOARD_ACTOR };
  const expected = options.token !== undefined && options.token.trim() !== "" ? tokenDigest(options.token.trim()) : undefined;
  const onError = options.onError ?? ((error: unknown) => deps.logger.error(`dashboard request failed: ${error instanceof Error ? error.message : String(error)}`));
  let files: Map<string, StaticFile> | undefined;
  let duplicatesCache: { key: string; at: number; value: DashboardDuplicates } | undefined;

  const portOf = (info?: DashboardRequestInfo): number => {
    if (info?.port !== undefined) return info.port;
    const p = options.port;
    return typeof p === "function" ? p() : (p ?? 80);
  };

  async function api(req: IncomingMessage, res: ServerResponse, route: string, params: URLSearchParams): Promise<void> {
    const method = req.method ?? "GET";
    if (route.startsWith("actions/")) {
      if (method !== "POST") {
        req.resume();
        throw new HttpProblem(405, { code: "METHOD_NOT_ALLOWED", message: "Actions are POST requests." }, { allow: "POST" });
      }
      const body = await readJsonBody(req);
      sendJson(res, 200, { ok: true, data: await action(route.slice("actions/".length), body) });
      return;
    }
    req.resume();
    if (method !== "GET" && method !== "HEAD") {
      throw new HttpProblem(405, { code: "METHOD_NOT_ALLOWED", message: "Read endpoints are GET requests." }, { allow: "GET, HEAD" });
    }
    sendJson(res, 200, { ok: true, data: await read(route, params) });
  }

  async function read(route: string, params: URLSearchParams): Promise<unknown> {
    const now = deps.clock.now();
    switch (route) {
      case "overview": {
        const playbook = await loadDashboardPlaybook(deps);
        return { store: options.store ?? { backend: "unknown" }, ...computeOverview(playbook, now, deps.config) };
      }
      case "rules": {
        const sort = textParam(params, "sort");
        const order = textParam(params, "order");
        const query: RuleQuery = { ...pageOf(params) };
        for (const name of ["q", "state", "maturity", "kind", "scope", "category"] as const) {
          const value = textParam(params, name);
          if (value !== undefined) query[name] = value;
        }
        if (sort !== undefined) query.sort = sort as RuleQuery["sort"];
        if (order !== undefined) query.order = order as RuleQuery["order"];
        return computeRules(await loadDashboardPlaybook(deps), now, deps.config, query);
      }
      case "risk":
        return computeRisk(await loadDashboardPlaybook(deps), now, deps.config, deps.cliName, intParam(params, "limit"));
      case "duplicates": {
        const playbook = await loadDashboardPlaybook(deps);
        const key = playbookFingerprint(playbook);
        // Scores in the summaries age with time: a cached answer is reused for one minute at most.
        if (duplicatesCache === undefined || duplicatesCache.key !== key || now.getTime() - duplicatesCache.at > 60_000) {
          duplicatesCache = { key, at: now.getTime(), value: computeDuplicates(playbook, now, deps.config) };
        }
        return duplicatesCache.value;
      }
      case "runs":
        return dashboardRuns(deps, pageOf(params));
      case "traumas":
        return dashboardTraumas(deps, pageOf(params));
      case "context-log":
        return dashboardContextLog(deps, pageOf(params));
      default: {
        if (route.startsWith("rules/")) {
          let id: string;
          try {
            id = decodeURIComponent(route.slice("rules/".length));
          } catch {
            throw bad("The rule id is not valid URL encoding.", "id");
          }
          if (id === "" || id.length > 200 || id.includes("/")) throw bad("A rule id is required.", "id");
          return dashboardRule(deps, id);
        }
        throw new HttpProblem(404, { code: "NOT_FOUND", message: `No dashboard endpoint '${route}'.`, hint: "See apps/dashboard/API.md." });
      }
    }
  }

  async function action(name: string, body: Record<string, unknown>): Promise<unknown> {
    switch (name) {
      case "mark": {
        const type = str(body, "type", true);
        if (type !== "helpful" && type !== "harmful") throw bad("type must be 'helpful' or 'harmful'.", "type");
        const reason = str(body, "reason", false);
        return runOperation(markOperation, deps, {
          bulletId: str(body, "id", true),
          ...(type === "helpful" ? { helpful: true } : { harmful: true }),
          ...(reason !== undefined && reason.trim() !== "" ? { reason } : {}),
        });
      }
      case "forget":
        return runOperation(forgetOperation, deps, { bulletId: str(body, "id", true), reason: str(body, "reason", false) ?? "" });
      case "undo": {
        if (body.feedback !== undefined && typeof body.feedback !== "boolean") throw bad("feedback must be a boolean.", "feedback");
        return runOperation(undoOperation, deps, { bulletId: str(body, "id", true), ...(body.feedback === true ? { feedback: true } : {}) });
      }
      case "undo-run":
        return runOperation(undoRunOperation, deps, { runId: str(body, "runId", true) });
      case "pin": {
        if (typeof body.pinned !== "boolean") throw bad("pinned must be true or false.", "pinned");
        const reason = str(body, "reason", false);
        return runOperation(playbookPinOperation, deps, {
          bulletId: str(body, "id", true),
          pinned: body.pinned,
          ...(reason !== undefined && reason.trim() !== "" ? { reason } : {}),
        });
      }
      case "category":
        return runOperation(playbookCategoryOperation, deps, { bulletId: str(body, "id", true), category: str(body, "category", true) });
      default:
        throw new HttpProblem(404, { code: "NOT_FOUND", message: `No dashboard action '${name}'.`, hint: "See apps/dashboard/API.md." });
    }
  }

  function serveStatic(req: IncomingMessage, res: ServerResponse, rest: string): void {
    req.resume();
    const method = req.method ?? "GET";
    if (method !== "GET" && method !== "HEAD") {
      sendError(res, 405, { code: "METHOD_NOT_ALLOWED", message: "The page's files are GET requests." }, { allow: "GET, HEAD" });
      return;
    }
    // Indexed once; an empty index (the page not built yet) is not kept, so a later build is picked up.
    const index = files ?? indexUiDir(options.uiDir);
    if (index.size > 0) files = index;
    const name = rest === "" ? "index.html" : rest;
    // Looked up by exact name in the index of the ui directory: nothing else is reachable.
    const file = index.get(name);
    if (file === undefined) {
      const missing = index.size === 0;
      sendError(res, 404, {
        code: "NOT_FOUND",
        message: missing ? "The dashboard page is not built." : `No dashboard file '${name.slice(0, 200)}'.`,
        ...(missing ? { hint: "Build it with: pnpm --filter @cass-memory/dashboard build" } : {}),
      });
      return;
    }
    let content: Buffer;
    try {
      content = readStaticFile(file);
    } catch {
      sendError(res, 404, { code: "NOT_FOUND", message: `No dashboard file '${name}'.` });
      return;
    }
    const headers: Record<string, string> = {
      "content-type": file.contentType,
      "content-length": String(content.length),
      "cache-control": "no-cache",
      ...COMMON_HEADERS,
    };
    if (file.contentType.startsWith("text/html")) headers["content-security-policy"] = CSP;
    res.writeHead(200, headers);
    res.end(method === "HEAD" ? undefined : content);
  }

  async function handle(req: IncomingMessage, res: ServerResponse, path: string, search: string, info?: DashboardRequestInfo): Promise<void> {
    const checkRebinding = info?.checkRebinding ?? options.checkRebinding ?? true;
    if (checkRebinding) {
      const boundHost = info?.boundHost ?? options.boundHost ?? "127.0.0.1";
      const problem = rebindingProblem(req.headers, boundHost, portOf(info));
      if (problem !== null) throw new HttpProblem(403, { code: "FORBIDDEN", message: problem });
    }
    if (path === DASHBOARD_PREFIX) {
      req.resume();
      res.writeHead(308, { location: `${DASHBOARD_PREFIX}/${search}`, "content-length": "0", ...COMMON_HEADERS });
      res.end();
      return;
    }
    const rest = path.slice(DASHBOARD_PREFIX.length + 1);
    if (rest === "api" || rest.startsWith("api/")) {
      if (expected !== undefined && !requestHasToken(req, expected)) {
        req.resume();
        throw new HttpProblem(
          401,
          { code: "UNAUTHORIZED", message: "A valid dashboard token is required.", hint: "Open the URL printed by 'cm dashboard' (it carries the token)." },
          { "www-authenticate": "Bearer" },
        );
      }
      await api(req, res, rest.slice(4), new URLSearchParams(search));
      return;
    }
    serveStatic(req, res, rest);
  }

  return (req, res, info) => {
    const raw = req.url ?? "/";
    const queryAt = raw.indexOf("?");
    const path = queryAt < 0 ? raw : raw.slice(0, queryAt);
    const search = queryAt < 0 ? "" : raw.slice(queryAt);
    if (path !== DASHBOARD_PREFIX && !path.startsWith(`${DASHBOARD_PREFIX}/`)) return false;
    handle(req, res, path, search, info).catch((error: unknown) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      if (error instanceof HttpProblem) {
        sendError(res, error.status, error.body, error.headers);
        return;
      }
      const appError = toAppError(error);
      const status = httpStatusOf(appError);
      if (status >= 500) onError(error);
      sendError(res, status, { code: appError.code, message: appError.message, ...(appError.hint !== undefined ? { hint: appError.hint } : {}) });
    });
    return true;
  };
}
