// The distributed deployable: one connections-svc replica on Postgres and Redis.
import { parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createConnectionsService } from "./app.ts";
import { ConnectionsEnvSchema, configFromEnv } from "./config.ts";
import { TenancyProjectSigner } from "./services/project-signer.ts";

const env = parseEnv(ConnectionsEnvSchema);
const config = configFromEnv(process.env);
await runService({
  name: "connections-svc",
  env,
  build: ({ database, bus, keys, logger, client }) => {
    const tenancy = client("tenancy", env.TENANCY_URL);
    return createConnectionsService({
      database,
      bus,
      keys,
      logger,
      authorizer: new RemoteAuthorizer(tenancy, { callerService: "connections" }),
      signer: new TenancyProjectSigner(tenancy),
      ...(env.GOVERNANCE_URL ? { governance: client("governance", env.GOVERNANCE_URL) } : {}),
      // The MCP endpoints' platform tools call these with the caller's own identity.
      platformClients: {
        tenancy,
        ...(env.SANDBOX_URL ? { sandbox: client("sandbox", env.SANDBOX_URL) } : {}),
        ...(env.AUDIT_URL ? { audit: client("audit", env.AUDIT_URL) } : {}),
      },
      config,
    });
  },
  describe: () => ({ replica: config.replicaId }),
});
