import type { ServiceApp } from "@agentplane/service-kit";
import { AwsCredentialResolver } from "../../aws/credentials.ts";
import type { ConnectionsContext } from "../../context.ts";
import { registerCreateAwsConnection } from "./create.ts";
import { registerDeleteAwsConnection } from "./delete.ts";
import { registerGetAwsConnection } from "./get.ts";
import { registerListAwsConnections } from "./list.ts";
import { registerAwsProxy } from "./proxy.ts";
import { registerTestAwsConnection } from "./test.ts";
import { registerUpdateAwsConnection } from "./update.ts";

/** AWS connections: CRUD, the `test` action and the re-signing proxy. */
export function registerAwsRoutes(app: ServiceApp, ctx: ConnectionsContext): void {
  const creds = new AwsCredentialResolver(ctx);
  registerCreateAwsConnection(app, ctx);
  registerListAwsConnections(app, ctx);
  registerGetAwsConnection(app, ctx);
  registerUpdateAwsConnection(app, ctx);
  registerDeleteAwsConnection(app, ctx);
  registerTestAwsConnection(app, ctx, creds);
  registerAwsProxy(app, ctx, creds);
}
