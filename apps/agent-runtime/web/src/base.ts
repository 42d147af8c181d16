import { RuntimeClient } from "../../client/api.ts";

/**
 * Where the page was served from decides where the API is: the runtime serves the page at `/`
 * and its API beside it; the platform's gateway serves the page at `/agent/` and the API at
 * `/agent/api/`, and the webhook receiver at `/agent/webhooks/`.
 */
const pageBase = new URL(".", window.location.href).pathname;
const fronted = pageBase !== "/";

const TOKEN_KEY = "agentplane.agent.token";

/** Behind the gateway the API needs a platform token (kept for this tab only). */
export const session = {
  fronted,
  token: () => window.sessionStorage.getItem(TOKEN_KEY) ?? undefined,
  setToken: (token: string) => window.sessionStorage.setItem(TOKEN_KEY, token.trim()),
};

function withToken(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
  const token = session.token();
  if (!token) return fetch(input, init);
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
}

export const api = new RuntimeClient(fronted ? `${pageBase}api/` : "/", withToken);

/** The public address of a subscription's receiver, for the copy button and the curl example. */
export function webhookUrl(name: string): string {
  const path = fronted ? `${pageBase}webhooks/${name}` : `/agents/webhooks/${name}`;
  return `${window.location.origin}${path}`;
}
