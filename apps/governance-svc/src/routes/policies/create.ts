import { createOrgPolicyRoute, createProjectPolicyRoute } from "@agentplane/contracts";
import { createPolicy } from "../../services/policies.ts";
import { callerOf, orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerCreatePolicy({ app, ctx }: RouteDeps): void {
  app.openapi(createOrgPolicyRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:manage", c.req.valid("param").orgId);
    return c.json(await createPolicy(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
  app.openapi(createProjectPolicyRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project-policies:manage", c.req.valid("param").projectId);
    return c.json(await createPolicy(ctx, callerOf(c), scope, c.req.valid("json")), 201);
  });
}
