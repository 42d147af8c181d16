import { internalResolveOrgRoute } from "@agentplane/contracts";
import { ProblemError } from "@agentplane/problem-details";
import { internalRoute, type ServiceApp } from "@agentplane/service-kit";
import type { TenancyContext } from "../../context.ts";
import { orgOfResource } from "../../services/resources.ts";

export function registerInternalResolveOrg(app: ServiceApp, ctx: TenancyContext): void {
  app.openapi(internalRoute(internalResolveOrgRoute), async (c) => {
    const id = c.req.valid("param").resourceId;
    const orgId = await orgOfResource(ctx.db, id);
    if (orgId === undefined) throw new ProblemError("not-found", { detail: `${id} was not found` });
    return c.json({ ...(orgId ? { orgId } : {}) }, 200);
  });
}
