// The cluster's egress proxy as its own deployable (distributed mode, SANDBOX_DRIVER=kubernetes):
// sandbox Pods reach the outside only through it, each with its own proxy credential. It holds no
// database or bus credential: sandbox-svc answers what it needs of sandboxes (decision 0065).
import { parseEnv, runService } from "@agentplane/service-kit";
import { createEgressProxyService, EgressEnvSchema, egressSettings } from "./driver/kubernetes/egress-service.ts";
import { egressIdentityKeys } from "./egress/identity.ts";

const env = parseEnv(EgressEnvSchema);
await runService({
  name: "egress-proxy",
  env,
  // Its own key pair, not the one every service accepts (decision 0062).
  keys: egressIdentityKeys,
  // Its env has no DATABASE_URL or REDIS_URL: the runner opens no database and no Redis bus.
  build: ({ keys, logger }) => createEgressProxyService({ keys, logger, ...egressSettings(env) }),
});
