import { internalResolveCredentialRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { internalRoute } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { resolveCredential } from "../../services/credential-resolve.ts";

/** Plaintext credential fields for the service that uses them (service identities only). */
export function registerInternalResolveCredential(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(internalRoute(internalResolveCredentialRoute), async (c) => {
    const request = c.req.valid("json");
    c.header("cache-control", "no-store");
    return c.json(await resolveCredential(ctx, ctx.sts, request), 200);
  });
}
