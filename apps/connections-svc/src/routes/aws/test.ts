import { testAwsConnection } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import type { ServiceApp } from "@agentplane/service-kit";
import { GetCallerIdentityCommand, STSClient } from "@aws-sdk/client-sts";
import type { AwsCredentialResolver } from "../../aws/credentials.ts";
import type { ConnectionsContext } from "../../context.ts";
import { authorizeAwsConnection, awsEndpoint } from "../../services/aws-connections.ts";

export function registerTestAwsConnection(
  app: ServiceApp,
  ctx: ConnectionsContext,
  creds: AwsCredentialResolver,
): void {
  app.openapi(testAwsConnection, async (c) => {
    const { connection } = await authorizeAwsConnection(
      c,
      ctx,
      c.req.valid("param").connectionId,
      "connections:manage",
    );
    const region = connection.default_region;
    const sts = new STSClient({
      region,
      endpoint: awsEndpoint(connection, "sts", region).toString(),
      credentials: await creds.resolve(connection),
    });
    try {
      const me = await sts.send(new GetCallerIdentityCommand({}));
      return c.json({ account: me.Account ?? "", arn: me.Arn ?? "", ...(me.UserId ? { userId: me.UserId } : {}) }, 200);
    } catch (err) {
      throw new ProblemError("bad-gateway", { detail: `STS refused the credentials: ${(err as Error).name}` });
    }
  });
}
