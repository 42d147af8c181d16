import type { IncomingMessage } from "node:http";
import { hostname } from "node:os";
import { ProblemError, problemJson } from "@agentplane/problem-details";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { RuntimeConfig } from "../config.ts";
import { type HostPolicy, hostAllowed, isLoopbackAddress, publishedAddress } from "./allowed-hosts.ts";

/** The check's inputs from the configuration; `listenHost` is where the server actually listens. */
export function hostPolicyOf(config: RuntimeConfig, listenHost: string = config.host): HostPolicy {
  return {
    loopbackBind: isLoopbackAddress(listenHost),
    published: publishedAddress(config.env.AGENT_HTTP_URL),
    allowList: config.allowedHosts,
    machineName: hostname().toLowerCase().replace(/\.$/, "") || undefined,
  };
}

/**
 * Refuses a request whose Host the runtime does not answer to, before any route (the API, the web
 * UI, the webhook receiver, /health) sees it. The answer is 421 Misdirected Request rather than 403:
 * nothing about the caller is refused, the request reached a server that does not serve that name,
 * which is what 421 says; clients and proxies do not take it for an authorization failure.
 * `policy()` is read per request: the listening address is known only once the server listens.
 */
export function guardHosts(app: OpenAPIHono, policy: () => HostPolicy): void {
  app.use("*", async (c, next) => {
    const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
    const localPort = incoming?.socket.localPort;
    if (localPort === undefined) return next();
    const host = c.req.header("host");
    if (hostAllowed(policy(), host, localPort)) return next();
    return problemJson(
      c,
      new ProblemError("misdirected-request", {
        detail: `This runtime does not answer to the host ${JSON.stringify(host ?? "")}; set AGENT_ALLOWED_HOSTS to the names its callers use (comma-separated; "*" allows any host) to allow it`,
      }),
    );
  });
}
