import { listOrgPolicyBindingsRoute, listProjectPolicyBindingsRoute } from "@agentplane/contracts";
import { listBindings } from "../../services/bindings.ts";
import { orgScope, projectScope, type RouteDeps } from "../scope.ts";

export function registerListBindings({ app, ctx }: RouteDeps): void {
  app.openapi(listOrgPolicyBindingsRoute, async (c) => {
    const scope = await orgScope(c, ctx, "policies:read", c.req.valid("param").orgId);
    return c.json(await listBindings(ctx, scope, c.req.valid("query")), 200);
  });
  app.openapi(listProjectPolicyBindingsRoute, async (c) => {
    const scope = await projectScope(c, ctx, "project:read", c.req.valid("param").projectId);
    return c.json(await listBindings(ctx, scope, c.req.valid("query")), 200);
  });
}
