import { RuntimeClient } from "../../client/api.ts";

/**
 * Where the page was served from decides where the API is: the runtime serves the page at `/`
 * and its API beside it; the platform's gateway serves the page at `/agent/` and the API at
 * `/agent/api/`, and the webhook receiver at `/agent/webhooks/`.
 */
const pageBase = new URL(".", window.location.href).pathname;
const fronted = pageBase !== "/";

/** The console's own names (packages/contracts' sessions): the page shares the console's origin. */
const CSRF_HEADER = "x-csrf-token";
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Behind the gateway the API takes the console's browser session: an HttpOnly cookie, and the
 * session's CSRF token on a change (kept in memory only). A pasted API token is exchanged for such
 * a session once and never kept: web storage is readable by any script of the origin.
 */
let csrfToken: string | undefined;
/** A token that cannot open a session (it acts for no user): kept in memory only, for this page. */
let bareToken: string | undefined;

async function openedSession(res: Response): Promise<boolean> {
  if (!res.ok) return false;
  const body = (await res.json().catch(() => ({}))) as { csrfToken?: unknown };
  csrfToken = typeof body.csrfToken === "string" ? body.csrfToken : undefined;
  return csrfToken !== undefined;
}

export const session = {
  fronted,
  /** The console's session, if this browser has one (its CSRF token read again after a reload). */
  async restore(): Promise<boolean> {
    if (!fronted) return false;
    return openedSession(await fetch("/v1/auth/session", { credentials: "same-origin" }).catch(() => Response.error()));
  },
  /** Exchanges an API token for a browser session; the token itself is dropped. */
  async signIn(token: string): Promise<boolean> {
    const res = await fetch("/v1/auth/sessions", {
      method: "POST",
      credentials: "same-origin",
      headers: { authorization: `Bearer ${token.trim()}` },
    }).catch(() => Response.error());
    if (res.status === 403) {
      bareToken = token.trim();
      return true;
    }
    bareToken = undefined;
    return openedSession(res);
  },
};

function withSession(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const method = (init.method ?? "GET").toUpperCase();
  const headers = new Headers(init.headers);
  if (bareToken) headers.set("authorization", `Bearer ${bareToken}`);
  else if (csrfToken && !SAFE_METHODS.has(method)) headers.set(CSRF_HEADER, csrfToken);
  else return fetch(input, init);
  return fetch(input, { ...init, headers });
}

export const api = new RuntimeClient(fronted ? `${pageBase}api/` : "/", withSession);

/** The public address of a subscription's receiver, for the copy button and the curl example. */
export function webhookUrl(name: string): string {
  const path = fronted ? `${pageBase}webhooks/${name}` : `/agents/webhooks/${name}`;
  return `${window.location.origin}${path}`;
}
