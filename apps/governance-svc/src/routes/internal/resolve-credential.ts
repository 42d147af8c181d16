import { GOVERNANCE_INTERNAL, ResolveCredentialRequest } from "@agentplane/contracts";
import { resolveCredential } from "../../services/credential-resolve.ts";
import type { RouteDeps } from "../scope.ts";
import { parseJson, requireService } from "./service-only.ts";

/** Plaintext credential fields for the service that uses them (service identities only). */
export function registerResolveCredential({ app, ctx }: RouteDeps): void {
  app.post(GOVERNANCE_INTERNAL.resolveCredential, async (c) => {
    requireService(c);
    const request = await parseJson(c, ResolveCredentialRequest);
    c.header("cache-control", "no-store");
    return c.json(await resolveCredential(ctx, ctx.sts, request), 200);
  });
}
