import { createOrgPolicyBindingRoute, createProjectPolicyBindingRoute } from "@agentplane/contracts";
import { createBinding } from "../../services/bindings.ts";
import { callerOf, orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerCreateBinding({ app, ctx }: RouteDeps): void {
  app.openapi(createOrgPolicyBindingRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:manage", c.req.valid("param").orgId);
    return c.json(await createBinding(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
  app.openapi(createProjectPolicyBindingRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project-policies:manage", c.req.valid("param").projectId);
    return c.json(await createBinding(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
