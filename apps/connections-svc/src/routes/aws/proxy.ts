import { recordStandaloneEvent } from "@agentplane/events";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { copySource, parseAwsCall } from "../../aws/operation.ts";
import { resignRequest } from "../../aws/resign.ts";
import { sendToAws } from "../../aws/upstream.ts";
import { assertSafeProxyPath } from "../../clusters/k8s-attributes.ts";
import { awsConnectionScope, awsEndpoint, findAwsConnection } from "../../services/aws-connections.ts";
import { decide, enforcedDeny, policyDenied } from "../../services/governance.ts";
import { proxyAuthorizer } from "../../services/proxy-authorizer.ts";
import type { ConnectionsRouteContext } from "../context.ts";

const PREFIX = /^\/v1\/aws-connections\/[^/]+\/aws(\/.*)?$/;

/**
 * `/v1/aws-connections/{connectionId}/aws/{path}`: authorize, parse the call, ask governance
 * (`aws:call`), drop the caller's signature, re-sign with the connection's credentials and pass
 * the answer back as AWS sent it. A deny is a 403 problem (for SDK callers too: the SDK surfaces
 * the status and the body text).
 */
export function registerAwsProxy(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  const paths = ["/v1/aws-connections/:connectionId/aws", "/v1/aws-connections/:connectionId/aws/*"];
  app.on(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"], paths, async (c) => {
    const connectionId = c.req.param("connectionId") ?? "";
    const connection = await findAwsConnection(ctx, connectionId, { cached: true });
    const caller = await authorize(c, proxyAuthorizer(ctx), "connectors:call", awsConnectionScope(connection));
    const url = new URL(c.req.url);
    const path = PREFIX.exec(url.pathname)?.[1] || "/";
    assertSafeProxyPath(path);
    const method = c.req.method;
    const body = method === "GET" || method === "HEAD" ? undefined : new Uint8Array(await c.req.arrayBuffer());
    const call = parseAwsCall({
      method,
      path,
      query: url.searchParams,
      headers: c.req.raw.headers,
      body,
      defaultRegion: connection.default_region,
    });
    const context = {
      service: call.service,
      operation: call.operation,
      region: call.region,
      ...(call.bucket ? { bucket: call.bucket } : {}),
      ...(call.key ? { key: call.key } : {}),
    };
    // Credentials (usually cached) are fetched while policy decides; they are used only on an allow.
    const credentials = ctx.awsCredentials.resolve(connection);
    credentials.catch(() => {});
    const judge = async (judged: Record<string, string>) => {
      const decision = await decide(
        ctx,
        {
          principal: caller.principal,
          action: "aws:call",
          resource: {
            type: "AwsService",
            id: `${connection.id}:${call.service}`,
            orgId: connection.org_id,
            projectId: connection.project_id,
            labels: connection.labels ?? {},
            kind: "aws-connection",
          },
          context: judged,
        },
        caller.requestId,
      );
      const deny = enforcedDeny(decision);
      if (decision.decision === "deny") {
        await recordStandaloneEvent(ctx, caller.principal, {
          action: "aws:call",
          orgId: connection.org_id,
          projectId: connection.project_id,
          targetType: "aws_connection",
          targetId: connection.id,
          outcome: deny ? "denied" : "success",
          details: { ...judged, enforced: decision.enforced, reasons: decision.reasons },
          requestId: caller.requestId,
        });
      }
      if (deny) throw policyDenied("aws:call", deny);
    };
    await judge(context);
    // A copy reads its source, which the call's own bucket and key do not name: S3 asks for
    // GetObject on it, and so does policy here (a forbid on reading a bucket holds for copies out).
    const source = call.service === "s3" ? copySource(c.req.raw.headers) : undefined;
    if (source) await judge({ ...context, operation: "GetObject", ...source, copiedBy: call.operation });
    const target = awsEndpoint(connection, call.service, call.region);
    target.pathname = `${target.pathname.replace(/\/$/, "")}${path}`;
    target.search = url.search;
    const headers = await resignRequest({
      method,
      target,
      headers: c.req.raw.headers,
      body,
      service: call.service,
      region: call.region,
      credentials: await credentials,
    });
    return sendToAws(ctx.outbound, target, {
      method,
      headers,
      body,
      signal: c.req.raw.signal,
      timeoutMs: ctx.config.awsTimeoutMs,
      bodyBounds: { idleMs: ctx.config.awsBodyIdleMs, totalMs: ctx.config.awsBodyTimeoutMs },
      logger: ctx.logger,
    });
  });
}
