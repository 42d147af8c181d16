import type { Logger } from "@agentplane/service-kit";
import { KubeConfig } from "@kubernetes/client-node";
import type { KubernetesConfig } from "./config.ts";
import { EgressCredentials } from "./egress-credential.ts";
import { KubernetesDriver } from "./kubernetes-driver.ts";

/**
 * The driver for a deployment: the API server from in-cluster configuration (a Pod's service
 * account), else `KUBECONFIG` or ~/.kube/config, as kubectl finds it.
 */
export function createKubernetesDriver(
  config: KubernetesConfig,
  logger: Logger,
  kubeConfig?: KubeConfig,
): KubernetesDriver {
  let kc = kubeConfig;
  if (!kc) {
    kc = new KubeConfig();
    kc.loadFromDefault();
  }
  const { egressCredentialKey, ...rest } = config;
  return new KubernetesDriver({
    kubeConfig: kc,
    logger,
    ...rest,
    ...(egressCredentialKey ? { egressCredentials: new EgressCredentials(egressCredentialKey) } : {}),
  });
}
