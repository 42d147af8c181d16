import { EGRESS_IDENTITY_SIGNER, getSandboxEffectivePolicyRoute, internalDecideRoute } from "@agentplane/contracts";
import type { ScopedIdentityKey } from "@agentplane/service-kit";

/**
 * What the cluster's egress proxy asks governance, signed with its own key (decision 0062): a
 * sandbox's effective policy, as the sandbox itself, and the decision of each destination, as
 * sandbox-svc. Its identities are accepted on these two routes only (the decision route further
 * takes `sandbox:egress` only) and by no other service, which does not know its public key.
 */
export function egressIdentityKey(publicKey: ScopedIdentityKey["publicKey"]): ScopedIdentityKey {
  return {
    id: EGRESS_IDENTITY_SIGNER,
    publicKey,
    routes: [
      {
        method: getSandboxEffectivePolicyRoute.method,
        path: getSandboxEffectivePolicyRoute.path,
        principalTypes: ["sandbox"],
      },
      { method: internalDecideRoute.method, path: internalDecideRoute.path, principalTypes: ["service"] },
    ],
  };
}
