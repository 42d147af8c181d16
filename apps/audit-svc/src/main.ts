// The distributed deployable: one audit-svc replica on Postgres and Redis.
import { parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createAuditService } from "./app.ts";
import { AuditEnvSchema, configFromEnv } from "./config.ts";

const env = parseEnv(AuditEnvSchema);
await runService({
  name: "audit-svc",
  env,
  build: ({ database, bus, keys, logger, client }) =>
    createAuditService({
      database,
      bus,
      keys,
      logger,
      authorizer: new RemoteAuthorizer(client("tenancy", env.TENANCY_URL), { callerService: "audit" }),
      config: configFromEnv(process.env),
    }),
});
