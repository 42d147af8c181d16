// The distributed deployable: one governance-svc replica on Postgres and Redis.
import { importScopedPublicKey, parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createGovernanceService } from "./app.ts";
import { configFromEnv, GovernanceEnvSchema } from "./config.ts";

const env = parseEnv(GovernanceEnvSchema);
await runService({
  name: "governance-svc",
  env,
  build: async ({ database, bus, keys, logger, client }) => {
    const tenancy = client("tenancy", env.TENANCY_URL);
    return createGovernanceService({
      database,
      bus,
      keys,
      ...(env.EGRESS_IDENTITY_PUBLIC_KEY
        ? { egressPublicKey: await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", env.EGRESS_IDENTITY_PUBLIC_KEY) }
        : {}),
      logger,
      authorizer: new RemoteAuthorizer(tenancy, { callerService: "governance" }),
      tenancy,
      ...(env.SANDBOX_URL ? { sandboxes: client("sandbox", env.SANDBOX_URL) } : {}),
      config: configFromEnv(process.env, { secretKey: env.AGENTPLANE_SECRET_KEY }),
    });
  },
});
