// The cluster's egress proxy as its own deployable (distributed mode, SANDBOX_DRIVER=kubernetes):
// sandbox Pods reach the outside only through it, each with its own proxy credential.
import { parseEnv, runService } from "@agentplane/service-kit";
import { egressLimitsFrom } from "./config.ts";
import { createEgressProxyService, EgressEnvSchema } from "./driver/kubernetes/egress-service.ts";

const env = parseEnv(EgressEnvSchema);
await runService({
  name: "egress-proxy",
  env,
  build: ({ database, bus, keys, logger, client }) =>
    createEgressProxyService({
      database,
      bus,
      keys,
      logger,
      governance: client("governance", env.GOVERNANCE_URL),
      secret: env.AGENTPLANE_SECRET_KEY,
      proxyPort: env.EGRESS_PROXY_PORT,
      proxyHost: env.HOST,
      limits: egressLimitsFrom(env),
      ...(env.AGENTPLANE_API_URL ? { apiUrl: env.AGENTPLANE_API_URL } : {}),
      ...(env.SANDBOX_EGRESS_HOST_MAP ? { hostMap: env.SANDBOX_EGRESS_HOST_MAP } : {}),
    }),
});
