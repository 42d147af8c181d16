// The distributed deployable: one inference-proxy replica; tenancy, audit (and governance) over HTTP.
import { Pricing, priceOverridesSetting } from "@agentplane/pricing";
import { parseEnv, RemoteAuthorizer, runService } from "@agentplane/service-kit";
import { createInferenceService } from "./app.ts";
import { configFromEnv, InferenceEnvSchema } from "./config.ts";

const env = parseEnv(InferenceEnvSchema);
// Settings are checked before anything connects: a bad one is a one-line error naming it.
const config = configFromEnv(process.env);
const pricing = new Pricing(priceOverridesSetting(env.PRICE_TABLE_JSON));
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
      config,
      pricing,
    });
  },
  describe: (service) => ({ hasModel: service.hasModel }),
});
