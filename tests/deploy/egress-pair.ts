// The egress proxy's own identity pair as the chart stores it (decision 0062).
import { IdentityVerifier, importOwnKeys, importScopedPublicKey, signIdentity } from "@agentplane/service-kit";

/** Whether a governance holding the public key accepts what the egress proxy signs with the private one. */
export async function egressPairWorks(privateJwk: string, publicJwk: string): Promise<boolean> {
  const own = await importOwnKeys("egress", "EGRESS_IDENTITY_PRIVATE_KEY", privateJwk);
  const publicKey = await importScopedPublicKey("EGRESS_IDENTITY_PUBLIC_KEY", publicJwk);
  const route = { method: "post", path: "/internal/governance/decisions" };
  const verifier = new IdentityVerifier({ publicKey }, "governance", [{ id: "egress", publicKey, routes: [route] }]);
  const token = await signIdentity(own, { type: "service", id: "svc_sandbox" }, { audience: "governance" });
  return (await verifier.verify(token, route)).signer === "egress";
}
