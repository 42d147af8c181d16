import { GOVERNANCE_INTERNAL_ROUTES as R } from "@agentplane/contracts";
import { internalRoute } from "@agentplane/service-kit";
import { resolveCredential } from "../../services/credential-resolve.ts";
import type { RouteDeps } from "../scope.ts";

/** Plaintext credential fields for the service that uses them (service identities only). */
export function registerResolveCredential({ app, ctx }: RouteDeps): void {
  app.openapi(internalRoute(R.resolveCredential), async (c) => {
    const request = c.req.valid("json");
    c.header("cache-control", "no-store");
    return c.json(await resolveCredential(ctx, ctx.sts, request), 200);
  });
}
