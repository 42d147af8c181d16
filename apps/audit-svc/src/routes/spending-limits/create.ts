import { createSpendingLimitRoute } from "@agentplane/contracts";
import { notFound } from "@agentplane/problem-details";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { createSpendingLimit } from "../../services/spending-limits.ts";

export function registerCreateSpendingLimit(app: ServiceApp, ctx: AuditContext): void {
  app.openapi(createSpendingLimitRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "spending-limits:manage", { orgId });
    const body = c.req.valid("json");
    if (body.projectId) {
      // The project must exist in this organization (a project of another one answers 404 as well).
      const project = await authorize(c, ctx.authorizer, "project:read", { projectId: body.projectId });
      if (project.orgId !== orgId) throw notFound("Project", body.projectId);
    }
    return c.json(await createSpendingLimit(ctx, caller, body), 201);
  });
}
