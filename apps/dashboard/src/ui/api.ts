// HTTP client for /dashboard/api/*: the token comes from the URL fragment (#token=…) once, is kept
// in sessionStorage and removed from the address bar, and is sent as a Bearer header on every call.

const TOKEN_KEY = "cm-dashboard-token";

export interface ApiFailure {
  code: string;
  message: string;
  hint?: string;
}

export class ApiError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  readonly status: number;
  constructor(status: number, failure: ApiFailure) {
    super(failure.message);
    this.code = failure.code;
    this.hint = failure.hint;
    this.status = status;
  }
}

export interface Page<T> {
  total: number;
  offset: number;
  limit: number;
  items: T[];
}

/** Takes `token=…` out of the fragment (it may be the whole fragment or one `&`-part of it). */
export function captureToken(): void {
  const hash = window.location.hash.replace(/^#/, "");
  const match = /(?:^|[&?])token=([^&]*)/.exec(hash);
  if (!match) return;
  const token = decodeURIComponent(match[1] ?? "");
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  const rest = hash.replace(/(?:^|[&?])token=[^&]*/, "").replace(/^[&?]/, "");
  const next = rest.startsWith("/") ? `#${rest}` : "#/";
  history.replaceState(null, "", `${window.location.pathname}${window.location.search}${next}`);
}

export function hasToken(): boolean {
  return Boolean(sessionStorage.getItem(TOKEN_KEY));
}

/** `/dashboard/` however the page was reached (`/dashboard`, `/dashboard/`, `/dashboard/index.html`). */
export function basePath(): string {
  const path = window.location.pathname.replace(/\/index\.html$/, "/");
  return path.endsWith("/") ? path : `${path}/`;
}

async function request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(`${basePath()}api/${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
      cache: "no-store",
    });
  } catch (error) {
    throw new ApiError(0, {
      code: "NETWORK_ERROR",
      message: `Could not reach the dashboard server (${(error as Error).message}).`,
      hint: "Is `cm dashboard` (or `cm serve`) still running?",
    });
  }
  let payload: unknown;
  try {
    payload = await response.json();
  } catch {
    throw new ApiError(response.status, {
      code: "BAD_RESPONSE",
      message: `The server answered ${response.status} without JSON.`,
      hint: "Reload the page; if it persists, restart `cm dashboard`.",
    });
  }
  const envelope = payload as { ok?: boolean; data?: T; error?: ApiFailure };
  if (response.ok && envelope.ok) return envelope.data as T;
  const failure = envelope.error ?? { code: "HTTP_ERROR", message: `HTTP ${response.status}` };
  if (response.status === 401 && !failure.hint) {
    failure.hint = "Open the address printed by `cm dashboard`: it ends with #token=…";
  }
  throw new ApiError(response.status, failure);
}

export function get<T>(path: string, params?: Record<string, string | number | undefined>): Promise<T> {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params ?? {})) {
    if (value !== undefined && value !== "") query.set(key, String(value));
  }
  const qs = query.toString();
  return request<T>("GET", qs ? `${path}?${qs}` : path);
}

export function post<T>(path: string, body: Record<string, unknown>): Promise<T> {
  return request<T>("POST", path, { ...body, confirm: true });
}
