import { RuntimeClient } from "../../client/api.ts";

/**
 * Where the page was served from decides where the API is: the runtime serves the page at `/`
 * and its API beside it; the platform's gateway serves the page at `/agent/` and the API at
 * `/agent/api/`, and the webhook receiver at `/agent/webhooks/`.
 */
const pageBase = new URL(".", window.location.href).pathname;
const fronted = pageBase !== "/";

export const api = new RuntimeClient(fronted ? `${pageBase}api/` : "/");

/** The public address of a subscription's receiver, for the copy button and the curl example. */
export function webhookUrl(name: string): string {
  const path = fronted ? `${pageBase}webhooks/${name}` : `/agents/webhooks/${name}`;
  return `${window.location.origin}${path}`;
}
