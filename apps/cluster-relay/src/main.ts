import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { parseRelayEnv } from "./config.ts";
import { Relay } from "./relay.ts";
import { FileTokenStore, SecretTokenStore, type TokenStore } from "./token-store.ts";

/** The relay as it runs in a customer's cluster (same image as the platform, target `cluster-relay`). */
const env = parseRelayEnv(process.env);
const logger = pino({ name: "cluster-relay", level: env.LOG_LEVEL });
const kube = new KubeConfig();
// The in-cluster service account when running in a pod, else KUBECONFIG or ~/.kube/config.
kube.loadFromDefault();
const store: TokenStore = env.TUNNEL_TOKEN_FILE
  ? new FileTokenStore(env.TUNNEL_TOKEN_FILE)
  : new SecretTokenStore(kube, env.TUNNEL_TOKEN_SECRET!, env.TUNNEL_TOKEN_SECRET_KEY);
const relay = new Relay({
  baseUrl: env.AGENTPLANE_URL,
  clusterId: env.CLUSTER_ID,
  store,
  kube,
  logger,
  heartbeatMs: env.HEARTBEAT_MS,
});
await relay.start();
logger.info({ clusterId: env.CLUSTER_ID, url: env.AGENTPLANE_URL }, "cluster relay started");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void relay.stop().then(() => process.exit(0));
  });
}
