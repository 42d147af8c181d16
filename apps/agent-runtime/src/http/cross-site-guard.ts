import { ProblemError, problemJson } from "@agentplane/problem-details";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { type HostPolicy, hostAllowed } from "./allowed-hosts.ts";

const READ_METHODS = new Set(["GET", "HEAD"]);

/** The web UI's pages: another site may link to them, so a browser's navigation there is served. */
const WEB_UI_PAGES = new Set(["/"]);

function refused(detail: string): ProblemError {
  return new ProblemError("forbidden", { detail });
}

/**
 * Whether a page at `origin` is the runtime's own: the address the request was sent to (its Host),
 * or one the runtime is published at (AGENT_HTTP_URL, AGENT_ALLOWED_HOSTS' names), for a reverse
 * proxy that sends its own Host.
 */
function ownOrigin(origin: URL, host: string | undefined, policy: HostPolicy): boolean {
  if (host && origin.host === host.trim().toLowerCase()) return true;
  const port = origin.port ? Number(origin.port) : origin.protocol === "https:" ? 443 : 80;
  const named: HostPolicy = {
    loopbackBind: true,
    published: policy.published,
    allowList: policy.allowList === "any" ? [] : policy.allowList,
  };
  // Port 0: a loopback name counts only as the request's own Host, compared above.
  return hostAllowed(named, `${origin.hostname}:${port}`, 0);
}

/** Why a browser's state-changing request came from another site, or undefined when it did not. */
export function crossSiteReason(
  headers: { get(name: string): string | undefined },
  policy: HostPolicy,
): string | undefined {
  const site = headers.get("sec-fetch-site");
  if (site && site !== "same-origin" && site !== "none") return `it was sent from another site (${site})`;
  return foreignOriginReason(headers, policy);
}

/** Why a request's Origin is not the runtime's own, or undefined when it is or there is none. */
function foreignOriginReason(
  headers: { get(name: string): string | undefined },
  policy: HostPolicy,
): string | undefined {
  const origin = headers.get("origin");
  if (origin === undefined) return undefined;
  let parsed: URL | undefined;
  try {
    parsed = origin === "null" ? undefined : new URL(origin);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !ownOrigin(parsed, headers.get("host"), policy)) {
    return `its Origin ${JSON.stringify(origin)} is not this runtime's`;
  }
  return undefined;
}

/**
 * Why a browser's read came from another site, or undefined when it did not (or the request is a
 * top-level navigation to one of the web UI's pages, which links from elsewhere may open). A page
 * cannot read the answer, but the work is done all the same: a memory search calls the embedding
 * model, which costs money. `Sec-Fetch-Site` marks it (an `<img>` or a no-cors fetch sends no
 * Origin); a browser without Sec-Fetch headers still sends its page's Origin on a CORS read, so an
 * Origin that is not the runtime's is refused too.
 */
export function crossSiteReadReason(
  headers: { get(name: string): string | undefined },
  path: string,
  policy: HostPolicy,
): string | undefined {
  if (WEB_UI_PAGES.has(path) && headers.get("sec-fetch-mode") === "navigate") return undefined;
  return crossSiteReason(headers, policy);
}

/**
 * The runtime's API has no credential of its own on a loopback address, so any web page the
 * person opens could otherwise change it: a cross-site POST without a body (no preflight) created
 * threads. A state-changing request a browser marks as cross-site, or whose Origin is not the
 * address it was sent to, is refused (curl, the SDK and the terminal UI send neither header; the
 * gateway, which authenticates by token, drops them). A read a browser marks as cross-site or
 * same-site, or whose Origin is not the runtime's, is refused too, but for a navigation to the web
 * UI's page. The webhook receiver is
 * left out: its senders are servers, and each subscription verifies them.
 */
export function guardCrossSite(app: OpenAPIHono, policy: () => HostPolicy): void {
  app.use("*", async (c, next) => {
    const method = c.req.method;
    const headers = { get: (name: string) => c.req.header(name) };
    if (method === "OPTIONS") return next();
    if (method === "POST" && c.req.path.startsWith("/agents/webhooks/")) return next();
    const reason = READ_METHODS.has(method)
      ? crossSiteReadReason(headers, c.req.path, policy())
      : crossSiteReason(headers, policy());
    if (!reason) return next();
    return problemJson(c, refused(`The request was refused: ${reason}`));
  });
}
