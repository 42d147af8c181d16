import { updateSpendingLimitRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { updateSpendingLimit } from "../../services/spending-limits.ts";

export function registerUpdateSpendingLimit(app: ServiceApp, ctx: AuditContext): void {
  app.openapi(updateSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "spending-limits:manage", { orgId });
    return c.json(await updateSpendingLimit(ctx, caller, { limitId, ...c.req.valid("json") }), 200);
  });
}
