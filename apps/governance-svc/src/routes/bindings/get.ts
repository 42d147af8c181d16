import { getOrgPolicyBindingRoute, getProjectPolicyBindingRoute } from "@agentplane/contracts";
import { getBinding } from "../../services/bindings.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerGetBinding({ app, ctx }: RouteDeps): void {
  app.openapi(getOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    return c.json(await getBinding(ctx, await orgScope(c, ctx, "policies:read", orgId), bindingId), 200);
  });
  app.openapi(getProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    return c.json(await getBinding(ctx, await projectScope(c, ctx, "project:read", projectId), bindingId), 200);
  });
}
