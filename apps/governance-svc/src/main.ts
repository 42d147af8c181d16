// The distributed deployable: one governance-svc replica on Postgres and Redis.
import { parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createGovernanceService } from "./app.ts";
import { configFromEnv, GovernanceEnvSchema } from "./config.ts";

const env = parseEnv(GovernanceEnvSchema);
await runService({
  name: "governance-svc",
  env,
  build: ({ database, bus, keys, logger, client }) => {
    const tenancy = client("tenancy", env.TENANCY_URL);
    return createGovernanceService({
      database,
      bus,
      keys,
      logger,
      authorizer: new RemoteAuthorizer(tenancy, { callerService: "governance" }),
      tenancy,
      ...(env.SANDBOX_URL ? { sandboxes: client("sandbox", env.SANDBOX_URL) } : {}),
      config: configFromEnv(process.env, { secretKey: env.AGENTPLANE_SECRET_KEY }),
    });
  },
});
