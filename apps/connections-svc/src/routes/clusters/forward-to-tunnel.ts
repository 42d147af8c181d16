import { FORWARD_TO_TUNNEL_PATH } from "@agentplane/contracts";
import { type ServiceApp, serviceOnly } from "@agentplane/service-kit";
import { TunnelHub } from "../../tunnel/hub.ts";
import type { ConnectionsRouteContext } from "../context.ts";

/** Proxy forwarding between connections replicas: a request for a tunnel another replica holds. */
export function registerForwardToTunnel(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  const forwardPrefix = FORWARD_TO_TUNNEL_PATH.replace("{clusterId}", ":clusterId");
  // Any method and body, passed through unparsed; only another connections replica may forward.
  app.use(`${forwardPrefix}/*`, serviceOnly(["connections"]));
  app.on(["GET", "POST", "PUT", "PATCH", "DELETE"], `${forwardPrefix}/*`, async (c) => {
    const clusterId = c.req.param("clusterId") ?? "";
    const url = new URL(c.req.url);
    const at = url.pathname.indexOf("/forward/");
    const path = url.pathname.slice(at + "/forward".length);
    const hasBody = c.req.method !== "GET" && c.req.method !== "DELETE";
    return ctx.hub.sendLocal(clusterId, {
      method: c.req.method,
      path: `${path}${url.search}`,
      headers: c.req.raw.headers,
      body: hasBody || c.req.header("content-length") ? new Uint8Array(await c.req.arrayBuffer()) : undefined,
      signal: c.req.raw.signal,
      use: TunnelHub.useOf(c.req.raw.headers),
    });
  });
}
