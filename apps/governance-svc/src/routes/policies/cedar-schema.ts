import { CEDAR_ENTITY_TYPES, CEDAR_SCHEMA, GOVERNED_ACTIONS, getCedarSchemaRoute } from "@agentplane/contracts";
import type { ServiceApp } from "@agentplane/service-kit";
import { requirePrincipal } from "@agentplane/service-kit";
import type { GovernanceContext } from "../../context.ts";

export function registerGetCedarSchema(app: ServiceApp, _ctx: GovernanceContext): void {
  app.openapi(getCedarSchemaRoute, async (c) => {
    requirePrincipal(c);
    return c.json(
      { cedarSchema: CEDAR_SCHEMA, actions: [...GOVERNED_ACTIONS], entityTypes: [...CEDAR_ENTITY_TYPES] },
      200,
    );
  });
}
