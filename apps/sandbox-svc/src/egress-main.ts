// The cluster's egress proxy as its own deployable (distributed mode, SANDBOX_DRIVER=kubernetes):
// sandbox Pods reach the outside only through it, each with its own proxy credential.
import { parseEnv, runService } from "@agentplane/service-kit";
import { createEgressProxyService, EgressEnvSchema, egressSettings } from "./driver/kubernetes/egress-service.ts";
import { egressIdentityKeys } from "./egress/identity.ts";

const env = parseEnv(EgressEnvSchema);
await runService({
  name: "egress-proxy",
  env,
  // Its own key pair, not the one every service accepts (decision 0062).
  keys: egressIdentityKeys,
  build: ({ database, bus, keys, logger, client }) =>
    createEgressProxyService({
      database,
      bus,
      keys,
      logger,
      governance: client("governance", env.GOVERNANCE_URL),
      ...egressSettings(env),
    }),
});
