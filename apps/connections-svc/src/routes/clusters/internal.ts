import { CONNECTIONS_INTERNAL, type Principal, ResolveTunnelTokenRequest } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { requirePrincipal, type ServiceApp, type ServiceContext, servicePrincipal } from "@agentplane/service-kit";
import type { ConnectionsContext } from "../../context.ts";
import { parseTunnelToken, secretMatches } from "../../services/tunnel-tokens.ts";
import { TunnelHub } from "../../tunnel/hub.ts";

function requireService(c: ServiceContext, name?: string): Principal {
  const principal = requirePrincipal(c);
  if (principal.type !== "service" || (name && principal.id !== servicePrincipal(name).id)) {
    throw new ProblemError("forbidden", { detail: "Internal endpoints are for services only" });
  }
  return principal;
}

/** Tunnel token resolution (for the gateway) and proxy forwarding between connections replicas. */
export function registerClusterInternalRoutes(app: ServiceApp, ctx: ConnectionsContext, hub: TunnelHub): void {
  app.post(CONNECTIONS_INTERNAL.resolveTunnelToken, async (c) => {
    requireService(c);
    const parsed = ResolveTunnelTokenRequest.safeParse(await c.req.json().catch(() => undefined));
    const token = parsed.success ? parseTunnelToken(parsed.data.token) : undefined;
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
  app.on(["GET", "POST", "PUT", "PATCH", "DELETE"], `${forwardPrefix}/*`, async (c) => {
    requireService(c, "connections");
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
