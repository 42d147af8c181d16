// The gateway as its own deployable (distributed mode): services are reached over HTTP keep-alive.
import { parseEnv, runService } from "@agentplane/service-kit";
import { buildGateway, httpTargets } from "./build.ts";
import { configFromEnv, GatewayEnvSchema, serviceUrls } from "./config.ts";

const env = parseEnv(GatewayEnvSchema);
await runService({
  name: "api-gateway",
  env,
  build: ({ keys, bus, logger }) =>
    buildGateway({
      config: configFromEnv(process.env),
      targets: httpTargets(serviceUrls(env)),
      keys,
      bus,
      logger,
      ...(env.SANDBOX_URL ? { sandboxUrl: env.SANDBOX_URL } : {}),
    }),
  describe: () => ({ services: Object.keys(serviceUrls(env)) }),
});
