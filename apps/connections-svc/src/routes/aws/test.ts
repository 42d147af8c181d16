import { testAwsConnectionRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import { FetchRefusedError } from "@agentplane/service-kit/outbound";
import { BodyTimeoutError } from "../../aws/bounded-body.ts";
import { outboundStsHandler } from "../../aws/sts-handler.ts";
import { awsUnreachable } from "../../aws/upstream.ts";
import { awsConnectionScope, awsEndpoint, findAwsConnection } from "../../services/aws-connections.ts";
import type { ConnectionsRouteContext } from "../context.ts";

/** Error codes STS answers GetCallerIdentity with, named in the test's problem. */
const KNOWN_STS_ERRORS = new Set([
  "AccessDenied",
  "AccessDeniedException",
  "ExpiredToken",
  "ExpiredTokenException",
  "IncompleteSignature",
  "InternalFailure",
  "InvalidAccessKeyId",
  "InvalidClientTokenId",
  "MissingAuthenticationToken",
  "RegionDisabledException",
  "RequestExpired",
  "ServiceUnavailable",
  "SignatureDoesNotMatch",
  "Throttling",
  "UnrecognizedClientException",
]);

export function registerTestAwsConnection(app: ServiceApp, ctx: ConnectionsRouteContext): void {
  app.openapi(testAwsConnectionRoute, async (c) => {
    const connectionId = c.req.valid("param").connectionId;
    const connection = await findAwsConnection(ctx, connectionId);
    const _caller = await authorize(c, ctx.authorizer, "connections:manage", awsConnectionScope(connection));
    const region = connection.default_region;
    const endpoint = awsEndpoint(connection, "sts", region);
    // The AWS SDK is loaded on the first test, not when the service starts.
    const { GetCallerIdentityCommand, STSClient } = await import("@aws-sdk/client-sts");
    const sts = new STSClient({
      region,
      endpoint: endpoint.toString(),
      credentials: await ctx.awsCredentials.resolve(connection),
      requestHandler: outboundStsHandler(ctx.outbound, ctx.config.awsTimeoutMs, {
        bounds: { idleMs: ctx.config.awsBodyIdleMs, totalMs: ctx.config.awsBodyTimeoutMs },
        logger: ctx.logger,
      }),
      // One attempt: the caller is waiting, and a failure is reported with its cause.
      maxAttempts: 1,
    });
    try {
      const me = await sts.send(new GetCallerIdentityCommand({}));
      return c.json({ account: me.Account ?? "", arn: me.Arn ?? "", ...(me.UserId ? { userId: me.UserId } : {}) }, 200);
    } catch (err) {
      if (err instanceof FetchRefusedError) throw awsUnreachable(err, endpoint);
      const timedOut = bodyTimeoutOf(err);
      if (timedOut) {
        throw new ProblemError("gateway-timeout", {
          detail: `STS at ${endpoint.host} did not send its answer in time: ${timedOut.message}`,
          extensions: { reason: "timeout" },
        });
      }
      const e = err as Error & { $metadata?: { httpStatusCode?: number } };
      const status = e.$metadata?.httpStatusCode;
      // The error's code and message are the endpoint's words (an override may be any server, and
      // may echo what it was sent): only a code STS is known to answer is named, never the message.
      const code = KNOWN_STS_ERRORS.has(e.name) ? `: ${e.name}` : "";
      throw new ProblemError("bad-gateway", {
        detail: `STS refused the credentials${status ? ` (HTTP ${status})` : ""}${code}`,
      });
    } finally {
      sts.destroy();
    }
  });
}

/** The body timeout behind an SDK error (the SDK may wrap what reading the answer threw). */
function bodyTimeoutOf(err: unknown): BodyTimeoutError | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof BodyTimeoutError) return e;
  }
  return undefined;
}
