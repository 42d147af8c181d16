import { CONNECTIONS_INTERNAL, type Principal, CONNECTIONS_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp, serviceOnly } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { parseTunnelToken, secretMatches } from "../../services/tunnel-tokens.ts";
import { TunnelHub } from "../../tunnel/hub.ts";

/** Tunnel token resolution (for the gateway) and proxy forwarding between connections replicas. */
export function registerClusterInternalRoutes(app: ServiceApp, ctx: ConnectionsContext, hub: TunnelHub): void {
  app.openapi(internalRoute(R.resolveTunnelToken), async (c) => {
    const token = parseTunnelToken(c.req.valid("json").token);
    const row = token
      ? await ctx.db
          .selectFrom("clusters")
          .select(["id", "org_id", "project_id", "tunnel_token_hash"])
          .where("tunnel_token_id", "=", token.id)
          .executeTakeFirst()
      : undefined;
    if (!token || !row || !secretMatches(token.secret, row.tunnel_token_hash)) {
      throw new ProblemError("unauthenticated", { detail: "The token is not valid" });
    }
    const principal: Principal = {
      type: "cluster",
      id: token.id,
      displayName: `relay of ${row.id}`,
      orgId: row.org_id,
      projectId: row.project_id,
    };
    return c.json({ principal }, 200);
  });

  const forwardPrefix = CONNECTIONS_INTERNAL.forwardToTunnel.replace("{clusterId}", ":clusterId");
  // Any method and body, passed through unparsed; only another connections replica may forward.
  app.use(`${forwardPrefix}/*`, serviceOnly(["connections"]));
  app.on(["GET", "POST", "PUT", "PATCH", "DELETE"], `${forwardPrefix}/*`, async (c) => {
    const clusterId = c.req.param("clusterId") ?? "";
    const url = new URL(c.req.url);
    const at = url.pathname.indexOf("/forward/");
    const path = url.pathname.slice(at + "/forward".length);
    const hasBody = c.req.method !== "GET" && c.req.method !== "DELETE";
    return hub.sendLocal(clusterId, {
      method: c.req.method,
      path: `${path}${url.search}`,
      headers: c.req.raw.headers,
      body: hasBody || c.req.header("content-length") ? new Uint8Array(await c.req.arrayBuffer()) : undefined,
      signal: c.req.raw.signal,
      use: TunnelHub.useOf(c.req.raw.headers),
    });
  });
}
