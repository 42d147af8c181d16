import { deleteSpendingLimitRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { deleteSpendingLimit } from "../../services/spending-limits.ts";

export function registerDeleteSpendingLimit(app: ServiceApp, ctx: AuditContext): void {
  app.openapi(deleteSpendingLimitRoute, async (c) => {
    const { orgId, limitId } = c.req.valid("param");
    const caller = await authorize(c, ctx.authorizer, "spending-limits:manage", { orgId });
    await deleteSpendingLimit(ctx, caller, { limitId });
    return c.body(null, 204);
  });
}
