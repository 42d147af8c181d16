import { ApiError, problemOf } from "../lib/problem.ts";

/**
 * The console's only way to the platform: `/v1` over the browser session. The cookie travels by
 * itself (same origin); mutating requests add the session's CSRF token. A 401 means the session
 * ended: the app goes to sign-in and comes back to the page afterwards.
 */
const CSRF_HEADER = "x-csrf-token";
const CSRF_KEY = "agentplane.csrf";
const SAFE = new Set(["GET", "HEAD"]);

let csrfToken: string | undefined = sessionStorage.getItem(CSRF_KEY) ?? undefined;
let onUnauthorized: () => void = () => {};

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
  if (token) sessionStorage.setItem(CSRF_KEY, token);
  else sessionStorage.removeItem(CSRF_KEY);
}

export function hasCsrfToken(): boolean {
  return csrfToken !== undefined;
}

export function onSessionEnded(handler: () => void): void {
  onUnauthorized = handler;
}

export type Query = Record<string, string | number | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export interface RequestOptions {
  body?: unknown;
  query?: Query;
  /** A bearer token for this request only (sign-in), instead of the session. */
  token?: string;
  signal?: AbortSignal;
}

export async function request(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  else if (!SAFE.has(method) && csrfToken) headers[CSRF_HEADER] = csrfToken;
  const response = await fetch(withQuery(path, options.query), {
    method,
    headers,
    credentials: "same-origin",
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (!response.ok) {
    const error = await problemOf(response);
    if (response.status === 401 && !options.token) onUnauthorized();
    throw error;
  }
  return response;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await request(method, path, options);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

export const get = <T>(path: string, query?: Query) => api<T>("GET", path, query ? { query } : {});
export const post = <T>(path: string, body?: unknown) => api<T>("POST", path, body === undefined ? {} : { body });
export const patch = <T>(path: string, body: unknown) => api<T>("PATCH", path, { body });
export const del = (path: string) => api<void>("DELETE", path);

export { ApiError };
