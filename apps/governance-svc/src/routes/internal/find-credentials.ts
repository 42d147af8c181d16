import { type FindCredentialsResponse, internalFindCredentialsRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { internalRoute } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";
import { findCredentials } from "../../services/credentials.ts";

/**
 * A project's credential of each kind asked, without secrets (service identities only): how the
 * inference proxy learns that a project's own provider credential overrides the installation's.
 * The oldest of a kind wins, so adding another one never silently switches the project's account.
 */
export function registerInternalFindCredentials(app: ServiceApp, ctx: GovernanceContext): void {
  app.openapi(internalRoute(internalFindCredentialsRoute), async (c) => {
    const found = await findCredentials(ctx, c.req.valid("json"));
    c.header("cache-control", "no-store");
    return c.json(found satisfies FindCredentialsResponse, 200);
  });
}
