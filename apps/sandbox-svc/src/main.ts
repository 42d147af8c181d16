// sandbox-svc as its own deployable (distributed mode).
import { importScopedPublicKey, parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createSandboxService } from "./app.ts";
import { configFromEnv, SandboxEnvSchema } from "./config.ts";

const env = parseEnv(SandboxEnvSchema);
await runService({
  name: "sandbox-svc",
  env,
  build: async ({ database, bus, keys, logger, client }) => {
    const governance = env.GOVERNANCE_URL ? client("governance", env.GOVERNANCE_URL) : undefined;
    if (!governance) logger.warn("GOVERNANCE_URL is not set: no policy enforcement, and sandboxes get no egress");
    return createSandboxService({
      database,
      bus,
      keys,
      ...(env.EGRESS_IDENTITY_PUBLIC_KEY
        ? { egressPublicKey: await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", env.EGRESS_IDENTITY_PUBLIC_KEY) }
        : {}),
      logger,
      authorizer: new RemoteAuthorizer(client("tenancy", env.TENANCY_URL), { callerService: "sandbox" }),
      ...(governance ? { governance } : {}),
      config: configFromEnv(process.env),
    });
  },
});
