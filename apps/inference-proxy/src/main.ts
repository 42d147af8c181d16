// The distributed deployable: one inference-proxy replica; tenancy, audit (and governance) over HTTP.
import { Pricing, parsePriceOverrides } from "@agentplane/audit-svc";
import { parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createInferenceService } from "./app.ts";
import { configFromEnv, InferenceEnvSchema } from "./config.ts";

const env = parseEnv(InferenceEnvSchema);
await runService({
  name: "inference-proxy",
  env,
  build: ({ database, bus, keys, logger, client }) => {
    const tenancy = client("tenancy", env.TENANCY_URL);
    return createInferenceService({
      database,
      bus,
      keys,
      logger,
      authorizer: new RemoteAuthorizer(tenancy, { callerService: "inference" }),
      tenancy,
      audit: client("audit", env.AUDIT_URL),
      ...(env.GOVERNANCE_URL ? { governance: client("governance", env.GOVERNANCE_URL) } : {}),
      config: configFromEnv(process.env),
      pricing: new Pricing(parsePriceOverrides(env.PRICE_TABLE_JSON)),
    });
  },
  describe: (service) => ({ hasModel: service.hasModel }),
});
