import { deleteOrgPolicyBindingRoute, deleteProjectPolicyBindingRoute } from "@agentplane/contracts";
import { deleteBinding } from "../../services/bindings.ts";
import { callerOf, orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerDeleteBinding({ app, ctx }: RouteDeps): void {
  app.openapi(deleteOrgPolicyBindingRoute, async (c) => {
    const { orgId, bindingId } = c.req.valid("param");
    await deleteBinding(ctx, callerOf(c), await orgScope(c, ctx, "policies:manage", orgId), bindingId);
    return c.body(null, 204);
  });
  app.openapi(deleteProjectPolicyBindingRoute, async (c) => {
    const { projectId, bindingId } = c.req.valid("param");
    await deleteBinding(ctx, callerOf(c), await projectScope(c, ctx, "project-policies:manage", projectId), bindingId);
    return c.body(null, 204);
  });
}
