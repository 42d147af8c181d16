import { listSpendingLimitsRoute } from "@agentplane/contracts";
import { authorize, type ServiceApp } from "@agentplane/service-kit";
import type { AuditContext } from "../../context.ts";
import { listSpendingLimits } from "../../services/spending-limits.ts";

export function registerListSpendingLimits(app: ServiceApp, { db, authorizer }: AuditContext): void {
  app.openapi(listSpendingLimitsRoute, async (c) => {
    const { orgId } = c.req.valid("param");
    await authorize(c, authorizer, "spending-limits:read", { orgId });
    return c.json({ items: await listSpendingLimits(db, orgId) }, 200);
  });
}
