import {
  EGRESS_IDENTITY_SIGNER,
  internalGetSandboxEgressRoute,
  internalRecordEgressRefusalRoute,
} from "@agentplane/contracts";
import type { ScopedIdentityKey } from "@agentplane/service-kit";

/**
 * What sandbox-svc accepts of the egress proxy's own key (decision 0065): a sandbox's egress facts
 * and a refusal to record, as the `egress` service, and nothing else (every other route answers
 * its identities 401).
 */
export function egressProxyIdentityKey(publicKey: ScopedIdentityKey["publicKey"]): ScopedIdentityKey {
  return {
    id: EGRESS_IDENTITY_SIGNER,
    publicKey,
    routes: [internalGetSandboxEgressRoute, internalRecordEgressRefusalRoute].map((route) => ({
      method: route.method,
      path: route.path,
      principalTypes: ["service"] as const,
    })),
  };
}
