import { recordStandaloneEvent } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, type ServiceApp, type ServiceContext } from "@agentplane/service-kit";
import { assertSafeProxyPath, parseKubeRequest } from "../../clusters/k8s-attributes.ts";
import { clusterScope, findCluster } from "../../services/clusters.ts";
import { decide, enforcedDeny, policyDenied } from "../../services/governance.ts";
import { proxyAuthorizer } from "../../services/proxy-authorizer.ts";
import type { ConnectionsRouteContext } from "../context.ts";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];
const PREFIX = /^\/v1\/clusters\/([^/]+)\/proxy(\/.*)?$/;

/** The raw path after `/proxy` (still percent-encoded) and the query. */
function upstreamTarget(c: ServiceContext): { path: string; search: string } {
  const url = new URL(c.req.url);
  const m = PREFIX.exec(url.pathname);
  return { path: m?.[2] || "/", search: url.search };
}

/**
 * Requests act as the relay's service account, and policies decide on that: `kubectl --as` (the
 * `Impersonate-*` headers) would act as someone else, beyond what was decided. The relay drops
 * them too; refused here, the caller learns why instead of getting the relay's answer.
 */
function assertNoImpersonation(headers: Headers): void {
  for (const name of headers.keys()) {
    if (!name.startsWith("impersonate-")) continue;
    const shown = name.replace(/(^|-)([a-z])/g, (_, dash: string, ch: string) => `${dash}${ch.toUpperCase()}`);
    throw new ProblemError("bad-request", {
      detail: `Impersonation is not supported through the cluster proxy (${shown}): requests act as the relay`,
    });
  }
}

/**
 * `/v1/clusters/{clusterId}/proxy/{path}`: authorize, parse the Kubernetes request attributes, ask
 * governance (`cluster:<verb>`), then send it down the cluster's tunnel and stream the answer back.
 */
export function registerClusterProxy(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.on(METHODS, "/v1/clusters/:clusterId/proxy/*", async (c) => {
    const clusterId = c.req.param("clusterId");
    const { path, search } = upstreamTarget(c);
    assertSafeProxyPath(path);
    assertNoImpersonation(c.req.raw.headers);
    const body =
      c.req.method === "GET" || (c.req.method === "DELETE" && !c.req.header("content-length"))
        ? undefined
        : new Uint8Array(await c.req.arrayBuffer());
    const upstream = { method: c.req.method, path: `${path}${search}`, body };
    const cluster = await findCluster(ctx, clusterId, { cached: true });
    const caller = await authorize(c, proxyAuthorizer(ctx), "connectors:call", clusterScope(cluster));
    const attributes = parseKubeRequest(c.req.method, path, new URLSearchParams(search));
    const context = {
      group: attributes.group,
      path: attributes.path,
      ...(attributes.version ? { version: attributes.version } : {}),
      ...(attributes.resource ? { resource: attributes.resource } : {}),
      ...(attributes.subresource ? { subresource: attributes.subresource } : {}),
      ...(attributes.namespace ? { namespace: attributes.namespace } : {}),
      ...(attributes.name ? { name: attributes.name } : {}),
    };
    const decision = await decide(
      ctx,
      {
        principal: caller.principal,
        action: attributes.action,
        resource: {
          type: "ClusterResource",
          id: cluster.id,
          orgId: cluster.org_id,
          projectId: cluster.project_id,
          labels: cluster.labels ?? {},
          kind: "cluster",
        },
        context,
      },
      caller.requestId,
    );
    const deny = enforcedDeny(decision);
    if (decision.decision === "deny") {
      await recordStandaloneEvent(ctx, caller.principal, {
        action: attributes.action,
        orgId: cluster.org_id,
        projectId: cluster.project_id,
        targetType: "cluster",
        targetId: cluster.id,
        outcome: deny ? "denied" : "success",
        details: { verb: attributes.verb, ...context, enforced: decision.enforced, reasons: decision.reasons },
        requestId: caller.requestId,
      });
    }
    if (deny) throw policyDenied(attributes.action, deny);
    return ctx.hub.send(cluster.id, { ...upstream, headers: c.req.raw.headers, signal: c.req.raw.signal });
  });
}
